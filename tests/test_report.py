"""Session reports of a real session, served over REST, written by the CLI, drawn by Chromium.

The session is an offline turn against a loopback HAPI server.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from server_fixtures import ACE, Api, hapi, live_api  # noqa: F401  (fixture)
from servers.catalog_hapi import CatalogHapiServer
from xhelio.cli.main import app
from xhelio.operations import Operation
from xhelio.report.model import result_method, result_numbers

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def api(hapi: CatalogHapiServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:  # noqa: F811
    yield from live_api(tmp_path_factory.mktemp("report-home"), hapi.url)


@pytest.fixture(scope="module")
def session_id(api: Api) -> str:
    response = api.client.post("/ask", json={"question": ACE})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["error"] is None and body["figure"] is not None
    return str(body["session_id"])


def _sections(text: str) -> list[str]:
    return re.findall(r"<h2>(.*?)</h2>", text)


def test_the_html_report_holds_question_figure_numbers_citations_and_rerun(
    api: Api, session_id: str
) -> None:
    response = api.client.get(f"/sessions/{session_id}/report", params={"format": "html"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "script-src 'unsafe-inline'" in response.headers["content-security-policy"]
    html = response.text
    assert _sections(html)[:4] == ["Question", "Answer", "Figures", "Numbers"]
    assert ACE in html
    assert "Plotly.newPlot('figure-1'" in html
    numbers = html.split("<h2>Numbers</h2>")[1].split("<h2>")[0]
    assert re.search(r"AC_H\d_MFI\.BGSEc</td>.*<td>nT</td>", numbers)
    citations = html.split("<h2>Data citations</h2>")[1].split("<h2>")[0]
    assert re.search(r"AC_H\d_MFI · .+ · https://doi\.org/10\.\d+/\S+ · PI: ", citations)
    rerun = html.split("<h2>Rerun this analysis</h2>")[1]
    assert "fetch_data" in rerun and "python rerun.py" in rerun
    assert "<script>" not in html.split("<h2>Question</h2>")[1].split("<h2>")[0]


def test_the_markdown_report_and_a_bad_format(api: Api, session_id: str) -> None:
    md = api.client.get(f"/sessions/{session_id}/report", params={"format": "md"})
    assert md.status_code == 200
    text = md.text
    assert text.startswith("# Analysis: ") and f"> {ACE}" in text
    assert "## Data citations" in text and "```python" in text
    assert re.search(r"\| AC_H\d_MFI\.BGSEc \| \S+ \| nT \|", text)
    bad = api.client.get(f"/sessions/{session_id}/report", params={"format": "docx"})
    assert bad.status_code == 422
    missing = api.client.get("/sessions/nosuchsession/report")
    assert missing.status_code == 404


def test_xhelio_report_writes_html_and_markdown_with_figure_files(
    api: Api, session_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XHELIO_HOME", str(api.home))
    runner = CliRunner()
    done = runner.invoke(app, ["report", "--session", session_id, "--out", str(tmp_path / "r.md")])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "r.md").read_text()
    figure = re.search(r"\]\((r_figures/figure-1\.(png|html))\)", text)
    assert figure is not None and (tmp_path / figure.group(1)).stat().st_size > 1000
    done = runner.invoke(
        app, ["report", "--session", session_id, "--out", str(tmp_path / "r.html")]
    )
    assert done.exit_code == 0 and "<h2>Figures</h2>" in (tmp_path / "r.html").read_text()
    wrong = runner.invoke(
        app, ["report", "--session", session_id, "--out", str(tmp_path / "r.pdf")]
    )
    assert wrong.exit_code != 0 and "report.html or report.md" in wrong.output


def test_results_with_units_and_methods_with_references_are_found() -> None:
    op = Operation(
        seq=3,
        tool="minimum_variance",
        phase="compute",
        result={
            "method": "Minimum variance analysis",
            "reference": "Sonnerup & Scheible (1998), ISSI SR-001, 185",
            "eigenvalue_ratio": 8.4,
            "normal_angle": 12.5,
            "normal_angle_units": "deg",
            "points": 300,
        },
    )
    numbers = {(q.name, q.value, q.unit) for q in result_numbers(op)}
    assert numbers == {("eigenvalue_ratio", 8.4, ""), ("normal_angle", 12.5, "deg")}
    method = result_method(op)
    assert method is not None and method.references == [
        "Sonnerup & Scheible (1998), ISSI SR-001, 185"
    ]
    assert result_numbers(Operation(tool="fetch_data", phase="fetch", result={"x": 1})) == []


def test_the_report_draws_its_figure_in_chromium(api: Api, session_id: str, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed")
    html = api.client.get(f"/sessions/{session_id}/report").text
    page_file = tmp_path / "report.html"
    page_file.write_text(html)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(api.url + f"/api/v1/sessions/{session_id}/report")
            page.wait_for_selector("#figure-1 .main-svg", timeout=60_000)
            assert page.locator("#figure-1 .scatterlayer .trace").count() >= 1
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
            assert errors == []
        finally:
            browser.close()


def test_the_public_session_report_tool_writes_the_report(api: Api, session_id: str) -> None:
    listed = {t["name"] for t in api.client.get("/tools").json()}
    assert "session_report" in listed
    ran = api.client.post(f"/sessions/{session_id}/tools/session_report", json={"format": "md"})
    assert ran.status_code == 200, ran.text
    body = ran.json()
    assert body["figures"] == 1 and body["citations"] == 1 and body["limitations"] == []
    assert body["path"].endswith("/exports/report.md")  # a server names files by their URL
    assert httpx.get(api.url + body["path"]).text.startswith("# Analysis: ")
