"""`make demo`: play one complete Guts deal and one Paiute deal against a running gateway.

    python -m deploy.demo [--url http://127.0.0.1:$GATEWAY_PORT] [--timeout 60] [--operator-key KEY]

Three players (ann, bo and cy) sign up (`POST /v1/players`; with an operator key when the
gateway runs with PLAYERS_MODE=operator, from --operator-key or CARDROOM_OPERATOR_KEY, which
then deposits the chips they buy in with into their wallets) and play through the Python
SDK (`cardroom_client`), each with a client that sends the player's key: ann creates a
table, all sit down, the game starts, every seat makes its moves (with its seat token),
the deal is watched to its settlement by long polls, then the hand history is fetched and
its fairness proof checked: the leaves of the deck must hash to the commitment announced when the
deal started, and the cards each seat was dealt (opened to it in the history it reads
with its token) must be the ones the deck gave it, in dealing order. It prints a transcript; exit
status 0 when every deal played was complete and verified, 1 otherwise (2 when the
gateway cannot be reached). A gateway older than the players API (404 for
`POST /v1/players`) is played anonymously.

Guts: ann always goes in; bo and cy go in when the evaluator's odds give their hand at
least a 40% chance against two random hands. Paiute: every seat draws from the stock,
calls as soon as the evaluator ranks its six cards as a winning combination, and
otherwise discards the card that fits its hand least. When the gateway does not host
Paiute tables (422 unsupported_game), that part is skipped with a message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cardroom_client import (
    CardroomError,
    Client,
    ConnectionFailed,
    Event,
    FairnessError,
    GutsOptions,
    PaiuteOptions,
    RetryPolicy,
    RuleViolation,
    Seat,
    Table,
    verify_fairness,
)
from cardroom_client.client import Choice
from cardroom_client.models import HandHistory

Say = Callable[[str], None]
PLAYERS = ("ann", "bo", "cy")
BUY_IN = 100
RANKS = {r: v for v, r in enumerate("23456789TJQKA", start=2)} | {"10": 10}


class DemoError(Exception):
    """The gateway answered something a complete deal does not allow."""


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


# ---------------------------------------------------------------- shared steps


def sign_up(client: Client, name: str, operator_key: str | None = None) -> str | None:
    """A new player named `name` (POST /v1/players): their key, shown only this once.

    None when the gateway has no players API (404): it takes seats without a player.
    """
    try:
        created = client.with_credential(operator_key).create_player(name)
    except CardroomError as error:
        if error.status == 404:
            return None
        if error.code in ("missing_token", "operator_required", "invalid_token"):
            hint = (
                "the operator key was refused"
                if operator_key
                else "pass --operator-key or set CARDROOM_OPERATOR_KEY"
            )
            raise DemoError(
                f"{error.status} {error.code}: this gateway creates players with an operator"
                f" key only (PLAYERS_MODE=operator): {hint}"
            ) from None
        raise
    return created.key


def player_clients(
    spectator: Client, say: Say, operator_key: str | None = None
) -> dict[str, Client]:
    """ann, bo and cy sign up: a client each that sends the player's key (sharing the
    spectator's connections)."""
    clients = {}
    for name in PLAYERS:
        key = sign_up(spectator, name, operator_key)
        if key is None:
            say("players: this gateway has none (404 for POST /v1/players): seats are anonymous")
            return dict.fromkeys(PLAYERS, spectator)
        clients[name] = spectator.with_credential(key)
    say(f"players: {', '.join(PLAYERS)} signed up (POST /v1/players), each with a key")
    if operator_key is not None:
        # chips come from the operator here: a deposit into each wallet (docs/ledger.md)
        operator = spectator.with_credential(operator_key)
        for name, client in clients.items():
            me = client.me()
            if me.balance < 2 * BUY_IN:
                operator.deposit(me.id, 2 * BUY_IN - me.balance, reference=f"demo {name}")
        say(f"wallets: the operator deposited up to {2 * BUY_IN} chips for each player")
    return clients


