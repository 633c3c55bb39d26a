"""The lobby in headless Chromium, as a person uses it: the filters (game, cards, an ante
range, a free seat) and their next page, the quick seat, a table against two computer
players in one tap, how each game is played, keeping one's key after signing up, and
the player's limits, session settings, time-out and self-exclusion with the API's
refusals in the player's language. Every state tested is checked by axe-core (the
table page's check, tests/support/page_checks.py) at no violation; the main one in every
language, Pashto right to left with its game names in its own script."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from api.i18n.catalogs import translations
from tests.browser.test_languages import LOCALES, SMALL_PHONE, assert_fits, say
from tests.support.browser import DESKTOP, PHONE
from tests.support.page_checks import assert_no_violations
from tests.support.processes import GunicornGateway, RedisProcess
from tests.support.table_page import Seat, call, shot, sign_up, wait_for

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=30_000)

PLAYER_KEY = "cardroom.player"
# how long a raised limit waits at the strict gateway: long enough to be refused early
# on a busy machine, short enough to be confirmed within the test
COOLING_SECONDS = 20
PHONE_PROFILE: dict[str, Any] = dict(PHONE)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A phone-sized context in English that may use the clipboard."""
    made = browser.new_context(**PHONE_PROFILE, has_touch=True, locale="en-GB")
    made.grant_permissions(["clipboard-read", "clipboard-write"])
    yield made
    made.close()


@pytest.fixture
def strict_gateway(
    gateway_url: str, redis_process: RedisProcess, evaluator_address: str, tmp_path: Path
) -> Iterator[str]:
    """A second gateway beside the first (on another Redis database of the same server)
    that seats no computer player and lets a raised limit be confirmed soon: its URL."""
    server = GunicornGateway(
        redis_process.url.rsplit("/", 1)[0] + "/2",
        evaluator_address,
        tmp_path / "gunicorn-strict.log",
        GATEWAY_GRACEFUL_TIMEOUT="2",
        LOG_LEVEL="warning",
        BOTS_ALLOWED="never",
        LIMIT_COOLING_SECONDS=str(COOLING_SECONDS),
    )
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


def signed_in(page: Page, base: str, name: str) -> str:
    """A player created through the API whose key the page keeps; the key."""
    created = call(base, "POST", "/v1/players", {"name": name})
    page.goto(base + "/")
    saved = json.dumps({"key": created["key"], "id": created["id"], "name": name})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [PLAYER_KEY, saved])
    page.goto(base + "/")
    expect(page.locator("#player-name")).to_have_text(name)
    return str(created["key"])


def refused(base: str, path: str, body: Any, token: str, lang: str) -> dict[str, Any]:
    """The problem the API answers a POST with, in `lang`."""
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept-Language": lang,
        "Content-Type": "application/json",
    }
    request = urllib.request.Request(
        base + path, data=json.dumps(body).encode(), method="POST", headers=headers
    )
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(request, timeout=30)
    return dict(json.loads(error.value.read()))


def say_before(lang: str, msgid: str) -> str:
    """What the page writes for `msgid` in `lang`, up to its first placeholder."""
    return translations(lang, "page").gettext(msgid).split("{", 1)[0]


def listed(page: Page, table_id: str) -> Any:
    return page.locator(f'#tables li[data-table="{table_id}"]')


def seated_table(base: str, owner: str, **options: Any) -> str:
    """A table somebody sits at (the lobby lists no empty one); its id."""
    table = call(base, "POST", "/v1/tables", options, owner)["table"]
    buy_in = max(20 * options.get("ante", 1), 20)
    call(base, "POST", f"/v1/tables/{table['id']}/seats", {"buy_in": buy_in}, owner)
    return str(table["id"])


