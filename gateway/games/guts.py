"""The Guts table as a pure state machine: (state, move) -> (new state, events).

The state is a plain JSON-safe dict; every move deep-copies it and never mutates its
input. Each move `x(state, ...)` has a `verify_x(state, ...)` with the same arguments
that raises `RuleError` (see `gateway.games.common` for the codes) and changes nothing;
`x` calls it first. Time and shuffled decks come in as arguments.

Phases and transitions
----------------------
- ``waiting``: no game in progress and the pot is empty; seats wait for ``start``.
  ``start`` (by any seated player, with at least ``min_players`` seats holding chips)
  starts a game and its first deal -> ``declaring``.
- ``declaring``: cards are dealt, players declare in or out before ``deadline``.
  The last declaration, or the deadline (late is out), reveals the choices and then:
  nobody in without wimp, or exactly one in without ghost -> the deal ends at once
  (``between_deals``); otherwise -> ``showdown``.
- ``showdown``: the deal waits for the adapter to rank the hands that
  `ranking_request` names and to call `settle` -> ``between_deals``. No deadline: if the
  evaluator is down the state stays here and the adapter retries. ``sit`` and ``leave``
  still work (they queue); every other move fails with ``showdown_pending``.
- ``between_deals``: the pause of ``deal_pause_seconds``; `on_deadline` (given a fresh
  deck) starts the next deal -> ``declaring``, or -> ``waiting`` when fewer than
  ``min_players`` seats with chips remain.

Seats and games
---------------
Seats are numbered 1..``max_players``; ``sit`` takes the lowest free one. "Left" of a
seat is the next higher occupied seat number, wrapping to the lowest. A seat's status
is ``waiting`` (joins at the start of the next game) or ``playing`` (in the current
game). A game starts at a deal whose pot is empty and ends when a win empties the pot.

Options (`validate_options`) are those of RULES.md with its defaults, plus ``rebuy``
(true), ``deal_pause_seconds`` (3; 0 to 60, may be fractional), ``min_players`` (2) and
``max_players`` (10), both 2..10, and ``min_buy_in`` / ``max_buy_in`` (20 and 500 antes;
a limit left out follows one that is given, so ``{"min_buy_in": 1000}`` gets a maximum
of 1000). ``ante`` is at most 1,000,000 and chip limits at most 1,000,000,000.

State keys: ``game``, ``table_id``, ``version`` (bumped by the adapter), ``created_at``,
``options``, ``phase``, ``deadline``, ``hand_number`` (deals so far), ``game_number``,
``game_in_progress``, ``pot``, ``reserve``, ``dealer``, ``seats`` (str(seat) -> name,
stack, status, leaving, skip_ante, player_id, bought_in, sat_at), ``next_ante``,
``next_player_id``, ``chips_bought`` / ``chips_cashed`` (all buy-ins and cash-outs, so
that `chips_on_table` always equals their difference) and ``deal``: the current or last
deal (number, dealer, commitment, deck, salt, players, hands, declarations, timeouts,
ranks, shown, flow of every chip movement, outcome). Only `view` may be shown to users.

Events (``data`` fields; all public unless marked private)
------------------------------------------------------------
- ``seated`` {seat, name, stack, status} -- the stack is the buy-in.
- ``rebought`` {seat, amount, stack}.
- ``leaving`` {seat, name} -- a seat in the hand asked to leave; it goes when the deal ends.
- ``cashed_out`` {seat, name, amount} then ``left`` {seat, name, reason} with reason
  ``left`` or ``out_of_chips``.
- ``game_started`` {game_number, players}; ``game_ended`` {game_number, reason} with
  reason ``won`` (a win emptied the pot), ``abandoned`` (everyone in the game left) or
  ``not_enough_players``.
- ``deal_started`` {hand_number, game_number, dealer, commitment, players, cards, ghost}
  -- players in dealing order, from the dealer's left to the dealer.
- ``reserve_opened`` {amount, pot, reserve}.
- ``ante`` {seat, owed, amount, to_pot, to_reserve, stack}; ``ante_skipped`` {seat}.
- ``cards_dealt`` {seat, cards} private to that seat; ``dealt`` {players, cards, ghost}.
- ``phase`` {phase, deadline}; ``turn`` {seat, deadline} (sequential declaring).
- ``declared`` {seat} in simultaneous mode, {seat, choice} in sequential mode;
  ``your_declaration`` {seat, choice} private to that seat (simultaneous mode).
- ``timeout`` {seat, result: "out"}.
- ``declarations_revealed`` {choices: {seat: "in" | "out"}}.
- ``showdown`` {reason, hands: {seat | "ghost": {cards, strength, category,
  description}}} with reason ``showdown`` or ``wimp``.
- ``pot_won`` {seat, amount, pot}; ``pot_split`` {shares: [{seat, amount}], reason, pot}
  with reason ``tie`` or ``abandoned``; ``pot_carried`` {pot, reason} with reason
  ``nobody_in`` or ``ghost``.
- ``paid`` {seat, owed, amount, to_pot, to_reserve, stack} (a loser's payment);
  ``wimp_paid`` {seat, owed, amount, to_pot, to_reserve, stack}.
- ``deal_ended`` {hand_number, outcome, pot, reserve} with outcome ``nobody_in``,
  ``uncontested``, ``won``, ``split``, ``ghost`` or ``wimp``.
Every chip movement is in one of ``seated``, ``rebought``, ``cashed_out``,
``reserve_opened``, ``ante``, ``pot_won``, ``pot_split``, ``paid``, ``wimp_paid``.
The deck and salt never appear in events or views: `finished_deal` hands them to the
hand history once the deal is over, whose fairness proof opens to each reader only the
cards it saw (`gateway.games.fairness`).

Decisions where RULES.md is silent
----------------------------------
- Who is dealt in: every ``playing`` seat whose stack is above zero when the deal
  starts. A seat that cannot pay an ante in full pays what it has and still plays the
  deal (rule 7). A seat at zero chips is not dealt in; with ``rebuy`` it may rebuy
  (then it plays from the next deal of the same game), and when the game ends every
  seat still at zero is removed (``left`` with reason ``out_of_chips``).
- The first dealer is the lowest-numbered seat dealt in; then each deal the dealer is
  the next seat left of the previous dealer among the seats dealt in.
- Dealing: one card at a time from the top of the deck, starting left of the dealer
  and ending with the dealer; the ghost hand, when in play, gets its card after the
  dealer in each round.
- Antes: at the first deal of a game every seat dealt in antes, unless the reserve
  opens the pot. Later in a game, with ``ante_mode: empty_pot`` nobody antes except
  after a deal where nobody was in and ``all_out_ante`` is true (then everyone dealt
  in antes at the next deal). With ``every_deal`` everyone dealt in antes each deal,
  except a seat that paid a positive amount as a loser in the previous deal, which
  skips that one ante (the skip is not kept for later if the seat sits a deal out);
  ``all_out_ante`` adds no second ante in this mode.
- Wimp: when nobody is in, every dealt hand is ranked and all of them are shown (the
  ``showdown`` event with reason ``wimp`` and the view's ``shown`` hold every dealt
  hand). The best hand pays ``ante`` times the number of other seats dealt in (one
  ante on behalf of each other player), into the pot, and nobody antes at the next
  deal (in either ante mode). If several tie for best, the first of them from the
  dealer's left pays. Wimp overrides ``all_out_ante``.
- Ghost: its hand is ranked and shown only when at least one player is in; a lone
  in-player who ties the ghost neither wins nor pays, and the pot carries.
- Cap ``per_deal``: nobody wins more than the cap from the pot in one deal (each winner's
  share; the odd chip is given before capping), nor pays more than the cap into it: a
  loser's or the wimp's payment is at most the cap less what the seat anted in that
  deal. The cap may not be below the ante. Cap ``reserve``: the pot never holds more
  than the cap; whatever any payment (ante, loss, wimp) would put above it goes to the
  reserve. At the first deal of a game, if the reserve holds at least what the antes
  would bring (each seat's ante, or its whole stack if smaller), min(reserve, cap)
  opens the pot and nobody antes. The reserve belongs to the table and stays when
  players leave.
- A loser owes the pot as it stood before the winner took it (after the antes of this
  deal); when the ghost is best, the pot as it stands. A payment is the smaller of what
  is owed and the payer's stack.
- Leaving: a seat dealt into the current deal (declaring or showdown) leaves when the
  deal ends, even if it declared out -- leaving early would give its secret declaration
  away, and the wimp rule may still need its hand; any other seat leaves at once. A
  seat that leaves forfeits its claim on the pot, except that when every seat of a
  running game is gone or going, the game is abandoned and the pot is shared out
  equally among them (odd chips from the dealer's left) before they cash out.
- Too few players: when a deal should start and fewer than ``min_players`` seats of a
  running game hold chips, the game is abandoned: the pot is shared out equally among
  its ``playing`` seats that still hold chips (all of them if none does; ``pot_split``
  reason ``abandoned``), and the seats without chips leave (``out_of_chips``). Then, if
  at least ``min_players`` seats (waiting ones included) hold chips a new game starts;
  otherwise the table goes back to ``waiting`` and needs ``start`` again.
- Rebuy: allowed while ``rebuy`` is true, for a seat that is not leaving and not dealt
  into the current deal; the amount must be a positive whole number and the stack it
  gives must lie within ``min_buy_in`` .. ``max_buy_in``.
- Names are 1 to 32 characters after trimming and unique at the table, ignoring case.
- A declaration at or after the deadline is refused (``too_late``); the deadline's own
  processing counts the seat out.
- In sequential mode each seat's deadline is ``turn_seconds`` after the previous seat
  declared (or timed out), so a late timer never shortens the next player's turn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gateway.games import fairness, table
from gateway.games.common import (
    Deck,
    Event,
    Ranked,
    RuleError,
    Transition,
    copy_state,
    display_name,
    event,
    name_key,
    verify_deck,
)
from gateway.games.table import BETWEEN_DEALS, State

WAITING = "waiting"
DECLARING = "declaring"
SHOWDOWN = "showdown"

MAX_ANTE = 1_000_000
MAX_CHIPS = 1_000_000_000
MAX_NAME_LENGTH = 32

# min_buy_in and max_buy_in default to 20 and 500 antes; the values here are for ante 1.
GUTS_DEFAULTS: dict[str, Any] = {
    "cards": 3,
    "ante": 1,
    "ante_mode": "empty_pot",
    "declare": "simultaneous",
    "all_out_ante": True,
    "wimp": False,
    "losers_pay": "all",
    "ghost": False,
    "cap": None,
    "cap_mode": "per_deal",
    "turn_seconds": 30,
    "rebuy": True,
    "deal_pause_seconds": 3,
    "min_players": 2,
    "max_players": 10,
    "min_buy_in": 20,
    "max_buy_in": 500,
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "ante_mode": ("empty_pot", "every_deal"),
    "declare": ("simultaneous", "sequential"),
    "losers_pay": ("all", "worst"),
    "cap_mode": ("per_deal", "reserve"),
}


# --------------------------------------------------------------------------- options


def _bad_option(name: str, detail: str) -> RuleError:
    return RuleError("invalid_option", detail, name)


def _int_option(raw: Mapping[str, Any], name: str, low: int, high: int) -> int:
    value = raw.get(name, GUTS_DEFAULTS[name])
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad_option(name, f"Option {name!r} must be a whole number.")
    if not low <= value <= high:
        raise _bad_option(name, f"Option {name!r} must be between {low} and {high}.")
    return value


def _bool_option(raw: Mapping[str, Any], name: str) -> bool:
    value = raw.get(name, GUTS_DEFAULTS[name])
    if not isinstance(value, bool):
        raise _bad_option(name, f"Option {name!r} must be true or false.")
    return value


def _choice_option(raw: Mapping[str, Any], name: str) -> str:
    value = raw.get(name, GUTS_DEFAULTS[name])
    allowed = _CHOICES[name]
    if not isinstance(value, str) or value not in allowed:
        raise _bad_option(name, f"Option {name!r} must be one of {', '.join(allowed)}.")
    return value


def validate_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the full Guts options with defaults filled in, or raise invalid_option."""
    if not isinstance(raw, Mapping):
        raise RuleError("invalid_option", "Table options must be an object.")
    for name in raw:
        if name not in GUTS_DEFAULTS:
            raise RuleError(
                "invalid_option",
                f"Unknown table option {name!r}; the options are {', '.join(GUTS_DEFAULTS)}.",
                str(name),
            )
    options: dict[str, Any] = {}
    cards = raw.get("cards", GUTS_DEFAULTS["cards"])
    if type(cards) is not int or cards not in (2, 3):
        raise _bad_option("cards", "Option 'cards' must be 2 or 3.")
    options["cards"] = int(cards)
    ante = _int_option(raw, "ante", 1, MAX_ANTE)
    options["ante"] = ante
    options["ante_mode"] = _choice_option(raw, "ante_mode")
    options["declare"] = _choice_option(raw, "declare")
    for name in ("all_out_ante", "wimp", "ghost", "rebuy"):
        options[name] = _bool_option(raw, name)
    options["losers_pay"] = _choice_option(raw, "losers_pay")
    cap = raw.get("cap")
    if cap is not None:
        cap = _int_option(raw, "cap", 1, MAX_CHIPS)
    options["cap"] = cap
    options["cap_mode"] = _choice_option(raw, "cap_mode")
    if cap is not None and options["cap_mode"] == "per_deal" and cap < ante:
        raise _bad_option(
            "cap",
            f"A per-deal cap of {cap} is below the ante ({ante}): nobody may pay more than"
            " the cap into the pot in one deal, antes included.",
        )
    options["turn_seconds"] = _int_option(raw, "turn_seconds", 1, 3600)
    pause = raw.get("deal_pause_seconds", GUTS_DEFAULTS["deal_pause_seconds"])
    if (
        isinstance(pause, bool)
        or not isinstance(pause, int | float)
        or not math.isfinite(pause)
        or not 0 <= pause <= 60
    ):
        raise _bad_option(
            "deal_pause_seconds", "Option 'deal_pause_seconds' must be a number from 0 to 60."
        )
    options["deal_pause_seconds"] = pause
    options["min_players"] = _int_option(raw, "min_players", 2, 10)
    options["max_players"] = _int_option(raw, "max_players", 2, 10)
    if options["max_players"] < options["min_players"]:
        raise _bad_option("max_players", "Option 'max_players' must be at least 'min_players'.")
    # A buy-in limit left out follows the other one rather than contradicting it.
    given_min = _int_option(raw, "min_buy_in", 1, MAX_CHIPS) if "min_buy_in" in raw else None
    given_max = _int_option(raw, "max_buy_in", 1, MAX_CHIPS) if "max_buy_in" in raw else None
    min_buy_in = given_min if given_min is not None else 20 * ante
    if given_min is None and given_max is not None:
        min_buy_in = min(min_buy_in, given_max)
    max_buy_in = given_max if given_max is not None else max(500 * ante, min_buy_in)
    if max_buy_in < min_buy_in:
        raise _bad_option("max_buy_in", "Option 'max_buy_in' must be at least 'min_buy_in'.")
    options["min_buy_in"] = min_buy_in
    options["max_buy_in"] = max_buy_in
    return options


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, Any], table_id: str, now: float) -> State:
    """Return the initial state of an empty Guts table in phase waiting."""
    return {
        "game": "guts",
        "table_id": table_id,
        "version": 0,
        "created_at": now,
        "options": validate_options(options),
        "phase": WAITING,
        "deadline": None,
        "hand_number": 0,
        "game_number": 0,
        "game_in_progress": False,
        "pot": 0,
        "reserve": 0,
        "dealer": None,
        "seats": {},
        "next_ante": "auto",
        "next_player_id": 1,
        "chips_bought": 0,
        "chips_cashed": 0,
        "deal": None,
    }


