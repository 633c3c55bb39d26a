"""The Paiute table as a pure state machine: (state, move) -> (new state, events).

It mirrors `gateway.games.guts` so that one adapter drives both games: the same state shape
(plus Paiute's own deal record), the same seat moves and codes, the same `verify_x` /
`x` pairs, and the same timer and showdown hooks. The seat bookkeeping (sit, leave,
rebuy, cash-out, starting and ending games, the pot's flow) is Guts' own, imported from
`gateway.games.guts`, so that both tables treat their players alike.

Phases and transitions
----------------------
- ``waiting``: no game in progress, pot empty; ``start`` opens a game and its first deal.
- ``playing``: the turns of a deal, clockwise from the dealer's left. The seat whose
  ``turn`` it is draws (``draw``), then discards (``discard``) or calls (``call``), all
  before ``deadline``. A call by the dealer -> ``showdown``; a call by anyone else ->
  ``last_turns``. The stock running out once too often -> the deal is void
  (``between_deals``).
- ``last_turns``: each seat after the caller up to and including the dealer, in turn,
  draws and then lays down a winning combination (``call``) or discards -> ``showdown``.
- ``showdown``: the deal waits for the adapter to rank the laid-down hands that
  `ranking_request` names (the evaluator's Showdown with `wild_rank`) and to call
  `settle` -> ``between_deals``. ``sit`` and ``leave`` still work; other moves fail with
  ``showdown_pending``.
- ``between_deals``: the pause of ``deal_pause_seconds``; `on_deadline` with a fresh deck
  deals again -> ``playing``, or -> ``waiting`` when too few seats hold chips.

A deal
------
Every ``playing`` seat with chips antes ``ante`` (or what it has) into the pot and is
dealt in. Five cards each, one at a time from the top of the deck, from the dealer's
left to the dealer. The next card is the wild card: its rank (``wild_rank``, 2..14, ace
14) is wild for the deal and the card stays out of play. The next card starts the
discard pile (a list, top last); the rest of the deck, in order, is the stock (a list,
drawn from the front). A card drawn joins the end of the hand.

Calling: the seat must hold six cards (it has drawn) and name them all: ``cards`` the
five or six it shows, ``discard`` the sixth card (five shown) or None (six shown). Six
are shown whole only when they can form a six-card combination
(`forms_six_card_combination`): a five-card combination discards its sixth card, under
the discard rule, so a card just taken from the pile cannot be kept by showing it. The
adapter ranks exactly ``cards`` with the deal's wild rank and passes the evaluator's
`Ranked`; strength 0 means no winning combination. The shown cards stay face up as the
seat's hand. The showdown ranks every laid-down hand again, all in one Showdown call, and
the best strength wins; equal best split the pot, odd chips to the first winners from
the dealer's left.

Reshuffling: when a seat must draw from an empty stock, the discard pile but its top card
becomes the new stock, in the order of ``sha256(key + ":" + str(n) + ":" + card)`` as
lowercase hex, ascending, for the deal's n-th reshuffle (n = 1, 2, ...), where ``key`` is
`fairness.reshuffle_key` of the deal's secret salt, which never leaves the server. The
``reshuffled`` event publishes a commitment to that order
(`fairness.reshuffle_commitment`), and the hand history opens to each seat the places of
the new stock it drew, so a seat can check its draws without anyone learning who drew
which of the (face-up) discards. When the stock runs out
after ``max_reshuffles`` reshuffles and nobody has called, the deal is void: nobody
wins, the pot carries.

Options (`validate_options`): ``ante`` (1), ``turn_seconds`` (30, 1..3600),
``max_reshuffles`` (2, 0..10), ``deal_pause_seconds`` (3, 0..60), ``min_players`` (2) and
``max_players`` (5), both 2..5, ``min_buy_in`` / ``max_buy_in`` (20 and 500 antes) and
``rebuy`` (true). The options Paiute shares with Guts are checked by Guts' own rules.

State keys: those of Guts (``game`` is ``"paiute"``; ``reserve`` is always 0, Paiute
having no cap) with this ``deal``: number, game_number, dealer, commitment, deck, salt,
players (dealing order), player_ids, names, hands (str(seat) -> cards), wild_card,
wild_rank, discard_pile, stock, reshuffles, turn, drawn (None or {card, source}),
caller, last_turns (the seats still to play a last turn after the current one), claims
(str(seat) -> {cards, discard, category, description} of each call and lay-down), shown,
timeouts ([{seat, reason}]), ranking_needed, showdown_reason, ranks, flow, pot_at_start,
outcome, ended. Only `view` may be shown to users.

Error codes (besides those of `gateway.games.common` that the seat moves share with Guts)
---------------------------------------------------------------------------------------
- ``no_hand_in_progress``: no deal is being played (waiting or between deals).
- ``showdown_pending``: the deal waits for its showdown to be settled.
- ``not_your_turn``: the seat is not dealt into this deal, or another seat is to play.
- ``too_late``: the turn's deadline has passed; the timer plays the turn instead.
- ``invalid_choice``: ``source`` is neither ``"stock"`` nor ``"discard"``.
- ``already_drawn``: the seat has drawn this turn already.
- ``empty_discard_pile``: a draw from the discard pile while it is empty.
- ``must_draw_first``: a discard or call before drawing.
- ``card_not_held``: the card to discard is not in the seat's hand.
- ``cannot_discard_drawn``: discarding (also as a call's sixth card) the card just taken
  from the discard pile.
- ``invalid_combination``: ``cards`` is not a list of 5 or 6 distinct card texts, five
  shown cards come without a discard, six with one, or the discard is among them.
- ``cards_not_held``: the shown cards and the discard are not exactly the six cards held.
- ``invalid_ranking``: ``call`` got something other than a `Ranked` with a whole-number
  strength, or ``settle`` a ranking that misses a laid-down hand.
- ``no_combination``: the ranked strength is 0: no winning combination, no call.
- ``not_in_showdown``: ``settle`` while no showdown is pending.
- ``invalid_deck``: a deal had to start without a valid deck.

Events (``data`` fields; all public unless marked private)
------------------------------------------------------------
- Seats, as in Guts: ``seated``, ``rebought``, ``leaving``, ``cashed_out``, ``left``,
  ``game_started`` {game_number, players}, ``game_ended`` {game_number, reason}.
- ``deal_started`` {hand_number, game_number, dealer, commitment, players}.
- ``ante`` {seat, owed, amount, to_pot, to_reserve, stack} (to_reserve always 0).
- ``cards_dealt`` {seat, cards} private to that seat; ``dealt`` {players, cards: 5}.
- ``wild_card`` {card, rank}; ``discard_started`` {card}.
- ``phase`` {phase, deadline}; ``turn`` {seat, deadline}; ``turn_held`` {seat, deadline,
  reason: "evaluator_unavailable"} (`hold_turn`: a call could not be ranked).
- ``drew`` {seat, source} with ``card`` when the source is the discard pile;
  ``drew_card`` {seat, card} private to the drawer, for a draw from the stock.
- ``discarded`` {seat, card}.
- ``called`` {seat, cards, discard, category, description}; ``laid_down`` (a last turn's
  combination) with the same fields.
- ``reshuffled`` {number, stock, commitment} -- stock is the new stock's size, never its
  order; commitment binds that order (`fairness.reshuffle_commitment`).
- ``timeout`` {seat, reason} with reason ``deadline`` or ``leaving``; the turn's ``drew``,
  ``drew_card`` and ``discarded`` events follow.
- ``showdown`` {reason: "showdown", hands: {seat: {cards, strength, category, description}}}.
- ``pot_won`` {seat, amount, pot}; ``pot_split`` {shares: [{seat, amount}], reason, pot}
  with reason ``tie`` (or ``abandoned``, as in Guts).
- ``deal_void`` {reason, reshuffles} with reason ``stock_exhausted`` or ``abandoned``;
  ``pot_carried`` {pot, reason: "void"}.
- ``deal_ended`` {hand_number, outcome, pot, reserve} with outcome ``won``, ``split`` or
  ``void``.
Every chip movement is in ``seated``, ``rebought``, ``cashed_out``, ``ante``,
``pot_won`` or ``pot_split``. The stock's order never appears in events or views, nor
does a card drawn from the stock except to its drawer; the deck and salt reach the hand
history through `finished_deal` once the deal is over, where the fairness proof opens to
each reader only the cards it saw (`gateway.games.fairness`).

Decisions where RULES.md is silent
----------------------------------
- Games, seats, dealers and leaving work as in Guts: a game ends when a win empties the
  pot, so a new player joins at the next deal unless a void deal left a pot to play for;
  the dealer moves one seat left each deal; a seat at zero chips is not dealt in.
- A seat that asks to leave during a deal stays in it (its laid-down hand still counts)
  but nobody waits for it: each of its turns is played at once as on a timeout. If every
  seat still in a deal without a call is leaving, the deal is void at once (reason
  ``abandoned``), and Guts' rule for an abandoned game shares the pot out.
- Rebuying is refused (``game_in_progress``) for a seat dealt into the deal being played,
  as in Guts.
- A deal's turns have one deadline each, ``turn_seconds`` after the turn began, for the
  draw and the discard or call together. On a timeout the seat draws from the stock
  unless it has drawn, then discards the card drawn; when that card came from the
  discard pile (which cannot be discarded) it discards the first other card of its hand
  (the hand keeps the dealt order, drawn cards at the end). A timed-out last turn lays
  nothing down.
- The stock is reshuffled only when a seat must draw from it while it is empty, so a seat
  may still take the discard pile's top card from an empty stock. After a call the stock
  is reshuffled as often as the last turns need: a deal with a call is never void.
- A draw from the discard pile while it is empty (it is, after the first seat takes the
  starting card and calls with six) is refused; the seat must draw from the stock.
- Only the top card and the size of the discard pile are in the view; every discard was
  public when it was made, and a call's discard stays in its claim even once a reshuffle
  has put the card back in the stock (which tells nobody where it lies).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from gateway.games import fairness, guts, table
from gateway.games.common import (
    RANKS,
    Deck,
    Event,
    Ranked,
    RuleError,
    Transition,
    copy_state,
    event,
    verify_deck,
)
from gateway.games.table import BETWEEN_DEALS, State

Change = Callable[[State, list[Event]], object]

WAITING = "waiting"
PLAYING = "playing"
LAST_TURNS = "last_turns"
SHOWDOWN = "showdown"

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
}

_SHARED_WITH_GUTS = (
    "ante",
    "turn_seconds",
    "deal_pause_seconds",
    "min_buy_in",
    "max_buy_in",
    "rebuy",
)
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
        "invalid_option", f"Option {name!r} must be a whole number from {low} to {high}.", name
    )


def validate_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the full Paiute options with defaults filled in, or raise invalid_option."""
    if not isinstance(raw, Mapping):
        raise RuleError("invalid_option", "Table options must be an object.")
    unknown = [str(name) for name in raw if name not in PAIUTE_DEFAULTS]
    if unknown:
        known = ", ".join(PAIUTE_DEFAULTS)
        detail = f"Unknown table option {unknown[0]!r}; the options are {known}."
        raise RuleError("invalid_option", detail, unknown[0])
    checked = guts.validate_options({name: raw[name] for name in _SHARED_WITH_GUTS if name in raw})
    own = {name: _limited_int(raw, name) for name in _OWN_LIMITS}
    if own["max_players"] < own["min_players"]:
        raise RuleError(
            "invalid_option", "Option 'max_players' must be at least 'min_players'.", "max_players"
        )
    return {name: own[name] if name in own else checked[name] for name in PAIUTE_DEFAULTS}


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, Any], table_id: str, now: float) -> State:
    """Return the initial state of an empty Paiute table in phase waiting."""
    checked = validate_options(options)
    # Guts' table with Paiute's options; Guts' ante bookkeeping has no use here.
    state = guts.new_table({}, table_id, now)
    del state["next_ante"]
    state["game"] = "paiute"
    state["options"] = checked
    return state


