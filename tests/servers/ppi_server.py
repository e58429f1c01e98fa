"""A loopback stand-in of the PDS PPI archive, and builders of products in the real formats.

`PpiTestServer` serves a tree of files over real HTTP on 127.0.0.1: a path ending in
``/`` answers an Apache-style HTML listing of that folder (as the archive does), any
other path the file's bytes (``application/octet-stream``), 404 otherwise. Every request
is logged. `serve_html_instead` makes a path answer a web page with HTTP 200 (a
maintenance page), the archive's known failure.

`pds3_product` writes a PDS3 fixed-width ASCII table and its ODL ``.LBL`` (``^TABLE``
pointer, ``OBJECT = COLUMN`` with ``START_BYTE``/``BYTES``/``UNIT``/``MISSING_CONSTANT``);
`pds4_product` a PDS4 ``Table_Character`` and its XML label (``Field_Character`` with
``field_location``, ``unit``, ``Special_Constants``, and a DOI in
``Citation_Information``), the layouts PDS3 Standards 3.8 and the PDS4 information
model define.

Test support only; imports nothing from xhelio.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import quote, unquote, urlsplit

__all__ = ["Column", "PpiTestServer", "iso_minutes", "pds3_product", "pds4_product"]


@dataclass(frozen=True)
class Column:
    """One numeric column of a built table."""

    name: str
    values: Sequence[float]
    units: str = ""
    missing: float | None = None
    description: str = ""
    width: int = 12


def _cell(value: float, width: int) -> str:
    """A number right-aligned in `width` bytes (exponent form when it would not fit)."""
    text = f"{value:.4f}"
    return (text if len(text) <= width else f"{value:.3e}").rjust(width)


def _rows(times: Sequence[str], columns: Sequence[Column], time_width: int) -> list[str]:
    lines: list[str] = []
    for i, stamp in enumerate(times):
        cells = [f"{stamp:<{time_width}}"]
        cells += [_cell(c.values[i], c.width) for c in columns]
        lines.append(" ".join(cells) + "\r\n")
    return lines


def pds3_product(
    name: str,
    times: Sequence[str],
    columns: Sequence[Column],
    time_name: str = "SAMPLE UTC",
    data_set_id: str = "JNO-J-3-FGM-CAL-V1.0",
) -> dict[str, bytes]:
    """A PDS3 fixed-width table ``name.TAB`` and its label ``name.LBL``."""
    time_width = max(len(t) for t in times)
    lines = _rows(times, columns, time_width)
    record = len(lines[0])
    objects = [
        "  OBJECT = COLUMN",
        f'    NAME = "{time_name}"',
        "    DATA_TYPE = TIME",
        "    START_BYTE = 1",
        f"    BYTES = {time_width}",
        '    DESCRIPTION = "Sample time, UTC."',
        "  END_OBJECT = COLUMN",
    ]
    start = time_width + 2
    for column in columns:
        objects += [
            "  OBJECT = COLUMN",
            f'    NAME = "{column.name}"',
            "    DATA_TYPE = ASCII_REAL",
            f"    START_BYTE = {start}",
            f"    BYTES = {column.width}",
            f'    UNIT = "{column.units}"',
            f'    DESCRIPTION = "{column.description or column.name}"',
        ]
        if column.missing is not None:
            objects.append(f"    MISSING_CONSTANT = {column.missing}")
        objects.append("  END_OBJECT = COLUMN")
        start += column.width + 1
    label = [
        "PDS_VERSION_ID = PDS3",
        "RECORD_TYPE = FIXED_LENGTH",
        f"RECORD_BYTES = {record}",
        f"FILE_RECORDS = {len(lines)}",
        f'^TABLE = "{name}.TAB"',
        f'DATA_SET_ID = "{data_set_id}"',
        f"START_TIME = {times[0]}",
        f"STOP_TIME = {times[-1]}",
        "OBJECT = TABLE",
        "  INTERCHANGE_FORMAT = ASCII",
        f"  ROWS = {len(lines)}",
        f"  COLUMNS = {len(columns) + 1}",
        f"  ROW_BYTES = {record}",
        *objects,
        "END_OBJECT = TABLE",
        "END",
    ]
    return {
        f"{name}.LBL": ("\r\n".join(label) + "\r\n").encode("ascii"),
        f"{name}.TAB": "".join(lines).encode("ascii"),
    }


def pds4_product(
    name: str,
    lid: str,
    times: Sequence[str],
    columns: Sequence[Column],
    doi: str | None = None,
) -> dict[str, bytes]:
    """A PDS4 ``Table_Character`` ``name.tab`` and its XML label ``name.xml``."""
    time_width = max(len(t) for t in times)
    lines = _rows(times, columns, time_width)
    fields = [
        _pds4_field(1, "TIME", 1, "ASCII_Date_Time_YMD_UTC", time_width, "", None, "UTC time")
    ]
    start = time_width + 2
    for number, column in enumerate(columns, 2):
        fields.append(
            _pds4_field(
                number,
                column.name,
                start,
                "ASCII_Real",
                column.width,
                column.units,
                column.missing,
                column.description or column.name,
            )
        )
        start += column.width + 1
    citation = (
        f"<Citation_Information><publication_year>2020</publication_year><doi>{doi}</doi>"
        "<description>test</description></Citation_Information>"
        if doi
        else ""
    )
    label = f"""<?xml version="1.0" encoding="UTF-8"?>
