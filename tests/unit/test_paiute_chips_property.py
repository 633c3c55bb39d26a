"""Random Paiute play over random options: chips are conserved, logged, private and JSON-safe.

The machine trusts the evaluator's rank of a call, so a fake rank stands in for it here: a
fixed function of the cards that calls about a third of all hands no combination.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.games import paiute
from gateway.games.common import FULL_DECK, Deck, Event, Ranked, RuleError
from tests.unit.test_guts_chips_property import CODES as GUTS_CODES
from tests.unit.test_guts_chips_property import cards_in, stack_of

# Guts' codes for the seat moves, with Paiute's turn codes in place of declaring.
CODES = (GUTS_CODES - {"already_declared"}) | {
    "already_drawn",
    "empty_discard_pile",
    "must_draw_first",
    "card_not_held",
    "cannot_discard_drawn",
    "invalid_combination",
    "cards_not_held",
    "no_combination",
}
NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "ann"]  # "ann" collides on purpose

OPTIONS = st.fixed_dictionaries(
    {
        "ante": st.integers(1, 3),
        "turn_seconds": st.integers(1, 30),
        "max_reshuffles": st.integers(0, 2),
        "deal_pause_seconds": st.sampled_from([0, 1.5, 3]),
        "min_players": st.integers(2, 3),
        "max_players": st.integers(2, 5),
        "min_buy_in": st.integers(1, 5),
        "max_buy_in": st.integers(5, 40),
        "rebuy": st.booleans(),
    }
)

# Mostly whole turns, so that deals run long enough to reach the stock's end; calls are
# rare outside the last turns (see play_move), or every deal would end at once.
ACTIONS = ["sit", "leave", "rebuy", "start", "start", "settle", "settle", "deadline"]
ACTIONS += ["draw", "discard", "call"] + ["turn"] * 30


def fake_rank(cards: list[str]) -> Ranked:
    """A stand-in for the evaluator: strength 0, 1 or 2 by a digest of the cards."""
    strength = hashlib.sha256(",".join(sorted(cards)).encode()).digest()[0] % 3
    return Ranked(strength, "fake", f"Fake strength {strength}")


def public_cards(deal: dict[str, Any]) -> set[str]:
    """The cards everyone has seen face up and may still see where they lie."""
    seen = set(deal["discard_pile"]) | cards_in(deal["claims"]) | {deal["wild_card"]}
    drawn = deal["drawn"]
    if drawn is not None and drawn["source"] == "discard":
        seen.add(drawn["card"])
    return seen


def check_invariants(state: dict[str, Any]) -> None:
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


def check_events(before: dict[str, Any], after: dict[str, Any], events: list[Event]) -> None:
    """Every chip movement is in the log, and no event shows a card it should not."""
    assert json.loads(json.dumps(events)) == events
    # (seat, change of its stack, change of the pot) for every chip movement logged.
    moves: list[tuple[Any, int, int]] = []
    for e in events:
        kind, data = e["type"], e["data"]
        if kind == "ante":
            assert data["amount"] == data["to_pot"] <= data["owed"]
            moves.append((data["seat"], -data["amount"], data["amount"]))
        elif kind == "pot_won":
            moves.append((data["seat"], data["amount"], -data["amount"]))
        elif kind == "pot_split":
            moves += [
                (share["seat"], share["amount"], -share["amount"]) for share in data["shares"]
            ]
        elif kind == "seated":
            moves.append((data["seat"], data["stack"], 0))
        elif kind == "rebought":
            moves.append((data["seat"], data["amount"], 0))
        elif kind == "cashed_out":
            moves.append((data["seat"], -data["amount"], 0))
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
            holder = e["data"]["seat"]
            assert e["visible_to"] == [holder]
            assert seen <= set(deal["hands"][str(holder)]) | public
            assert not seen & stock
        elif e["type"] == "drew":
            assert seen <= set(old_pile[-1:])
        else:
            assert seen <= public, e


def check_views(state: dict[str, Any]) -> None:
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


def make_deck(rng: random.Random) -> Deck:
    cards = list(FULL_DECK)
    rng.shuffle(cards)
    return Deck(tuple(cards), f"{rng.getrandbits(32):08x}")


def play_move(
    state: dict[str, Any], action: str, data: st.DataObject, now: float, rng: random.Random
) -> tuple[dict[str, Any], list[Event]]:
    """Try one move, mostly a legal one, for the seat whose turn it is."""
    options = state["options"]
    seats = st.integers(1, options["max_players"] + 1)
    deal = state["deal"]
    turn = deal["turn"] if deal is not None and deal["turn"] is not None else None
    seat = turn if turn is not None and data.draw(st.integers(0, 19)) else data.draw(seats)
    if action == "sit":
        buy_in = data.draw(st.integers(0, options["max_buy_in"] + 1))
        return paiute.sit(state, data.draw(st.sampled_from(NAMES)), buy_in, now)
    if action == "leave":
        return paiute.leave(state, data.draw(seats), now)
    if action == "rebuy":
        amount = data.draw(st.integers(0, options["max_buy_in"]))
        return paiute.rebuy(state, data.draw(seats), amount, now)
    if action == "start" or state["phase"] == "waiting":
        return paiute.start(state, data.draw(seats), now, make_deck(rng))
    if action == "deadline":
        deadline = paiute.next_deadline(state)
        return paiute.on_deadline(state, max(now, deadline or now), make_deck(rng))
    if action == "settle" or state["phase"] == "showdown":
        request = paiute.ranking_request(state) or {}
        keys = list(request)
        if keys and data.draw(st.integers(0, 9)) == 0:
            keys.pop()
        return paiute.settle(state, {key: fake_rank(request[key]) for key in keys}, now)
    if state["phase"] == "between_deals":
        return paiute.on_deadline(state, max(now, state["deadline"]), make_deck(rng))
    if action == "draw":
        return paiute.draw(state, seat, data.draw(st.sampled_from(["stock", "discard"])), now)
    held: list[str] = deal["hands"].get(str(seat), []) if deal is not None else []
    if action == "discard":
        card = data.draw(st.sampled_from(held)) if held else "2c"
        return paiute.discard(state, seat, card, now)
    events: list[Event] = []
    if deal is not None and deal["turn"] == seat and deal["drawn"] is None:
        source = data.draw(st.sampled_from(["stock", "stock", "stock", "discard"]))
        state, events = paiute.draw(state, seat, source, now)
        if state["deal"]["drawn"] is None:
            return state, events
        deal = state["deal"]
        held = deal["hands"][str(seat)]
    if action == "call" or (state["phase"] == "last_turns" and data.draw(st.booleans())):
        cards = list(held)
        data.draw(st.randoms(use_true_random=False)).shuffle(cards)
        size = data.draw(st.sampled_from([5, 5, 6]))
        spare = cards[size] if len(cards) > size else None
        try:
            state, more = paiute.call(
                state, seat, cards[:size], spare, fake_rank(cards[:size]), now
            )
            return state, events + more
        except RuleError:
            if not events:
                raise
    if deal is None or deal["drawn"] is None or not held:
        return paiute.discard(state, seat, held[0] if held else "2c", now)
    # The drawn card, unless it came from the discard pile and must stay.
    card = held[-1] if deal["drawn"]["source"] == "stock" else held[0]
    state, more = paiute.discard(state, seat, card, now)
    return state, events + more


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
