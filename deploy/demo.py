"""`make demo`: play one complete Guts deal and one Paiute deal against a running gateway.

    python -m deploy.demo [--url http://127.0.0.1:8000] [--timeout 60]

An HTTP client with three seats (ann, bo and cy) creates a table, sits down, starts the
game, plays every seat's moves, waits for the deal to be settled, fetches the hand
history and checks the fairness proof: sha256 of the revealed deck and salt must equal
the commitment announced when the deal started, and the cards each seat was dealt must
be the top of that deck. It prints a transcript; exit status 0 when every deal played
was complete and verified, 1 otherwise (2 when the gateway is not ready).

Guts: ann always goes in; bo and cy go in when the evaluator's odds give their hand at
least a 40% chance against two random hands. Paiute: every seat draws from the stock,
calls as soon as the evaluator ranks its six cards as a winning combination, and
otherwise discards the card that fits its hand least. When the gateway does not host
Paiute tables yet (422 unsupported_game), that part is skipped with a message.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Say = Callable[[str], None]
FAIRNESS_FORMULA = "sha256(','.join(deck) + ':' + salt)"
PLAYERS = ("ann", "bo", "cy")
BUY_IN = 100
RANKS = {r: v for v, r in enumerate("23456789TJQKA", start=2)} | {"10": 10}


class DemoError(Exception):
    """The gateway answered something a complete deal does not allow."""


class GatewayUnreachableError(DemoError):
    """No answer from the gateway at all."""


@dataclass(frozen=True)
class Seat:
    """A seated player."""

    name: str
    number: int
    token: str


@dataclass
class DealReport:
    """What one game's part of the demo achieved."""

    game: str
    table_id: str | None = None
    hand_number: int | None = None
    outcome: str | None = None
    verified: bool = False
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)


class GatewayClient:
    """A small JSON client for the gateway's HTTP API (standard library only)."""

    def __init__(self, base_url: str, timeout: float = 40.0) -> None:
        """Talk to `base_url` (e.g. http://127.0.0.1:8000); `timeout` per request."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def request(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        """One request; the status and the decoded JSON body (None when there is none)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(  # noqa: S310 (the URL is the operator's --url)
            self.base_url + path, data=data, headers=headers, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            raise GatewayUnreachableError(f"{method} {self.base_url}{path}: {error}") from error
        return status, (json.loads(raw) if raw else None)

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        expect: Sequence[int] = (200, 201),
    ) -> Any:
        """A request that must succeed; DemoError with the problem's code otherwise."""
        status, reply = self.request(method, path, body, token)
        if status not in expect:
            code = reply.get("code") if isinstance(reply, dict) else None
            detail = reply.get("detail") if isinstance(reply, dict) else reply
            raise DemoError(f"{method} {path} -> {status} {code}: {detail}")
        return reply


# ---------------------------------------------------------------- shared steps


def seat_players(client: GatewayClient, table_id: str, say: Say) -> list[Seat]:
    """ann, bo and cy buy in."""
    seats = []
    for name in PLAYERS:
        reply = client.call(
            "POST", f"/v1/tables/{table_id}/seats", {"name": name, "buy_in": BUY_IN}
        )
        seats.append(Seat(name, int(reply["seat"]), str(reply["token"])))
        say(f"  seat {reply['seat']}: {name} buys in for {BUY_IN}")
    return seats


