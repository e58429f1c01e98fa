"""The event lists shipped with xhelio, each with its citation and licence.

`data/catalog.toml` lists them: name, file (CSV written by `write_csv`), description,
citation, licence and how the list was made. Only lists whose licence allows shipping
are here; a list derived by xhelio's own detector from public data is xhelio's (MIT),
citing the data and the definition.
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from xhelio.errors import UserError
from xhelio.events.model import EventList
from xhelio.events.text_formats import read_csv

__all__ = ["shipped_catalog", "shipped_list"]


@cache
def shipped_catalog() -> dict[str, dict[str, Any]]:
    """Name -> description, citation, licence and method of every shipped list."""
    text = resources.files("xhelio.events").joinpath("data/catalog.toml").read_text("utf-8")
    return {str(item["name"]): dict(item) for item in tomllib.loads(text)["list"]}


def shipped_list(name: str) -> EventList:
    """The shipped list called `name`.

    Raises:
        UserError: no shipped list has that name (the message names those there are).
    """
    info = shipped_catalog().get(name.strip().lower())
    if info is None:
        raise UserError(
            f"No shipped event list called '{name}'; shipped: {', '.join(shipped_catalog())}."
        )
    text = resources.files("xhelio.events").joinpath(f"data/{info['file']}").read_text("utf-8")
    loaded = read_csv(text, str(info["name"]), f"shipped list {info['name']}")
    return EventList(
        loaded.name,
        loaded.frame,
        str(info["description"]),
        f"shipped with xhelio ({info['licence']})",
        str(info["citation"]),
        {"how": str(info["method"]), **dict(info.get("thresholds", {}))},
    )
