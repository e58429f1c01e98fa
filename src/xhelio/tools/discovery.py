"""Discovery tools: search the catalog, list missions, datasets, parameters, coverage."""

from __future__ import annotations

from typing import Any

from xhelio.catalog.model import DatasetInfo, ParameterInfo
from xhelio.language.grounding import order_parameters
from xhelio.sources.registry import SourceName
from xhelio.sources.search import SearchResults
from xhelio.timerange import format_time
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import tool
from xhelio.tools.results import DatasetSummary, ParameterList
from xhelio.tools.unknown_ids import nearest_ids_named

__all__ = ["DISCOVERY_TOOLS", "dataset_summary", "parameter_summary", "search_results"]


def parameter_summary(p: ParameterInfo) -> dict[str, Any]:
    """A parameter as a small JSON record."""
    return {
        "name": p.name,
        "type": p.type,
        "units": p.units,
        "size": list(p.size) if p.size else None,
        "description": p.description,
    }


def dataset_summary(info: DatasetInfo) -> dict[str, Any]:
    """A dataset without its parameters."""
    return {
        "id": info.id,
        "title": info.title,
        "mission": info.mission_id,
        "instrument": info.instrument,
        "start": format_time(info.start) if info.start else None,
        "stop": format_time(info.stop) if info.stop else None,
        "cadence": info.cadence,
    }


@tool("discovery")
def search_datasets(
    ctx: ToolContext, query: str, mission: str | None = None, limit: int = 10
) -> dict[str, Any]:
    """Search the datasets of every data source by words (mission, instrument, quantity, units).

    Each result names the source that serves it: pass it to fetch_data as `source`.

    Args:
        query: Words such as 'ACE magnetic field' or 'solar wind speed OMNI'.
        mission: Restrict to one mission (name or alias).
        limit: Maximum results (1-50).
    """
    return search_results(ctx.search(query, max(1, min(limit, 50)), mission))


def search_results(found: SearchResults) -> dict[str, Any]:
    """Search hits, tagged with their source, as the tool and the REST route return them."""
    results: list[dict[str, Any]] = []
    for h in found.hits:
        also = {"also_from": list(h.also_from)} if h.also_from else {}
        results.append(
            {
                "dataset_id": h.dataset_id,
                "title": h.title,
                "mission": h.mission_id,
                "parameters": list(h.parameters),
                "source": h.source,
                **also,
            }
        )
    return {"results": results, **({"notes": found.notes} if found.notes else {})}


def _described(ctx: ToolContext, dataset_id: str, source: str | None) -> DatasetInfo:
    """The dataset as its source describes it (the catalog index when no source is named)."""
    if source is None:
        return ctx.catalog.dataset(dataset_id)
    with nearest_ids_named(ctx.catalog):
        return ctx.shared.source(source).info(dataset_id)


@tool("discovery", result=ParameterList)
def list_parameters(
    ctx: ToolContext,
    dataset_id: str,
    source: SourceName | None = None,
    about: str | None = None,
) -> dict[str, Any]:
    """List a dataset's parameters with type, units and size.

    Args:
        dataset_id: Dataset id, e.g. AC_H2_MFI.
        source: The data source of the dataset (the 'source' of a search result); default:
            the CDAWeb catalog.
        about: Words naming the quantity wanted (e.g. 'Fe flux', '47-68 keV ions'): the
            parameters whose names, descriptions and units say them come first, a
            parameter of another species than one named after them.
    """
    info = _described(ctx, dataset_id, source)
    params = order_parameters(info, about) if about else list(info.data_parameters)
    return {
        **dataset_summary(info),
        "parameters": [parameter_summary(p) for p in params],
    }


@tool("discovery", result=DatasetSummary)
def get_data_availability(
    ctx: ToolContext, dataset_id: str, source: SourceName | None = None
) -> dict[str, Any]:
    """Return the time range a dataset covers.

    Args:
        dataset_id: Dataset id, e.g. AC_H2_MFI.
        source: The data source of the dataset (the 'source' of a search result); default:
            the CDAWeb catalog.
    """
    info = _described(ctx, dataset_id, source)
    return {"dataset_id": info.id, **dataset_summary(info)}


@tool("discovery")
def browse_datasets(ctx: ToolContext, mission: str) -> dict[str, Any]:
    """List a mission's science datasets (calibration, housekeeping, ephemeris excluded).

    Args:
        mission: Mission name or alias, e.g. 'ACE', 'PSP', 'Solar Orbiter'.
    """
    return {"datasets": [dataset_summary(d) for d in ctx.catalog.browse(mission)]}


@tool("discovery")
def list_missions(ctx: ToolContext) -> dict[str, Any]:
    """List the missions in the catalog with their aliases and dataset counts."""
    return {
        "missions": [
            {"id": m.id, "name": m.name, "aliases": list(m.aliases), "datasets": len(m.dataset_ids)}
            for m in ctx.catalog.missions()
        ]
    }


DISCOVERY_TOOLS = [
    search_datasets,
    list_parameters,
    get_data_availability,
    browse_datasets,
    list_missions,
]
