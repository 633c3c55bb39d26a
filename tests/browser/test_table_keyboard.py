"""The table page played by keyboard alone, as a screen reader's user would, in headless
Chromium: a whole Guts deal and a whole Paiute deal, two people each, every move a key.

At every redraw (another player's move, the start, a draw, a card picked) the focus stays
where the player left it, or goes to the move that follows; the live region says turns,
moves and results, never the clock's seconds; axe-core finds no violation in any state.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.browser import DESKTOP, PHONE
from tests.support.page_checks import assert_no_violations, page_words, picture
from tests.support.table_page import (
    Seat,
    best_call,
    call,
    choose_discard,
    choose_source,
    deal_decided,
    synced,
    wait_for,
)

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=30_000)

PLAYER_KEY = "cardroom.player"
DESKTOP_PROFILE: dict[str, Any] = dict(DESKTOP)


HU = page_words("hu")
HU_TIME_OUT = HU["You are on a time-out until {when}."].split("{when}")[0]


def focused(page: Page) -> dict[str, str]:
    """What has the focus: its tag, its move (data-action) and its card (data-card)."""
    return dict(
        page.evaluate(
            """() => {
                const node = document.activeElement;
                return { tag: node.tagName.toLowerCase(), action: node.dataset.action || "",
                         card: node.dataset.card || "", id: node.id || "" };
            }"""
        )
    )


def assert_clock_is_quiet(page: Page) -> None:
    """The countdown is in no live region; the live log never says a count of seconds."""
    assert page.locator("[aria-live] #countdown, [aria-live]#countdown").count() == 0
    assert page.locator("#status").get_attribute("aria-live") is None
    assert "s left" not in (page.locator("#announcer").text_content() or "")


@pytest.fixture
def people(browser: Browser, gateway_url: str) -> Iterator[list[Seat]]:
    """Two signed-in players, one on a desktop and one on a phone-sized window."""
    contexts: list[BrowserContext] = []
    found = []
    profiles: list[tuple[str, dict[str, Any]]] = [("ann", DESKTOP), ("bo", PHONE)]
    for name, profile in profiles:
        context = browser.new_context(**profile)
        contexts.append(context)
        person = Seat(name, context.new_page())
        created = call(gateway_url, "POST", "/v1/players", {"name": name})
        person.key = created["key"]
        saved = json.dumps({"key": created["key"], "id": created["id"], "name": name})
        context.add_init_script(
            f"localStorage.setItem({json.dumps(PLAYER_KEY)}, {json.dumps(saved)})"
        )
        found.append(person)
    try:
        yield found
    finally:
        for context in contexts:
            context.close()


def seated(people: list[Seat], base: str, options: dict[str, Any]) -> str:
    """A new table with both people seated, each page open on it; the table's id. The
    second person opens the page before sitting down: the buy-in range and the rules
    are there before the first seat is taken."""
    owner = people[0].key
    table_id = str(call(base, "POST", "/v1/tables", options, owner)["table"]["id"])
    newcomer = people[1].page
    newcomer.goto(f"{base}/tables/{table_id}")
    expect(newcomer.locator("#buy-in-range")).to_have_text("Buy-in: 20 to 500 chips.")
    expect(newcomer.locator("#how-to-play")).to_have_attribute("open", "")
    assert_no_violations(newcomer, "the table before sitting down")
    for person in people:
        body = {"buy_in": 100}
        person.seat = call(base, "POST", f"/v1/tables/{table_id}/seats", body, person.key)["seat"]
        if person.page is not newcomer:
            person.page.goto(f"{base}/tables/{table_id}")
        expect(person.page.locator("li.seat.me")).to_have_count(1)
    for person in people:
        synced(person, base, table_id)
    return table_id


def tab_to(page: Page, selector: str) -> None:
    """Press Tab until the element has the focus (as a keyboard user finds a button)."""
    for _ in range(60):
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_a_guts_deal_by_keyboard(people: list[Seat], gateway_url: str) -> None:
    ann, bo = people
    table_id = seated(
        people, gateway_url, {"game": "guts", "turn_seconds": 600, "deal_pause_seconds": 60}
    )
    assert_no_violations(ann.page, "a table waiting to start")

    # The list of keys opens with "?" and closes with Escape.
    ann.page.keyboard.press("?")
    help_box = ann.page.locator("#keys-help")
    expect(help_box).to_be_visible()
    expect(help_box).to_contain_text("Guts: go in")
    expect(help_box).to_contain_text("Paiute: call, or lay down, with the cards picked")
    assert_no_violations(ann.page, "the list of keys")
    ann.page.keyboard.press("Escape")
    expect(help_box).to_be_hidden()

    # H opens How to play: the game's rules, with this table's options in words.
    rules = ann.page.locator("#how-to-play")
    ann.page.keyboard.press("h")
    expect(rules).to_have_attribute("open", "")
    expect(rules.locator("summary")).to_have_text("How to play 3-card Guts")
    for words in (
        "Each player gets 3 cards and decides: In, to play for the pot, or Out",
        "every other player in pays the pot as it stood (they match the pot)",
        "Everybody decides at once and in secret",
        "Nobody in: the pot stays, and everyone antes again at the next deal.",
        "600 seconds for each decision.",
        "Buy-in: 20 to 500 chips.",
    ):
        expect(rules).to_contain_text(words)
    assert_no_violations(ann.page, "How to play Guts")
    picture(ann.page, "guts-rules-desktop")
    ann.page.keyboard.press("h")
    expect(rules).not_to_have_attribute("open", "")

    # A key pressed on the list's Close button just after the list closed, before the
    # browser has moved the focus away from it, is a move all the same.
    opened = ann.page.evaluate(
        """() => {
            const dialog = document.getElementById("keys-help");
            dialog.showModal();
            const close = dialog.querySelector("button");
            close.focus();
            dialog.close();
            const key = { key: "h", code: "KeyH", bubbles: true, cancelable: true };
            close.dispatchEvent(new KeyboardEvent("keydown", key));
            return document.getElementById("how-to-play").open;
        }"""
    )
    assert opened, "H on a closed dialog's button was ignored"
    ann.page.keyboard.press("h")
    expect(rules).not_to_have_attribute("open", "")

    # bo tabs to the start, ann starts with S: on bo's page the focus goes to the move
    # that follows (In), not to the page's body.
    tab_to(bo.page, "[data-action=start]")
    ann.page.keyboard.press("s")
    for person in people:
        expect(person.page.locator("#table")).to_have_attribute("data-phase", "declaring")
        expect(person.page.locator("[data-action=in]")).to_be_visible()
    expect(ann.page.locator("[data-action=in]")).to_be_focused()
    expect(bo.page.locator("[data-action=in]")).to_be_focused()
    expect(ann.page.locator("#announcer")).to_contain_text("Your call: in or out?")
    assert_clock_is_quiet(ann.page)
    assert_no_violations(bo.page, "a player's turn to declare")

    # Leaving during a deal asks first; Stay (which has the focus) keeps the seat.
    tab_to(bo.page, "#leave")
    bo.page.keyboard.press("Enter")
    asked = bo.page.locator("#leave-confirm")
    expect(asked).to_be_visible()
    expect(asked).to_contain_text("You are in this deal: you leave when it ends")
    expect(bo.page.locator("#stay")).to_be_focused()
    assert_no_violations(bo.page, "the question before leaving")
    bo.page.keyboard.press("Enter")
    expect(asked).to_be_hidden()
    assert (
        call(gateway_url, "GET", f"/v1/tables/{table_id}")["seats"][str(bo.seat)]["leaving"]
        is False
    )
    tab_to(bo.page, "[data-action=in]")

    # ann goes in with I; bo's page redraws (ann has decided) and bo's focus stays on In.
    ann.page.keyboard.press("i")
    expect(ann.page.locator("#actions")).to_contain_text("You are in")
    expect(bo.page.locator(f'li.seat[data-seat="{ann.seat}"] .badge.declared')).to_have_count(1)
    synced(bo, gateway_url, table_id)
    assert focused(bo.page)["action"] == "in"
    expect(bo.page.locator("#announcer")).to_contain_text("ann has decided")
    # ...and Enter on it goes in.
    bo.page.keyboard.press("Enter")
    for person in people:
        expect(person.page.locator("#table")).to_have_attribute("data-phase", "between_deals")
        table = synced(person, gateway_url, table_id)
        assert table["deal"]["outcome"] in ("won", "split")
        headline = person.page.locator("#headline").text_content() or ""
        expect(person.page.locator("#announcer")).to_contain_text(headline)
        assert focused(person.page)["tag"] != "body"
        assert_clock_is_quiet(person.page)
    assert_no_violations(ann.page, "a Guts showdown")
    for person in people:
        expect(person.page.locator("#phase")).not_to_contain_text("Game over")
    assert ann.errors == []
    assert bo.errors == []


def play_paiute_turn_by_keys(person: Seat, table: dict[str, Any], pile: bool = False) -> None:
    """The seat's turn, every move a key: D or T to draw (T, the pile's card, when `pile`
    says so); then the cards by their number and C to call, or one card by its number
    and X to discard it."""
    page = person.page
    deal = table["deal"]
    hand = list(table["you"]["cards"])
    wild = deal["wild_rank"]
    if table["pending"]["action"] == "draw":
        source = "discard" if pile else choose_source(hand, deal["discard_top"], wild)
        expect(page.locator(f"[data-action=draw-{source}]")).to_be_visible()
        page.keyboard.press("d" if source == "stock" else "t")
        expect(page.locator("#my-cards button.card")).to_have_count(6)
        return
    drawn = table["you"]["drawn"]
    keep = drawn["card"] if drawn and drawn["source"] == "discard" else None
    value, show = best_call(hand, wild, keep)
    cards = page.locator("#my-cards button.card")
    expect(cards).to_have_count(6)
    order = cards.evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    picks = show if value.strength > 0 else [choose_discard(hand, wild, keep)]
    for card in picks:
        page.keyboard.press(str(order.index(card) + 1))
        expect(page.locator(f'#my-cards [data-card="{card}"]')).to_have_attribute(
            "aria-pressed", "true"
        )
        # the card picked keeps the focus through the redraw
        expect(page.locator(f'#my-cards [data-card="{card}"]')).to_be_focused()
    page.keyboard.press("c" if value.strength > 0 else "x")


RANKS = {**{str(n): n for n in range(2, 10)}, "T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}
WILD_WORDS = {
    11: "Jacks are wild",
    12: "Queens are wild",
    13: "Kings are wild",
    14: "Aces are wild",
}


def assert_wild_marked(page: Page, where: str, wild_rank: int) -> None:
    """Every card of the wild rank shown there is marked wild, visibly and in its name;
    no other card is."""
    cards = page.locator(f"{where} .card[data-card]")
    for code in cards.evaluate_all("nodes => nodes.map(n => n.dataset.card)"):
        card = page.locator(f'{where} .card[data-card="{code}"]').first
        if RANKS[code[:-1]] == wild_rank:
            expect(card).to_have_class(re.compile(r"\bis-wild\b"))
            expect(card).to_have_attribute("aria-label", re.compile(r", wild$"))
        else:
            expect(card).not_to_have_class(re.compile(r"\bis-wild\b"))


def test_a_paiute_deal_by_keyboard(people: list[Seat], gateway_url: str) -> None:
    ann, bo = people
    options = {"game": "paiute", "turn_seconds": 600, "deal_pause_seconds": 60}
    table_id = seated(people, gateway_url, options)
    by_seat = {person.seat: person for person in people}
    bo.page.keyboard.press("s")
    rules = ann.page.locator("#how-to-play")
    ann.page.keyboard.press("h")
    expect(rules.locator("summary")).to_have_text("How to play Paiute")
    expect(rules.locator(".combinations li")).to_have_count(6)
    expect(rules).to_contain_text("No call after 2 reshuffles of the discard pile")
    expect(rules.locator(".combinations .is-wild")).to_have_count(1)
    checked = False
    played = 0
    while True:
        table = synced(ann, gateway_url, table_id)
        if deal_decided(gateway_url, table_id, table):
            break
        if table["phase"] == "between_deals":
            continue
        person = by_seat[table["pending"]["seats"][0]]
        seen = synced(person, gateway_url, table_id)
        if seen["phase"] == "last_turns":
            # only the players after the caller, up to the dealer, are told of a last turn
            caller = by_seat[seen["deal"]["caller"]]
            expect(person.page.locator("#headline")).to_have_text(
                f"{caller.name} called; you get a last turn to lay down a better hand."
            )
            synced(caller, gateway_url, table_id)
            expect(caller.page.locator("#headline")).to_have_text(
                f"You called; a last turn for {person.name}."
            )
        assert_wild_marked(person.page, "#my-cards", seen["deal"]["wild_rank"])
        if not checked and seen["pending"]["action"] == "discard_or_call":
            assert_no_violations(person.page, "a Paiute turn with six cards")
            checked = True
        expect(person.page.locator("#announcer")).to_contain_text("Your turn")
        # the deal's first draw takes the pile's card, so that T is played too
        play_paiute_turn_by_keys(person, seen, pile=played == 0)
        wait_for(
            lambda v=seen["version"]: (
                call(gateway_url, "GET", f"/v1/tables/{table_id}")["version"] > v
            ),
            "the move to land",
        )
        # After a move the focus is on the page's next move or its place, never the body.
        assert focused(person.page)["tag"] != "body"
        played += 1
        assert played < 400, "the deal never ended"
    for person in people:
        table = synced(person, gateway_url, table_id)
        assert table["deal"]["outcome"] in ("won", "split")
        expect(person.page.locator("#result")).to_be_visible()
        wild = table["deal"]["wild_rank"]
        assert_wild_marked(person.page, "#shown", wild)
        if table["deal"]["caller"] == table["deal"]["dealer"]:
            dealer = by_seat[table["deal"]["caller"]].name
            expect(person.page.locator("#headline")).to_contain_text(
                f"{dealer} called as the dealer: nobody gets a last turn, the deal ends."
            )
        for seat, cards in table["deal"]["shown"].items():
            row = person.page.locator(f'#shown li[data-seat="{seat}"]')
            if any(RANKS[card[:-1]] == wild for card in cards):
                # the showdown's words say which cards are wild
                expect(row.locator(".wild-note")).to_contain_text(
                    WILD_WORDS.get(wild, f"{wild}s are wild")
                )
            else:
                expect(row.locator(".wild-note")).to_have_count(0)
        assert_clock_is_quiet(person.page)
    assert_no_violations(ann.page, "a Paiute showdown")
    assert ann.errors == []
    assert bo.errors == []


def test_an_abandoned_game_says_so(people: list[Seat], gateway_url: str) -> None:
    """A game whose other players left: its pot goes back to the player left, in words
    that say the game was abandoned (not a split between winners)."""
    ann, bo = people
    options = {"game": "guts", "turn_seconds": 600, "deal_pause_seconds": 3}
    table_id = seated(people, gateway_url, options)
    path = f"/v1/tables/{table_id}"
    call(gateway_url, "POST", f"{path}/actions", {"action": "start"}, ann.key)
    for person in people:
        body = {"action": "declare", "choice": "in"}
        call(gateway_url, "POST", f"{path}/actions", body, person.key)
    if call(gateway_url, "GET", path)["pot"] == 0:
        pytest.skip("the deal was a tie: the pot is empty, the game over")
    # bo leaves between deals; at the next deal too few are left and the game stops
    call(gateway_url, "DELETE", f"{path}/seats/{bo.seat}", token=bo.key)
    log = ann.page.locator("#log")
    expect(log).to_contain_text("The game was abandoned: the pot goes back to ann")
    expect(ann.page.locator("#headline")).to_contain_text(
        "The game was abandoned: its pot goes back to the players (ann "
    )
    assert_no_violations(ann.page, "an abandoned game")


def test_the_rebuy_is_where_a_busted_player_looks(people: list[Seat], gateway_url: str) -> None:
    """A player whose ante took their last chip sees the rebuy at once, without scrolling
    a 1280x800 window, with the amounts it takes; the rebuy puts them back in play."""
    ann, bo = people
    options = {"game": "guts", "ante": 10, "min_buy_in": 10, "max_buy_in": 500}
    options |= {"turn_seconds": 600, "deal_pause_seconds": 60}
    table_id = str(call(gateway_url, "POST", "/v1/tables", options, ann.key)["table"]["id"])
    path = f"/v1/tables/{table_id}"
    for person, buy_in in ((ann, 10), (bo, 100)):
        body = {"buy_in": buy_in}
        person.seat = call(gateway_url, "POST", f"{path}/seats", body, person.key)["seat"]
    page = ann.page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{gateway_url}/tables/{table_id}")
    expect(page.locator("li.seat.me")).to_have_count(1)
    page.keyboard.press("s")
    expect(page.locator("#table")).to_have_attribute("data-phase", "declaring")
    for person in people:
        declare = {"action": "declare", "choice": "out"}
        call(gateway_url, "POST", f"{path}/actions", declare, person.key)
    expect(page.locator("#table")).to_have_attribute("data-phase", "between_deals")
    rebuy = page.locator("#rebuy-form")
    expect(rebuy).to_be_visible()
    expect(rebuy).to_contain_text("Buy-in: 10 to 500 chips.")
    # at the top of the page: in view without scrolling, and in view now
    top, bottom = rebuy.evaluate(
        "form => [form.getBoundingClientRect().top, form.getBoundingClientRect().bottom]"
        ".map(y => y + scrollY)"
    )
    assert bottom <= 800, (top, bottom)
    box = rebuy.bounding_box()
    assert box is not None
    assert 0 <= box["y"] <= box["y"] + box["height"] <= 800, box
    assert_no_violations(page, "out of chips")
    picture(page, "guts-rebuy-desktop")
    page.fill("#rebuy-form input[name=amount]", "50")
    page.locator("#rebuy-form button[type=submit]").click()
    expect(rebuy).to_be_hidden()
    expect(page.locator("li.seat.me .chips")).to_have_text("50")


def api_in(base: str, method: str, path: str, body: Any, key: str, lang: str) -> Any:
    """One API request in a language; the JSON answer, a refusal's problem included."""
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {key}",
            "Accept-Language": lang,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read())