def seat_players(players: Mapping[str, Client], table_id: str, say: Say) -> list[Seat]:
    """ann, bo and cy buy in, each with their own key."""
    seats = []
    for name in PLAYERS:
        seat = players[name].take_seat(table_id, name, BUY_IN)
        seats.append(seat)
        say(f"  seat {seat.number}: {name} buys in for {BUY_IN}")
    return seats


def describe_event(item: Event, names: Mapping[int, str]) -> str:
    """One event as a line of the transcript."""
    data = item.data

    def who(seat: object) -> str:
        text = str(seat)
        return names.get(int(text), f"seat {text}") if text.isdigit() else text

    kind = item.type
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
    return f"    #{item.id} {kind}: {text}"


def wait_for_deal_end(
    client: Client,
    table_id: str,
    after: int,
    hand_number: int,
    names: Mapping[int, str],
    say: Say,
    timeout: float,
) -> tuple[Event, int]:
    """Long-poll the events after `after` until deal `hand_number` has ended."""
    deadline = time.monotonic() + timeout
    cursor = after
    while time.monotonic() < deadline:
        wait = max(0.0, min(10.0, deadline - time.monotonic()))
        page = client.events(table_id, after=cursor, wait=round(wait, 1))
        for item in page.events:
            say(describe_event(item, names))
            if item.type == "deal_ended" and item.data.get("hand_number") == hand_number:
                return item, page.next
        cursor = page.next
    raise DemoError(f"deal {hand_number} did not end within {timeout:g} s")


def check_fairness(
    history: HandHistory,
    own: Mapping[int, HandHistory],
    announced: str,
    dealt: Mapping[int, Sequence[str]],
    say: Say,
) -> None:
    """The SDK's proof check, told in the transcript; DemoError when it fails.

    `history` is read as a spectator, `own` by each seat with its token (the proof
    opens a seat's cards to that seat only).
    """
    try:
        report = verify_fairness(history, announced=announced)
        for seat, mine in own.items():
            verify_fairness(mine, announced=announced, dealt={seat: dealt[seat]})
    except FairnessError as error:
        raise DemoError(str(error)) from None
    digest = report.commitment
    say(f"  fairness: sha256 of the 52 leaves = {digest[:16]}... = the commitment announced")
    count = sum(len(dealt[seat]) for seat in own)
    say(f"  fairness: the {count} cards dealt are at the deck's places in dealing order")
    opened = len(history.fairness.opened)
    say(f"  fairness: a spectator's proof opens {opened} places: cards it saw come off the deck")
    say(f"  fairness: the other {52 - opened} places stay hidden from a spectator")
    for check in report.checks:
        say(f"    checked: {check}")


def check_chips(table: Table, names: Mapping[int, str], say: Say) -> None:
    """Every chip bought in is in a stack, the pot or the reserve."""
    stacks = {names.get(number, str(number)): s.stack for number, s in table.seats.items()}
    total = sum(stacks.values()) + table.pot + table.reserve
    listed = ", ".join(f"{name} {stack}" for name, stack in stacks.items())
    say(f"  chips: {listed}, pot {table.pot}, reserve {table.reserve}")
    if total != BUY_IN * len(names):
        raise DemoError(f"chips do not add up: {total} != {BUY_IN * len(names)} bought in")
    say(f"  chips: {total} on the table = {BUY_IN * len(names)} bought in")


def leave_table(seats: Sequence[Seat], say: Say) -> None:
    """Every seat leaves, so that the table stops dealing; what each took home."""
    for seat in seats:
        result = seat.leave()
        taken = result.cashed_out
        state = f"cashes out {taken}" if taken is not None else "leaves after the deal"
        say(f"  {seat.name} {state}")


def describe_history(history: HandHistory, say: Say) -> None:
    """One line about the hand history."""
    say(
        f"  hand history {history.hand_number}: outcome {history.outcome}, "
        f"{len(history.events)} events, {len(history.pot_flow)} chip movements"
    )


def dealt_cards(seat: Seat) -> tuple[str, ...]:
    """The cards the seat holds (it sees only its own)."""
    you = seat.table().you
    if you is None or you.cards is None:
        raise DemoError(f"{seat.name} was not dealt in")
    return you.cards


# ---------------------------------------------------------------- Guts


