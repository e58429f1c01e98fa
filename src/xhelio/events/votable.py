"""Event tables as VOTable (IVOA VOTable 1.x, TABLEDATA serialisation), read strictly.

A small parser on the standard library instead of astropy: an event table needs only
FIELD names and TABLEDATA cells, and astropy would add a large dependency for that.
Strict: documents with a DOCTYPE or entities are refused (no entity expansion), and
BINARY/FITS serialisations are refused with a message saying to export as TABLEDATA.
The start and end columns are found by name (start/stop...) or by UCD (time.start,
time.end), as AMDA writes its time tables.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

import pandas as pd

from xhelio.errors import UserError
from xhelio.events.model import EventList, column, make_event_list
from xhelio.events.text_formats import END_NAMES, START_NAMES, with_iso_times

__all__ = ["read_votable", "write_votable"]


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(node: ET.Element, name: str) -> list[ET.Element]:
    return [child for child in node.iter() if _local(child.tag) == name]


def _column_for(fields: list[ET.Element], names: tuple[str, ...], ucd: str) -> int | None:
    for index, field in enumerate(fields):
        if ucd in (field.get("ucd") or "").lower().split(";"):
            return index
    lowered = [(f.get("name") or f.get("ID") or "").strip().lower() for f in fields]
    return next((lowered.index(n) for n in names if n in lowered), None)


def read_votable(text: str, name: str, origin: str) -> EventList:
    """The first TABLE of a VOTable document as an event list."""
    upper = text[:4096].upper()
    if "<!DOCTYPE" in upper or "<!ENTITY" in upper:
        raise UserError(f"{origin}: VOTable files with a DOCTYPE or entities are refused.")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UserError(f"{origin} is not well-formed XML ({exc}).") from None
    if _local(root.tag) != "VOTABLE":
        raise UserError(f"{origin} is XML but not a VOTable (root <{_local(root.tag)}>).")
    tables = _children(root, "TABLE")
    if not tables:
        raise UserError(f"{origin}: the VOTable has no TABLE.")
    table = tables[0]
    fields = [f for f in table if _local(f.tag) == "FIELD"]
    if any(_children(table, kind) for kind in ("BINARY", "BINARY2", "FITS")):
        raise UserError(
            f"{origin}: only the TABLEDATA serialisation is read; export it as TABLEDATA."
        )
    rows: list[list[str]] = []
    for number, tr in enumerate(_children(table, "TR"), start=1):
        cells = [(td.text or "").strip() for td in tr if _local(td.tag) == "TD"]
        if len(cells) != len(fields):
            raise UserError(
                f"{origin}: row {number} has {len(cells)} cells for {len(fields)} FIELDs."
            )
        rows.append(cells)
    names = [(f.get("name") or f.get("ID") or f"column{i + 1}") for i, f in enumerate(fields)]
    start = _column_for(fields, START_NAMES, "time.start")
    if start is None:
        raise UserError(f"{origin}: no start FIELD (named start/begin or UCD time.start).")
    end = _column_for(fields, END_NAMES, "time.end")
    frame = pd.DataFrame(rows, columns=names)
    frame = frame.rename(
        columns={names[start]: "start", **({names[end]: "end"} if end is not None else {})}
    )
    for name_, field in zip(names, fields, strict=True):
        kind = field.get("datatype", "char")
        if name_ in frame and kind in ("double", "float", "int", "long", "short"):
            frame[name_] = pd.to_numeric(column(frame, name_), errors="coerce")
    description = next((d.text or "" for d in _children(root, "DESCRIPTION")), "")
    return make_event_list(
        table.get("name") or name, frame, description=description.strip(), origin=origin
    )


def _datatype(series: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(series):
        return 'datatype="long"'
    if pd.api.types.is_float_dtype(series):
        return 'datatype="double"'
    return 'datatype="char" arraysize="*"'


def write_votable(events: EventList) -> str:
    """The list as a VOTable 1.3 document with one TABLEDATA table."""
    frame = with_iso_times(events.frame)
    fields = [
        '<FIELD name="start" ucd="time.start" datatype="char" arraysize="*" xtype="timestamp"/>',
        '<FIELD name="end" ucd="time.end" datatype="char" arraysize="*" xtype="timestamp"/>',
    ]
    fields += [
        f"<FIELD name={quoteattr(c)} {_datatype(column(frame, c))}/>" for c in events.attributes
    ]
    rows: list[str] = []
    for i in range(len(frame)):
        cells: list[str] = []
        for attribute in ["start", "end", *events.attributes]:
            value = column(frame, attribute).iloc[i]
            cells.append("" if pd.isna(value) else str(value))
        rows.append("<TR>" + "".join(f"<TD>{escape(c)}</TD>" for c in cells) + "</TR>")
    return "\n".join(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<VOTABLE version="1.3" xmlns="http://www.ivoa.net/xml/VOTable/v1.3">',
            "<RESOURCE>",
            f"<DESCRIPTION>{escape(events.description)}</DESCRIPTION>",
            f"<TABLE name={quoteattr(events.name)}>",
            *fields,
            "<DATA><TABLEDATA>",
            *rows,
            "</TABLEDATA></DATA>",
            "</TABLE>",
            "</RESOURCE>",
            "</VOTABLE>",
        ]
    )
