"""The web app in a real browser (headless Debian chromium driven by Playwright).

It runs against `xhelio serve` (a subprocess on a free loopback port, its own
XHELIO_HOME) and a catalog-wide test HAPI server on loopback. Offline mode: no model, no
key, no network.

Skips only when chromium or Playwright is truly unavailable. Screenshots of every page at
1280x800 are written to $XHELIO_WEB_SHOTS when that variable is set.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from agent_script import ACE_REQUEST, Script, ace_steps, ace_week
from servers.catalog_hapi import CatalogHapiServer
from servers.hapi_server import HapiTestServer
from servers.openai_chat_server import OpenAIChatServer
from xhelio.config import load_settings
from xhelio.pipelines.model import TIME_RANGE_VAR, Pipeline, PipelineStep, PipelineVariable
from xhelio.pipelines.store import PipelineStore

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
VIEWPORT = {"width": 1280, "height": 800}
# ms: generous waits (never asserted on). A fresh server's first offline request can take
# well over a minute on a loaded 2-core machine (its first-use set-up), so 60 s was not enough.
SLOW = 240_000

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    pytest.skip("chromium is not installed (apt-get install chromium)", allow_module_level=True)
sync_api.expect.set_options(timeout=SLOW)


@dataclass
class Served:
    url: str
    home: Path
    hapi: CatalogHapiServer


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_command(port: int) -> list[str]:
    script = Path(sys.executable).with_name("xhelio")
    if script.exists():
        return [str(script), "serve", "--port", str(port)]
    return [
        sys.executable,
        "-c",
        "from xhelio.cli.main import main; main()",
        "serve",
        "--port",
        str(port),
    ]


@contextmanager
def xhelio_serve(
    home: Path,
    hapi: CatalogHapiServer | HapiTestServer,
    token: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[str]:
    """`xhelio serve` in a subprocess on a free port; yields its base URL."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        XHELIO_HOME=str(home),
        XHELIO_HAPI_URL=hapi.url,
        XHELIO_CDAS_URL="http://127.0.0.1:9/WS/cdasr/1",
    )
    for var in ("XHELIO_MODEL", "XHELIO_API_TOKEN", "OPENAI_BASE_URL"):
        env.pop(var, None)
    if token:
        env["XHELIO_API_TOKEN"] = token
    env.update(extra_env or {})
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(_serve_command(port), env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a loaded machine starts slowly
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"xhelio serve did not start:\n{(home / 'server.log').read_text()}")
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("web-home")
    with CatalogHapiServer() as hapi, xhelio_serve(home, hapi) as url:
        yield Served(url, home, hapi)


@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: sync_api.Browser, served: Served) -> Iterator[sync_api.Page]:
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.set_default_timeout(SLOW)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    refused = watch_csp(pg)
    yield pg
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"
    assert not refused, f"Content-Security-Policy violations: {refused}"


