"""Two people play through the table page in headless Chromium: a Guts deal and a Paiute deal.

Each person signs in with a name, has their own browser context (one a phone, one a
desktop window) and plays by tapping. At every step the test reads the table through the
API with each player's key and checks what each page shows: the seat's own cards, the
pot, the stacks, whose turn it is, the countdown, the showdown; and that no page ever
shows a card the other seat holds that was never public. Set CARDROOM_SCREENSHOTS to a
folder to save screenshots.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.support.browser import DESKTOP, PHONE
from tests.support.table_page import (
    Seat,
    best_call,
    call,
    choose_discard,
    choose_source,
    deal_decided,
    label,
    shot,
    sign_up,
    synced,
    wait_for,
)

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=30_000)

CARD = re.compile(r"^(?:[2-9TJQKA]|10)[cdhs]$")
PLAYER_KEY = "cardroom.player"


def new_page(browser: Browser, profile: dict[str, Any]) -> tuple[BrowserContext, Page]:
    """A fresh browser context (its own localStorage) with a touch screen."""
    context = browser.new_context(**profile, has_touch=True)
    return context, context.new_page()


def sign_in(person: Seat, base: str) -> None:
    """Sign in on the lobby with the person's name; remember the key the page keeps."""
    page = person.page
    page.goto(base + "/")
    expect(page.locator("#sign-in")).to_be_visible()
    page.fill("#sign-up input[name=player_name]", person.name)
    page.locator("#sign-up button[type=submit]").tap()
    expect(page.locator("#player-name")).to_have_text(person.name)
    # a new player's wallet holds the play-money grant
    expect(page.locator("#player-balance")).to_have_text(" · 10,000 chips in the wallet")
    expect(page.locator("#sign-in")).to_be_hidden()
    saved = page.evaluate("key => JSON.parse(localStorage.getItem(key))", PLAYER_KEY)
    assert saved["key"].startswith("crk_")
    assert saved["name"] == person.name
    person.key = saved["key"]


def paste_key(page: Page, base: str, key: str, name: str) -> None:
    """Sign in on the lobby by pasting a player key."""
    page.goto(base + "/")
    page.fill("#key-form input[name=player_key]", key)
    page.locator("#key-form button[type=submit]").tap()
    expect(page.locator("#player-name")).to_have_text(name)


def create_table(page: Page, base: str, game: str, name: str) -> str:
    """Create a table through the lobby's form (signed in); its id."""
    page.goto(base + "/")
    expect(page.locator("h1")).to_have_text("Tables")
    expect(page.locator("#player-name")).to_be_visible()
    page.locator(f"label.pill:has(input[value={game}])").tap()
    page.fill("input[name=name]", name)
    page.fill("input[name=turn_seconds]", "600")
    page.fill("input[name=deal_pause_seconds]", "60")
    page.locator("#create button[type=submit]").tap()
    page.wait_for_url(re.compile(r"/tables/[^/]+$"))
    return page.url.rsplit("/", 1)[1]


def sit(person: Seat, url: str, buy_in: int) -> None:
    """Open the table page and take a seat with the form (under the player's own name)."""
    page = person.page
    if page.url != url:
        page.goto(url)
    balance = page.locator("#player-balance")
    expect(balance).to_contain_text("chips in the wallet")
    before = int((balance.text_content() or "").split()[1].replace(",", ""))
    page.fill("#seat-form input[name=buy_in]", str(buy_in))
    page.locator("#seat-form button[type=submit]").tap()
    expect(page.locator("li.seat.me .name")).to_have_text(person.name)
    expect(page.locator("#seat-form")).to_be_hidden()
    # the buy-in came from the player's wallet
    expect(balance).to_have_text(f" · {before - buy_in:,} chips in the wallet")
    person.seat = int(page.locator("li.seat.me").get_attribute("data-seat") or 0)
    # The page keeps no seat token: the player's key is its one credential.
    kept = page.evaluate("() => Object.keys(localStorage)")
    assert kept == [PLAYER_KEY], kept


