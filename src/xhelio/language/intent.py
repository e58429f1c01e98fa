"""What the offline interpreter understood from a request, as plain frozen records.

`parse.py` fills a `RequestIntent`; `agents/offline/plan` turns it into steps. Nothing here knows
about tools or the catalog, so a planner can build or inspect intents on its own.
Imports only `timerange`, `language.slots` and `language.quantities` (for display
names) from xhelio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from xhelio.language.quantities import QUANTITIES
from xhelio.language.slots import SlotReading
from xhelio.timerange import TimeRange

__all__ = [
    "COMPONENTS",
    "DiscoveryKind",
    "DiscoveryWish",
    "Layout",
    "MissionRef",
    "OperationKind",
    "OperationWish",
    "PlotWish",
    "QuantityWish",
    "RequestIntent",
]

OperationKind = Literal[
    "magnitude", "smooth", "resample", "derivative", "difference", "ratio",
    "detrend", "percent_difference", "cross_correlation", "psd", "integral",
    "transform", "statistics", "rotate", "scale", "dynamic_power", "wavelet",
]  # fmt: skip
Layout = Literal["auto", "overlay", "separate"]
DiscoveryKind = Literal["missions", "browse", "search", "parameters", "availability"]
# "vector" keeps all components, "magnitude" wants |X|, a letter wants one component.
COMPONENTS = ("vector", "magnitude", "x", "y", "z", "r", "t", "n")


@dataclass(frozen=True)
class MissionRef:
    """A mission named in the request: catalog id, display name and the words typed."""

    mission_id: str
    name: str
    text: str
    position: int


@dataclass(frozen=True)
class QuantityWish:
    """A physical quantity asked for, with the component, frame and species if given."""

    quantity: str
    text: str
    position: int
    component: str | None = None
    frame: str | None = None
    species: str | None = None
    qualifiers: tuple[str, ...] = ()
    """Words narrowing which variable serves it: a spectrum's field ("magnetic") or look
    direction ("omni", "anti"), see `language.spectra`."""


@dataclass(frozen=True)
class OperationWish:
    """A computation asked for; `window_s` is the smoothing or resampling length.

    `detail` is the operation's own parameter: the statistic of a running window
    ("median", "std", ...; "" is the mean), the trend a detrend removes ("linear", "mean",
    "running") or the key of an element-wise transform ("log10", "zscore").
    """

    kind: OperationKind
    text: str
    window_s: float | None = None
    explicit_window: bool = True
    detail: str = ""
    window_points: int | None = None  # a running window stated in samples ("5-point")
    during: tuple[str, str] | None = None
    """The clock times it is computed over, inside the time range ("PSD over 13:00-13:10")."""


@dataclass(frozen=True)
class PlotWish:
    """How the result should be shown (or not), and whether to export it."""

    wanted: bool = True
    layout: Layout = "auto"
    log_y: bool = False
    title: str | None = None
    colours: tuple[str, ...] = ()
    export_format: str | None = None
    export_filename: str | None = None


@dataclass(frozen=True)
class DiscoveryWish:
    """A question about the catalog rather than the data ("what datasets does PSP have")."""

    kind: DiscoveryKind
    query: str = ""


@dataclass(frozen=True)
class RequestIntent:
    """Everything the parser took from one request."""

    text: str
    missions: tuple[MissionRef, ...] = ()
    quantities: tuple[QuantityWish, ...] = ()
    time_range: TimeRange | None = None
    time_text: str | None = None
    time_error: str | None = None
    time_unread: tuple[str, ...] = ()
    """Clock-like words the time range did not use ("at 10 UT for 3 hours")."""
    cadence_s: float | None = None
    cadence_text: str | None = None
    operations: tuple[OperationWish, ...] = ()
    plot: PlotWish = field(default_factory=PlotWish)
    compare: bool = False
    at_earth: bool = False
    dataset_ids: tuple[str, ...] = ()
    parameter_names: tuple[str, ...] = ()
    save_data_format: str | None = None
    discovery: DiscoveryWish | None = None
    hints: tuple[str, ...] = ()
    unknown_names: tuple[str, ...] = ()
    unplaced: tuple[str, ...] = ()
    """Words naming nothing offline mode knows (they rule out the solar wind overview)."""
    doubts: tuple[str, ...] = ()
    """Questions to ask before fetching: a name close to a mission, a probe it lacks."""
    spellings: tuple[tuple[str, str], ...] = ()
    """Words read as the vocabulary word they are one slip from: ("desnity", "density")."""
    slots: SlotReading = field(default_factory=lambda: SlotReading(""))
    """Every phrase of the request and the slot it fed; the words no slot took."""
    product_of: RequestIntent | None = None
    """A follow-up naming other probes of a constellation ("now MMS3"): the earlier request
    whose products (dataset ids with the probe swapped) it keeps."""
    shown_before: RequestIntent | None = None
    """A follow-up naming nothing to show, only a time or a change ("zoom to 06:00-12:00"):
    the earlier request whose datasets and parameters it keeps where they have data."""

    def operation(self, kind: OperationKind) -> OperationWish | None:
        """The first requested operation of `kind`, if any."""
        return next((op for op in self.operations if op.kind == kind), None)

    def understood(self) -> list[str]:
        """Short phrases naming what was understood, for answers and clarifications."""
        parts: list[str] = []
        if self.missions:
            ids = [m.mission_id for m in self.missions]
            names = ", ".join(
                dict.fromkeys(
                    m.text if ids.count(m.mission_id) > 1 else m.name for m in self.missions
                )
            )
            parts.append(f"mission{'s' if len(self.missions) > 1 else ''} {names}")
        if self.dataset_ids:
            parts.append(f"dataset {', '.join(self.dataset_ids)}")
        if self.quantities:
            parts.append("quantity " + ", ".join(describe_quantity(q) for q in self.quantities))
        if self.time_text:
            parts.append(f"time range {self.time_text}")
        if self.cadence_text:
            parts.append(f"cadence {self.cadence_text}")
        parts.extend(
            f"{op.text} over {op.during[0]}-{op.during[1]}" if op.during else op.text
            for op in self.operations
            if op.during or op.text != self.cadence_text  # the cadence is said once
        )
        if not self.plot.wanted:
            parts.append("no plot")
        if self.plot.log_y:
            parts.append("log scale")
        if self.plot.layout != "auto":
            parts.append("separate panels" if self.plot.layout == "separate" else "overlay")
        if self.plot.title:
            parts.append(f"title {self.plot.title!r}")
        if self.plot.colours:
            parts.append("colours " + ", ".join(self.plot.colours))
        if self.plot.export_format:
            parts.append(f"export as {self.plot.export_format}")
        if self.save_data_format:
            parts.append(f"save data as {self.save_data_format}")
        return parts


def describe_quantity(wish: QuantityWish) -> str:
    """Human name of a quantity wish, e.g. 'magnetic field (z, GSM)'."""
    known = next((q for q in QUANTITIES if q.key == wish.quantity), None)
    component = None if known and wish.component == known.default_component else wish.component
    name = known.label if known else wish.quantity.replace("_", " ")
    if known and known.vector_label and component == "vector":  # "velocity", not "speed"
        name, component = known.vector_label, None
    details = [d for d in (wish.species, component, wish.frame) if d]
    return f"{name} ({', '.join(details)})" if details else name