def watch_csp(pg: sync_api.Page) -> list[str]:
    """Every Content-Security-Policy violation the page reports (kept in the returned list)."""
    refused: list[str] = []

    def on_console(message: sync_api.ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "CSP violation" in message.text:
            refused.append(message.text)

    pg.on("console", on_console)
    pg.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error("
        "'CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));"
    )
    return refused


def shot(page: sync_api.Page, name: str) -> None:
    folder = os.environ.get("XHELIO_WEB_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def ask(page: sync_api.Page, text: str) -> None:
    page.fill("#ask-input", text)
    page.keyboard.press("Enter")


def wait_answer(page: sync_api.Page) -> sync_api.Locator:
    """The last assistant message once the request is over (Cancel hidden again)."""
    page.wait_for_selector("#cancel", state="hidden")
    reply = page.locator(".msg.assistant").last
    sync_api.expect(reply).to_be_attached()  # a page still loading its session has none yet
    sync_api.expect(reply).not_to_have_class(re.compile(r"\bpending\b"))
    sync_api.expect(reply.locator(".typing")).to_have_count(0)
    return reply


ACE = "ACE magnetic field magnitude for 2024-01-15"


def test_a_request_streams_activity_and_draws_a_plotly_figure(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    shot(page, "chat-empty")
    ask(page, ACE)
    # The activity stream shows the steps while the request runs and after it.
    sync_api.expect(page.locator(".activity .step.tool").first).to_be_visible()
    reply = wait_answer(page)
    steps = page.locator(".activity-list").inner_text()
    assert "fetch_data" in steps and "AC_H1_MFI" in steps
    assert page.locator(".activity .step.tool.ok").count() >= 2
    assert page.locator(".activity .step.tool.running").count() == 0
    # A real Plotly figure, interactive, with the revision that keeps zoom on updates.
    page.wait_for_selector("#figure .main-svg")
    assert page.evaluate("document.getElementById('figure').layout.uirevision").startswith("fig-")
    assert page.evaluate("document.getElementById('figure').data.length") >= 1
    assert "magnetic field (magnitude) (nT)" in reply.inner_text()  # the short answer first
    # Follow-up suggestions from what was just done, and the session in the URL.
    assert page.locator(".suggestions .chip").count() >= 1
    assert re.search(r"/chat/s[0-9a-f]{32}$", page.url)
    shot(page, "chat-figure")


def test_the_page_runs_under_its_content_security_policy(browser: sync_api.Browser, served: Served):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SLOW)
    page = context.new_page()
    refused = watch_csp(page)
    try:
        response = page.goto(served.url + "/")
        assert response is not None
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        page.wait_for_selector("#ask-input")
        # Every kind of trace the server draws: SVG lines, WebGL lines (long series), heatmaps.
        drawn = page.evaluate(
            """async () => {
              const { ensurePlotly } = await import('/assets/js/plot.js');
              const Plotly = await ensurePlotly();
              const n = 20000, x = [...Array(n).keys()], y = x.map(Math.sin);
              const out = [];
              for (const trace of [
                {type: 'scatter', x: x.slice(0, 100), y: y.slice(0, 100)},
                {type: 'scattergl', mode: 'lines', x, y},
                {type: 'heatmap', z: [[1, 2], [3, 4]]},
              ]) {
                const div = document.createElement('div');
                document.body.appendChild(div);
                await Plotly.newPlot(div, [trace], {title: {text: trace.type}});
                out.push(div.querySelectorAll('.main-svg').length > 0);
              }
              return out;
            }"""
        )
        assert drawn == [True, True, True]
        assert refused == []
        # An inline script injected into the page is refused, and the page says so.
        with page.expect_console_message(lambda m: "CSP violation" in m.text):
            page.evaluate(
                """() => { const s = document.createElement('script');
                       s.textContent = 'window.injected = true';
                       document.body.appendChild(s); }"""
            )
        assert page.evaluate("window.injected === undefined")
        assert refused and all("script-src" in r for r in refused)
    finally:
        context.close()


def test_zoom_is_kept_when_the_figure_updates(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    ask(page, ACE)
    wait_answer(page)
    plot = page.locator("#figure .nsewdrag").first
    box = plot.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.3, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=5)
    page.mouse.up()
    zoomed = page.evaluate("document.getElementById('figure').layout.xaxis.range")
    full = page.evaluate("document.getElementById('figure').data[0].x.length")
    assert zoomed and full
    ask(page, "Plot ACE magnetic field magnitude for 2024-01-15")
    wait_answer(page)
    assert page.evaluate("document.getElementById('figure').layout.xaxis.range") == zoomed


def test_reload_restores_the_session(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    ask(page, ACE)
    wait_answer(page)
    url = page.url
    page.reload()
    sync_api.expect(page.locator(".msg.user")).to_contain_text(ACE)
    sync_api.expect(page.locator(".msg.assistant").first).to_contain_text("AC_H1_MFI")
    page.wait_for_selector("#figure .main-svg")
    assert page.url == url
    # Opening "/" again in the same tab comes back to the tab's session.
    page.goto(served.url + "/")
    sync_api.expect(page.locator(".msg.user")).to_contain_text(ACE)
    assert page.url == url
    # Input history: the arrow key brings the last request back.
    page.focus("#ask-input")
    page.keyboard.press("ArrowUp")
    assert page.input_value("#ask-input") == ACE


def test_two_tabs_keep_two_sessions_apart(browser: sync_api.Browser, served: Served):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SLOW)
    one, two = context.new_page(), context.new_page()
    try:
        one.goto(served.url + "/")
        two.goto(served.url + "/")
        ask(one, ACE)
        ask(two, "OMNI solar wind speed for 2024-01-15")
        wait_answer(one)
        wait_answer(two)
        assert one.url != two.url
        for pg in (one, two):
            pg.reload()
            sync_api.expect(pg.locator(".msg.user")).to_have_count(1)
        assert one.locator(".msg.user .msg-text").inner_text() == ACE
        assert "OMNI" in two.locator(".msg.user").inner_text()
        assert "OMNI" not in one.locator(".conversation").inner_text()
        assert "AC_H1_MFI" not in two.locator(".conversation").inner_text()
        # Both show in the sidebar; each tab marks its own as current.
        sids = [pg.url.rsplit("/", 1)[1] for pg in (one, two)]
        for pg, sid in zip((one, two), sids, strict=True):
            for other in sids:
                sync_api.expect(pg.locator(f".session[data-sid='{other}']")).to_have_count(1)
            sync_api.expect(pg.locator(".session.current")).to_have_attribute("data-sid", sid)
    finally:
        context.close()


def test_cancel_stops_a_slow_request(page: sync_api.Page, served: Served):
    served.hapi.fail_next("slow", endpoint="data", delay_s=8)
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, "Wind magnetic field magnitude for 2024-02-01")
    sync_api.expect(page.locator(".activity .step.tool.running")).to_have_count(1)
    shot(page, "chat-running")
    page.click("#cancel")
    reply = wait_answer(page)
    assert re.search(r"(?i)cancel", reply.inner_text())
    assert page.locator("#figure .main-svg").count() == 0
    shot(page, "chat-cancelled")
    served.hapi.clear_faults()


def test_data_page_browses_fetches_previews_and_exports(page: sync_api.Page, served: Served):
    page.goto(served.url + "/data")
    page.locator("#missions li", has_text="ACE").first.click()
    page.locator("#datasets li[data-id='AC_H1_MFI']").click()
    detail = page.locator(".detail")
    sync_api.expect(detail).to_contain_text("Coverage")
    sync_api.expect(detail).to_contain_text("Cadence")
    sync_api.expect(detail.locator("table.params")).to_contain_text("nT")
    page.locator("table.params tr", has_text="Magnitude").first.click()
    page.fill("#time-range", "2024-01-15T00:00 to 2024-01-15T06:00")
    page.click("#fetch")
    sync_api.expect(page.locator(".fetch-message")).to_contain_text("Fetched AC_H1_MFI.Magnitude")
    view = page.locator("#entry-view")
    sync_api.expect(view.locator(".preview table tbody tr")).not_to_have_count(0)
    sync_api.expect(view.locator(".preview")).to_contain_text("2024-01-15")
    sync_api.expect(view.locator(".stats")).to_contain_text(re.compile("mean", re.IGNORECASE))
    sync_api.expect(view.locator(".citation")).to_contain_text("AC_H1_MFI")
    shot(page, "data")
    with page.expect_download() as download:
        view.get_by_role("button", name="CSV").click()
    path = download.value.path()
    assert path is not None
    lines = [ln for ln in Path(path).read_text().splitlines() if ln and not ln.startswith("#")]
    assert "Magnitude" in lines[0]
    assert len(lines) == 1 + 360  # header and six hours of one-minute data


def test_errors_are_shown_readably(page: sync_api.Page, served: Served):
    page.goto(served.url + "/data")
    page.fill("#catalog-search", "ACE magnetic")
    page.keyboard.press("Enter")
    page.locator(".search-results button.link", has_text="AC_H1_MFI").first.click()
    sync_api.expect(page.locator(".detail")).to_contain_text("AC_H1_MFI")
    page.fill("#time-range", "2024-13-45")
    page.click("#fetch")
    box = page.locator(".fetch-message .message.error")
    sync_api.expect(box).to_be_visible()
    assert "Traceback" not in box.inner_text()
    assert re.search(r"(?i)time|date|month", box.inner_text())
    shot(page, "data-error")
    page.goto(served.url + "/chat/s" + "0" * 32)
    sync_api.expect(page.locator(".message.error")).to_contain_text("no longer exists")


def test_gallery_pipelines_and_settings_pages(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, ACE)
    wait_answer(page)
    page.click("#nav a[data-page='gallery']")
    card = page.locator(".gallery-grid .card").first
    sync_api.expect(card).to_contain_text(ACE)
    # The tab's session is the one shown (the picker lists every session).
    picked = page.locator("#gallery-session option:checked")
    sync_api.expect(picked).to_contain_text("(this tab)")
    card.get_by_role("button", name="Open").click()
    page.wait_for_selector(".viewer-plot .main-svg")
    sync_api.expect(page.locator(".citations")).to_contain_text("AC_H1_MFI")
    # The steps that made it, traced from the figure's data back to the fetch.
    made = page.locator(".made-by li")
    sync_api.expect(made.first).to_contain_text("fetch_data")
    sync_api.expect(made.first).to_contain_text("AC_H1_MFI.Magnitude")
    sync_api.expect(made.last).to_contain_text("render_plotly_json")
    shot(page, "gallery")
    with page.expect_download() as download:
        page.locator(".viewer").get_by_role("button", name="HTML").click()
    assert b"plotly" in Path(download.value.path() or "").read_bytes()[:2_000_000].lower()
    # PDF comes from the server's exporter (kaleido and the same headless chromium).
    with page.expect_download() as download:
        page.locator(".gallery-grid .card").first.get_by_role("button", name="PDF").click()
    assert Path(download.value.path() or "").read_bytes().startswith(b"%PDF")

    page.click("#nav a[data-page='settings']")
    page.fill("#limit-http_retries", "5")
    page.fill("#limit-session_memory_mb", "512")
    page.click("#save-settings")
    sync_api.expect(page.locator(".save-message")).to_contain_text("Saved")
    shot(page, "settings")
    config = (served.home / "config.toml").read_text()
    assert re.search(r"http_retries\s*=\s*5", config)
    assert re.search(r"session_memory_mb\s*=\s*512", config)
    assert load_settings(home=served.home).session_memory_mb == 512
    sync_api.expect(page.locator(".keys")).to_contain_text("no key")


def test_a_dropped_stream_resumes_from_the_last_event(page: sync_api.Page, served: Served):
    """The answer stream breaks after its first steps.

    The page reconnects with Last-Event-ID, receives the steps it missed and shows the
    saved outcome.
    """
    resumed: list[str] = []

    def cut_stream(route: sync_api.Route) -> None:
        full = route.fetch().text()
        blocks = full.split("\n\n")
        first_call = next(i for i, b in enumerate(blocks) if "event: tool_call" in b)
        route.fulfill(
            status=200,
            headers={"Content-Type": "text/event-stream"},
            body="\n\n".join(blocks[: first_call + 1]) + "\n\n",
        )

    page.route("**/api/v1/ask/stream", cut_stream)
    page.on(
        "request",
        lambda r: (
            resumed.append(r.headers.get("last-event-id", "")) if "/events" in r.url else None
        ),
    )
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, ACE)
    reply = wait_answer(page)
    assert resumed and resumed[0].isdigit()
    assert "AC_H1_MFI" in reply.inner_text()
    page.wait_for_selector("#figure .main-svg")
    steps = page.locator(".activity-list")
    sync_api.expect(steps).to_contain_text("render_plotly_json")
    assert steps.inner_text().count("fetch_data") == 1  # replayed steps are not doubled