def test_limits_and_a_time_out_from_the_table(browser: Browser, gateway_url: str) -> None:
    """A player sets a buy-in limit, a session limit and takes a time-out from the table
    page's menu (the lobby's own), in Hungarian; the refusals that follow are in
    Hungarian too."""
    context = browser.new_context(**dict(DESKTOP_PROFILE))
    try:
        person = Seat("Ildikó", context.new_page())
        created = call(gateway_url, "POST", "/v1/players", {"name": person.name})
        person.key = created["key"]
        saved = json.dumps({"key": person.key, "id": created["id"], "name": person.name})
        context.add_init_script(
            f"localStorage.setItem('cardroom.player', {json.dumps(saved)});"
            "localStorage.setItem('cardroom.lang', 'hu');"
        )
        options = {"game": "guts", "turn_seconds": 600}
        table_id = call(gateway_url, "POST", "/v1/tables", options, person.key)["table"]["id"]
        page = person.page
        page.goto(f"{gateway_url}/tables/{table_id}")
        expect(page.locator("html")).to_have_attribute("lang", "hu")
        menu = page.locator("#limits-menu")
        page.locator("#show-limits").click()
        expect(menu).to_be_visible()
        expect(menu.locator("#menu-title")).to_have_text(HU["Limits and breaks"])
        for part in ("limits", "session", "break"):
            menu.locator(f"#{part}-part summary").click()

        # a buy-in limit of 50 chips a day applies at once...
        page.select_option("#limit-form select[name=kind]", "buy_in")
        page.select_option("#limit-form select[name=window]", "24h")
        page.fill("#limit-form input[name=amount]", "50")
        page.locator("#limit-form button[type=submit]").click()
        expect(menu.locator("#menu-done")).to_have_text(HU["The limit applies now."])
        expect(menu.locator('[data-limit="buy_in:24h"]')).to_be_visible()
        # ...a session of an hour, a reminder every 20 minutes
        page.fill("#session-form input[name=limit_minutes]", "60")
        page.fill("#session-form input[name=reality_check_minutes]", "20")
        page.locator("#session-form button[type=submit]").click()
        expect(menu.locator("#menu-done")).to_have_text(HU["Saved: your next seats follow it."])
        session = call(gateway_url, "GET", "/v1/players/me/session", token=person.key)
        assert (session["limit_minutes"], session["reality_check_minutes"]) == (60, 20)
        assert_no_violations(page, "the limits menu")
        picture(page, "limits-hu-desktop")
        page.keyboard.press("Escape")
        expect(menu).to_be_hidden()

        # a buy-in of 100 is past the limit: refused, in Hungarian
        seats = f"/v1/tables/{table_id}/seats"
        refusal = api_in(gateway_url, "POST", seats, {"buy_in": 100}, person.key, "hu")
        assert refusal["code"] == "limit_reached"
        page.fill("#seat-form input[name=buy_in]", "100")
        page.locator("#seat-form button[type=submit]").click()
        expect(page.locator("#problem")).to_contain_text(refusal["detail"])
        page.fill("#seat-form input[name=buy_in]", "40")
        page.locator("#seat-form button[type=submit]").click()
        expect(page.locator("li.seat.me")).to_have_count(1)

        # a day's time-out: the seat is left, and a seat is refused, in Hungarian
        page.locator("#show-limits").click()
        page.fill("#time-out-form input[name=days]", "1")
        page.locator("#time-out-form button[type=submit]").click()
        expect(menu.locator("#exclusion-now")).to_contain_text(HU_TIME_OUT)
        exclusion = call(gateway_url, "GET", "/v1/players/me/exclusions", token=person.key)
        assert exclusion["active"]
        page.keyboard.press("Escape")
        expect(page.locator("li.seat.me")).to_have_count(0)
        refusal = api_in(gateway_url, "POST", seats, {"buy_in": 40}, person.key, "hu")
        assert refusal["code"] == "player_excluded"
        page.locator("#seat-form button[type=submit]").click()
        expect(page.locator("#problem")).to_contain_text(refusal["detail"])
        assert person.errors == []
    finally:
        context.close()