def describe_event(item: Mapping[str, Any], names: Mapping[int, str]) -> str:
    """One event as a line of the transcript."""
    data = item.get("data") or {}

    def who(seat: Any) -> str:
        return names.get(int(seat), f"seat {seat}") if str(seat).isdigit() else str(seat)

    kind = item.get("type", "?")
    text: str
    if kind == "declarations_revealed":
        text = ", ".join(f"{who(s)} {c}" for s, c in data.get("choices", {}).items())
    elif kind == "showdown":
        hands = data.get("hands", {})
        text = "; ".join(
            f"{who(s)} {' '.join(h.get('cards') or [])} ({h.get('description')})"
            for s, h in hands.items()
        )
    elif kind in ("pot_won", "paid", "wimp_paid", "ante"):
        text = f"{who(data.get('seat'))} {data.get('amount')}"
    elif kind == "pot_split":
        text = ", ".join(f"{who(s['seat'])} {s['amount']}" for s in data.get("shares", []))
    elif kind in ("drew", "discarded", "drew_card"):
        card = data.get("card")
        extra = f" from the {data['source']}" if "source" in data else ""
        text = f"{who(data.get('seat'))}{extra}" + (f" {card}" if card else "")
    elif kind in ("called", "laid_down"):
        text = f"{who(data.get('seat'))} shows {' '.join(data.get('cards', []))}"
        text += f" ({data.get('description')})"
    elif kind == "wild_card":
        text = f"{data.get('card')} (rank {data.get('rank')} is wild)"
    elif kind == "deal_ended":
        text = f"outcome {data.get('outcome')}, pot {data.get('pot')}"
    elif kind == "timeout":
        text = f"{who(data.get('seat'))} ran out of time"
    elif kind == "game_started":
        players = ", ".join(who(s) for s in data.get("players", []))
        text = f"game {data.get('game_number')}: {players}"
    elif kind == "deal_started":
        text = f"deal {data.get('hand_number')}, dealer {who(data.get('dealer'))}"
    elif kind == "dealt":
        players = ", ".join(who(s) for s in data.get("players", []))
        text = f"{data.get('cards')} cards each to {players}"
    elif kind == "phase":
        text = str(data.get("phase"))
    elif kind == "turn":
        text = f"{who(data.get('seat'))} to play"
    elif kind in ("declared", "your_declaration"):
        text = who(data.get("seat")) + (f" {data['choice']}" if "choice" in data else "")
    elif kind == "discard_started":
        text = str(data.get("card"))
    else:
        text = json.dumps(data, separators=(",", ":"), sort_keys=True)
        text = text if len(text) <= 90 else text[:87] + "..."
    return f"    #{item.get('id')} {kind}: {text}"


def wait_for_deal_end(
    client: GatewayClient,
    table_id: str,
    after: int,
    hand_number: int,
    names: Mapping[int, str],
    say: Say,
    timeout: float,
) -> tuple[dict[str, Any], int]:
    """Long-poll the events after `after` until deal `hand_number` has ended."""
    deadline = time.monotonic() + timeout
    cursor = after
    while time.monotonic() < deadline:
        wait = max(0.0, min(10.0, deadline - time.monotonic()))
        page = client.call("GET", f"/v1/tables/{table_id}/events?after={cursor}&wait={wait:.1f}")
        for item in page["events"]:
            say(describe_event(item, names))
            data = item.get("data") or {}
            if item["type"] == "deal_ended" and data.get("hand_number") == hand_number:
                return dict(item), int(page["next"])
        cursor = int(page["next"])
    raise DemoError(f"deal {hand_number} did not end within {timeout:g} s")


def verify_fairness(
    history: Mapping[str, Any],
    announced: str,
    dealt: Mapping[str, Sequence[str]],
    cards_each: int,
    say: Say,
) -> None:
    """The revealed deck and salt hash to the commitment; the hands are its top cards."""
    proof = history["fairness"]
    if proof.get("formula", FAIRNESS_FORMULA) != FAIRNESS_FORMULA:
        raise DemoError(f"unknown fairness formula {proof.get('formula')!r}")
    deck, salt = list(proof["deck"]), str(proof["salt"])
    digest = hashlib.sha256((",".join(deck) + ":" + salt).encode()).hexdigest()
    if len(deck) != 52 or len(set(deck)) != 52:
        raise DemoError(f"the revealed deck has {len(set(deck))} distinct cards, not 52")
    if not digest == proof["commitment"] == announced:
        raise DemoError(
            f"fairness proof FAILED: sha256 {digest}, history says {proof['commitment']}, "
            f"announced {announced}"
        )
    say(f"  fairness: sha256(deck + ':' + salt) = {digest[:16]}... = the commitment announced")
    top = deck[: cards_each * len(dealt)]
    seen = [card for cards in dealt.values() for card in cards]
    if sorted(seen) != sorted(top):
        raise DemoError(f"the hands dealt {seen} are not the deck's top {len(top)} cards {top}")
    say(f"  fairness: the {len(top)} cards dealt are the top of that deck, in dealing order")