def test_a_server_with_a_token_asks_for_it_once(
    browser: sync_api.Browser, served: Served, tmp_path: Path
):
    token = "web-Vb7-qK2mZx9LwR4tYp1sNd8h"
    with xhelio_serve(tmp_path, served.hapi, token=token) as url:
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(SLOW)
        try:
            pg = context.new_page()
            pg.goto(url + "/")
            sync_api.expect(pg.locator("#token-dialog")).to_contain_text("API token")
            pg.fill("#token-input", token)
            pg.keyboard.press("Enter")
            sync_api.expect(pg.locator("#token-dialog")).to_have_count(0)
            ask(pg, ACE)
            reply = wait_answer(pg)  # the SSE stream carries the token too
            assert "AC_H1_MFI" in reply.inner_text()
        finally:
            context.close()


def test_the_catalog_browser_works_from_the_keyboard(page: sync_api.Page, served: Served):
    page.goto(served.url + "/data")
    sync_api.expect(page.locator("#missions li").first).to_be_visible()
    page.focus("#missions")
    page.keyboard.press("ArrowDown")
    first = page.locator("#missions li").first
    sync_api.expect(first).to_have_attribute("aria-selected", "true")
    sync_api.expect(page.locator("#datasets li[data-id]").first).to_be_visible()
    page.focus("#datasets")
    page.keyboard.press("ArrowDown")
    sync_api.expect(page.locator(".detail h2")).to_be_visible()
    assert page.locator(".detail input[name='parameter']:checked").count() == 1


