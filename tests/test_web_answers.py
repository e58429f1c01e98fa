"""Answers that read like science, in the page: the short answer first, the log in the activity.

Headless chromium against `xhelio serve` on loopback data (the set-up of test_web_app);
a screenshot of the chat goes to $XHELIO_WEB_SHOTS when it is set.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from servers.catalog_hapi import CatalogHapiServer
from test_web_app import SLOW, VIEWPORT, Served, ask, shot, sync_api, wait_answer, xhelio_serve
from test_web_app import browser as browser  # the module-scoped chromium fixture


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("web-answers-home")
    with CatalogHapiServer() as hapi, xhelio_serve(home, hapi) as url:
        yield Served(url, home, hapi)


def test_the_answer_opens_with_the_short_answer_and_the_log_is_in_the_activity(
    browser: sync_api.Browser, served: Served
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(SLOW)
    page = context.new_page()
    try:
        page.goto(served.url + "/")
        page.click("#new-session")
        ask(page, "ACE magnetic field magnitude for 2024-01-15 to 2024-01-16")
        reply = wait_answer(page)
        first = reply.locator(".msg-text > *").first
        sync_api.expect(first).to_have_class("answer-short")
        short = first.inner_text()
        assert short.startswith("Plotted ACE magnetic field"), short
        assert "2024-01-15 to 2024-01-16" in short and " nT (" in short and "mean" in short
        text = reply.inner_text()
        assert "Fetched" not in text and "Offline mode understood" not in text
        assert "T00:00:00Z" not in text
        details = page.locator(".activity .step.detail")
        sync_api.expect(details.first).to_be_visible()
        assert any("Fetched ACE magnetic field" in t for t in details.all_inner_texts())
        page.wait_for_selector("#figure .main-svg")
        title = page.locator("#figure .gtitle").first.text_content() or ""
        assert "2024-01-15 to 2024-01-16" in title, title
        shot(page, "chat-answer")
        page.reload()  # the conversation as saved reads as it did live
        again = page.locator(".msg.assistant .msg-text > *").first
        sync_api.expect(again).to_have_class("answer-short")
        assert again.inner_text() == short
    finally:
        context.close()