def check_chips(table: Mapping[str, Any], names: Mapping[int, str], say: Say) -> None:
    """Every chip bought in is in a stack, the pot or the reserve."""
    stacks = {names.get(int(k), k): v["stack"] for k, v in table["seats"].items()}
    total = sum(stacks.values()) + table["pot"] + table.get("reserve", 0)
    listed = ", ".join(f"{name} {stack}" for name, stack in stacks.items())
    say(f"  chips: {listed}, pot {table['pot']}, reserve {table.get('reserve', 0)}")
    if total != BUY_IN * len(names):
        raise DemoError(f"chips do not add up: {total} != {BUY_IN * len(names)} bought in")
    say(f"  chips: {total} on the table = {BUY_IN * len(names)} bought in")


def leave_table(client: GatewayClient, table_id: str, seats: Sequence[Seat], say: Say) -> None:
    """Every seat leaves, so that the table stops dealing; what each took home."""
    for seat in seats:
        reply = client.call(
            "DELETE", f"/v1/tables/{table_id}/seats/{seat.number}", token=seat.token
        )
        taken = reply.get("cashed_out")
        state = f"cashes out {taken}" if taken is not None else "leaves after the deal"
        say(f"  {seat.name} {state}")


# ---------------------------------------------------------------- Guts


def play_guts(client: GatewayClient, say: Say, timeout: float) -> DealReport:
    """One 3-card Guts deal with three seats, to its settlement and proof."""
    report = DealReport("guts")
    say("== Guts: 3 cards, ante 1, simultaneous declaring, Monte Carlo payments ==")
    table = client.call(
        "POST",
        "/v1/tables",
        {
            "game": "guts",
            "name": "demo guts",
            "cards": 3,
            "ante": 1,
            "declare": "simultaneous",
            "turn_seconds": 120,
            "deal_pause_seconds": 60,
        },
    )
    table_id = report.table_id = str(table["id"])
    say(f"  table {table_id} created")
    seats = seat_players(client, table_id, say)
    names = {seat.number: seat.name for seat in seats}
    cursor = int(client.call("GET", f"/v1/tables/{table_id}/events?after=0")["next"])
    client.call("POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, seats[0].token)
    view = client.call("GET", f"/v1/tables/{table_id}")
    hand_number = report.hand_number = int(view["hand_number"])
    announced = str(view["deal"]["commitment"])
    say(
        f"  {seats[0].name} starts: deal {hand_number}, dealer {names[view['dealer']]}, "
        f"pot {view['pot']}, commitment {announced[:16]}..."
    )
    dealt: dict[str, list[str]] = {}
    for index, seat in enumerate(seats):
        cards = client.call("GET", f"/v1/tables/{table_id}", token=seat.token)["you"]["cards"]
        dealt[seat.name] = list(cards)
        hand = " ".join(cards)
        odds = client.call(
            "POST",
            "/v1/evaluate",
            {"game": "guts3", "odds": {"hand": hand, "opponents": 2, "samples": 20000, "seed": 7}},
        )
        choice = "in" if index == 0 or odds["win"] >= 0.4 else "out"
        say(f"  {seat.name} holds {hand}: wins {odds['win']:.0%} against two hands -> {choice}")
        client.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            {"action": "declare", "choice": choice},
            seat.token,
        )
    say("  events:")
    ended, cursor = wait_for_deal_end(client, table_id, cursor, hand_number, names, say, timeout)
    report.outcome = str(ended["data"]["outcome"])
    history = client.call("GET", f"/v1/tables/{table_id}/hands/{hand_number}")
    say(
        f"  hand history {hand_number}: outcome {history.get('outcome')}, "
        f"{len(history['events'])} events, {len(history['pot_flow'])} chip movements"
    )
    verify_fairness(history, announced, dealt, 3, say)
    check_chips(client.call("GET", f"/v1/tables/{table_id}"), names, say)
    leave_table(client, table_id, seats, say)
    report.verified = True
    say(f"Guts deal {hand_number} complete: {report.outcome}, fairness verified.")
    return report