def test_sessions_are_renamed_opened_and_deleted_from_the_sidebar(
    page: sync_api.Page, served: Served
):
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, ACE)
    wait_answer(page)
    sid = page.url.rsplit("/", 1)[1]
    item = page.locator(f".session[data-sid='{sid}']")
    item.get_by_role("button", name=re.compile("^Rename")).click()
    page.fill(".session .rename", "Quiet day at L1")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator(f".session[data-sid='{sid}'] .session-title")).to_have_text(
        "Quiet day at L1"
    )
    # A new session empties the chat; opening the old one from the sidebar restores it.
    page.click("#new-session")
    sync_api.expect(page.locator(".welcome")).to_be_visible()
    page.locator(f".session[data-sid='{sid}'] .session-open").click()
    sync_api.expect(page.locator(".msg.user .msg-text")).to_have_text(ACE)
    assert page.url.endswith(sid)
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f".session[data-sid='{sid}']").get_by_role(
        "button", name=re.compile("^Delete")
    ).click()
    sync_api.expect(page.locator(f".session[data-sid='{sid}']")).to_have_count(0)
    sync_api.expect(page.locator(".welcome")).to_be_visible()
    assert httpx.get(f"{served.url}/api/v1/sessions/{sid}").status_code == 404


def test_answers_render_markdown_without_running_markup(page: sync_api.Page, served: Served):
    page.goto(served.url + "/settings")
    html = page.evaluate(
        """async () => {
            const { renderMarkdown } = await import("/assets/js/markdown.js");
            const box = document.createElement("div");
            box.append(renderMarkdown(
                "# Result\\n**Bz** turned *south* at `12:00`.\\n\\n- one\\n- two\\n\\n"
                + "<img src=x onerror=alert(1)> [doc](https://cdaweb.gsfc.nasa.gov) "
                + "[bad](javascript:alert(1))\\n```\\nx = 1\\n```"));
            return box.innerHTML;
        }"""
    )
    assert "<strong>Bz</strong>" in html and "<em>south</em>" in html
    assert "<code>12:00</code>" in html and "<li>two</li>" in html
    assert "<pre><code>x = 1</code></pre>" in html
    assert '<a href="https://cdaweb.gsfc.nasa.gov"' in html
    assert "<img" not in html and 'href="javascript' not in html


