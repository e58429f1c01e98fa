"""Runs that survive: a request keeps running when the page that started it goes away.

Headless chromium against `xhelio serve` on loopback data (the set-up of test_web_app);
a slow data server keeps the request running while the page reloads or leaves.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.catalog_hapi import CatalogHapiServer
from test_web_app import SLOW, VIEWPORT, Served, ask, sync_api, wait_answer, xhelio_serve
from test_web_app import browser as browser  # the module-scoped chromium fixture


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("web-runs-home")
    with CatalogHapiServer() as hapi, xhelio_serve(home, hapi) as url:
        yield Served(url, home, hapi)


@pytest.fixture
def page(browser: sync_api.Browser, served: Served) -> Iterator[sync_api.Page]:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SLOW)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


def _start_slow_request(page: sync_api.Page, served: Served, day: str, delay_s: float = 6) -> None:
    """A request whose fetch waits on the data server (a day not cached by another test)."""
    served.hapi.fail_next("slow", endpoint="data", delay_s=delay_s)
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, f"Wind magnetic field magnitude for {day}")
    sync_api.expect(page.locator(".activity .step.tool.running")).to_have_count(1)


def _assert_finished_with_figure(page: sync_api.Page) -> None:
    reply = wait_answer(page)
    assert "WI_H0_MFI" in reply.inner_text() or "Wind" in reply.inner_text()
    assert "cancel" not in reply.inner_text().lower()
    page.wait_for_selector("#figure .main-svg")
    steps = page.locator(".activity-list").inner_text()
    assert "fetch_data" in steps and "render_plotly_json" in steps  # missed steps replayed
    assert page.locator(".msg.user").count() == 1


def test_a_reload_mid_run_reattaches_to_the_running_request(page: sync_api.Page, served: Served):
    _start_slow_request(page, served, "2024-02-01")
    page.reload()
    # The reloaded page is busy again: it follows the request the reload did not stop.
    sync_api.expect(page.locator("#cancel")).to_be_visible()
    _assert_finished_with_figure(page)
    served.hapi.clear_faults()


def test_leaving_the_chat_page_mid_run_does_not_stop_it(page: sync_api.Page, served: Served):
    _start_slow_request(page, served, "2024-02-02")
    page.click("#nav a[data-page='data']")
    page.wait_for_selector("#missions")
    page.click("#nav a[data-page='chat']")
    # Back on the chat page, it follows the request again once the session has loaded.
    sync_api.expect(page.locator("#cancel")).to_be_visible()
    _assert_finished_with_figure(page)
    served.hapi.clear_faults()


def test_cancel_after_a_reload_still_stops_the_request(page: sync_api.Page, served: Served):
    _start_slow_request(page, served, "2024-02-03", delay_s=30)
    page.reload()
    sync_api.expect(page.locator(".activity .step.tool.running")).to_have_count(1)
    page.click("#cancel")
    reply = wait_answer(page)
    assert "cancel" in reply.inner_text().lower()
    served.hapi.clear_faults()


def test_the_welcome_gains_the_offline_sentence_when_status_answers_late(
    page: sync_api.Page, served: Served
):
    held: list[sync_api.Route] = []
    page.route("**/api/v1/status", lambda route: held.append(route))  # a cold server

    page.goto(served.url + "/")
    page.click("#new-session")
    welcome = page.locator(".welcome")
    sync_api.expect(welcome).to_contain_text("Ask for heliophysics data")
    assert held and "offline mode" not in welcome.inner_text()
    for route in held:
        route.continue_()
    sync_api.expect(welcome).to_contain_text("offline mode")
