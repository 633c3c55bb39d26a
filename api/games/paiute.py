"""The Paiute table as a pure state machine: (state, move) -> (new state, events).

Driven like `api.games.guts` (the same state around the deal, the same `verify_x` /
`x` pairs, seat moves from `api.games.table`, timer and showdown hooks), with its own
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
from typing import Final, Literal

from api.games import fairness, table
from api.games import options as checks
from api.games.cards import rank_value
from api.games.common import Deck, Ranked, RuleError, copy_state, verify_deck
from api.games.events import (
    ClaimData,
    DealStartedData,
    DrewData,
    Event,
    PaymentData,
    PotWonData,
    ShowdownData,
    ShownHand,
    TurnHeldData,
)
from api.games.game import (
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
    moved,
    other_game,
    unsupported,
)
from api.games.state import (
    Claim,
    DrawnView,
    PaiuteDeal,
    PaiuteDealView,
    PaiuteOptions,
    PaiuteTable,
    PaiuteYou,
    Pending,
    Seat,
    Source,
    TableState,
    TableView,
)
from api.games.table import BETWEEN_DEALS, SHOWDOWN, Transition

Change = Callable[[PaiuteTable, list[Event]], object]

PLAYING: Final = "playing"
LAST_TURNS: Final = "last_turns"

STOCK: Final = "stock"
DISCARD: Final = "discard"
HAND_SIZE = 5

# min_buy_in and max_buy_in default to 20 and 500 antes; the values here are for ante 1.
PAIUTE_DEFAULTS: PaiuteOptions = {
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


def _changed(state: PaiuteTable, change: Change, in_place: bool = False) -> Transition[PaiuteTable]:
    """Apply `change` to a deep copy of the state (`in_place`: to the state itself),
    collecting the events it appends."""
    new = state if in_place else copy_state(state)
    events: list[Event] = []
    change(new, events)
    return new, events


# --------------------------------------------------------------------------- options


def _limited_int(raw: Mapping[str, object], name: str) -> int:
    low, high = _OWN_LIMITS[name]
    defaults: Mapping[str, object] = PAIUTE_DEFAULTS
    value = raw.get(name, defaults[name])
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


def validate_options(raw: Mapping[str, object]) -> PaiuteOptions:
    """Return the full Paiute options with defaults filled in, or raise invalid_option."""
    raw = checks.verify_known(raw, PAIUTE_DEFAULTS)
    ante = checks.ante(raw, PAIUTE_DEFAULTS)
    rebuy_allowed = checks.true_or_false(raw, PAIUTE_DEFAULTS, "rebuy")
    turn_seconds = checks.turn_seconds(raw, PAIUTE_DEFAULTS)
    pause = checks.deal_pause_seconds(raw, PAIUTE_DEFAULTS)
    min_buy_in, max_buy_in = checks.buy_in_limits(raw, ante)
    reshuffles, low, high = (_limited_int(raw, name) for name in _OWN_LIMITS)
    away_after = checks.away_after(raw, PAIUTE_DEFAULTS)
    if high < low:
        raise RuleError(
            "invalid_option", "Option 'max_players' must be at least 'min_players'.", "max_players"
        )
    return {
        "ante": ante,
        "turn_seconds": turn_seconds,
        "max_reshuffles": reshuffles,
        "deal_pause_seconds": pause,
        "min_players": low,
        "max_players": high,
        "min_buy_in": min_buy_in,
        "max_buy_in": max_buy_in,
        "rebuy": rebuy_allowed,
        "away_after": away_after,
    }


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, object], table_id: str, now: float) -> PaiuteTable:
    """Return the initial state of an empty Paiute table in phase waiting."""
    checked = validate_options(options)
    return {"game": "paiute", "options": checked, **table.new_table(table_id, now), "deal": None}


def chips_on_table(state: PaiuteTable) -> int:
    """Return the sum of all stacks and the pot."""
    return table.chips_on_table(state)


next_deadline = table.next_deadline
finished_deal = table.finished_deal


def wild_rank(state: PaiuteTable) -> int | None:
    """Return the wild rank (2..14) of the current or last deal, or None before any deal."""
    deal = state["deal"]
    return None if deal is None else deal["wild_rank"]


def ranking_request(state: PaiuteTable) -> dict[str, list[str]] | None:
    """Return the laid-down hands to rank, keyed by str(seat), while in showdown."""
    return table.ranking_request(state)


# --------------------------------------------------------------------------- seats


verify_sit = table.verify_sit
sit = table.sit


def _in_current_hand(state: PaiuteTable, seat: int) -> bool:
    deal = state["deal"]
    playing = state["phase"] in (PLAYING, LAST_TURNS, SHOWDOWN)
    return playing and deal is not None and seat in deal["players"]


verify_leave = table.verify_leave


def leave(state: PaiuteTable, seat: int, now: float) -> Transition[PaiuteTable]:
    """Cash a seat out now, or mark it to leave when the deal it plays in ends."""
    verify_leave(state, seat, now)
    if not _in_current_hand(state, seat):
        return table.leave(state, seat, now, in_hand=False)
    return _changed(state, lambda new, events: _mark_leaving(new, seat, now, events))


def _mark_leaving(state: PaiuteTable, seat: int, now: float, events: list[Event]) -> None:
    table.mark_leaving(state, seat, events)
    if state["phase"] == SHOWDOWN:
        return
    if table.deal_of(state)["turn"] == seat:
        # Nobody waits for a player who has gone: the turn is played for them now.
        if _play_for(state, seat, "leaving", now, events):
            _advance(state, now, events)
    else:
        reason = _nobody_to_play(state)
        if reason is not None:
            _void(state, now, reason, events)


def verify_rebuy(state: PaiuteTable, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    table.verify_rebuy(state, seat, amount, in_hand=False)
    if _in_current_hand(state, seat):
        raise table.refuse_rebuy_in_hand(seat)


def rebuy(state: PaiuteTable, seat: int, amount: int, now: float) -> Transition[PaiuteTable]:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    return table.buy_chips(state, seat, amount)


# --------------------------------------------------------------------------- deals


verify_start = table.verify_start


def start(state: PaiuteTable, seat: int, now: float, deck: Deck) -> Transition[PaiuteTable]:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    return _changed(state, lambda new, events: _begin_deal(new, now, deck, events))


def _begin_deal(state: PaiuteTable, now: float, deck: Deck, events: list[Event]) -> None:
    if table.open_deal(state, events) is not None:
        _deal(state, now, deck, events)


def _new_deal(state: PaiuteTable, deck: Deck, dealer: int, order: list[int]) -> PaiuteDeal:
    """The record of a deal dealt from `deck`: hands, the wild card, the piles."""
    cards = list(deck.cards)
    dealt = HAND_SIZE * len(order)
    records = {str(s): state["seats"][str(s)] for s in order}
    return {
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
        "discard_pile": [cards[dealt + 1]],
        "stock": cards[dealt + 2 :],
        "reshuffles": 0,
        "reshuffle_orders": [],
        "turn": None,
        "drawn": None,
        "caller": None,
        "last_turns": [],
        "claims": {},
        "shown": {},
        "timeouts": [],
        "ranking_needed": None,
        "showdown_reason": None,
        "ranks": {},
        "flow": [],
        "pot_at_start": 0,
        "outcome": None,
        "ended": False,
    }


def _deal(state: PaiuteTable, now: float, deck: Deck, events: list[Event]) -> None:
    funded = table.seat_numbers(state, "playing", funded=True, present=True)
    dealer = table.from_left_of(state["dealer"], funded)[0]
    order = table.from_left_of(dealer, funded)
    state["hand_number"] += 1
    state["dealer"] = dealer
    deal = state["deal"] = _new_deal(state, deck, dealer, order)
    started: DealStartedData = {
        "hand_number": deal["number"],
        "game_number": deal["game_number"],
        "dealer": deal["dealer"],
        "commitment": deal["commitment"],
        "players": list(order),
    }
    events.append({"type": "deal_started", "data": started, "visible_to": None})
    for seat in order:
        events.append({"type": "ante", "data": _ante(state, seat), "visible_to": None})
    deal["pot_at_start"] = state["pot"]
    for seat in order:
        hand = list(deal["hands"][str(seat)])
        events.append(
            {"type": "cards_dealt", "data": {"seat": seat, "cards": hand}, "visible_to": [seat]}
        )
    events.append(
        {"type": "dealt", "data": {"players": list(order), "cards": HAND_SIZE}, "visible_to": None}
    )
    events.append(
        {
            "type": "wild_card",
            "data": {"card": deal["wild_card"], "rank": deal["wild_rank"]},
            "visible_to": None,
        }
    )
    events.append(
        {"type": "discard_started", "data": {"card": deal["discard_pile"][-1]}, "visible_to": None}
    )
    table.set_phase(state, PLAYING, now + state["options"]["turn_seconds"], events)
    _give_turn(state, order[0], events)


def _ante(state: PaiuteTable, seat: int) -> PaymentData:
    record = state["seats"][str(seat)]
    owed = state["options"]["ante"]
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


def _verify_turn(state: PaiuteTable, seat: int, now: float) -> PaiuteDeal:
    """Check what every turn move needs, and return the deal."""
    table.verify_seated(state, seat)
    phase = state["phase"]
    if phase == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if phase not in (PLAYING, LAST_TURNS):
        raise RuleError("no_hand_in_progress", "No deal is being played right now.")
    deal = table.deal_of(state)
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
    deadline = state["deadline"]
    if deadline is not None and now >= deadline:
        raise RuleError("too_late", "The deadline of this turn has passed; the timer plays it.")
    return deal


def verify_draw(state: PaiuteTable, seat: int, source: str, now: float) -> None:
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


def draw(state: PaiuteTable, seat: int, source: str, now: float) -> Transition[PaiuteTable]:
    """Take the top card of the stock or of the discard pile into the seat's hand."""
    verify_draw(state, seat, source, now)
    pile: Source = STOCK if source == STOCK else DISCARD
    return _changed(state, lambda new, events: _take_card(new, seat, pile, now, events))


