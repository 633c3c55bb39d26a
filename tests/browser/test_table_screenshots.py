"""Each game's table, mid-deal, at phone and desktop sizes in all five languages: the
page is checked in each (axe-core finds no violation, nothing sticks out of the window,
Pashto runs right to left, no English is left on a translated page's moves) and, with
CARDROOM_SCREENSHOTS set (`make screenshots`), pictured as docs/screenshots/<game>-
<language>-<phone|desktop>.png; the pictures in the repository are checked to be there,
one for each, at the size they were taken at."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser import DESKTOP, PHONE
from tests.support.page_checks import assert_no_violations, page_words, picture
from tests.support.table_page import Seat, call, synced

pytestmark = pytest.mark.timeout(600)
expect.set_options(timeout=30_000)

LANGUAGES = ("en", "sw", "ps", "hu", "et")
GAMES = ("guts", "paiute")
# the phone pictured at one pixel a point, so that twenty pictures stay light
SIZES: dict[str, dict[str, Any]] = {
    "phone": {**PHONE, "device_scale_factor": 1},
    "desktop": dict(DESKTOP),
}
PICTURES = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
# What lays the page wider than its window (a phone's layout viewport widens to fit it):
# the elements past either edge of the window's width.
OVERFLOW = """width => [...document.querySelectorAll("body *")]
    .filter(node => node.checkVisibility() && !node.closest("dialog"))
    .filter(node => {
        const box = node.getBoundingClientRect();
        return box.width && (box.left < -1 || box.right > width + 1);
    })
    .map(node => node.id || node.className || node.tagName)"""


def mid_deal(base: str, game: str, me: str, other: str) -> str:
    """A table of `game` with both players seated and a deal under way, waiting for
    `me`: Guts, to declare (the other has); Paiute, to discard or call with six cards."""
    options = {"game": game, "turn_seconds": 600, "deal_pause_seconds": 60}
    table_id = str(call(base, "POST", "/v1/tables", options, me)["table"]["id"])
    path = f"/v1/tables/{table_id}"
    for key in (me, other):
        call(base, "POST", f"{path}/seats", {"buy_in": 100}, key)
    call(base, "POST", f"{path}/actions", {"action": "start"}, me)
    if game == "guts":
        call(base, "POST", f"{path}/actions", {"action": "declare", "choice": "in"}, other)
        return table_id
    table = call(base, "GET", path, token=other)
    if table["you"]["seat"] in table["pending"]["seats"]:
        # the other player's turn first: a draw and the card drawn discarded
        call(base, "POST", f"{path}/actions", {"action": "draw", "source": "stock"}, other)
        drawn = call(base, "GET", path, token=other)["you"]["drawn"]["card"]
        call(base, "POST", f"{path}/actions", {"action": "discard", "card": drawn}, other)
    call(base, "POST", f"{path}/actions", {"action": "draw", "source": "stock"}, me)
    return table_id


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_game_at_both_sizes(browser: Browser, gateway_url: str, lang: str) -> None:
    words = page_words(lang) if lang != "en" else {}
    for game in GAMES:
        me = call(gateway_url, "POST", "/v1/players", {"name": "Ann"})
        other = call(gateway_url, "POST", "/v1/players", {"name": "Bo"})
        table_id = mid_deal(gateway_url, game, me["key"], other["key"])
        saved = json.dumps({"key": me["key"], "id": me["id"], "name": "Ann"})
        for size, profile in SIZES.items():
            context = browser.new_context(**profile)
            context.add_init_script(
                f"localStorage.setItem('cardroom.player', {json.dumps(saved)});"
                f"localStorage.setItem('cardroom.lang', '{lang}');"
            )
            try:
                person = Seat("Ann", context.new_page())
                person.key = me["key"]
                page = person.page
                page.goto(f"{gateway_url}/tables/{table_id}")
                expect(page.locator("html")).to_have_attribute("lang", lang)
                assert page.evaluate("() => document.dir") == ("rtl" if lang == "ps" else "ltr")
                table = synced(person, gateway_url, table_id)
                if game == "guts":
                    expect(page.locator("[data-action=in]")).to_have_text(words.get("In", "In"))
                else:
                    assert len(table["you"]["cards"]) == 6
                    expect(page.locator("#my-cards button.card")).to_have_count(6)
                    expect(page.locator("#hint")).not_to_have_text(
                        words.get("Looking for a winning combination…", "Looking")
                    )
                    expect(page.locator("#board .wild")).to_have_count(1)
                page.evaluate("() => window.scrollTo(0, 0)")
                wide = page.evaluate(OVERFLOW, profile["viewport"]["width"])
                assert wide == [], f"{game} {lang} {size}: past the window's edge: {wide}"
                assert (
                    page.evaluate("() => document.documentElement.scrollWidth")
                    <= (profile["viewport"]["width"])
                ), f"{game} {lang} {size}: the page scrolls sideways"
                assert_no_violations(page, f"{game} in {lang} on a {size}")
                picture(page, f"{game}-{lang}-{size}")
                assert person.errors == []
            finally:
                context.close()


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_pictures_are_there_for_each_game_size_and_language() -> None:
    widths = {"phone": 390, "desktop": 1280}
    for game in GAMES:
        for lang in LANGUAGES:
            for size, width in widths.items():
                picture = PICTURES / f"{game}-{lang}-{size}.png"
                assert picture.is_file(), f"{picture.name} is missing: run `make screenshots`"
                assert png_size(picture)[0] == width, picture.name
