"""The console in Chromium against a real daemon: its API (tokens, roles, audit log), its stream.

One daemon per module (``tests/api/harness.Stack``: an emulated shoe whose cards the tests
choose, real Mosquitto, the HTTP API on a free port), with a websockets listener on its broker
so the display can watch the same table. The console is the one the daemon serves at
``/console/``; a person's taps are Playwright clicks at 800x480 (the dealer's touch screen) and
1280x800 (the supervisor's tablet). Screenshots for docs/console.md go to docs/screenshots/ with
UPDATE_SCREENSHOTS=1.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

import tests.api.harness as api_harness
from tests.support.mosquitto import MosquittoServer, free_port
from tests.web.harness import wait_fonts
from tests.web.pagecheck import assert_own_fonts, clipped_text, small_targets

DEALER = (800, 480)
TABLET = (1280, 800)


class _WsMosquitto(MosquittoServer):
    """The Stack's broker, with a websockets listener for the display."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("websockets_port", free_port())
        super().__init__(*args, **kwargs)


@contextlib.contextmanager
def console_stack(tmp_path_factory, name: str):
    """The API's Stack (daemon, emulated shoe, Mosquitto) with a websockets listener on its broker."""
    mp = pytest.MonkeyPatch()
    mp.setattr(api_harness, "MosquittoServer", _WsMosquitto)
    s = api_harness.Stack(tmp_path_factory.mktemp(name))
    try:
        s.start()
        yield s
    finally:
        s.stop()
        mp.undo()


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with console_stack(tmp_path_factory, "console") as s:
        yield s


def shot(page, directory: Path, name: str) -> None:
    path = directory / name
    page.screenshot(path=str(path))
    assert 5_000 < path.stat().st_size < 500 * 1024, name


def open_console(browser, stack, role: str | None, size=DEALER, lang: str | None = None):
    """The console signed in with ``role``'s token from a kiosk URL (#token=...), live on the stream."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, device_scale_factor=1,
                                  reduced_motion="reduce", has_touch=True)
    page = context.new_page()
    page.js_errors = []
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    query = f"?lang={lang}" if lang else ""
    fragment = f"#token={stack.tokens[role]}" if role else ""
    page.goto(f"{stack.base}/console/{query}{fragment}")
    wait_fonts(page)
    page.wait_for_selector("html[data-started]", state="attached", timeout=10_000)
    if role:
        page.wait_for_selector("#console[data-screen=main]", timeout=10_000)
        page.wait_for_selector("#c-conn[data-state=connected]", timeout=10_000)
        assert page.get_attribute("#console", "data-role") == role
    return page


def open_display(browser, stack, profile: str = "dealer", size=DEALER):
    from tests.web.harness import open_display as open_page

    url = f"{stack.base}/display/?profile={profile}&broker=ws://127.0.0.1:{stack.broker.websockets_port}"
    return open_page(browser, url, width=size[0], height=size[1])


def wait_coup(page, coup_id: str, state: str | None = None) -> None:
    page.wait_for_function(
        "a => { const c = window.shoeConsole.state.coup; return c && c.coup_id === a[0] &&"
        " (!a[1] || document.querySelector('#coup-view').dataset.state === a[1]); }",
        arg=[coup_id, state], timeout=10_000)


def message(page, kind: str) -> str:
    """The console's answer to the last action (a message newer than any the test has read)."""
    seen = getattr(page, "messages_seen", 0)
    page.wait_for_function("n => Number(document.querySelector('#message').dataset.seq || 0) > n", arg=seen,
                           timeout=10_000)
    page.messages_seen = int(page.get_attribute("#message", "data-seq"))
    assert page.get_attribute("#message", "data-kind") == kind, page.inner_text("#message")
    return page.inner_text("#message")


def choose_reason(page, index: int = 0) -> str:
    """Tap a preset reason in the sheet, then DO IT; returns the reason's text."""
    page.wait_for_selector("#reason-sheet:not([hidden])", timeout=5000)
    reason = page.locator("#reasons .reason").nth(index)
    text = reason.inner_text()
    reason.click()
    assert page.is_enabled("#reason-go")
    page.click("#reason-go")
    return text


def audit(stack, action: str) -> list[dict]:
    entries = stack.get("/audit", "supervisor", params={"last": 200}).json()["entries"]
    return [e for e in entries if e["action"] == action or e["action"].endswith(action)]