# ---------------------------------------------------------------- Paiute


def _rank(card: str) -> int:
    return RANKS.get(card[:-1].upper(), 0)


def choose_discard(cards: Sequence[str], wild_rank: int) -> str:
    """The card that fits the hand least: never a wild, first a lone rank in a short suit."""
    ranks = Counter(_rank(card) for card in cards)
    suits = Counter(card[-1] for card in cards)
    candidates = [card for card in cards if _rank(card) != wild_rank] or list(cards)
    return min(candidates, key=lambda c: (ranks[_rank(c)], suits[c[-1]], _rank(c)))


def paiute_turn(client: GatewayClient, table_id: str, seat: Seat, wild_rank: int, say: Say) -> None:
    """Draw from the stock, then call with a winning combination or discard."""
    mine = client.call("GET", f"/v1/tables/{table_id}", token=seat.token)
    if (mine.get("pending") or {}).get("action") == "draw":
        client.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            {"action": "draw", "source": "stock"},
            seat.token,
        )
        mine = client.call("GET", f"/v1/tables/{table_id}", token=seat.token)
    cards = list(mine["you"]["cards"])
    ranked = client.call(
        "POST",
        "/v1/evaluate",
        {"game": "paiute", "wild_rank": wild_rank, "hands": [" ".join(cards)]},
    )["results"][0]
    if ranked["strength"] > 0:
        leftover = ranked.get("leftover")
        shown = [card for card in cards if card != leftover]
        status, reply = client.request(
            "POST",
            f"/v1/tables/{table_id}/actions",
            {"action": "call", "cards": shown, "discard": leftover},
            seat.token,
        )
        if status == 200:
            say(f"  {seat.name} calls with {' '.join(shown)}: {ranked['description']}")
            return
        say(f"  {seat.name} could not call ({status} {reply.get('code')}); discards instead")
    card = choose_discard(cards, wild_rank)
    client.call(
        "POST", f"/v1/tables/{table_id}/actions", {"action": "discard", "card": card}, seat.token
    )


