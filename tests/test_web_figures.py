"""Figures in the web app that behave (issue 26).

Zoom kept only for the same figure, a figure sized to its box with a maximise button,
no cloud/share buttons, unified hover.

Same set-up as test_web_app: `xhelio serve` on loopback with the catalog test HAPI server,
headless Debian chromium driven by Playwright, offline mode.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd
import pytest

from test_web_app import ACE, SLOW, ask, browser, page, served, shot, sync_api, wait_answer

__all__ = ["browser", "page", "served"]  # the fixtures, shared with test_web_app

OMNI = "OMNI solar wind speed for 2024-01-15"
FIG = "document.getElementById('figure')"


@contextmanager
def _sized_page(
    browser: sync_api.Browser, viewport: dict[str, int], **options: Any
) -> Iterator[sync_api.Page]:
    """A page in its own browser context of the given size, closed afterwards."""
    context = browser.new_context(viewport=viewport, **options)  # type: ignore[arg-type]
    context.set_default_timeout(SLOW)
    try:
        yield context.new_page()
    finally:
        context.close()


def _zoom(page: sync_api.Page) -> list[str]:
    plot = page.locator("#figure .nsewdrag").first
    box = plot.bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + box["width"] * 0.3, y)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, y, steps=5)
    page.mouse.up()
    zoomed = page.evaluate(f"{FIG}.layout.xaxis.range")
    assert zoomed
    return zoomed


def test_a_new_unrelated_figure_opens_at_its_own_full_range(page: sync_api.Page, served):
    page.goto(served.url + "/")
    ask(page, ACE)
    wait_answer(page)
    page.wait_for_selector("#figure .main-svg")
    first = page.evaluate(f"{FIG}.layout.uirevision")
    zoomed = _zoom(page)
    ask(page, OMNI)
    wait_answer(page)
    page.wait_for_function(f"{FIG}.layout.uirevision !== {first!r}", timeout=SLOW)
    shown = page.evaluate(f"{FIG}._fullLayout.xaxis.range")
    assert shown != zoomed
    # The new figure spans its data: its x range covers the first and last sample.
    x = page.evaluate(f"{FIG}.data[0].x")
    # Plotly writes range ends in its own short forms ("2024-01-15", "2024-01-15 23:59").
    start, end, first_x, last_x = (pd.Timestamp(t) for t in (*shown, x[0], x[-1]))
    assert start <= first_x and end >= last_x


def test_the_figure_fits_its_box_and_shows_no_cloud_buttons(page: sync_api.Page, served):
    page.goto(served.url + "/")
    ask(page, ACE)
    wait_answer(page)
    page.wait_for_selector("#figure .main-svg")
    # Unified hover across traces, and the modebar has no share/cloud/edit buttons.
    assert page.evaluate(f"{FIG}.layout.hovermode") == "x unified"
    context = page.evaluate(
        f"({{logo: {FIG}._context.displaylogo, link: {FIG}._context.showLink,"
        f" cloud: {FIG}._context.showSendToCloud, edit: {FIG}._context.showEditInChartStudio}})"
    )
    # plotly.js 4 dropped the link/edit options; whatever the version, none is on.
    assert context["logo"] is False and not any(context.values())
    page.hover("#figure .nsewdrag")
    titles = page.eval_on_selector_all(
        "#figure .modebar-btn", "bs => bs.map(b => b.getAttribute('data-title') || '')"
    )
    assert titles and not [t for t in titles if "cloud" in t.lower() or "chart studio" in t.lower()]
    assert page.locator("#figure .modebar-btn[data-title*='plotly' i]").count() == 0
    # The figure fills its box: the plot is as tall as the space under the figure bar.
    room = page.evaluate(f"{FIG}.clientHeight")
    drawn = page.evaluate(f"{FIG}._fullLayout.height")
    assert room - 20 <= drawn <= room
    # Maximise: the figure takes the window and is redrawn to it; Escape restores it.
    page.click(".figure-bar .maximise")
    page.wait_for_function(f"{FIG}._fullLayout.height > {drawn} + 100")
    shot(page, "chat-figure-maximised")
    page.keyboard.press("Escape")
    page.wait_for_function(f"{FIG}._fullLayout.height <= {room}")


@pytest.mark.parametrize("viewport", [{"width": 700, "height": 800}])
def test_long_legend_names_go_under_the_plot(
    browser: sync_api.Browser, served, viewport: dict[str, int]
):
    with _sized_page(browser, viewport=viewport) as pg:
        pg.goto(served.url + "/")
        ask(pg, "Plot ACE magnetic field components in GSE for 2024-01-15")
        wait_answer(pg)
        pg.wait_for_selector("#figure .main-svg")
        legend = pg.evaluate(f"{FIG}._fullLayout.legend")
        plot_width = pg.evaluate(f"{FIG}._fullLayout._size.w")
        width = pg.evaluate(f"{FIG}._fullLayout.width")
        # Either the legend is beside a plot that keeps most of the width, or below it.
        assert legend["orientation"] == "h" or plot_width > 0.7 * width


PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
PAGES = ["/data", "/pipelines", "/gallery", "/memory", "/settings", "/no-such-page"]


def _no_sideways_scroll(pg: sync_api.Page) -> None:
    width = pg.evaluate("window.innerWidth")
    assert pg.evaluate("document.documentElement.scrollWidth") <= width + 1
    wide = pg.evaluate(
        """() => [...document.querySelectorAll('#page *')]
          .filter(e => e.offsetParent && e.getBoundingClientRect().right > window.innerWidth + 2
                       && getComputedStyle(e).position !== 'fixed')
          .filter(e => !e.closest('.table-scroll, pre, .figure-plot, .viewer-plot, .js-plotly-plot,'
                                  + ' .session-list'))
          .map(e => e.tagName + '.' + e.className).slice(0, 5)"""
    )
    assert not wide, f"content wider than the screen: {wide}"


def test_phone_layout_collapses_the_sidebar_and_gives_chat_the_width(
    browser: sync_api.Browser, served
):
    with _sized_page(browser, viewport=PHONE, is_mobile=True, has_touch=True) as pg:
        pg.goto(served.url + "/")
        drawer = pg.locator("#nav-drawer")
        sync_api.expect(drawer).to_be_hidden()
        shot(pg, "phone-chat-empty")
        ask(pg, ACE)
        wait_answer(pg)
        pg.wait_for_selector("#figure .main-svg")
        for selector in ("#figure", ".conversation", ".composer"):
            box = pg.locator(selector).bounding_box()
            assert box is not None and box["width"] >= PHONE["width"] - 40, selector
        assert pg.evaluate(f"{FIG}._fullLayout.width") >= PHONE["width"] - 40
        _no_sideways_scroll(pg)
        shot(pg, "phone-chat-figure")
        # The menu opens the drawer (pages and sessions); choosing a page closes it.
        pg.click("#nav-toggle")
        sync_api.expect(drawer).to_be_visible()
        sync_api.expect(pg.locator("#sessions .session")).not_to_have_count(0)
        shot(pg, "phone-menu")
        pg.click("#nav a[data-page='data']")
        sync_api.expect(drawer).to_be_hidden()
        for path in PAGES:
            pg.goto(served.url + path)
            pg.wait_for_load_state("networkidle")
            _no_sideways_scroll(pg)
            shot(pg, "phone-" + (path.strip("/") or "chat"))


def test_desktop_pages_fit_and_an_unknown_url_shows_a_page(page: sync_api.Page, served):
    for path in PAGES:
        page.goto(served.url + path)
        page.wait_for_load_state("networkidle")
        _no_sideways_scroll(page)
        shot(page, "desktop-" + path.strip("/"))
    sync_api.expect(page.locator("#page h1")).to_have_text("Page not found")
    assert page.locator("#nav-drawer").is_visible()


def test_the_data_page_fetches_from_a_chosen_source(page: sync_api.Page, served):
    page.goto(served.url + "/data")
    source = page.locator("#fetch-source")
    sync_api.expect(source.locator("option[value='cdf']")).to_have_count(1)
    sync_api.expect(source.locator("option[value='hapi']")).to_have_count(1)
    assert source.input_value() == "hapi"  # the server's default source is preselected
    page.locator("#missions li", has_text="ACE").first.click()
    page.locator("#datasets li[data-id='AC_H1_MFI']").click()
    page.locator("table.params tr", has_text="Magnitude").first.click()
    page.fill("#time-range", "2024-01-15T00:00 to 2024-01-15T02:00")
    with page.expect_request(lambda r: r.url.endswith("/fetch/stream")) as sent:
        page.click("#fetch")
    assert sent.value.post_data_json["source"] == "hapi"
    sync_api.expect(page.locator(".fetch-message")).to_contain_text("Fetched AC_H1_MFI.Magnitude")
    # Every citation the entry has is shown with its PI/DOI when the catalog knows them.
    sync_api.expect(page.locator("#entry-view .citation")).to_contain_text("Data: AC_H1_MFI")
    shot(page, "desktop-data-fetched")


def test_gallery_cards_show_thumbnails(page: sync_api.Page, served):
    page.goto(served.url + "/")
    page.click("#new-session")
    ask(page, ACE)
    wait_answer(page)
    page.click("#nav a[data-page='gallery']")
    thumb = page.locator(".gallery-grid .card .thumb img").first
    sync_api.expect(thumb).to_have_attribute("src", re.compile(r"^data:image/png;base64,"))
    assert page.evaluate("(img) => img.naturalWidth", thumb.element_handle()) > 100
    shot(page, "desktop-gallery-thumbnails")
    page.locator(".gallery-grid .card .thumb").first.click()
    page.wait_for_selector(".viewer-plot .main-svg")
    sync_api.expect(page.locator(".citations")).to_contain_text("Data: AC_")
    shot(page, "desktop-gallery-open")


TWO_LONG = "OMNI Bz GSM and flow pressure 2015-03-17, with a 30-min running mean"
_Y_TITLES = """() => {
  const fig = document.getElementById('figure');
  return Object.keys(fig._fullLayout).filter((k) => /^yaxis\\d*$/.test(k)).map((k) => {
    const text = fig.querySelector(`.g-y${k.slice(5)}title text`);
    return [text ? text.getBoundingClientRect().height : 0, fig._fullLayout[k]._length,
            text ? text.textContent : ''];
  });
}"""


@pytest.mark.parametrize("viewport", [PHONE, {"width": 1400, "height": 900}])
def test_each_y_axis_title_fits_its_panel_and_keeps_its_unit(
    browser: sync_api.Browser, served, viewport: dict[str, int]
):
    with _sized_page(browser, viewport=viewport) as pg:
        pg.goto(served.url + "/")
        ask(pg, TWO_LONG)
        wait_answer(pg)
        pg.wait_for_selector("#figure .main-svg")
        titles = pg.evaluate(_Y_TITLES)
        assert len(titles) == 2
        for drawn, panel, text in titles:
            assert 0 < drawn <= panel + 2, f"{text!r}: {drawn} px along a {panel} px panel"
            assert re.search(r"\((nT|nPa)\)$", text), text
        shot(pg, f"two-panels-{viewport['width']}")