def assert_page_quality(page) -> None:
    """Touch targets >= 48 px, no clipped text, every glyph from the shipped fonts, no script error."""
    assert small_targets(page) == []
    assert clipped_text(page) == []
    assert_own_fonts(page)
    assert page.js_errors == []


# --------------------------------------------------------------------------- sign in


def test_sign_in_needs_a_known_token_and_shows_the_role(stack, browser, shots):
    page = open_console(browser, stack, None)
    assert page.get_attribute("#console", "data-screen") == "signin"
    assert_page_quality(page)
    shot(page, shots, "console-800x480-signin.png")
    page.fill("#token", "not-a-token")
    page.click("#signin-go")
    page.wait_for_function("() => document.querySelector('#signin-error').textContent.length > 0", timeout=5000)
    assert page.inner_text("#signin-error") == "Unknown token."
    page.fill("#token", stack.tokens["supervisor"])
    page.click("#signin-go")
    page.wait_for_selector("#console[data-screen=main]", timeout=5000)
    assert page.get_attribute("#console", "data-role") == "supervisor"
    assert page.inner_text("#who") == "supervisor-1 · supervisor"
    page.click("#signout")
    page.wait_for_selector("#console[data-screen=signin]", timeout=5000)
    assert page.evaluate("sessionStorage.length") == 0
    assert page.js_errors == []


# --------------------------------------------------------------------------- an awaited card


def test_a_dealer_enters_an_unreadable_card_and_the_coup_settles_on_the_display(stack, browser, shots):
    console = open_console(browser, stack, "dealer", DEALER)
    display = open_display(browser, stack, "dealer", DEALER)
    coup_id = stack.open_coup()
    # P1 2S, B1 unreadable (it is the 9H), P2 3C, B2 KD: the shoe's cards wait behind the unread one.
    stack.deal("2S", "9H", "3C", "KD", unreadable=(1,))
    wait_coup(console, coup_id, "awaiting")
    assert console.is_visible("#picker")
    assert console.is_disabled("#enter-card")
    assert_page_quality(console)
    console.click("#ranks [data-rank='9']")
    console.click("#suits [data-suit='H']")
    assert console.get_attribute("#picked", "data-code") == "9H"
    shot(console, shots, "console-800x480-awaiting.png")
    console.click("#enter-card")
    assert message(console, "ok") == "Card 9♥ entered"
    wait_coup(console, coup_id, "settled")
    recall = stack.get(f"/coups/{coup_id}").json()
    assert (recall["winner"], recall["banco"], recall["punto_total"], recall["banco_total"]) == \
        ("banco", ["9H", "KD"], 5, 9)
    typed = next(d for d in recall["dealt"] if d["card"] == "9H")
    assert typed["source"] == "api" and typed["user"] == "dealer-1"
    # The display settles it, with the typed card badged MANUAL.
    display.wait_for_function("() => document.querySelector('#result-main').textContent === 'BANCO WINS 9 TO 5'",
                              timeout=10_000)
    assert display.inner_text("#cards-banco .src-badge") == "MANUAL"
    assert console.is_hidden("#picker")
    assert console.inner_text("#cards-banco") .replace("\n", " ").startswith("9♥")
    entry = audit(stack, "manual_card")[-1]
    assert (entry["user"], entry["role"], entry["status"], entry["data"]) == ("dealer-1", "dealer", 200, {"card": "9H"})
    assert entry["reason"] == "entered at the console: the shoe could not read it"
    assert console.js_errors == [] and display.js_errors == []


# --------------------------------------------------------------------------- a held coup


def hold_a_coup(stack) -> str:
    coup_id = stack.open_coup()
    stack.deal("8C")
    stack.counter += 1  # the shoe's counter skips one: out of order, the coup is held
    stack.deal("2C")
    assert stack.get("/coup/current").json()["held"] is True
    return coup_id


