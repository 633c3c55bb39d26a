"""What the browser tests do with the table page: the people at a table (their page,
their key, their seat), API calls beside the page, waiting until a page has caught up with
its table, screenshots, and a careful player's Paiute choices."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

from evaluator.cards import parse_card, rank_of
from evaluator.paiute import rank_paiute

WAIT_SECONDS = 60.0
SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
SHOTS = os.environ.get("CARDROOM_SCREENSHOTS")
TABLE_READ = re.compile(r"^/v1/tables/[^/]+$")


@dataclass
class Seat:
    """One person at the table: their page, their player key, and the seat they took."""

    name: str
    page: Page
    seat: int = 0
    key: str = ""
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Watch the page: its uncaught script errors (which must stay none) and requests."""
        watch(self.page, self.errors, self.requests, self.reads)


def watch(page: Page, errors: list[str], requests: list[str], reads: list[str]) -> None:
    """Collect a page's script errors, every URL it requests, and its reads of a table
    (GET /v1/tables/{id} and GET /v1/players/me/seats) as "METHOD path"."""
    page.on("pageerror", lambda error: errors.append(str(error)))

    def seen(request: Any) -> None:
        requests.append(request.url)
        path = urllib.parse.urlsplit(request.url).path
        if request.method == "GET" and (TABLE_READ.match(path) or path == "/v1/players/me/seats"):
            reads.append(f"GET {path}")

    page.on("request", seen)


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One API request; the JSON body (asserting a 2xx)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{method} {path}: {error.code} {error.read()!r}") from None


def label(card: str) -> str:
    """A card as the page writes it: "Ts" -> "10♠"."""
    rank = card[:-1]
    return ("10" if rank == "T" else rank) + SUITS[card[-1]]


def shot(page: Page, name: str) -> None:
    """Save a full-page screenshot when CARDROOM_SCREENSHOTS names a folder."""
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


def wait_for(predicate: Any, what: str, seconds: float = WAIT_SECONDS) -> Any:
    """Poll until `predicate()` is truthy; its value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def sign_up(base: str, name: str) -> str:
    """A new player, created through the API (the gateway in open mode); their key."""
    return str(call(base, "POST", "/v1/players", {"name": name})["key"])


def synced(person: Seat, base: str, table_id: str) -> dict[str, Any]:
    """Wait until the page shows the table after every event the seat may see; the table
    as the seat sees it."""

    def same() -> dict[str, Any] | None:
        before = call(base, "GET", f"/v1/tables/{table_id}/events?after=0", token=person.key)
        table = call(base, "GET", f"/v1/tables/{table_id}", token=person.key or None)
        after = call(base, "GET", f"/v1/tables/{table_id}/events?after=0", token=person.key)
        if before["next"] != after["next"]:
            return None
        shown = person.page.locator("#table").get_attribute("data-event")
        seen = max((item["id"] for item in after["events"]), default=0)
        # The page stands after every event it may see, and no later than the last event.
        return dict(table) if shown and seen <= int(shown) <= after["next"] else None

    return dict(wait_for(same, f"{person.name}'s page to catch up"))


def holds_combination(cards: list[str], wild_rank: int) -> Any:
    """The evaluator's rank of a 6-card hand (strength 0: no winning combination)."""
    return rank_paiute([parse_card(card) for card in cards], wild_rank)


def best_call(hand: list[str], wild_rank: int, keep: str | None) -> tuple[Any, list[str]]:
    """The best call the rules allow with `hand` and the cards it shows: six cards valued
    as a six-card combination, or five with the sixth discarded (never `keep`, the card
    taken from the pile), as docs/rules.md says."""
    candidates = [list(hand)]
    if len(hand) == 6:
        candidates += [[c for c in hand if c != out] for out in hand if out != keep]
    ranked = [(holds_combination(cards, wild_rank), cards) for cards in candidates]
    return max(ranked, key=lambda pair: pair[0].strength)


def choose_source(hand: list[str], top: str | None, wild_rank: int) -> str:
    """Take the pile's card when it calls, is wild or matches a rank held; else the stock."""
    if top is None:
        return "stock"
    if holds_combination([*hand, top], wild_rank).strength > 0:
        return "discard"
    top_rank = rank_of(parse_card(top))
    held = {rank_of(parse_card(card)) for card in hand}
    return "discard" if top_rank == wild_rank or top_rank in held else "stock"


def choose_discard(hand: list[str], wild_rank: int, keep: str | None) -> str:
    """The card of the rank held least often (never a wild card, nor the pile's card)."""
    ranks = Counter(rank_of(parse_card(card)) for card in hand)
    choices = [c for c in hand if c != keep and rank_of(parse_card(c)) != wild_rank]
    choices = choices or [c for c in hand if c != keep]
    return min(choices, key=lambda c: (ranks[rank_of(parse_card(c))], rank_of(parse_card(c))))


def deal_decided(base: str, table_id: str, table: dict[str, Any]) -> bool:
    """Whether the table's Paiute deal ended with a winner; a void deal (no call) is
    waited past, until the next deal starts after the pause (then False)."""
    if table["phase"] != "between_deals":
        return False
    if table["deal"]["outcome"] != "void":
        return True
    hand, path = table["hand_number"], f"/v1/tables/{table_id}"
    wait_for(lambda: call(base, "GET", path)["hand_number"] > hand, "the next deal", seconds=120)
    return False