# The six-card combinations' group sizes (docs/rules.md, "Winning combinations" 4 to 6).
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


def _verify_discard_rule(deal: PaiuteDeal, card: str) -> None:
    drawn = deal["drawn"]
    if drawn is not None and drawn["source"] == DISCARD and drawn["card"] == card:
        raise RuleError(
            "cannot_discard_drawn",
            "{card} was just taken from the discard pile and cannot go back this turn.",
            "discard",
            card=card,
        )


def verify_discard(state: PaiuteTable, seat: int, card: str, now: float) -> None:
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


def discard(state: PaiuteTable, seat: int, card: str, now: float) -> Transition[PaiuteTable]:
    """Put a card from the seat's hand on the discard pile, ending its turn."""
    verify_discard(state, seat, card, now)

    def change(new: PaiuteTable, events: list[Event]) -> None:
        _put_down(new, seat, card, events)
        _advance(new, now, events)

    return _changed(state, change)


def _verify_shape(cards: Sequence[str], discard: str | None) -> None:
    """Raise RuleError unless `cards` and `discard` have a combination's shape: five shown
    and the sixth discarded, or all six shown."""
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


def _verify_ranked(seat: int, ranked: Ranked) -> None:
    """Raise RuleError unless the evaluator's rank of a call makes a winning combination."""
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