def test_a_dealer_cannot_void_a_held_coup_and_a_supervisor_voids_it_with_a_reason(stack, browser, shots):
    dealer = open_console(browser, stack, "dealer", DEALER)
    supervisor = open_console(browser, stack, "supervisor", TABLET)
    display = open_display(browser, stack, "dealer", DEALER)
    coup_id = hold_a_coup(stack)
    for page in (dealer, supervisor):
        wait_coup(page, coup_id, "held")
        page.wait_for_selector("#held-evidence li[data-kind=out_of_order]", timeout=5000)
        assert "counter" in page.inner_text("#held-evidence").lower()
        facts = page.inner_text("#held-evidence li[data-kind=out_of_order] .facts")
        assert re.search(r"\bcounter \d+\b", facts) and "card 2C" in facts and "problem gap" in facts, facts
        assert_page_quality(page)
    assert dealer.inner_text("#held-note") == "Only a supervisor can resolve a held coup."
    assert supervisor.inner_text("#held-note") == ""
    shot(dealer, shots, "console-800x480-held.png")
    shot(supervisor, shots, "console-1280x800-held.png")

    # The dealer tries: the API refuses (403) and the console says why; the coup stays held.
    dealer.click("#held-void")
    choose_reason(dealer, 0)
    refused = message(dealer, "error")
    assert refused == "Refused: dealer-1 has the role dealer; this needs supervisor, pit"
    shot(dealer, shots, "console-800x480-refused.png")
    assert dealer.is_visible("#reason-sheet")          # still open: nothing was done
    dealer.click("#reason-cancel")
    assert stack.get("/coup/current").json()["held"] is True
    forbidden = [e for e in audit(stack, "/coup/void") if e["outcome"] == "forbidden"]
    assert forbidden and forbidden[-1]["user"] == "dealer-1"

    # The supervisor voids it: a reason is required (DO IT stays disabled without one).
    supervisor.click("#held-void")
    supervisor.wait_for_selector("#reason-sheet:not([hidden])")
    assert supervisor.is_disabled("#reason-go")
    shot(supervisor, shots, "console-1280x800-reason.png")
    reason = choose_reason(supervisor, 0)
    assert reason == "misdeal"
    assert message(supervisor, "ok") == f"Coup {coup_id} voided"
    for page in (dealer, supervisor):
        wait_coup(page, coup_id, "void")
    display.wait_for_function("() => document.querySelector('#result-main').textContent === 'COUP VOID'",
                              timeout=10_000)
    entry = audit(stack, "void_coup")[-1]
    assert (entry["user"], entry["reason"], entry["status"], entry["data"]) == \
        ("supervisor-1", "misdeal", 200, {"coup_id": coup_id})
    assert stack.get(f"/coups/{coup_id}").json()["voided"] is True
    assert dealer.js_errors == [] and supervisor.js_errors == [] and display.js_errors == []


def test_a_supervisor_confirms_a_held_coup_and_acknowledges_then_clears_its_alert(stack, browser, shots):
    supervisor = open_console(browser, stack, "supervisor", TABLET)
    dealer = open_console(browser, stack, "dealer", DEALER)
    coup_id = hold_a_coup(stack)
    wait_coup(supervisor, coup_id, "held")
    supervisor.click("#held-confirm")
    choose_reason(supervisor, 1)
    assert message(supervisor, "ok") == f"Coup {coup_id} confirmed"
    assert stack.get("/coup/current").json()["held"] is False

    alert = [a for a in stack.get("/alerts").json()["active"] if a["kind"] == "out_of_order"][-1]
    row = f"#alerts li[data-id='{alert['id']}']"
    for page in (dealer, supervisor):
        page.click(".tab[data-tab=alerts]")
        page.wait_for_selector(row, timeout=5000)
        assert_page_quality(page)
    shot(supervisor, shots, "console-1280x800-alerts.png")
    # A dealer's acknowledgement is refused by the API.
    dealer.click(f"{row} button.ack")
    choose_reason(dealer, 0)
    assert message(dealer, "error") == "Refused: dealer-1 has the role dealer; this needs supervisor, pit"
    dealer.click("#reason-cancel")
    supervisor.click(f"{row} button.ack")
    choose_reason(supervisor, 0)
    assert message(supervisor, "ok") == "OUT OF ORDER: acknowledged"
    supervisor.wait_for_selector(f"{row} .acked", timeout=5000)
    assert supervisor.inner_text(f"{row} .acked") == "acknowledged by supervisor-1"
    supervisor.click(f"{row} button.clear")
    supervisor.wait_for_selector("#reason-sheet:not([hidden])")
    supervisor.fill("#reason-text", "counter checked with the technician")
    supervisor.click("#reason-go")
    assert message(supervisor, "ok") == "OUT OF ORDER: cleared"
    for page in (dealer, supervisor):
        page.wait_for_selector(row, state="detached", timeout=5000)
    past = next(a for a in stack.get("/alerts").json()["past"] if a["id"] == alert["id"])
    assert past["cleared"]["by"] == "supervisor-1"
    assert past["cleared"]["reason"] == "counter checked with the technician"
    # The coup goes on by the tableau: Punto 8 + 9 = 7, Banco 2 + K = 2 draws an ace.
    stack.deal("9D", "KC")
    stack.deal("AD")
    wait_coup(supervisor, coup_id, "settled")
    assert supervisor.js_errors == [] and dealer.js_errors == []