def test_the_plan_panel_shows_tasks_and_retries_a_failed_one(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, "Compare ACE and Wind magnetic field magnitude for 2024-01-15 and their difference")
    wait_answer(page)
    plan = page.locator("section.plan")
    sync_api.expect(plan).to_be_visible()
    tasks = plan.locator("li.task")
    assert tasks.count() >= 3
    assert plan.locator("li.task.completed").count() >= 2
    steps = page.locator(".activity-list").inner_text()
    assert "Task" in steps and "Plan" in steps
    retry = plan.get_by_role("button", name="Retry failed")
    failed = plan.locator("li.task.failed").count()
    if failed == 0:
        # The server ran the computation (code allowed here): nothing to retry.
        sync_api.expect(retry).to_be_disabled()
        return
    retry.click()
    sync_api.expect(page.locator(".msg.user").last).to_contain_text("retry:")
    reply = wait_answer(page)
    assert reply.inner_text().strip()
    assert page.locator(".msg.user").count() == 2


def _save_smoothing_pipeline(home: Path) -> str:
    """A saved pipeline with three fetches, a computation and a plot (as the CLI saves)."""
    steps = [
        PipelineStep(
            f"s00{i}",
            "fetch_data",
            {"dataset_id": ds, "parameter_id": p, "time_range": TIME_RANGE_VAR},
            f"Fetch {ds}",
            [f"{ds}.{p}"],
        )
        for i, (ds, p) in enumerate(
            (("AC_H1_MFI", "Magnitude"), ("WI_H0_MFI", "BF1"), ("OMNI_HRO_1MIN", "flow_speed")), 1
        )
    ]
    code = "result = df.rolling('1h').mean()"
    steps.append(
        PipelineStep(
            "s004",
            "custom_operation",
            {
                "source_labels": ["AC_H1_MFI.Magnitude"],
                "code": code,
                "output_label": "B_smooth",
                "description": "1-hour running mean",
            },
            "1-hour running mean of ACE |B|",
            ["B_smooth"],
            ["s001"],
        )
    )
    figure = {"data": [{"data_label": "B_smooth"}, {"data_label": "OMNI_HRO_1MIN.flow_speed"}]}
    steps.append(
        PipelineStep(
            "s005",
            "render_plotly_json",
            {"figure": figure},
            "Plot",
            [],
            ["s002", "s003", "s004"],
            phase="presentation",
        )
    )
    variables = {TIME_RANGE_VAR: PipelineVariable("time_range", "", "2024-01-15 to 2024-01-16")}
    pipeline = Pipeline(
        "pl_websmooth", "Solar wind smoothed", steps, "ACE, Wind and OMNI", variables
    )
    PipelineStore(load_settings(home=home)).save(pipeline, ["ace", "wind", "omni"])
    return pipeline.id


