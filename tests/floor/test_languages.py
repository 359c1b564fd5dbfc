"""The floor's pages in English, Russian, Bulgarian and Finnish, as the display speaks them.

The floor uses the display's catalogues (shoe_daemon/web/static/i18n, served at /i18n/) and its
common.js. Each page (the floor, a table's drill-down with a voided coup, the recall) renders in
every language in the tests' Chromium that sees none of the host's fonts, at 1920x1080 and
1280x800, with no clipped text and only the shipped fonts; ``?lang=`` picks the language,
otherwise the floor's ``[http] lang``.
"""

from __future__ import annotations

import json
import re
import secrets

import httpx
import pytest

from shoe_daemon import web
from shoe_daemon.emulator import Faults
from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import TableRig, floor_config
from tests.support.mosquitto import MosquittoServer
from tests.support.waiting import wait_until
from tests.web.harness import browser_session, wait_fonts
from tests.web.pagecheck import assert_own_fonts, clipped_text

LANGS = ("en", "ru", "bg", "fi")
FLOOR_STATIC = web.static_dir().parent.parent / "floor" / "static"
SUPERVISOR = "sup-" + secrets.token_hex(16)


def catalogue(lang: str) -> dict[str, str]:
    return json.loads((web.static_dir() / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def test_every_value_the_floor_words_has_a_key_in_every_language():
    """The words the floor looks up by value (floor.js ``word(prefix, value)``) exist everywhere."""
    families = {"floor.count.": ("tables", "online", "held", "alerts", "coups"),
                "floor.state.": ("online", "offline"), "floor.gap.": ("open", "filled", "unfillable"),
                "floor.action.": ("raised", "acknowledged", "cleared"),
                "floor.severity.": ("info", "warning", "error", "critical"),
                "floor.col.": ("table", "shoe", "coup", "time", "winner", "punto", "banco", "settlement", "alert",
                               "kind", "severity", "action", "by", "reason", "state", "version", "from", "to",
                               "recalled", "error"),
                "common.": ("punto", "banco", "tie")}
    js = (FLOOR_STATIC / "floor.js").read_text()
    for prefix in families:
        assert f'"{prefix}' in js, prefix
    for lang in LANGS:
        cat = catalogue(lang)
        missing = [p + v for p, values in families.items() for v in values if p + v not in cat]
        assert not missing, (lang, missing)
        floor_keys = [k for k in cat if k.startswith("floor.")]
        assert len(floor_keys) >= 60, lang
    # Translated, not copied: the words differ from English where they should.
    en = catalogue("en")
    for lang in ("ru", "bg", "fi"):
        cat = catalogue(lang)
        for key in ("floor.title", "floor.held", "floor.section.actions", "floor.col.time"):
            assert cat[key] != en[key], (lang, key)


def test_the_floor_pages_ask_only_for_keys_of_the_catalogue():
    en = catalogue("en")
    used = set()
    for name in ("floor.js", "floor.html", "table.html", "recall.html"):
        text = (FLOOR_STATIC / name).read_text()
        used |= set(re.findall(r"""\bt\("([a-z][\w.]*)["]""", text))
        used |= set(re.findall(r'data-i18n(?:-placeholder|-title)?="([^"]+)"', text))
        used |= set(re.findall(r'data-title="([^"]+)"', text))
    used = {k for k in used if not k.endswith(".")}
    assert len(used) > 25 and not used - set(en), sorted(used - set(en))


@pytest.fixture(scope="module")
def floor_site(tmp_path_factory):
    """Three tables dealt to the end (one with every coup held by an extra card), a void after
    settlement on another, and the floor with its page (``[http] lang = "fi"``)."""
    tmp = tmp_path_factory.mktemp("floor-langs")
    broker = MosquittoServer().start()
    rigs = []
    floor = None
    try:
        for i, tid in enumerate(("f1", "f2", "f3"), 1):
            rig = TableRig(tmp, tid, broker_port=broker.port, coups=5, pace=0.01, seed=40 + i,
                           tokens=[{"user": "maría", "role": "supervisor", "token": SUPERVISOR}])
            if tid == "f3":
                rig.shoe = type(rig.shoe)(decks=8, seed=43, pace=0.01, link=str(rig.dir / "shoe"), coups=5,
                                          faults=Faults(extra_card=1.0))
            rigs.append(rig.start())
        url = f"sqlite:///{tmp / 'floor.sqlite3'}"
        cfg = load_floor_config(floor_config(tmp / "floor.toml", broker_port=broker.port, database=url,
                                             tables=rigs, http_port=0, lang="fi"))
        floor = FloorService(cfg).start()
        for r in rigs[:2]:
            r.deal()
        for r in rigs[:2]:
            r.wait_done()
        rigs[2].deal()
        last = rigs[0].results()[-1]
        r = httpx.post(rigs[0].api_url + "/coup/void", json={"coup_id": last["coup_id"], "reason": "väärä jako"},
                       headers={"Authorization": f"Bearer {SUPERVISOR}"}, timeout=10)
        assert r.status_code == 200, r.text
        store = Store.open(url)
        wait_until(lambda: store.count("voids") == 1 and store.count("coups", "WHERE voided = 1") == 1, 30,
                   "the void at the floor")
        wait_until(lambda: json.loads(httpx.get(floor.url + "/api/floor").text)["counts"]["held"] == 1, 30,
                   "the held coup")
        store.close()
        yield floor, last
    finally:
        for r in rigs:
            r.stop()
        if floor is not None:
            floor.stop()
        broker.cleanup()


@pytest.fixture(scope="module")
def browser():
    with browser_session(hide_host_fonts=True) as b:
        yield b


def _open(browser, url: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    page.goto(url)
    wait_fonts(page)
    return page


@pytest.mark.parametrize("lang", LANGS)
def test_the_floor_in_each_language_has_no_clipped_text(floor_site, browser, lang):
    floor, voided = floor_site
    cat = catalogue(lang)
    for width, height in ((1920, 1080), (1280, 800)):
        page = _open(browser, f"{floor.url}/?lang={lang}", width, height)
        page.wait_for_function("document.querySelectorAll('article.tile').length === 3", timeout=10_000)
        assert page.get_attribute("html", "lang") == lang
        assert page.inner_text("header h1") == cat["floor.title"]
        assert page.inner_text("article.tile[data-table=f3] .badge") == cat["floor.held"]
        assert page.inner_text("[data-count=online]").startswith(cat["floor.count.online"])
        assert page.get_attribute("article.tile", "data-table") == "f3"          # the held coup first
        assert page.get_attribute("a[data-nav='/recall']", "href").endswith(f"lang={lang}")
        assert clipped_text(page) == [], (lang, width, "/")
        assert_own_fonts(page)
        page.click("article.tile[data-table=f1] a.id")                     # the drill-down keeps the language
        page.wait_for_selector(f"tr[data-coup-id='{voided['coup_id']}'] .void", timeout=10_000)
        page.wait_for_function("document.querySelector('#alerts td') !== null", timeout=10_000)
        assert page.get_attribute("html", "lang") == lang
        assert page.inner_text(f"tr[data-coup-id='{voided['coup_id']}'] .void") == \
            cat["floor.void_by"].format(by="maría", reason="väärä jako")
        assert page.inner_text("#title") == cat["floor.table_title"].format(table="f1")
        assert cat["floor.action.raised"] in page.inner_text("#alerts")
        assert cat["alert.coup_voided"] in page.inner_text("#actions")
        assert clipped_text(page) == [], (lang, width, "/table/f1")
        page.goto(f"{floor.url}/recall?table=f3&lang={lang}")
        page.wait_for_function("document.body.dataset.results !== undefined", timeout=10_000)
        assert page.inner_text("#query button") == cat["floor.recall.go"]
        assert page.inner_text("#results th:nth-child(4)") == cat["floor.col.winner"]
        assert "lang=" + lang in page.url
        assert clipped_text(page) == [], (lang, width, "/recall")
        assert_own_fonts(page)
        assert page.js_errors == []
        page.context.close()


def test_the_floor_takes_its_language_from_the_configuration(floor_site, browser):
    floor, _ = floor_site
    page = _open(browser, floor.url + "/", 1280, 800)           # [http] lang = "fi"
    page.wait_for_function("document.querySelectorAll('article.tile').length === 3", timeout=10_000)
    assert page.get_attribute("html", "lang") == "fi"
    assert page.inner_text("header h1") == "SALI"
    assert httpx.get(floor.url + "/i18n/xx.json").status_code == 404
    page.context.close()
