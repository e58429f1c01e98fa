"""The pitch-angle distribution tool, for binned and for look-direction products.

A product binned in pitch angle is reduced as it is; one resolved in look direction
(azimuth and polar angle) is binned with the magnetic field.

Part of the analysis tools (`analysis_tools.ANALYSIS_TOOLS` lists it).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import xarray as xr

from xhelio.analysis import pitch
from xhelio.analysis.checks import unit_scale
from xhelio.data.entry import DataEntry
from xhelio.errors import UserError
from xhelio.tools.analysis_inputs import (
    frame_name,
    read_series,
    store_output,
    time_span,
    with_stored,
)
from xhelio.tools.context import ToolContext
from xhelio.tools.registry import Produces, tool

__all__ = ["pitch_angle_distribution"]


def _product(
    ctx: ToolContext, label: str, time_range: str | None
) -> tuple[DataEntry, xr.DataArray]:
    entry = ctx.store.get(label)
    if not isinstance(entry.data, xr.DataArray):
        raise UserError(f"'{label}' is a table, not an angle-resolved product; a pitch-angle "
                        "distribution needs a product with pitch-angle or look-direction "
                        "dimensions.")  # fmt: skip
    data = entry.data
    if time_range:
        span = time_span(time_range)
        data = data.sel(time=slice(np.datetime64(span.start.replace(tzinfo=None)),
                                   np.datetime64(span.end.replace(tzinfo=None))))  # fmt: skip
    return entry, data


def _from_look_directions(
    ctx: ToolContext,
    entry: DataEntry,
    data: xr.DataArray,
    field_label: str | None,
    options: dict[str, Any],
) -> tuple[xr.DataArray, pitch.PadResult]:
    if not field_label:
        raise UserError(
            f"'{entry.label}' has no pitch-angle dimension (dimensions: "
            f"{', '.join(map(str, data.dims))}); to compute pitch angles from its look "
            "directions, give the magnetic field as field_label."
        )
    field = read_series(ctx, field_label)
    product_frame, field_frame = frame_name(entry), field.frame
    if product_frame and field_frame and product_frame != field_frame:
        raise UserError(
            f"'{entry.label}' is in {product_frame} but the field '{field_label}' is in "
            f"{field_frame}; pitch angles need both in one frame."
        )
    _, unit_check = unit_scale(field.unit, "magnetic field")
    on_times = field.on(np.asarray(data["time"].values)).astype(np.float64)
    field.vectors()  # refuses a field without three components
    pad, result = pitch.pad_from_look_directions(data, on_times[:, :3], **options)
    frame = field_frame or product_frame
    result.assumptions.append(
        f"the field {field_label} is interpolated linearly to the product's times and is in "
        + (f"the product's frame ({frame})" if frame else "the product's (unstated) frame")
    )
    result.checks.append(unit_check)
    result.answer = result.answer.replace(
        " Method:", f" Pitch angles from the product's look directions and {field_label}. Method:"
    )
    return pad, result


@tool(
    "data_ops_compute",
    public=True,
    produces=Produces(result_field="stored"),
    reads=("label", "field_label"),
    time_args=("time_range",),
    result=pitch.PadResult,
)
def pitch_angle_distribution(
    ctx: ToolContext,
    label: str,
    time_range: str | None = None,
    field_label: str | None = None,
    energy_min: float | None = None,
    energy_max: float | None = None,
    bins: int = 12,
    polar: Literal["auto", "colatitude", "elevation"] = "auto",
    angles_are: Literal["look", "velocity"] = "look",
    output_label: str | None = None,
) -> dict[str, Any]:
    """Pitch-angle distribution (time by pitch angle) of an angle-resolved particle product.

    A product binned in pitch angle is used as it is. A product resolved in look direction
    (an azimuth and a polar angle, e.g. a 3-D distribution) needs the magnetic field: each
    direction's pitch angle is taken with the field at its time and the fluxes are binned.
    Other dimensions (energy) are averaged, over [energy_min, energy_max] when given.

    Args:
        label: Stored angle-resolved product (pitch-angle, or azimuth and polar dims).
        time_range: Interval (default: all).
        field_label: Stored magnetic field vectors in the product's frame (look directions).
        energy_min: Lowest energy channel averaged (the product's unit).
        energy_max: Highest energy channel averaged.
        bins: Pitch-angle bins over 0-180° (look directions only).
        polar: The polar angle is a colatitude or an elevation ('auto': from its range).
        angles_are: The angles are detector look directions or particle velocity directions.
        output_label: Label of the stored distribution (default '<label>.PAD').
    """
    entry, data = _product(ctx, label, time_range)
    energy = None
    if energy_min is not None or energy_max is not None:
        energy = (energy_min or 0.0, energy_max if energy_max is not None else np.inf)
    if pitch.pitch_angle_dimension(data) is not None:
        pad, result = pitch.reduce_pad(data, energy)
    else:
        options = {"energy_range": energy, "bins": bins, "polar": polar,
                   "velocity": angles_are == "velocity"}  # fmt: skip
        pad, result = _from_look_directions(ctx, entry, data, field_label, options)
    unit = next(iter(entry.units.values()), "")
    target = output_label.strip() if output_label and output_label.strip() else f"{label}.PAD"
    stored = store_output(ctx, target, pad.rename("pad"), [entry],
                          f"Pitch-angle distribution of {label}", unit)  # fmt: skip
    return with_stored(result, [stored])