def verify_call(
    state: PaiuteTable,
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
    _verify_shape(cards, discard)
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
    if ranked is not None:
        _verify_ranked(seat, ranked)


def hold_turn(
    state: PaiuteTable,
    seat: int,
    cards: Sequence[str],
    discard: str | None,
    now: float,
    seconds: float,
) -> Transition[PaiuteTable]:
    """Hold the seat's turn open for `seconds` more: its call could not be ranked.

    The adapter calls this when the evaluator does not answer a call that the rules
    accept as far as they can tell without its rank (`verify_call` with no ranking), so
    that the service's outage does not cost the seat its turn: the turn's deadline moves
    to at least `now + seconds` (a ``turn_held`` event), and the seat may call again.
    Nothing changes when the deadline is already that late.
    """
    verify_call(state, seat, cards, discard, None, now)
    held = now + seconds
    deadline = state["deadline"]
    if deadline is not None and held <= deadline:
        return state, []
    state = copy_state(state)
    state["deadline"] = held
    data: TurnHeldData = {"seat": seat, "deadline": held, "reason": "evaluator_unavailable"}
    return state, [{"type": "turn_held", "data": data, "visible_to": None}]


def call(
    state: PaiuteTable,
    seat: int,
    cards: Sequence[str],
    discard: str | None,
    ranked: Ranked,
    now: float,
) -> Transition[PaiuteTable]:
    """Call (or, in a last turn, lay down) a winning combination ranked as `ranked`."""
    verify_call(state, seat, cards, discard, ranked, now)
    if ranked is None:
        raise RuleError("invalid_ranking", "A call needs the evaluator's rank of the cards.")
    claim: Claim = {
        "cards": list(cards),
        "discard": discard,
        "category": ranked.category,
        "description": ranked.description,
    }

    def change(new: PaiuteTable, events: list[Event]) -> None:
        deal = table.deal_of(new)
        deal["claims"][str(seat)] = copy_state(claim)
        deal["shown"][str(seat)] = list(cards)
        deal["hands"][str(seat)] = list(cards)
        deal["drawn"] = None
        if discard is not None:
            deal["discard_pile"].append(discard)
        first_call = deal["caller"] is None
        told: ClaimData = {"seat": seat, **claim}
        kind: Literal["called", "laid_down"] = "called" if first_call else "laid_down"
        events.append({"type": kind, "data": told, "visible_to": None})
        if first_call:
            deal["caller"] = seat
            # The seats after the caller in dealing order, which ends with the dealer.
            deal["last_turns"] = deal["players"][deal["players"].index(seat) + 1 :]
            if deal["last_turns"]:
                table.set_phase(new, LAST_TURNS, now + new["options"]["turn_seconds"], events)
        _advance(new, now, events)

    return _changed(state, change)


def _give_turn(state: PaiuteTable, seat: int, events: list[Event]) -> None:
    deal = table.deal_of(state)
    deal["turn"] = seat
    deal["drawn"] = None
    events.append(
        {"type": "turn", "data": {"seat": seat, "deadline": state["deadline"]}, "visible_to": None}
    )


def _next_seat(state: PaiuteTable) -> int | None:
    """Return the seat to play next, taking it off the last turns; None when none is left."""
    deal = table.deal_of(state)
    if deal["caller"] is not None:
        return int(deal["last_turns"].pop(0)) if deal["last_turns"] else None
    players = deal["players"]
    turn = deal["turn"]
    return players[(players.index(turn) + 1) % len(players)] if turn is not None else players[0]


def _gone(record: Seat) -> str | None:
    """Why a seat's turns are played for it at once: "leaving", "away", or None."""
    if record["leaving"]:
        return "leaving"
    return "away" if table.is_away(record) else None


def _nobody_to_play(state: PaiuteTable) -> str | None:
    """Before a call, when every seat of the deal is leaving or away: the void's reason
    ("abandoned" when all are leaving, "nobody_present" otherwise); None while someone
    plays."""
    deal = table.deal_of(state)
    if deal["caller"] is not None:
        return None
    reasons = {_gone(state["seats"][str(s)]) for s in deal["players"]}
    if None in reasons:
        return None
    return "abandoned" if reasons == {"leaving"} else "nobody_present"


def _advance(state: PaiuteTable, now: float, events: list[Event]) -> None:
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
        state["deadline"] = now + state["options"]["turn_seconds"]
        _give_turn(state, seat, events)
        gone = _gone(state["seats"][str(seat)])
        if gone is None:
            return
        if not _play_for(state, seat, gone, now, events):
            return


def _take_card(
    state: PaiuteTable, seat: int, source: Source, now: float, events: list[Event]
) -> bool:
    """Draw for a seat, reshuffling or voiding the deal on an empty stock; False if void."""
    deal = table.deal_of(state)
    if source == STOCK and not deal["stock"]:
        if deal["caller"] is None and deal["reshuffles"] >= state["options"]["max_reshuffles"]:
            _void(state, now, "stock_exhausted", events)
            return False
        _reshuffle(state, events)
    if source == DISCARD:
        card = deal["discard_pile"].pop()
        seen: DrewData = {"seat": seat, "source": source, "card": card}
        events.append({"type": "drew", "data": seen, "visible_to": None})
    else:
        card = deal["stock"].pop(0)
        events.append(
            {"type": "drew", "data": {"seat": seat, "source": source}, "visible_to": None}
        )
        events.append(
            {"type": "drew_card", "data": {"seat": seat, "card": card}, "visible_to": [seat]}
        )
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


def _reshuffle(state: PaiuteTable, events: list[Event]) -> None:
    deal = table.deal_of(state)
    pile = deal["discard_pile"]
    deal["reshuffles"] += 1
    number = deal["reshuffles"]
    deal["stock"] = reshuffle_order(pile[:-1], fairness.reshuffle_key(deal["salt"]), number)
    deal["discard_pile"] = pile[-1:]
    deal.setdefault("reshuffle_orders", []).append(list(deal["stock"]))
    committed = fairness.reshuffle_commitment(deal["stock"], deal["salt"], number)
    events.append(
        {
            "type": "reshuffled",
            "data": {"number": number, "stock": len(deal["stock"]), "commitment": committed},
            "visible_to": None,
        }
    )


def _put_down(state: PaiuteTable, seat: int, card: str, events: list[Event]) -> None:
    deal = table.deal_of(state)
    deal["hands"][str(seat)].remove(card)
    deal["discard_pile"].append(card)
    deal["drawn"] = None
    events.append({"type": "discarded", "data": {"seat": seat, "card": card}, "visible_to": None})


def _play_for(state: PaiuteTable, seat: int, reason: str, now: float, events: list[Event]) -> bool:
    """Play a seat's turn for it: draw from the stock, discard; False if the deal went void."""
    deal = table.deal_of(state)
    deal["timeouts"].append({"seat": seat, "reason": reason})
    events.append({"type": "timeout", "data": {"seat": seat, "reason": reason}, "visible_to": None})
    if deal["drawn"] is None and not _take_card(state, seat, STOCK, now, events):
        return False
    drawn = deal["drawn"]
    assert drawn is not None  # drawn just now, or before the turn was played for it
    card = drawn["card"]
    if drawn["source"] == DISCARD:
        card = next(c for c in deal["hands"][str(seat)] if c != drawn["card"])
    _put_down(state, seat, card, events)
    return True


def _void(state: PaiuteTable, now: float, reason: str, events: list[Event]) -> None:
    deal = table.deal_of(state)
    deal["drawn"] = None
    events.append(
        {
            "type": "deal_void",
            "data": {"reason": reason, "reshuffles": deal["reshuffles"]},
            "visible_to": None,
        }
    )
    events.append(
        {"type": "pot_carried", "data": {"pot": state["pot"], "reason": "void"}, "visible_to": None}
    )
    table.end_deal(state, now, "void", events)


def _enter_showdown(state: PaiuteTable, events: list[Event]) -> None:
    deal = table.deal_of(state)
    deal["turn"] = None
    deal["drawn"] = None
    deal["ranking_needed"] = {key: list(cards) for key, cards in deal["shown"].items()}
    deal["showdown_reason"] = "showdown"
    table.set_phase(state, SHOWDOWN, None, events)


def on_deadline(
    state: PaiuteTable, now: float, deck: Deck | None = None, in_place: bool = False
) -> Transition[PaiuteTable]:
    """Apply what the passed deadline decides: play a late turn, or deal the next hand.

    `in_place`: change `state` itself (the caller's own, as a transition just returned
    it) rather than a copy."""
    due = state["deadline"] is not None and now >= state["deadline"]
    if due and state["phase"] in (PLAYING, LAST_TURNS):
        return _changed(state, lambda new, events: _time_out(new, now, events), in_place)
    if due and state["phase"] == BETWEEN_DEALS:
        fresh = verify_deck(deck)
        return _changed(state, lambda new, events: _begin_deal(new, now, fresh, events), in_place)
    return (state if in_place else copy_state(state)), []


def _time_out(state: PaiuteTable, now: float, events: list[Event]) -> None:
    seat = table.deal_of(state)["turn"]
    if seat is None:
        return
    played = _play_for(state, seat, "deadline", now, events)
    table.miss(state, seat, events)
    if played:
        _advance(state, now, events)


# --------------------------------------------------------------------------- settling


verify_settle = table.verify_settle


def settle(
    state: PaiuteTable, ranks: Mapping[str, Ranked], now: float, in_place: bool = False
) -> Transition[PaiuteTable]:
    """Finish a showdown with the evaluator's ranks: the best laid-down hand takes the pot
    (`in_place`: in `state` itself, as `on_deadline`)."""
    verify_settle(state, ranks, now)
    return _changed(state, lambda new, events: _award(new, ranks, now, events), in_place)


def _award(
    state: PaiuteTable, ranks: Mapping[str, Ranked], now: float, events: list[Event]
) -> None:
    deal = table.deal_of(state)
    hands: dict[str, ShownHand] = {}
    for key, cards in (deal["ranking_needed"] or {}).items():
        rank = ranks[key]
        deal["ranks"][key] = {
            "strength": rank.strength,
            "category": rank.category,
            "description": rank.description,
        }
        hands[key] = {"cards": list(cards), **deal["ranks"][key]}
    shown: ShowdownData = {"reason": deal["showdown_reason"] or "showdown", "hands": hands}
    events.append({"type": "showdown", "data": shown, "visible_to": None})
    strength = {s: deal["ranks"][str(s)]["strength"] for s in deal["players"] if str(s) in hands}
    best = max(strength.values())
    # Dealing order starts at the dealer's left, so the odd chips go the right way.
    winners = [s for s, value in strength.items() if value == best]
    shares = table.split_evenly(state["pot"], len(winners))
    for seat, share in zip(winners, shares, strict=True):
        table.pay_out(state, seat, share, "win")
    if len(winners) == 1:
        won: PotWonData = {"seat": winners[0], "amount": shares[0], "pot": state["pot"]}
        events.append({"type": "pot_won", "data": won, "visible_to": None})
    else:
        table.tell_split(state, winners, shares, "tie", events)
    table.end_deal(state, now, "won" if len(winners) == 1 else "split", events)


# --------------------------------------------------------------------------- views


def _public_deal(deal: PaiuteDeal) -> PaiuteDealView:
    pile = deal["discard_pile"]
    drawn = deal["drawn"]
    seen: DrawnView | None = None
    if drawn is not None:
        # Where the card came from is public; the card itself only if it lay face up.
        card = drawn["card"] if drawn["source"] == DISCARD else None
        seen = {"seat": deal["turn"], "source": drawn["source"], "card": card}
    return {
        **table.deal_view(deal),
        "wild_card": deal["wild_card"],
        "wild_rank": deal["wild_rank"],
        "reshuffles": deal["reshuffles"],
        "turn": deal["turn"],
        "caller": deal["caller"],
        "last_turns": list(deal["last_turns"]),
        "claims": copy_state(deal["claims"]),
        "shown": copy_state(deal["shown"]),
        "timeouts": copy_state(deal["timeouts"]),
        "ranks": copy_state(deal["ranks"]),
        "discard_top": pile[-1] if pile else None,
        "discard_size": len(pile),
        "stock_size": len(deal["stock"]),
        "hand_sizes": {key: len(cards) for key, cards in deal["hands"].items()},
        "showdown": deal["showdown_reason"],
        "drawn": seen,
    }


def _pending(state: PaiuteTable) -> Pending | None:
    if state["phase"] in (PLAYING, LAST_TURNS):
        deal = table.deal_of(state)
        action = "draw" if deal["drawn"] is None else "discard_or_call"
        seats = [] if deal["turn"] is None else [deal["turn"]]
        return {"action": action, "seats": seats, "deadline": state["deadline"]}
    return table.pending_between(state)


def view(state: PaiuteTable, seat: int | None = None) -> TableView:
    """Return the table as `seat` (None for a spectator) may see it."""
    result, seated = table.view(state, seat)
    result["pending"] = _pending(state)
    deal = state["deal"]
    if seat is None or not seated:
        if deal is not None:
            result["deal"] = _public_deal(deal)
        return result
    you: PaiuteYou = {"seat": seat, "cards": None, "drawn": None}
    if deal is not None:
        result["deal"] = _public_deal(deal)
        if table.is_current_player(state, seat):
            you["cards"] = list(deal["hands"][str(seat)])
            if not deal["ended"] and deal["turn"] == seat:
                you["drawn"] = copy_state(deal["drawn"])
    result["you"] = you
    return result


# --------------------------------------------------------------------------- the game


class PaiuteGame(TableGame[PaiuteTable]):
    """Paiute as a `Game`: the functions above, over Paiute tables."""

    name = "paiute"
    moves = frozenset({Start.name, Rebuy.name, Draw.name, Discard.name, Call.name, Back.name})

    def own(self, state: TableState) -> PaiuteTable:
        """The state as a Paiute table (TypeError for another game's)."""
        if state["game"] != "paiute":
            raise other_game(self.name, state)
        return state

    def verify_own(self, state: PaiuteTable, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make this deal's `move` now (a call unranked:
        all but its rank)."""
        match move:
            case Draw(source=source):
                verify_draw(state, seat, source, now)
            case Discard(card=card):
                verify_discard(state, seat, card, now)
            case Call(cards=cards, discard=spare, ranked=ranked):
                verify_call(state, seat, cards, spare, ranked, now)
            case _:
                raise unsupported(self.name, self.moves, move)

    def act_own(
        self, state: PaiuteTable, seat: int, move: Move, now: float
    ) -> Transition[PaiuteTable]:
        """Apply this deal's `move` by `seat` (verified first); a call needs its rank."""
        match move:
            case Draw(source=source):
                return draw(state, seat, source, now)
            case Discard(card=card):
                return discard(state, seat, card, now)
            case Call(cards=cards, discard=spare, ranked=ranked):
                if ranked is None:
                    raise RuleError(
                        "invalid_ranking", "A call needs the evaluator's rank of the cards."
                    )
                return call(state, seat, cards, spare, ranked, now)
            case _:
                raise unsupported(self.name, self.moves, move)

    def hold_turn(
        self, state: TableState, seat: int, call: Call, now: float, seconds: float
    ) -> Moved:
        """Keep the seat's turn open `seconds` more: its call could not be ranked."""
        mine = self.own(state)
        return moved(hold_turn(mine, seat, call.cards, call.discard, now, seconds))

    def hand_rules(self, state: TableState) -> HandRules:
        """Paiute hands, with the deal's wild rank."""
        return HandRules("paiute", wild_rank(self.own(state)))


GAME = PaiuteGame(
    Rules(
        validate_options,
        new_table,
        leave,
        verify_start,
        start,
        verify_rebuy,
        rebuy,
        on_deadline,
        settle,
        view,
    )
)
