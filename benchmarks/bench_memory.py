"""Benchmark: peak memory (RSS) of `xhelio fetch` of 20 years of data to parquet.

A loopback HAPI server (in this process) generates one scalar parameter at 1-minute
(``--cadence-s 60``, OMNI_HRO_1MIN ``BZ_GSM``, the default) or 1-second cadence (``1``,
AC_H3_MFI ``Magnitude``), in HAPI binary, for any requested range, on the fly (nothing is
held: each /data answer is produced a block at a time). `xhelio fetch DATASET PARAM --time
... --out FILE.parquet` runs as a child process with a fresh XHELIO_HOME; its peak RSS is
read from the kernel's accounting of that child (``os.wait4``), so the server's own
memory is not counted.

The request is estimated from the catalog's cadence (cadence x span x columns), cut into
pieces of at most ``XHELIO_FETCH_PIECE_MB`` (16 MB by default; ``--piece-mb`` overrides),
and each piece is fetched, cached and appended to the parquet file before the next is
asked for: peak RSS depends on the piece size, not on the span. The stated bound: peak RSS
under 400 MB at the default piece size, whatever the span (``BOUND_MB``); the script
exits 1 when it is exceeded.

The peers, measured in the same run on the same server: `hapiclient` fetching the same
span in binary and writing it to parquet with pandas (times cast straight from ISO bytes
to datetime64, the cheapest parse there is), at spans that fit (``--peer-years``); and,
with ``--against REV``, the xhelio of an earlier commit (checked out in a temporary git
worktree, with its own defaults) at the long span (``--years``, 20 by default).

Measured (2 shared cores, ~6 other jobs, 2026-11-26), 20 years of 1-minute data
(10,519,200 rows): this commit 16 MB pieces ~360 MB; 8f952fd (64 MB pieces) ~590 MB.
Piece size against peak: 64 MB 593, 16 MB 362, 8 MB 339.

Run: ``python benchmarks/bench_memory.py [--years 20] [--peer-years 0.5 2]
[--cadence-s 60] [--piece-mb N] [--against REV]``. Twenty years of 1-minute data takes
about a minute; of 1-second data (631 million rows) some 25 minutes.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from revision import checkout

BOUND_MB = 400
DATASETS = {1: ("AC_H3_MFI", "Magnitude"), 60: ("OMNI_HRO_1MIN", "BZ_GSM")}
"""A catalog dataset of each cadence (the catalog's cadence sizes the pieces)."""
_RECORD = np.dtype([("time", "S24"), ("value", "<f8")])
_DAY = 86400


def _info() -> dict[str, Any]:
    return {
        "HAPI": "3.3",
        "status": {"code": 1200, "message": "OK"},
        "startDate": "1998-01-01T00:00:00.000Z",
        "stopDate": "2026-01-01T00:00:00.000Z",
        "cadence": f"PT{_Handler.cadence_s}S",
        "parameters": [
            {"name": "Time", "type": "isotime", "units": "UTC", "length": 24, "fill": None},
            {"name": _Handler.parameter, "type": "double", "units": "nT", "fill": "-1.0E31"},
        ],
    }


def _seconds(text: str) -> int:
    return int(np.datetime64(text.rstrip("Z"), "s").astype(np.int64))


def _records(first: int, stop: int, step: int) -> bytes:
    seconds = np.arange(first, stop, step, dtype=np.int64)
    count = len(seconds)
    out = np.empty(count, dtype=_RECORD)
    text = np.datetime_as_string(seconds.astype("datetime64[s]").astype("datetime64[ms]"))
    out["time"] = np.char.add(text.astype("S23"), b"Z")
    out["value"] = 5.0 + np.sin(seconds / 3600.0)
    return out.tobytes()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    cadence_s = 60
    """Seconds between records (``--cadence-s``), on a grid aligned to the epoch."""
    dataset, parameter = DATASETS[60]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _json(self, body: dict[str, Any]) -> None:
        import json

        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        split = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(split.query))
        endpoint = split.path.rstrip("/").rsplit("/", 1)[-1]
        if endpoint == "catalog":  # hapiclient checks the dataset is listed
            self._json({"HAPI": "3.3", "catalog": [{"id": self.dataset}]})
        elif endpoint == "capabilities":
            self._json({"HAPI": "3.3", "outputFormats": ["csv", "binary"]})
        elif endpoint == "info":
            self._json(_info())
        elif endpoint == "data":
            step = self.cadence_s
            start = -(-_seconds(query.get("start") or query["time.min"]) // step) * step
            stop = _seconds(query.get("stop") or query["time.max"])
            rows = len(range(start, stop, step))
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(rows * _RECORD.itemsize))
            self.end_headers()
            block = _DAY * step
            for first in range(start, stop, block):
                self.wfile.write(_records(first, min(first + block, stop), step))
        else:
            self.send_error(404)


_PEER = """
import sys
import pandas as pd
from hapiclient import hapi

url, dataset, parameter, start, stop, cachedir, out = sys.argv[1:]
opts = {"format": "binary", "cache": False, "usecache": False, "cachedir": cachedir,
        "logging": False}
data, _meta = hapi(url, dataset, parameter, start, stop, **opts)
# The cheapest parse there is (no str copies): ISO bytes cast straight to datetime64.
times = pd.DatetimeIndex(data["Time"].astype("S23").astype("datetime64[ms]"), tz="UTC")
pd.DataFrame({parameter: data[parameter]}, index=times).to_parquet(out)
"""