def chips_on_table(state: State) -> int:
    """Return the sum of all stacks, the pot and the reserve."""
    stacks = sum(int(seat["stack"]) for seat in state["seats"].values())
    return stacks + int(state["pot"]) + int(state["reserve"])


def next_deadline(state: State) -> float | None:
    """Return the time at which `on_deadline` has work to do, or None."""
    deadline: float | None = state["deadline"]
    return deadline


def ranking_request(state: State) -> dict[str, list[str]] | None:
    """Return the hands to rank, keyed by str(seat) and "ghost", while in showdown."""
    if state["phase"] != SHOWDOWN:
        return None
    needed: dict[str, list[str]] = state["deal"]["ranking_needed"]
    return {key: list(cards) for key, cards in needed.items()}


def finished_deal(state: State) -> dict[str, Any] | None:
    """Return the record of the last deal, deck and salt included, once it has ended."""
    deal = state["deal"]
    if deal is None or not deal["ended"]:
        return None
    return copy_state(dict(deal))


# --------------------------------------------------------------------------- helpers


def _in_current_hand(state: State, seat: int) -> bool:
    deal = state["deal"]
    return state["phase"] in (DECLARING, SHOWDOWN) and seat in deal["players"]


def _per_deal_cap(state: State) -> int | None:
    cap: int | None = table.option(state, "cap")
    return cap if cap is not None and table.option(state, "cap_mode") == "per_deal" else None