def play_guts(
    client: Client, players: Mapping[str, Client], say: Say, timeout: float
) -> DealReport:
    """One 3-card Guts deal with three seats, to its settlement and proof.

    `client` reads as a spectator; `players` holds each player's client (ann's creates
    the table).
    """
    report = DealReport("guts")
    say("== Guts: 3 cards, ante 1, simultaneous declaring, Monte Carlo payments ==")
    options = GutsOptions(
        cards=3, ante=1, declare="simultaneous", turn_seconds=120, deal_pause_seconds=60
    )
    table = players[PLAYERS[0]].create_table(options, name="demo guts")
    table_id = report.table_id = table.id
    say(f"  table {table_id} created by {PLAYERS[0]}")
    seats = seat_players(players, table_id, say)
    names = {seat.number: str(seat.name) for seat in seats}
    cursor = client.events(table_id).next
    seats[0].start()
    view = client.table(table_id)
    if view.deal is None or view.dealer is None:
        raise DemoError("the table did not deal after start")
    hand_number = report.hand_number = view.hand_number
    announced = view.deal.commitment
    say(
        f"  {seats[0].name} starts: deal {hand_number}, dealer {names[view.dealer]}, "
        f"pot {view.pot}, commitment {announced[:16]}..."
    )
    dealt: dict[int, tuple[str, ...]] = {}
    for index, seat in enumerate(seats):
        cards = dealt[seat.number] = dealt_cards(seat)
        hand = " ".join(cards)
        odds = client.odds("guts3", hand, 2, samples=20000, seed=7)
        choice: Choice = "in" if index == 0 or odds.win >= 0.4 else "out"
        say(f"  {seat.name} holds {hand}: wins {odds.win:.0%} against two hands -> {choice}")
        seat.declare(choice)
    say("  events:")
    ended, cursor = wait_for_deal_end(client, table_id, cursor, hand_number, names, say, timeout)
    report.outcome = str(ended.data["outcome"])
    history = client.hand(table_id, hand_number)
    describe_history(history, say)
    own = {seat.number: seat.hand(hand_number) for seat in seats}
    check_fairness(history, own, announced, dealt, say)
    check_chips(client.table(table_id), names, say)
    leave_table(seats, say)
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


def paiute_turn(client: Client, seat: Seat, wild_rank: int, say: Say) -> None:
    """Draw from the stock, then call with a winning combination or discard."""
    mine = seat.table()
    if mine.pending is not None and mine.pending.action == "draw":
        seat.draw("stock")
        mine = seat.table()
    if mine.you is None or mine.you.cards is None:
        raise DemoError(f"{seat.name} holds no cards on its turn")
    cards = list(mine.you.cards)
    (ranked,) = client.evaluate("paiute", [" ".join(cards)], wild_rank=wild_rank)
    if ranked.strength > 0:
        shown = [card for card in cards if card != ranked.leftover]
        try:
            seat.call(shown, ranked.leftover)
        except RuleViolation as refused:
            say(f"  {seat.name} could not call ({refused.status} {refused.code}); discards instead")
        else:
            say(f"  {seat.name} calls with {' '.join(shown)}: {ranked.description}")
            return
    seat.discard(choose_discard(cards, wild_rank))


