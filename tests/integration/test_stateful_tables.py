"""A stateful property test of whole tables over the real Redis and the real evaluator.

Hypothesis drives a gateway (Flask test client, `create_app`) through random tables --
Guts 2- and 3-card with their variations, Paiute -- with legal and illegal moves: seats,
starts, declarations, rebuys, leaves, draws, discards, calls with random cards, moves with
stale or foreign tokens, stale If-Match, repeated Idempotency-Keys, late moves and
deadlines. Time is a fake clock that only the test moves (the clock thread is off and
deadlines are applied with `Deadlines.run_deadline`), and every deck is shuffled from
a seed that Hypothesis draws, so a failure replays and shrinks.

After every step, for every table:
- chips are conserved: stacks + pot + reserve == buy-ins + rebuys - cash-outs, with the
  buy-ins and rebuys taken from the responses to the requests that made them and the
  cash-outs from the event feed the gateway serves;
- no card is in two places: the hands (and the ghost), the stock, the discard pile and
  the wild card of the stored state, and the deck is one the test handed out;
- a refused move (any 4xx) and a replayed one leave the stored state and version as they
  were; an accepted one bumps the version by exactly one;
- the event ids run 1..seq without a gap, and folding the whole stored log (private
  events included) with `api.games.replay` gives the stored state's summary.

The run's step count, the requests by status, the examples and the duration are written
to var/reports/stateful.json. The run goes on, in rounds of Hypothesis examples, until
it has taken `STATEFUL_STEPS` steps (10,000 unless the variable says otherwise, e.g. for
a longer soak); `STATEFUL_NO_SHRINK=1` reports a failure at once instead of shrinking it.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from api.adapters.evaluator import EvaluatorClient
from api.adapters.store import connect
from api.app import create_app
from api.bootstrap import bootstrap
from api.games.common import FULL_DECK, RANKS, Deck
from api.games.replay import replay, summary
from api.games.state import TableState
from api.games.table import deal_of
from tests.support.games import (
    deadline_of,
    declarations_of,
    paiute_deal_of,
    stored_events,
    stored_state,
)
from tests.support.gateway import EVALUATOR_TIMEOUT, SignedInClient, gateway_settings
from tests.support.strategies import guts_options

STEPS_PER_EXAMPLE = 200
MIN_STEPS = int(os.environ.get("STATEFUL_STEPS", "10000"))
PHASES = [p for p in Phase if p != Phase.shrink or not os.environ.get("STATEFUL_NO_SHRINK")]
REPORT = Path(__file__).resolve().parents[2] / "var" / "reports" / "stateful.json"
NAMES = ["ann", "bob", "cy", "dee", "eve", "fay", "Ann"]  # "Ann" collides with "ann"
MAX_TABLES = 3


# every field as the unit tests draw it, the buy-in ceiling above any floor
GUTS_OPTIONS = guts_options(game=st.just("guts"), max_buy_in=st.integers(6, 40))
PAIUTE_OPTIONS = st.fixed_dictionaries(
    {
        "game": st.just("paiute"),
        "ante": st.integers(1, 3),
        "turn_seconds": st.integers(1, 30),
        "max_reshuffles": st.integers(0, 2),
        "deal_pause_seconds": st.sampled_from([0, 1.5, 3]),
        "rebuy": st.booleans(),
        "min_players": st.integers(2, 3),
        "max_players": st.integers(3, 5),
        "min_buy_in": st.integers(1, 5),
        "max_buy_in": st.integers(6, 40),
    }
)
# Tables that the request schema or the rules must refuse.
BAD_OPTIONS = st.sampled_from(
    [
        {"game": "guts", "cards": 4},
        {"game": "guts", "min_players": 5, "max_players": 3},
        {"game": "paiute", "max_reshuffles": 11},
        {"game": "paiute", "cap": 3},
        {"game": "guts", "min_buy_in": 50, "max_buy_in": 10},
    ]
)
REFUSED_OPTIONS = {"invalid_option", "invalid_field", "unknown_field"}


class FakeClock:
    """The service's time, moved only by the test."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class DeckSource:
    """Decks shuffled from the seed the current step drew; remembers every deck given."""

    def __init__(self) -> None:
        self.seed = 0
        self.given: set[tuple[str, ...]] = set()

    def __call__(self) -> Deck:
        cards = list(FULL_DECK)
        if self.seed % 4:
            random.Random(self.seed).shuffle(cards)
        else:
            # A pack in rank order, cut: pairs, ties and Paiute combinations come often.
            cut = self.seed // 4 % len(cards)
            cards = cards[cut:] + cards[:cut]
        self.given.add(tuple(cards))
        return Deck(tuple(cards), hashlib.sha256(str(self.seed).encode()).hexdigest()[:16])


