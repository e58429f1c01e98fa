"""The catalog, no session and no LLM: search, missions, a mission's datasets, a dataset."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from xhelio.server.deps import ServerState, server_state
from xhelio.sources.registry import registrations
from xhelio.tools.discovery import dataset_summary, parameter_summary, search_results
from xhelio.tools.funnel import sanitize

__all__ = ["router"]

router = APIRouter(prefix="/catalog", tags=["catalog"])
State = Annotated[ServerState, Depends(server_state)]


@router.get("/search")
def search(
    state: State,
    q: Annotated[str, Query(min_length=1, max_length=500)],
    mission: Annotated[str | None, Query(max_length=100)] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> dict[str, Any]:
    """Datasets of every data source matching words (mission, instrument, quantity, units)."""
    return search_results(state.assistant.services.search(q, limit=limit, mission=mission))


@router.get("/sources")
def sources(state: State) -> dict[str, Any]:
    """The registered data sources (HAPI, CDF, plugins), the default first named."""
    settings = state.assistant.settings
    return {
        "default": settings.default_source,
        "sources": [
            {"name": r.name, "usable": r.usable, "problem": r.problem}
            for r in registrations(settings)
        ],
    }


@router.get("/missions")
def missions(state: State) -> dict[str, Any]:
    """Every mission with its aliases and number of datasets."""
    return {
        "missions": [
            {"id": m.id, "name": m.name, "aliases": list(m.aliases), "datasets": len(m.dataset_ids)}
            for m in state.catalog.missions()
        ]
    }


@router.get("/missions/{mission}/datasets")
def mission_datasets(mission: str, state: State) -> dict[str, Any]:
    """A mission's science datasets with coverage and cadence."""
    datasets = [dataset_summary(d) for d in state.catalog.browse(mission)]
    return {"mission": mission, "datasets": sanitize(datasets)}


@router.get("/datasets/{dataset_id}")
def dataset(dataset_id: str, state: State) -> dict[str, Any]:
    """A dataset with coverage, cadence and its parameters (type, units, description)."""
    info = state.catalog.dataset(dataset_id)
    return sanitize(
        {
            **dataset_summary(info),
            "parameters": [parameter_summary(p) for p in info.data_parameters],
        }
    )
