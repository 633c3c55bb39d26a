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

from collections.abc import Mapping
from typing import Any

from gateway.games import fairness, table
from gateway.games import options as checks
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
    Call,
    Declare,
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
from gateway.games.options import MAX_CHIPS
from gateway.games.table import BETWEEN_DEALS, SHOWDOWN, State

DECLARING = "declaring"


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


def validate_options(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Return the full Guts options with defaults filled in, or raise invalid_option."""
    raw = checks.verify_known(raw, GUTS_DEFAULTS)
    checked: dict[str, Any] = {}
    cards = raw.get("cards", GUTS_DEFAULTS["cards"])
    if type(cards) is not int or cards not in (2, 3):
        raise checks.bad_option("cards", "Option 'cards' must be 2 or 3.")
    checked["cards"] = int(cards)
    ante = checks.ante(raw, GUTS_DEFAULTS)
    checked["ante"] = ante
    for name in ("ante_mode", "declare"):
        checked[name] = checks.one_of(raw, GUTS_DEFAULTS, name, _CHOICES[name])
    for name in ("all_out_ante", "wimp", "ghost", "rebuy"):
        checked[name] = checks.true_or_false(raw, GUTS_DEFAULTS, name)
    checked["losers_pay"] = checks.one_of(raw, GUTS_DEFAULTS, "losers_pay", _CHOICES["losers_pay"])
    cap = raw.get("cap")
    if cap is not None:
        cap = checks.whole_number(raw, GUTS_DEFAULTS, "cap", 1, MAX_CHIPS)
    checked["cap"] = cap
    checked["cap_mode"] = checks.one_of(raw, GUTS_DEFAULTS, "cap_mode", _CHOICES["cap_mode"])
    if cap is not None and checked["cap_mode"] == "per_deal" and cap < ante:
        raise checks.bad_option(
            "cap",
            f"A per-deal cap of {cap} is below the ante ({ante}): nobody may pay more than"
            " the cap into the pot in one deal, antes included.",
        )
    checked["turn_seconds"] = checks.turn_seconds(raw, GUTS_DEFAULTS)
    checked["deal_pause_seconds"] = checks.deal_pause_seconds(raw, GUTS_DEFAULTS)
    checked["min_players"] = checks.whole_number(raw, GUTS_DEFAULTS, "min_players", 2, 10)
    checked["max_players"] = checks.whole_number(raw, GUTS_DEFAULTS, "max_players", 2, 10)
    if checked["max_players"] < checked["min_players"]:
        raise checks.bad_option(
            "max_players", "Option 'max_players' must be at least 'min_players'."
        )
    checked["min_buy_in"], checked["max_buy_in"] = checks.buy_in_limits(raw, ante)
    return checked


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, Any], table_id: str, now: float) -> State:
    """Return the initial state of an empty Guts table in phase waiting."""
    state = table.new_table("guts", validate_options(options), table_id, now)
    state["next_ante"] = "auto"
    return state


chips_on_table = table.chips_on_table
next_deadline = table.next_deadline
finished_deal = table.finished_deal


def ranking_request(state: State) -> dict[str, list[str]] | None:
    """Return the hands to rank, keyed by str(seat) and "ghost", while in showdown."""
    return table.ranking_request(state)


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

verify_sit = table.verify_sit
sit = table.sit
verify_leave = table.verify_leave


def leave(state: State, seat: int, now: float) -> Transition:
    """Cash a seat out now, or at the end of the deal if it is in the current hand."""
    return table.leave(state, seat, now, _in_current_hand(state, seat))


def verify_rebuy(state: State, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    table.verify_rebuy(state, seat, amount, _in_current_hand(state, seat))


def rebuy(state: State, seat: int, amount: int, now: float) -> Transition:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    return table.buy_chips(state, seat, amount)


# --------------------------------------------------------------------------- deals


verify_start = table.verify_start


def start(state: State, seat: int, now: float, deck: Deck) -> Transition:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    new = copy_state(state)
    events: list[Event] = []
    _begin_deal(new, now, deck, events)
    return new, events


def _begin_deal(state: State, now: float, deck: Deck, events: list[Event]) -> None:
    new_game = table.open_deal(state, events)
    if new_game is not None:
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


verify_settle = table.verify_settle


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
    result, seated = table.view(state, seat)
    deal = state["deal"]
    if deal is not None:
        result["deal"] = _public_deal(state)
    result["pending"] = _pending(state)
    if seated and seat is not None:
        mine = deal is not None and seat in deal["players"] and table.is_current_player(state, seat)
        result["you"] = {
            "seat": seat,
            "cards": list(deal["hands"][str(seat)]) if mine else None,
            "declaration": deal["declarations"].get(str(seat)) if mine else None,
        }
    return result


# --------------------------------------------------------------------------- the game


class GutsGame(TableGame):
    """Guts as a `Game`: the functions above, over typed states and records."""

    name = "guts"
    moves = frozenset({Start.name, Declare.name, Rebuy.name})

    def verify_own(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make this deal's `move` now."""
        match move:
            case Declare(choice=choice):
                verify_declare(plain(state), seat, choice, now)
            case _:
                raise unsupported(self.name, move)

    def act_own(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """Apply this deal's `move` by `seat` (verified first)."""
        match move:
            case Declare(choice=choice):
                return as_moved(declare(plain(state), seat, choice, now))
            case _:
                raise unsupported(self.name, move)

    def hold_turn(
        self, state: TableState, seat: int, call: Call, now: float, seconds: float
    ) -> Moved:
        """Guts has no call to hold a turn open for."""
        raise unsupported(self.name, call)

    def hand_rules(self, state: TableState) -> HandRules:
        """Two- or three-card Guts hands, as the table deals them."""
        return HandRules(f"guts{state['options']['cards']}")


GAME = GutsGame(
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
