"""A real HAPI server on 127.0.0.1 for tests and benchmarks, with fault injection.

It speaks HTTP/1.1 from a stdlib `ThreadingHTTPServer` in a background thread (port 0,
so tests run in parallel) and imports nothing from xhelio: it is an independent peer of
the client under test.

API::

    with HapiTestServer(version="3.3") as server:          # or "2.0" (CDAWeb's)
        server.url                                          # http://127.0.0.1:PORT/hapi
        info = make_info(start, stop, [("B", "nT", 3), ("n", "cm^-3", None)])
        frame = synthetic_frame(start, stop, "PT1M", ["B_x", "B_y", "B_z", "n"])
        server.add_dataset("DS", info, frame)               # one column per component
        server.add_hapi_csv(path)                           # a real CDAWeb CSV response
        server.fail_next("1406", count=1, dataset="DS")     # inject a fault
        server.requests                                     # log: path + parsed query

Endpoints under ``/hapi``: ``capabilities``, ``about``, ``catalog``, ``info`` (``id`` or
``dataset``, optional ``parameters``) and ``data``, which accepts HAPI 2.0 names (``id``,
``time.min``, ``time.max``) and 3.x names (``dataset``, ``start``, ``stop``),
``parameters``, ``format=csv|binary`` and ``include=header``. Errors are HAPI status JSON
bodies with the HTTP code the spec pairs with them. ``maxRequestDuration`` in an info is
enforced (1408). ``strict_names=True`` answers 1401 to the other version's names;
``inclusive_stop=True`` also sends the row at ``stop``, as some servers do. An isotime
``length`` of 18 sends day-of-year times (``2017-192T00:00:00Z``, SSCWeb's form). Binary is per
spec: little-endian doubles / int32, time as fixed-length ASCII. NaN in a frame is sent
as the parameter's fill value.

Fault kinds for `fail_next`: ``http500`` (plain HTTP 500, not JSON), ``1201``, ``1406``,
``1407``, ``1408``, ``1500`` (HAPI JSON errors), ``cut_stream`` (Content-Length promises
the whole body, the connection closes mid-row), ``cut_chunked`` (chunked transfer that
stops mid-row without the terminating chunk), ``cut_body`` (a consistent Content-Length
but the body ends mid-row / mid-record) and ``slow`` (sleep `delay_s` before answering).
Reliability faults: ``close_rows`` (no Content-Length, no chunking, the connection closes
after the first half of the rows: a cut at a row boundary only the data can reveal),
``close_whole`` (the same framing, every row sent: a close-delimited answer that is whole),
``redirect_loop`` (302 to itself), ``bad_encoding`` (``Content-Encoding: gzip`` over a
body that is not gzip), ``http429`` (429 with ``Retry-After: delay_s``), ``trickle``
(honest headers, then one byte every `delay_s`), ``stall`` (headers and half the body,
then silence for `delay_s`), ``duplicate_rows`` (every CSV row sent twice) and
``contradict_rows`` (the middle row sent again with different values).
Rendered bodies are cached per (dataset, parameters, format) and sliced by time, so the
server streams a year of 1-minute data fast enough for benchmarks.
"""

from __future__ import annotations

import json
import math
import re
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = [
    "FaultKind",
    "HapiTestServer",
    "RecordedRequest",
    "load_hapi_csv",
    "make_info",
    "running_hapi_server",
    "synthetic_frame",
]

FaultKind = Literal[
    "http500",
    "1201",
    "1406",
    "1407",
    "1408",
    "1500",
    "cut_stream",
    "cut_chunked",
    "cut_body",
    "slow",
    "close_rows",
    "close_whole",
    "redirect_loop",
    "bad_encoding",
    "http429",
    "trickle",
    "stall",
    "duplicate_rows",
    "contradict_rows",
]