def public_cards(base: str, table_id: str) -> set[str]:
    """Every card any public event has shown so far (discards, pile draws, shown hands)."""
    found: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, str) and CARD.match(value):
            found.add(value)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(call(base, "GET", f"/v1/tables/{table_id}/events?after=0")["events"])
    return found


def assert_private(viewer: Seat, other: Seat, base: str, table_id: str) -> None:
    """The viewer's page shows none of the other seat's cards that were never public."""
    theirs = synced(other, base, table_id)
    synced(viewer, base, table_id)
    hidden = set((theirs["you"] or {}).get("cards") or []) - public_cards(base, table_id)
    # the page less How to play, whose example hands are nobody's cards
    text, html = viewer.page.evaluate(
        """() => {
            const page = document.documentElement.cloneNode(true);
            page.querySelector("#rules-body").remove();
            return [page.querySelector("body").textContent, page.outerHTML];
        }"""
    )
    for card in hidden:
        assert label(card) not in text, f"{viewer.name}'s page shows {other.name}'s {card}"
        assert f'data-card="{card}"' not in html, f"{viewer.name}'s page holds {card}"


def assert_table_shown(person: Seat, table: dict[str, Any]) -> None:
    """The page shows the seat's own cards, the pot, every stack and whose turn it is."""
    page = person.page
    mine = (table["you"] or {}).get("cards") or []
    expect(page.locator("#my-cards .card")).to_have_count(len(mine))
    shown = page.locator("#my-cards .card").evaluate_all("nodes => nodes.map(n => n.dataset.card)")
    assert sorted(shown) == sorted(mine)
    for card in mine:
        expect(page.locator(f'#my-cards [data-card="{card}"]')).to_have_text(label(card))
    expect(page.locator("#pot")).to_have_text(re.compile(rf"^{table['pot']}\b"))
    for key, record in table["seats"].items():
        row = page.locator(f'li.seat[data-seat="{key}"]')
        expect(row.locator(".name")).to_have_text(record["name"])
        expect(row.locator(".chips")).to_have_text(str(record["stack"]))
    turn = table["pending"]["seats"] if table["pending"] else []
    expect(page.locator("li.seat.turn")).to_have_count(len(turn))
    for seat in turn:
        expect(page.locator(f'li.seat.turn[data-seat="{seat}"]')).to_have_count(1)
    if table["deadline"] is not None:
        expect(page.locator("#countdown")).to_have_text(re.compile(r"^(\d+:\d\d|\d+s)$"))


def assert_result_shown(person: Seat, table: dict[str, Any]) -> None:
    """The page shows the ended deal: every shown hand, its rank, who won, the stacks."""
    page = person.page
    deal = table["deal"]
    assert deal["ended"]
    result = page.locator("#result")
    expect(result).to_be_visible()
    won: Counter[str] = Counter()
    for move in deal["flow"]:
        if move["source"] == "pot" and move["target"] == "seat":
            won[str(move["seat"])] += move["amount"]
    names = {key: record["name"] for key, record in table["seats"].items()}
    headline = page.locator("#headline")
    for seat, amount in won.items():
        expect(headline).to_contain_text(names[seat])
        expect(result.locator(f'li[data-seat="{seat}"]')).to_contain_text(f"Wins {amount}")
    if len(won) == 1:
        ((seat, amount),) = won.items()
        expect(headline).to_contain_text(f"{names[seat]} wins {amount} chip")
    for seat, cards in deal["shown"].items():
        row = result.locator(f'li[data-seat="{seat}"]')
        for card in cards:
            expect(row.locator(f'[data-card="{card}"]')).to_have_text(label(card))
        description = (deal["ranks"].get(seat) or {}).get("description")
        if description:
            expect(row.locator(".description")).to_have_text(description)
    for key, record in table["seats"].items():
        expect(page.locator(f'li.seat[data-seat="{key}"] .chips')).to_have_text(
            str(record["stack"])
        )


def check_both(people: list[Seat], base: str, table_id: str) -> list[dict[str, Any]]:
    """Privacy both ways, then what each page shows; each seat's view of the table."""
    first, second = people
    assert_private(first, second, base, table_id)
    assert_private(second, first, base, table_id)
    views = []
    for person in people:
        table = synced(person, base, table_id)
        assert_table_shown(person, table)
        views.append(table)
    return views


