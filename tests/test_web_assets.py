"""The web app's files and routes without a browser: pages, assets, Plotly.js, the token.

Every module the app imports must exist in the package (a missing file would only show as
a blank page), and the assets must reach the browser with no internet: no CDN reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from xhelio.server import ServerConfig, create_app
from xhelio.server.web import PAGES, STATIC_DIR, plotly_js_path

TOKEN = "Vb7-qK2mZx9LwR4tYp1sNd8hGc6FjE3u"
BASE = "http://127.0.0.1"


@pytest.fixture
def client() -> Iterator[TestClient]:
    with TestClient(create_app(ServerConfig()), base_url=BASE) as c:
        yield c


@pytest.fixture
def locked() -> Iterator[TestClient]:
    with TestClient(create_app(ServerConfig(token=TOKEN)), base_url=BASE) as c:
        yield c


def test_every_page_route_serves_the_app(client: TestClient) -> None:
    for page in PAGES:
        response = client.get(page.replace("{session_id}", "s" + "0" * 32))
        assert response.status_code == 200, page
        assert response.headers["content-type"].startswith("text/html")
        assert '<script type="module" src="/assets/js/main.js">' in response.text


def test_api_routes_are_not_shadowed_by_pages(client: TestClient) -> None:
    assert client.get("/api/v1/sessions").json()["sessions"] == []
    missing = client.get("/api/v1/no-such-route")
    assert missing.status_code == 404
    assert "<html" not in missing.text


def test_plotly_js_comes_from_the_plotly_package(client: TestClient) -> None:
    path = plotly_js_path()
    assert path is not None
    response = client.get("/assets/vendor/plotly.min.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert len(response.content) == path.stat().st_size


def _imports(js: Path) -> list[Path]:
    text = js.read_text()
    found = re.findall(r"""(?:from|import)\s*\(?\s*["'](\.{1,2}/[^"']+)["']""", text)
    return [(js.parent / name).resolve() for name in found]


def test_every_module_import_resolves_to_a_shipped_file(client: TestClient) -> None:
    modules = sorted(STATIC_DIR.rglob("*.js"))
    assert len(modules) >= 10
    for js in modules:
        for target in _imports(js):
            assert target.is_file(), f"{js.name} imports missing {target}"
            rel = target.relative_to(STATIC_DIR).as_posix()
            assert client.get(f"/assets/{rel}").status_code == 200


def test_no_asset_needs_the_internet() -> None:
    for path in STATIC_DIR.rglob("*"):
        if path.suffix in (".html", ".js", ".css"):
            text = path.read_text()
            assert not re.search(r"""(src|href)=["']https?://""", text), path
            assert not re.search(r"""import[^;]*["']https?://""", text), path
            assert "@import url(http" not in text, path


def test_with_a_token_pages_are_public_and_the_api_is_not(locked: TestClient) -> None:
    for path in ("/", "/chat", "/data", "/settings", "/assets/js/main.js"):
        assert locked.get(path).status_code == 200, path
    assert locked.get("/api/v1/sessions").status_code == 401
    assert locked.get("/api/v1/sessions/s0/gallery/1/export").status_code == 401
    assert locked.post("/api/v1/sessions/s0/plan/retry").status_code == 401
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert locked.get("/api/v1/sessions", headers=auth).status_code == 200


def test_web_routes_answer_unknown_sessions_with_json_errors(client: TestClient) -> None:
    sid = "s" + "1" * 32
    for method, path in (
        ("GET", f"/api/v1/sessions/{sid}/gallery/1/export"),
        ("POST", f"/api/v1/sessions/{sid}/plan/retry"),
        ("POST", f"/api/v1/sessions/{sid}/plan/cancel"),
    ):
        response = client.request(method, path)
        assert response.status_code == 404, path
        assert response.json()["status"] == "error"
        assert "No session" in response.json()["message"]


def test_gallery_export_of_a_missing_figure_is_a_readable_404(client: TestClient) -> None:
    sid = client.post("/api/v1/sessions", json={}).json()["id"]
    response = client.get(f"/api/v1/sessions/{sid}/gallery/7/export", params={"format": "html"})
    assert response.status_code == 404
    assert "no figure 7" in response.json()["message"]


def test_an_unknown_url_is_a_page_for_browsers_and_json_for_api_clients(
    client: TestClient,
) -> None:
    browser = client.get("/no/such/page", headers={"Accept": "text/html,application/xhtml+xml"})
    assert browser.status_code == 404
    assert browser.headers["content-type"].startswith("text/html")
    assert '<div id="app">' in browser.text
    api = client.get("/no/such/page", headers={"Accept": "application/json"})
    assert api.status_code == 404
    assert api.json()["type"] == "NotFound"
    # Other methods and error codes are untouched.
    assert client.post("/no/such/page", headers={"Accept": "text/html"}).status_code in (404, 405)