_HTTP_FOR_STATUS = {
    1200: 200,
    1201: 200,
    1400: 400,
    1401: 400,
    1402: 400,
    1403: 400,
    1404: 400,
    1406: 404,
    1407: 404,
    1408: 400,
    1409: 400,
    1410: 400,
    1500: 500,
}
_STATUS_TEXT = {
    1200: "OK",
    1201: "OK - no data for time range",
    1400: "Bad request - user input error",
    1401: "Bad request - unknown API parameter name",
    1402: "Bad request - error in start time",
    1403: "Bad request - error in stop time",
    1404: "Bad request - start time equal to or after stop time",
    1406: "Bad request - unknown dataset id",
    1407: "Bad request - unknown dataset parameter",
    1408: "Bad request - too much time or data requested",
    1409: "Bad request - unsupported output format",
    1410: "Bad request - unsupported include value",
    1500: "Internal server error",
}
_NAMES_20 = {"id", "time.min", "time.max"}
_NAMES_3X = {"dataset", "start", "stop"}
_DURATION = re.compile(
    r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)
_TIME_UNIT_BY_LENGTH: dict[int, Literal["s", "ms", "us", "ns"]] = {
    20: "s",
    24: "ms",
    27: "us",
    30: "ns",
}
_WRITE_BLOCK = 1 << 20