def test_a_supervisor_corrects_a_card_of_a_held_coup(stack, browser, shots):
    supervisor = open_console(browser, stack, "supervisor", TABLET)
    coup_id = hold_a_coup(stack)                     # Punto 8C, Banco 2C
    wait_coup(supervisor, coup_id, "held")
    supervisor.click("#held-correct")
    supervisor.wait_for_selector("#reason-sheet:not([hidden])")
    cards = supervisor.eval_on_selector_all("#correct-cards .which", "bs => bs.map(b => b.innerText.replace(/\\s+/g, ' '))")
    assert cards == ["P 8♣", "B 2♣"]                  # in dealing order: P1 B1
    supervisor.click("#correct-cards [data-index='1']")
    supervisor.click("#correct-ranks [data-rank='3']")
    assert supervisor.is_disabled("#reason-go")      # a card, its new rank and suit, and a reason
    supervisor.click("#correct-suits [data-suit='C']")
    assert supervisor.is_disabled("#reason-go")
    assert_page_quality(supervisor)
    shot(supervisor, shots, "console-1280x800-correct.png")
    reason = choose_reason(supervisor, 0)
    assert reason == "the shoe misread it"
    assert message(supervisor, "ok") == f"Coup {coup_id} corrected"
    current = stack.get("/coup/current").json()
    assert (current["coup_id"], current["punto"], current["banco"]) == (coup_id, ["8C"], ["3C"])
    supervisor.wait_for_function("() => document.querySelector('#cards-banco').innerText.startsWith('3')",
                                 timeout=5000)
    entry = audit(stack, "correct_card")[-1]
    assert (entry["user"], entry["reason"], entry["data"]) == \
        ("supervisor-1", "the shoe misread it", {"coup_id": coup_id, "index": 1, "card": "3C"})
    if stack.get("/coup/current").json()["held"]:     # leave the table dealing for the next test
        assert stack.post("/coup/void", {"reason": "test done"}, "supervisor").status_code == 200
    assert supervisor.js_errors == []


# --------------------------------------------------------------------------- bets, settlement, recall


def test_bets_per_seat_within_the_limits_and_the_last_settlement(stack, browser, shots):
    dealer = open_console(browser, stack, "dealer", DEALER)
    dealer.click(".tab[data-tab=bets]")
    coup_id = stack.open_coup()
    dealer.wait_for_function("c => document.querySelector('#bets-for').textContent.includes(c)", arg=coup_id,
                             timeout=5000)
    # Seat 2 Punto 1000: above the table's 500 maximum; the API names the seat and the limit.
    dealer.click("[data-cell='2:punto']")
    dealer.click("[data-chip='500']")
    dealer.click("[data-chip='500']")
    assert "bad" in dealer.get_attribute("[data-cell='2:punto']", "class")
    dealer.click("#bets-place")
    assert message(dealer, "error") == "Not done: seat 2: punto bet 1000 is above the table maximum 500"
    dealer.click("[data-chip='0']")
    dealer.click("[data-cell='1:banco']")
    dealer.click("[data-chip='25']")
    dealer.click("[data-cell='3:tie']")
    dealer.click("[data-chip='5']")
    dealer.click("[data-cell='7:punto']")
    dealer.click("[data-chip='100']")
    dealer.click("[data-chip='10']")
    assert dealer.inner_text("[data-cell='7:punto']") == "110"
    assert_page_quality(dealer)
    shot(dealer, shots, "console-800x480-bets.png")
    dealer.click("#bets-place")
    assert message(dealer, "ok") == f"3 bets placed on coup {coup_id}"
    placed = stack.get(f"/coups/{coup_id}/settlement", "dealer").json()
    assert sorted((b["seat"], b["kind"], b["amount"]) for b in placed["bets"]) == [
        (1, "banco", "25"), (3, "tie", "5"), (7, "punto", "110")]
    # Banco 9 over Punto 5 (as in the card test: P 2S 3C, B 9H KD; no draw).
    stack.deal("2S", "9H", "3C", "KD")
    dealer.wait_for_function("c => document.querySelector('#settlement').textContent.includes(c)", arg=coup_id,
                             timeout=10_000)
    dealer.wait_for_selector("#settlement .settle tr", timeout=5000)
    rows = dealer.eval_on_selector_all("#settlement .settle tr", "rs => rs.map(r => r.innerText.replace(/\\s+/g, ' '))")
    assert "SEAT 1 BANCO 25 WIN 23.75" in rows
    assert "SEAT 3 TIE 5 LOSE -5" in rows and "SEAT 7 PUNTO 110 LOSE -110" in rows
    assert "net -91.25" in dealer.inner_text("#settlement .settle-totals")
    shot(dealer, shots, "console-800x480-settlement.png")
    assert dealer.js_errors == []


