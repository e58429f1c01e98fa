"""Decode a HAPI /data body while it downloads: pieces parse on a worker thread.

A large answer is cut into pieces of a few MiB (CSV at line ends, binary at record
boundaries); each piece is parsed (by Arrow and numpy, which release the GIL) on one
worker thread while the next bytes arrive, so download and parsing overlap. Imports only
`catalog.model` and the sibling `hapi_parse` / `hapi_status` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Protocol

import numpy as np

from xhelio.catalog.model import ParameterInfo
from xhelio.sources.hapi_parse import ChunkArrays, parse_binary, parse_csv, record_size
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


class _PieceDecoder:
    """Cuts a body into whole-row pieces and parses them in order on one worker thread."""

    def __init__(
        self, params: Sequence[ParameterInfo], request: HapiRequest, piece_bytes: int
    ) -> None:
        self._params = params
        self._request = request
        self._piece_bytes = piece_bytes
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._started = False
        self._futures: list[Future[ChunkArrays]] = []
        self._pool: ThreadPoolExecutor | None = None

    def _cut(self, buffer: bytes) -> int:
        """Length of the longest prefix of `buffer` made of whole rows."""
        raise NotImplementedError

    def _parse(self, piece: bytes) -> ChunkArrays:
        """Parse whole rows."""
        raise NotImplementedError

    def _first(self, piece: bytes) -> None:
        """Look at the first bytes of the body (CSV: a HAPI status header)."""

    def _last(self, tail: bytes) -> None:
        """Check the last bytes of the body before they are parsed."""

    def feed(self, data: bytes) -> None:
        """Take the next bytes; hand a piece to the worker once enough whole rows arrived."""
        self._pending.append(data)
        self._pending_len += len(data)
        if self._pending_len < self._piece_bytes:
            return
        buffer = b"".join(self._pending)
        cut = self._cut(buffer)
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
            self._started = True
            self._first(tail)
        self._last(tail)
        last = self._parse(tail)
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
            self._started = True
            self._first(piece)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hapi-data")
        self._futures.append(self._pool.submit(self._parse, piece))


class BinaryBodyDecoder(_PieceDecoder):
    """Parses a HAPI binary body in pieces of whole fixed-size records as it arrives."""

    def __init__(
        self,
        time_length: int,
        params: Sequence[ParameterInfo],
        request: HapiRequest,
        piece_bytes: int = _PIECE_BYTES,
    ) -> None:
        super().__init__(params, request, piece_bytes)
        self._time_length = time_length
        self._record = record_size(time_length, params)

    def _cut(self, buffer: bytes) -> int:
        return len(buffer) - len(buffer) % self._record

    def _parse(self, piece: bytes) -> ChunkArrays:
        # A partial record left at the end means the stream was cut: parse_binary says so.
        return parse_binary(piece, self._time_length, self._params, self._request.what)


class CsvBodyDecoder(_PieceDecoder):
    """Parses a HAPI CSV body in line-aligned pieces as it arrives."""

    def __init__(
        self,
        params: Sequence[ParameterInfo],
        request: HapiRequest,
        piece_bytes: int = _PIECE_BYTES,
    ) -> None:
        super().__init__(params, request, piece_bytes)
        self._fields = sum(p.components for p in params) + 1

    def _cut(self, buffer: bytes) -> int:
        return buffer.rfind(b"\n") + 1

    def _parse(self, piece: bytes) -> ChunkArrays:
        return parse_csv(piece, self._params, self._request.what)

    def _first(self, piece: bytes) -> None:
        if piece.startswith(b"#"):
            check_header_status(piece, self._request)

    def _last(self, tail: bytes) -> None:
        check_last_line(tail, self._fields, self._request)