def test_filters_an_ante_range_and_a_quick_seat(context: BrowserContext, gateway_url: str) -> None:
    page = context.new_page()
    person = Seat("ann", page)
    host = sign_up(gateway_url, "host")
    low = seated_table(gateway_url, host, game="guts", ante=2)
    high = seated_table(gateway_url, host, game="guts", ante=9, cards=2)
    middle = seated_table(gateway_url, host, game="paiute", ante=5)
    person.key = signed_in(page, gateway_url, "ann")
    # the ante range keeps the tables whose ante lies within it, by keyboard alone
    page.locator("#filters input[name=ante]").focus()
    page.keyboard.type("3")
    page.keyboard.press("Tab")
    expect(listed(page, low)).to_have_count(0)
    expect(listed(page, high)).to_have_count(1)
    page.keyboard.type("6")
    page.keyboard.press("Tab")
    expect(listed(page, high)).to_have_count(0)
    expect(listed(page, middle)).to_have_count(1)
    # the buy-in range is said before sitting
    item = listed(page, middle)
    expect(item).to_contain_text("buy-in 100 to 2,500")
    assert_no_violations(page, "the lobby filtered")

    # the list refreshes by itself when a table changes, and keyboard focus stays on
    # the same table
    item.locator("a").focus()
    item.evaluate("node => { node.dataset.old = 'yes'; }")
    guest = sign_up(gateway_url, "guest")
    call(gateway_url, "POST", f"/v1/tables/{middle}/seats", {"buy_in": 100}, guest)
    expect(item).to_contain_text("2 seated")
    expect(page.locator(f'#tables li[data-table="{middle}"][data-old]')).to_have_count(0)
    focused = page.evaluate("() => document.activeElement.closest('li')?.dataset.table")
    assert focused == middle

    # one tap seats the player at a table like the filters say: here the Paiute one
    page.select_option("#filters select[name=game]", "paiute")
    page.fill("#quick-seat input[name=buy_in]", "150")
    page.locator("#quick-seat button[type=submit]").focus()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{gateway_url}/tables/{middle}")
    expect(page.locator("li.seat.me .name")).to_have_text("ann")
    assert not person.errors, person.errors


def test_the_next_page_of_tables(context: BrowserContext, gateway_url: str) -> None:
    page = context.new_page()
    made = []
    for host in range(5):
        key = sign_up(gateway_url, f"host {host}")
        made += [seated_table(gateway_url, key, game="guts", ante=3) for _ in range(5)]
    page.goto(gateway_url + "/")
    page.fill("#filters input[name=ante]", "3")
    page.fill("#filters input[name=ante_max]", "3")
    page.locator("#filters input[name=ante_max]").dispatch_event("change")
    expect(page.locator("#tables li")).to_have_count(20)
    more = page.locator("#more")
    expect(more).to_be_visible()
    more.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#tables li")).to_have_count(25)
    expect(more).to_be_hidden()
    # the keyboard goes on at the first table of the next page
    expect(page.locator("#tables li").nth(20).locator("a")).to_be_focused()
    assert_no_violations(page, "the lobby with its next page")
    shown = page.locator("#tables li").evaluate_all("nodes => nodes.map(n => n.dataset.table)")
    assert sorted(shown) == sorted(made)


def test_play_against_the_computer_in_one_tap(context: BrowserContext, gateway_url: str) -> None:
    page = context.new_page()
    person = Seat("bea", page)
    person.key = signed_in(page, gateway_url, "bea")
    page.select_option("#versus-computer select[name=game]", "paiute")
    page.locator("#versus-computer button[type=submit]").tap()
    page.wait_for_url(f"{gateway_url}/tables/**")
    table_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("li.seat.me .name")).to_have_text("bea")
    expect(page.locator("li.seat .badge.computer")).to_have_count(2)
    table = call(gateway_url, "GET", f"/v1/tables/{table_id}")
    assert table["game"] == "paiute"
    assert sorted(s.get("computer", "") for s in table["seats"].values()) == ["", "easy", "strong"]
    # the lobby says which tables computer players sit at
    page.goto(gateway_url + "/")
    item = listed(page, table_id)
    expect(item.locator(".tag.computer")).to_have_text("Computer players")
    expect(item).to_contain_text("2 computers")
    assert_no_violations(page, "the lobby with a table of computer players")
    assert not person.errors, person.errors