def banco_nine_over_punto_five(i: int) -> tuple[str, ...]:
    """P1 B1 P2 B2 of a coup Banco wins 9 to 5 with no third card; the i-th such coup uses other
    cards (8 decks hold only 8 of each: a ninth 9H would be an impossible card, and held)."""
    suit = "SHDC"[i % 4]
    p1, p2 = (("2", "3"), ("A", "4"), ("4", "A"))[i // 4 % 3]
    b2 = "KQJ"[i // 4 % 3]
    return p1 + suit, "9" + suit, p2 + suit, b2 + suit


def test_recall_shows_the_last_ten_coups_and_more(stack, browser, shots):
    for i in range(11):   # Banco 9 over Punto 5, eleven times
        stack.deal(*banco_nine_over_punto_five(i))
    supervisor = open_console(browser, stack, "supervisor", TABLET)
    supervisor.click(".tab[data-tab=recall]")
    expected = [c["coup_id"] for c in reversed(stack.get("/coups", params={"last": 10}).json()["coups"])]
    supervisor.wait_for_function("() => document.querySelectorAll('#recall tr').length === 10", timeout=5000)
    rows = supervisor.eval_on_selector_all("#recall tr", "rs => rs.map(r => r.dataset.coup)")
    assert rows == expected
    first = supervisor.inner_text(f"#recall tr[data-coup='{expected[0]}'] td.result")
    assert first == "BANCO 5–9"
    assert_page_quality(supervisor)
    shot(supervisor, shots, "console-1280x800-recall.png")
    supervisor.click("#recall-more")
    supervisor.wait_for_function("() => document.querySelectorAll('#recall tr').length > 10", timeout=5000)
    assert supervisor.js_errors == []


# --------------------------------------------------------------------------- the shoe


def test_a_new_shoe_needs_a_technician(stack, browser, shots):
    stack.deal(*banco_nine_over_punto_five(20))      # the shoe has been used (its number moves on)
    dealer = open_console(browser, stack, "dealer", DEALER)
    dealer.click(".tab[data-tab=shoe]")
    dealer.click("#new-shoe")
    choose_reason(dealer, 0)
    assert message(dealer, "error") == "Refused: dealer-1 has the role dealer; this needs technician"
    dealer.click("#reason-cancel")
    shoe = stack.get("/shoe").json()["shoe"]
    tech = open_console(browser, stack, "technician", TABLET)
    tech.click(".tab[data-tab=shoe]")
    tech.click("[data-decks='6']")
    assert_page_quality(tech)
    shot(tech, shots, "console-1280x800-shoe.png")
    tech.click("#new-shoe")
    choose_reason(tech, 1)
    assert message(tech, "ok") == "New shoe started"
    after = stack.get("/shoe").json()
    assert (after["shoe"], after["decks"]) == (shoe + 1, 6)
    tech.wait_for_function("n => window.shoeConsole.state.shoe && window.shoeConsole.state.shoe.shoe === n",
                           arg=shoe + 1, timeout=5000)
    assert re.search(r"SHOE\s*" + str(shoe + 1), tech.inner_text("#shoe-facts"))
    assert dealer.js_errors == [] and tech.js_errors == []


@pytest.fixture(autouse=True)
def _close_contexts(browser):
    yield
    for context in list(browser.contexts):
        context.close()