class _Server:
    """The generating HAPI server on 127.0.0.1, in a thread of this process."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/hapi"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _span(years: float) -> tuple[str, str]:
    days = math.ceil(years * 365.25)
    start = np.datetime64("1998-01-01")
    return str(start), str(start + np.timedelta64(days, "D"))


def _measure(command: list[str], env: dict[str, str], out: Path) -> tuple[float, float, int]:
    """Run `command` as a child; return its peak RSS (MB), wall seconds and parquet rows."""
    began = time.perf_counter()
    # Output goes to a file, not a pipe: os.wait4 reaps the child itself (to read its
    # kernel-kept peak RSS), and a pipe nobody reads could block a chatty child.
    with tempfile.TemporaryFile() as log:
        child = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - began
        if child.returncode != 0:
            log.seek(0)
            print(log.read().decode(errors="replace")[-3000:], file=sys.stderr)
            raise SystemExit(f"{command[0]} failed")
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(out).metadata.num_rows
    return usage.ru_maxrss / 1024, elapsed, rows  # ru_maxrss is in kilobytes on Linux


def xhelio_peak(
    url: str, years: float, piece_mb: int | None, tmp: Path, src: Path | None = None
) -> tuple[float, float, int]:
    """Peak RSS (MB), seconds and rows of `xhelio fetch ... --out FILE.parquet`.

    `src`: run the xhelio package in that folder (another commit's ``src``) instead.
    """
    tag = f"{years:g}-{'this' if src is None else 'other'}"
    home = tmp / f"home-{tag}"
    home.mkdir()
    out = tmp / f"xhelio-{tag}.parquet"
    start, stop = _span(years)
    env = {
        **os.environ,
        "XHELIO_HOME": str(home),
        "XHELIO_HAPI_URL": url,
    }
    if piece_mb is not None:
        env["XHELIO_FETCH_PIECE_MB"] = str(piece_mb)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [
        str(Path(sys.executable).with_name("xhelio")),
        "fetch",
        _Handler.dataset,
        _Handler.parameter,
        "--time",
        f"{start}T00:00 to {stop}T00:00",  # a bare end date would include that day
        "--out",
        str(out),
    ]
    return _measure(command, env, out)


def peer_peak(url: str, years: float, tmp: Path) -> tuple[float, float, int]:
    """Peak RSS (MB), seconds and rows of hapiclient fetching the same span to parquet."""
    out = tmp / f"peer-{years:g}.parquet"
    start, stop = _span(years)
    cachedir = tmp / "hapiclient-cache"
    cachedir.mkdir(exist_ok=True)
    command = [
        sys.executable,
        "-c",
        _PEER,
        url,
        _Handler.dataset,
        _Handler.parameter,
        f"{start}T00:00:00Z",
        f"{stop}T00:00:00Z",
        str(cachedir),
        str(out),
    ]
    return _measure(command, dict(os.environ), out)


def _line(who: str, years: float, peak: float, seconds: float, rows: int) -> str:
    return f"{who:<11}{years:>7g}{rows:>14,}{seconds:>9.0f}{peak:>11,.0f}"


def main() -> None:
    """Measure xhelio and the peer, print a table with ratios; fail above the bound."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--years", type=float, default=20.0, help="xhelio's long span")
    parser.add_argument(
        "--peer-years",
        type=float,
        nargs="*",
        default=[0.25, 0.5],
        help="spans fetched by both xhelio and hapiclient (the peer holds all in memory)",
    )
    parser.add_argument("--piece-mb", type=int, help="XHELIO_FETCH_PIECE_MB (default: its own)")
    parser.add_argument("--cadence-s", type=int, default=60, help="seconds between records")
    parser.add_argument(
        "--against", metavar="REV", help="also run this git commit's xhelio (ratio printed)"
    )
    args = parser.parse_args()
    if args.cadence_s not in DATASETS:
        raise SystemExit(f"--cadence-s must be one of {sorted(DATASETS)}")
    _Handler.dataset, _Handler.parameter = DATASETS[args.cadence_s]
    _Handler.cadence_s = args.cadence_s
    server = _Server()
    print(f"{'client':<11}{'years':>7}{'rows':>14}{'wall s':>9}{'peak MB':>11}")
    worst = 0.0
    try:
        with (
            tempfile.TemporaryDirectory(prefix="xhelio-bench-memory-") as name,
            checkout(args.against) as other,
        ):
            tmp = Path(name)
            for years in args.peer_years:
                ours = xhelio_peak(server.url, years, args.piece_mb, tmp)
                theirs = peer_peak(server.url, years, tmp)
                assert ours[2] == theirs[2], (ours, theirs)  # same rows written by both
                print(_line("xhelio", years, *ours))
                print(_line("hapiclient", years, *theirs))
                print(f"{'':<11}xhelio/hapiclient peak RSS: {ours[0] / theirs[0]:.3f}")
                worst = max(worst, ours[0])
            if args.years > 0:
                ours = xhelio_peak(server.url, args.years, args.piece_mb, tmp)
                print(_line("xhelio", args.years, *ours))
                worst = max(worst, ours[0])
                if other is not None:
                    before = xhelio_peak(server.url, args.years, args.piece_mb, tmp, other)
                    assert before[2] == ours[2], (before, ours)
                    print(_line(str(args.against)[:11], args.years, *before))
                    print(f"{'':<11}this/{args.against} peak RSS: {ours[0] / before[0]:.3f}")
    finally:
        server.close()
    pieces = "the default" if args.piece_mb is None else f"{args.piece_mb} MB"
    print(f"stated bound: {BOUND_MB} MB peak RSS at {pieces} pieces, any span")
    if worst > BOUND_MB:
        raise SystemExit(f"peak RSS {worst:.0f} MB exceeds the stated bound of {BOUND_MB} MB")


if __name__ == "__main__":
    main()