def test_pipelines_page_searches_draws_and_replays(page: sync_api.Page, served: Served):
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, ACE)
    wait_answer(page)
    ask(page, "save this as a pipeline called ACE overview")
    sync_api.expect(wait_answer(page)).to_contain_text("Saved pipeline")
    smooth = _save_smoothing_pipeline(served.home)

    page.click("#nav a[data-page='pipelines']")
    overview = page.locator(".pl-variant", has_text="ACE overview")
    sync_api.expect(overview).to_have_count(1)
    # Search covers indexed pipelines (3 fetches and a computation), grouped by family.
    page.fill("#pipeline-search", "running mean")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator(".pl-variant")).to_have_count(1)
    page.locator(f".pl-variant[data-id='{smooth}']").click()
    detail = page.locator("#pipeline-detail")
    sync_api.expect(detail.locator(".dag .dag-node")).to_have_count(5)
    assert detail.locator(".dag .dag-edge").count() == 4
    # Every node label fits inside its box (long tool names are shortened, not cut off).
    overflow = page.evaluate(
        """() => [...document.querySelectorAll('.dag-node')].flatMap((g) => {
          const box = g.querySelector('rect').getBBox();
          return [...g.querySelectorAll('text')]
            .filter((t) => t.getBBox().x + t.getBBox().width > box.x + box.width)
            .map((t) => t.textContent);
        })"""
    )
    assert overflow == []
    sync_api.expect(detail.locator("#pipeline-steps tbody tr")).to_have_count(5)
    sync_api.expect(detail.locator("figure.code")).to_contain_text("rolling('1h')")
    shot(page, "pipelines")
    with page.expect_download() as download:
        detail.get_by_role("button", name="Python script").click()
    assert "rolling" in Path(download.value.path() or "").read_text()

    page.fill("#pipeline-search", "")
    page.keyboard.press("Enter")
    overview.click()
    sync_api.expect(detail.locator(".dag .dag-node")).to_have_count(2)
    sync_api.expect(detail.locator("#pipeline-steps")).to_contain_text("fetch_data")
    # A time range the CLI would refuse is refused here, readably, before anything runs.
    page.fill("#replay-range", "2024-13-45")
    page.click("#replay")
    sync_api.expect(detail.locator(".message.error")).to_contain_text("month must be in 1..12")
    # Replay runs as a new session, followed live on the chat page.
    page.fill("#replay-range", "2024-01-20")
    page.click("#replay")
    page.wait_for_url(re.compile(r"/chat/s[0-9a-f]{32}$"))
    reply = wait_answer(page)
    assert re.search(r"(\d+) of \1 steps completed", reply.inner_text())
    sync_api.expect(page.locator(".activity-list")).to_contain_text("fetch_data")
    sync_api.expect(page.locator(".activity-list")).to_contain_text("2024-01-20")
    page.wait_for_selector("#figure .main-svg")
    sync_api.expect(page.locator(".figure-title")).to_contain_text("2024-01-20")
    sync_api.expect(page.locator(".session.current")).to_contain_text("pipeline ACE overview")
    shot(page, "pipeline-replayed")


