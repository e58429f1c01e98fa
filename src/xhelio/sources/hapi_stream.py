"""Decode a HAPI /data body while it downloads: CSV pieces parse on a worker thread.

A large CSV answer is cut at line ends into pieces of a few MiB; each piece is parsed by
Arrow (which releases the GIL) on one worker thread while the next bytes arrive, so
download and parsing overlap. Binary answers are cheap to decode and are joined at the
end. Imports only `catalog.model` and the sibling `hapi_parse` / `hapi_status` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np

from xhelio.catalog.model import ParameterInfo
from xhelio.sources.hapi_parse import ChunkArrays, parse_binary, parse_csv
from xhelio.sources.hapi_status import HapiRequest, check_header_status, check_last_line

__all__ = ["BinaryBodyDecoder", "BodyDecoder", "CsvBodyDecoder", "concat_chunks"]

_PIECE_BYTES = 8 << 20


class BodyDecoder(Protocol):
    """Receives a /data body piece by piece and returns the parsed arrays."""

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the body."""
        ...

    def finish(self) -> ChunkArrays:
        """Parse what is left and return all rows, in order."""
        ...

    def close(self) -> None:
        """Release worker threads (also after a failure)."""
        ...


def concat_chunks(parts: Sequence[ChunkArrays], params: Sequence[ParameterInfo]) -> ChunkArrays:
    """Join parsed pieces in order."""
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return parse_csv(b"", params, "")
    return ChunkArrays(
        np.concatenate([p.times for p in parts]),
        {q.name: np.concatenate([p.values[q.name] for p in parts]) for q in params},
    )


class BinaryBodyDecoder:
    """Collects a HAPI binary body and decodes it as fixed-size records."""

    def __init__(
        self, time_length: int, params: Sequence[ParameterInfo], request: HapiRequest
    ) -> None:
        self._time_length = time_length
        self._params = params
        self._request = request
        self._pieces: list[bytes] = []

    def feed(self, data: bytes) -> None:
        """Take the next bytes of the body."""
        self._pieces.append(data)

    def finish(self) -> ChunkArrays:
        """Decode all records; a partial record means the stream was cut."""
        body = b"".join(self._pieces)
        return parse_binary(body, self._time_length, self._params, self._request.what)

    def close(self) -> None:
        """Nothing to release."""


class CsvBodyDecoder:
    """Parses a HAPI CSV body in line-aligned pieces on a worker thread as it arrives."""

    def __init__(
        self,
        params: Sequence[ParameterInfo],
        request: HapiRequest,
        piece_bytes: int = _PIECE_BYTES,
    ) -> None:
        self._params = params
        self._request = request
        self._piece_bytes = piece_bytes
        self._fields = sum(p.components for p in params) + 1
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._started = False
        self._futures: list[Future[ChunkArrays]] = []
        self._pool: ThreadPoolExecutor | None = None

    def feed(self, data: bytes) -> None:
        """Take the next bytes; hand a piece to the worker once enough whole lines arrived."""
        self._pending.append(data)
        self._pending_len += len(data)
        if self._pending_len < self._piece_bytes:
            return
        buffer = b"".join(self._pending)
        cut = buffer.rfind(b"\n") + 1
        if cut == 0:
            self._pending = [buffer]
            return
        rest = buffer[cut:]
        self._pending = [rest] if rest else []
        self._pending_len = len(rest)
        self._submit(buffer[:cut])

    def finish(self) -> ChunkArrays:
        """Parse the last piece and return every row in order."""
        tail = b"".join(self._pending)
        self._pending = []
        if not self._started:
            self._check_header(tail)
        check_last_line(tail, self._fields, self._request)
        last = parse_csv(tail, self._params, self._request.what)
        parts = [f.result() for f in self._futures]
        parts.append(last)
        return concat_chunks([p for p in parts if len(p.times)] or [last], self._params)

    def close(self) -> None:
        """Stop the worker thread, dropping queued pieces."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _submit(self, piece: bytes) -> None:
        if not self._started:
            self._check_header(piece)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hapi-csv")
        self._futures.append(self._pool.submit(parse_csv, piece, self._params, self._request.what))

    def _check_header(self, first: bytes) -> None:
        self._started = True
        if first.startswith(b"#"):
            check_header_status(first, self._request)