def chips_on_table(state: State) -> int:
    """Return the sum of all stacks and the pot."""
    return guts.chips_on_table(state)


def next_deadline(state: State) -> float | None:
    """Return the time at which `on_deadline` has work to do, or None."""
    return guts.next_deadline(state)


def wild_rank(state: State) -> int | None:
    """Return the wild rank (2..14) of the current or last deal, or None before any deal."""
    deal = state["deal"]
    if deal is None:
        return None
    rank: int = deal["wild_rank"]
    return rank


def ranking_request(state: State) -> dict[str, list[str]] | None:
    """Return the laid-down hands to rank, keyed by str(seat), while in showdown."""
    return guts.ranking_request(state)


def finished_deal(state: State) -> dict[str, Any] | None:
    """Return the record of the last deal, deck and salt included, once it has ended."""
    return guts.finished_deal(state)


# --------------------------------------------------------------------------- seats


def verify_sit(state: State, name: str, buy_in: int, now: float) -> None:
    """Raise RuleError unless a new player may sit down with this name and buy-in."""
    guts.verify_sit(state, name, buy_in, now)


def sit(state: State, name: str, buy_in: int, now: float) -> Transition:
    """Seat a new player in the lowest free seat; they join at the start of the next game."""
    return guts.sit(state, name, buy_in, now)