def _capped(state: State, seat: int, owed: int) -> int:
    """`owed`, at most what a per-deal cap still lets the seat pay into the pot this deal."""
    cap = _per_deal_cap(state)
    if cap is None:
        return owed
    paid: int = sum(
        item["amount"]
        for item in state["deal"]["flow"]
        if item["seat"] == seat and item["source"] == "seat"
    )
    return min(owed, max(cap - paid, 0))


def _pay_in(state: State, seat: int, owed: int, kind: str) -> dict[str, Any]:
    """Move up to `owed` chips from a seat into the pot, overflowing into the reserve."""
    record = state["seats"][str(seat)]
    amount = min(owed, record["stack"])
    record["stack"] -= amount
    to_pot = amount
    cap = table.option(state, "cap")
    if cap is not None and table.option(state, "cap_mode") == "reserve":
        to_pot = min(amount, max(cap - state["pot"], 0))
    to_reserve = amount - to_pot
    state["pot"] += to_pot
    state["reserve"] += to_reserve
    table.record_flow(state, kind, seat, to_pot, "seat", "pot")
    table.record_flow(state, kind, seat, to_reserve, "seat", "reserve")
    return {
        "seat": seat,
        "owed": owed,
        "amount": amount,
        "to_pot": to_pot,
        "to_reserve": to_reserve,
        "stack": record["stack"],
    }


