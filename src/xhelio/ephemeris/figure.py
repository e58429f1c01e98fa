"""The configuration figure: bodies seen from solar north with their Parker spirals.

A polar Plotly figure (Stonyhurst/HEEQ longitude around, distance in AU out), as literal
traces a figure renderer passes through: the Sun at the centre, each body at its
position, and the spiral from the source surface out to it for the wind speed used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xhelio.ephemeris.archive import AU_KM
from xhelio.ephemeris.geometry import spiral_line

__all__ = ["Placed", "configuration_figure"]


@dataclass(frozen=True)
class Placed:
    """A body on the figure: HEEQ longitude (deg), distance (km), its footpoint and wind."""

    name: str
    longitude_deg: float
    distance_km: float
    footpoint_deg: float
    speed_km_s: float


def configuration_figure(placed: list[Placed], when: str) -> dict[str, Any]:
    """Plotly JSON of the bodies in `placed` at time `when`, with their spirals."""
    traces: list[dict[str, Any]] = [
        {
            "type": "scatterpolar",
            "r": [0.0],
            "theta": [0.0],
            "mode": "markers",
            "name": "Sun",
            "marker": {"size": 14, "color": "gold"},
        }
    ]
    farthest = max([p.distance_km for p in placed] + [AU_KM])
    for body in placed:
        radius, longitude = spiral_line(body.footpoint_deg, body.speed_km_s, body.distance_km)
        traces.append(
            {
                "type": "scatterpolar",
                "r": [float(r) for r in radius / AU_KM],
                "theta": [float(t) for t in longitude],
                "mode": "lines",
                "name": f"{body.name} spiral ({body.speed_km_s:.0f} km/s)",
                "line": {"dash": "dot"},
            }
        )
        traces.append(
            {
                "type": "scatterpolar",
                "r": [body.distance_km / AU_KM],
                "theta": [body.longitude_deg],
                "mode": "markers+text",
                "text": [body.name],
                "textposition": "top center",
                "name": f"{body.name} (footpoint {body.footpoint_deg:.1f} deg)",
                "marker": {"size": 10},
            }
        )
    layout = {
        "title": {"text": f"Magnetic connectivity, {when} (HEEQ, seen from solar north)"},
        "polar": {
            "radialaxis": {"title": {"text": "AU"}, "range": [0, farthest / AU_KM * 1.1]},
            "angularaxis": {"rotation": 0, "direction": "counterclockwise"},
        },
        "showlegend": True,
    }
    return {"data": traces, "layout": layout}