def test_guts_deal_two_browsers(browser: Browser, gateway_url: str) -> None:
    phone, ann_page = new_page(browser, PHONE)
    desktop, bo_page = new_page(browser, DESKTOP)
    ann, bo = Seat("ann", ann_page), Seat("<b>bo</b> & co", bo_page)
    try:
        sign_in(ann, gateway_url)
        sign_in(bo, gateway_url)
        table_id = create_table(ann_page, gateway_url, "guts", "Guts night")
        url = f"{gateway_url}/tables/{table_id}"
        response = ann_page.request.get(url)
        assert "default-src 'none'" in response.headers["content-security-policy"]
        sit(ann, url, 100)
        sit(bo, url, 80)
        # A name is text, never markup.
        expect(ann_page.locator(f'li.seat[data-seat="{bo.seat}"] .name')).to_have_text(bo.name)
        assert ann_page.locator("#seats b").count() == 0
        expect(ann_page.locator("li.seat")).to_have_count(2)
        expect(bo_page.locator("li.seat")).to_have_count(2)
        synced(bo, gateway_url, table_id)

        # bo's cards come on bo's private stream: the page shows them without reading
        # the table (nor its seat) again.
        reads = len(bo.reads)
        ann_page.locator("[data-action=start]").tap()
        expect(bo_page.locator("#my-cards .card")).to_have_count(3)
        assert bo.reads[reads:] == []
        dealt = call(gateway_url, "GET", f"/v1/tables/{table_id}", token=bo.key)["you"]["cards"]
        for card in dealt:
            expect(bo_page.locator(f'#my-cards [data-card="{card}"]')).to_have_text(label(card))
        expect(ann_page.locator("#table")).to_have_attribute("data-phase", "declaring")
        check_both([ann, bo], gateway_url, table_id)
        expect(ann_page.locator("#phase")).to_have_text("Your call: in or out?")
        shot(ann_page, "guts-declare-phone")

        # A reload finds the player's seat again: same cards, same choice to make.
        bo_page.reload()
        expect(bo_page.locator("li.seat.me .name")).to_have_text(bo.name)
        expect(bo_page.locator("[data-action=in]")).to_be_visible()
        check_both([ann, bo], gateway_url, table_id)

        reads = len(bo.reads)
        ann_page.locator("[data-action=in]").tap()
        expect(ann_page.locator("#actions")).to_contain_text("You are in")
        # bo sees that ann has decided, not what.
        ann_row = bo_page.locator(f'li.seat[data-seat="{ann.seat}"]')
        expect(ann_row.locator(".badge.declared")).to_have_count(1)
        expect(ann_row.locator(".badge.in")).to_have_count(0)
        check_both([ann, bo], gateway_url, table_id)

        bo_page.locator("[data-action=in]").tap()
        for person in (ann, bo):
            expect(person.page.locator("#table")).to_have_attribute("data-phase", "between_deals")
            table = synced(person, gateway_url, table_id)
            assert table["deal"]["outcome"] in ("won", "split")
            assert_result_shown(person, table)
        # The whole deal, showdown included, came from the events.
        assert bo.reads[reads:] == []
        shot(ann_page, "guts-showdown-phone")
        shot(bo_page, "guts-showdown-desktop")

        bo_page.locator("#leave").tap()
        expect(bo_page.locator("#seat-form")).to_be_visible()
        expect(bo_page.locator("li.seat.me")).to_have_count(0)
        table = call(gateway_url, "GET", f"/v1/tables/{table_id}")
        leaving = table["seats"].get(str(bo.seat))
        if leaving is None:
            expect(ann_page.locator(f'li.seat[data-seat="{bo.seat}"]')).to_have_count(0)
        else:
            expect(ann_page.locator(f'li.seat[data-seat="{bo.seat}"]')).to_contain_text("Leaving")
        assert ann.errors == []
        assert bo.errors == []
        # Live updates came from each seat's own stream, opened with a ticket; every
        # request stayed on this gateway.
        stream = re.compile(
            rf"/v1/tables/{table_id}/events/stream\?ticket=crt_[^&]+&after=\d+&lang=en$"
        )
        for person in (ann, bo):
            assert any(stream.search(url) for url in person.requests)
            assert all(url.startswith(gateway_url + "/") for url in person.requests)
    finally:
        phone.close()
        desktop.close()