_BODY_FAULTS = frozenset(
    {
        "close_rows",
        "close_whole",
        "bad_encoding",
        "trickle",
        "stall",
        "duplicate_rows",
        "contradict_rows",
    }
)


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: its path and parsed query."""

    path: str
    query: dict[str, str]

    @property
    def endpoint(self) -> str:
        """Last path segment: ``data``, ``info``, ``catalog``, ..."""
        return self.path.rstrip("/").rsplit("/", 1)[-1]


@dataclass
class _Fault:
    kind: FaultKind
    remaining: int
    dataset: str | None
    endpoint: str
    delay_s: float


@dataclass(frozen=True)
class _Rendered:
    body: bytes
    offsets: np.ndarray  # byte offset of each row start, plus the body length
    times_ns: np.ndarray


@dataclass
class _Dataset:
    info: dict[str, Any]
    frame: pd.DataFrame
    columns: dict[str, list[str]]
    times_ns: np.ndarray
    rendered: dict[tuple[tuple[str, ...], str], _Rendered] = field(
        default_factory=dict[tuple[tuple[str, ...], str], _Rendered]
    )


class _HapiError(Exception):
    def __init__(self, code: int, detail: str = "") -> None:
        text = _STATUS_TEXT.get(code, "Error")
        super().__init__(f"{text}: {detail}" if detail else text)
        self.code = code


def parse_duration_seconds(text: str) -> float:
    """Length of an ISO-8601 duration such as P1D or PT12H (Y=365 d, M=30 d)."""
    m = _DURATION.match(text.strip())
    if not m or text.strip() in {"P", "PT"}:
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    y, mo, w, d, h, mi, s = (float(g) if g else 0.0 for g in m.groups())
    return (((y * 365 + mo * 30 + w * 7 + d) * 24 + h) * 60 + mi) * 60 + s


def _duration_offset(text: str) -> pd.DateOffset:
    """Calendar-aware offset of an ISO-8601 duration (P1M is a calendar month)."""
    m = _DURATION.match(text.strip())
    if not m:
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    y, mo, w, d, h, mi = (int(g) if g else 0 for g in m.groups()[:6])
    return pd.DateOffset(
        years=y, months=mo, weeks=w, days=d, hours=h, minutes=mi, seconds=float(m.group(7) or 0)
    )


def _parse_time(text: str) -> pd.Timestamp:
    doy = re.match(r"^(\d{4})-(\d{3})(.*)$", text)
    if doy:
        year, day, rest = doy.groups()
        date = pd.Timestamp(f"{year}-01-01") + pd.Timedelta(days=int(day) - 1)
        text = date.strftime("%Y-%m-%d") + rest
    ts = pd.Timestamp(text)
    if not isinstance(ts, pd.Timestamp):  # NaT
        raise ValueError(f"not a time: {text!r}")
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _iso(ts: pd.Timestamp) -> str:
    return ts.tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def make_info(
    start: str,
    stop: str,
    parameters: Sequence[tuple[str, str, int | None]],
    *,
    cadence: str | None = "PT1M",
    max_request_duration: str | None = None,
    fill: str | None = "-1.0E31",
    time_length: int = 24,
) -> dict[str, Any]:
    """Build a HAPI /info dict: (name, units, size or None) per double parameter."""
    params: list[dict[str, Any]] = [
        {"name": "Time", "type": "isotime", "units": "UTC", "length": time_length, "fill": None}
    ]
    for name, units, size in parameters:
        p: dict[str, Any] = {"name": name, "type": "double", "units": units, "fill": fill}
        if size is not None:
            p["size"] = [size]
        params.append(p)
    info: dict[str, Any] = {
        "startDate": _iso(_parse_time(start)),
        "stopDate": _iso(_parse_time(stop)),
        "parameters": params,
    }
    if cadence:
        info["cadence"] = cadence
    if max_request_duration:
        info["maxRequestDuration"] = max_request_duration
    return info


def synthetic_frame(start: str, stop: str, cadence: str, columns: Sequence[str]) -> pd.DataFrame:
    """Deterministic smooth data on a regular UTC grid [start, stop), one column each."""
    step_s = parse_duration_seconds(cadence)
    t0, t1 = _parse_time(start), _parse_time(stop)
    index = pd.date_range(t0, t1, freq=pd.Timedelta(seconds=step_s), inclusive="left", name="time")
    seconds = (index.as_unit("ns").asi8 - t0.as_unit("ns").value) / 1e9
    data: dict[str, np.ndarray] = {}
    for j, col in enumerate(columns):
        period = 3600.0 * (j + 1.7)
        data[col] = (j + 1) * np.sin(2 * math.pi * seconds / period) + 0.25 * j
    return pd.DataFrame(data, index=index)


def load_hapi_csv(path: Path) -> tuple[dict[str, Any], pd.DataFrame, bytes]:
    """Read a HAPI CSV response with a '#' JSON header: (info, frame, data body bytes)."""
    raw = path.read_bytes()
    header_lines: list[str] = []
    body_start = 0
    for line in raw.splitlines(keepends=True):
        if not line.startswith(b"#"):
            break
        header_lines.append(line[1:].decode())
        body_start += len(line)
    info: dict[str, Any] = json.loads("".join(header_lines))
    body = raw[body_start:]
    names = ["time"]
    for p in info["parameters"][1:]:
        n = int(np.prod(p.get("size", [1])))
        names += [p["name"]] if "size" not in p else [f"{p['name']}_{i}" for i in range(n)]
    table = pd.read_csv(path, comment="#", header=None, names=names)
    index = pd.DatetimeIndex(pd.to_datetime(table.pop("time"), utc=True), name="time")
    frame = table.set_axis(index)
    for key in ("status", "format", "HAPI"):
        info.pop(key, None)
    return info, frame, body


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, the body waits ~40 ms
    # for the client's delayed ACK on every small answer.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        assert isinstance(self.server, _Server)
        try:
            self.server.owner.handle(self)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up (timeouts in tests)

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: pytest would otherwise show every request."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: HapiTestServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.owner = owner


class HapiTestServer:
    """A HAPI server on 127.0.0.1 serving registered datasets, with injectable faults."""

    def __init__(
        self,
        version: str = "3.3",
        formats: Sequence[str] = ("csv", "binary"),
        *,
        strict_names: bool = False,
        inclusive_stop: bool = False,
        prefix: str = "/hapi",
    ) -> None:
        self.version = version
        self.inclusive_stop = inclusive_stop
        self.formats = tuple(formats)
        self.strict_names = strict_names
        self.prefix = prefix.rstrip("/")
        self._datasets: dict[str, _Dataset] = {}
        self._titles: dict[str, str] = {}
        self._faults: list[_Fault] = []
        self._log: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._render_lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -------------------------------------------------------------------------

    def start(self) -> HapiTestServer:
        """Bind a free port and serve in a background thread."""
        self._httpd = _Server(self)
        # A short poll interval keeps stop() fast: tests start a server each.
        httpd = self._httpd
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.02), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> HapiTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """Base URL of the HAPI API, e.g. http://127.0.0.1:PORT/hapi."""
        if self._httpd is None:
            raise RuntimeError("HapiTestServer is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}{self.prefix}"

    # content ---------------------------------------------------------------------------

    def add_dataset(
        self, dataset_id: str, info: dict[str, Any], frame: pd.DataFrame, title: str = ""
    ) -> None:
        """Serve `frame` (UTC DatetimeIndex, one column per component) as `dataset_id`."""
        params: list[dict[str, Any]] = info["parameters"]
        if params[0].get("type") != "isotime":
            raise ValueError("the first HAPI parameter must be the isotime column")
        columns: dict[str, list[str]] = {}
        cols = [str(c) for c in frame.columns]
        pos = 0
        for p in params[1:]:
            n = int(np.prod(p.get("size", [1])))
            columns[p["name"]] = cols[pos : pos + n]
            pos += n
        if pos != len(cols):
            raise ValueError(f"info has {pos} value columns, frame has {len(cols)}")
        index = pd.DatetimeIndex(frame.index)
        index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
        frame = frame.set_axis(index).sort_index()
        times_ns = pd.DatetimeIndex(frame.index).as_unit("ns").asi8
        with self._lock:
            self._datasets[dataset_id] = _Dataset(dict(info), frame, columns, times_ns)
            self._titles[dataset_id] = title or dataset_id

    def add_hapi_csv(self, path: Path, dataset_id: str = "AC_H2_MFI", title: str = "") -> None:
        """Serve a real HAPI CSV response file; full-parameter requests get its bytes verbatim."""
        info, frame, body = load_hapi_csv(path)
        times = pd.DatetimeIndex(frame.index)
        ns = times.as_unit("ns").asi8
        step_ns = int(np.diff(ns).min()) if len(ns) > 1 else 1_000_000_000
        bounds = np.array([ns[0], ns[-1] + step_ns]).astype("datetime64[ns]")
        start, stop = np.datetime_as_string(bounds, unit="ms", timezone="UTC")
        info.setdefault("startDate", str(start))
        info.setdefault("stopDate", str(stop))
        self.add_dataset(dataset_id, info, frame, title=title)
        names = tuple(p["name"] for p in info["parameters"][1:])
        starts = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord("\n")) + 1
        offsets = np.concatenate([[0], starts[: len(times)]])
        with self._lock:
            ds = self._datasets[dataset_id]
            ds.rendered[(names, "csv")] = _Rendered(body, offsets, ds.times_ns)

    def add_raw_csv(
        self,
        dataset_id: str,
        info: dict[str, Any],
        rows: Sequence[str],
        times_ns: Sequence[int] | np.ndarray,
    ) -> None:
        """Serve CSV `rows` verbatim (any time form) for all-parameter requests.

        `times_ns` are the rows' instants (for slicing by start/stop); the served frame
        behind other requests is empty, so only requests for every parameter work.
        """
        names = [p["name"] for p in info["parameters"][1:]]
        width = sum(int(np.prod(p.get("size", [1]))) for p in info["parameters"][1:])
        columns = [f"c{i}" for i in range(width)]
        index = pd.DatetimeIndex(np.asarray(times_ns, dtype="datetime64[ns]"), tz="UTC")
        frame = pd.DataFrame(np.zeros((len(index), width)), index=index, columns=columns)
        self.add_dataset(dataset_id, info, frame)
        body = "".join(row + "\n" for row in rows).encode()
        lengths = [len(row.encode()) + 1 for row in rows]
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        with self._lock:
            ds = self._datasets[dataset_id]
            ds.rendered[(tuple(names), "csv")] = _Rendered(
                body, offsets, np.asarray(times_ns, dtype=np.int64)
            )

    def info_of(self, dataset_id: str) -> dict[str, Any]:
        """The /info dict registered for `dataset_id`."""
        return self._datasets[dataset_id].info

    def prerender(self, dataset_id: str, fmt: str = "csv") -> None:
        """Render all parameters of a dataset now so the first request is not slowed."""
        ds = self._datasets[dataset_id]
        self._rendered(ds, tuple(ds.columns), fmt)

    # faults and log --------------------------------------------------------------------

    def fail_next(
        self,
        kind: FaultKind,
        count: int = 1,
        *,
        dataset: str | None = None,
        endpoint: str = "data",
        delay_s: float = 3.0,
    ) -> None:
        """Answer the next `count` matching requests with fault `kind` (endpoint or 'any')."""
        with self._lock:
            self._faults.append(_Fault(kind, count, dataset, endpoint, delay_s))

    def clear_faults(self) -> None:
        """Drop every pending fault."""
        with self._lock:
            self._faults.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._log)

    def data_requests(self) -> list[RecordedRequest]:
        """Only the /data requests received so far."""
        return [r for r in self.requests if r.endpoint == "data"]

    def clear_requests(self) -> None:
        """Forget the request log."""
        with self._lock:
            self._log.clear()

    # request handling ------------------------------------------------------------------

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        """Answer one GET request (called on the handler's thread)."""
        split = urllib.parse.urlsplit(h.path)
        query = dict(urllib.parse.parse_qsl(split.query, keep_blank_values=True))
        with self._lock:
            self._log.append(RecordedRequest(split.path, query))
        if not split.path.startswith(self.prefix + "/"):
            self._send(h, 404, b"not found", "text/plain")
            return
        endpoint = split.path[len(self.prefix) + 1 :].strip("/")
        fault = self._take_fault(endpoint, query.get("dataset") or query.get("id"))
        if fault is not None and fault.kind == "slow":
            if self._stopping.wait(fault.delay_s):
                return
            fault = None
        try:
            if fault is not None and fault.kind == "redirect_loop":
                h.send_response(302)
                h.send_header("Location", h.path)
                h.send_header("Content-Length", "0")
                h.end_headers()
            elif fault is not None and fault.kind == "http429":
                h.send_response(429)
                h.send_header("Retry-After", f"{fault.delay_s:g}")
                h.send_header("Content-Type", "text/plain")
                h.send_header("Content-Length", "17")
                h.end_headers()
                h.wfile.write(b"Too Many Requests")
            elif fault is not None and fault.kind == "http500":
                self._send(h, 500, b"Internal Server Error (injected)", "text/plain")
            elif fault is not None and fault.kind.isdigit():
                raise _HapiError(int(fault.kind), "injected fault")
            elif endpoint == "capabilities":
                self._json(h, {"outputFormats": list(self.formats)})
            elif endpoint == "about":
                self._json(h, {"id": "xhelio-test", "title": "xhelio loopback HAPI server"})
            elif endpoint == "catalog":
                items = [{"id": k, "title": v} for k, v in self._titles.items()]
                self._json(h, {"catalog": items})
            elif endpoint == "info":
                self._info(h, query)
            elif endpoint == "data":
                self._data(h, query, fault)
            else:
                self._send(h, 404, b"unknown endpoint", "text/plain")
        except _HapiError as err:
            self._json(h, {}, code=err.code, message=str(err))

    def _take_fault(self, endpoint: str, dataset_id: str | None) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.endpoint not in (endpoint, "any"):
                    continue
                if fault.dataset is not None and fault.dataset != dataset_id:
                    continue
                fault.remaining -= 1
                if fault.remaining <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    def _check_names(self, query: dict[str, str]) -> None:
        if not self.strict_names:
            return
        foreign = _NAMES_3X if self.version.startswith("2") else _NAMES_20
        bad = sorted(foreign & query.keys())
        if bad:
            raise _HapiError(1401, f"{', '.join(bad)} (this is a HAPI {self.version} server)")

    def _dataset(self, query: dict[str, str]) -> tuple[str, _Dataset]:
        self._check_names(query)
        dataset_id = query.get("dataset") or query.get("id")
        if not dataset_id:
            raise _HapiError(1400, "missing dataset id")
        ds = self._datasets.get(dataset_id)
        if ds is None:
            raise _HapiError(1406, repr(dataset_id))
        return dataset_id, ds

    def _parameters(self, ds: _Dataset, query: dict[str, str]) -> tuple[str, ...]:
        text = query.get("parameters", "")
        if not text:
            return tuple(ds.columns)
        wanted = [p for p in text.split(",") if p]
        time_name = ds.info["parameters"][0]["name"]
        unknown = [p for p in wanted if p not in ds.columns and p != time_name]
        if unknown:
            raise _HapiError(1407, ", ".join(repr(p) for p in unknown))
        return tuple(p for p in ds.columns if p in wanted)  # always in info order

    def _info_subset(self, ds: _Dataset, params: tuple[str, ...]) -> dict[str, Any]:
        info = dict(ds.info)
        info["parameters"] = [ds.info["parameters"][0]] + [
            p for p in ds.info["parameters"][1:] if p["name"] in params
        ]
        return info

    def _info(self, h: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        _, ds = self._dataset(query)
        self._json(h, self._info_subset(ds, self._parameters(ds, query)))

    def _data(self, h: BaseHTTPRequestHandler, query: dict[str, str], fault: _Fault | None) -> None:
        cut = fault.kind if fault is not None else None
        _, ds = self._dataset(query)
        start_text = query.get("start") or query.get("time.min")
        stop_text = query.get("stop") or query.get("time.max")
        try:
            start = _parse_time(start_text or "")
        except ValueError as exc:
            raise _HapiError(1402, repr(start_text)) from exc
        try:
            stop = _parse_time(stop_text or "")
        except ValueError as exc:
            raise _HapiError(1403, repr(stop_text)) from exc
        if stop <= start:
            raise _HapiError(1404)
        fmt = query.get("format", "csv")
        if fmt not in self.formats:
            raise _HapiError(1409, repr(fmt))
        include = query.get("include", "")
        if include not in ("", "header"):
            raise _HapiError(1410, repr(include))
        params = self._parameters(ds, query)
        limit = ds.info.get("maxRequestDuration")
        if limit and stop > start + _duration_offset(limit):
            raise _HapiError(1408, f"the limit is {limit}")
        rendered = self._rendered(ds, params, fmt)
        # Some real servers include the row at `stop`; inclusive_stop mimics them.
        i0 = int(np.searchsorted(rendered.times_ns, start.value, side="left"))
        i1 = int(
            np.searchsorted(
                rendered.times_ns, stop.value, side="right" if self.inclusive_stop else "left"
            )
        )
        body = rendered.body[int(rendered.offsets[i0]) : int(rendered.offsets[i1])]
        status = 1200 if i1 > i0 else 1201
        if cut is None and status == 1201 and not include:
            self._send(h, 200, b"", "text/csv")
            return
        header = b""
        if include:
            meta: dict[str, Any] = {
                "HAPI": self.version,
                "status": {"code": status, "message": _STATUS_TEXT[status]},
            }
            meta.update(self._info_subset(ds, params))
            meta["format"] = fmt
            text = json.dumps(meta, indent=1)
            header = "".join(f"#{line}\n" for line in text.splitlines()).encode()
        ctype = "text/csv" if fmt == "csv" else "application/octet-stream"
        if cut is None:
            self._send(h, 200, header + body, ctype)
            return
        if fault is not None and cut in _BODY_FAULTS:
            self._send_faulty(h, fault, header, body, rendered.offsets[i0 : i1 + 1], ctype)
            return
        mid = (i0 + i1) // 2
        row_start = int(rendered.offsets[mid] - rendered.offsets[i0])
        row_len = int(rendered.offsets[mid + 1] - rendered.offsets[mid]) if i1 > i0 else 2
        partial = header + body[: row_start + max(1, row_len // 2)]
        self._send_cut(h, cut, partial, len(header) + len(body), ctype)

    def _rendered(self, ds: _Dataset, params: tuple[str, ...], fmt: str) -> _Rendered:
        with self._render_lock:
            cached = ds.rendered.get((params, fmt))
            if cached is None:
                render = _render_csv if fmt == "csv" else _render_binary
                cached = render(ds, params)
                ds.rendered[(params, fmt)] = cached
            return cached

    # low-level writers -----------------------------------------------------------------

    def _json(
        self,
        h: BaseHTTPRequestHandler,
        payload: dict[str, Any],
        code: int = 1200,
        message: str | None = None,
    ) -> None:
        body = {
            "HAPI": self.version,
            "status": {"code": code, "message": message or _STATUS_TEXT[code]},
            **payload,
        }
        data = json.dumps(body).encode()
        self._send(h, _HTTP_FOR_STATUS.get(code, 500), data, "application/json")

    def _send(self, h: BaseHTTPRequestHandler, http: int, body: bytes, ctype: str) -> None:
        h.send_response(http)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        view = memoryview(body)
        for i in range(0, len(body), _WRITE_BLOCK):
            h.wfile.write(view[i : i + _WRITE_BLOCK])

    def _send_faulty(
        self,
        h: BaseHTTPRequestHandler,
        fault: _Fault,
        header: bytes,
        body: bytes,
        offsets: np.ndarray,
        ctype: str,
    ) -> None:
        """The reliability faults that act on an otherwise correct body."""
        starts = (offsets - offsets[0]).astype(int)
        rows = [body[starts[k] : starts[k + 1]] for k in range(len(starts) - 1)]
        kind = fault.kind
        if kind in ("close_rows", "close_whole"):
            sent = rows if kind == "close_whole" else rows[: max(1, len(rows) // 2)]
            h.close_connection = True
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Connection", "close")
            h.end_headers()
            h.wfile.write(header + b"".join(sent))
            h.wfile.flush()
            return
        if kind == "bad_encoding":
            junk = b"this is not gzip data" * 10
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Encoding", "gzip")
            h.send_header("Content-Length", str(len(junk)))
            h.end_headers()
            h.wfile.write(junk)
            return
        if kind in ("duplicate_rows", "contradict_rows"):
            if kind == "duplicate_rows":
                out = b"".join(r + r for r in rows)
            else:
                mid = len(rows) // 2
                fields = rows[mid].rstrip(b"\n").split(b",")
                changed = b",".join([fields[0], *(b"12345.0" for _ in fields[1:])]) + b"\n"
                out = b"".join([*rows[: mid + 1], changed, *rows[mid + 1 :]])
            self._send(h, 200, header + out, ctype)
            return
        payload = header + body
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        h.wfile.flush()
        try:
            if kind == "trickle":
                for k in range(len(payload)):
                    h.wfile.write(payload[k : k + 1])
                    h.wfile.flush()
                    if self._stopping.wait(fault.delay_s):
                        return
            else:  # stall: half the body, then silence
                h.wfile.write(payload[: len(payload) // 2])
                h.wfile.flush()
                self._stopping.wait(fault.delay_s)
        except OSError:
            return  # the client gave up, as it should

    def _send_cut(
        self, h: BaseHTTPRequestHandler, kind: str, partial: bytes, full_length: int, ctype: str
    ) -> None:
        h.close_connection = True
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Connection", "close")
        if kind == "cut_chunked":
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            for i in range(0, len(partial), 4096):
                piece = partial[i : i + 4096]
                h.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        else:
            promised = full_length if kind == "cut_stream" else len(partial)
            h.send_header("Content-Length", str(promised))
            h.end_headers()
            h.wfile.write(partial)
        h.wfile.flush()


@dataclass(frozen=True)
class _Column:
    param: dict[str, Any]
    values: np.ndarray  # (rows, components)


def _columns(ds: _Dataset, params: tuple[str, ...]) -> list[_Column]:
    by_name = {p["name"]: p for p in ds.info["parameters"][1:]}
    out: list[_Column] = []
    for name in params:
        p = by_name[name]
        block = ds.frame[ds.columns[name]]
        fill = p.get("fill")
        if p.get("type", "double") == "string":
            values = block.fillna(fill or "").to_numpy(dtype=object)
        elif p.get("type") == "integer":
            filled = block.fillna(int(float(fill)) if fill is not None else 0)
            values = filled.to_numpy(dtype=np.int64)
        else:
            filled = block.fillna(float(fill)) if fill is not None else block
            values = filled.to_numpy(dtype=np.float64)
        out.append(_Column(p, values))
    return out


def _time_strings(ds: _Dataset) -> np.ndarray:
    length = int(ds.info["parameters"][0].get("length", 24))
    if length == 18:  # day of year, as SSCWeb's server writes: 2017-192T00:00:00Z
        stamps = pd.DatetimeIndex(ds.times_ns.astype("datetime64[ns]"))
        return np.asarray(stamps.strftime("%Y-%jT%H:%M:%SZ"))
    unit = _TIME_UNIT_BY_LENGTH.get(length)
    if unit is None:
        raise ValueError(f"unsupported isotime length {length}; use 20, 24, 27 or 30")
    naive = ds.times_ns.astype("datetime64[ns]")
    return np.datetime_as_string(naive, unit=unit, timezone="UTC")


def _render_csv(ds: _Dataset, params: tuple[str, ...]) -> _Rendered:
    table: dict[str, Any] = {"time": _time_strings(ds)}
    for col in _columns(ds, params):
        for i in range(col.values.shape[1]):
            table[f"{col.param['name']}#{i}"] = col.values[:, i]
    text = pd.DataFrame(table).to_csv(header=False, index=False, lineterminator="\n")
    body = text.encode()
    starts = np.flatnonzero(np.frombuffer(body, dtype=np.uint8) == ord("\n")) + 1
    offsets = np.concatenate([[0], starts]).astype(np.int64)
    return _Rendered(body, offsets, ds.times_ns)


def _render_binary(ds: _Dataset, params: tuple[str, ...]) -> _Rendered:
    times = _time_strings(ds)
    length = int(ds.info["parameters"][0].get("length", 24))
    fields: list[tuple[str, Any, tuple[int, ...]]] = [("time", f"S{length}", ())]
    cols = _columns(ds, params)
    for col in cols:
        shape = tuple(int(s) for s in col.param.get("size", []))
        kind = col.param.get("type", "double")
        base = {"double": "<f8", "integer": "<i4"}.get(kind, f"S{col.param.get('length', 1)}")
        fields.append((col.param["name"], base, shape))
    dtype = np.dtype([(n, b, s) for n, b, s in fields])
    records = np.zeros(len(times), dtype=dtype)
    records["time"] = times.astype(dtype["time"])
    for col, (name, _, shape) in zip(cols, fields[1:], strict=True):
        records[name] = col.values.reshape((len(times), *shape))
    body = records.tobytes()
    offsets = np.arange(len(times) + 1, dtype=np.int64) * dtype.itemsize
    return _Rendered(body, offsets, ds.times_ns)


def running_hapi_server(**kwargs: Any) -> Iterator[HapiTestServer]:
    """Yield a started server, for fixtures that ``yield from`` it."""
    with HapiTestServer(**kwargs) as server:
        yield server
