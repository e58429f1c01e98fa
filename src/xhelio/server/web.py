"""The web app's hook: `mount_web_app(app)` serves the browser UI (engineer i14 fills it in).

Kept separate so the API and the web pages merge without touching each other: the app
factory calls this once, after every `/api` route is registered. It may append public path
prefixes (static assets) to the list `app.state.public_prefixes`; API routes stay behind
the token.
"""

from __future__ import annotations

from fastapi import FastAPI

__all__ = ["mount_web_app"]


def mount_web_app(app: FastAPI) -> None:
    """Mount the web app on `app` (a no-op until the web app exists)."""
    del app
