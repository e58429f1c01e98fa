"""`HapiSource`: data from any HAPI server (spec 3.3, and CDAWeb's 2.0) over HTTP.

Speaks the parameter names of the server's version (2.x: ``id``, ``time.min``,
``time.max``; 3.x: ``dataset``, ``start``, ``stop``), prefers the binary format when the
server offers it, splits requests by the dataset's ``maxRequestDuration``, maps HAPI
status codes to xhelio's typed errors and detects truncated streams. Parsing lives in
`hapi_parse`, HTTP retries in `http`. Imports only `config`, `errors`, `timerange`,
`catalog.model` and `sources`; never `data` or higher layers. No network at import or
construction time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import httpx
import numpy as np
import pandas as pd

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.config import Settings
from xhelio.errors import (
    NoDataError,
    ServerError,
    ServerUnreachableError,
    UnknownParameterError,
)
from xhelio.sources.base import ParameterData, ProgressCallback, drop_duplicate_times
from xhelio.sources.hapi_bins import attach_bins, with_bins_parameters
from xhelio.sources.hapi_parse import (
    ChunkArrays,
    column_names,
    dataset_info_from_hapi,
    format_hapi_time,
    split_time_range,
    take_time_notes,
)
from xhelio.sources.hapi_status import (
    SETTING_HINT,
    HapiRequest,
    is_json,
    json_object,
    raise_for_answer,
    raise_for_status,
    truncated,
)
from xhelio.sources.hapi_stream import BinaryBodyDecoder, BodyDecoder, CsvBodyDecoder
from xhelio.sources.http import RetryPolicy, call_with_retries, check_rate_limit, make_client
from xhelio.sources.sizing import cadence_seconds, reaches
from xhelio.timerange import TimeRange

__all__ = ["DataFormat", "HapiSource"]

DataFormat = Literal["auto", "csv", "binary"]


class HapiSource:
    """A `DataSource` reading any HAPI server (CSV or binary)."""

    name = "hapi"

    def __init__(
        self,
        settings: Settings,
        server_url: str | None = None,
        client: httpx.Client | None = None,
        *,
        data_format: DataFormat = "auto",
        retry: RetryPolicy | None = None,
    ) -> None:
        self.settings = settings
        self.server_url = (server_url or settings.hapi_url).rstrip("/")
        self.data_format: DataFormat = data_format
        self._client = client
        self._owns_client = client is None
        self._retry = retry or RetryPolicy.from_settings(settings)
        self._capabilities: dict[str, Any] | None = None
        self._infos: dict[str, tuple[DatasetInfo, dict[str, Any]]] = {}

    # lifecycle -------------------------------------------------------------------------

    @property
    def client(self) -> httpx.Client:
        """The HTTP client, created on first use."""
        if self._client is None:
            self._client = make_client(self.settings)
        return self._client

    def close(self) -> None:
        """Close the HTTP client if this source created it."""
        if self._client is not None and self._owns_client:
            self._client.close()
            self._client = None

    def __enter__(self) -> HapiSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # metadata --------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server's /capabilities answer (memoised)."""
        if self._capabilities is None:
            self._capabilities = self._get_json(
                "capabilities", {}, HapiRequest(self._url("capabilities"))
            )
        return self._capabilities

    def catalog(self) -> list[tuple[str, str]]:
        """Every dataset the server offers, as (id, title)."""
        answer = self._get_json("catalog", {}, HapiRequest(self._url("catalog")))
        entries = answer.get("catalog")
        if not isinstance(entries, list):
            raise ServerError(f"The /catalog answer of {self.server_url} has no 'catalog' list.")
        return [
            (str(e["id"]), str(e.get("title") or ""))  # pyright: ignore[reportUnknownArgumentType]
            for e in entries  # pyright: ignore[reportUnknownVariableType]
            if isinstance(e, dict) and "id" in e
        ]

    def info(self, dataset_id: str) -> DatasetInfo:
        """The dataset's metadata from the server's /info (memoised per instance)."""
        return self._info(dataset_id)[0]

    def _info(self, dataset_id: str) -> tuple[DatasetInfo, dict[str, Any]]:
        cached = self._infos.get(dataset_id)
        if cached is None:
            key = "id" if self._is_v2() else "dataset"
            raw = self._get_json(
                "info", {key: dataset_id}, HapiRequest(self._url("info"), dataset_id=dataset_id)
            )
            cached = (dataset_info_from_hapi(dataset_id, raw), raw)
            self._infos[dataset_id] = cached
        return cached

    def version(self) -> str:
        """The HAPI version the server declares ("2.0", "3.3", ...)."""
        try:
            declared = self.capabilities().get("HAPI")
        except ServerUnreachableError:
            raise
        except ServerError:
            # A server without a usable /capabilities: every 3.x server must still accept
            # the 2.0 names, and CSV is the one format all servers have.
            self._capabilities = {"HAPI": "2.0", "outputFormats": ["csv"]}
            declared = "2.0"
        return str(declared or "2.0")

    def _is_v2(self) -> bool:
        return self.version().split(".", 1)[0] in {"1", "2"}

    # data ------------------------------------------------------------------------------

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Fetch `parameters` of `dataset_id` over `time_range`, one request per chunk."""
        info, raw = self._info(dataset_id)
        wanted = _resolve_parameters(info, parameters)
        # Bins that change with time are parameters of their own: fetch them alongside.
        params = with_bins_parameters(info, wanted)
        take_time_notes()
        fmt = self._choose_format(params, raw)
        chunks = split_time_range(time_range, info.max_request_duration)
        parts: list[ChunkArrays] = []
        last_ns: int | None = None
        no_data: NoDataError | None = None
        proven_until: datetime | None = None
        for done, chunk in enumerate(chunks, start=1):
            try:
                arrays, framed = self._fetch_chunk(info, raw, params, chunk, fmt)
            except NoDataError as exc:
                no_data = exc
                arrays, framed = None, True
            if not framed and not _reaches_stop(arrays, chunk, info):
                # A close-delimited body may have been cut at a row boundary: only what
                # precedes its last record is known complete.
                last = _last_time(arrays)
                cut = chunk.start if last is None else max(chunk.start, last)
                proven_until = cut if proven_until is None else min(proven_until, cut)
            if arrays is not None:
                kept = _within(arrays, chunk, last_ns)
                if len(kept.times):
                    parts.append(kept)
                    last_ns = int(kept.times[-1])
            if progress is not None:
                progress(done, len(chunks), f"{dataset_id} {chunk}")
        if not parts:
            covers = f"The dataset covers {_coverage(info)}."
            error = NoDataError(
                f"{no_data.message} {covers}"
                if no_data is not None
                else f"Server {self.server_url} returned no data for dataset '{dataset_id}' "
                f"from {time_range}. Try another time range. {covers}"
            )
            error.proven_until = proven_until
            raise error
        fetched = attach_bins(wanted, _to_parameter_data(params, parts), take_time_notes())
        return {
            name: drop_duplicate_times(
                replace(data, proven_until=proven_until), f"{dataset_id}.{name}"
            )
            for name, data in fetched.items()
        }

    def _choose_format(self, params: Sequence[ParameterInfo], raw: dict[str, Any]) -> str:
        offered = self.capabilities().get("outputFormats") or ["csv"]
        binary_ok = all(p.type in {"double", "integer"} for p in params) and bool(_time_length(raw))
        if self.data_format == "csv":
            return "csv"
        if self.data_format == "binary":
            if "binary" not in offered:
                raise ServerError(
                    f"Server {self.server_url} does not offer the binary format (it offers "
                    f"{', '.join(map(str, offered))}). Use data_format='csv' or 'auto'."
                )
            if not binary_ok:
                raise ServerError(
                    "These parameters cannot be read as HAPI binary (string values or no "
                    "time length in /info). Use data_format='csv' or 'auto'."
                )
            return "binary"
        return "binary" if "binary" in offered and binary_ok else "csv"

    def _fetch_chunk(
        self,
        info: DatasetInfo,
        raw: dict[str, Any],
        params: Sequence[ParameterInfo],
        chunk: TimeRange,
        fmt: str,
    ) -> tuple[ChunkArrays, bool]:
        """Fetch one chunk; also say whether the body's framing proved it complete."""
        names = tuple(p.name for p in params)
        v2 = self._is_v2()
        query = {
            ("id" if v2 else "dataset"): info.id,
            ("time.min" if v2 else "start"): format_hapi_time(chunk.start),
            ("time.max" if v2 else "stop"): format_hapi_time(chunk.end),
            "parameters": ",".join(names),
            "format": fmt,
        }
        request = HapiRequest(
            self._url("data"),
            dataset_id=info.id,
            parameters=names,
            time_range=chunk,
            available=tuple(p.name for p in info.data_parameters),
        )

        def decoder() -> BodyDecoder:
            if fmt == "binary":
                return BinaryBodyDecoder(_time_length(raw), params, request)
            return CsvBodyDecoder(params, request)

        return call_with_retries(
            lambda: self._read_data(query, request, decoder()),
            url=request.url,
            policy=self._retry,
            setting_hint=SETTING_HINT,
            timeout_s=self.settings.http_timeout_s,
        )

    def _read_data(
        self, query: dict[str, str], request: HapiRequest, decoder: BodyDecoder
    ) -> tuple[ChunkArrays, bool]:
        """One /data request decoded as it streams; typed errors for statuses and cuts.

        Also returns whether the framing proved the body complete: a Content-Length that
        was reached, or a chunked body whose last chunk arrived (httpx raises otherwise).
        A close-delimited body (neither) proves nothing: the connection may have dropped.
        """
        try:
            with self.client.stream("GET", request.url, params=query) as response:
                if response.status_code != 200 or is_json(response):
                    check_rate_limit(response, request.what)
                    raise_for_answer(response.status_code, response.read(), request)
                received = 0
                try:
                    for piece in response.iter_bytes():
                        received += len(piece)
                        decoder.feed(piece)
                except (httpx.RemoteProtocolError, httpx.ReadError, httpx.DecodingError) as exc:
                    raise truncated(request, received, response, exc) from exc
                promised = response.headers.get("Content-Length")
                if promised is not None and response.num_bytes_downloaded < int(promised):
                    raise truncated(request, received, response, None)
                chunked = "chunked" in response.headers.get("Transfer-Encoding", "").lower()
                framed = promised is not None or chunked
            return decoder.finish(), framed
        finally:
            decoder.close()

    # plumbing --------------------------------------------------------------------------

    def _url(self, endpoint: str) -> str:
        return f"{self.server_url}/{endpoint}"

    def _get_json(
        self, endpoint: str, query: dict[str, str], request: HapiRequest
    ) -> dict[str, Any]:
        def operation() -> dict[str, Any]:
            response = self.client.get(request.url, params=query)
            if response.status_code != 200:
                check_rate_limit(response, request.what)
                raise_for_answer(response.status_code, response.content, request)
            payload = json_object(response.content)
            if payload is None:
                raise ServerError(
                    f"The /{endpoint} answer of {self.server_url} is not a JSON object. "
                    f"Is {SETTING_HINT} pointing at a HAPI server (it should end in /hapi)?"
                )
            raise_for_status(payload, 200, request)
            return payload

        return call_with_retries(
            operation,
            url=request.url,
            policy=self._retry,
            setting_hint=SETTING_HINT,
            timeout_s=self.settings.http_timeout_s,
        )


