"""Turn fetched `ParameterData` into a DataStore entry that keeps the data's meaning.

Scalars and vectors stay DataFrames (one column per component, labelled). Anything with
bins or several dimensions becomes an `xarray.DataArray` with dims ``("time", d1, ...)``
named from DEPEND_1/2/3 (or HAPI bins names): each numeric dimension has its centres as
coordinate ``d`` (or ``d_centers`` over ``(time, d)`` when the bins change from record
to record), cell edges as ``d_low`` / ``d_high`` and element labels as ``d_label``.
The entry's `meta` records units (raw and for display), description, bins, fill, valid
range, the dataset's citation and, for indices stored multiplied, the scale.

Imports `catalog.model`, `sources`, `data.entry` and `data.meaning` from xhelio.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from xhelio.catalog.model import DatasetInfo
from xhelio.data.entry import DataEntry
from xhelio.data.meaning import citation_for, display_units, scale_factor
from xhelio.sources.base import Citation, ParameterData
from xhelio.sources.dims import per_record, split_support_columns

__all__ = ["entry_from_parameter", "entry_meta"]


def entry_meta(
    dataset_id: str,
    data: ParameterData,
    info: DatasetInfo | None,
    citation: Citation | None = None,
) -> dict[str, Any]:
    """The JSON-able meaning of one fetched parameter (see `DataEntry.meta`).

    `citation` is the source's (`DataSource.cite`): it names the provider that served
    the data; without it the dataset's DOI and PI are recorded alone.
    """
    meta: dict[str, Any] = {key: value for key, value in data.meta.items() if key not in {"dims"}}
    meta["units"] = data.units
    meta["display_units"] = display_units(data.units)
    meta["description"] = data.description
    meta["dataset"] = dataset_id
    meta["parameter"] = data.name
    dims = [
        {k: v for k, v in d.items() if not k.endswith("_column")}
        for d in data.meta.get("dims") or []
    ]
    if dims:
        meta["dims"] = dims
    elif data.bins is not None:
        meta["dims"] = [
            {
                "name": data.bins_name or "bins",
                "size": int(np.asarray(data.bins).size),
                "units": data.bins_units or "",
                "is_bins": True,
                "centers": [float(b) for b in np.asarray(data.bins, dtype=np.float64)],
            }
        ]
    scale = scale_factor(data.name, data.description, data.units)
    if scale is not None:
        meta["scale"] = scale
    meta["citation"] = _citation(dataset_id, info, citation)
    if info is not None:
        if info.title:
            meta["dataset_title"] = info.title
        if info.mission_id:
            meta["mission"] = info.mission_id
        if info.instrument:
            meta["instrument"] = info.instrument
    return meta


def _citation(
    dataset_id: str, info: DatasetInfo | None, citation: Citation | None
) -> dict[str, str]:
    """The source's citation, completed by what the catalog says of the dataset."""
    cited = citation or Citation(provider="", url="", dataset=dataset_id)
    return citation_for(
        dataset_id,
        cited.doi or (info.doi if info else None),
        cited.pi or (info.pi_name if info else None),
        cited.title or (info.title if info else ""),
        provider=cited.provider,
        provider_url=cited.url,
        acknowledgement=cited.acknowledgement,
    )


def _dims_of(data: ParameterData) -> list[dict[str, Any]]:
    dims = list(data.meta.get("dims") or [])
    if dims:
        return dims
    if data.bins is None:
        return []
    return [
        {
            "name": data.bins_name or "bins",
            "size": int(np.asarray(data.bins).size),
            "units": data.bins_units or "",
            "is_bins": True,
            "centers": [float(b) for b in np.asarray(data.bins, dtype=np.float64)],
        }
    ]


def _as_array(data: ParameterData, values: pd.DataFrame, support: pd.DataFrame) -> xr.DataArray:
    """The (time, d1, ...) DataArray of a binned or multi-dimensional parameter."""
    dims = _dims_of(data)
    sizes = [int(d["size"]) for d in dims]
    times = pd.DatetimeIndex(values.index).tz_convert("UTC").tz_localize(None)
    block = values.to_numpy(dtype=np.float64).reshape(len(values), *sizes)
    names = [str(d["name"]) for d in dims]
    coords: dict[str, Any] = {"time": times.to_numpy()}
    for dim, name, size in zip(dims, names, sizes, strict=True):
        units = str(dim.get("units") or "")
        title = str(dim.get("title") or "")
        for kind, suffix in (("centers", ""), ("low", "_low"), ("high", "_high")):
            constant = dim.get(kind)
            varying = per_record(support, dim.get(f"{kind}_column"), size)
            if varying is not None:
                key = f"{name}_centers" if kind == "centers" else f"{name}{suffix}"
                coords[key] = xr.Variable(
                    ("time", name), varying, {"units": units, "long_name": title or name}
                )
            elif isinstance(constant, list) and len(constant) == size:
                array = np.asarray([np.nan if v is None else v for v in constant], dtype=float)
                coords[f"{name}{suffix}"] = xr.Variable(
                    (name,), array, {"units": units, "long_name": title or name}
                )
        labels = dim.get("labels")
        if isinstance(labels, list) and len(labels) == size:
            coords[f"{name}_label"] = xr.Variable((name,), np.asarray(labels, dtype=str))
    array = xr.DataArray(block, dims=("time", *names), coords=coords, name=data.name)
    array.attrs.update(
        {
            "units": data.units,
            "description": data.description,
            "display_units": display_units(data.units),
        }
    )
    return array


def _is_array_shaped(data: ParameterData) -> bool:
    dims = _dims_of(data)
    if not dims:
        return False
    return len(dims) > 1 or bool(dims[0].get("is_bins"))


def entry_from_parameter(
    dataset_id: str,
    data: ParameterData,
    info: DatasetInfo | None = None,
    citation: Citation | None = None,
) -> DataEntry:
    """Wrap fetched `ParameterData` as a DataStore entry labelled `DATASET.PARAM`."""
    label = f"{dataset_id}.{data.name}"
    values, support = split_support_columns(data.frame)
    meta = entry_meta(dataset_id, data, info, citation)
    payload: pd.DataFrame | xr.DataArray = values
    units = dict.fromkeys((str(c) for c in values.columns), data.units)
    if _is_array_shaped(data):
        payload = _as_array(data, values, support)
        units = {data.name: data.units}
    return DataEntry(
        label=label,
        data=payload,
        units=units,
        description=data.description,
        source_dataset=dataset_id,
        source_parameter=data.name,
        is_timeseries=True,
        meta=meta,
    )