def play_paiute(
    client: Client, players: Mapping[str, Client], say: Say, timeout: float
) -> DealReport:
    """One Paiute deal with three seats, or a skip when the gateway has no Paiute tables.

    `client` reads as a spectator; `players` holds each player's client (ann's creates
    the table).
    """
    report = DealReport("paiute")
    say("== Paiute: five cards, a wild rank, draw and discard until someone calls ==")
    options = PaiuteOptions(ante=1, turn_seconds=120, deal_pause_seconds=60)
    try:
        table = players[PLAYERS[0]].create_table(options, name="demo paiute")
    except CardroomError as error:
        if error.code != "unsupported_game":
            raise
        report.skipped = "this gateway does not host Paiute tables yet (422 unsupported_game)"
        say(f"Paiute: skipped: {report.skipped}.")
        return report
    table_id = report.table_id = table.id
    say(f"  table {table_id} created by {PLAYERS[0]}")
    seats = seat_players(players, table_id, say)
    names = {seat.number: str(seat.name) for seat in seats}
    by_number = {seat.number: seat for seat in seats}
    cursor = client.events(table_id).next
    seats[0].start()
    view = client.table(table_id)
    deal = view.deal
    if deal is None or deal.wild_rank is None or view.dealer is None:
        raise DemoError("the table did not deal after start")
    hand_number = report.hand_number = view.hand_number
    announced, wild_rank = deal.commitment, deal.wild_rank
    say(
        f"  {seats[0].name} starts: deal {hand_number}, dealer {names[view.dealer]}, "
        f"wild card {deal.wild_card} (rank {wild_rank} is wild), "
        f"discard pile {deal.discard_top}, commitment {announced[:16]}..."
    )
    dealt: dict[int, tuple[str, ...]] = {}
    for seat in seats:
        dealt[seat.number] = dealt_cards(seat)
        say(f"  {seat.name} holds {' '.join(dealt[seat.number])}")
    deadline = time.monotonic() + timeout
    turns = 0
    while time.monotonic() < deadline:
        view = client.table(table_id)
        pending = view.pending
        if view.phase not in ("playing", "last_turns") or view.hand_number != hand_number:
            break
        if pending is None or pending.action not in ("draw", "discard_or_call"):
            time.sleep(0.05)
            continue
        if not pending.seats:
            time.sleep(0.05)
            continue
        paiute_turn(client, by_number[pending.seats[0]], wild_rank, say)
        turns += 1
    say(f"  {turns} turns played; events:")
    ended, cursor = wait_for_deal_end(
        client, table_id, cursor, hand_number, names, say, max(5.0, deadline - time.monotonic())
    )
    report.outcome = str(ended.data["outcome"])
    history = client.hand(table_id, hand_number)
    describe_history(history, say)
    own = {seat.number: seat.hand(hand_number) for seat in seats}
    check_fairness(history, own, announced, dealt, say)
    wild_card = history.fairness.cards[5 * len(seats)]
    say(f"  fairness: the wild card {wild_card} is the next card of that deck")
    check_chips(client.table(table_id), names, say)
    leave_table(seats, say)
    report.verified = True
    say(f"Paiute deal {hand_number} complete: {report.outcome}, fairness verified.")
    return report


# ---------------------------------------------------------------- main


def run(
    url: str, say: Say = print, timeout: float = 60.0, operator_key: str | None = None
) -> list[DealReport]:
    """Both games against the gateway at `url`; a report per game."""
    # a demo should say at once that nothing answers, not retry for half a minute
    with Client(url, timeout=40.0, retry=RetryPolicy(attempts=3, deadline=10.0)) as client:
        say(f"cardroom demo against {url}")
        ready = client.readiness()
        if not ready.ready:
            raise DemoError(f"the gateway is not ready: {ready.detail}")
        say(f"gateway ready: redis {ready.redis}, evaluator {ready.evaluator}")
        players = player_clients(client, say, operator_key)
        return [
            play_guts(client, players, say, timeout),
            play_paiute(client, players, say, timeout),
        ]


def main(argv: Sequence[str] | None = None, say: Say = print) -> int:
    """Parse the flags, play, print the transcript; the exit status."""
    parser = argparse.ArgumentParser(prog="python -m deploy.demo", description=__doc__)
    parser.add_argument(
        "--url",
        default=f"http://127.0.0.1:{os.environ.get('GATEWAY_PORT') or 8000}",
        help="the gateway (default: `make run`'s, on $GATEWAY_PORT or 8000)",
    )
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds a deal may take to finish"
    )
    parser.add_argument(
        "--operator-key",
        default=os.environ.get("CARDROOM_OPERATOR_KEY") or None,
        help="the key that creates players on a gateway with PLAYERS_MODE=operator"
        " (default: $CARDROOM_OPERATOR_KEY)",
    )
    arguments = parser.parse_args(argv)
    try:
        reports = run(arguments.url, say, arguments.timeout, arguments.operator_key)
    except ConnectionFailed as error:
        say(f"cannot reach the gateway: {error} (is `make run` running?)")
        return 2
    except (DemoError, CardroomError) as error:
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
