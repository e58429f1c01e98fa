"""DataStore behaviour and its exact, atomic save/load to a folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from xhelio.data import persist
from xhelio.data.entry import DataEntry
from xhelio.data.persist import SavedStoreError, load_store, save_store
from xhelio.data.store import DataStore, UnknownLabelError
from xhelio.errors import UserError


def varied_store() -> DataStore:
    store = DataStore()
    time = pd.date_range("2024-01-01", periods=6, freq="30s", tz="UTC", name="time").as_unit("us")
    store.put(
        DataEntry(
            label="AC_H2_MFI.BGSEc",
            data=pd.DataFrame(
                {
                    "Bx": [1.5, np.nan, -2.25, 3.0, 4.0, 5.0],
                    "count": np.arange(6, dtype="int32"),
                    "flag": [True, False, True, True, False, False],
                    "quality": pd.array([1, None, 3, 4, None, 6], dtype="Int64"),
                    "mode": pd.Categorical(["a", "b", "a", "a", "b", "b"]),
                    "note": ["x", "y", "z", "w", "v", "u"],
                    "stamp": pd.date_range("2020-01-01", periods=6, freq="D").as_unit("s"),
                    "lag": pd.to_timedelta(np.arange(6), unit="s").as_unit("s"),
                },
                index=time,
            ),
            units={"Bx": "nT", "count": "", "note": ""},
            description="IMF in GSE",
            source_dataset="AC_H2_MFI",
            source_parameter="BGSEc",
        )
    )
    store.put(
        DataEntry(
            label="spectrum at t0",
            data=pd.DataFrame(
                {"flux": [1e3, 5e2, 1e1]}, index=pd.Index([10.0, 20.0, 40.0], name="energy")
            ),
            units={"flux": "1/(cm2 s sr keV)"},
            is_timeseries=False,
        )
    )
    store.put(
        DataEntry(
            label="matrix/with:odd*label",
            data=pd.DataFrame(np.arange(12.0).reshape(4, 3)),
            is_timeseries=False,
        )
    )
    store.put(
        DataEntry(
            label="by name",
            data=pd.DataFrame({"v": [1.0, 2.0]}, index=pd.Index(["ace", "wind"], name="craft")),
            is_timeseries=False,
        )
    )
    store.put(
        DataEntry(
            label="empty",
            data=pd.DataFrame(
                {"n": pd.Series([], dtype="float64")},
                index=pd.DatetimeIndex([], tz="UTC", name="time"),
            ),
        )
    )
    spectrogram = xr.DataArray(
        np.random.default_rng(1).random((5, 3)),
        dims=("time", "energy"),
        coords={
            "time": pd.date_range("2024-01-01", periods=5, freq="h"),
            "energy": [10.0, 20.0, 40.0],
        },
        name="flux",
        attrs={"units": "1/(cm2 s)", "note": "electron flux"},
    )
    store.put(DataEntry("spectrogram", spectrogram, units={"flux": "1/(cm2 s)"}))
    store.put(
        DataEntry(
            "unnamed",
            xr.DataArray(np.ones((2, 2), dtype="float32"), dims=("a", "b")),
            is_timeseries=False,
        )
    )
    return store


def assert_same_store(got: DataStore, want: DataStore) -> None:
    assert got.labels() == want.labels()
    for expected in want:
        actual = got.get(expected.label)
        assert (actual.units, actual.description) == (expected.units, expected.description)
        assert (actual.source_dataset, actual.source_parameter, actual.is_timeseries) == (
            expected.source_dataset,
            expected.source_parameter,
            expected.is_timeseries,
        )
        if isinstance(expected.data, pd.DataFrame):
            assert isinstance(actual.data, pd.DataFrame)
            pd.testing.assert_frame_equal(
                actual.data, expected.data, check_exact=True, check_freq=True
            )
            assert list(actual.data.columns) == list(expected.data.columns)
            assert type(actual.data.columns) is type(expected.data.columns)
        else:
            assert isinstance(actual.data, xr.DataArray)
            xr.testing.assert_identical(actual.data, expected.data)
            assert actual.data.dtype == expected.data.dtype


def test_round_trip_is_exact(tmp_path: Path) -> None:
    store = varied_store()
    save_store(store, tmp_path / "session")
    loaded = load_store(tmp_path / "session")
    assert_same_store(loaded, store)
    frame = loaded.get("AC_H2_MFI.BGSEc").data
    assert isinstance(frame, pd.DataFrame)
    assert str(frame.index.dtype) == "datetime64[us, UTC]"
    assert isinstance(frame.index, pd.DatetimeIndex)
    assert frame.index.freqstr == "30s"


def test_index_json_and_files_are_parquet_and_netcdf_never_pickle(tmp_path: Path) -> None:
    save_store(varied_store(), tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    records = {r["label"]: r for r in index["entries"]}
    assert records["AC_H2_MFI.BGSEc"]["kind"] == "frame"
    assert records["AC_H2_MFI.BGSEc"]["units"] == {"Bx": "nT", "count": "", "note": ""}
    assert records["AC_H2_MFI.BGSEc"]["source_dataset"] == "AC_H2_MFI"
    assert records["spectrum at t0"]["is_timeseries"] is False
    assert records["spectrogram"]["kind"] == "array"
    for record in index["entries"]:
        head = (tmp_path / index["data_dir"] / record["file"]).read_bytes()[:8]
        assert head[:4] == b"PAR1" if record["kind"] == "frame" else head == b"\x89HDF\r\n\x1a\n"


def test_saving_again_replaces_the_previous_state(tmp_path: Path) -> None:
    save_store(varied_store(), tmp_path)
    smaller = DataStore()
    smaller.put(DataEntry("only", pd.DataFrame({"a": [1.0]})))
    save_store(smaller, tmp_path)
    assert load_store(tmp_path).labels() == ["only"]
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("data-")]) == 1
    save_store(DataStore(), tmp_path)
    assert len(load_store(tmp_path)) == 0


def test_a_crash_before_the_swap_leaves_the_previous_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "session"
    original = varied_store()
    save_store(original, folder)
    newer = DataStore()
    newer.put(DataEntry("new", pd.DataFrame({"a": [1.0]})))

    def crash(src: object, dst: object) -> None:
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(persist.os, "replace", crash)
    with pytest.raises(OSError, match="simulated"):
        save_store(newer, folder)
    monkeypatch.undo()

    assert_same_store(load_store(folder), original)
    # A process killed mid-save leaves a half-written data folder: ignored, then cleaned.
    (folder / "data-killedmidway").mkdir()
    (folder / "data-killedmidway" / "0000-x.parquet").write_bytes(b"PAR1 half")
    assert_same_store(load_store(folder), original)
    save_store(newer, folder)
    assert load_store(folder).labels() == ["new"]
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith("data-")) == [
        "index.json"
    ]
    assert not (folder / "data-killedmidway").exists()


def test_unsaveable_data_is_a_clear_error_and_keeps_the_old_state(tmp_path: Path) -> None:
    original = varied_store()
    save_store(original, tmp_path)
    bad = DataStore()
    bad.put(DataEntry("mixed", pd.DataFrame({"v": [1, "a", {"k": 1}]}, dtype=object)))
    with pytest.raises(UserError, match="Cannot save data 'mixed'"):
        save_store(bad, tmp_path)
    assert_same_store(load_store(tmp_path), original)
    assert len([p for p in tmp_path.iterdir() if p.name.startswith("data-")]) == 1


def test_loading_missing_or_damaged_folders_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(SavedStoreError, match=r"index\.json is missing"):
        load_store(tmp_path / "nowhere")
    save_store(varied_store(), tmp_path)
    index = json.loads((tmp_path / "index.json").read_text())
    (tmp_path / index["data_dir"] / index["entries"][0]["file"]).write_bytes(b"garbage")
    with pytest.raises(SavedStoreError, match=r"AC_H2_MFI\.BGSEc"):
        load_store(tmp_path)
    (tmp_path / "index.json").write_text("{not json")
    with pytest.raises(SavedStoreError, match="unreadable"):
        load_store(tmp_path)


def test_store_basics() -> None:
    store = DataStore()
    assert len(store) == 0
    with pytest.raises(UnknownLabelError, match="fetch data first"):
        store.get("x")
    store.put(DataEntry("a", pd.DataFrame({"v": [1.0, 2.0]})))
    store.put(DataEntry("b", pd.DataFrame({"v": [3.0]})))
    store.put(DataEntry("a", pd.DataFrame({"v": [9.0]})))
    assert store.labels() == ["a", "b"]
    assert store.get("a").points == 1
    with pytest.raises(UnknownLabelError, match="In memory: a, b"):
        store.get("c")
    store.remove("a")
    assert [e.label for e in store] == ["b"]
    assert store.has("b")
    assert not store.has("a")
    store.clear()
    assert len(store) == 0