def tickets(person: Seat) -> list[str]:
    """The tickets the person's page opened its event streams with, in order."""
    found = []
    for url in person.requests:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        if url.split("?")[0].endswith("/events/stream") and "ticket" in query:
            found.append(query["ticket"][0])
    return found


def test_another_device_with_the_key_plays_on(browser: Browser, gateway_url: str) -> None:
    phone, ann_page = new_page(browser, PHONE)
    desktop, bo_page = new_page(browser, DESKTOP)
    laptop, again_page = new_page(browser, DESKTOP)
    ann, bo = Seat("ann", ann_page), Seat("bo", bo_page)
    try:
        sign_in(ann, gateway_url)
        sign_in(bo, gateway_url)
        table_id = create_table(ann_page, gateway_url, "guts", "Two screens")
        url = f"{gateway_url}/tables/{table_id}"
        sit(ann, url, 100)
        sit(bo, url, 100)
        ann_page.locator("[data-action=start]").tap()
        expect(ann_page.locator("#table")).to_have_attribute("data-phase", "declaring")

        # The same key on another device: "My tables" lists the seat, and its link rejoins.
        again = Seat("ann", again_page, key=ann.key)
        paste_key(again_page, gateway_url, ann.key, "ann")
        mine = again_page.locator(f'#my-tables li[data-table="{table_id}"]')
        expect(mine).to_contain_text("Two screens")
        expect(mine).to_contain_text("Rejoin")
        expect(again_page.locator("#tables-title")).to_be_visible()
        mine.locator("a").tap()
        again_page.wait_for_url(url)
        expect(again_page.locator("li.seat.me .name")).to_have_text("ann")
        expect(again_page.locator("#phase")).to_have_text("Your call: in or out?")
        again.seat = ann.seat
        for person in (ann, again):
            table = synced(person, gateway_url, table_id)
            assert_table_shown(person, table)
        assert again_page.evaluate("() => Object.keys(localStorage)") == [PLAYER_KEY]

        # Each connection of a page's stream opens with a ticket of its own: after the
        # gateway ends one, the page reconnects with a new ticket and misses nothing.
        opened = len(tickets(ann))
        with ann_page.expect_request(lambda request: "/events/stream?ticket=" in request.url):
            pass
        assert len(tickets(ann)) > opened
        assert len(set(tickets(ann))) == len(tickets(ann))
        # A move from the second device shows on the first through its stream.
        again_page.locator("[data-action=in]").tap()
        for page in (again_page, ann_page):
            expect(page.locator("#actions")).to_contain_text("You are in")
        bo_page.locator("[data-action=in]").tap()
        for person in (ann, again, bo):
            expect(person.page.locator("#table")).to_have_attribute("data-phase", "between_deals")
            assert_result_shown(person, synced(person, gateway_url, table_id))

        # Signing out there leaves a spectator's page; the first device plays on.
        again_page.locator("#sign-out").tap()
        expect(again_page.locator("#sign-in")).to_be_visible()
        expect(again_page.locator("li.seat.me")).to_have_count(0)
        expect(again_page.locator("#seat-form")).to_be_hidden()
        assert again_page.evaluate("key => localStorage.getItem(key)", PLAYER_KEY) is None
        expect(ann_page.locator("li.seat.me .name")).to_have_text("ann")
        for person in (ann, again, bo):
            assert person.errors == []
    finally:
        phone.close()
        desktop.close()
        laptop.close()


