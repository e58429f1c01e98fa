"""xhelio: talk to NASA heliophysics data in plain language.

Importing xhelio never touches the network, and stays cheap: `Assistant`, `AskRequest` and
`AskResponse` load the agents layer only when first used (`from xhelio import Assistant`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from xhelio.api import AskRequest, AskResponse, Assistant

__version__ = "0.1.0"
__all__ = ["AskRequest", "AskResponse", "Assistant", "__version__"]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext xhelio` in Jupyter/IPython: the `%%xhelio` cell magic (`notebook` extra)."""
    from xhelio.notebook import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    if name in {"Assistant", "AskRequest", "AskResponse"}:
        from xhelio import api

        return getattr(api, name)
    raise AttributeError(f"module 'xhelio' has no attribute {name!r}")