def _in_current_hand(state: State, seat: int) -> bool:
    deal = state["deal"]
    return state["phase"] in (PLAYING, LAST_TURNS, SHOWDOWN) and seat in deal["players"]


def verify_leave(state: State, seat: int, now: float) -> None:
    """Raise RuleError unless this seat may ask to leave."""
    guts.verify_leave(state, seat, now)


def leave(state: State, seat: int, now: float) -> Transition:
    """Cash a seat out now, or mark it to leave when the deal it plays in ends."""
    verify_leave(state, seat, now)
    if not _in_current_hand(state, seat):
        return guts.leave(state, seat, now)
    return _changed(state, lambda new, events: _mark_leaving(new, seat, now, events))


def _mark_leaving(state: State, seat: int, now: float, events: list[Event]) -> None:
    record = state["seats"][str(seat)]
    record["leaving"] = True
    events.append(event("leaving", {"seat": seat, "name": record["name"]}))
    if state["phase"] == SHOWDOWN:
        return
    if state["deal"]["turn"] == seat:
        # Nobody waits for a player who has gone: the turn is played for them now.
        if _play_for(state, seat, "leaving", now, events):
            _advance(state, now, events)
    elif _everyone_leaving(state):
        _void(state, now, "abandoned", events)


def verify_rebuy(state: State, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    guts.verify_rebuy(state, seat, amount, now)
    if _in_current_hand(state, seat):
        raise RuleError(
            "game_in_progress",
            f"Seat {seat} is in the current deal; rebuy once it has been settled.",
            "seat",
        )


def rebuy(state: State, seat: int, amount: int, now: float) -> Transition:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    return guts.rebuy(state, seat, amount, now)


# --------------------------------------------------------------------------- deals


def verify_start(state: State, seat: int, now: float, deck: Deck) -> None:
    """Raise RuleError unless this seat may start the waiting table."""
    guts.verify_start(state, seat, now, deck)


def start(state: State, seat: int, now: float, deck: Deck) -> Transition:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    return _changed(state, lambda new, events: _begin_deal(new, now, deck, events))


def _begin_deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    minimum = table.option(state, "min_players")
    running = state["game_in_progress"]
    if running and len(table.seat_numbers(state, "playing", funded=True)) < minimum:
        table.abandon_short_game(state, events)
    if not state["game_in_progress"]:
        funded = table.seat_numbers(state, funded=True)
        if len(funded) < minimum:
            for record in state["seats"].values():
                record["status"] = WAITING
            table.set_phase(state, WAITING, None, events)
            return
        state["game_number"] += 1
        state["game_in_progress"] = True
        for seat in funded:
            state["seats"][str(seat)]["status"] = "playing"
        data = {"game_number": state["game_number"], "players": funded}
        events.append(event("game_started", data))
    _deal(state, now, deck, events)


def _deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    funded = table.seat_numbers(state, "playing", funded=True)
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
        "players": order,
        "player_ids": {key: record["player_id"] for key, record in records.items()},
        "names": {key: record["name"] for key, record in records.items()},
        "commitment": fairness.commitment(deck.cards, deck.salt),
        "deck": cards,
        "salt": deck.salt,
        # Card i of the deck goes to the i-th seat of the dealing order, round after round.
        "hands": {str(s): cards[i : dealt : len(order)] for i, s in enumerate(order)},
        "wild_card": cards[dealt],
        "wild_rank": RANKS.index(cards[dealt][0]) + 2,
        "discard_pile": [cards[dealt + 1]],
        "stock": cards[dealt + 2 :],
        "reshuffles": 0,
        "reshuffle_orders": [],  # each reshuffle's new stock, top first: for the history only
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
        raise RuleError("not_your_turn", f"Seat {seat} is not dealt into this deal.", "seat")
    if deal["turn"] != seat:
        raise RuleError("not_your_turn", f"It is seat {deal['turn']}'s turn, not seat {seat}'s.")
    if now >= state["deadline"]:
        raise RuleError("too_late", "The deadline of this turn has passed; the timer plays it.")
    return deal


def verify_draw(state: State, seat: int, source: str, now: float) -> None:
    """Raise RuleError unless this seat may draw from `source` now."""
    deal = _verify_turn(state, seat, now)
    if deal["drawn"] is not None:
        raise RuleError("already_drawn", f"Seat {seat} has already drawn this turn.", "seat")
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
        if RANKS.index(card[0]) + 2 != wild_rank:
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
            f"{card} was just taken from the discard pile and cannot go back this turn.",
            "discard",
        )


