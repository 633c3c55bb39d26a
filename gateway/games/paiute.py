"""The Paiute table as a pure state machine: (state, move) -> (new state, events).

Driven like `gateway.games.guts` (the same state around the deal, the same `verify_x` /
`x` pairs, seat moves from `gateway.games.table`, timer and showdown hooks), with its own
deal record and turn moves: `draw`, `discard`, `call` (a call is verified without its
rank first, so that the adapter asks the evaluator only for a move the rules accept;
`hold_turn` keeps the turn open while the evaluator cannot answer). The stock's order
reaches no event and no view, nor a card drawn from the stock except its drawer's; the
deck and salt reach the hand history through `finished_deal` once the deal is over.

The rules as played, every option and every reading where the rules are silent:
docs/rules.md; the events and their fields: docs/api.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gateway.games import fairness, table
from gateway.games import options as checks
from gateway.games.cards import rank_value
from gateway.games.common import (
    Deck,
    Event,
    Ranked,
    RuleError,
    Transition,
    copy_state,
    event,
    verify_deck,
)
from gateway.games.game import (
    Back,
    Call,
    Discard,
    Draw,
    HandRules,
    Move,
    Moved,
    Rebuy,
    Rules,
    Start,
    TableGame,
    TableState,
    as_moved,
    plain,
    unsupported,
)
from gateway.games.table import BETWEEN_DEALS, SHOWDOWN, State

Change = Callable[[State, list[Event]], object]

PLAYING = "playing"
LAST_TURNS = "last_turns"

STOCK = "stock"
DISCARD = "discard"
HAND_SIZE = 5

# min_buy_in and max_buy_in default to 20 and 500 antes; the values here are for ante 1.
PAIUTE_DEFAULTS: dict[str, Any] = {
    "ante": 1,
    "turn_seconds": 30,
    "max_reshuffles": 2,
    "deal_pause_seconds": 3,
    "min_players": 2,
    "max_players": 5,
    "min_buy_in": 20,
    "max_buy_in": 500,
    "rebuy": True,
    "away_after": table.AWAY_AFTER,
}

# Paiute's own limits on the number of seats and of reshuffles.
_OWN_LIMITS: dict[str, tuple[int, int]] = {
    "max_reshuffles": (0, 10),
    "min_players": (2, 5),
    "max_players": (2, 5),
}


def _changed(state: State, change: Change) -> Transition:
    """Apply `change` to a deep copy of the state, collecting the events it appends."""
    new = copy_state(state)
    events: list[Event] = []
    change(new, events)
    return new, events


# --------------------------------------------------------------------------- options


def _limited_int(raw: Mapping[str, Any], name: str) -> int:
    low, high = _OWN_LIMITS[name]
    value = raw.get(name, PAIUTE_DEFAULTS[name])
    if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
        return value
    raise RuleError(
        "invalid_option",
        "Option {name!r} must be a whole number from {low} to {high}.",
        name,
        name=name,
        low=low,
        high=high,
    )


def validate_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the full Paiute options with defaults filled in, or raise invalid_option."""
    raw = checks.verify_known(raw, PAIUTE_DEFAULTS)
    ante = checks.ante(raw, PAIUTE_DEFAULTS)
    checked: dict[str, Any] = {"ante": ante}
    checked["rebuy"] = checks.true_or_false(raw, PAIUTE_DEFAULTS, "rebuy")
    checked["turn_seconds"] = checks.turn_seconds(raw, PAIUTE_DEFAULTS)
    checked["deal_pause_seconds"] = checks.deal_pause_seconds(raw, PAIUTE_DEFAULTS)
    checked["min_buy_in"], checked["max_buy_in"] = checks.buy_in_limits(raw, ante)
    checked.update({name: _limited_int(raw, name) for name in _OWN_LIMITS})
    checked["away_after"] = checks.away_after(raw, PAIUTE_DEFAULTS)
    if checked["max_players"] < checked["min_players"]:
        raise RuleError(
            "invalid_option", "Option 'max_players' must be at least 'min_players'.", "max_players"
        )
    return {name: checked[name] for name in PAIUTE_DEFAULTS}


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, Any], table_id: str, now: float) -> State:
    """Return the initial state of an empty Paiute table in phase waiting."""
    return table.new_table("paiute", validate_options(options), table_id, now)


