"""Fonts that travel: the pages ship their fonts and draw the same boxes on any machine.

Every browser test in tests/web/ runs in a Chromium that cannot see the host's fonts (the
``browser`` fixture: fontconfig knows only a one-glyph placeholder, see harness.py). These tests
add the proof: Chromium itself reports that every glyph was drawn with a font the page ships,
the layout is the same box for box with and without the host's fonts, and no text is clipped
(the bets panel's EDGE column was cut to "EDG" with DejaVu Sans).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shoe_daemon import web
from tests.web.harness import (
    HOST_FONT_DIRS,
    PLACEHOLDER_FAMILY,
    launch_with_host_fonts,
    open_display,
)
from tests.web.pagecheck import (
    SHIPPED_FAMILIES,
    assert_own_fonts,
    clipped_text,
    layout,
    layout_differences,
    rendered_fonts,
)
from tests.web.test_display import assert_badges_readable, wait_roads

SIZES = ((1920, 1080), (800, 480))


def test_the_fonts_are_vendored_with_their_licences_and_declared_without_local_sources():
    static = web.static_dir()
    css = (static / "fonts.css").read_text()
    urls = re.findall(r"url\(([^)]+)\)", css)
    assert len(urls) == 4
    for url in urls:
        path = static / url.strip("'\"")
        assert path.is_file() and path.suffix == ".woff2", url
        assert path.read_bytes()[:4] == b"wOF2", url
    assert "local(" not in css                     # never a host font, even one of the same name
    assert css.count("font-display: block") == 4   # never laid out in a fallback first
    for licence in ("inter.LICENSE.txt", "noto-sans-symbols-2.LICENSE.txt"):
        assert "SIL Open Font License, Version 1.1" in (static / "vendor" / licence).read_text()
    for page in ("index.html",):
        html = (static / page).read_text()
        assert html.index('href="fonts.css"') < html.index('href="style.css"')


def _ready(page, session) -> None:
    wait_roads(page, session.last("roads")["seq"])
    page.wait_for_selector("#alert-banner:not([hidden])", timeout=5000)
    page.wait_for_function("() => document.querySelectorAll('#coup .src-badge').length === 2", timeout=5000)


def test_every_glyph_is_drawn_with_the_pages_own_fonts(rich_display, browser):
    server, session = rich_display.server, rich_display.session
    for width, height in SIZES:
        page = open_display(browser, server.url + "?profile=pit", width=width, height=height)
        _ready(page, session)
        fonts = assert_own_fonts(page)
        assert fonts["Noto Sans Symbols 2"]["glyphs"] > 0      # the suits of the cards
        assert clipped_text(page) == [], (width, height)
        assert_badges_readable(page)
        assert page.js_errors == []


def test_the_fixture_browser_really_cannot_see_the_hosts_fonts(browser):
    """Text in a font the page does not ship falls to the placeholder: the hiding works."""
    context = browser.new_context()
    page = context.new_page()
    page.set_content('<p id="p" style="font-family: sans-serif">Host font?</p>')
    fonts = rendered_fonts(page)
    assert set(fonts) == {PLACEHOLDER_FAMILY}, fonts
    assert not set(fonts) & SHIPPED_FAMILIES
    context.close()


def test_the_display_draws_the_same_boxes_with_and_without_the_hosts_fonts(rich_display, browser, tmp_path):
    server, session = rich_display.server, rich_display.session
    host = launch_with_host_fonts(browser, tmp_path)
    probe = host.new_page()
    probe.set_content('<p style="font-family: sans-serif">Host font?</p>')
    host_families = set(rendered_fonts(probe))
    probe.context.close()
    if any(Path(d).expanduser().is_dir() and any(Path(d).expanduser().rglob("*.[ot]tf")) for d in HOST_FONT_DIRS):
        assert host_families - {PLACEHOLDER_FAMILY}, "the second browser should see the host's fonts"
    print(f"\nhost fonts seen by the comparison browser: {sorted(host_families)}")
    try:
        for width, height in SIZES:
            hidden = open_display(browser, server.url + "?profile=pit", width=width, height=height)
            shown = open_display(host, server.url + "?profile=pit", width=width, height=height)
            for page in (hidden, shown):
                _ready(page, session)
            a, b = layout(hidden), layout(shown)
            assert len(a) > 300
            diffs = layout_differences(a, b)
            assert diffs == [], "\n".join([str((width, height))] + diffs)
            assert clipped_text(shown) == []
            bets = hidden.eval_on_selector_all(".bets th", "ths => ths.map(t => t.textContent)")
            assert bets == ["BET", "LIMITS", "WIN", "EDGE"]
            for page in (hidden, shown):
                page.context.close()
    finally:
        host.close()


@pytest.fixture(autouse=True)
def _close_contexts(browser):
    yield
    for context in list(browser.contexts):
        context.close()
