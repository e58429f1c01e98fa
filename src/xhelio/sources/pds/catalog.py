"""The PDS PPI catalog: the mission and dataset descriptions the `xhelio-pds` package ships.

`xhelio-pds` (module ``pdsmcp``, the ``planetary`` extra) carries, as JSON data, the
datasets of 17 missions of NASA's Planetary Plasma Interactions node: each dataset's id
(a PDS4 collection URN ``urn:nasa:pds:BUNDLE:COLLECTION`` or a PDS3 data set id written
``pds3:DATA_SET_ID[:FOLDER]``), title, coverage, instrument, the folder ("slot") of the
archive holding its products, and for about 700 of them the fields of their tables.
Only that data is read here (the package's own code, which fetches with `requests`
outside xhelio's HTTP client, cache and cancellation, is never imported).

A PDS3 id names its targets (``JNO-J-3-FGM-CAL`` is Juno at Jupiter): the codes are
spelled out for the search, so "Juno magnetometer Jupiter" finds it. A PDS3 data set
listed both whole and as its DATA folder appears once (the DATA folder: the products).

Imports `catalog.model` and `errors` only; nothing of the network.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.errors import ConfigError

__all__ = ["PdsCatalog", "PdsDataset", "load_catalog", "target_words"]

_PACKAGE = "pdsmcp"
INSTALL_HINT = "pip install 'xhelio[planetary]' (it brings the xhelio-pds catalog)"

# The target codes of PDS3 data set ids (PDS3 Standards, data set id formation).
_TARGET_CODES = {
    "A": "asteroid",
    "C": "comet",
    "CAL": "calibration",
    "D": "dust",
    "E": "Earth",
    "J": "Jupiter",
    "L": "Moon lunar",
    "M": "Mars",
    "N": "Neptune",
    "P": "Pluto",
    "S": "Saturn",
    "SA": "satellite",
    "SS": "solar system",
    "SW": "solar wind",
    "U": "Uranus",
    "V": "Venus",
    "X": "other",
    "Y": "Mercury",
    "H": "Mercury",
}


@dataclass(frozen=True)
class PdsDataset:
    """One dataset: its description, the archive folder of its products, its search words."""

    info: DatasetInfo
    slot: str
    """The archive path of its products, e.g. ``/data/JNO-J-3-FGM-CAL-V1.0/DATA``."""
    words: str
    """Extra words it is found by: instrument keywords, targets, the mission's name."""

    @property
    def pds_version(self) -> int:
        """3 for a PDS3 data set, 4 for a PDS4 collection."""
        return 3 if self.info.id.startswith("pds3:") else 4

    @property
    def bundle(self) -> str:
        """The PDS4 bundle or PDS3 data set id the dataset belongs to (for citations)."""
        parts = self.info.id.split(":")
        return parts[1] if self.pds_version == 3 else ":".join(parts[:4])


@dataclass(frozen=True)
class PdsCatalog:
    """Every dataset of the shipped catalog, by id."""

    datasets: dict[str, PdsDataset]

    def get(self, dataset_id: str) -> PdsDataset | None:
        """The dataset called `dataset_id` (exact, else case-insensitive), or None."""
        found = self.datasets.get(dataset_id)
        if found is not None:
            return found
        lowered = dataset_id.lower()
        return next((d for k, d in self.datasets.items() if k.lower() == lowered), None)

    @property
    def missions(self) -> list[str]:
        """The mission ids, sorted."""
        return sorted({d.info.mission_id or "" for d in self.datasets.values()} - {""})

    def mission_datasets(self, mission_id: str) -> list[DatasetInfo]:
        """The datasets of a mission (its id, any case), those with known fields first."""
        wanted = mission_id.strip().upper()
        found = [d.info for d in self.datasets.values() if d.info.mission_id == wanted]
        return sorted(found, key=lambda info: (not info.data_parameters, info.id))


def target_words(dataset_id: str) -> str:
    """The targets a PDS3 data set id names, as words ("" for a PDS4 URN)."""
    if not dataset_id.startswith("pds3:"):
        return ""
    fields = dataset_id.split(":")[1].split("-")
    codes = fields[1].split("/") if len(fields) > 1 else []
    return " ".join(_TARGET_CODES[c] for c in codes if c in _TARGET_CODES)


def _data_folder() -> Path:
    """The folder of the package data (found without importing the package's code)."""
    spec = importlib.util.find_spec(_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ConfigError(f"The PDS PPI catalog is not installed: {INSTALL_HINT}.")
    return Path(locations[0]) / "data"


@functools.cache
def load_catalog() -> PdsCatalog:
    """Read the shipped catalog once per process.

    Raises:
        ConfigError: xhelio-pds is not installed, or its data cannot be read.
    """
    folder = _data_folder()
    datasets: dict[str, PdsDataset] = {}
    try:
        for path in sorted((folder / "missions").glob("*.json")):
            _add_mission(json.loads(path.read_text(encoding="utf-8")), folder, datasets)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(
            f"The PDS PPI catalog in {folder} cannot be read ({exc}); reinstall it: {INSTALL_HINT}."
        ) from exc
    for dataset_id in [k for k in datasets if k + ":DATA" in datasets]:
        del datasets[dataset_id]  # the same data set listed whole and as its DATA folder
    return PdsCatalog(datasets)


def _mission_name(mission: dict[str, Any]) -> str:
    return str(mission["name"]).removesuffix(" (PDS PPI)").strip()


def _add_mission(mission: dict[str, Any], folder: Path, out: dict[str, PdsDataset]) -> None:
    name = _mission_name(mission)
    mission_id = str(mission["id"]).removesuffix("_PPI")
    mission_words = " ".join([name, *map(str, mission.get("keywords") or [])])
    for instrument in (mission.get("instruments") or {}).values():
        label = str(instrument.get("name") or "")
        keywords = " ".join(map(str, instrument.get("keywords") or []))
        for dataset_id, entry in (instrument.get("datasets") or {}).items():
            info = DatasetInfo(
                id=str(dataset_id),
                title=str(entry.get("description") or dataset_id),
                mission_id=mission_id,
                instrument=label or None,
                start=_day(entry.get("start_date")),
                stop=_day(entry.get("stop_date")),
                parameters=_parameters(folder, str(dataset_id)),
            )
            words = f"{mission_words} {label} {keywords} {target_words(info.id)}"
            out[info.id] = PdsDataset(info, str(entry.get("slot") or ""), words)


def _day(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value).replace(tzinfo=UTC)
    except ValueError:
        return None


def _parameters(folder: Path, dataset_id: str) -> tuple[ParameterInfo, ...]:
    """The fields the package recorded for a dataset (none when it has not)."""
    path = folder / "metadata" / (dataset_id.replace(":", "_").replace("/", "_") + ".json")
    try:
        body: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    out: list[ParameterInfo] = []
    for raw in body.get("parameters") or []:
        if not isinstance(raw, dict) or not raw.get("name"):
            continue
        is_time = raw.get("type") == "isotime"
        units = " ".join(str(raw.get("units") or "").split())
        out.append(
            ParameterInfo(
                name=str(raw["name"]),
                type="isotime" if is_time else "double",
                units="" if units.upper() == "N/A" else units,
                fill=None if raw.get("fill") is None else str(raw["fill"]),
                description=" ".join(str(raw.get("description") or "").split()),
            )
        )
    return tuple(out)