def chips_on_table(state: State) -> int:
    """Return the sum of all stacks and the pot."""
    return table.chips_on_table(state)


next_deadline = table.next_deadline
finished_deal = table.finished_deal


def wild_rank(state: State) -> int | None:
    """Return the wild rank (2..14) of the current or last deal, or None before any deal."""
    deal = state["deal"]
    if deal is None:
        return None
    rank: int = deal["wild_rank"]
    return rank


def ranking_request(state: State) -> dict[str, list[str]] | None:
    """Return the laid-down hands to rank, keyed by str(seat), while in showdown."""
    return table.ranking_request(state)


# --------------------------------------------------------------------------- seats


verify_sit = table.verify_sit
sit = table.sit


def _in_current_hand(state: State, seat: int) -> bool:
    deal = state["deal"]
    return state["phase"] in (PLAYING, LAST_TURNS, SHOWDOWN) and seat in deal["players"]


verify_leave = table.verify_leave


def leave(state: State, seat: int, now: float) -> Transition:
    """Cash a seat out now, or mark it to leave when the deal it plays in ends."""
    verify_leave(state, seat, now)
    if not _in_current_hand(state, seat):
        return table.leave(state, seat, now, in_hand=False)
    return _changed(state, lambda new, events: _mark_leaving(new, seat, now, events))


def _mark_leaving(state: State, seat: int, now: float, events: list[Event]) -> None:
    table.mark_leaving(state, seat, events)
    if state["phase"] == SHOWDOWN:
        return
    if state["deal"]["turn"] == seat:
        # Nobody waits for a player who has gone: the turn is played for them now.
        if _play_for(state, seat, "leaving", now, events):
            _advance(state, now, events)
    else:
        reason = _nobody_to_play(state)
        if reason is not None:
            _void(state, now, reason, events)