def test_with_a_model_the_activity_shows_delegations_and_tokens_per_agent(
    browser: sync_api.Browser, tmp_path: Path
):
    """`xhelio serve` with XHELIO_MODEL at a scripted OpenAI-compatible server on loopback."""
    script = Script(ace_steps())
    info, frame = ace_week()
    with HapiTestServer() as hapi, OpenAIChatServer(script.http_reply) as chat:
        hapi.add_dataset("AC_H2_MFI", info, frame)
        env = {"XHELIO_MODEL": "openai-chat:scripted-llm", "OPENAI_BASE_URL": chat.base_url}
        with xhelio_serve(tmp_path, hapi, extra_env=env) as url:
            context = browser.new_context(viewport=VIEWPORT)
            context.set_default_timeout(SLOW)
            try:
                pg = context.new_page()
                pg.goto(url + "/")
                sync_api.expect(pg.locator("#mode-badge")).to_have_text("LLM")
                ask(pg, ACE_REQUEST)
                reply = wait_answer(pg)
                assert "ACE's magnetic field" in reply.inner_text()
                activity = pg.locator(".activity-list")
                sync_api.expect(activity.locator(".step.delegation").first).to_be_visible()
                sync_api.expect(activity).to_contain_text("AC_H2_MFI")
                pg.wait_for_selector("#figure .main-svg")
                # Tokens per agent, as the model server reported them.
                usage = pg.locator(".usage")
                usage.locator("summary").click()
                rows = usage.locator("tbody tr")
                sync_api.expect(rows.first).to_be_visible()
                agents = rows.locator("td:first-child").all_inner_texts()
                assert any("orchestrator" in a for a in agents), agents
                assert len(agents) >= 2, agents
                assert re.search(r"[1-9][\d,]* tokens", usage.locator(".usage-total").inner_text())
                shot(pg, "chat-llm")
            finally:
                context.close()
    assert script.left() == {}