def verify_discard(state: State, seat: int, card: str, now: float) -> None:
    """Raise RuleError unless this seat may discard `card` now."""
    deal = _verify_turn(state, seat, now)
    if deal["drawn"] is None:
        raise RuleError("must_draw_first", f"Seat {seat} must draw before discarding.", "seat")
    if not isinstance(card, str) or card not in deal["hands"][str(seat)]:
        raise RuleError("card_not_held", f"Seat {seat} does not hold {card!r}.", "card")
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
        raise RuleError("must_draw_first", f"Seat {seat} must draw before calling.", "seat")
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
            f"The shown cards and the discard must be exactly the six cards seat {seat} holds.",
            "cards",
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
            f"These cards make no winning combination, so seat {seat} cannot call.",
            "cards",
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


def _everyone_leaving(state: State) -> bool:
    deal = state["deal"]
    return deal["caller"] is None and all(
        state["seats"][str(s)]["leaving"] for s in deal["players"]
    )


def _advance(state: State, now: float, events: list[Event]) -> None:
    """Pass the turn on, playing at once the turns of seats that are leaving."""
    while True:
        seat = _next_seat(state)
        if seat is None:
            _enter_showdown(state, events)
            return
        if _everyone_leaving(state):
            _void(state, now, "abandoned", events)
            return
        state["deadline"] = now + table.option(state, "turn_seconds")
        _give_turn(state, seat, events)
        if not state["seats"][str(seat)]["leaving"]:
            return
        if not _play_for(state, seat, "leaving", now, events):
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
    """Return `cards` in the order of the deal's `number`-th reshuffle (see the docstring).

    `key` is the deal's `fairness.reshuffle_key`.
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
    if _play_for(state, state["deal"]["turn"], "deadline", now, events):
        _advance(state, now, events)


# --------------------------------------------------------------------------- settling


def verify_settle(state: State, ranks: Mapping[str, Ranked], now: float) -> None:
    """Raise RuleError unless a showdown is pending and `ranks` covers every laid-down hand."""
    guts.verify_settle(state, ranks, now)


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
    # The table around the deal is shown as Guts shows it; only the deal differs.
    result = guts.view({**state, "deal": None}, seat)
    result["game"] = "paiute"
    result["pending"] = _pending(state)
    deal = state["deal"]
    if deal is None:
        if result["you"] is not None:
            result["you"] = {"seat": seat, "cards": None, "drawn": None}
        return result
    result["deal"] = _public_deal(state)
    for key, shown in result["seats"].items():
        shown["in_hand"] = not deal["ended"] and table.is_current_player(state, int(key))
    if result["you"] is not None:
        mine = seat is not None and table.is_current_player(state, seat)
        my_draw = mine and not deal["ended"] and deal["turn"] == seat
        result["you"] = {
            "seat": seat,
            "cards": list(deal["hands"][str(seat)]) if mine else None,
            "drawn": copy_state(deal["drawn"]) if my_draw else None,
        }
    return result
