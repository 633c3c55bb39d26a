"""The table page in each of its languages, in headless Chromium: Kiswahili, Pashto,
Hungarian, Estonian and English.

For each language a browser context whose languages put it first (a phone-sized window,
360x740) signs in on the lobby, sits at a Guts table and at a Paiute table and plays a
whole deal at each by tapping, against a second player who plays through the API. The
page must speak the language (its words are the catalogue's, its hand descriptions the
API's in that language), set `<html lang dir>`, mirror its layout in Pashto while the
cards stay left to right, and never be wider than the phone. Another test switches the
language with the picker, keeps the table as it was, and finds the choice after a reload.
Set CARDROOM_SCREENSHOTS to a folder to save a screenshot of each language mid-deal.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect

from api.i18n.catalogs import translations
from tests.support.table_page import (
    Seat,
    best_call,
    call,
    choose_discard,
    choose_source,
    label,
    shot,
    sign_up,
    synced,
    wait_for,
)

pytestmark = pytest.mark.timeout(600)

# Each language, and the browser locale that asks for it first.
LOCALES = {"sw": "sw-KE", "ps": "ps-AF", "hu": "hu-HU", "et": "et-EE", "en": "en-GB"}
PHONE_SIZE: ViewportSize = {"width": 360, "height": 740}
SMALL_PHONE: dict[str, Any] = {"viewport": PHONE_SIZE, "device_scale_factor": 1, "is_mobile": True}
WIDE: ViewportSize = {"width": 1280, "height": 860}
LANGUAGE_KEY = "cardroom.lang"

# Elements wider than the window, or reaching past either edge of it, outside any box
# that clips them (an ellipsis), and the page's own width.
OVERFLOW = """() => {
  const width = window.innerWidth;
  const clipped = (node) => {
    for (let up = node.parentElement; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX !== "visible") return true;
    }
    return false;
  };
  const wide = [];
  for (const node of document.body.querySelectorAll("*")) {
    const box = node.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const past = box.right > width + 0.5 || box.left < -0.5;
    if (box.width > width + 0.5 || (past && !clipped(node))) {
      wide.push(`${node.tagName}#${node.id}.${node.className} ${box.left}..${box.right}`);
    }
  }
  return { scroll: document.documentElement.scrollWidth, width, wide };
}"""


def say(lang: str, msgid: str, **params: str) -> str:
    """What the page writes for `msgid` in `lang` (params already as the page writes them)."""
    return translations(lang, "page").gettext(msgid).format(**params)


def say_n(lang: str, singular: str, plural: str, n: int, shown: str, **params: str) -> str:
    """What the page writes for a message with a count `n` (written `shown`)."""
    return translations(lang, "page").ngettext(singular, plural, n).format(n=shown, **params)


def written(page: Page, n: int) -> str:
    """A number as the page writes it in its language."""
    return str(
        page.evaluate("n => new Intl.NumberFormat(document.documentElement.lang).format(n)", n)
    )


def read(base: str, path: str, token: str, lang: str) -> Any:
    """GET an API path with the player's key, asking for `lang`."""
    headers = {"Authorization": f"Bearer {token}", "Accept-Language": lang}
    request = urllib.request.Request(base + path, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def assert_fits(page: Page, where: str) -> None:
    """Nothing on the page is wider than the window, nor sticks out of it."""
    found = page.evaluate(OVERFLOW)
    assert found["scroll"] <= found["width"], f"{where}: the page scrolls sideways: {found}"
    assert found["wide"] == [], f"{where}: elements past the window's edge: {found['wide']}"


def assert_direction(page: Page, lang: str) -> None:
    """Pashto's page runs right to left, the others left to right; cards stay left to right."""
    rtl = lang == "ps"
    assert page.evaluate("() => document.dir") == ("rtl" if rtl else "ltr")
    assert page.evaluate("() => document.documentElement.lang") == lang
    width = page.viewport_size["width"] if page.viewport_size else 360
    brand = page.locator(".brand").bounding_box()
    assert brand is not None
    # The header starts at the right in Pashto, at the left otherwise.
    assert (brand["x"] > width / 2) is rtl, (lang, brand)
    row = page.locator("li.seat.me")
    name, stack = row.locator(".name").bounding_box(), row.locator(".stack").bounding_box()
    assert name is not None
    assert stack is not None
    assert (name["x"] > stack["x"]) is rtl, (lang, name, stack)
    # The player's cards read left to right in every language, in the order dealt.
    xs = page.locator("#my-cards .card").evaluate_all(
        "nodes => nodes.map(n => n.getBoundingClientRect().x)"
    )
    assert xs == sorted(xs), (lang, xs)
    for card in page.locator("#my-cards .card").all():
        assert card.get_attribute("dir") == "ltr"


def open_context(browser: Browser, lang: str) -> tuple[BrowserContext, Page]:
    """A phone-sized context whose browser languages ask for `lang` first."""
    context = browser.new_context(**SMALL_PHONE, has_touch=True, locale=LOCALES[lang])
    return context, context.new_page()


def sign_in_here(person: Seat, base: str, lang: str) -> None:
    """Sign in on the lobby, in the page's language; keep the key the page holds."""
    page = person.page
    page.goto(base + "/")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    expect(page.locator("#tables-title")).to_have_text(say(lang, "Tables"))
    expect(page.locator("#sign-in-title")).to_have_text(say(lang, "Sign in to play"))
    expect(page.locator("#language")).to_have_value(lang)
    page.fill("#sign-up input[name=player_name]", person.name)
    page.locator("#sign-up button[type=submit]").tap()
    expect(page.locator("#player-name")).to_have_text(person.name)
    balance = say_n(
        lang, "{n} chip in the wallet", "{n} chips in the wallet", 10_000, written(page, 10_000)
    )
    expect(page.locator("#player-balance")).to_have_text(f" · {balance}")
    expect(page.locator("#sign-out")).to_have_text(say(lang, "Sign out"))
    assert_fits(page, f"{lang} lobby")
    person.key = page.evaluate("() => JSON.parse(localStorage.getItem('cardroom.player')).key")


def sit_here(person: Seat, base: str, table_id: str, lang: str) -> None:
    """Open the table and sit down with the form."""
    page = person.page
    page.goto(f"{base}/tables/{table_id}")
    expect(page.locator("#seat-form h2")).to_have_text(say(lang, "Take a seat"))
    page.fill("#seat-form input[name=buy_in]", "100")
    page.locator("#seat-form button[type=submit]").tap()
    expect(page.locator("li.seat.me .name")).to_have_text(person.name)
    person.seat = int(page.locator("li.seat.me").get_attribute("data-seat") or 0)


def assert_showdown(person: Seat, base: str, table_id: str, lang: str) -> None:
    """The ended deal in the page's words: the winner's sentence, each hand's description
    as the API gives it in this language, the stacks as the language writes numbers."""
    page = person.page
    table = synced(person, base, table_id)
    assert table["deal"]["ended"]
    localised = read(base, f"/v1/tables/{table_id}", person.key, lang)
    deal = localised["deal"]
    expect(page.locator("#result-title")).to_have_text(
        say(lang, "Deal {number}: result", number=written(page, deal["number"]))
    )
    won: dict[str, int] = {}
    for move in deal["flow"]:
        if move["source"] == "pot" and move["target"] == "seat":
            won[str(move["seat"])] = won.get(str(move["seat"]), 0) + move["amount"]
    names = {key: record["name"] for key, record in localised["seats"].items()}
    if len(won) == 1:
        ((seat, amount),) = won.items()
        sentence = say_n(
            lang,
            "{name} wins {n} chip.",
            "{name} wins {n} chips.",
            amount,
            written(page, amount),
            name=names[seat],
        )
        expect(page.locator("#headline")).to_contain_text(sentence)
    for seat, amount in won.items():
        wins = say(lang, "Wins {n}", n=written(page, amount))
        expect(page.locator(f'#shown li[data-seat="{seat}"] .badge')).to_have_text(wins)
    for seat, cards in deal["shown"].items():
        row = page.locator(f'#shown li[data-seat="{seat}"]')
        for card in cards:
            expect(row.locator(f'[data-card="{card}"]')).to_have_text(label(card))
        description = (deal["ranks"].get(seat) or deal["claims"].get(seat) or {}).get("description")
        if description:
            expect(row.locator(".description")).to_have_text(description)
    for key, record in localised["seats"].items():
        chips = page.locator(f'li.seat[data-seat="{key}"] .chips')
        expect(chips).to_have_text(written(page, record["stack"]))
    expect(page.locator("#log")).to_contain_text(say(lang, "Showdown"))


def play_guts(me: Seat, other_key: str, base: str, lang: str) -> None:
    """A whole Guts deal: the page taps Start and In, the other player goes in too."""
    page = me.page
    table_id = call(
        base,
        "POST",
        "/v1/tables",
        {"game": "guts", "turn_seconds": 600, "deal_pause_seconds": 60},
        me.key,
    )["table"]["id"]
    sit_here(me, base, table_id, lang)
    call(base, "POST", f"/v1/tables/{table_id}/seats", {"buy_in": 100}, other_key)
    expect(page.locator("li.seat")).to_have_count(2)
    expect(page.locator("#game")).to_have_text(
        say_n(lang, "{n}-card Guts", "{n}-card Guts", 3, written(page, 3))
    )
    start = page.locator("[data-action=start]")
    expect(start).to_have_text(say(lang, "Start the game"))
    start.tap()
    expect(page.locator("#my-cards .card")).to_have_count(3)
    expect(page.locator("#phase")).to_have_text(say(lang, "Your call: in or out?"))
    expect(page.locator("#hand-title")).to_have_text(say(lang, "Your cards"))
    expect(page.locator("[data-action=in]")).to_have_text(say(lang, "In"))
    expect(page.locator("[data-action=out]")).to_have_text(say(lang, "Out"))
    synced(me, base, table_id)
    assert_direction(page, lang)
    assert_fits(page, f"{lang} Guts, deciding")
    page.locator("[data-action=in]").tap()
    expect(page.locator("#actions")).to_have_text(say(lang, "You are in. Waiting for the others…"))
    call(
        base,
        "POST",
        f"/v1/tables/{table_id}/actions",
        {"action": "declare", "choice": "in"},
        other_key,
    )
    expect(page.locator("#table")).to_have_attribute("data-phase", "between_deals")
    assert_showdown(me, base, table_id, lang)
    assert_fits(page, f"{lang} Guts, showdown")


def other_turn(base: str, table_id: str, key: str) -> None:
    """The other player's Paiute turn, through the API, as a careful player plays it."""
    table = call(base, "GET", f"/v1/tables/{table_id}", token=key)
    deal, hand = table["deal"], list(table["you"]["cards"])
    wild = deal["wild_rank"]
    actions = f"/v1/tables/{table_id}/actions"
    if table["pending"]["action"] == "draw":
        source = choose_source(hand, deal["discard_top"], wild)
        call(base, "POST", actions, {"action": "draw", "source": source}, key)
        return
    drawn = table["you"]["drawn"]
    keep = drawn["card"] if drawn and drawn["source"] == "discard" else None
    value, show = best_call(hand, wild, keep)
    if value.strength > 0:
        rest = [card for card in hand if card not in show]
        body = {"action": "call", "cards": show, "discard": rest[0] if rest else None}
        call(base, "POST", actions, body, key)
    else:
        call(
            base,
            "POST",
            actions,
            {"action": "discard", "card": choose_discard(hand, wild, keep)},
            key,
        )


def my_turn(me: Seat, table: dict[str, Any], lang: str, pictured: bool) -> bool:
    """The page's Paiute turn, by tapping, checked in the page's words; whether it was
    pictured (a screenshot of the table mid-deal)."""
    page = me.page
    deal, hand = table["deal"], list(table["you"]["cards"])
    wild = deal["wild_rank"]
    last = table["phase"] == "last_turns"
    if table["pending"]["action"] == "draw":
        turn = "Last turns: Your turn: draw" if last else "Your turn: draw"
        expect(page.locator("#phase")).to_have_text(say(lang, turn))
        left = say_n(
            lang, "{n} left", "{n} left", deal["stock_size"], written(page, deal["stock_size"])
        )
        expect(page.locator("#board")).to_contain_text(left)
        expect(page.locator("#board .label").first).to_have_text(say(lang, "Wild"))
        source = choose_source(hand, deal["discard_top"], wild)
        page.locator(f"[data-action=draw-{source}]").tap()
        expect(page.locator("#my-cards button.card")).to_have_count(6)
        return pictured
    drawn = table["you"]["drawn"]
    keep = drawn["card"] if drawn and drawn["source"] == "discard" else None
    value, show = best_call(hand, wild, keep)
    if value.strength > 0:
        expect(page.locator("#hint")).to_contain_text(
            say(lang, "You can call: {hand}.", hand="")[:-1]
        )
        for card in show:
            page.locator(f'#my-cards [data-card="{card}"]').tap()
        verb = "Lay down these {n}" if last else "Call with these {n}"
        call_button = page.locator("[data-action=call]")
        expect(call_button).to_have_text(say(lang, verb, n=written(page, len(show))))
        call_button.tap()
        return pictured
    expect(page.locator("#hint")).to_have_text(
        say(lang, "No winning combination yet: tap one card and discard it.")
    )
    card = choose_discard(hand, wild, keep)
    page.locator(f'#my-cards [data-card="{card}"]').tap()
    discard = page.locator("[data-action=discard]")
    expect(discard).to_have_text(say(lang, "Discard {card}", card=label(card)))
    if not pictured:
        assert_fits(page, f"{lang} Paiute, discarding")
        if lang == "ps":
            shot(page, "table-ps-phone")
        page.set_viewport_size(WIDE)
        shot(page, f"table-{lang}")
        page.set_viewport_size(PHONE_SIZE)
    discard.tap()
    return True


def play_paiute(me: Seat, other_key: str, base: str, lang: str) -> None:
    """A whole Paiute deal (a void one is followed by the next): the page draws, discards
    and calls by tapping; the other player plays through the API."""
    page = me.page
    options = {"game": "paiute", "turn_seconds": 600, "deal_pause_seconds": 60}
    table_id = call(base, "POST", "/v1/tables", options, me.key)["table"]["id"]
    sit_here(me, base, table_id, lang)
    other_seat = call(base, "POST", f"/v1/tables/{table_id}/seats", {"buy_in": 100}, other_key)[
        "seat"
    ]
    expect(page.locator("li.seat")).to_have_count(2)
    page.locator("[data-action=start]").tap()
    pictured = False
    for _ in range(400):
        table = synced(me, base, table_id)
        if table["phase"] == "between_deals" and table["deal"]["outcome"] != "void":
            break
        if table["phase"] == "between_deals":
            hand = table["hand_number"]
            wait_for(
                lambda h=hand: call(base, "GET", f"/v1/tables/{table_id}")["hand_number"] > h,
                "the next deal",
                seconds=120,
            )
            continue
        version = table["version"]
        if table["pending"]["seats"] == [other_seat]:
            other_turn(base, table_id, other_key)
        else:
            pictured = my_turn(me, table, lang, pictured)
        wait_for(
            lambda v=version: call(base, "GET", f"/v1/tables/{table_id}")["version"] > v,
            "the move to land",
        )
    else:
        raise AssertionError("the deal never ended")
    assert_showdown(me, base, table_id, lang)
    caller = str(table["deal"]["caller"])
    expect(page.locator(f'li.seat[data-seat="{caller}"] .badge.in')).to_have_text(
        say(lang, "Called")
    )
    assert_fits(page, f"{lang} Paiute, showdown")


@pytest.mark.parametrize("lang", list(LOCALES))
def test_the_page_plays_a_guts_and_a_paiute_deal_in_each_language(
    browser: Browser, gateway_url: str, lang: str
) -> None:
    context, page = open_context(browser, lang)
    me = Seat(f"{lang}-player", page)
    try:
        sign_in_here(me, gateway_url, lang)
        other = sign_up(gateway_url, f"{lang}-other")
        play_guts(me, other, gateway_url, lang)
        play_paiute(me, other, gateway_url, lang)
        # The language came from the browser's; nothing was picked, so nothing is kept.
        assert page.evaluate("key => localStorage.getItem(key)", LANGUAGE_KEY) is None
        assert me.errors == []
    finally:
        context.close()


def test_the_picker_switches_the_language_in_place_and_remembers_it(
    browser: Browser, gateway_url: str
) -> None:
    # A browser asking for a language the pages do not speak gets English.
    context = browser.new_context(**SMALL_PHONE, has_touch=True, locale="fr-FR")
    page = context.new_page()
    me = Seat("picky", page)
    try:
        page.goto(gateway_url + "/")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        names = page.locator("#language option").all_text_contents()
        assert names == ["Kiswahili", "پښتو", "Magyar", "Eesti", "English"]
        page.fill("#sign-up input[name=player_name]", me.name)
        page.locator("#sign-up button[type=submit]").tap()
        expect(page.locator("#player-name")).to_have_text(me.name)
        me.key = page.evaluate("() => JSON.parse(localStorage.getItem('cardroom.player')).key")
        other = sign_up(gateway_url, "picky-other")
        options = {"game": "guts", "turn_seconds": 600}
        table_id = call(gateway_url, "POST", "/v1/tables", options, me.key)["table"]["id"]
        sit_here(me, gateway_url, table_id, "en")
        call(gateway_url, "POST", f"/v1/tables/{table_id}/seats", {"buy_in": 100}, other)
        page.locator("[data-action=start]").tap()
        expect(page.locator("#my-cards .card")).to_have_count(3)
        cards = page.locator("#my-cards .card").evaluate_all(
            "nodes => nodes.map(n => n.dataset.card)"
        )
        page.evaluate("() => { window.stillHere = true; }")

        # Switched in place: no reload, the same cards, the same decision to make.
        page.select_option("#language", "hu")
        expect(page.locator("html")).to_have_attribute("lang", "hu")
        expect(page.locator("#phase")).to_have_text(say("hu", "Your call: in or out?"))
        expect(page.locator("#hand-title")).to_have_text(say("hu", "Your cards"))
        expect(page.locator("#log-title")).to_have_text(say("hu", "At the table"))
        assert page.evaluate("() => window.stillHere") is True
        shown = page.locator("#my-cards .card").evaluate_all(
            "nodes => nodes.map(n => n.dataset.card)"
        )
        assert shown == cards
        assert page.evaluate("key => localStorage.getItem(key)", LANGUAGE_KEY) == "hu"

        # Pashto mirrors the page at once.
        page.select_option("#language", "ps")
        expect(page.locator("html")).to_have_attribute("dir", "rtl")
        expect(page.locator("[data-action=in]")).to_have_text(say("ps", "In"))
        assert_direction(page, "ps")

        # Remembered: a reload, and the lobby, speak the language picked.
        page.reload()
        expect(page.locator("html")).to_have_attribute("lang", "ps")
        expect(page.locator("#phase")).to_have_text(say("ps", "Your call: in or out?"))
        expect(page.locator("#language")).to_have_value("ps")
        # The showdown comes on the stream, opened with lang=ps after the reload although
        # the browser asks for French; the page shows the hands' descriptions in Pashto.
        page.locator("[data-action=in]").tap()
        actions = f"/v1/tables/{table_id}/actions"
        call(gateway_url, "POST", actions, {"action": "declare", "choice": "in"}, other)
        expect(page.locator("#table")).to_have_attribute("data-phase", "between_deals")
        assert_showdown(me, gateway_url, table_id, "ps")
        page.goto(gateway_url + "/")
        expect(page.locator("#tables-title")).to_have_text(say("ps", "Tables"))
        page.select_option("#language", "en")
        expect(page.locator("#tables-title")).to_have_text("Tables")
        expect(page.locator("html")).to_have_attribute("dir", "ltr")
        assert me.errors == []
    finally:
        context.close()


def test_the_page_catalogue_is_served_with_the_pages_policy(gateway_url: str) -> None:
    for lang in LOCALES:
        with urllib.request.urlopen(f"{gateway_url}/web/i18n/{lang}.json", timeout=30) as response:
            assert response.headers["Content-Type"].startswith("application/json")
            assert "default-src 'none'" in response.headers["Content-Security-Policy"]
            body = json.loads(response.read())
        assert body["lang"] == lang
        assert body["dir"] == ("rtl" if lang == "ps" else "ltr")
        assert set(body["plural"]) >= {"one", "other"}
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{gateway_url}/web/i18n/fr.json", timeout=30)
    assert missing.value.code == 404
    assert json.loads(missing.value.read())["code"] == "route_not_found"