# Records every chip that flies and every card dealt with a flourish, from the page's start.
WATCH_MOTION = """
window.motion = { chips: 0, dealt: 0 };
new MutationObserver(records => {
    for (const record of records) for (const node of record.addedNodes) {
        if (!(node instanceof Element)) continue;
        if (node.matches(".chip-fly")) window.motion.chips += 1;
        window.motion.dealt += node.matches(".dealt, .backs.dealt")
            ? 1 : node.querySelectorAll(".dealt").length;
    }
}).observe(document, { childList: true, subtree: true });
"""


def test_the_deal_moves_and_stays_still_when_asked(browser: Browser, gateway_url: str) -> None:
    """Cards dealt and chips moved are animated, and not at all for a reader who asks for
    less motion (prefers-reduced-motion)."""
    key = call(gateway_url, "POST", "/v1/players", {"name": "ann"})["key"]
    other = call(gateway_url, "POST", "/v1/players", {"name": "bo"})["key"]
    options = {"game": "guts", "turn_seconds": 600, "deal_pause_seconds": 60}
    table_id = call(gateway_url, "POST", "/v1/tables", options, key)["table"]["id"]
    path = f"/v1/tables/{table_id}"
    for player in (key, other):
        call(gateway_url, "POST", f"{path}/seats", {"buy_in": 100}, player)
    saved = json.dumps({"key": key, "id": "", "name": "ann"})
    pages: dict[str, Page] = {}
    contexts = []
    for motion in ("no-preference", "reduce"):
        context = browser.new_context(**DESKTOP_PROFILE, reduced_motion=motion)
        contexts.append(context)
        context.add_init_script(f"localStorage.setItem('cardroom.player', {json.dumps(saved)})")
        context.add_init_script(WATCH_MOTION)
        pages[motion] = context.new_page()
        pages[motion].goto(f"{gateway_url}/tables/{table_id}")
        expect(pages[motion].locator("li.seat.me")).to_have_count(1)
    try:
        call(gateway_url, "POST", f"{path}/actions", {"action": "start"}, key)
        for page in pages.values():
            expect(page.locator("#my-cards .card")).to_have_count(3)
            expect(page.locator("#seats .backs .card")).to_have_count(3)
        moving = pages["no-preference"]
        wait_for(lambda: moving.evaluate("() => motion.chips") >= 2, "the antes' chips to fly")
        assert moving.evaluate("() => motion.dealt") >= 2
        still = pages["reduce"]
        assert still.evaluate("() => motion.chips") == 0
        running = still.evaluate(
            "() => document.getAnimations().filter(a => a.playState === 'running').length"
        )
        assert running == 0
    finally:
        for context in contexts:
            context.close()
