"""The custom-operations library: persistence, dedupe, reuse marks and eviction."""

from __future__ import annotations

import sqlite3

import pytest

from xhelio.config import load_settings
from xhelio.sandbox.ops_library import OpsLibrary, normalize_description

LONG_CODE = "\n".join(
    [
        "b, a = scipy.signal.butter(4, 0.05)",
        "clean = df.interpolate()",
        "smooth = scipy.signal.filtfilt(b, a, clean.to_numpy(), axis=0)",
        "frame = pd.DataFrame(smooth, index=df.index, columns=df.columns)",
        "# comments do not count",
        "result = frame.resample('10min').mean()",
    ]
)


def _code(k: int) -> str:
    return LONG_CODE + f"\nresult = result * {k}"


def test_short_code_is_not_kept() -> None:
    library = OpsLibrary(load_settings())
    assert library.record("result = df * 2", "double", ["a"]) is None
    assert library.record("a = 1\nb = 2\n\n# x\nc = 3\nresult = a", "four lines", ["a"]) is None
    assert library.top() == []


def test_record_persists_in_sqlite_across_instances() -> None:
    settings = load_settings()
    entry = OpsLibrary(settings).record(LONG_CODE, "Low-pass filter then 10 min means", ["ace"])
    assert entry is not None
    assert entry.use_count == 1
    again = OpsLibrary(settings).get(entry.id)
    assert again == entry
    assert again is not None and again.source_labels == ("ace",)
    with sqlite3.connect(settings.home / "ops_library.sqlite") as db:
        (count,) = db.execute("SELECT COUNT(*) FROM ops").fetchone()
    assert count == 1


def test_duplicate_description_bumps_use_count() -> None:
    library = OpsLibrary(load_settings())
    first = library.record(LONG_CODE, "Low-pass filter, then 10-min means", ["a"])
    second = library.record(_code(2), "  low-pass FILTER then 10 min means!", ["b"])
    assert first is not None and second is not None
    assert second.id == first.id
    assert second.use_count == 2
    assert len(library.top()) == 1


def test_reuse_mark_bumps_the_referenced_entry() -> None:
    library = OpsLibrary(load_settings())
    base = library.record(LONG_CODE, "wavelet denoise", ["a"])
    assert base is not None
    library.record(_code(3), f"wavelet denoise of Wind [from {base.id}]", ["w"])
    assert library.get(base.id).use_count == 2  # type: ignore[union-attr]
    assert normalize_description(f"X [from {base.id}]") == "x"


def test_bump_and_top_order() -> None:
    library = OpsLibrary(load_settings())
    entries = [library.record(_code(k), f"operation {k}", ["a"]) for k in range(3)]
    assert all(e is not None for e in entries)
    library.bump(entries[1].id)  # type: ignore[union-attr]
    library.bump(entries[1].id)  # type: ignore[union-attr]
    library.bump(entries[2].id)  # type: ignore[union-attr]
    ordered = [e.id for e in library.top(2)]
    assert ordered == [entries[1].id, entries[2].id]  # type: ignore[union-attr]
    assert library.bump("0000000000ff") is None


def test_cap_evicts_least_used_then_oldest() -> None:
    library = OpsLibrary(load_settings(), max_entries=3)
    made = [library.record(_code(k), f"op {k}", ["a"]) for k in range(3)]
    ids = [e.id for e in made if e is not None]
    library.bump(ids[0])  # op 0 is now used twice; op 1 is the oldest of the least used
    newest = library.record(_code(9), "op 9", ["a"])
    assert newest is not None
    remaining = {e.id for e in library.top(10)}
    assert remaining == {ids[0], ids[2], newest.id}
    assert library.get(ids[1]) is None


def test_invalid_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        OpsLibrary(load_settings(), max_entries=0)


def test_a_server_keeps_proven_operations_within_each_session() -> None:
    from xhelio.api.hub import SessionHub
    from xhelio.api.policy import server_policy
    from xhelio.services import Services

    with Services() as services:
        hub = SessionHub(services, policy=lambda folder: server_policy(folder, True))
        first, second = hub.create(), hub.create()
        mine = hub.view(first).context.ops_library
        kept = mine.record(_code(1), "Butterworth smooth", ["AC_H2_MFI.BGSEc"])
        assert kept is not None
        assert [e.id for e in mine.top()] == [kept.id]
        assert hub.view(second).context.ops_library.top() == []  # another client's session
        cli = SessionHub(services)  # no policy: the single user of a CLI or notebook
        assert cli.view(first).context.library_user == "local"
        hub.close()
        cli.close()
