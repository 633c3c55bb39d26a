"""The Guts table as a pure state machine: (state, move) -> (new state, events).

Each move `x(state, ...)` copies the JSON-safe state and never mutates its input; its
`verify_x(state, ...)` takes the same arguments, raises `RuleError` (the codes: see
`gateway.games.common`) and changes nothing. Time and shuffled decks come in as
arguments. A showdown waits in phase ``showdown`` until the adapter has the hands that
`ranking_request` names ranked and calls `settle`; with no deadline, the adapter retries
while the evaluator is down. The deck and salt reach no event and no view (only `view`
may be shown to users): `finished_deal` hands them to the hand history once the deal is
over. The seat moves are those both games share (`gateway.games.table`).

The rules as played, every option and every reading where the rules are silent:
docs/rules.md; the events and their fields: docs/api.md.
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
    Back,
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
    "away_after": table.AWAY_AFTER,
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
            "A per-deal cap of {cap} is below the ante ({ante}): nobody may pay more than"
            " the cap into the pot in one deal, antes included.",
            cap=cap,
            ante=ante,
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
    checked["away_after"] = checks.away_after(raw, GUTS_DEFAULTS)
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
    funded = table.seat_numbers(state, "playing", funded=True, present=True)
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
        raise RuleError(
            "not_your_turn", "Seat {seat} is not dealt into this deal.", "seat", seat=seat
        )
    if str(seat) in deal["declarations"]:
        raise RuleError("already_declared", "Seat {seat} has already declared.", "seat", seat=seat)
    if deal["turn"] is not None and deal["turn"] != seat:
        raise RuleError(
            "not_your_turn",
            "Seat {turn} declares before seat {seat}.",
            "seat",
            turn=deal["turn"],
            seat=seat,
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
            table.miss(new, seat, events)
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
    moves = frozenset({Start.name, Declare.name, Rebuy.name, Back.name})

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
