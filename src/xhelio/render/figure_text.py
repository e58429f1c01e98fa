"""The words on a figure: quantity names, axis titles, units, default title, citations.

What a y axis or colour bar calls a quantity (`quantity_title`), which unit an entry's
column carries (`unit_of`), the default figure title naming spacecraft, instrument and
dataset (`default_title`), and the data citation placed under the figure
(`citations`, `add_citation`).

Imports only `data.entry` and `data.meaning` from xhelio.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import xarray as xr

from xhelio.data.entry import DataEntry
from xhelio.data.meaning import citation_text, display_units, html_units

__all__ = [
    "add_citation",
    "axis_unit",
    "citations",
    "default_title",
    "plain_unit",
    "quantity",
    "quantity_title",
    "titled",
    "unit_key",
    "unit_of",
    "visible_length",
    "without_unit",
    "wrap_title",
]

# A y title up to this long is used as is; descriptions up to the longer bound are wrapped.
_SHORT_TITLE = 40
_LONG_TITLE = 60


def quantity(entry: DataEntry) -> str:
    """Short name of what an entry measures: the parameter, not the dataset prefix."""
    dataset = entry.source_dataset
    if dataset and entry.label.startswith(dataset + "."):
        return entry.label[len(dataset) + 1 :]
    # Labels are conventionally DATASET.PARAMETER: the last part names the quantity.
    return entry.source_parameter or entry.label.rsplit(".", 1)[-1]


def quantity_title(entry: DataEntry) -> str:
    """What a y axis says: the parameter's description when short, else its name.

    Indices stored multiplied (OMNI's Kp*10) say so, so nobody reads Kp 30 as 30.
    """
    name = quantity(entry)
    description = " ".join(entry.description.split())
    # Archive banners ("[PRELIMINARY VALUES - BROWSE USE ONLY] B-field magnitude") are
    # notes about the data, not the quantity's name.
    description = re.sub(r"^\[[^\]]*\]\s*", "", description)
    # ISTP's continuation arrows and rules ("---> HOPE proton partial density",
    # "-----Ion Energy Flux spectrogram") are layout marks of the master file, not words.
    description = re.sub(r"^(?:-{2,}|={2,}|-)>?\s*(?=\D)", "", description)
    if len(description) > _SHORT_TITLE:
        # "Magnetic field in RTN coordinates (1 minute cadence)": the cadence aside goes.
        description = _without_aside(description)
    axis = str(entry.meta.get("label_axis") or entry.meta.get("field_name") or "").strip()
    if description and len(description) <= _LONG_TITLE:
        text = description  # long ones are wrapped by the layout
    else:
        text = axis if axis and len(axis) <= _SHORT_TITLE else name
    scale = entry.meta.get("scale")
    if isinstance(scale, int | float) and scale != 1:
        text = f"{name} x{scale:g}" if text == name else f"{text} ({name} x{scale:g})"
    return text


def _without_aside(text: str) -> str:
    """`text` without the parenthesised aside that ends it, nested ones too.

    "Wind plasma beta (beta = n k T / (B^2 / 2 mu0))" -> "Wind plasma beta".
    """
    if not text.endswith(")"):
        return text
    depth = 0
    for at in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[at], 0)
        if depth == 0:
            return text[:at].rstrip() or text
    return text  # unbalanced: left as written


# A parenthesised cadence or averaging aside: "(1min)", "(5 s avg)", "(hourly)".
_CADENCE = re.compile(
    r"^\d*\.?\d*\s*(?:s|sec|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|hourly|daily)"
    r"(?:\s+(?:avg|average|averages?|cadence|resolution|res))?$",
    re.IGNORECASE,
)
_ASIDE = re.compile(r"\s*\(([^()]*)\)\s*$")


def plain_unit(unit: str) -> str:
    """A unit as plain text, for sentences: ``cm<sup>-3</sup>`` is ``cm^-3``."""
    text = re.sub(r"<sup>(.*?)</sup>", r"^\1", unit)
    text = re.sub(r"<sub>(.*?)</sub>", r"_\1", text)
    return re.sub(r"<[^>]+>", "", text)


def unit_key(unit: str) -> str:
    """What a unit means, for comparing: ``nT (1min)`` is nT; ``per cc`` is ``cm^-3``."""
    text = plain_unit(unit)
    return display_units(_without_cadence(text)).replace(" ", "").replace("{", "").replace("}", "")


def axis_unit(raw: str) -> str:
    """The unit as an axis shows it (HTML), without a cadence aside: ``nT (1min)`` -> nT."""
    return html_units(display_units(_without_cadence(raw)))


def titled(name: str, unit: str) -> str:
    """The one rule for a quantity with its unit: ``name (unit)``, the unit said once.

    A name that already ends in its unit or a cadence aside ("flow speed (km/s)",
    "density (per cc)", "field (1min)") loses that aside before the unit is added.
    """
    text = without_unit(name, unit)
    if not unit:
        return text
    return f"{text} ({unit})" if text else unit


def without_unit(name: str, unit: str) -> str:
    """`name` without trailing asides that repeat `unit` or give a cadence."""
    text = name.strip()
    while unit and (found := _ASIDE.search(text)):
        inner = found.group(1)
        if not (_CADENCE.match(inner.strip()) or unit_key(inner) == unit_key(unit)):
            break
        text = text[: found.start()].rstrip()
    return text


def _without_cadence(unit: str) -> str:
    found = _ASIDE.search(unit)
    if found and _CADENCE.match(found.group(1).strip()) and found.start() > 0:
        return unit[: found.start()].rstrip()
    return unit


def default_title(entries: Sequence[DataEntry]) -> str:
    """Spacecraft, instrument and dataset of the plotted data, for a figure without title."""
    parts: list[str] = []
    for entry in entries:
        dataset = entry.source_dataset
        if not dataset:
            continue
        who = " ".join(
            str(entry.meta[k]).upper() if k == "mission" else str(entry.meta[k])
            for k in ("mission", "instrument")
            if entry.meta.get(k)
        )
        text = f"{who} — {dataset}" if who else dataset
        if text not in parts:
            parts.append(text)
    title = "; ".join(parts[:3]) + ("; ..." if len(parts) > 3 else "")
    return title if len(title) <= 110 else title[:107] + "..."


def citations(entries: Sequence[DataEntry]) -> str:
    """Every distinct citation of the plotted entries (computed ones: their inputs'), one a line."""
    lines = dict.fromkeys(citation_text(c) for e in entries for c in e.citations)
    return "<br>".join(line for line in lines if line)


def unit_of(entry: DataEntry, column: str) -> str:
    """The unit of one column: its own, the entry's, the only one there is, or none."""
    units = entry.units
    for key in (column, entry.label, entry.source_parameter or ""):
        if units.get(key):
            return units[key]
    distinct = {u for u in units.values() if u}
    if len(distinct) == 1:
        return distinct.pop()
    if isinstance(entry.data, xr.DataArray):
        return str(entry.data.attrs.get("units", ""))
    return ""


def add_citation(layout: dict[str, Any], text: str) -> None:
    """Put the data citation under the figure, where exports keep it."""
    if not text:
        return
    annotations = list(layout.get("annotations") or [])
    annotations.append(
        {
            "text": text,
            "xref": "paper",
            "yref": "paper",
            "x": 0,
            "y": 0,
            "xanchor": "left",
            "yanchor": "top",
            # Below the time axis title (about 50 px under the axis), not on top of it.
            "yshift": -60,
            "showarrow": False,
            "align": "left",
            "font": {"size": 9, "color": "#555555"},
            "name": "xhelio-citation",
        }
    )
    layout["annotations"] = annotations
    margin = layout.get("margin")
    if isinstance(margin, dict):
        margin["b"] = max(int(margin.get("b", 80)), 84 + 12 * text.count("<br>"))


_TAG = re.compile(r"<[^>]+>")


def visible_length(text: str) -> int:
    """How many characters of a Plotly title are drawn (tags such as <sub> are not)."""
    return len(_TAG.sub("", text))


def wrap_title(text: str, width: int, *, max_lines: int) -> str:
    """Break a title into lines of at most `width` drawn characters, at most `max_lines`.

    Existing <br> breaks are kept. The last part (a colour bar's unit) is kept whole; when
    the title needs more lines, the parts before it keep their first lines and end with "...".
    """
    parts = [_wrapped(part, width) for part in text.split("<br>")]
    last = parts[-1] if len(parts) > 1 and len(parts[-1]) < max_lines else []
    room = max_lines - len(last)
    lines = [line for part in (parts[:-1] if last else parts) for line in part]
    if len(lines) > room:
        rest = " ".join(lines[room - 1 :])
        lines = [*lines[: room - 1], _cut(rest, width - 3) + "..."]
    return "<br>".join([*lines, *last])


def _wrapped(text: str, width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and visible_length(f"{current} {word}") > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current]


def _cut(text: str, width: int) -> str:
    """The start of `text` with at most `width` drawn characters and no half-open tag."""
    kept = ""
    for piece in re.split(r"(<[^>]+>)", text):
        if _TAG.fullmatch(piece):
            kept += piece
            continue
        room = width - visible_length(kept)
        if room <= 0:
            break
        if len(piece) > room and " " in piece[:room]:
            kept += piece[:room].rsplit(" ", 1)[0]  # end at a word, not inside one
            break
        kept += piece[:room]
    return _close_tags(kept.rstrip(" ,;"))


def _close_tags(text: str) -> str:
    """Close a <sub>/<sup> left open by cutting a title short."""
    for tag in ("sub", "sup"):
        if text.count(f"<{tag}>") > text.count(f"</{tag}>"):
            text += f"</{tag}>"
    return text
