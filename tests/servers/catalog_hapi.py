"""A loopback HAPI server that serves synthetic data for ANY dataset of the catalog snapshot.

`CatalogHapiServer` extends `HapiTestServer`: the first /info or /data request for a
dataset id it does not have builds the dataset from the snapshot's own HAPI /info file
(the JSON shipped in the `xhelio-cdaweb` package, read directly, not through xhelio),
and each /data request regenerates smooth synthetic values covering the requested
window (at the dataset's cadence, thinned to at most `max_rows` rows). So whatever
dataset and parameter the offline resolver picks is served, and tests can check the
choice rather than stage it.

Test knobs: `nan_datasets` (ids whose values are all fill), `empty_datasets` (ids that
answer 1201 no data), plus every fault of `HapiTestServer.fail_next`. `served` lists the
dataset ids that received /data requests, in order.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from servers.hapi_server import (
    HapiTestServer,
    _Dataset,  # pyright: ignore[reportPrivateUsage]
    _HapiError,  # pyright: ignore[reportPrivateUsage]
    _parse_time,  # pyright: ignore[reportPrivateUsage]
    parse_duration_seconds,
    synthetic_frame,
)

__all__ = ["CatalogHapiServer"]


def _metadata_dir() -> Path:
    spec = importlib.util.find_spec("cdawebmcp")
    assert spec is not None and spec.submodule_search_locations, "xhelio-cdaweb missing"
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "metadata"


def _components(param: dict[str, Any]) -> int:
    return int(np.prod(param.get("size") or [1]))


class CatalogHapiServer(HapiTestServer):
    """Serves every snapshot dataset with deterministic synthetic values."""

    def __init__(self, max_rows: int = 5000, **kwargs: Any) -> None:
        super().__init__(version="2.0", formats=("csv",), **kwargs)
        self.max_rows = max_rows
        self.nan_datasets: set[str] = set()
        self.empty_datasets: set[str] = set()
        self.served: list[str] = []
        self._folder = _metadata_dir()
        self._windows: dict[str, tuple[pd.Timestamp, pd.Timestamp]] = {}

    def _snapshot_info(self, dataset_id: str) -> dict[str, Any]:
        path = self._folder / f"{dataset_id}.json"
        if not re.fullmatch(r"[A-Za-z0-9_\-]+", dataset_id) or not path.is_file():
            raise _HapiError(1406, repr(dataset_id))
        info: dict[str, Any] = json.loads(path.read_text())
        info["startDate"] = "1960-01-01T00:00:00.000Z"
        info["stopDate"] = "2030-01-01T00:00:00.000Z"
        # Serve only numeric parameters of sensible size; strings and huge waveforms
        # are not what the offline mode fetches.
        params = [info["parameters"][0]] + [
            p
            for p in info["parameters"][1:]
            if p.get("type", "double") in ("double", "integer") and _components(p) <= 4096
        ]
        for p in params[1:]:
            p["type"] = "double"
        info["parameters"] = params
        return info

    def _dataset(self, query: dict[str, str]) -> tuple[str, _Dataset]:
        dataset_id = query.get("id") or query.get("dataset") or ""
        start_text = query.get("time.min") or query.get("start")
        stop_text = query.get("time.max") or query.get("stop")
        if start_text and stop_text:
            self.served.append(dataset_id)
            if dataset_id in self.empty_datasets:
                raise _HapiError(1201, "no data (injected)")
            self._register(dataset_id, _parse_time(start_text), _parse_time(stop_text))
        elif dataset_id not in self._windows:
            now = pd.Timestamp("2000-01-01", tz="UTC")
            self._register(dataset_id, now, now + pd.Timedelta(hours=1))
        return super()._dataset(query)

    def _register(self, dataset_id: str, start: pd.Timestamp, stop: pd.Timestamp) -> None:
        if self._windows.get(dataset_id) == (start, stop):
            return
        info = self._snapshot_info(dataset_id)
        cadence = info.get("cadence")
        step = parse_duration_seconds(cadence) if cadence else 60.0
        span = (stop - start).total_seconds()
        step = max(step, span / self.max_rows, 1.0)
        columns = [
            f"{p['name']}#{i}" for p in info["parameters"][1:] for i in range(_components(p))
        ]
        iso = f"PT{step:.3f}S"
        frame = synthetic_frame(start.isoformat(), stop.isoformat(), iso, columns)
        frame = frame + 5.0  # positive values, so log axes and ratios behave
        if dataset_id in self.nan_datasets:
            frame[:] = np.nan
        self.add_dataset(dataset_id, info, frame)
        self._windows[dataset_id] = (start, stop)