def play_paiute(client: GatewayClient, say: Say, timeout: float) -> DealReport:
    """One Paiute deal with three seats, or a skip when the gateway has no Paiute tables."""
    report = DealReport("paiute")
    say("== Paiute: five cards, a wild rank, draw and discard until someone calls ==")
    status, reply = client.request(
        "POST",
        "/v1/tables",
        {
            "game": "paiute",
            "name": "demo paiute",
            "ante": 1,
            "turn_seconds": 120,
            "deal_pause_seconds": 60,
        },
    )
    if status == 422 and isinstance(reply, dict) and reply.get("code") == "unsupported_game":
        report.skipped = "this gateway does not host Paiute tables yet (422 unsupported_game)"
        say(f"Paiute: skipped: {report.skipped}.")
        return report
    if status != 201:
        raise DemoError(f"POST /v1/tables (paiute) -> {status}: {reply}")
    table_id = report.table_id = str(reply["id"])
    say(f"  table {table_id} created")
    seats = seat_players(client, table_id, say)
    names = {seat.number: seat.name for seat in seats}
    by_number = {seat.number: seat for seat in seats}
    cursor = int(client.call("GET", f"/v1/tables/{table_id}/events?after=0")["next"])
    client.call("POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, seats[0].token)
    view = client.call("GET", f"/v1/tables/{table_id}")
    deal = view["deal"]
    hand_number = report.hand_number = int(view["hand_number"])
    announced, wild_rank = str(deal["commitment"]), int(deal["wild_rank"])
    say(
        f"  {seats[0].name} starts: deal {hand_number}, dealer {names[view['dealer']]}, "
        f"wild card {deal.get('wild_card')} (rank {wild_rank} is wild), "
        f"discard pile {deal.get('discard_top')}, commitment {announced[:16]}..."
    )
    dealt: dict[str, list[str]] = {}
    for seat in seats:
        cards = client.call("GET", f"/v1/tables/{table_id}", token=seat.token)["you"]["cards"]
        dealt[seat.name] = list(cards)
        say(f"  {seat.name} holds {' '.join(cards)}")
    deadline = time.monotonic() + timeout
    turns = 0
    while time.monotonic() < deadline:
        view = client.call("GET", f"/v1/tables/{table_id}")
        pending = view.get("pending") or {}
        if view["phase"] not in ("playing", "last_turns") or view["hand_number"] != hand_number:
            break
        if pending.get("action") not in ("draw", "discard_or_call") or not pending.get("seats"):
            time.sleep(0.05)
            continue
        paiute_turn(client, table_id, by_number[int(pending["seats"][0])], wild_rank, say)
        turns += 1
    say(f"  {turns} turns played; events:")
    ended, cursor = wait_for_deal_end(
        client, table_id, cursor, hand_number, names, say, max(5.0, deadline - time.monotonic())
    )
    report.outcome = str(ended["data"]["outcome"])
    history = client.call("GET", f"/v1/tables/{table_id}/hands/{hand_number}")
    say(
        f"  hand history {hand_number}: outcome {history.get('outcome')}, "
        f"{len(history['events'])} events, {len(history['pot_flow'])} chip movements"
    )
    verify_fairness(history, announced, dealt, 5, say)
    wild_card = history["fairness"]["deck"][5 * len(seats)]
    if deal.get("wild_card") not in (None, wild_card):
        raise DemoError(f"the wild card {deal['wild_card']} is not the deck's next card")
    say(f"  fairness: the wild card {wild_card} is the next card of that deck")
    check_chips(client.call("GET", f"/v1/tables/{table_id}"), names, say)
    leave_table(client, table_id, seats, say)
    report.verified = True
    say(f"Paiute deal {hand_number} complete: {report.outcome}, fairness verified.")
    return report


# ---------------------------------------------------------------- main


def run(url: str, say: Say = print, timeout: float = 60.0) -> list[DealReport]:
    """Both games against the gateway at `url`; a report per game."""
    client = GatewayClient(url)
    say(f"cardroom demo against {url}")
    status, ready = client.request("GET", "/readyz")
    if status != 200:
        raise DemoError(f"the gateway is not ready: GET /readyz -> {status} {ready}")
    say(f"gateway ready: redis {ready.get('redis')}, evaluator {ready.get('evaluator')}")
    return [play_guts(client, say, timeout), play_paiute(client, say, timeout)]


def main(argv: Sequence[str] | None = None, say: Say = print) -> int:
    """Parse the flags, play, print the transcript; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m deploy.demo", description=__doc__)
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the gateway")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds a deal may take to finish"
    )
    arguments = parser.parse_args(argv)
    try:
        reports = run(arguments.url, say, arguments.timeout)
    except GatewayUnreachableError as error:
        say(f"cannot reach the gateway: {error} (is `make run` running?)")
        return 2
    except DemoError as error:
        say(f"demo FAILED: {error}")
        return 1
    played = [r for r in reports if r.skipped is None]
    say(
        "summary: "
        + "; ".join(
            f"{r.game}: skipped" if r.skipped else f"{r.game}: deal {r.hand_number} {r.outcome}"
            for r in reports
        )
    )
    return 0 if played and all(r.verified for r in played) else 1


if __name__ == "__main__":
    sys.exit(main())
