"""The hostile-SQL corpus (`tests/sql_corpus/hostile.py`) against the whole query path.

Every attempt is stopped by the layer the corpus names, or, when harmless as written, runs
and returns only session data; nothing outside the session is read, nothing is written,
nothing hangs (each query has a 2 s limit; a stuck one is killed).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sql_corpus.hostile import ATTEMPTS
from sql_support import session_entries
from xhelio.errors import UserError
from xhelio.sql.engine import SqlLimits
from xhelio.sql.query import query_entries

ENTRIES = session_entries()
LIMITS = SqlLimits(seconds=2, max_rows=100_000)


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


def test_the_corpus_is_large_and_varied() -> None:
    assert len(ATTEMPTS) >= 50
    assert len({name for name, _, _ in ATTEMPTS}) == len(ATTEMPTS)


@pytest.mark.parametrize(("name", "sql", "layers"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_each_attempt_is_stopped_by_its_layer(
    name: str, sql: str, layers: tuple[str, ...], tmp_path: Path, xhelio_home: Path
) -> None:
    before = _files(xhelio_home)
    if not layers:
        result = query_entries(ENTRIES, sql, LIMITS)
        assert set(result.tables) <= {e.label for e in ENTRIES}
        assert "root:" not in result.frame.to_csv()
    else:
        with pytest.raises(UserError) as caught:
            query_entries(ENTRIES, sql, LIMITS)
        layer = getattr(caught.value, "layer", None)
        assert layer in layers, f"{name}: stopped by {layer!r}: {caught.value.message}"
        assert "root:x:" not in caught.value.message
    assert _files(xhelio_home) == before
    assert not Path("/tmp/x.csv").exists() and not Path("/tmp/out.csv").exists()
