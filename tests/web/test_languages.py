"""The display and the console in English, Russian, Bulgarian and Finnish.

One catalogue per language (shoe_daemon/web/static/i18n/<lang>.json). Every key exists in every
language with the same placeholders, every character is one the shipped fonts draw, and every
language renders in Chromium (display at 1920x1080 and 800x480, console at 800x480 and
1280x800) with no clipped text: each text element's scroll width within its box, nothing cut by
a box that clips.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from shoe_daemon import web
from tests.web.harness import (
    SCREENSHOTS,
    DisplayServer,
    open_display,
)
from tests.web.pagecheck import assert_own_fonts, clipped_text, small_targets
from tests.web.test_console import DEALER, TABLET, console_stack, hold_a_coup, open_console, wait_coup
from tests.web.test_display import wait_roads

LANGS = ("en", "ru", "bg", "fi")
I18N = web.static_dir() / "i18n"

# What fonts.css declares (Inter: Latin, Latin Extended, Cyrillic; Noto Sans Symbols 2: shapes, suits).
FONT_RANGES = [(0x0020, 0x00FF), (0x0100, 0x02BA), (0x0400, 0x045F), (0x2000, 0x206F), (0x20AC, 0x20AC),
               (0x25A0, 0x25FF), (0x2660, 0x2667), (0x26A0, 0x26A0), (0x2713, 0x2718)]


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((I18N / f"{lang}.json").read_text(encoding="utf-8"))


def placeholders(text: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", text))


def test_every_key_exists_in_every_language_with_the_same_placeholders():
    assert sorted(p.stem for p in I18N.glob("*.json")) == sorted(LANGS)
    en = catalogue("en")
    assert len(en) > 150
    for lang in LANGS:
        cat = catalogue(lang)
        assert set(cat) == set(en), (lang, sorted(set(en) ^ set(cat)))
        for key, text in cat.items():
            assert isinstance(text, str) and text.strip(), (lang, key)
            assert placeholders(text) == placeholders(en[key]), (lang, key, text)
    # The languages differ where they should (not English copied over).
    for lang in ("ru", "bg", "fi"):
        cat = catalogue(lang)
        assert cat["console.held.supervisor_only"] != en["console.held.supervisor_only"], lang
        assert cat["display.place_bets"] != en["display.place_bets"], lang


def test_every_character_of_every_catalogue_is_drawn_by_the_shipped_fonts():
    for lang in LANGS:
        for key, text in catalogue(lang).items():
            for ch in text:
                assert any(lo <= ord(ch) <= hi for lo, hi in FONT_RANGES), (lang, key, ch, hex(ord(ch)))


def test_the_pages_use_no_string_outside_the_catalogue():
    """Every key the scripts ask for is in the catalogue (a typo would show the key itself): the
    display's, the console's and the floor's pages."""
    en = catalogue("en")
    static = web.static_dir()
    used = set()
    floor = static.parent.parent / "floor" / "static"        # the floor's pages use these catalogues too
    for path in [*(static / n for n in ("app.js", "console.js", "index.html", "console.html")),
                 *(floor / n for n in ("floor.js", "floor.html", "table.html", "recall.html"))]:
        text = path.read_text()
        used |= set(re.findall(r"""\bt\("([a-z][\w.]*)["]""", text))
        used |= set(re.findall(r'data-i18n(?:-placeholder|-title)?="([^"]+)"', text))
    used = {k for k in used if not k.endswith(".")}
    assert used and not used - set(en), sorted(used - set(en))


# --------------------------------------------------------------------------- the display