<Product_Observational xmlns="http://pds.nasa.gov/pds4/pds/v1">
  <Identification_Area>
    <logical_identifier>{lid}:{name}</logical_identifier>
    <version_id>1.0</version_id>
    <title>{name}</title>
    <information_model_version>1.15.0.0</information_model_version>
    <product_class>Product_Observational</product_class>
    {citation}
  </Identification_Area>
  <Observation_Area>
    <Time_Coordinates>
      <start_date_time>{times[0]}</start_date_time>
      <stop_date_time>{times[-1]}</stop_date_time>
    </Time_Coordinates>
  </Observation_Area>
  <File_Area_Observational>
    <File><file_name>{name}.tab</file_name></File>
    <Table_Character>
      <offset unit="byte">0</offset>
      <records>{len(lines)}</records>
      <record_delimiter>Carriage-Return Line-Feed</record_delimiter>
      <Record_Character>
        <fields>{len(fields)}</fields>
        <groups>0</groups>
        <record_length unit="byte">{len(lines[0])}</record_length>
        {"".join(fields)}
      </Record_Character>
    </Table_Character>
  </File_Area_Observational>
</Product_Observational>
"""
    return {f"{name}.xml": label.encode(), f"{name}.tab": "".join(lines).encode("ascii")}


def _pds4_field(
    number: int,
    name: str,
    location: int,
    data_type: str,
    length: int,
    units: str,
    missing: float | None,
    description: str,
) -> str:
    unit = f"<unit>{units}</unit>" if units else ""
    special = (
        f"<Special_Constants><missing_constant>{missing}</missing_constant></Special_Constants>"
        if missing is not None
        else ""
    )
    return (
        f"<Field_Character><name>{name}</name><field_number>{number}</field_number>"
        f'<field_location unit="byte">{location}</field_location>'
        f"<data_type>{data_type}</data_type>"
        f'<field_length unit="byte">{length}</field_length>{unit}'
        f"<description>{description}</description>{special}</Field_Character>"
    )


def iso_minutes(start: datetime, count: int, step_s: int = 60, doy: bool = False) -> list[str]:
    """`count` times from `start`, `step_s` apart, as ISO (or day-of-year) strings."""
    fmt = "%Y-%jT%H:%M:%S.000" if doy else "%Y-%m-%dT%H:%M:%S.000"
    return [(start + timedelta(seconds=step_s * i)).strftime(fmt) for i in range(count)]


@dataclass
class _State:
    files: dict[str, bytes] = field(default_factory=dict[str, bytes])
    html: set[str] = field(default_factory=set[str])
    requests: list[str] = field(default_factory=list[str])
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    state: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet."""

    def do_GET(self) -> None:
        """A listing for a folder, the bytes of a file, 404 otherwise."""
        path = unquote(urlsplit(self.path).path)
        with self.state.lock:
            self.state.requests.append(path)
            files = dict(self.state.files)
            html = path in self.state.html
        if html:
            self._send(200, b"<html><body>Down for maintenance</body></html>", "text/html")
        elif path in files:
            self._send(200, files[path], "application/octet-stream")
        elif path.endswith("/") and any(p.startswith(path) for p in files):
            self._send(200, _listing(path, files).encode(), "text/html; charset=utf-8")
        else:
            self._send(404, b"<html><body>404 Not Found</body></html>", "text/html")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _listing(folder: str, files: dict[str, bytes]) -> str:
    """An Apache-style index of `folder`: its sub-folders and files, with the usual links."""
    names: set[str] = set()
    for path in files:
        if path.startswith(folder):
            rest = path[len(folder) :]
            names.add(rest.split("/", 1)[0] + "/" if "/" in rest else rest)
    links = "".join(f'<tr><td><a href="{quote(n)}">{n}</a></td></tr>\n' for n in sorted(names))
    return (
        f"<html><head><title>Index of {folder}</title></head><body><h1>Index of {folder}</h1>"
        '<table><tr><th><a href="?C=N;O=D">Name</a></th></tr>'
        f'<tr><td><a href="{folder.rstrip("/").rsplit("/", 1)[0]}/">Parent Directory</a></td></tr>'
        f"{links}</table></body></html>"
    )


class PpiTestServer:
    """The PPI archive on 127.0.0.1 for tests; use as a context manager."""

    def __init__(self) -> None:
        self._state = _State()
        handler = type("PpiHandler", (_Handler,), {"state": self._state})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        """The archive's address, to use as ``XHELIO_PDS_URL``."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def add(self, folder: str, files: dict[str, bytes]) -> None:
        """Serve `files` (name -> bytes) in `folder` (e.g. ``/data/X/DATA/2016``)."""
        with self._state.lock:
            for name, body in files.items():
                self._state.files[f"/{folder.strip('/')}/{name}"] = body

    def serve_html_instead(self, path: str) -> None:
        """Make `path` answer a web page with HTTP 200."""
        with self._state.lock:
            self._state.html.add(path)

    @property
    def requests(self) -> list[str]:
        """Every path asked so far, in order."""
        with self._state.lock:
            return list(self._state.requests)

    def __enter__(self) -> PpiTestServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def catalog_day(
    slot: str, dataset_id: str, fields: Sequence[str], day: datetime, rows: int = 1440
) -> tuple[str, dict[str, bytes]]:
    """One day of products for any catalog dataset, in its own format (PDS3 or PDS4).

    Returns the folder (the dataset's slot, then the year) and the files. Field k holds
    ``k + row/1000``, so values can be checked; the cadence is one minute.
    """
    count = min(rows, 1440)
    columns = [
        Column(name, [k + i / 1000 for i in range(count)], "nT", width=14)
        for k, name in enumerate(fields, 1)
    ]
    name = f"{day:%Y%m%d}_test"
    if dataset_id.startswith("pds3:"):
        files = pds3_product(name.upper(), iso_minutes(day, count, doy=True), columns)
    else:
        lid = ":".join(dataset_id.split(":")[:5])
        files = pds4_product(name, lid, [t + "Z" for t in iso_minutes(day, count)], columns)
    return f"{slot}/{day:%Y}", files