def test_a_revoked_key_signs_the_page_out(browser: Browser, gateway_url: str) -> None:
    phone, page = new_page(browser, PHONE)
    gil = Seat("gil", page)
    try:
        sign_in(gil, gateway_url)
        table_id = create_table(page, gateway_url, "guts", "Short stay")
        sit(gil, f"{gateway_url}/tables/{table_id}", 100)
        key_id = call(gateway_url, "GET", "/v1/players/me", token=gil.key)["key_id"]
        request = urllib.request.Request(
            f"{gateway_url}/v1/players/me/keys/{key_id}",
            method="DELETE",
            headers={"Authorization": f"Bearer {gil.key}"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 204
        # The page's next request with the key (its stream's next ticket) is refused: it
        # forgets the key and shows the table as a spectator.
        expect(page.locator("#sign-in")).to_be_visible()
        expect(page.locator("#problem")).to_contain_text("no longer signs you in")
        expect(page.locator("li.seat.me")).to_have_count(0)
        expect(page.locator(f'li.seat[data-seat="{gil.seat}"] .name')).to_have_text("gil")
        assert page.evaluate("key => localStorage.getItem(key)", PLAYER_KEY) is None
        assert gil.errors == []
    finally:
        phone.close()


def test_operator_mode_signs_in_with_a_pasted_key(
    browser: Browser, operator_gateway: tuple[str, str]
) -> None:
    base, operator_key = operator_gateway
    phone, page = new_page(browser, PHONE)
    person = Seat("eve", page)
    try:
        page.goto(base + "/")
        # Here only the operator creates players: the page asks for a key, not a name.
        expect(page.locator("#sign-in")).to_be_visible()
        expect(page.locator("#sign-up")).to_be_hidden()
        expect(page.locator("#operator-note")).to_be_visible()
        _, _, html = fetch(base + "/tables/anything")
        assert b'<meta name="cardroom-players-mode" content="operator">' in html
        with pytest.raises(AssertionError, match="401"):
            call(base, "POST", "/v1/players", {"name": "eve"})
        eve = call(base, "POST", "/v1/players", {"name": "eve"}, operator_key)
        key = eve["key"]
        # chips come from the operator here
        path = f"/v1/operator/players/{eve['id']}/deposits"
        call(base, "POST", path, {"amount": 500}, operator_key)
        # A key that signs nobody in is refused in words.
        page.fill("#key-form input[name=player_key]", "crk_" + "x" * 43)
        page.locator("#key-form button[type=submit]").tap()
        expect(page.locator("#problem")).to_contain_text("does not sign anyone in")
        paste_key(page, base, key, "eve")
        person.key = key
        table_id = create_table(page, base, "guts", "Members only")
        sit(person, f"{base}/tables/{table_id}", 100)
        table = synced(person, base, table_id)
        assert table["seats"][str(person.seat)]["name"] == "eve"
        assert person.errors == []
    finally:
        phone.close()


def play_paiute_turn(person: Seat, table: dict[str, Any]) -> None:
    """Play the seat's turn by tapping, as a careful player would."""
    page = person.page
    deal = table["deal"]
    hand = list(table["you"]["cards"])
    wild = deal["wild_rank"]
    if table["pending"]["action"] == "draw":
        expect(page.locator("#phase")).to_contain_text("Your turn: draw")
        expect(page.locator("#board")).to_contain_text(label(deal["wild_card"]))
        expect(page.locator("#board")).to_contain_text(f"{deal['stock_size']} left")
        if deal["discard_top"]:
            expect(page.locator("#board")).to_contain_text(label(deal["discard_top"]))
        source = choose_source(hand, deal["discard_top"], wild)
        page.locator(f"[data-action=draw-{source}]").tap()
        expect(page.locator("#my-cards button.card")).to_have_count(6)
        return
    drawn = table["you"]["drawn"]
    keep = drawn["card"] if drawn and drawn["source"] == "discard" else None
    value, show = best_call(hand, wild, keep)
    if value.strength > 0:
        expect(page.locator("#hint")).to_contain_text(f"You can call: {value.description}")
        for card in show:
            page.locator(f'#my-cards [data-card="{card}"]').tap()
            expect(page.locator(f'#my-cards [data-card="{card}"]')).to_have_attribute(
                "aria-pressed", "true"
            )
        page.locator("[data-action=call]").tap()
    else:
        expect(page.locator("#hint")).to_contain_text("No winning combination")
        card = choose_discard(hand, wild, keep)
        page.locator(f'#my-cards [data-card="{card}"]').tap()
        expect(page.locator("[data-action=discard]")).to_have_text(f"Discard {label(card)}")
        if page.viewport_size and page.viewport_size["width"] < 600:
            shot(page, "paiute-turn-phone")
        page.locator("[data-action=discard]").tap()


def test_paiute_deal_two_browsers(browser: Browser, gateway_url: str) -> None:
    phone, ann_page = new_page(browser, PHONE)
    desktop, bo_page = new_page(browser, DESKTOP)
    ann, bo = Seat("ann", ann_page), Seat("bo", bo_page)
    people = {}
    try:
        sign_in(ann, gateway_url)
        sign_in(bo, gateway_url)
        table_id = create_table(ann_page, gateway_url, "paiute", "Paiute night")
        url = f"{gateway_url}/tables/{table_id}"
        sit(ann, url, 100)
        sit(bo, url, 100)
        people = {ann.seat: ann, bo.seat: bo}
        bo_page.locator("[data-action=start]").tap()
        reloaded = False
        played = 0
        while True:
            views = check_both([ann, bo], gateway_url, table_id)
            table = views[0]
            if deal_decided(gateway_url, table_id, table):
                break
            if table["phase"] == "between_deals":
                continue
            assert table["phase"] in ("playing", "last_turns"), table["phase"]
            person = people[table["pending"]["seats"][0]]
            other = bo if person is ann else ann
            expect(other.page.locator("#phase")).to_contain_text(f"{person.name} to ")
            if not reloaded and played == 2:
                person.page.reload()
                expect(person.page.locator("li.seat.me .name")).to_have_text(person.name)
                reloaded = True
            seen = synced(person, gateway_url, table_id)
            play_paiute_turn(person, seen)
            wait_for(
                lambda v=seen["version"]: (
                    call(gateway_url, "GET", f"/v1/tables/{table_id}")["version"] > v
                ),
                "the move to land",
            )
            played += 1
            assert played < 400, "the deal never ended"
        assert reloaded
        for person in (ann, bo):
            table = synced(person, gateway_url, table_id)
            assert table["deal"]["outcome"] in ("won", "split")
            assert_result_shown(person, table)
            caller = str(table["deal"]["caller"])
            claim = table["deal"]["claims"][caller]
            expect(person.page.locator(f'#shown li[data-seat="{caller}"]')).to_contain_text(
                claim["description"]
            )
        shot(ann_page, "paiute-showdown-phone")
        shot(bo_page, "paiute-showdown-desktop")
        assert ann.errors == []
        assert bo.errors == []
    finally:
        phone.close()
        desktop.close()


def test_lobby_lists_tables_and_explains_errors(browser: Browser, gateway_url: str) -> None:
    phone, page = new_page(browser, PHONE)
    desktop, wide = new_page(browser, DESKTOP)
    try:
        host = sign_up(gateway_url, "host")
        table = call(
            gateway_url, "POST", "/v1/tables", {"game": "guts", "name": "<i>late</i>"}, host
        )["table"]
        # the lobby lists a table once somebody sits there
        call(gateway_url, "POST", f"/v1/tables/{table['id']}/seats", {"buy_in": 50}, host)
        page.goto(gateway_url + "/")
        item = page.locator(f'#tables li[data-table="{table["id"]}"]')
        expect(item.locator(".table-name")).to_have_text("<i>late</i>")
        assert page.locator("#tables i").count() == 0
        # The lobby refreshes itself.
        created = call(gateway_url, "POST", "/v1/tables", {"game": "paiute", "name": "Later"}, host)
        later = created["table"]
        call(gateway_url, "POST", f"/v1/tables/{later['id']}/seats", {"buy_in": 50}, host)
        expect(page.locator(f'#tables li[data-table="{later["id"]}"]')).to_contain_text("Paiute")
        # Signed out, a new table asks for a sign-in first.
        page.locator("#create button[type=submit]").tap()
        expect(page.locator("#problem")).to_contain_text("Sign in first")
        sign_in(Seat("dee", page), gateway_url)
        expect(page.locator("#mine-empty")).to_be_visible()
        # A visitor watches a table; signing in there offers the seat.
        wide.goto(f"{gateway_url}/tables/{table['id']}")
        expect(wide.locator("#sign-in")).to_be_visible()
        expect(wide.locator("#seat-form")).to_be_hidden()
        expect(wide.locator("#phase")).to_contain_text("Waiting for players")
        wide.fill("#sign-up input[name=player_name]", "fay")
        wide.locator("#sign-up button[type=submit]").tap()
        expect(wide.locator("#player-name")).to_have_text("fay")
        wide.fill("#seat-form input[name=buy_in]", "60")
        wide.locator("#seat-form button[type=submit]").tap()
        expect(wide.locator("li.seat.me .name")).to_have_text("fay")
        expect(wide.locator("li.seat.me .chips")).to_have_text("60")
        # A refused option is explained in words, and its field is marked.
        page.fill("input[name=turn_seconds]", "0")
        page.locator("#create button[type=submit]").tap()
        expect(page.locator("#problem")).to_be_visible()
        expect(page.locator("#problem")).to_contain_text("turn_seconds")
        expect(page.locator("input[name=turn_seconds]")).to_have_attribute("aria-invalid", "true")
        # An unknown table says so.
        page.goto(gateway_url + "/tables/nosuchtable")
        expect(page.locator("#problem")).to_contain_text("does not exist")
        # A taken name is refused in plain words.
        page.goto(f"{gateway_url}/tables/{later['id']}")
        cy = sign_up(gateway_url, "cy")
        call(gateway_url, "POST", f"/v1/tables/{later['id']}/seats", {"buy_in": 50}, cy)
        page.fill("#seat-form input[name=name]", "cy")
        page.fill("#seat-form input[name=buy_in]", "50")
        page.locator("#seat-form button[type=submit]").tap()
        expect(page.locator("#problem")).to_contain_text("cy")
        expect(page.locator("#seat-form")).to_be_visible()
        page.goto(gateway_url + "/")
        wide.goto(gateway_url + "/")
        expect(wide.locator(f'#tables li[data-table="{later["id"]}"]')).to_be_visible()
        shot(page, "lobby-phone")
        shot(wide, "lobby-desktop")
    finally:
        phone.close()
        desktop.close()


def test_the_lobby_filters_and_a_quick_seat_in_one_tap(browser: Browser, gateway_url: str) -> None:
    context, page = new_page(browser, PHONE)
    try:
        host, other = sign_up(gateway_url, "host"), sign_up(gateway_url, "other")
        tables = {}
        for label, options, owner in (
            ("guts", {"game": "guts", "cards": 2, "ante": 7, "max_players": 3}, host),
            ("paiute", {"game": "paiute", "ante": 7}, other),
            ("empty", {"game": "guts", "cards": 2, "ante": 7}, other),
        ):
            made = call(gateway_url, "POST", "/v1/tables", {**options, "name": label}, owner)
            tables[label] = made["table"]["id"]
        for label, owner in (("guts", host), ("paiute", other)):
            call(gateway_url, "POST", f"/v1/tables/{tables[label]}/seats", {"buy_in": 140}, owner)
        page.goto(gateway_url + "/")
        listed = page.locator("#tables li")

        def shown(*labels: str) -> None:
            for label, table_id in tables.items():
                item = page.locator(f'#tables li[data-table="{table_id}"]')
                expect(item).to_have_count(1 if label in labels else 0)

        page.fill("#filters input[name=ante]", "7")
        page.locator("#filters input[name=ante]").dispatch_event("change")
        shown("guts", "paiute")  # nobody sits at the empty table: not listed
        page.select_option("#filters select[name=game]", "paiute")
        shown("paiute")
        page.select_option("#filters select[name=game]", "guts")
        page.select_option("#filters select[name=cards]", "2")
        shown("guts")
        expect(listed.first).to_contain_text("1 seated")
        # signed in, one tap seats the player at the table the filters keep
        sign_in(Seat("ann", page), gateway_url)
        page.select_option("#filters select[name=game]", "guts")
        page.select_option("#filters select[name=cards]", "2")
        page.fill("#filters input[name=ante]", "7")
        page.fill("#quick-seat input[name=buy_in]", "140")
        page.locator("#quick-seat button[type=submit]").tap()
        page.wait_for_url(f"{gateway_url}/tables/{tables['guts']}")
        expect(page.locator("li.seat.me .name")).to_have_text("ann")
        shot(page, "lobby-quick-seat")
    finally:
        context.close()


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET a URL; status, headers (lower-case names) and body, errors included."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def test_pages_and_assets_are_served_with_a_strict_policy(gateway_url: str) -> None:
    for path in ("/", "/tables/anything"):
        status, headers, body = fetch(gateway_url + path)
        assert status == 200
        assert headers["content-type"].startswith("text/html")
        policy = headers["content-security-policy"]
        assert "default-src 'none'" in policy
        assert "script-src 'self'" in policy
        assert "'unsafe-inline'" not in policy
        assert headers["x-content-type-options"] == "nosniff"
        # Only this gateway's own files, and no inline script or style.
        html = body.decode()
        assert "http://" not in html
        assert "https://" not in html
        assert "<script>" not in html
        assert "style=" not in html
        # The page is told how players sign up here, and is revalidated by its tag.
        assert '<meta name="cardroom-players-mode" content="open">' in html
        request = urllib.request.Request(
            gateway_url + path, headers={"If-None-Match": headers["etag"]}
        )
        with pytest.raises(urllib.error.HTTPError) as unchanged:
            urllib.request.urlopen(request, timeout=30)
        assert unchanged.value.code == 304
        for asset in re.findall(r'(?:src|href)="(/web/[^"]+)"', html):
            status, headers, _ = fetch(gateway_url + asset)
            assert status == 200, asset
            assert "content-security-policy" in headers
    status, headers, _ = fetch(gateway_url + "/web/table.js")
    assert headers["content-type"].startswith("text/javascript")
    for missing in ("/web/nothing.js", "/web/index.html", "/web/..%2Fpages.py"):
        status, headers, body = fetch(gateway_url + missing)
        assert status == 404, missing
        assert headers["content-type"] == "application/problem+json"
        assert json.loads(body)["code"] == "route_not_found"


def test_an_away_seat_is_shown_and_comes_back_from_the_page(
    browser: Browser, gateway_url: str
) -> None:
    context, page = new_page(browser, PHONE)
    ann = Seat("ann", page)
    try:
        sign_in(ann, gateway_url)
        bo = sign_up(gateway_url, "bo")
        options = {"game": "guts", "turn_seconds": 1, "deal_pause_seconds": 0}
        table_id = call(gateway_url, "POST", "/v1/tables", options, token=ann.key)["table"]["id"]
        seats = f"/v1/tables/{table_id}/seats"
        call(gateway_url, "POST", seats, {"name": "ann", "buy_in": 100}, token=ann.key)
        call(gateway_url, "POST", seats, {"name": "bo", "buy_in": 100}, token=bo)
        page.goto(f"{gateway_url}/tables/{table_id}")
        expect(page.locator("li.seat.me .name")).to_have_text("ann")
        call(gateway_url, "POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, bo)
        # nobody decides: after two missed decisions both are away, visibly
        me = page.locator("li.seat.me")
        expect(me.locator(".badge", has_text="Away")).to_be_visible(timeout=30_000)
        expect(page.locator("#back-panel")).to_be_visible()
        expect(page.locator("#table")).to_have_attribute("data-phase", "waiting")
        expect(page.locator("#log")).to_contain_text("ann is away")
        page.locator("#back").tap()
        expect(page.locator("#back-panel")).to_be_hidden()
        expect(me.locator(".badge", has_text="Away")).to_have_count(0)
        # bo back too: the table deals again, to both, in the same game
        call(gateway_url, "POST", f"/v1/tables/{table_id}/actions", {"action": "back"}, bo)
        expect(page.locator("#log")).to_contain_text("Deal 3:", timeout=30_000)
        assert ann.errors == []
    finally:
        context.close()
