"""The web app: static single-page app at `/`, its assets, and Plotly.js from the package.

`mount_web_app(app)` adds to the API server (i) the page routes (`/`, `/chat/{id}`,
`/data`, `/pipelines`, `/gallery`, `/memory`, `/settings`), each answering the same
`index.html` so a reload or a shared link opens the right page; (ii) `/assets/...`, the
HTML/CSS/JS modules shipped inside this package (no build step, no CDN); (iii)
`/assets/vendor/plotly.min.js`, read from the installed `plotly` Python package, so the app
works with no internet; and (iv) the few web-only API routes of `web_routes`. The pages and
assets hold no data, so they are public (added to `app.state.public_prefixes`); every API
route stays behind the token, which the page asks for and sends itself. The app factory
calls this once, after the `/api` routes. Imports FastAPI/Starlette and `server.web_routes`
only.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, PlainTextResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["PAGES", "STATIC_DIR", "mount_web_app", "plotly_js_path"]

STATIC_DIR = Path(__file__).resolve().parent / "static"

# Client-side routes of the single-page app: each serves index.html.
PAGES = (
    "/",
    "/chat",
    "/chat/{session_id}",
    "/data",
    "/pipelines",
    "/pipelines/{pipeline_id}",
    "/gallery",
    "/memory",
    "/settings",
)

# index.html must be re-read after an upgrade; the modules it loads are revalidated by ETag.
_NO_CACHE = {"Cache-Control": "no-cache"}


def plotly_js_path() -> Path | None:
    """The `plotly.min.js` bundled with the installed `plotly` package, or None."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / "package_data" / "plotly.min.js"
        if candidate.is_file():
            return candidate
    return None


def _index() -> Response:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html", headers=_NO_CACHE)


def _plotly() -> Response:
    path = plotly_js_path()
    if path is None:
        return PlainTextResponse(
            "console.error('plotly.min.js is missing from the plotly package');",
            status_code=404,
            media_type="text/javascript",
        )
    # The file changes only with the plotly package version: cache it for a day.
    return FileResponse(
        path, media_type="text/javascript", headers={"Cache-Control": "max-age=86400"}
    )


class _RootIsChat:
    """Serve `/` as `/chat` (same page), so the token check can treat the page as public.

    The security middleware matches public paths by prefix, and `/` as a prefix would
    make every path public; rewriting the one exact path before it runs avoids that.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") in ("", "/"):
            scope = {**scope, "path": "/chat", "raw_path": b"/chat"}
        await self.app(scope, receive, send)


def mount_web_app(app: FastAPI) -> None:
    """Serve the web app from `app`: page routes, assets, Plotly.js and web-only routes.

    Args:
        app: The xhelio API application (routes under /api/v1 already added or added
            later: the page routes never shadow them).
    """
    from xhelio.server.web_pipelines import router as pipelines_router
    from xhelio.server.web_routes import router

    app.include_router(router)
    app.include_router(pipelines_router)
    for page in PAGES:
        app.add_api_route(page, _index, methods=["GET"], include_in_schema=False)
    # Added before the /assets mount, which would otherwise answer this path first.
    app.add_api_route(
        "/assets/vendor/plotly.min.js", _plotly, methods=["GET"], include_in_schema=False
    )
    app.mount("/assets", StaticFiles(directory=STATIC_DIR), name="assets")
    public: list[str] | None = getattr(app.state, "public_prefixes", None)
    if public is not None:
        public.extend(p for p in (*PAGES[1:], "/assets") if "{" not in p)
    _pages_for_unknown_urls(app)
    # Added last, so it wraps the security middleware and runs before it.
    app.add_middleware(_RootIsChat)


def _pages_for_unknown_urls(app: FastAPI) -> None:
    """Answer a browser's unknown URL with the app's "Page not found" page (status 404).

    API clients (not asking for HTML) keep the JSON error.

    Wraps the JSON handler `install_error_handlers` registered for HTTP errors.
    """
    json_errors = app.exception_handlers.get(StarletteHTTPException)

    async def not_found(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        accept = request.headers.get("accept", "")
        if exc.status_code == 404 and request.method == "GET" and "text/html" in accept:
            return FileResponse(
                STATIC_DIR / "index.html",
                status_code=404,
                media_type="text/html",
                headers=_NO_CACHE,
            )
        if json_errors is None:
            return PlainTextResponse(str(exc.detail), status_code=exc.status_code)
        answer = json_errors(request, exc)
        return await answer if inspect.isawaitable(answer) else answer

    app.add_exception_handler(StarletteHTTPException, not_found)
