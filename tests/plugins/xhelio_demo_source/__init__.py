"""A complete xhelio data source in one module, registered from outside xhelio.

It is what docs/sources.md walks through: a small catalog, data computed for any time
range (no network), and a citation naming its provider. Its package metadata
(``xhelio_demo_source-0.1.dist-info/entry_points.txt``) registers it as ``demo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.errors import NoDataError, UnknownDatasetError, UnknownParameterError
from xhelio.sources.base import (
    Citation,
    DatasetHit,
    ParameterData,
    ProgressCallback,
    SourceStatus,
)
from xhelio.sources.registry import SourceSetup
from xhelio.sources.search import rank_datasets
from xhelio.timerange import TimeRange

PROVIDER = "Demo Observatory"
URL = "https://demo.example.org/data"

DATASETS = (
    DatasetInfo(
        id="DEMO_WAVE_1MIN",
        title="Demo Observatory wave amplitude and phase, 1-minute",
        mission_id="demo-sat",
        instrument="wave probe",
        start=datetime(2000, 1, 1, tzinfo=UTC),
        cadence="PT1M",
        pi_name="A. Researcher",
        doi="10.99999/demo-wave",
        parameters=(
            ParameterInfo("Time", type="isotime"),
            ParameterInfo("amplitude", units="nT", description="Wave amplitude"),
            ParameterInfo("phase", units="deg", description="Wave phase"),
        ),
    ),
    DatasetInfo(
        id="DEMO_TEMP_1H",
        title="Demo Observatory probe temperature, hourly",
        mission_id="demo-sat",
        instrument="thermometer",
        start=datetime(2000, 1, 1, tzinfo=UTC),
        cadence="PT1H",
        parameters=(
            ParameterInfo("Time", type="isotime"),
            ParameterInfo("temperature", units="K", description="Probe temperature"),
        ),
    ),
)


class DemoSource:
    """Values computed from the time itself, so every fetch of a range gives the same data."""

    def __init__(self, setup: SourceSetup) -> None:
        self.name = setup.name
        self.fetches: list[tuple[str, tuple[str, ...], TimeRange]] = []
        """Every request that reached the source (the tests check what the cache spared)."""
        self.closed = False

    def search(self, query: str, limit: int = 10, mission: str | None = None) -> list[DatasetHit]:
        """Rank the two datasets by the words of the query."""
        return rank_datasets(DATASETS, query, self.name, limit, mission)

    def info(self, dataset_id: str) -> DatasetInfo:
        """Describe one dataset."""
        for info in DATASETS:
            if info.id.upper() == dataset_id.upper():
                return info
        raise UnknownDatasetError(dataset_id, [d.id for d in DATASETS])

    def fetch(
        self,
        dataset_id: str,
        parameters: Sequence[str],
        time_range: TimeRange,
        progress: ProgressCallback | None = None,
    ) -> dict[str, ParameterData]:
        """Compute each parameter at the dataset's cadence over [start, end)."""
        info = self.info(dataset_id)
        self.fetches.append((info.id, tuple(parameters), time_range))
        step = "1min" if info.cadence == "PT1M" else "1h"
        times = pd.date_range(time_range.start, time_range.end, freq=step, inclusive="left")
        if times.empty:
            raise NoDataError(f"{info.id} has no sample in {time_range}.")
        times = times.rename("time")
        hours = (times.asi8 // 10**9) / 3600.0
        out: dict[str, ParameterData] = {}
        for name in parameters:
            param = info.parameter(name)
            if param is None or param.is_time:
                raise UnknownParameterError(info.id, name, [p.name for p in info.data_parameters])
            values = {
                "amplitude": 5 + np.sin(2 * np.pi * hours),
                "phase": (hours * 360.0) % 360.0,
                "temperature": 280 + 10 * np.cos(2 * np.pi * hours / 24),
            }[param.name]
            frame = pd.DataFrame({param.name: values}, index=times)
            out[name] = ParameterData(param.name, frame, param.units, param.description)
        return out

    def cite(self, dataset_id: str) -> Citation:
        """The Demo Observatory, with the dataset's DOI and PI."""
        info = self.info(dataset_id)
        return Citation(
            PROVIDER,
            URL,
            info.id,
            info.title,
            info.doi,
            info.pi_name,
            "Please thank the Demo Observatory.",
        )

    def status(self) -> SourceStatus:
        """Nothing remote to ask: the data is computed here."""
        return SourceStatus(PROVIDER, URL, datasets=len(DATASETS))

    def close(self) -> None:
        """Nothing to release; remembered for the tests."""
        self.closed = True
