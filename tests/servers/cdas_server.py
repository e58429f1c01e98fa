"""A loopback CDAS REST server serving real CDF files, with fault injection.

`CdasTestServer` answers the two CDAS-REST calls xhelio makes, over real HTTP on
127.0.0.1 (stdlib `ThreadingHTTPServer` in a thread):

* ``GET {url}/dataviews/sp_phys/datasets?idPattern=RE``: DatasetDescription entries.
* ``GET {url}/dataviews/sp_phys/datasets/{ID}/orig_data/{start},{end}``: the
  FileDescription list of files whose [StartTime, EndTime) overlaps the request.

Files registered with `add_file` are served byte for byte under ``/files/...``. Every
request is logged in `requests`. Faults (HTTP errors, a file cut short, a slow answer)
are queued per target and consumed one request at a time, so a test can check both the
failure and that the next request works. `write_istp_cdf` writes small ISTP-style CDF
files with cdflib's writer for cases the real files do not cover.

Test support only; imports nothing from xhelio.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

import numpy as np
import numpy.typing as npt
from cdflib.cdfwrite import CDF as CdfWriter

__all__ = ["CdasTestServer", "Fault", "RecordedRequest", "ServedFile", "write_istp_cdf"]

API_PREFIX = "/WS/cdasr/1"
_LISTING = re.compile(
    rf"^{API_PREFIX}/dataviews/sp_phys/datasets/(?P<id>[^/]+)/orig_data/"
    r"(?P<start>\d{8}T\d{6}Z),(?P<end>\d{8}T\d{6}Z)$"
)
_DESCRIPTIONS = f"{API_PREFIX}/dataviews/sp_phys/datasets"


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    path: str
    headers: dict[str, str]


@dataclass(frozen=True)
class ServedFile:
    """A CDF file the server lists and serves."""

    dataset_id: str
    path: Path
    start: datetime
    end: datetime
    url_path: str
    last_modified: str
    length: int


@dataclass
class Fault:
    """One injected misbehaviour for the next matching request.

    Attributes:
        status: answer with this HTTP status and a CDAS-style error body.
        delay_s: wait this long before answering.
        served_bytes: send only this many bytes of a file.
        close_early: with `served_bytes`, still promise the full Content-Length and drop
            the connection (a cut stream); otherwise send an honest, short response.
    """

    status: int | None = None
    delay_s: float = 0.0
    served_bytes: int | None = None
    close_early: bool = False
    body: bytes | None = None
    """Send this instead of the file (e.g. an HTML maintenance page), with HTTP 200."""
    content_type: str | None = None
    retry_after: str | None = None
    """With `status`, a Retry-After header (for 429)."""


@dataclass
class _State:
    files: list[ServedFile] = field(default_factory=list[ServedFile])
    datasets: dict[str, str] = field(default_factory=dict[str, str])
    stops: dict[str, datetime] = field(default_factory=dict[str, datetime])
    """Coverage ends announced by the descriptions (default: the last file's end)."""
    requests: list[RecordedRequest] = field(default_factory=list[RecordedRequest])
    faults: dict[str, list[Fault]] = field(default_factory=dict[str, list[Fault]])
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def _cdas_time(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _parse_compact(text: str) -> datetime:
    return datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)


class _Handler(BaseHTTPRequestHandler):
    state: _State
    base_url: str
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        """Route one GET request, applying any queued fault first."""
        path = unquote(urlsplit(self.path).path)
        with self.state.lock:
            self.state.requests.append(RecordedRequest(self.path, dict(self.headers.items())))
        target = self._target(path)
        fault = self._take_fault(target)
        if fault is not None and fault.delay_s and self.state.stopping.wait(fault.delay_s):
            return
        try:
            if fault is not None and fault.status is not None:
                self._send_error(fault.status, f"Injected failure for {target}", fault.retry_after)
            elif path.startswith("/files/"):
                self._serve_file(path, fault)
            elif path == _DESCRIPTIONS:
                self._serve_descriptions()
            elif (match := _LISTING.match(path)) is not None:
                self._serve_listing(match["id"], match["start"], match["end"])
            else:
                self._send_error(404, f"No such resource: {path}")
        except (BrokenPipeError, ConnectionResetError):
            return  # the client gave up (e.g. timed out); nothing left to answer

    def _target(self, path: str) -> str:
        if path.startswith("/files/"):
            return path
        if (match := _LISTING.match(path)) is not None:
            return f"listing:{match['id']}"
        return "descriptions" if path == _DESCRIPTIONS else path

    def _take_fault(self, target: str) -> Fault | None:
        with self.state.lock:
            queue = self.state.faults.get(target) or self.state.faults.get("*")
            return queue.pop(0) if queue else None

    def _send_json(self, status: int, body: object, retry_after: str | None = None) -> None:
        payload = json.dumps(body).encode()
        self.send_response(status)
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_error(self, status: int, message: str, retry_after: str | None = None) -> None:
        # CDAS answers errors with Message/Error arrays (and the same text in headers).
        body = {"Message": [], "Warning": [], "Status": [], "Error": [message]}
        self._send_json(status, body, retry_after)

    def _serve_listing(self, dataset_id: str, start_text: str, end_text: str) -> None:
        with self.state.lock:
            known = dataset_id in self.state.datasets
            files = [f for f in self.state.files if f.dataset_id == dataset_id]
        if not known:
            self._send_error(404, f"Bad Request: unknown dataset id {dataset_id}.")
            return
        start, end = _parse_compact(start_text), _parse_compact(end_text)
        overlapping = [f for f in files if f.start < end and f.end > start]
        if not overlapping:
            self._send_json(200, {})
            return
        self._send_json(
            200,
            {
                "FileDescription": [
                    {
                        "Name": f"{self.base_url}{f.url_path}",
                        "MimeType": "application/x-cdf",
                        "StartTime": _cdas_time(f.start),
                        "EndTime": _cdas_time(f.end),
                        "Length": f.length,
                        "LastModified": f.last_modified,
                    }
                    for f in overlapping  # in the order added, to test clients
                ]
            },
        )

    def _serve_descriptions(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        pattern = re.compile(query.get("idPattern", [".*"])[0])
        with self.state.lock:
            datasets = dict(self.state.datasets)
            files = list(self.state.files)
        entries: list[dict[str, Any]] = []
        for dataset_id, label in sorted(datasets.items()):
            if not pattern.fullmatch(dataset_id):
                continue
            mine = [f for f in files if f.dataset_id == dataset_id]
            entry: dict[str, Any] = {"Id": dataset_id, "Label": label, "PiName": "Test PI"}
            if mine:
                stop = self.state.stops.get(dataset_id) or max(f.end for f in mine)
                entry["TimeInterval"] = {
                    "Start": _cdas_time(min(f.start for f in mine)),
                    "End": _cdas_time(stop),
                }
            entries.append(entry)
        self._send_json(200, {"DatasetDescription": entries} if entries else {})

    def _serve_file(self, path: str, fault: Fault | None) -> None:
        with self.state.lock:
            served = next((f for f in self.state.files if f.url_path == path), None)
        if served is None:
            self._send_error(404, f"No such file: {path}")
            return
        data = served.path.read_bytes()
        if fault is not None and fault.body is not None:
            data = fault.body
        body = data
        promised = len(data)
        if fault is not None and fault.served_bytes is not None:
            body = data[: fault.served_bytes]
            promised = len(data) if fault.close_early else len(body)
        self.send_response(200)
        ctype = fault.content_type if fault is not None and fault.content_type else None
        self.send_header("Content-Type", ctype or "application/x-cdf")
        self.send_header("Content-Length", str(promised))
        if promised != len(body):
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)


class CdasTestServer:
    """A CDAS-REST server on 127.0.0.1 for tests; use as a context manager."""

    def __init__(self) -> None:
        self._state = _State()
        handler = type("CdasHandler", (_Handler,), {"state": self._state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self.base_url = f"http://{host!s}:{port}"
        handler.base_url = self.base_url
        # A short poll interval keeps shutdown (once per test) quick.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The CDAS REST base URL, to use as `Settings.cdas_url`."""
        return f"{self.base_url}{API_PREFIX}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    def file_requests(self, name: str | None = None) -> list[RecordedRequest]:
        """Requests for served files (only those ending in `name`, when given)."""
        return [
            r
            for r in self.requests
            if r.path.startswith("/files/") and (name is None or r.path.endswith(name))
        ]

    def add_dataset(self, dataset_id: str, label: str = "", stop: datetime | None = None) -> None:
        """Make `dataset_id` known (it lists no files until some are added).

        `stop` is the coverage end its description announces (default: its last file's
        end), so a listing can lack files the dataset's coverage promises.
        """
        with self._state.lock:
            self._state.datasets.setdefault(dataset_id, label or f"{dataset_id} test dataset")
            if stop is not None:
                self._state.stops[dataset_id] = stop

    def add_file(
        self,
        dataset_id: str,
        path: Path,
        start: datetime,
        end: datetime,
        last_modified: str = "2024-01-01T00:00:00.000Z",
    ) -> str:
        """Serve `path` as a file of `dataset_id` covering [start, end); return its URL."""
        self.add_dataset(dataset_id)
        url_path = f"/files/{quote(dataset_id)}/{quote(path.name)}"
        served = ServedFile(
            dataset_id=dataset_id,
            path=path,
            start=start.astimezone(UTC) if start.tzinfo else start.replace(tzinfo=UTC),
            end=end.astimezone(UTC) if end.tzinfo else end.replace(tzinfo=UTC),
            url_path=url_path,
            last_modified=last_modified,
            length=path.stat().st_size,
        )
        with self._state.lock:
            self._state.files = [f for f in self._state.files if f.url_path != url_path]
            self._state.files.append(served)
        return f"{self.base_url}{url_path}"

    def inject(self, target: str, fault: Fault, count: int = 1) -> None:
        """Queue `fault` for the next `count` requests to `target`.

        `target` is ``listing:<ID>``, ``descriptions``, a file name (``x.cdf``) or ``*``.
        """
        with self._state.lock:
            if target.endswith(".cdf"):
                matches = [f.url_path for f in self._state.files if f.path.name == target]
                if not matches:
                    raise ValueError(f"no served file named {target}")
                target = matches[0]
            self._state.faults.setdefault(target, []).extend(
                Fault(**vars(fault)) for _ in range(count)
            )

    def clear_faults(self) -> None:
        """Drop every fault not yet consumed."""
        with self._state.lock:
            self._state.faults.clear()

    def __enter__(self) -> CdasTestServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._state.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@dataclass(frozen=True)
class CdfVariable:
    """One variable for `write_istp_cdf`: name, CDF type code, data and attributes."""

    name: str
    data_type: int
    data: Any
    attrs: Mapping[str, Any] = field(default_factory=dict[str, Any])
    record_varying: bool = True
    char_length: int = 1


class _PairedEpoch16Writer(CdfWriter):
    """cdflib 1.3.16's writer turns an EPOCH16 array into two records per value.

    It flattens each value to [seconds, picoseconds] and then stores every float as a
    record of its own; here the pairs are written back as one 16-byte value each.
    """

    def _numpy_to_bytes(
        self, data_type: int, num_values: int, num_elems: int, indata: npt.NDArray[Any]
    ) -> tuple[int, bytes]:
        if data_type != self.CDF_EPOCH16:
            return super()._numpy_to_bytes(data_type, num_values, num_elems, indata)
        halves = np.asarray(indata, dtype=np.float64).ravel()
        swap = self._convert_option() in {"<", ">"}  # "=" means the file uses host order
        encoded = halves.byteswap() if swap else halves
        return halves.size // (2 * num_values), encoded.tobytes()


def write_istp_cdf(path: Path, variables: Sequence[CdfVariable]) -> Path:
    """Write an uncompressed CDF with the given zVariables (ISTP attributes as given)."""
    path.unlink(missing_ok=True)
    writer = _PairedEpoch16Writer(path)
    writer.write_globalattrs({"Project": {0: "xhelio tests"}})
    for var in variables:
        data = var.data
        if isinstance(data, np.ndarray):
            dims = list(data.shape[1:]) if var.record_varying else list(data.shape)
        else:
            dims = [len(data)] if not var.record_varying else []
        spec = {
            "Variable": var.name,
            "Data_Type": var.data_type,
            "Num_Elements": var.char_length,
            "Rec_Vary": var.record_varying,
            "Dim_Sizes": dims,
            "Compress": 0,
        }
        writer.write_var(spec, var_attrs=dict(var.attrs), var_data=data)
    writer.close()
    return path
