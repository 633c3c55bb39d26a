"""Random play over random options: chips are conserved, logged, private and JSON-safe."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.games import guts, table
from api.games.common import Ranked, RuleError
from api.games.events import Event
from api.games.state import GutsTable
from tests.support.games import GUTS_CODES as CODES
from tests.support.games import cards_in, make_deck, seats_pending, stack_of
from tests.support.strategies import GUTS_NAMES as NAMES
from tests.support.strategies import GUTS_OPTIONS as OPTIONS

# Weighted towards play; sit, leave and rebuy still come often enough to hit every rule.
ACTIONS = ["sit", "leave", "rebuy", "start", "start", "back"] + ["deadline", "settle"] * 3
ACTIONS += ["declare"] * 12


def check_invariants(state: GutsTable) -> None:
    assert json.loads(json.dumps(state)) == state
    for seat in state["seats"].values():
        assert type(seat["stack"]) is int
        assert seat["stack"] >= 0
    assert type(state["pot"]) is int
    assert state["pot"] >= 0
    assert type(state["reserve"]) is int
    assert state["reserve"] >= 0
    assert guts.chips_on_table(state) == state["chips_bought"] - state["chips_cashed"]
    assert state["game_in_progress"] == (state["pot"] > 0)
    if state["game_in_progress"]:
        assert any(seat["status"] == "playing" for seat in state["seats"].values())
    if state["phase"] == "waiting":
        assert state["deadline"] is None
        # a running game waits, its pot with it, while too few of its players are present
        assert state["pot"] == 0 or not table.can_deal(state)
    options = state["options"]
    if options["cap"] is not None and options["cap_mode"] == "reserve":
        assert state["pot"] <= options["cap"]
    if options["cap_mode"] != "reserve" or options["cap"] is None:
        assert state["reserve"] == 0
    deal = state["deal"]
    if deal is not None and options["cap"] is not None and options["cap_mode"] == "per_deal":
        paid: Counter[int | None] = Counter()
        won: Counter[int | None] = Counter()
        for item in deal["flow"]:
            if item["source"] == "seat":
                paid[item["seat"]] += item["amount"]
            elif item["kind"] == "win":
                won[item["seat"]] += item["amount"]
        assert max(paid.values(), default=0) <= options["cap"], deal["flow"]
        assert max(won.values(), default=0) <= options["cap"], deal["flow"]
    if deal is not None and deal["showdown_reason"] != "wimp":
        ins = {str(s) for s, c in deal["declarations"].items() if c == "in"}
        assert set(deal["shown"]) <= ins | {"ghost"}


def check_events(before: GutsTable, after: GutsTable, events: list[Event]) -> None:
    """Every chip movement is in the log, and no event leaks a hand that was not shown."""
    assert json.loads(json.dumps(events)) == events
    stacks: Counter[str] = Counter()
    pot = reserve = 0
    for e in events:
        if e["type"] == "seated":
            stacks[str(e["data"]["seat"])] += e["data"]["stack"]
        elif e["type"] == "rebought":
            stacks[str(e["data"]["seat"])] += e["data"]["amount"]
        elif e["type"] == "cashed_out":
            stacks[str(e["data"]["seat"])] -= e["data"]["amount"]
        elif e["type"] in ("ante", "paid", "wimp_paid"):
            data = e["data"]
            stacks[str(data["seat"])] -= data["amount"]
            pot += data["to_pot"]
            reserve += data["to_reserve"]
            assert data["amount"] == data["to_pot"] + data["to_reserve"] <= data["owed"]
        elif e["type"] == "pot_won":
            stacks[str(e["data"]["seat"])] += e["data"]["amount"]
            pot -= e["data"]["amount"]
        elif e["type"] == "pot_split":
            for share in e["data"]["shares"]:
                stacks[str(share["seat"])] += share["amount"]
                pot -= share["amount"]
        elif e["type"] == "reserve_opened":
            pot += e["data"]["amount"]
            reserve -= e["data"]["amount"]
    assert after["pot"] - before["pot"] == pot
    assert after["reserve"] - before["reserve"] == reserve
    for key in set(before["seats"]) | set(after["seats"]) | set(stacks):
        assert stack_of(after, key) - stack_of(before, key) == stacks[key], key

    deal = after["deal"]
    hands: dict[str, list[str]] = deal["hands"] if deal is not None else {}
    for e in events:
        seen = cards_in(e["data"])
        if e["type"] == "showdown":
            shown = e["data"]["hands"]
            assert set(shown) == set(table.deal_of(after)["shown"])
            assert seen == cards_in(table.deal_of(after)["shown"])
            continue
        if e["visible_to"] is None:
            assert not seen, e
        else:
            assert len(e["visible_to"]) == 1
            assert seen <= set(hands.get(str(e["visible_to"][0]), [])), e


def check_views(state: GutsTable) -> None:
    deal = state["deal"]
    shown = cards_in(deal["shown"]) if deal is not None else set()
    assert cards_in(guts.view(state, None)) <= shown
    for key in state["seats"]:
        seen = cards_in(guts.view(state, int(key)))
        own = set(deal["hands"].get(key, [])) if deal is not None else set()
        assert seen <= shown | own
        for other, cards in (deal["hands"] if deal is not None else {}).items():
            if other != key and other not in table.deal_of(state)["shown"]:
                assert not seen & set(cards)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, data=st.data())
def test_random_play_keeps_every_invariant(options: dict[str, Any], data: st.DataObject) -> None:
    if options["max_players"] < options["min_players"]:
        options["max_players"] = options["min_players"]
    rng = data.draw(st.randoms(use_true_random=False))
    state = guts.new_table(options, "prop", 0.0)
    for name in NAMES[: data.draw(st.integers(2, options["max_players"]))]:
        buy_in = data.draw(st.integers(options["min_buy_in"], options["max_buy_in"]))
        state, _ = guts.sit(state, name, buy_in, 0.0)
    now = 0.0
    seats = st.integers(1, options["max_players"] + 1)
    for _ in range(data.draw(st.integers(10, 100))):
        action = data.draw(st.sampled_from(ACTIONS))
        now += data.draw(st.sampled_from([0.0, 0.0, 0.0, 0.5, 2.0, 10.0]))
        original, before = state, copy.deepcopy(state)
        refused: RuleError | None = None
        try:
            if action == "sit":
                buy_in = data.draw(st.integers(0, options["max_buy_in"] + 1))
                state, events = guts.sit(state, data.draw(st.sampled_from(NAMES)), buy_in, now)
            elif action == "leave":
                state, events = guts.leave(state, data.draw(seats), now)
            elif action == "rebuy":
                amount = data.draw(st.integers(0, options["max_buy_in"]))
                state, events = guts.rebuy(state, data.draw(seats), amount, now)
            elif action == "back":
                state, events = table.back(state, data.draw(seats), now)
            elif action == "start":
                state, events = guts.start(state, data.draw(seats), now, make_deck(rng))
            elif action == "declare":
                choice = data.draw(st.sampled_from(["in", "in", "out", "pass"]))
                pending = seats_pending(guts.view(state, None))
                seat = data.draw(st.sampled_from(pending) | seats if pending else seats)
                state, events = guts.declare(state, seat, choice, now)
            elif action == "deadline":
                deadline = guts.next_deadline(state)
                if deadline is not None:
                    now = max(now, deadline)
                state, events = guts.on_deadline(state, now, make_deck(rng))
            else:
                request = guts.ranking_request(state) or {}
                keys = list(request)
                if keys and data.draw(st.integers(0, 9)) == 0:
                    keys.pop()
                ranked = {k: Ranked(data.draw(st.integers(0, 3)), "x", "") for k in keys}
                state, events = guts.settle(state, ranked, now)
        except RuleError as error:
            refused = error
        # A refused move leaves its input alone, and so does an accepted one.
        assert original == before
        if refused is not None:
            assert refused.code in CODES
            assert refused.detail.endswith(".")
            continue
        check_invariants(state)
        check_events(before, state, events)
        check_views(state)
