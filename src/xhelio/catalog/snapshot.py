"""Load the offline CDAWeb snapshot shipped by the `xhelio-cdaweb` package.

The package (import name `cdawebmcp`) carries two folders of plain JSON data:
`data/observatories/*.json` (missions -> instrument groups -> datasets with title and
coverage) and `data/metadata/*.json` (one HAPI `/info` answer per dataset). Only those
files are read: the package is located with `importlib.util.find_spec`, which does not
run its code, because its Python modules may touch the network.

HAPI `/info` files are read by `catalog.hapi_info`, the one parser shared with the live
refresh and the HAPI source; this module adds the cadence guess from a dataset title.
Imports only `catalog` and `errors` from xhelio.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from xhelio.catalog import hapi_info
from xhelio.catalog.hapi_info import parse_optional_hapi_time, parse_parameters
from xhelio.catalog.model import DatasetInfo, Mission
from xhelio.errors import ConfigError

__all__ = [
    "SNAPSHOT_DISTRIBUTION",
    "Snapshot",
    "SnapshotDataset",
    "cadence_from_text",
    "dataset_from_hapi_info",
    "load_snapshot",
    "parse_hapi_time",
    "parse_parameters",
    "snapshot_version",
]

SNAPSHOT_DISTRIBUTION = "xhelio-cdaweb"
_SNAPSHOT_PACKAGE = "cdawebmcp"
_INSTALL_HINT = f"Install it with `pip install {SNAPSHOT_DISTRIBUTION}`."

# The snapshot files OMNI under Wind's magnetometer group, but CDAWeb itself lists OMNI as
# its own source (a multi-spacecraft merge); people ask for "OMNI", never "Wind OMNI".
_REGROUPED_PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("OMNI", "omni", "OMNI (combined near-Earth solar wind and indices)"),
)


@dataclass(frozen=True)
class SnapshotDataset:
    """One dataset of the snapshot, with the instrument-group keywords used for search."""

    info: DatasetInfo
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True)
class Snapshot:
    """Everything the offline snapshot knows: missions and fully described datasets."""

    version: str
    missions: tuple[Mission, ...]
    datasets: tuple[SnapshotDataset, ...]
    observatory_files: int


def _package_dir() -> Path:
    """Folder of the `cdawebmcp` package, found without importing it."""
    try:
        spec = importlib.util.find_spec(_SNAPSHOT_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        folder = Path(location)
        if (folder / "data" / "observatories").is_dir():
            return folder
    raise ConfigError(
        f"The offline CDAWeb catalog snapshot ({SNAPSHOT_DISTRIBUTION}) is not installed "
        f"or has no data files. {_INSTALL_HINT}"
    )


def snapshot_version() -> str:
    """Version of the installed snapshot package (changes whenever its data may change)."""
    try:
        return importlib.metadata.version(SNAPSHOT_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigError(
            f"The offline CDAWeb catalog snapshot ({SNAPSHOT_DISTRIBUTION}) is not installed. "
            f"{_INSTALL_HINT}"
        ) from exc


def parse_hapi_time(text: object) -> datetime | None:
    """Parse a HAPI/CDAWeb time string (any HAPI form, e.g. `1997-237`) as UTC, or None."""
    return parse_optional_hapi_time(text)


_CADENCE_UNITS: tuple[tuple[str, str, float], ...] = (
    # (regex for the unit word, ISO-8601 designator, factor applied to the number)
    (r"(?:milli-?seconds?|msecs?|ms)", "S", 0.001),
    (r"(?:micro-?seconds?|usecs?)", "S", 0.000001),
    (r"(?:seconds?|secs?)", "S", 1.0),
    (r"(?:minutes?|mins?)", "M", 1.0),
    (r"(?:hours?|hrs?|hr)", "H", 1.0),
    (r"(?:days?)", "D", 1.0),
)
_NUMBER = r"(\d+(?:\.\d+)?)"
_CADENCE_PATTERNS: tuple[tuple[re.Pattern[str], str, float], ...] = (
    *(
        (re.compile(rf"(?<![\w.]){_NUMBER}\s*-?\s*{unit}\b", re.IGNORECASE), designator, factor)
        for unit, designator, factor in _CADENCE_UNITS
    ),
    # "4s", "32s": a bare "s" only when glued to the number ("20m" may be metres, so no "m").
    (re.compile(rf"(?<![\w.]){_NUMBER}s\b"), "S", 1.0),
)
# Single letters (1H, 2D) are not accepted in ids: BARREL payloads are named that way.
_ID_CADENCE = re.compile(r"(?<!\d)(\d+)(SEC|MIN|HR|DAY)$")
_ID_UNITS = {"SEC": "S", "MIN": "M", "HR": "H", "DAY": "D"}
_WORD_CADENCES = (
    (re.compile(r"\bhourly\b", re.IGNORECASE), "PT1H"),
    (re.compile(r"\bdaily\b", re.IGNORECASE), "P1D"),
)


def _iso_duration(value: float, designator: str) -> str:
    """Format a number of units as an ISO-8601 duration (PT1M, PT0.05S, P1D)."""
    if designator == "D":
        return f"P{value:g}D"
    if designator == "S":
        text = f"{value:.6f}".rstrip("0").rstrip(".")
        return f"PT{text}S"
    return f"PT{value:g}{designator}"


def cadence_from_text(title: str, dataset_id: str = "") -> str | None:
    """Guess a dataset's cadence (ISO-8601) from its title or id, or None when not stated.

    The first explicit resolution in the title wins ("1-Hour", "64-sec", "5 min", "50ms");
    then "hourly"/"daily"; then id tokens such as `_1MIN`, `MRG1HR`, `-4SEC`.
    """
    best: tuple[int, str] | None = None
    for pattern, designator, factor in _CADENCE_PATTERNS:
        match = pattern.search(title)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), _iso_duration(float(match.group(1)) * factor, designator))
    if best is not None:
        return best[1]
    for pattern, iso in _WORD_CADENCES:
        if pattern.search(title):
            return iso
    for token in re.split(r"[_\-]", dataset_id.upper()):
        match = _ID_CADENCE.search(token)
        if match:
            return _iso_duration(float(match.group(1)), _ID_UNITS[match.group(2)])
    return None


def dataset_from_hapi_info(
    dataset_id: str,
    info: dict[str, Any],
    base: DatasetInfo | None = None,
    guess_cadence: bool = True,
) -> DatasetInfo:
    """Build a DatasetInfo from a HAPI `/info` dict (see `catalog.hapi_info`)."""
    return hapi_info.dataset_from_hapi_info(
        dataset_id, info, base, cadence_from_text if guess_cadence else None
    )


def _load_json(path: Path) -> dict[str, Any]:
    try:
        data: object = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"Snapshot file {path} cannot be read ({exc}). Reinstall it with "
            f"`pip install --force-reinstall {SNAPSHOT_DISTRIBUTION}`."
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"Snapshot file {path} is not a JSON object; reinstall the package.")
    return data  # pyright: ignore[reportUnknownVariableType]


def _regrouped(dataset_id: str) -> tuple[str, str] | None:
    for prefix, mission_id, mission_name in _REGROUPED_PREFIXES:
        if dataset_id.upper().startswith(prefix):
            return mission_id, mission_name
    return None


def load_snapshot() -> Snapshot:
    """Read every observatory and `/info` file of the snapshot into catalog records."""
    data_dir = _package_dir() / "data"
    info_dir = data_dir / "metadata"
    observatory_paths = sorted((data_dir / "observatories").glob("*.json"))
    mission_names: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    datasets: list[SnapshotDataset] = []
    for path in observatory_paths:
        observatory = _load_json(path)
        mission_id = str(observatory.get("id") or path.stem)
        mission_names[mission_id] = str(observatory.get("name") or mission_id)
        members.setdefault(mission_id, [])
        groups: dict[str, Any] = observatory.get("instruments") or {}
        for group_key, group in groups.items():
            instrument = str(group.get("name") or group_key)
            keywords = tuple(str(k) for k in group.get("keywords") or ())
            entries: dict[str, Any] = group.get("datasets") or {}
            for dataset_id, entry in entries.items():
                info_path = info_dir / f"{dataset_id}.json"
                if not info_path.is_file():
                    continue  # no /info: no parameters to offer, so not usable offline
                owner = mission_id
                regroup = _regrouped(dataset_id)
                if regroup is not None:
                    owner, name = regroup
                    mission_names.setdefault(owner, name)
                title = str(entry.get("description") or "")
                base = DatasetInfo(
                    id=dataset_id,
                    title=title,
                    mission_id=owner,
                    instrument=instrument,
                    start=parse_hapi_time(entry.get("start_date")),
                    stop=parse_hapi_time(entry.get("stop_date")),
                    cadence=cadence_from_text(title, dataset_id),
                    pi_name=entry.get("pi_name") or None,
                    doi=entry.get("doi") or None,
                )
                info = dataset_from_hapi_info(
                    dataset_id, _load_json(info_path), base, guess_cadence=False
                )
                datasets.append(SnapshotDataset(info=info, keywords=keywords))
                members.setdefault(owner, []).append(dataset_id)
    missions = tuple(
        Mission(id=mid, name=mission_names[mid], dataset_ids=tuple(sorted(ids)))
        for mid, ids in sorted(members.items())
    )
    return Snapshot(
        version=snapshot_version(),
        missions=missions,
        datasets=tuple(datasets),
        observatory_files=len(observatory_paths),
    )