@dataclass
class Seat:
    """A player the test seated: name, seat number, token."""

    name: str
    seat: int
    token: str


@dataclass
class Table:
    """What the test knows of a table from its own requests and the event feed."""

    table_id: str
    game: str
    options: dict[str, Any]
    players: dict[int, Seat] = field(default_factory=dict)
    gone: list[Seat] = field(default_factory=list)
    bought: int = 0
    cashed: int = 0
    cursor: int = 0
    checked_version: int = -1


@dataclass
class Sent:
    """A request as sent, to be sent again with the same Idempotency-Key."""

    table: Table
    method: str
    path: str
    token: str | None
    body: Any
    key: str
    status: int
    reply: Any


@dataclass
class Run:
    """Counts over the whole run."""

    steps: int = 0
    examples: int = 0
    requests: Counter[str] = field(default_factory=Counter)
    rules: Counter[str] = field(default_factory=Counter)
    deadlines_applied: int = 0
    tables: Counter[str] = field(default_factory=Counter)
    deal_outcomes: Counter[str] = field(default_factory=Counter)
    events_replayed: int = 0


@pytest.mark.timeout(1800)
def test_random_tables_keep_every_invariant(redis_url: str, evaluator_address: str) -> None:
    clock = FakeClock()
    decks = DeckSource()
    evaluator = EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT)
    # The run sends more requests from one address than the abuse limits let through.
    configured = gateway_settings(
        redis_url,
        evaluator_address,
        clock=False,
        rate_limit_per_address=0,
        rate_limit_per_token=0,
    )
    services = bootstrap(
        configured,
        client=connect(redis_url, False),
        evaluator=evaluator,
        clock=clock,
        deck_source=decks,
    )
    store, deadlines = services.store, services.deadlines
    app = create_app(configured, services=services)
    client = app.test_client()
    assert isinstance(client, SignedInClient)  # tests/conftest.py installs it
    signer: SignedInClient = client
    run = Run()

    class TablesMachine(RuleBasedStateMachine):
        """Random tables, players and moves; the invariants of the module docstring."""

        def __init__(self) -> None:
            super().__init__()
            self.tables: list[Table] = []
            self.keyed: Sent | None = None
            self.keys = 0
            # one player per name, who may sit at several tables (one seat at each)
            self.players: dict[str, str] = {}
            run.examples += 1

        def player_key(self, name: str) -> str:
            """The key of the player who goes by `name` (made on first use)."""
            if name not in self.players:
                key = signer.new_player_key(name)
                assert isinstance(key, str), key
                self.players[name] = key
            return self.players[name]

        # ------------------------------------------------------------ requests

        def send(
            self,
            table: Table | None,
            method: str,
            path: str,
            token: str | None = None,
            body: Any = None,
            headers: dict[str, str] | None = None,
            key: str | None = None,
        ) -> tuple[int, Any, dict[str, str]]:
            """One request; a refused or replayed one must leave the table as it was."""
            sent = dict(headers or {})
            if token is not None:
                sent["Authorization"] = f"Bearer {token}"
            if key is not None:
                sent["Idempotency-Key"] = key
            before = store.load(table.table_id) if table is not None else None
            response = client.open(path, method=method, headers=sent, json=body)
            reply = response.get_json(silent=True) or {}
            status = response.status_code
            replayed = response.headers.get("Idempotent-Replayed") == "true"
            run.requests[f"{status} {reply.get('code', '') if status >= 400 else ''}".strip()] += 1
            if status >= 400:
                assert response.mimetype == "application/problem+json", reply
                assert reply["status"] == status, reply
                assert reply["code"], reply
                assert status < 500, reply
            if table is not None and before is not None:
                after = store.load(table.table_id)
                assert after is not None
                if status >= 400 or replayed:
                    assert after.version == before.version, (path, body, reply)
                    assert after.state == before.state, (path, body, reply)
                    assert after.seq == before.seq
                else:
                    assert after.version == before.version + 1, (path, body, reply)
            if key is not None and not replayed and table is not None:
                self.keyed = Sent(table, method, path, token, body, key, status, reply)
            return status, reply, dict(response.headers)

        def new_key(self, data: st.DataObject) -> str | None:
            """An Idempotency-Key for a third of the requests."""
            if data.draw(st.integers(0, 2), label="keyed") != 0:
                return None
            self.keys += 1
            return f"step-{run.examples}-{self.keys}"

        def act(
            self,
            table: Table,
            player: Seat | None,
            body: dict[str, Any],
            data: st.DataObject,
            token: str | None = None,
        ) -> tuple[int, Any]:
            """A move, with a fresh deck ready in case it deals."""
            decks.seed = data.draw(st.integers(0, 2**20), label="deck")
            status, reply, _ = self.send(
                table,
                "POST",
                f"/v1/tables/{table.table_id}/actions",
                token if token is not None else (player.token if player else None),
                body,
                key=self.new_key(data),
            )
            if status == 200 and body.get("action") == "rebuy":
                table.bought += body["amount"]
            return status, reply

        def state(self, table: Table) -> TableState:
            """The stored state of a table."""
            record = store.load(table.table_id)
            assert record is not None
            return record.state

        def has(self, game: str) -> bool:
            """True if a table of this game is open."""
            return any(table.game == game for table in self.tables)

        def pick_table(self, data: st.DataObject, game: str | None = None) -> Table:
            """Mostly the first table (it has players) or one of the game asked for."""
            fitting = [t for t in self.tables if game is None or t.game == game]
            if fitting and data.draw(st.integers(0, 3), label="any table") > 0:
                return fitting[0]
            return data.draw(st.sampled_from(self.tables), label="table")

        def pick_player(self, table: Table, data: st.DataObject, seats: list[int]) -> Seat | None:
            """Mostly a player whose move is due, else any seated player, else nobody."""
            due = [table.players[s] for s in seats if s in table.players]
            everyone = list(table.players.values())
            if due and data.draw(st.integers(0, 9), label="due") > 0:
                return data.draw(st.sampled_from(due), label="player")
            if everyone:
                return data.draw(st.sampled_from(everyone), label="player")
            return None

        def step(self, name: str) -> None:
            """Count one step of the machine."""
            run.steps += 1
            run.rules[name] += 1

        # ------------------------------------------------------------ tables and seats

        def create(self, options: dict[str, Any]) -> Table | None:
            """Create a table; None if the API refuses its options."""
            status, reply, _ = self.send(None, "POST", "/v1/tables", body=options)
            if status != 201:
                assert reply["code"] in REFUSED_OPTIONS, reply
                return None
            table = Table(reply["table"]["id"], options["game"], reply["table"]["options"])
            self.tables.append(table)
            run.tables[options["game"]] += 1
            return table

        @initialize(data=st.data())
        def first_table(self, data: st.DataObject) -> None:
            """A first table with enough players, started."""
            options: dict[str, Any] = data.draw(GUTS_OPTIONS | PAIUTE_OPTIONS, label="options")
            options["max_players"] = max(options["max_players"], options["min_players"])
            table = self.create(options)
            assert table is not None
            buy_in = min(table.options["min_buy_in"] + 5, table.options["max_buy_in"])
            players = data.draw(st.integers(table.options["min_players"], 3), label="players")
            for name in NAMES[:players]:
                assert self.sit_down(table, name, buy_in, None) == 201
            status, reply = self.act(table, table.players[1], {"action": "start"}, data)
            assert status == 200, reply
            self.step("first_table")

        @precondition(lambda self: len(self.tables) < MAX_TABLES)
        @rule(data=st.data())
        def create_table(self, data: st.DataObject) -> None:
            """Another table, with players, or options the API must refuse."""
            if data.draw(st.integers(0, 4), label="bad") == 0:
                options = data.draw(BAD_OPTIONS, label="bad options")
                status, reply, _ = self.send(None, "POST", "/v1/tables", body=options)
                assert status == 422, reply
                assert reply["code"] in REFUSED_OPTIONS, reply
            else:
                options = data.draw(GUTS_OPTIONS | PAIUTE_OPTIONS, label="options")
                table = self.create(options)
                if table is not None:
                    # Players come with the table, so that moves there are not all refused.
                    buy_in = table.options["max_buy_in"]
                    for name in NAMES[: table.options["min_players"]]:
                        assert self.sit_down(table, name, buy_in, None) == 201
            self.step("create_table")

        def sit_down(self, table: Table, name: str, buy_in: int, key: str | None) -> int:
            """Ask for a seat; the status."""
            status, reply, _ = self.send(
                table,
                "POST",
                f"/v1/tables/{table.table_id}/seats",
                self.player_key(name),
                body={"name": name, "buy_in": buy_in},
                key=key,
            )
            if status == 201:
                table.players[reply["seat"]] = Seat(name, reply["seat"], reply["token"])
                table.bought += buy_in
            return status

        @rule(data=st.data())
        def sit(self, data: st.DataObject) -> None:
            """A seat request, granted exactly when the name, buy-in and free seats allow."""
            table = self.pick_table(data)
            low, high = table.options["min_buy_in"], table.options["max_buy_in"]
            buy_in = data.draw(st.integers(low - 1, high + 1), label="buy_in")
            name = data.draw(st.sampled_from(NAMES), label="name")
            taken = {p.name.casefold() for p in table.players.values()}
            full = len(table.players) >= table.options["max_players"]
            status = self.sit_down(table, name, buy_in, self.new_key(data))
            assert (status == 201) == (
                low <= buy_in <= high and name.casefold() not in taken and not full
            )
            self.step("sit")

        @rule(data=st.data())
        def leave(self, data: st.DataObject) -> None:
            """Leave, now or after the deal; sometimes someone else's seat."""
            table = self.pick_table(data)
            player = self.pick_player(table, data, [])
            if player is None:
                self.step("leave")
                return
            seat = player.seat
            if data.draw(st.integers(0, 9), label="wrong seat") == 0:
                seat = data.draw(st.integers(1, 10), label="seat")
            record = store.load(table.table_id)
            assert record is not None
            headers = {}
            if data.draw(st.integers(0, 4), label="if-match") == 0:
                headers["If-Match"] = f'"{record.version}"'
            status, reply, _ = self.send(
                table,
                "DELETE",
                f"/v1/tables/{table.table_id}/seats/{seat}",
                player.token,
                headers=headers,
                key=self.new_key(data),
            )
            if seat != player.seat:
                assert (status, reply["code"]) == (403, "wrong_seat"), reply
            elif status == 200 and reply["left"]:
                # The feed brings the cash-out; only the amount is checked here. The stack
                # read before is the one cashed out only when the leave named its version
                # and no deadline had passed: without If-Match, the clock may have played
                # a turn in between (turns of a second); past a deadline (a late move
                # leaves one), the leave's own change applies it first, which may end the
                # deal the seat was marked to leave at, and a deal lost takes chips.
                stack = record.state["seats"][str(seat)]["stack"]
                deadline = record.state["deadline"]
                passed = deadline is not None and clock.now >= deadline
                assert reply["cashed_out"] is not None
                exact = "If-Match" in headers and not passed
                assert reply["cashed_out"] >= (stack if exact else 0)
            self.step("leave")

        @rule(data=st.data())
        def start(self, data: st.DataObject) -> None:
            """Start the table (refused unless it is waiting with enough players)."""
            table = self.pick_table(data)
            self.act(table, self.pick_player(table, data, []), {"action": "start"}, data)
            self.step("start")

        @rule(data=st.data())
        def rebuy(self, data: st.DataObject) -> None:
            """Buy more chips, any amount."""
            table = self.pick_table(data)
            amount = data.draw(st.integers(0, table.options["max_buy_in"]), label="amount")
            self.act(
                table,
                self.pick_player(table, data, []),
                {"action": "rebuy", "amount": amount},
                data,
            )
            self.step("rebuy")

        # ------------------------------------------------------------ Guts

        def pending(self, table: Table) -> list[int]:
            """The seats whose move is due, before the deadline."""
            record = store.load(table.table_id)
            assert record is not None
            state = record.state
            if state["phase"] not in ("declaring", "playing", "last_turns"):
                return []
            if clock.now >= deadline_of(state):
                return []
            deal = deal_of(state)
            if deal["turn"] is not None:
                return [deal["turn"]]
            declared = declarations_of(deal)
            return [s for s in deal.get("players", []) if str(s) not in declared]

        @precondition(lambda self: self.has("guts"))
        @rule(data=st.data())
        def declare(self, data: st.DataObject) -> None:
            """Declare in, out or neither, mostly by a seat whose turn it is."""
            table = self.pick_table(data, "guts")
            player = self.pick_player(table, data, self.pending(table))
            choice = data.draw(st.sampled_from(["in", "in", "out", "out", "maybe"]), label="choice")
            status, reply = self.act(table, player, {"action": "declare", "choice": choice}, data)
            if choice == "maybe" and player is not None:
                assert status == 422, reply
            self.step("declare")

        @precondition(lambda self: self.has("guts"))
        @rule(data=st.data())
        def everyone_declares(self, data: st.DataObject, table: Table | None = None) -> None:
            """Every seat due declares, until the deal resolves."""
            table = table or self.pick_table(data, "guts")
            for _ in range(10):
                seats = self.pending(table)
                if table.game != "guts" or not seats or seats[0] not in table.players:
                    break
                choice = data.draw(st.sampled_from(["in", "out"]), label="choice")
                status, reply = self.act(
                    table, table.players[seats[0]], {"action": "declare", "choice": choice}, data
                )
                assert status == 200, reply
            self.step("everyone_declares")

        # ------------------------------------------------------------ Paiute

        def turn_player(self, table: Table, data: st.DataObject) -> Seat | None:
            """Mostly the seat whose Paiute turn it is."""
            return self.pick_player(table, data, self.pending(table))

        @precondition(lambda self: self.has("paiute"))
        @rule(data=st.data())
        def draw(self, data: st.DataObject) -> None:
            """Draw from the stock, the discard pile or a source that does not exist."""
            table = self.pick_table(data, "paiute")
            source = data.draw(st.sampled_from(["stock", "stock", "discard", "deck"]), label="src")
            player = self.turn_player(table, data)
            status, reply = self.act(table, player, {"action": "draw", "source": source}, data)
            # a move without a credential is refused for that first (401)
            if source == "deck" and player is not None:
                assert status == 422, reply
            self.step("draw")

        @precondition(lambda self: self.has("paiute"))
        @rule(data=st.data())
        def discard(self, data: st.DataObject) -> None:
            """Discard a held card, any card, or something that is not a card."""
            table = self.pick_table(data, "paiute")
            player = self.turn_player(table, data)
            deal = self.state(table)["deal"]
            hands = {} if deal is None else deal["hands"]
            held = hands.get(str(player.seat) if player else "", [])
            from_hand = bool(held) and data.draw(st.booleans(), label="held")
            card = data.draw(
                st.sampled_from(held) if from_hand else st.sampled_from([*FULL_DECK, "1x", "10h"]),
                label="card",
            )
            status, reply = self.act(table, player, {"action": "discard", "card": card}, data)
            if card == "1x" and player is not None:
                assert status == 422, reply
            self.step("discard")

        @precondition(lambda self: self.has("paiute"))
        @rule(data=st.data())
        def call_random_cards(self, data: st.DataObject) -> None:
            """Call with random cards: refused unless they happen to be right."""
            table = self.pick_table(data, "paiute")
            player = self.turn_player(table, data)
            cards = data.draw(st.lists(st.sampled_from(FULL_DECK), min_size=5, max_size=6))
            spare = data.draw(st.none() | st.sampled_from(FULL_DECK), label="spare")
            body = {"action": "call", "cards": cards, "discard": spare}
            self.act(table, player, body, data)
            self.step("call_random_cards")

        def best_call(self, state: TableState, seat: int) -> dict[str, Any] | None:
            """A call the rules accept for the seat's six cards, if it has a combination."""
            deal = paiute_deal_of(state)
            hand = deal["hands"][str(seat)]
            taken = deal["drawn"]
            if taken is None or len(hand) != 6:
                return None
            ranked = evaluator.evaluate("paiute", [" ".join(hand)], deal["wild_rank"])[0]
            spare = ranked["leftover"]
            if not ranked["strength"] or (taken["source"] == "discard" and spare == taken["card"]):
                return None
            return {
                "action": "call",
                "cards": [card for card in hand if card != spare],
                "discard": spare,
            }

        @precondition(lambda self: self.has("paiute"))
        @rule(data=st.data())
        def play_turn(self, data: st.DataObject, table: Table | None = None) -> None:
            """A few whole legal Paiute turns: draw, then call if possible, else discard."""
            table = table or self.pick_table(data, "paiute")
            for _ in range(data.draw(st.integers(1, 8), label="turns")):
                if not self.one_turn(data, table):
                    break
            self.step("play_turn")

        def one_turn(self, data: st.DataObject, table: Table) -> bool:
            """One legal turn of the seat due; False if no seat is due."""
            state = self.state(table)
            seats = self.pending(table)
            if table.game != "paiute" or not seats or seats[0] not in table.players:
                return False
            player = table.players[seats[0]]
            deal = paiute_deal_of(state)
            if deal["drawn"] is None:
                source = "stock"
                if deal["discard_pile"] and data.draw(st.integers(0, 3), label="d") == 0:
                    source = "discard"
                hand_number = state["hand_number"]
                status, reply = self.act(table, player, {"action": "draw", "source": source}, data)
                assert status == 200, reply
                state = self.state(table)
                if (
                    state["deal"] is None
                    or state["hand_number"] != hand_number
                    or state["deal"].get("turn") != player.seat
                ):
                    return False  # the draw voided the deal (with no pause, the next began)
            call = self.best_call(state, player.seat)
            if call is not None and data.draw(st.integers(0, 3), label="call") > 0:
                status, reply = self.act(table, player, call, data)
            else:
                deal = paiute_deal_of(state)
                hand = deal["hands"][str(player.seat)]
                taken = deal["drawn"]
                assert taken is not None  # drawn above, or before this turn
                allowed = [c for c in hand if taken["source"] == "stock" or c != taken["card"]]
                card = data.draw(st.sampled_from(allowed), label="card")
                status, reply = self.act(table, player, {"action": "discard", "card": card}, data)
            assert status == 200, reply
            return True

        @rule(data=st.data())
        def progress(self, data: st.DataObject) -> None:
            """The table's natural next move: start, declare or play a turn, or its deadline."""
            table = self.pick_table(data)
            state = self.state(table)
            if state["phase"] == "waiting" and table.players:
                player = data.draw(st.sampled_from(list(table.players.values())), label="p")
                self.act(table, player, {"action": "start"}, data)
            elif self.pending(table) and table.game == "guts":
                self.everyone_declares(data, table)
                return
            elif self.pending(table):
                self.play_turn(data, table)
                return
            elif state["deadline"] is not None:
                self.deadline_passes(data, table)
                return
            self.step("progress")

        # ------------------------------------------------------------ time

        @rule(data=st.data())
        def deadline_passes(self, data: st.DataObject, table: Table | None = None) -> None:
            """Time reaches the table's deadline (or not quite) and the deadline runs."""
            table = table or self.pick_table(data)
            before = store.load(table.table_id)
            assert before is not None
            deadline = before.state["deadline"]
            early = deadline is not None and data.draw(st.integers(0, 5), label="early") == 0
            if deadline is not None and not early:
                clock.now = max(clock.now, deadline + data.draw(st.sampled_from([0, 0.5, 40])))
            decks.seed = data.draw(st.integers(0, 2**20), label="deck")
            changed = deadlines.run_deadline(table.table_id)
            after = store.load(table.table_id)
            assert after is not None
            due = deadline is not None and clock.now >= deadline
            assert changed == due, (deadline, clock.now)
            assert after.version == before.version + (1 if due else 0)
            run.deadlines_applied += int(changed)
            self.step("deadline_passes")

        @rule(data=st.data())
        def late_move(self, data: st.DataObject) -> None:
            """A move at its deadline is too late, and changes nothing."""
            table = self.pick_table(data)
            state = self.state(table)
            seats = self.pending(table)
            if not seats or seats[0] not in table.players:
                self.step("late_move")
                return
            clock.now = max(clock.now, deadline_of(state))
            body = (
                {"action": "declare", "choice": "in"}
                if table.game == "guts"
                else {"action": "draw", "source": "stock"}
            )
            if table.game == "paiute" and paiute_deal_of(state)["drawn"] is not None:
                body = {"action": "discard", "card": deal_of(state)["hands"][str(seats[0])][0]}
            status, reply = self.act(table, table.players[seats[0]], body, data)
            assert (status, reply["code"]) == (409, "too_late"), reply
            self.step("late_move")

        # ------------------------------------------------------------ protocol misuse

        @rule(data=st.data())
        def stale_if_match(self, data: st.DataObject) -> None:
            """A move under an If-Match of an older version: 412, nothing changes."""
            table = self.pick_table(data)
            player = self.pick_player(table, data, self.pending(table))
            if player is None:
                self.step("stale_if_match")
                return
            record = store.load(table.table_id)
            assert record is not None
            stale = data.draw(st.integers(0, record.version - 1), label="stale")
            decks.seed = 0
            status, reply, headers = self.send(
                table,
                "POST",
                f"/v1/tables/{table.table_id}/actions",
                player.token,
                {"action": "start"},
                headers={"If-Match": f'"{stale}"'},
            )
            assert (status, reply["code"]) == (412, "stale_version"), reply
            assert headers["ETag"] == f'"{record.version}"'
            self.step("stale_if_match")

        @rule(data=st.data())
        def foreign_token(self, data: st.DataObject) -> None:
            """A move with the token of a player who left, or of nobody: 401."""
            table = self.pick_table(data)
            tokens = [p.token for p in table.gone] + [hashlib.sha256(b"nobody").hexdigest()]
            token = data.draw(st.sampled_from(tokens), label="token")
            body: dict[str, Any] = data.draw(
                st.sampled_from(
                    [
                        {"action": "start"},
                        {"action": "declare", "choice": "in"},
                        {"action": "draw", "source": "stock"},
                        {"action": "rebuy", "amount": 5},
                    ]
                ),
                label="body",
            )
            status, reply = self.act(table, None, body, data, token=token)
            assert (status, reply["code"]) == (401, "invalid_token"), reply
            self.step("foreign_token")

        @precondition(lambda self: self.keyed is not None)
        @rule(data=st.data())
        def repeat_keyed(self, data: st.DataObject) -> None:
            """The last request with an Idempotency-Key, again: the first answer, no change."""
            sent = self.keyed
            assert sent is not None
            if sent.token is not None and sent.token in {p.token for p in sent.table.gone}:
                self.step("repeat_keyed")
                return
            # Another request under the same key, where the first one left a record.
            other = sent.status < 400 and sent.method == "POST" and data.draw(st.booleans())
            body = sent.body
            if other:
                body = (
                    {"name": "zed", "buy_in": 1}
                    if sent.path.endswith("/seats")
                    else {"action": "rebuy", "amount": 1 + (sent.body or {}).get("amount", 0)}
                )
            status, reply, headers = self.send(
                sent.table, sent.method, sent.path, sent.token, body, key=sent.key
            )
            if other:
                assert (status, reply["code"]) == (409, "idempotency_key_reused"), reply
            elif sent.status < 400:
                assert status == sent.status, reply
                assert reply == sent.reply
                assert headers.get("Idempotent-Replayed") == "true"
            else:
                assert status >= 400, reply
            self.step("repeat_keyed")

        # ------------------------------------------------------------ invariants

        @invariant()
        def tables_hold(self) -> None:
            """Every invariant, after every step."""
            for table in self.tables:
                check_table(table)

    def check_table(table: Table) -> None:
        """Every invariant of the module docstring, for a table that changed."""
        record = store.load(table.table_id)
        assert record is not None
        if record.version == table.checked_version:
            return
        table.checked_version = record.version
        state = record.state
        log = store.events_after(table.table_id, 0, None)
        assert [item["id"] for item in log] == list(range(1, record.seq + 1))
        assert replay(stored_events(log)) == summary(stored_state(state))
        run.events_replayed += len(log)
        feed = client.get(f"/v1/tables/{table.table_id}/events?after={table.cursor}").get_json()
        for item in feed["events"]:
            follow(table, item)
        table.cursor = feed["next"]
        view = client.get(f"/v1/tables/{table.table_id}").get_json()
        on_table = sum(s["stack"] for s in view["seats"].values()) + view["pot"] + view["reserve"]
        assert on_table == table.bought - table.cashed
        assert (state["chips_bought"], state["chips_cashed"]) == (table.bought, table.cashed)
        assert {int(s) for s in view["seats"]} == set(table.players)
        check_cards(state)

    def follow(table: Table, item: dict[str, Any]) -> None:
        """What the public feed tells the test: cash-outs, departures, deal outcomes."""
        data = item["data"]
        if item["type"] == "cashed_out":
            table.cashed += data["amount"]
        elif item["type"] == "left":
            player = table.players.get(data["seat"])
            if player is not None and player.name == data["name"]:
                table.gone.append(table.players.pop(data["seat"]))
        elif item["type"] == "deal_ended":
            run.deal_outcomes[f"{table.game} {data['outcome']}"] += 1

    def check_cards(state: TableState) -> None:
        """No card in two places; every deck is one the test handed out."""
        deal = state["deal"]
        if deal is None:
            return
        assert tuple(deal["deck"]) in decks.given
        places = [card for hand in deal["hands"].values() for card in hand]
        if state["game"] == "paiute":
            deal = deal_of(state)
            places += [*deal["discard_pile"], *deal["stock"], deal["wild_card"]]
            assert sorted(places) == sorted(FULL_DECK)
            assert deal["wild_rank"] == RANKS.index(deal["wild_card"][0]) + 2
            if deal["drawn"] is not None:
                assert deal["drawn"]["card"] in deal["hands"][str(deal["turn"])]
        else:
            assert len(places) == len(set(places))
            assert set(places) <= set(deal["deck"])

    started = time.perf_counter()
    rounds = 0
    try:
        # Hypothesis ends some examples early, so rounds go on until the steps are taken.
        while run.steps < MIN_STEPS:
            rounds += 1
            run_state_machine_as_test(
                TablesMachine,
                settings=settings(
                    max_examples=(MIN_STEPS - run.steps) // STEPS_PER_EXAMPLE + 2,
                    stateful_step_count=STEPS_PER_EXAMPLE,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    phases=PHASES,
                ),
            )
    finally:
        evaluator.close()
    seconds = time.perf_counter() - started
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(
        json.dumps(
            {
                "steps": run.steps,
                "examples": run.examples,
                "rounds": rounds,
                "steps_per_example": STEPS_PER_EXAMPLE,
                "seconds": round(seconds, 1),
                "steps_per_second": round(run.steps / seconds, 1),
                "tables": dict(run.tables),
                "deadlines_applied": run.deadlines_applied,
                "events_replayed": run.events_replayed,
                "deal_outcomes": dict(sorted(run.deal_outcomes.items())),
                "rules": dict(sorted(run.rules.items())),
                "responses": dict(sorted(run.requests.items())),
            },
            indent=2,
        )
        + "\n"
    )
    assert run.steps >= MIN_STEPS