def test_a_new_player_is_offered_to_keep_the_key(context: BrowserContext, gateway_url: str) -> None:
    page = context.new_page()
    person = Seat("cy", page)
    page.goto(gateway_url + "/")
    expect(page.locator("#keep-key")).to_be_hidden()
    assert_no_violations(page, "the lobby signed out")
    page.fill("#sign-up input[name=player_name]", "cy")
    page.locator("#sign-up input[name=player_name]").press("Enter")
    panel = page.locator("#keep-key")
    expect(panel).to_be_visible()
    expect(panel).to_be_focused()
    expect(panel).to_contain_text("clearing the browser's data loses it")
    key = page.evaluate("k => JSON.parse(localStorage.getItem(k)).key", PLAYER_KEY)
    expect(page.locator("#new-key")).to_have_value(key)
    assert_no_violations(page, "the lobby offering to keep the key")
    shot(page, "lobby-keep-key")
    page.locator("#copy-key").click()
    expect(page.locator("#key-copied")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == key
    with page.expect_download() as download:
        page.locator("#download-key").click()
    saved = download.value.path()
    assert download.value.suggested_filename == "cardroom-key.txt"
    with open(saved) as file:
        assert file.read().strip() == key
    page.locator("#key-kept").click()
    expect(panel).to_be_hidden()
    # a key pasted on another device signs in without the offer
    page.locator("#sign-out").click()
    page.fill("#key-form input[name=player_key]", key)
    page.locator("#key-form button[type=submit]").click()
    expect(page.locator("#player-name")).to_have_text("cy")
    expect(panel).to_be_hidden()
    assert not person.errors, person.errors


def test_limits_sessions_and_breaks_with_refusals_in_the_language(
    browser: Browser, strict_gateway: str
) -> None:
    profile: dict[str, Any] = dict(DESKTOP)
    context = browser.new_context(**profile, locale="hu-HU")
    try:
        page = context.new_page()
        person = Seat("dan", page)
        person.key = signed_in(page, strict_gateway, "dan")
        menu = page.locator("#player-menu")
        expect(menu).to_be_visible()
        expect(menu.locator("h2")).to_have_text(say("hu", "Limits and breaks"))
        for part in ("limits", "session", "break"):
            page.locator(f"#{part}-part summary").focus()
            page.keyboard.press("Enter")
        expect(page.locator("#limits")).to_have_text(say("hu", "No limit set."))

        # a lower limit applies at once; a higher one waits, and confirming it early is
        # refused as the API words it, in Hungarian
        form = page.locator("#limit-form")
        form.locator("select[name=kind]").select_option("buy_in")
        form.locator("select[name=window]").select_option("7d")
        form.locator("input[name=amount]").fill("300")
        form.locator("button").click()
        expect(page.locator("#menu-done")).to_have_text(say("hu", "The limit applies now."))
        row = page.locator('#limits li[data-limit="buy_in:7d"]')
        expect(row).to_contain_text("legfeljebb 300 zseton")
        form.locator("input[name=amount]").fill("800")
        form.locator("button").click()
        waits = say_before(
            "hu", "The change waits until {when}: then confirm it here, and it applies."
        )
        expect(page.locator("#menu-done")).to_contain_text(waits)
        expect(row.locator(".pending")).to_contain_text("800")
        row.locator("[data-confirm]").focus()
        page.keyboard.press("Enter")
        slot = {"kind": "buy_in", "window": "7d"}
        cooling = refused(
            strict_gateway, "/v1/players/me/limits/confirmations", slot, person.key, "hu"
        )
        assert cooling["code"] == "limit_cooling"
        expect(page.locator("#menu-problem")).to_contain_text(cooling["detail"])
        assert_no_violations(page, "the player's menu open, a refusal shown")
        shot(page, "lobby-limits")
        # the session's limit and reality checks
        session = page.locator("#session-form")
        session.locator("input[name=limit_minutes]").fill("60")
        session.locator("input[name=reality_check_minutes]").fill("20")
        session.locator("button").click()
        expect(page.locator("#session-now")).to_contain_text("60")
        played = call(strict_gateway, "GET", "/v1/players/me/session", token=person.key)
        assert (played["limit_minutes"], played["reality_check_minutes"]) == (60, 20)
        # a longer session waits as a raised limit does: shown, refused early, confirmed
        session.locator("input[name=limit_minutes]").fill("90")
        session.locator("button").click()
        expect(page.locator("#menu-done")).to_contain_text(waits)
        pending = page.locator('#session-pending li[data-setting="limit_minutes"]')
        expect(pending.locator(".pending")).to_contain_text("90")
        expect(page.locator("#session-now")).to_contain_text("60")
        pending.locator("[data-confirm]").focus()
        page.keyboard.press("Enter")
        early = refused(
            strict_gateway,
            "/v1/players/me/session/confirmations",
            {"setting": "limit_minutes"},
            person.key,
            "hu",
        )
        assert early["code"] == "limit_cooling"
        expect(page.locator("#menu-problem")).to_contain_text(early["detail"])

        # once both waiting times are over (the session's ends last), each confirmation
        # applies its change
        asked = call(strict_gateway, "GET", "/v1/players/me/session", token=person.key)
        from_at = asked["pending"]["limit_minutes"]["from_at"]
        limits = call(strict_gateway, "GET", "/v1/players/me/limits", token=person.key)
        (waiting,) = [x for x in limits["limits"] if x["pending"]]
        last = max(from_at, waiting["pending"]["from_at"])
        wait_for(lambda: time.time() > last, "the cooling to end", 60)
        row.locator("[data-confirm]").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#menu-problem")).to_be_hidden()
        expect(page.locator("#menu-done")).to_have_text(say("hu", "The limit applies now."))
        expect(row).to_contain_text("legfeljebb 800 zseton")
        expect(row.locator(".pending")).to_have_count(0)
        pending.locator("[data-confirm]").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#menu-problem")).to_be_hidden()
        expect(page.locator("#session-pending li")).to_have_count(0)
        expect(page.locator("#session-now")).to_contain_text("90")

        # a time-out of 31 days is refused in Hungarian; one of a day is taken
        time_out = page.locator("#time-out-form")
        time_out.locator("input[name=days]").fill("31")
        time_out.locator("button").click()
        too_long = refused(
            strict_gateway,
            "/v1/players/me/exclusions",
            {"kind": "time_out", "days": 31},
            person.key,
            "hu",
        )
        expect(page.locator("#menu-problem")).to_contain_text(too_long["detail"])
        # a self-exclusion asks for the box to be ticked first
        page.locator("#exclude-form button").click()
        tick = say("hu", "Tick the box first: a self-exclusion cannot be shortened.")
        expect(page.locator("#menu-problem")).to_contain_text(tick)
        expect(page.locator("#exclude-form input[name=sure]")).to_be_focused()
        time_out.locator("input[name=days]").fill("1")
        time_out.locator("button").click()
        expect(page.locator("#menu-problem")).to_be_hidden()
        expect(page.locator("#exclusion-now")).not_to_have_text(
            say("hu", "No time-out or exclusion runs.")
        )
        state = call(strict_gateway, "GET", "/v1/players/me/exclusions", token=person.key)
        assert state["active"]
        assert state["exclusion"]["kind"] == "time_out"
        # and a quick seat is then refused, in Hungarian too
        page.locator("#quick-seat button[type=submit]").click()
        body = {"table": {"game": "guts"}, "buy_in": 100}
        excluded = refused(strict_gateway, "/v1/tables/quick-seat", body, person.key, "hu")
        assert excluded["code"] == "player_excluded"
        expect(page.locator("#problem")).to_contain_text(excluded["detail"])
        assert_no_violations(page, "the player's menu after a time-out")
        assert not person.errors, person.errors
    finally:
        context.close()


def test_a_refused_table_against_the_computer_is_explained(
    browser: Browser, strict_gateway: str
) -> None:
    profile: dict[str, Any] = dict(PHONE)
    context = browser.new_context(**profile, has_touch=True, locale="et-EE")
    try:
        page = context.new_page()
        person = Seat("fay", page)
        person.key = signed_in(page, strict_gateway, "fay")
        page.locator("#versus-computer button[type=submit]").tap()
        # the table was made and the player seated before the computer players were refused
        expect(page.locator("#problem")).to_be_visible()
        mine = call(strict_gateway, "GET", "/v1/players/me/seats", token=person.key)
        (seat,) = mine["seats"]
        table_id = seat["table_id"]
        path = f"/v1/tables/{table_id}/bots"
        body = {"strategy": "easy", "buy_in": 100}
        no_bots = refused(strict_gateway, path, body, person.key, "et")
        assert no_bots["code"] == "bots_not_allowed"
        expect(page.locator("#problem")).to_contain_text(no_bots["detail"])
        # the table, the player seated, is among the player's own
        expect(page.locator(f'#my-tables li[data-table="{table_id}"]')).to_be_visible()
        assert page.url.rstrip("/") == strict_gateway
        assert_no_violations(page, "the lobby explaining a refusal")
        assert not person.errors, person.errors
    finally:
        context.close()


@pytest.mark.parametrize("lang", list(LOCALES))
def test_the_lobby_in_each_language(browser: Browser, gateway_url: str, lang: str) -> None:
    # the narrowest phone the pages are made for (360 px), as the languages' own test
    context = browser.new_context(**SMALL_PHONE, has_touch=True, locale=LOCALES[lang])
    try:
        page = context.new_page()
        person = Seat("eve", page)
        page.goto(gateway_url + "/")
        page.fill("#sign-up input[name=player_name]", "eve")
        page.locator("#sign-up button[type=submit]").tap()
        expect(page.locator("#player-name")).to_have_text("eve")
        # the offer to keep the key, in the language, fits the phone
        expect(page.locator("#keep-key h2")).to_have_text(say(lang, "Keep your key"))
        assert_fits(page, f"{lang} lobby, keeping the key")
        assert_no_violations(page, f"the lobby in {lang}, keeping the key")
        page.locator("#key-kept").tap()
        expect(page.locator("html")).to_have_attribute("lang", lang)
        assert page.evaluate("() => document.dir") == ("rtl" if lang == "ps" else "ltr")
        # the game's names as the language writes them, the create form's too
        guts, paiute = say(lang, "Guts"), say(lang, "Paiute")
        expect(page.locator('#create label.pill:has(input[value="guts"])')).to_have_text(guts)
        expect(page.locator('#create label.pill:has(input[value="paiute"])')).to_have_text(paiute)
        expect(page.locator('#filters option[value="paiute"]')).to_have_text(paiute)
        expect(page.locator("#how-guts summary")).to_have_text(guts)
        # the create form's link to a game's rules opens them, by keyboard too
        page.locator('#create input[value="paiute"]').check()
        page.locator('#paiute-options a[href="#how-paiute"]').focus()
        page.keyboard.press("Enter")
        expect(page.locator("#how-paiute summary")).to_be_focused()
        assert page.locator("#how-paiute").evaluate("node => node.open")
        page.locator("#how-paiute summary").press("Enter")
        # how to play, reached from the header by keyboard
        page.locator('nav a[href="#how-to-play"]').focus()
        page.keyboard.press("Enter")
        expect(page.locator("#how-to-play")).to_be_focused()
        page.locator("#how-guts summary").focus()
        page.keyboard.press("Enter")
        declare = page.locator("#guts-declare")
        expect(declare).to_be_visible()
        expect(declare).to_contain_text(say(lang, "In"))
        expect(declare).to_contain_text(say(lang, "Out"))
        page.locator("#how-paiute summary").focus()
        page.keyboard.press("Enter")
        hands = say(
            lang,
            "Winning combinations, best first: five of a kind, royal flush, straight flush "
            "(five cards); four and two of a kind, three and three of a kind, three pairs "
            "(six cards).",
        )
        expect(page.locator("#how-paiute")).to_contain_text(hands)
        expect(page.locator("#versus-computer button")).to_have_text(
            say(lang, "Play against the computer")
        )
        # numbers in the language's digits, as every number on the page
        six = page.evaluate("() => new Intl.NumberFormat(document.documentElement.lang).format(6)")
        expect(page.locator('#exclude-form option[value="6"]')).to_contain_text(six)
        if lang == "ps":
            width = page.viewport_size["width"] if page.viewport_size else 390
            brand = page.locator(".brand").bounding_box()
            assert brand is not None
            assert brand["x"] > width / 2
        # the player's menu, every part open, fits the phone too
        for part in ("limits", "session", "break"):
            page.locator(f"#{part}-part summary").press("Enter")
        expect(page.locator("#exclude-form button")).to_have_text(say(lang, "Exclude me"))
        assert_fits(page, f"{lang} lobby, everything open")
        assert_no_violations(page, f"the lobby in {lang}")
        shot(page, f"lobby-{lang}")
        assert not person.errors, person.errors
    finally:
        context.close()