# --------------------------------------------------------------------------- sit / leave


def verify_sit(state: State, name: str, buy_in: int, now: float) -> None:
    """Raise RuleError unless a new player may sit down with this name and buy-in."""
    shown = display_name(name, MAX_NAME_LENGTH)
    if shown is None:
        raise RuleError(
            "invalid_name",
            f"A name must be 1 to {MAX_NAME_LENGTH} characters long, not counting spaces"
            " at either end, with no control or invisible formatting character.",
            "name",
        )
    low, high = table.option(state, "min_buy_in"), table.option(state, "max_buy_in")
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or not low <= buy_in <= high:
        raise RuleError(
            "invalid_buy_in",
            f"The buy-in must be a whole number of chips from {low} to {high}.",
            "buy_in",
        )
    wanted = name_key(shown)
    if any(name_key(seat["name"]) == wanted for seat in state["seats"].values()):
        raise RuleError("name_taken", f"Someone at this table already goes by {shown!r}.", "name")
    if len(state["seats"]) >= table.option(state, "max_players"):
        raise RuleError("table_full", "Every seat at this table is taken.")


def sit(state: State, name: str, buy_in: int, now: float) -> Transition:
    """Seat a new player in the lowest free seat; they join at the start of the next game."""
    verify_sit(state, name, buy_in, now)
    new = copy_state(state)
    seat = next(
        n for n in range(1, table.option(new, "max_players") + 1) if str(n) not in new["seats"]
    )
    new["seats"][str(seat)] = {
        "name": display_name(name, MAX_NAME_LENGTH),
        "stack": buy_in,
        "status": "waiting",
        "leaving": False,
        "skip_ante": False,
        "player_id": new["next_player_id"],
        "bought_in": buy_in,
        "sat_at": now,
    }
    new["next_player_id"] += 1
    new["chips_bought"] += buy_in
    data = {"seat": seat, "name": name.strip(), "stack": buy_in, "status": "waiting"}
    return new, [event("seated", data)]