@pytest.mark.parametrize("lang", LANGS)
def test_the_display_in_each_language_has_no_clipped_text(rich_display, browser, lang):
    server, session = rich_display.server, rich_display.session
    cat = catalogue(lang)
    for width, height in ((1920, 1080), (800, 480)):
        page = open_display(browser, f"{server.url}?profile=pit&lang={lang}", width=width, height=height)
        wait_roads(page, session.last("roads")["seq"])
        page.wait_for_function("() => document.querySelectorAll('#coup .src-badge').length === 2", timeout=5000)
        page.wait_for_selector("#alert-banner:not([hidden])", timeout=5000)
        assert page.get_attribute("html", "lang") == lang
        assert page.inner_text("#bet-banco .bet-name") == cat["common.banco"]
        assert page.inner_text(".bets th:nth-child(4)") == cat["display.edge"]
        assert page.inner_text("#cards-punto .src-badge") == cat["display.badge.manual"]
        assert page.inner_text("#alert-kind") == cat["alert.card_unreadable"]
        assert clipped_text(page) == [], (lang, width, height)
        assert_own_fonts(page)
        assert page.js_errors == []
        if os.environ.get("UPDATE_SCREENSHOTS") == "1" and lang != "en" and width == 800:
            page.screenshot(path=str(SCREENSHOTS / f"display-800x480-{lang}.png"))
        page.context.close()


def test_the_display_takes_its_language_from_the_configuration(rich_display, browser):
    config = rich_display.config
    config = config.model_copy(update={"display": config.display.model_copy(update={"lang": "fi"})})
    server = DisplayServer(config, ws_url=rich_display.ws_url).start()
    try:
        page = open_display(browser, server.url, width=800, height=480)     # [display] lang = "fi"
        assert page.get_attribute("html", "lang") == "fi"
        assert page.inner_text("#bet-tie .bet-name") == "TASAPELI"
        page.context.close()
        page = open_display(browser, f"{server.url}?lang=en", width=800, height=480)   # ?lang= wins
        assert page.get_attribute("html", "lang") == "en"
        page.context.close()
    finally:
        server.stop()


# --------------------------------------------------------------------------- the console


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with console_stack(tmp_path_factory, "console-lang") as s:
        yield s


def check_console(page, lang: str, where: str) -> None:
    problems = clipped_text(page)
    assert problems == [], (lang, where, problems)
    assert small_targets(page) == [], (lang, where)
    assert_own_fonts(page)


def test_the_console_in_each_language_has_no_clipped_text(stack, browser):
    coup_id = stack.open_coup()
    stack.deal("2S", "9H", "3C", "KD", unreadable=(1,))            # a card awaited
    for lang in LANGS:
        cat = catalogue(lang)
        page = open_console(browser, stack, "dealer", DEALER, lang=lang)
        wait_coup(page, coup_id, "awaiting")
        assert page.get_attribute("html", "lang") == lang
        assert page.inner_text("#enter-card") == cat["console.picker.enter"]
        check_console(page, lang, "awaiting")
        page.context.close()
    stack.post("/coup/card", {"card": "9H", "reason": "typed"}, "dealer")
    held = hold_a_coup(stack)                                       # a held coup, an alert
    for lang in LANGS:
        cat = catalogue(lang)
        for role, size in (("dealer", DEALER), ("supervisor", TABLET)):
            page = open_console(browser, stack, role, size, lang=lang)
            wait_coup(page, held, "held")
            assert page.inner_text("#held-void") == cat["console.held.void"]
            check_console(page, lang, f"{role} held")
            if os.environ.get("UPDATE_SCREENSHOTS") == "1" and lang != "en" and role == "dealer":
                page.screenshot(path=str(SCREENSHOTS / f"console-800x480-held-{lang}.png"))
            page.click("#held-correct")                             # the biggest sheet: cards, rank, suit, reasons
            page.wait_for_selector("#reason-sheet:not([hidden])")
            check_console(page, lang, f"{role} correct sheet")
            page.click("#reason-cancel")
            for tab in ("bets", "alerts", "recall", "shoe"):
                page.click(f".tab[data-tab={tab}]")
                page.wait_for_selector(f"#pane-{tab}:not([hidden])")
                page.wait_for_timeout(150)                          # its GETs answered
                check_console(page, lang, f"{role} {tab}")
            assert page.js_errors == []
            page.context.close()
    stack.post("/coup/void", {"reason": "language test done"}, "supervisor")


@pytest.fixture(autouse=True)
def _close_contexts(browser):
    yield
    for context in list(browser.contexts):
        context.close()
