"""Random Paiute play over random options: chips are conserved, logged, private and JSON-safe.

The machine trusts the evaluator's rank of a call, so a fake rank stands in for it here: a
fixed function of the cards that calls about a third of all hands no combination.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.games import paiute
from api.games.common import FULL_DECK, RuleError
from api.games.events import Event
from api.games.state import PaiuteDeal, PaiuteTable
from tests.support.games import PAIUTE_CODES as CODES
from tests.support.games import cards_in, stack_of
from tests.support.strategies import PAIUTE_ACTIONS as ACTIONS
from tests.support.strategies import PAIUTE_NAMES as NAMES
from tests.support.strategies import PAIUTE_OPTIONS as OPTIONS
from tests.support.strategies import paiute_move as play_move


def public_cards(deal: PaiuteDeal) -> set[str]:
    """The cards everyone has seen face up and may still see where they lie."""
    seen = set(deal["discard_pile"]) | cards_in(deal["claims"]) | {deal["wild_card"]}
    drawn = deal["drawn"]
    if drawn is not None and drawn["source"] == "discard":
        seen.add(drawn["card"])
    return seen


def check_invariants(state: PaiuteTable) -> None:
    assert json.loads(json.dumps(state)) == state
    amounts = [state["pot"], *(seat["stack"] for seat in state["seats"].values())]
    assert all(type(amount) is int and amount >= 0 for amount in amounts)
    assert state["reserve"] == 0
    assert paiute.chips_on_table(state) == state["chips_bought"] - state["chips_cashed"]
    assert state["game_in_progress"] == (state["pot"] > 0)
    if state["phase"] == "waiting":
        assert state["deadline"] is None
    deal = state["deal"]
    if deal is None:
        return
    held = [card for cards in deal["hands"].values() for card in cards]
    everywhere = held + deal["stock"] + deal["discard_pile"] + [deal["wild_card"]]
    assert sorted(everywhere) == sorted(FULL_DECK)
    assert deal["reshuffles"] <= state["options"]["max_reshuffles"] or deal["caller"] is not None
    for key, cards in deal["hands"].items():
        if key in deal["shown"]:
            assert cards == deal["shown"][key]
            assert len(cards) in (5, 6)
        elif state["phase"] in ("playing", "last_turns") and int(key) == deal["turn"]:
            assert len(cards) == (5 if deal["drawn"] is None else 6)
        else:
            assert len(cards) == 5
    if state["phase"] == "showdown":
        assert paiute.ranking_request(state) == deal["shown"]
        assert deal["shown"]


def check_events(before: PaiuteTable, after: PaiuteTable, events: list[Event]) -> None:
    """Every chip movement is in the log, and no event shows a card it should not."""
    assert json.loads(json.dumps(events)) == events
    # (seat, change of its stack, change of the pot) for every chip movement logged.
    moves: list[tuple[Any, int, int]] = []
    for e in events:
        if e["type"] == "ante":
            data = e["data"]
            assert data["amount"] == data["to_pot"] <= data["owed"]
            moves.append((data["seat"], -data["amount"], data["amount"]))
        elif e["type"] == "pot_won":
            moves.append((e["data"]["seat"], e["data"]["amount"], -e["data"]["amount"]))
        elif e["type"] == "pot_split":
            moves += [
                (share["seat"], share["amount"], -share["amount"]) for share in e["data"]["shares"]
            ]
        elif e["type"] == "seated":
            moves.append((e["data"]["seat"], e["data"]["stack"], 0))
        elif e["type"] == "rebought":
            moves.append((e["data"]["seat"], e["data"]["amount"], 0))
        elif e["type"] == "cashed_out":
            moves.append((e["data"]["seat"], -e["data"]["amount"], 0))
    assert after["pot"] - before["pot"] == sum(pot for _, _, pot in moves)
    stacks: Counter[str] = Counter()
    for seat, change, _ in moves:
        stacks[str(seat)] += change
    for key in set(before["seats"]) | set(after["seats"]) | set(stacks):
        assert stack_of(after, key) - stack_of(before, key) == stacks[key], key

    deal = after["deal"]
    if deal is None:
        assert not cards_in(events)
        return
    stock = set(deal["stock"])
    public = public_cards(deal)
    # A card thrown away in this batch may already be back in a reshuffled stock.
    if any(e["type"] == "reshuffled" for e in events):
        public |= stock
        stock = set()
    old_pile = before["deal"]["discard_pile"] if before["deal"] is not None else []
    for e in events:
        seen = cards_in(e["data"])
        if e["type"] == "reshuffled":
            assert isinstance(e["data"]["stock"], int)
        if e["visible_to"] is not None:
            private: Mapping[str, object] = e["data"]  # every kind shown to one seat names it
            holder = private["seat"]
            assert e["visible_to"] == [holder]
            assert seen <= set(deal["hands"][str(holder)]) | public
            assert not seen & stock
        elif e["type"] == "drew":
            assert seen <= set(old_pile[-1:])
        else:
            assert seen <= public, e


def check_views(state: PaiuteTable) -> None:
    deal = state["deal"]
    for seat in [None, *(int(key) for key in state["seats"])]:
        shown = paiute.view(state, seat)
        assert json.loads(json.dumps(shown)) == shown
        seen = cards_in(shown)
        if deal is None:
            assert not seen
            continue
        own: set[str] = set()
        if shown["you"] is not None and shown["you"]["cards"] is not None:
            assert shown["you"]["cards"] == deal["hands"][str(seat)]
            assert deal["player_ids"][str(seat)] == state["seats"][str(seat)]["player_id"]
            own = set(shown["you"]["cards"])
        assert seen <= own | public_cards(deal)
        # A call's discard stays in its claim, wherever the card has gone since.
        claimed = {claim["discard"] for claim in deal["claims"].values()}
        assert not seen & set(deal["stock"]) - claimed


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, data=st.data())
def test_random_play_keeps_every_invariant(options: dict[str, Any], data: st.DataObject) -> None:
    options["max_players"] = max(options["max_players"], options["min_players"])
    state = paiute.new_table(options, "prop", 0.0)
    players = data.draw(st.integers(2, options["max_players"]))
    buy_ins = st.integers(options["min_buy_in"], options["max_buy_in"])
    for name in NAMES[:players]:
        state, _ = paiute.sit(state, name, data.draw(buy_ins), 0.0)
    rng = data.draw(st.randoms(use_true_random=False))
    now = 0.0
    for _ in range(data.draw(st.integers(20, 250))):
        action = data.draw(st.sampled_from(ACTIONS))
        now += data.draw(st.sampled_from([0.0, 0.0, 0.0, 0.5, 2.0]))
        original, before = state, copy.deepcopy(state)
        refused: RuleError | None = None
        try:
            state, events = play_move(state, action, data, now, rng)
        except RuleError as error:
            refused = error
        # A refused move leaves its input alone, and so does an accepted one.
        assert original == before
        if refused is not None:
            assert refused.code in CODES, refused.code
            assert refused.detail.endswith(".")
            continue
        check_invariants(state)
        check_events(before, state, events)
        check_views(state)