def verify_rebuy(state: State, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    table.verify_rebuy(state, seat, amount, in_hand=False)
    if _in_current_hand(state, seat):
        raise table.refuse_rebuy_in_hand(seat)


def rebuy(state: State, seat: int, amount: int, now: float) -> Transition:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    return table.buy_chips(state, seat, amount)


# --------------------------------------------------------------------------- deals


verify_start = table.verify_start


def start(state: State, seat: int, now: float, deck: Deck) -> Transition:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    return _changed(state, lambda new, events: _begin_deal(new, now, deck, events))


def _begin_deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    if table.open_deal(state, events) is not None:
        _deal(state, now, deck, events)


def _deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    funded = table.seat_numbers(state, "playing", funded=True, present=True)
    dealer = table.from_left_of(state["dealer"], funded)[0]
    order = table.from_left_of(dealer, funded)
    cards = list(deck.cards)
    dealt = HAND_SIZE * len(order)
    state["hand_number"] += 1
    state["dealer"] = dealer
    records = {str(s): state["seats"][str(s)] for s in order}
    state["deal"] = {
        "number": state["hand_number"],
        "game_number": state["game_number"],
        "dealer": dealer,
        "players": order,  # dealing order, from the dealer's left to the dealer
        "player_ids": {key: record["player_id"] for key, record in records.items()},
        "names": {key: record["name"] for key, record in records.items()},
        "commitment": fairness.commitment(deck.cards, deck.salt),
        "deck": cards,
        "salt": deck.salt,
        # Card i of the deck goes to the i-th seat of the dealing order, round after round.
        "hands": {str(s): cards[i : dealt : len(order)] for i, s in enumerate(order)},
        "wild_card": cards[dealt],
        "wild_rank": rank_value(cards[dealt]),
        "discard_pile": [cards[dealt + 1]],  # top last
        "stock": cards[dealt + 2 :],  # drawn from the front
        "reshuffles": 0,
        "reshuffle_orders": [],  # each reshuffle's new stock, top first: for the history only
        "turn": None,
        "drawn": None,  # this turn's draw: {card, source}
        "caller": None,
        "last_turns": [],  # the seats still to play a last turn after the current one
        "claims": {},  # str(seat) -> {cards, discard, category, description} of a call
        "shown": {},
        "timeouts": [],  # [{seat, reason}]
        "ranking_needed": None,
        "showdown_reason": None,
        "ranks": {},
        "flow": [],
        "pot_at_start": 0,
        "outcome": None,
        "ended": False,
    }
    deal = state["deal"]
    started = {key: deal[key] for key in ("game_number", "dealer", "commitment")}
    events.append(
        event("deal_started", {"hand_number": deal["number"], **started, "players": list(order)})
    )
    for seat in order:
        events.append(event("ante", _ante(state, seat)))
    deal["pot_at_start"] = state["pot"]
    for seat in order:
        hand = list(deal["hands"][str(seat)])
        events.append(event("cards_dealt", {"seat": seat, "cards": hand}, [seat]))
    events.append(event("dealt", {"players": list(order), "cards": HAND_SIZE}))
    events.append(event("wild_card", {"card": deal["wild_card"], "rank": deal["wild_rank"]}))
    events.append(event("discard_started", {"card": deal["discard_pile"][-1]}))
    table.set_phase(state, PLAYING, now + table.option(state, "turn_seconds"), events)
    _give_turn(state, order[0], events)


def _ante(state: State, seat: int) -> dict[str, Any]:
    record = state["seats"][str(seat)]
    owed = int(table.option(state, "ante"))
    amount = min(owed, record["stack"])
    record["stack"] -= amount
    state["pot"] += amount
    table.record_flow(state, "ante", seat, amount, "seat", "pot")
    return {
        "seat": seat,
        "owed": owed,
        "amount": amount,
        "to_pot": amount,
        "to_reserve": 0,
        "stack": record["stack"],
    }


# --------------------------------------------------------------------------- turns


def _verify_turn(state: State, seat: int, now: float) -> dict[str, Any]:
    """Check what every turn move needs, and return the deal."""
    table.verify_seated(state, seat)
    phase = state["phase"]
    if phase == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if phase not in (PLAYING, LAST_TURNS):
        raise RuleError("no_hand_in_progress", "No deal is being played right now.")
    deal: dict[str, Any] = state["deal"]
    if seat not in deal["players"] or (
        deal["player_ids"][str(seat)] != state["seats"][str(seat)]["player_id"]
    ):
        raise RuleError(
            "not_your_turn", "Seat {seat} is not dealt into this deal.", "seat", seat=seat
        )
    if deal["turn"] != seat:
        raise RuleError(
            "not_your_turn",
            "It is seat {turn}'s turn, not seat {seat}'s.",
            turn=deal["turn"],
            seat=seat,
        )
    if now >= state["deadline"]:
        raise RuleError("too_late", "The deadline of this turn has passed; the timer plays it.")
    return deal


def verify_draw(state: State, seat: int, source: str, now: float) -> None:
    """Raise RuleError unless this seat may draw from `source` now."""
    deal = _verify_turn(state, seat, now)
    if deal["drawn"] is not None:
        raise RuleError(
            "already_drawn", "Seat {seat} has already drawn this turn.", "seat", seat=seat
        )
    if not isinstance(source, str) or source not in (STOCK, DISCARD):
        raise RuleError(
            "invalid_choice", "A card is drawn from the 'stock' or the 'discard' pile.", "source"
        )
    if source == DISCARD and not deal["discard_pile"]:
        raise RuleError(
            "empty_discard_pile", "The discard pile is empty; draw from the stock.", "source"
        )


def draw(state: State, seat: int, source: str, now: float) -> Transition:
    """Take the top card of the stock or of the discard pile into the seat's hand."""
    verify_draw(state, seat, source, now)
    return _changed(state, lambda new, events: _take_card(new, seat, source, now, events))


# The six-card combinations' group sizes (RULES.md, "Winning combinations" 4 to 6).
_SIX_CARD_GROUPS = ((4, 2), (3, 3), (2, 2, 2))


def forms_six_card_combination(cards: Sequence[str], wild_rank: int) -> bool:
    """Whether these six cards can form four + two, three + three or two + two + two.

    Each group is of one rank, the groups of different ranks; a wild card (of
    `wild_rank`, 2..14) stands for any card. A hand that can form one may be shown whole;
    it is valued as the best six-card combination it forms, which the evaluator ranks.
    """
    if len(cards) != HAND_SIZE + 1:
        return False
    counts: dict[str, int] = {}
    for card in cards:
        if rank_value(card) != wild_rank:
            counts[card[0]] = counts.get(card[0], 0) + 1
    natural = sorted(counts.values(), reverse=True)
    # the largest natural groups take the largest groups; wild cards fill the rest
    return any(
        len(natural) <= len(groups)
        and all(count <= size for count, size in zip(natural, groups, strict=False))
        for groups in _SIX_CARD_GROUPS
    )


def _verify_discard_rule(deal: dict[str, Any], card: str) -> None:
    drawn = deal["drawn"]
    if drawn["source"] == DISCARD and drawn["card"] == card:
        raise RuleError(
            "cannot_discard_drawn",
            "{card} was just taken from the discard pile and cannot go back this turn.",
            "discard",
            card=card,
        )


def verify_discard(state: State, seat: int, card: str, now: float) -> None:
    """Raise RuleError unless this seat may discard `card` now."""
    deal = _verify_turn(state, seat, now)
    if deal["drawn"] is None:
        raise RuleError(
            "must_draw_first", "Seat {seat} must draw before discarding.", "seat", seat=seat
        )
    if not isinstance(card, str) or card not in deal["hands"][str(seat)]:
        raise RuleError(
            "card_not_held", "Seat {seat} does not hold {card!r}.", "card", seat=seat, card=card
        )
    _verify_discard_rule(deal, card)


def discard(state: State, seat: int, card: str, now: float) -> Transition:
    """Put a card from the seat's hand on the discard pile, ending its turn."""
    verify_discard(state, seat, card, now)

    def change(new: State, events: list[Event]) -> None:
        _put_down(new, seat, card, events)
        _advance(new, now, events)

    return _changed(state, change)


def verify_call(
    state: State,
    seat: int,
    cards: Sequence[str],
    discard: str | None,
    ranked: Ranked | None,
    now: float,
) -> None:
    """Raise RuleError unless this seat may show `cards` (discarding `discard`) now.

    With `ranked` None the combination itself is not checked, so that an adapter can test
    the move before it asks the evaluator to rank the cards.
    """
    deal = _verify_turn(state, seat, now)
    if deal["drawn"] is None:
        raise RuleError(
            "must_draw_first", "Seat {seat} must draw before calling.", "seat", seat=seat
        )
    if (
        not isinstance(cards, list | tuple)
        or not all(isinstance(card, str) for card in cards)
        or len(set(cards)) != len(cards)
        or len(cards) not in (HAND_SIZE, HAND_SIZE + 1)
    ):
        raise RuleError("invalid_combination", "A combination is 5 or 6 different cards.", "cards")
    if len(cards) == HAND_SIZE and (not isinstance(discard, str) or discard in cards):
        raise RuleError(
            "invalid_combination",
            "Showing five cards needs the sixth card as the discard.",
            "discard",
        )
    if len(cards) > HAND_SIZE and discard is not None:
        raise RuleError(
            "invalid_combination", "Showing all six cards leaves nothing to discard.", "discard"
        )
    named = [*cards, *([discard] if discard is not None else [])]
    if sorted(named) != sorted(deal["hands"][str(seat)]):
        raise RuleError(
            "cards_not_held",
            "The shown cards and the discard must be exactly the six cards seat {seat} holds.",
            "cards",
            seat=seat,
        )
    if discard is not None:
        _verify_discard_rule(deal, discard)
    elif not forms_six_card_combination(cards, deal["wild_rank"]):
        raise RuleError(
            "invalid_combination",
            "Showing all six cards needs a six-card combination (four + two, three + three"
            " or two + two + two); with a five-card one, show five and discard the sixth.",
            "cards",
        )
    if ranked is None:
        return
    if (
        not isinstance(ranked, Ranked)
        or isinstance(ranked.strength, bool)
        or not isinstance(ranked.strength, int)
    ):
        raise RuleError("invalid_ranking", "A call needs the evaluator's rank of the cards.")
    if ranked.strength <= 0:
        raise RuleError(
            "no_combination",
            "These cards make no winning combination, so seat {seat} cannot call.",
            "cards",
            seat=seat,
        )


def hold_turn(
    state: State, seat: int, cards: Sequence[str], discard: str | None, now: float, seconds: float
) -> Transition:
    """Hold the seat's turn open for `seconds` more: its call could not be ranked.

    The adapter calls this when the evaluator does not answer a call that the rules
    accept as far as they can tell without its rank (`verify_call` with no ranking), so
    that the service's outage does not cost the seat its turn: the turn's deadline moves
    to at least `now + seconds` (a ``turn_held`` event), and the seat may call again.
    Nothing changes when the deadline is already that late.
    """
    verify_call(state, seat, cards, discard, None, now)
    held = now + seconds
    if held <= state["deadline"]:
        return state, []
    state = copy_state(state)
    state["deadline"] = held
    data = {"seat": seat, "deadline": held, "reason": "evaluator_unavailable"}
    return state, [event("turn_held", data)]


def call(
    state: State,
    seat: int,
    cards: Sequence[str],
    discard: str | None,
    ranked: Ranked,
    now: float,
) -> Transition:
    """Call (or, in a last turn, lay down) a winning combination ranked as `ranked`."""
    verify_call(state, seat, cards, discard, ranked, now)
    if ranked is None:
        raise RuleError("invalid_ranking", "A call needs the evaluator's rank of the cards.")
    claim = {
        "cards": list(cards),
        "discard": discard,
        "category": ranked.category,
        "description": ranked.description,
    }

    def change(new: State, events: list[Event]) -> None:
        deal = new["deal"]
        deal["claims"][str(seat)] = copy_state(claim)
        deal["shown"][str(seat)] = list(cards)
        deal["hands"][str(seat)] = list(cards)
        deal["drawn"] = None
        if discard is not None:
            deal["discard_pile"].append(discard)
        first_call = deal["caller"] is None
        events.append(event("called" if first_call else "laid_down", {"seat": seat, **claim}))
        if first_call:
            deal["caller"] = seat
            # The seats after the caller in dealing order, which ends with the dealer.
            deal["last_turns"] = deal["players"][deal["players"].index(seat) + 1 :]
            if deal["last_turns"]:
                table.set_phase(new, LAST_TURNS, now + table.option(new, "turn_seconds"), events)
        _advance(new, now, events)

    return _changed(state, change)


def _give_turn(state: State, seat: int, events: list[Event]) -> None:
    deal = state["deal"]
    deal["turn"] = seat
    deal["drawn"] = None
    events.append(event("turn", {"seat": seat, "deadline": state["deadline"]}))


def _next_seat(state: State) -> int | None:
    """Return the seat to play next, taking it off the last turns; None when none is left."""
    deal = state["deal"]
    if deal["caller"] is not None:
        return int(deal["last_turns"].pop(0)) if deal["last_turns"] else None
    players: list[int] = deal["players"]
    return players[(players.index(deal["turn"]) + 1) % len(players)]


def _gone(record: dict[str, Any]) -> str | None:
    """Why a seat's turns are played for it at once: "leaving", "away", or None."""
    if record["leaving"]:
        return "leaving"
    return "away" if table.is_away(record) else None


def _nobody_to_play(state: State) -> str | None:
    """Before a call, when every seat of the deal is leaving or away: the void's reason
    ("abandoned" when all are leaving, "nobody_present" otherwise); None while someone
    plays."""
    deal = state["deal"]
    if deal["caller"] is not None:
        return None
    reasons = {_gone(state["seats"][str(s)]) for s in deal["players"]}
    if None in reasons:
        return None
    return "abandoned" if reasons == {"leaving"} else "nobody_present"


def _advance(state: State, now: float, events: list[Event]) -> None:
    """Pass the turn on, playing at once the turns of seats that are leaving."""
    while True:
        seat = _next_seat(state)
        if seat is None:
            _enter_showdown(state, events)
            return
        reason = _nobody_to_play(state)
        if reason is not None:
            _void(state, now, reason, events)
            return
        state["deadline"] = now + table.option(state, "turn_seconds")
        _give_turn(state, seat, events)
        gone = _gone(state["seats"][str(seat)])
        if gone is None:
            return
        if not _play_for(state, seat, gone, now, events):
            return


def _take_card(state: State, seat: int, source: str, now: float, events: list[Event]) -> bool:
    """Draw for a seat, reshuffling or voiding the deal on an empty stock; False if void."""
    deal = state["deal"]
    if source == STOCK and not deal["stock"]:
        if deal["caller"] is None and deal["reshuffles"] >= table.option(state, "max_reshuffles"):
            _void(state, now, "stock_exhausted", events)
            return False
        _reshuffle(state, events)
    if source == DISCARD:
        card = deal["discard_pile"].pop()
        events.append(event("drew", {"seat": seat, "source": source, "card": card}))
    else:
        card = deal["stock"].pop(0)
        events.append(event("drew", {"seat": seat, "source": source}))
        events.append(event("drew_card", {"seat": seat, "card": card}, [seat]))
    deal["hands"][str(seat)].append(card)
    deal["drawn"] = {"card": card, "source": source}
    return True


def reshuffle_order(cards: Sequence[str], key: str, number: int) -> list[str]:
    """Return `cards` in the order of the deal's `number`-th reshuffle (n = 1, 2, ...).

    The order is that of ``sha256(key + ":" + str(n) + ":" + card)`` as lowercase hex,
    ascending, where `key` is `fairness.reshuffle_key` of the deal's secret salt, which
    never leaves the server; the ``reshuffled`` event publishes a commitment to it
    (`fairness.reshuffle_commitment`), and the hand history opens to each seat the
    places of the new stock it drew.
    """

    def place(card: str) -> str:
        return hashlib.sha256(f"{key}:{number}:{card}".encode()).hexdigest()

    return sorted(cards, key=place)


def _reshuffle(state: State, events: list[Event]) -> None:
    deal = state["deal"]
    pile: list[str] = deal["discard_pile"]
    deal["reshuffles"] += 1
    number = deal["reshuffles"]
    deal["stock"] = reshuffle_order(pile[:-1], fairness.reshuffle_key(deal["salt"]), number)
    deal["discard_pile"] = pile[-1:]
    deal.setdefault("reshuffle_orders", []).append(list(deal["stock"]))
    committed = fairness.reshuffle_commitment(deal["stock"], deal["salt"], number)
    events.append(
        event(
            "reshuffled",
            {"number": number, "stock": len(deal["stock"]), "commitment": committed},
        )
    )


def _put_down(state: State, seat: int, card: str, events: list[Event]) -> None:
    deal = state["deal"]
    deal["hands"][str(seat)].remove(card)
    deal["discard_pile"].append(card)
    deal["drawn"] = None
    events.append(event("discarded", {"seat": seat, "card": card}))


def _play_for(state: State, seat: int, reason: str, now: float, events: list[Event]) -> bool:
    """Play a seat's turn for it: draw from the stock, discard; False if the deal went void."""
    deal = state["deal"]
    deal["timeouts"].append({"seat": seat, "reason": reason})
    events.append(event("timeout", {"seat": seat, "reason": reason}))
    if deal["drawn"] is None and not _take_card(state, seat, STOCK, now, events):
        return False
    drawn = deal["drawn"]
    card = drawn["card"]
    if drawn["source"] == DISCARD:
        card = next(c for c in deal["hands"][str(seat)] if c != drawn["card"])
    _put_down(state, seat, card, events)
    return True


def _void(state: State, now: float, reason: str, events: list[Event]) -> None:
    deal = state["deal"]
    deal["drawn"] = None
    events.append(event("deal_void", {"reason": reason, "reshuffles": deal["reshuffles"]}))
    events.append(event("pot_carried", {"pot": state["pot"], "reason": "void"}))
    table.end_deal(state, now, "void", events)


def _enter_showdown(state: State, events: list[Event]) -> None:
    deal = state["deal"]
    deal["turn"] = None
    deal["drawn"] = None
    deal["ranking_needed"] = {key: list(cards) for key, cards in deal["shown"].items()}
    deal["showdown_reason"] = "showdown"
    table.set_phase(state, SHOWDOWN, None, events)


def on_deadline(state: State, now: float, deck: Deck | None = None) -> Transition:
    """Apply what the passed deadline decides: play a late turn, or deal the next hand."""
    due = state["deadline"] is not None and now >= state["deadline"]
    if due and state["phase"] in (PLAYING, LAST_TURNS):
        return _changed(state, lambda new, events: _time_out(new, now, events))
    if due and state["phase"] == BETWEEN_DEALS:
        fresh = verify_deck(deck)
        return _changed(state, lambda new, events: _begin_deal(new, now, fresh, events))
    return copy_state(state), []


def _time_out(state: State, now: float, events: list[Event]) -> None:
    seat = state["deal"]["turn"]
    played = _play_for(state, seat, "deadline", now, events)
    table.miss(state, seat, events)
    if played:
        _advance(state, now, events)


# --------------------------------------------------------------------------- settling


verify_settle = table.verify_settle


def settle(state: State, ranks: Mapping[str, Ranked], now: float) -> Transition:
    """Finish a showdown with the evaluator's ranks: the best laid-down hand takes the pot."""
    verify_settle(state, ranks, now)
    return _changed(state, lambda new, events: _award(new, ranks, now, events))


def _award(state: State, ranks: Mapping[str, Ranked], now: float, events: list[Event]) -> None:
    deal = state["deal"]
    hands: dict[str, dict[str, Any]] = {}
    for key, cards in deal["ranking_needed"].items():
        rank = ranks[key]
        record = {"strength": rank.strength, "category": rank.category}
        deal["ranks"][key] = {**record, "description": rank.description}
        hands[key] = {"cards": list(cards), **deal["ranks"][key]}
    events.append(event("showdown", {"reason": deal["showdown_reason"], "hands": hands}))
    strength = {s: deal["ranks"][str(s)]["strength"] for s in deal["players"] if str(s) in hands}
    best = max(strength.values())
    # Dealing order starts at the dealer's left, so the odd chips go the right way.
    winners = [s for s, value in strength.items() if value == best]
    shares = table.split_evenly(state["pot"], len(winners))
    for seat, share in zip(winners, shares, strict=True):
        table.pay_out(state, seat, share, "win")
    if len(winners) == 1:
        data = {"seat": winners[0], "amount": shares[0], "pot": state["pot"]}
        events.append(event("pot_won", data))
    else:
        paid = [{"seat": s, "amount": a} for s, a in zip(winners, shares, strict=True)]
        events.append(event("pot_split", {"shares": paid, "reason": "tie", "pot": state["pot"]}))
    table.end_deal(state, now, "won" if len(winners) == 1 else "split", events)


# --------------------------------------------------------------------------- views


# The deal's fields that everyone may see as they are.
_PUBLIC_DEAL_KEYS = (
    "number",
    "game_number",
    "dealer",
    "commitment",
    "players",
    "names",
    "wild_card",
    "wild_rank",
    "reshuffles",
    "turn",
    "caller",
    "last_turns",
    "claims",
    "shown",
    "timeouts",
    "ranks",
    "pot_at_start",
    "flow",
    "outcome",
    "ended",
)


def _public_deal(state: State) -> dict[str, Any]:
    deal = state["deal"]
    public = {key: copy_state(deal[key]) for key in _PUBLIC_DEAL_KEYS}
    pile = deal["discard_pile"]
    public["discard_top"] = pile[-1] if pile else None
    public["discard_size"] = len(pile)
    public["stock_size"] = len(deal["stock"])
    public["hand_sizes"] = {key: len(cards) for key, cards in deal["hands"].items()}
    public["showdown"] = deal["showdown_reason"]
    drawn = deal["drawn"]
    if drawn is not None:
        # Where the card came from is public; the card itself only if it lay face up.
        seen = drawn["card"] if drawn["source"] == DISCARD else None
        drawn = {"seat": deal["turn"], "source": drawn["source"], "card": seen}
    public["drawn"] = drawn
    return public


def _pending(state: State) -> dict[str, Any] | None:
    phase = state["phase"]
    deal = state["deal"]
    if phase in (PLAYING, LAST_TURNS):
        action = "draw" if deal["drawn"] is None else "discard_or_call"
        return {"action": action, "seats": [deal["turn"]], "deadline": state["deadline"]}
    if phase == SHOWDOWN:
        return {"action": "rank_hands", "seats": [], "deadline": None}
    if phase == BETWEEN_DEALS:
        return {"action": "next_deal", "seats": [], "deadline": state["deadline"]}
    return None


def view(state: State, seat: int | None = None) -> dict[str, Any]:
    """Return the table as `seat` (None for a spectator) may see it."""
    result, seated = table.view(state, seat)
    result["pending"] = _pending(state)
    deal = state["deal"]
    if deal is None:
        if seated:
            result["you"] = {"seat": seat, "cards": None, "drawn": None}
        return result
    result["deal"] = _public_deal(state)
    if seated and seat is not None:
        mine = table.is_current_player(state, seat)
        my_draw = mine and not deal["ended"] and deal["turn"] == seat
        result["you"] = {
            "seat": seat,
            "cards": list(deal["hands"][str(seat)]) if mine else None,
            "drawn": copy_state(deal["drawn"]) if my_draw else None,
        }
    return result


# --------------------------------------------------------------------------- the game


class PaiuteGame(TableGame):
    """Paiute as a `Game`: the functions above, over typed states and records."""

    name = "paiute"
    moves = frozenset({Start.name, Rebuy.name, Draw.name, Discard.name, Call.name, Back.name})

    def verify_own(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make this deal's `move` now (a call unranked:
        all but its rank)."""
        match move:
            case Draw(source=source):
                verify_draw(plain(state), seat, source, now)
            case Discard(card=card):
                verify_discard(plain(state), seat, card, now)
            case Call(cards=cards, discard=spare, ranked=ranked):
                verify_call(plain(state), seat, cards, spare, ranked, now)
            case _:
                raise unsupported(self.name, move)

    def act_own(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """Apply this deal's `move` by `seat` (verified first); a call needs its rank."""
        match move:
            case Draw(source=source):
                return as_moved(draw(plain(state), seat, source, now))
            case Discard(card=card):
                return as_moved(discard(plain(state), seat, card, now))
            case Call(cards=cards, discard=spare, ranked=ranked):
                if ranked is None:
                    raise RuleError(
                        "invalid_ranking", "A call needs the evaluator's rank of the cards."
                    )
                return as_moved(call(plain(state), seat, cards, spare, ranked, now))
            case _:
                raise unsupported(self.name, move)

    def hold_turn(
        self, state: TableState, seat: int, call: Call, now: float, seconds: float
    ) -> Moved:
        """Keep the seat's turn open `seconds` more: its call could not be ranked."""
        return as_moved(hold_turn(plain(state), seat, call.cards, call.discard, now, seconds))

    def hand_rules(self, state: TableState) -> HandRules:
        """Paiute hands, with the deal's wild rank."""
        return HandRules("paiute", wild_rank(plain(state)))


GAME = PaiuteGame(
    Rules(
        validate_options,
        new_table,
        leave,
        on_deadline,
        settle,
        view,
        verify_start,
        start,
        verify_rebuy,
        rebuy,
    )
)