def _resolve_parameters(info: DatasetInfo, requested: Sequence[str]) -> list[ParameterInfo]:
    """The requested parameters in /info order (HAPI requires it); all if none named."""
    data_params = info.data_parameters
    if not requested:
        return list(data_params)
    wanted: set[str] = set()
    for name in requested:
        p = info.parameter(name)
        if p is None:
            raise UnknownParameterError(info.id, name, [q.name for q in data_params])
        if not p.is_time:
            wanted.add(p.name)
    if not wanted:
        raise UnknownParameterError(info.id, ", ".join(requested), [q.name for q in data_params])
    return [p for p in data_params if p.name in wanted]


def _time_length(raw: dict[str, Any]) -> int:
    params = raw.get("parameters") or [{}]
    length = params[0].get("length")
    return int(length) if isinstance(length, int | float | str) and str(length).isdigit() else 0


def _coverage(info: DatasetInfo) -> str:
    if info.start is None or info.stop is None:
        return "an unknown range"
    return str(TimeRange(info.start, info.stop)) if info.stop > info.start else "an unknown range"


def _last_time(arrays: ChunkArrays | None) -> datetime | None:
    """The time of the last record of a chunk, if it has any."""
    if arrays is None or not len(arrays.times):
        return None
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(
        microseconds=int(arrays.times.max()) // 1000
    )