def verify_leave(state: State, seat: int, now: float) -> None:
    """Raise RuleError unless this seat may ask to leave."""
    record = table.verify_seated(state, seat)
    if record["leaving"]:
        raise RuleError(
            "already_left", f"Seat {seat} already leaves at the end of this deal.", "seat"
        )


def leave(state: State, seat: int, now: float) -> Transition:
    """Cash a seat out now, or at the end of the deal if it is in the current hand."""
    verify_leave(state, seat, now)
    new = copy_state(state)
    events: list[Event] = []
    if _in_current_hand(new, seat):
        record = new["seats"][str(seat)]
        record["leaving"] = True
        events.append(event("leaving", {"seat": seat, "name": record["name"]}))
    else:
        table.remove_seat(new, seat, "left", events)
    return new, events


def verify_rebuy(state: State, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    if not table.option(state, "rebuy"):
        raise RuleError("rebuy_not_allowed", "This table does not allow rebuys.")
    record = table.verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if record["leaving"]:
        raise RuleError("already_left", f"Seat {seat} is leaving and cannot rebuy.", "seat")
    if _in_current_hand(state, seat):
        raise RuleError(
            "game_in_progress",
            f"Seat {seat} is in the current deal; rebuy once it has been settled.",
            "seat",
        )
    low, high = table.option(state, "min_buy_in"), table.option(state, "max_buy_in")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise RuleError(
            "invalid_buy_in", "A rebuy must be a positive whole number of chips.", "amount"
        )
    if not low <= record["stack"] + amount <= high:
        raise RuleError(
            "invalid_buy_in",
            f"After a rebuy the stack must hold from {low} to {high} chips;"
            f" seat {seat} holds {record['stack']}.",
            "amount",
        )


def rebuy(state: State, seat: int, amount: int, now: float) -> Transition:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    new = copy_state(state)
    record = new["seats"][str(seat)]
    record["stack"] += amount
    record["bought_in"] += amount
    new["chips_bought"] += amount
    return new, [event("rebought", {"seat": seat, "amount": amount, "stack": record["stack"]})]


# --------------------------------------------------------------------------- deals


def verify_start(state: State, seat: int, now: float, deck: Deck) -> None:
    """Raise RuleError unless this seat may start the waiting table."""
    table.verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if state["phase"] != WAITING:
        raise RuleError("already_started", "The table is already playing.")
    needed = table.option(state, "min_players")
    if len(table.seat_numbers(state, funded=True)) < needed:
        raise RuleError(
            "not_enough_players", f"At least {needed} seated players with chips are needed."
        )
    verify_deck(deck)


def start(state: State, seat: int, now: float, deck: Deck) -> Transition:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    new = copy_state(state)
    events: list[Event] = []
    _begin_deal(new, now, deck, events)
    return new, events


def _begin_deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    minimum = table.option(state, "min_players")
    if state["game_in_progress"] and len(table.seat_numbers(state, "playing", True)) < minimum:
        table.abandon_short_game(state, events)
    new_game = not state["game_in_progress"]
    if new_game:
        funded = table.seat_numbers(state, funded=True)
        if len(funded) < minimum:
            for record in state["seats"].values():
                record["status"] = "waiting"
            table.set_phase(state, WAITING, None, events)
            return
        state["game_number"] += 1
        state["game_in_progress"] = True
        state["next_ante"] = "auto"
        for number in funded:
            state["seats"][str(number)]["status"] = "playing"
            state["seats"][str(number)]["skip_ante"] = False
        events.append(
            event("game_started", {"game_number": state["game_number"], "players": funded})
        )
    _deal(state, now, deck, new_game, events)


def _deal(state: State, now: float, deck: Deck, new_game: bool, events: list[Event]) -> None:
    funded = table.seat_numbers(state, "playing", True)
    dealer = table.from_left_of(state["dealer"], funded)[0]
    order = table.from_left_of(dealer, funded)
    ghost = bool(table.option(state, "ghost"))
    cards = int(table.option(state, "cards"))
    state["hand_number"] += 1
    state["dealer"] = dealer
    state["deal"] = {
        "number": state["hand_number"],
        "game_number": state["game_number"],
        "dealer": dealer,
        "commitment": fairness.commitment(deck.cards, deck.salt),
        "deck": list(deck.cards),
        "salt": deck.salt,
        "players": order,
        "player_ids": {str(s): state["seats"][str(s)]["player_id"] for s in order},
        "names": {str(s): state["seats"][str(s)]["name"] for s in order},
        "cards_per_hand": cards,
        "ghost": ghost,
        "hands": {},
        "declarations": {},
        "revealed": False,
        "turn": None,
        "timeouts": [],
        "ranking_needed": None,
        "showdown_reason": None,
        "ranks": {},
        "shown": {},
        "flow": [],
        "pot_at_start": 0,
        "outcome": None,
        "ended": False,
    }
    deal = state["deal"]
    events.append(
        event(
            "deal_started",
            {
                "hand_number": state["hand_number"],
                "game_number": state["game_number"],
                "dealer": dealer,
                "commitment": deal["commitment"],
                "players": order,
                "cards": cards,
                "ghost": ghost,
            },
        )
    )
    _collect_antes(state, order, new_game, events)
    deal["pot_at_start"] = state["pot"]

    holders = [str(s) for s in order] + (["ghost"] if ghost else [])
    hands: dict[str, list[str]] = {key: [] for key in holders}
    position = 0
    for _ in range(cards):
        for key in holders:
            hands[key].append(deck.cards[position])
            position += 1
    deal["hands"] = hands
    for seat in order:
        events.append(event("cards_dealt", {"seat": seat, "cards": list(hands[str(seat)])}, [seat]))
    events.append(event("dealt", {"players": order, "cards": cards, "ghost": ghost}))

    deadline = now + table.option(state, "turn_seconds")
    table.set_phase(state, DECLARING, deadline, events)
    if table.option(state, "declare") == "sequential":
        deal["turn"] = order[0]
        events.append(event("turn", {"seat": order[0], "deadline": deadline}))


def _collect_antes(state: State, order: list[int], new_game: bool, events: list[Event]) -> None:
    ante = int(table.option(state, "ante"))
    payers: list[int] = []
    if new_game:
        cap = table.option(state, "cap")
        would_bring = sum(min(ante, state["seats"][str(s)]["stack"]) for s in order)
        reserve_opens = cap is not None and table.option(state, "cap_mode") == "reserve"
        if reserve_opens and state["reserve"] > 0 and state["reserve"] >= would_bring:
            amount = min(state["reserve"], cap)
            state["reserve"] -= amount
            state["pot"] += amount
            table.record_flow(state, "reserve_open", None, amount, "reserve", "pot")
            events.append(
                event(
                    "reserve_opened",
                    {"amount": amount, "pot": state["pot"], "reserve": state["reserve"]},
                )
            )
        else:
            payers = list(order)
    elif state["next_ante"] == "all":
        payers = list(order)
    elif state["next_ante"] == "auto" and table.option(state, "ante_mode") == "every_deal":
        for seat in order:
            if state["seats"][str(seat)]["skip_ante"]:
                events.append(event("ante_skipped", {"seat": seat}))
            else:
                payers.append(seat)
    state["next_ante"] = "auto"
    for record in state["seats"].values():
        record["skip_ante"] = False
    for seat in payers:
        events.append(event("ante", _pay_in(state, seat, ante, "ante")))


# --------------------------------------------------------------------------- declaring


def verify_declare(state: State, seat: int, choice: str, now: float) -> None:
    """Raise RuleError unless this seat may declare this choice now."""
    table.verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if state["phase"] != DECLARING:
        raise RuleError("no_hand_in_progress", "Nobody is declaring right now.")
    if not isinstance(choice, str) or choice not in ("in", "out"):
        raise RuleError("invalid_choice", "A declaration must be 'in' or 'out'.", "choice")
    deal = state["deal"]
    if seat not in deal["players"] or (
        deal["player_ids"][str(seat)] != state["seats"][str(seat)]["player_id"]
    ):
        raise RuleError("not_your_turn", f"Seat {seat} is not dealt into this deal.", "seat")
    if str(seat) in deal["declarations"]:
        raise RuleError("already_declared", f"Seat {seat} has already declared.", "seat")
    if deal["turn"] is not None and deal["turn"] != seat:
        raise RuleError(
            "not_your_turn", f"Seat {deal['turn']} declares before seat {seat}.", "seat"
        )
    if now >= state["deadline"]:
        raise RuleError(
            "too_late", "The deadline to declare has passed; a late declaration is out."
        )


def declare(state: State, seat: int, choice: str, now: float) -> Transition:
    """Record a seat's in/out declaration, revealing and resolving once all are in."""
    verify_declare(state, seat, choice, now)
    new = copy_state(state)
    events: list[Event] = []
    deal = new["deal"]
    deal["declarations"][str(seat)] = choice
    if table.option(new, "declare") == "sequential":
        events.append(event("declared", {"seat": seat, "choice": choice}))
        _advance_turn(new, now, events)
    else:
        events.append(event("declared", {"seat": seat}))
        events.append(event("your_declaration", {"seat": seat, "choice": choice}, [seat]))
        if len(deal["declarations"]) == len(deal["players"]):
            _resolve(new, now, events)
    return new, events


def _advance_turn(state: State, now: float, events: list[Event]) -> None:
    deal = state["deal"]
    pending = [s for s in deal["players"] if str(s) not in deal["declarations"]]
    if not pending:
        _resolve(state, now, events)
        return
    deal["turn"] = pending[0]
    state["deadline"] = now + table.option(state, "turn_seconds")
    events.append(event("turn", {"seat": pending[0], "deadline": state["deadline"]}))


def on_deadline(state: State, now: float, deck: Deck | None = None) -> Transition:
    """Apply what the passed deadline decides: late declarers are out, or the next deal."""
    deadline = state["deadline"]
    if deadline is None or now < deadline:
        return copy_state(state), []
    new = copy_state(state)
    events: list[Event] = []
    if new["phase"] == DECLARING:
        deal = new["deal"]
        late = [s for s in deal["players"] if str(s) not in deal["declarations"]]
        if deal["turn"] is not None:
            late = late[:1]
        for seat in late:
            deal["declarations"][str(seat)] = "out"
            deal["timeouts"].append(seat)
            events.append(event("timeout", {"seat": seat, "result": "out"}))
        if deal["turn"] is not None:
            _advance_turn(new, now, events)
        else:
            _resolve(new, now, events)
    elif new["phase"] == BETWEEN_DEALS:
        _begin_deal(new, now, verify_deck(deck), events)
    return new, events


def _resolve(state: State, now: float, events: list[Event]) -> None:
    deal = state["deal"]
    deal["revealed"] = True
    deal["turn"] = None
    choices = {str(s): deal["declarations"][str(s)] for s in deal["players"]}
    events.append(event("declarations_revealed", {"choices": choices}))
    ins = [s for s in deal["players"] if choices[str(s)] == "in"]
    ghost = bool(deal["ghost"])
    if not ins:
        if table.option(state, "wimp"):
            _enter_showdown(state, deal["players"], "wimp", events)
            return
        if table.option(state, "all_out_ante"):
            state["next_ante"] = "all"
        events.append(event("pot_carried", {"pot": state["pot"], "reason": "nobody_in"}))
        table.end_deal(state, now, "nobody_in", events)
    elif len(ins) == 1 and not ghost:
        _take_pot(state, ins, events)
        table.end_deal(state, now, "uncontested", events)
    else:
        _enter_showdown(state, ins, "showdown", events)


def _enter_showdown(state: State, seats: list[int], reason: str, events: list[Event]) -> None:
    deal = state["deal"]
    needed = {str(s): list(deal["hands"][str(s)]) for s in seats}
    if reason == "showdown" and deal["ghost"]:
        needed["ghost"] = list(deal["hands"]["ghost"])
    deal["ranking_needed"] = needed
    deal["showdown_reason"] = reason
    table.set_phase(state, SHOWDOWN, None, events)


# --------------------------------------------------------------------------- settling


def verify_settle(state: State, ranks: Mapping[str, Ranked], now: float) -> None:
    """Raise RuleError unless a showdown is pending and `ranks` covers every hand in it."""
    if state["phase"] != SHOWDOWN:
        raise RuleError("not_in_showdown", "No showdown is waiting to be settled.")
    for key in state["deal"]["ranking_needed"]:
        rank = ranks.get(key) if isinstance(ranks, Mapping) else None
        if not isinstance(rank, Ranked):
            raise RuleError(
                "invalid_ranking", f"The ranking has no rank for hand {key!r}.", "ranks"
            )
        if isinstance(rank.strength, bool) or not isinstance(rank.strength, int):
            raise RuleError(
                "invalid_ranking", f"The strength of hand {key!r} is not a whole number.", "ranks"
            )


def settle(state: State, ranks: Mapping[str, Ranked], now: float) -> Transition:
    """Finish a showdown with the evaluator's ranks: show hands, move chips, end the deal."""
    verify_settle(state, ranks, now)
    new = copy_state(state)
    events: list[Event] = []
    deal = new["deal"]
    needed: dict[str, list[str]] = deal["ranking_needed"]
    deal["ranks"] = {
        key: {
            "strength": ranks[key].strength,
            "category": ranks[key].category,
            "description": ranks[key].description,
        }
        for key in needed
    }
    deal["shown"] = {key: list(cards) for key, cards in needed.items()}
    hands = {key: {"cards": list(needed[key]), **deal["ranks"][key]} for key in needed}
    events.append(event("showdown", {"reason": deal["showdown_reason"], "hands": hands}))
    if deal["showdown_reason"] == "wimp":
        _settle_wimp(new, events)
        outcome = "wimp"
    else:
        outcome = _settle_showdown(new, events)
    table.end_deal(new, now, outcome, events)
    return new, events


def _strength(state: State, key: str) -> int:
    strength: int = state["deal"]["ranks"][key]["strength"]
    return strength


def _settle_wimp(state: State, events: list[Event]) -> None:
    players: list[int] = state["deal"]["players"]
    best = max(_strength(state, str(s)) for s in players)
    wimp = next(s for s in players if _strength(state, str(s)) == best)
    owed = _capped(state, wimp, int(table.option(state, "ante")) * (len(players) - 1))
    events.append(event("wimp_paid", _pay_in(state, wimp, owed, "wimp")))
    state["next_ante"] = "none"


def _settle_showdown(state: State, events: list[Event]) -> str:
    deal = state["deal"]
    pot_before = state["pot"]
    ins = [s for s in deal["players"] if deal["declarations"][str(s)] == "in"]
    strength = {s: _strength(state, str(s)) for s in ins}
    best = max(strength.values())
    ghost = _strength(state, "ghost") if deal["ghost"] else None
    if ghost is not None and ghost >= best:
        winners: list[int] = []
        losers = [s for s in ins if strength[s] < ghost]
    else:
        winners = [s for s in ins if strength[s] == best]
        losers = [s for s in ins if strength[s] < best]
    if losers and table.option(state, "losers_pay") == "worst":
        worst = min(strength[s] for s in losers)
        losers = [s for s in losers if strength[s] == worst]
    if winners:
        _take_pot(state, winners, events)
    else:
        events.append(event("pot_carried", {"pot": state["pot"], "reason": "ghost"}))
    for seat in losers:
        payment = _pay_in(state, seat, _capped(state, seat, pot_before), "loss")
        if payment["amount"] > 0:
            state["seats"][str(seat)]["skip_ante"] = True
        events.append(event("paid", payment))
    if not winners:
        return "ghost"
    return "won" if len(winners) == 1 else "split"


def _take_pot(state: State, winners: list[int], events: list[Event]) -> None:
    shares = table.split_evenly(state["pot"], len(winners))
    cap = _per_deal_cap(state)
    if cap is not None:
        shares = [min(share, cap) for share in shares]
    for seat, share in zip(winners, shares, strict=True):
        table.pay_out(state, seat, share, "win")
    if len(winners) == 1:
        events.append(
            event("pot_won", {"seat": winners[0], "amount": shares[0], "pot": state["pot"]})
        )
    else:
        pairs = zip(winners, shares, strict=True)
        events.append(
            event(
                "pot_split",
                {
                    "shares": [{"seat": s, "amount": a} for s, a in pairs],
                    "reason": "tie",
                    "pot": state["pot"],
                },
            )
        )


# --------------------------------------------------------------------------- views


def _public_deal(state: State) -> dict[str, Any]:
    deal = state["deal"]
    sequential = table.option(state, "declare") == "sequential"
    public_choices = deal["revealed"] or sequential
    declared = [s for s in deal["players"] if str(s) in deal["declarations"]]
    return {
        "number": deal["number"],
        "game_number": deal["game_number"],
        "dealer": deal["dealer"],
        "commitment": deal["commitment"],
        "players": list(deal["players"]),
        "names": dict(deal["names"]),
        "cards_per_hand": deal["cards_per_hand"],
        "ghost": deal["ghost"],
        "declared": declared,
        "declarations": (
            {str(s): deal["declarations"][str(s)] for s in declared} if public_choices else {}
        ),
        "turn": deal["turn"],
        "timeouts": list(deal["timeouts"]),
        "showdown": deal["showdown_reason"],
        "shown": copy_state(deal["shown"]),
        "ranks": copy_state(deal["ranks"]),
        "pot_at_start": deal["pot_at_start"],
        "flow": copy_state(deal["flow"]),
        "outcome": deal["outcome"],
        "ended": deal["ended"],
    }


def _pending(state: State) -> dict[str, Any] | None:
    phase = state["phase"]
    deal = state["deal"]
    if phase == DECLARING:
        if deal["turn"] is not None:
            seats = [deal["turn"]]
        else:
            seats = [s for s in deal["players"] if str(s) not in deal["declarations"]]
        return {"action": "declare", "seats": seats, "deadline": state["deadline"]}
    if phase == SHOWDOWN:
        return {"action": "rank_hands", "seats": [], "deadline": None}
    if phase == BETWEEN_DEALS:
        return {"action": "next_deal", "seats": [], "deadline": state["deadline"]}
    return None


def view(state: State, seat: int | None = None) -> dict[str, Any]:
    """Return the table as `seat` (None for a spectator) may see it."""
    deal = state["deal"]
    in_hand = set(deal["players"]) if deal is not None and not deal["ended"] else set()
    seats = {}
    for key in sorted(state["seats"], key=int):
        record = state["seats"][key]
        seats[key] = {
            "seat": int(key),
            "name": record["name"],
            "stack": record["stack"],
            "status": record["status"],
            "leaving": record["leaving"],
            "out_of_chips": record["stack"] == 0,
            "in_hand": int(key) in in_hand and table.is_current_player(state, int(key)),
        }
    result: dict[str, Any] = {
        "game": "guts",
        "table_id": state["table_id"],
        "version": state["version"],
        "options": dict(state["options"]),
        "phase": state["phase"],
        "deadline": state["deadline"],
        "hand_number": state["hand_number"],
        "game_number": state["game_number"],
        "game_in_progress": state["game_in_progress"],
        "pot": state["pot"],
        "reserve": state["reserve"],
        "dealer": state["dealer"],
        "seats": seats,
        "deal": _public_deal(state) if deal is not None else None,
        "pending": _pending(state),
        "you": None,
    }
    if seat is not None and table.is_seat_number(seat) and str(seat) in state["seats"]:
        mine = deal is not None and seat in deal["players"] and table.is_current_player(state, seat)
        result["you"] = {
            "seat": seat,
            "cards": list(deal["hands"][str(seat)]) if mine else None,
            "declaration": deal["declarations"].get(str(seat)) if mine else None,
        }
    return result
