"""Write a fetch to a file piece by piece, so any request runs in bounded memory.

`stream_fetch` estimates the request (cadence x span x columns), cuts it into pieces of
at most ``Settings.fetch_piece_mb`` (aligned to the cache's fragments), fetches each
piece through the cached source (so every piece also lands in the fragment cache),
appends it to the output and lets it go before asking for the next. Only one piece is in
memory at a time, whatever the span. CSV and parquet are appended as they come; the
output is written to a temporary file beside the target and renamed over it only once
complete, so an interrupted run leaves the previous file untouched.

`StreamingWriter` is the appending writer; `atomic_output` the temp-and-rename context
used by every output writer. Imports data, sources and errors only.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from xhelio.errors import NoDataError, UserError

__all__ = [
    "PieceSummary",
    "StreamingWriter",
    "atomic_output",
    "piece_alignment",
    "plan_stream",
]


@contextmanager
def atomic_output(out: Path) -> Generator[Path, None, None]:
    """Yield a temporary path beside `out`; rename it over `out` only if the block succeeds."""
    temp = out.with_name(f".{out.stem}.{uuid.uuid4().hex[:8]}.partial{out.suffix}")
    try:
        yield temp
        with temp.open("rb") as fh:
            os.fsync(fh.fileno())
        os.replace(temp, out)
    finally:
        temp.unlink(missing_ok=True)


@dataclass
class PieceSummary:
    """Running totals of one output column set, for the summary table."""

    points: int = 0
    start: Any = None
    stop: Any = None
    """First and last time seen (pandas Timestamps), None before any data."""
    values: int = 0
    nans: int = 0
    steps: list[float] = field(default_factory=list[float])

    def add(self, frame: pd.DataFrame) -> None:
        """Count one piece."""
        if frame.empty:
            return
        index = pd.DatetimeIndex(frame.index)
        self.points += len(frame)
        self.start = index[0] if self.start is None else min(self.start, index[0])
        self.stop = index[-1] if self.stop is None else max(self.stop, index[-1])
        numeric = frame.select_dtypes(include="number").to_numpy(dtype=float)
        self.values += numeric.size
        self.nans += int(np.isnan(numeric).sum())
        if len(index) > 1 and len(self.steps) < 32:
            self.steps.append(float(np.median(np.diff(index.asi8))) / 1e9)

    @property
    def nan_fraction(self) -> float:
        """Share of NaN values over all pieces."""
        return self.nans / self.values if self.values else 1.0

    @property
    def cadence_s(self) -> float | None:
        """Median step between rows, in seconds."""
        return float(np.median(self.steps)) if self.steps else None


class StreamingWriter:
    """Appends DataFrames (time-indexed, same columns) to a CSV or parquet file.

    Like `outputs.write_output`, the file keeps the data's meaning once `describe` has
    been called (before the first piece): units in CSV header names (``Bz [nT]``),
    parquet field metadata and an ``xhelio`` schema entry.
    """

    def __init__(self, path: Path, suffix: str) -> None:
        if suffix not in (".csv", ".parquet"):
            raise UserError(f"Cannot stream into '{suffix}' files; use .csv or .parquet.")
        self.path = path
        self.suffix = suffix
        self._parquet: Any = None
        self._schema: Any = None
        self._columns: list[str] | None = None
        self.units: dict[str, str] = {}
        self.metadata: dict[str, Any] | None = None
        self.rows = 0

    def describe(self, units: dict[str, str], metadata: dict[str, Any]) -> None:
        """Each column's units and the JSON-able meaning of the data written."""
        self.units = {str(k): v for k, v in units.items() if v}
        self.metadata = metadata

    def write(self, frame: pd.DataFrame) -> None:
        """Append one piece (its columns must match the first piece's)."""
        if self._columns is None:
            self._columns = [str(c) for c in frame.columns]
        elif [str(c) for c in frame.columns] != self._columns:
            frame = frame.reindex(columns=self._columns)
        if self.suffix == ".csv":
            named = frame.rename(columns=lambda c: _with_unit(str(c), self.units))
            named.to_csv(
                self.path,
                mode="a" if self.rows else "w",
                header=self.rows == 0,
                date_format="%Y-%m-%dT%H:%M:%S.%fZ",
            )
        else:
            table = pa.Table.from_pandas(frame, preserve_index=True)
            if self._parquet is None:
                self._schema = self._described(table.schema)
                table = table.cast(self._schema)
                self._parquet = pq.ParquetWriter(self.path, self._schema, compression="snappy")
            else:
                table = table.cast(self._schema)
            self._parquet.write_table(table)
        self.rows += len(frame)

    def _described(self, schema: Any) -> Any:
        """`schema` (a pyarrow Schema, untyped in its stubs) with units and meaning."""
        fields = [
            f.with_metadata({"units": self.units[f.name]}) if f.name in self.units else f
            for f in schema
        ]
        meta = dict(schema.metadata or {})
        if self.metadata is not None:
            meta[b"xhelio"] = json.dumps(self.metadata, default=str).encode()
        return pa.schema(fields, metadata=meta)

    def close(self) -> None:
        """Finish the file (parquet writes its footer here)."""
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        elif self.rows == 0 and self.suffix == ".csv":
            self.path.write_text("time\n")


def _with_unit(name: str, units: dict[str, str]) -> str:
    unit = units.get(name)
    return f"{name} [{unit}]" if unit else name


def plan_stream(
    pieces: Sequence[Any],
    fetch_piece: Callable[[Any], pd.DataFrame | None],
    writer: StreamingWriter,
    summary: PieceSummary,
    on_piece: Callable[[int, int], None] | None = None,
) -> None:
    """Fetch each piece in order, append it, and let it go before the next one.

    `fetch_piece` returns the piece's combined frame, or None when it holds no data.
    Raises `NoDataError` when no piece held any data.
    """
    for done, piece in enumerate(pieces, start=1):
        frame = fetch_piece(piece)
        if frame is not None and not frame.empty:
            writer.write(frame)
            summary.add(frame)
        del frame
        if on_piece is not None:
            on_piece(done, len(pieces))
    if summary.points == 0:
        raise NoDataError("No data in any piece of the requested range.")


def piece_alignment(fragment_hours: int) -> timedelta:
    """The alignment of pieces: the cache's base fragment length."""
    return timedelta(hours=max(1, fragment_hours))
