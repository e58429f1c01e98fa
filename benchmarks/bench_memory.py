"""Benchmark: peak memory (RSS) of `xhelio fetch` of years of 1-second data to parquet.

A loopback HAPI server (in this process) generates AC_H3_MFI ``Magnitude`` at 1-second
cadence, in HAPI binary, for any requested range, on the fly (nothing is held: each
/data answer is produced day by day). `xhelio fetch AC_H3_MFI Magnitude --time ... --out
FILE.parquet` runs as a child process with a fresh XHELIO_HOME; its peak RSS is read
from the kernel's accounting of that child (``os.wait4``), so the server's own memory is
not counted.

The request is estimated (cadence x span x columns), cut into pieces of at most
``XHELIO_FETCH_PIECE_MB`` (64 MB by default), and each piece is fetched, cached and
appended to the parquet file before the next is asked for: peak RSS depends on the
piece size, not on the span. The stated bound: peak RSS under 1.5 GB at the default
piece size, whatever the span (``BOUND_MB``); the script exits 1 when it is exceeded.

Run: ``python benchmarks/bench_memory.py [--years 20] [--piece-mb 64]``. Twenty years is
631 million rows (about 20 GB over loopback and 5 GB of parquet); ``--years 1`` gives
the same peak in a few minutes.
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

BOUND_MB = 1536
DATASET, PARAMETER = "AC_H3_MFI", "Magnitude"
_RECORD = np.dtype([("time", "S24"), ("value", "<f8")])
_DAY = 86400


def _info() -> dict[str, Any]:
    return {
        "HAPI": "3.3",
        "status": {"code": 1200, "message": "OK"},
        "startDate": "1998-01-01T00:00:00.000Z",
        "stopDate": "2026-01-01T00:00:00.000Z",
        "cadence": "PT1S",
        "parameters": [
            {"name": "Time", "type": "isotime", "units": "UTC", "length": 24, "fill": None},
            {"name": PARAMETER, "type": "double", "units": "nT", "fill": "-1.0E31"},
        ],
    }


def _seconds(text: str) -> int:
    return int(np.datetime64(text.rstrip("Z"), "s").astype(np.int64))


def _records(first: int, count: int) -> bytes:
    seconds = np.arange(first, first + count, dtype=np.int64)
    out = np.empty(count, dtype=_RECORD)
    text = np.datetime_as_string(seconds.astype("datetime64[s]").astype("datetime64[ms]"))
    out["time"] = np.char.add(text.astype("S23"), b"Z")
    out["value"] = 5.0 + np.sin(seconds / 3600.0)
    return out.tobytes()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

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
        if endpoint == "capabilities":
            self._json({"HAPI": "3.3", "outputFormats": ["csv", "binary"]})
        elif endpoint == "info":
            self._json(_info())
        elif endpoint == "data":
            start = _seconds(query.get("start") or query["time.min"])
            stop = _seconds(query.get("stop") or query["time.max"])
            rows = max(0, stop - start)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(rows * _RECORD.itemsize))
            self.end_headers()
            for first in range(start, stop, _DAY):
                self.wfile.write(_records(first, min(_DAY, stop - first)))
        else:
            self.send_error(404)


def run(years: float, piece_mb: int) -> int:
    """Run the fetch in a child process; print and return its peak RSS in MB."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    days = math.ceil(years * 365.25)
    start = np.datetime64("1998-01-01")
    stop = start + np.timedelta64(days, "D")
    with tempfile.TemporaryDirectory(prefix="xhelio-bench-memory-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        out = Path(tmp) / "ac_h3_mfi.parquet"
        env = {
            **os.environ,
            "XHELIO_HOME": str(home),
            "XHELIO_HAPI_URL": f"http://127.0.0.1:{server.server_port}/hapi",
            "XHELIO_FETCH_PIECE_MB": str(piece_mb),
        }
        command = [
            str(Path(sys.executable).with_name("xhelio")),
            "fetch",
            DATASET,
            PARAMETER,
            "--time",
            f"{start} to {stop}",
            "--out",
            str(out),
        ]
        began = time.perf_counter()
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - began
        stderr = child.stderr.read().decode() if child.stderr else ""
        server.shutdown()
        if os.waitstatus_to_exitcode(status) != 0:
            print(stderr[-3000:], file=sys.stderr)
            raise SystemExit("xhelio fetch failed")
        import pyarrow.parquet as pq

        rows = pq.ParquetFile(out).metadata.num_rows
        size = out.stat().st_size
    peak_mb = usage.ru_maxrss / 1024  # kilobytes on Linux
    print(
        f"{years:g} years of 1-s data ({rows:,} rows, {size / 2**20:,.0f} MB parquet) in "
        f"{elapsed:.0f} s; pieces of {piece_mb} MB; peak RSS {peak_mb:,.0f} MB "
        f"(bound {BOUND_MB} MB)"
    )
    return int(peak_mb)


def main() -> None:
    """Parse arguments, run, and fail when the bound is exceeded."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=float, default=20.0)
    parser.add_argument("--piece-mb", type=int, default=64)
    args = parser.parse_args()
    peak = run(args.years, args.piece_mb)
    if peak > BOUND_MB:
        raise SystemExit(f"peak RSS {peak} MB exceeds the stated bound of {BOUND_MB} MB")


if __name__ == "__main__":
    main()
