"""One person plays a whole Guts or Paiute game alone against two computer players, on
the table page in headless Chromium: the table's creator adds them with the page's form,
every seat of theirs is marked, the bots' runner (`python -m api.bots`) plays them, and
the creator removes one from the page."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from deploy.processes import BotsProcess
from tests.browser.test_table_page import play_paiute_turn
from tests.support.browser import DESKTOP
from tests.support.processes import RedisProcess
from tests.support.table_page import Seat, call, shot, synced, wait_for

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=30_000)

PLAYER_KEY = "cardroom.player"


def _signed_in(page: Page, base: str, name: str) -> str:
    """A new player (through the API) whose key the page keeps, as after signing in."""
    created = call(base, "POST", "/v1/players", {"name": name})
    page.goto(base + "/")
    saved = json.dumps({"key": created["key"], "id": created["id"], "name": name})
    page.evaluate("([key, value]) => localStorage.setItem(key, value)", [PLAYER_KEY, saved])
    return str(created["key"])


def _context(browser: Browser) -> BrowserContext:
    """A fresh desktop browser context (its own localStorage) with a touch screen."""
    profile: dict[str, Any] = dict(DESKTOP)
    return browser.new_context(**profile, has_touch=True)


@pytest.fixture
def bots_runner(
    gateway_url: str, redis_process: RedisProcess, evaluator_address: str, tmp_path: Path
) -> Iterator[BotsProcess]:
    """The computer players' runner on the gateway's Redis and evaluator, quick to move."""
    environment = {
        **os.environ,
        "BOT_DELAY_MIN_SECONDS": "0.05",
        "BOT_DELAY_MAX_SECONDS": "0.2",
        "LOG_LEVEL": "warning",
    }
    runner = BotsProcess(redis_process.url, evaluator_address, tmp_path / "bots.log", environment)
    runner.start()
    try:
        yield runner
    finally:
        runner.stop()


def _play_my_turn(person: Seat, base: str, table_id: str, game: str, rng: random.Random) -> None:
    """The person's move, by tapping, when the table waits for it: Guts, in or out at
    random; Paiute, as a careful player (tests/browser/test_table_page.py)."""
    page = person.page
    table = call(base, "GET", f"/v1/tables/{table_id}", token=person.key)
    pending, you = table["pending"], table["you"]
    if not pending or not you or you["seat"] not in pending["seats"]:
        return
    if game == "guts":
        if page.locator("[data-action=in]").count():
            page.locator(f"[data-action={rng.choice(['in', 'out'])}]").tap()
        return
    if pending["action"] not in ("draw", "discard_or_call"):
        return
    seen = synced(person, base, table_id)
    if seen["pending"] and person.seat in seen["pending"]["seats"]:
        play_paiute_turn(person, seen)
        wait_for(
            lambda: call(base, "GET", f"/v1/tables/{table_id}")["version"] > seen["version"],
            "the move to land",
        )


@pytest.mark.parametrize("game", ["guts", "paiute"])
def test_one_person_plays_a_whole_game_against_two_bots(
    browser: Browser, gateway_url: str, bots_runner: BotsProcess, game: str
) -> None:
    context = _context(browser)
    try:
        person = Seat("Ada", context.new_page())
        page = person.page
        person.key = _signed_in(page, gateway_url, "Ada")
        options = {"game": game, "turn_seconds": 600, "deal_pause_seconds": 1}
        table_id = call(gateway_url, "POST", "/v1/tables", options, person.key)["table"]["id"]
        page.goto(f"{gateway_url}/tables/{table_id}")
        page.fill("#seat-form input[name=buy_in]", "200")
        page.locator("#seat-form button[type=submit]").tap()
        expect(page.locator("li.seat.me .name")).to_have_text("Ada")
        person.seat = int(page.locator("li.seat.me").get_attribute("data-seat") or 0)

        # the table's creator adds two computer players with the page's form
        form = page.locator("#bot-form")
        expect(form).to_be_visible()
        for strategy in ("easy", "strong"):
            form.locator("select[name=strategy]").select_option(strategy)
            form.locator("input[name=buy_in]").fill("200")
            form.locator("button[type=submit]").tap()
            named = f"{strategy.capitalize()} bot"
            seat = page.locator("li.seat:has(.badge.computer) .name", has_text=named)
            expect(seat).to_be_visible()
        badges = page.locator("li.seat .badge.computer")
        expect(badges).to_have_count(2)
        expect(badges.nth(0)).to_have_text("Computer · Easy")
        expect(badges.nth(1)).to_have_text("Computer · Strong")
        shot(page, f"bots-seated-{game}")
        # the lobby counts them
        lobby = call(gateway_url, "GET", "/v1/tables?limit=50")
        (listed,) = [t for t in lobby["tables"] if t["id"] == table_id]
        assert listed["computer_players"] == 2

        # a whole game: from the first deal until a win empties the pot and a new one starts
        page.locator("[data-action=start]").tap()
        rng = random.Random(7)

        def next_game() -> bool:
            table = call(gateway_url, "GET", f"/v1/tables/{table_id}")
            if table["game_number"] >= 2:
                return True
            _play_my_turn(person, gateway_url, table_id, game, rng)
            return False

        wait_for(next_game, "a whole game against the two bots", 400)
        events = call(gateway_url, "GET", f"/v1/tables/{table_id}/events?after=0")["events"]
        # the bots played every turn themselves: no deadline played one for them
        assert not [e for e in events if e["type"] == "timeout"]
        assert any(e["type"] == "pot_won" for e in events)
        shot(page, f"bots-game-over-{game}")

        # the creator removes a computer player from the page
        page.locator("[data-remove-bot]").first.tap()

        def one_left() -> bool:
            _play_my_turn(person, gateway_url, table_id, game, rng)
            table = call(gateway_url, "GET", f"/v1/tables/{table_id}")
            seats = table["seats"].values()
            return sum("computer" in s and not s["leaving"] for s in seats) == 1

        wait_for(one_left, "one computer player left")
        assert not person.errors, person.errors
    finally:
        context.close()


def test_only_the_creator_sees_the_form(browser: Browser, gateway_url: str) -> None:
    context = _context(browser)
    try:
        page = context.new_page()
        owner = str(call(gateway_url, "POST", "/v1/players", {"name": "Bo"})["key"])
        table_id = call(gateway_url, "POST", "/v1/tables", {"game": "paiute"}, owner)["table"]["id"]
        _signed_in(page, gateway_url, "Cy")
        page.goto(f"{gateway_url}/tables/{table_id}")
        expect(page.locator("#seat-form")).to_be_visible()
        expect(page.locator("#bot-form")).to_be_hidden()
    finally:
        context.close()