def _reaches_stop(arrays: ChunkArrays | None, chunk: TimeRange, info: DatasetInfo) -> bool:
    """Whether a chunk's last record reaches its end, or the dataset's own stop before it.

    A dataset whose coverage ends inside the chunk (its /info stopDate) has nothing
    more to send after that stop: an answer reaching it is whole.
    """
    last = _last_time(arrays)
    if last is None or cadence_seconds(info.cadence) is None:
        return False
    end = chunk.end if info.stop is None else min(chunk.end, info.stop)
    return reaches(last, end, info.cadence)


def _within(arrays: ChunkArrays, chunk: TimeRange, last_ns: int | None) -> ChunkArrays:
    """Keep rows in [chunk.start, chunk.end) and after the previous chunk's last row."""
    times = arrays.times
    if len(times) > 1 and bool(np.any(times[1:] < times[:-1])):
        order = np.argsort(times, kind="stable")
        times = times[order]
        arrays = ChunkArrays(times, {k: v[order] for k, v in arrays.values.items()})
    start_ns = pd.Timestamp(chunk.start).as_unit("ns").value
    end_ns = pd.Timestamp(chunk.end).as_unit("ns").value
    keep = (times >= start_ns) & (times < end_ns)
    if last_ns is not None:
        keep &= times > last_ns
    if bool(keep.all()):
        return arrays
    return ChunkArrays(times[keep], {k: v[keep] for k, v in arrays.values.items()})


def _to_parameter_data(
    params: Sequence[ParameterInfo], parts: list[ChunkArrays]
) -> dict[str, ParameterData]:
    # One part (the usual case) is used as it is: a copy would double the answer in memory.
    times = parts[0].times if len(parts) == 1 else np.concatenate([part.times for part in parts])
    index = pd.DatetimeIndex(
        times.astype("datetime64[ns]", copy=False), name="time", copy=False
    ).tz_localize("UTC")
    result: dict[str, ParameterData] = {}
    for p in params:
        block = (
            parts[0].values[p.name]
            if len(parts) == 1
            else np.concatenate([part.values[p.name] for part in parts])
        )
        frame = pd.DataFrame(block, index=index, columns=column_names(p))
        result[p.name] = ParameterData(
            name=p.name,
            frame=frame,
            units=p.units,
            description=p.description,
            bins=np.asarray(p.bins, dtype=np.float64) if p.bins is not None else None,
            bins_name=p.bins_name,
            bins_units=p.bins_units,
        )
    return result
