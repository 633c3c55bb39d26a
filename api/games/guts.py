"""The Guts table as a pure state machine: (state, move) -> (new state, events).

Each move `x(state, ...)` copies the JSON-safe state and never mutates its input; its
`verify_x(state, ...)` takes the same arguments, raises `RuleError` (the codes: see
`api.games.common`) and changes nothing. Time and shuffled decks come in as
arguments. A showdown waits in phase ``showdown`` until the adapter has the hands that
`ranking_request` names ranked and calls `settle`; with no deadline, the adapter retries
while the evaluator is down. The deck and salt reach no event and no view (only `view`
may be shown to users): `finished_deal` hands them to the hand history once the deal is
over. The seat moves are those both games share (`api.games.table`).

The rules as played, every option and every reading where the rules are silent:
docs/rules.md; the events and their fields: docs/api.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from api.games import fairness, table
from api.games import options as checks
from api.games.common import Deck, Ranked, RuleError, copy_state, verify_deck
from api.games.events import (
    CardsData,
    DealtData,
    DeclarationData,
    Event,
    PaymentData,
    PotCarriedData,
    PotWonData,
    ReserveOpenedData,
    ShowdownData,
    ShownHand,
    TurnData,
)
from api.games.game import (
    Back,
    Declare,
    HandRules,
    Move,
    Rebuy,
    Rules,
    Start,
    TableGame,
    other_game,
    unsupported,
)
from api.games.options import MAX_CHIPS
from api.games.state import (
    Choice,
    GutsDeal,
    GutsDealView,
    GutsOptions,
    GutsTable,
    GutsYou,
    Pending,
    TableState,
    TableView,
)
from api.games.table import BETWEEN_DEALS, SHOWDOWN, Transition

DECLARING: Final = "declaring"


# min_buy_in and max_buy_in default to 20 and 500 antes; the values here are for ante 1.
GUTS_DEFAULTS: GutsOptions = {
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


def validate_options(raw: Mapping[str, object]) -> GutsOptions:
    """Return the full Guts options with defaults filled in, or raise invalid_option."""
    raw = checks.verify_known(raw, GUTS_DEFAULTS)
    cards = raw.get("cards", GUTS_DEFAULTS["cards"])
    if type(cards) is not int or cards not in (2, 3):
        raise checks.bad_option("cards", "Option 'cards' must be 2 or 3.")
    ante = checks.ante(raw, GUTS_DEFAULTS)
    ante_mode, declare_mode = (
        checks.one_of(raw, GUTS_DEFAULTS, name, _CHOICES[name]) for name in ("ante_mode", "declare")
    )
    all_out_ante, wimp, ghost, rebuy_allowed = (
        checks.true_or_false(raw, GUTS_DEFAULTS, name)
        for name in ("all_out_ante", "wimp", "ghost", "rebuy")
    )
    losers_pay = checks.one_of(raw, GUTS_DEFAULTS, "losers_pay", _CHOICES["losers_pay"])
    cap = None
    if raw.get("cap") is not None:
        cap = checks.whole_number(raw, GUTS_DEFAULTS, "cap", 1, MAX_CHIPS)
    cap_mode = checks.one_of(raw, GUTS_DEFAULTS, "cap_mode", _CHOICES["cap_mode"])
    if cap is not None and cap_mode == "per_deal" and cap < ante:
        raise checks.bad_option(
            "cap",
            "A per-deal cap of {cap} is below the ante ({ante}): nobody may pay more than"
            " the cap into the pot in one deal, antes included.",
            cap=cap,
            ante=ante,
        )
    turn_seconds = checks.turn_seconds(raw, GUTS_DEFAULTS)
    pause = checks.deal_pause_seconds(raw, GUTS_DEFAULTS)
    low, high = checks.player_counts(raw, GUTS_DEFAULTS, 10)
    min_buy_in, max_buy_in = checks.buy_in_limits(raw, ante)
    return {
        "cards": cards,
        "ante": ante,
        "ante_mode": ante_mode,
        "declare": declare_mode,
        "all_out_ante": all_out_ante,
        "wimp": wimp,
        "ghost": ghost,
        "rebuy": rebuy_allowed,
        "losers_pay": losers_pay,
        "cap": cap,
        "cap_mode": cap_mode,
        "turn_seconds": turn_seconds,
        "deal_pause_seconds": pause,
        "min_players": low,
        "max_players": high,
        "min_buy_in": min_buy_in,
        "max_buy_in": max_buy_in,
        "away_after": checks.away_after(raw, GUTS_DEFAULTS),
    }


# --------------------------------------------------------------------------- table


def new_table(options: Mapping[str, object], table_id: str, now: float) -> GutsTable:
    """Return the initial state of an empty Guts table in phase waiting."""
    checked = validate_options(options)
    return {
        "game": "guts",
        "options": checked,
        **table.new_table(table_id, now),
        "deal": None,
        "next_ante": "auto",
    }


chips_on_table = table.chips_on_table
next_deadline = table.next_deadline
finished_deal = table.finished_deal


def ranking_request(state: GutsTable) -> dict[str, list[str]] | None:
    """Return the hands to rank, keyed by str(seat) and "ghost", while in showdown."""
    return table.ranking_request(state)


# --------------------------------------------------------------------------- helpers


def _in_current_hand(state: GutsTable, seat: int) -> bool:
    deal = state["deal"]
    return state["phase"] in (DECLARING, SHOWDOWN) and deal is not None and seat in deal["players"]


def _per_deal_cap(state: GutsTable) -> int | None:
    cap = state["options"]["cap"]
    return cap if cap is not None and state["options"]["cap_mode"] == "per_deal" else None


def _capped(state: GutsTable, seat: int, owed: int) -> int:
    """`owed`, at most what a per-deal cap still lets the seat pay into the pot this deal."""
    cap = _per_deal_cap(state)
    if cap is None:
        return owed
    paid = sum(
        item["amount"]
        for item in table.deal_of(state)["flow"]
        if item["seat"] == seat and item["source"] == "seat"
    )
    return min(owed, max(cap - paid, 0))


def _pay_in(state: GutsTable, seat: int, owed: int, kind: str) -> PaymentData:
    """Move up to `owed` chips from a seat into the pot, overflowing into the reserve."""
    record = state["seats"][str(seat)]
    amount = min(owed, record["stack"])
    record["stack"] -= amount
    to_pot = amount
    cap = state["options"]["cap"]
    if cap is not None and state["options"]["cap_mode"] == "reserve":
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
verify_leave = table.verify_leave


def sit(state: GutsTable, name: str, buy_in: int, now: float) -> Transition[GutsTable]:
    """Seat a new player in the lowest free seat; they join at the start of the next game."""
    return table.sit(state, name, buy_in, now)


def leave(state: GutsTable, seat: int, now: float) -> Transition[GutsTable]:
    """Cash a seat out now, or at the end of the deal if it is in the current hand."""
    return table.leave(state, seat, now, _in_current_hand(state, seat))


def verify_rebuy(state: GutsTable, seat: int, amount: int, now: float) -> None:
    """Raise RuleError unless this seat may buy more chips now."""
    table.verify_rebuy(state, seat, amount, _in_current_hand(state, seat))


def rebuy(state: GutsTable, seat: int, amount: int, now: float) -> Transition[GutsTable]:
    """Add chips to a seat's stack."""
    verify_rebuy(state, seat, amount, now)
    return table.buy_chips(state, seat, amount)


# --------------------------------------------------------------------------- deals


verify_start = table.verify_start


def start(state: GutsTable, seat: int, now: float, deck: Deck) -> Transition[GutsTable]:
    """Start the table: a new game and its first deal."""
    verify_start(state, seat, now, deck)
    new = copy_state(state)
    events: list[Event] = []
    _begin_deal(new, now, deck, events)
    return new, events


def _begin_deal(state: GutsTable, now: float, deck: Deck, events: list[Event]) -> None:
    new_game = table.open_deal(state, events)
    if new_game is not None:
        _deal(state, now, deck, new_game, events)


def _new_deal(state: GutsTable, deck: Deck, dealer: int, order: list[int]) -> GutsDeal:
    """The record of a deal about to be dealt from `deck`, `order` playing."""
    return {
        "number": state["hand_number"],
        "game_number": state["game_number"],
        "dealer": dealer,
        "commitment": fairness.commitment(deck.cards, deck.salt),
        "deck": list(deck.cards),
        "salt": deck.salt,
        "players": order,
        "player_ids": {str(s): state["seats"][str(s)]["player_id"] for s in order},
        "names": {str(s): state["seats"][str(s)]["name"] for s in order},
        "cards_per_hand": state["options"]["cards"],
        "ghost": state["options"]["ghost"],
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


def _hands(deck: Deck, holders: list[str], cards: int) -> dict[str, list[str]]:
    """Each holder's cards, dealt one at a time around the table from the top of `deck`."""
    hands: dict[str, list[str]] = {key: [] for key in holders}
    position = 0
    for _ in range(cards):
        for key in holders:
            hands[key].append(deck.cards[position])
            position += 1
    return hands


def _deal(state: GutsTable, now: float, deck: Deck, new_game: bool, events: list[Event]) -> None:
    funded = table.seat_numbers(state, "playing", funded=True, present=True)
    dealer = table.from_left_of(state["dealer"], funded)[0]
    order = table.from_left_of(dealer, funded)
    ghost = state["options"]["ghost"]
    cards = state["options"]["cards"]
    state["hand_number"] += 1
    state["dealer"] = dealer
    deal = state["deal"] = _new_deal(state, deck, dealer, order)
    events.append(
        {
            "type": "deal_started",
            "data": {
                "hand_number": state["hand_number"],
                "game_number": state["game_number"],
                "dealer": dealer,
                "commitment": deal["commitment"],
                "players": order,
                "cards": cards,
                "ghost": ghost,
            },
            "visible_to": None,
        }
    )
    _collect_antes(state, order, new_game, events)
    deal["pot_at_start"] = state["pot"]
    hands = deal["hands"] = _hands(
        deck, [str(s) for s in order] + (["ghost"] if ghost else []), cards
    )
    for seat in order:
        dealt: CardsData = {"seat": seat, "cards": list(hands[str(seat)])}
        events.append({"type": "cards_dealt", "data": dealt, "visible_to": [seat]})
    dealt_to: DealtData = {"players": order, "cards": cards, "ghost": ghost}
    events.append({"type": "dealt", "data": dealt_to, "visible_to": None})
    deadline = now + state["options"]["turn_seconds"]
    table.set_phase(state, DECLARING, deadline, events)
    if state["options"]["declare"] == "sequential":
        deal["turn"] = order[0]
        turn: TurnData = {"seat": order[0], "deadline": deadline}
        events.append({"type": "turn", "data": turn, "visible_to": None})


def _open_with_reserve(state: GutsTable, order: list[int], events: list[Event]) -> bool:
    """A new game's pot taken from the reserve instead of antes, when the table's reserve
    cap allows it and the reserve holds at least what the antes would bring."""
    ante, cap = state["options"]["ante"], state["options"]["cap"]
    would_bring = sum(min(ante, state["seats"][str(s)]["stack"]) for s in order)
    if cap is None or state["options"]["cap_mode"] != "reserve":
        return False
    if not (state["reserve"] > 0 and state["reserve"] >= would_bring):
        return False
    amount = min(state["reserve"], cap)
    state["reserve"] -= amount
    state["pot"] += amount
    table.record_flow(state, "reserve_open", None, amount, "reserve", "pot")
    opened: ReserveOpenedData = {"amount": amount, "pot": state["pot"], "reserve": state["reserve"]}
    events.append({"type": "reserve_opened", "data": opened, "visible_to": None})
    return True


def _collect_antes(state: GutsTable, order: list[int], new_game: bool, events: list[Event]) -> None:
    ante = state["options"]["ante"]
    payers: list[int] = []
    if new_game:
        if not _open_with_reserve(state, order, events):
            payers = list(order)
    elif state["next_ante"] == "all":
        payers = list(order)
    elif state["next_ante"] == "auto" and state["options"]["ante_mode"] == "every_deal":
        for seat in order:
            if state["seats"][str(seat)]["skip_ante"]:
                events.append({"type": "ante_skipped", "data": {"seat": seat}, "visible_to": None})
            else:
                payers.append(seat)
    state["next_ante"] = "auto"
    for record in state["seats"].values():
        record["skip_ante"] = False
    for seat in payers:
        events.append(
            {"type": "ante", "data": _pay_in(state, seat, ante, "ante"), "visible_to": None}
        )


# --------------------------------------------------------------------------- declaring


def verify_declare(state: GutsTable, seat: int, choice: str, now: float) -> None:
    """Raise RuleError unless this seat may declare this choice now."""
    table.verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if state["phase"] != DECLARING:
        raise RuleError("no_hand_in_progress", "Nobody is declaring right now.")
    if not isinstance(choice, str) or choice not in ("in", "out"):
        raise RuleError("invalid_choice", "A declaration must be 'in' or 'out'.", "choice")
    deal = table.deal_of(state)
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
    deadline = state["deadline"]
    if deadline is not None and now >= deadline:
        raise RuleError(
            "too_late", "The deadline to declare has passed; a late declaration is out."
        )


def declare(state: GutsTable, seat: int, choice: str, now: float) -> Transition[GutsTable]:
    """Record a seat's in/out declaration, revealing and resolving once all are in."""
    verify_declare(state, seat, choice, now)
    chosen: Choice = "in" if choice == "in" else "out"
    new = copy_state(state)
    events: list[Event] = []
    deal = table.deal_of(new)
    deal["declarations"][str(seat)] = chosen
    if new["options"]["declare"] == "sequential":
        events.append(
            {"type": "declared", "data": {"seat": seat, "choice": chosen}, "visible_to": None}
        )
        _advance_turn(new, now, events)
    else:
        events.append({"type": "declared", "data": {"seat": seat}, "visible_to": None})
        mine: DeclarationData = {"seat": seat, "choice": chosen}
        events.append({"type": "your_declaration", "data": mine, "visible_to": [seat]})
        if len(deal["declarations"]) == len(deal["players"]):
            _resolve(new, now, events)
    return new, events


def _advance_turn(state: GutsTable, now: float, events: list[Event]) -> None:
    deal = table.deal_of(state)
    pending = [s for s in deal["players"] if str(s) not in deal["declarations"]]
    if not pending:
        _resolve(state, now, events)
        return
    deal["turn"] = pending[0]
    deadline = state["deadline"] = now + state["options"]["turn_seconds"]
    events.append(
        {"type": "turn", "data": {"seat": pending[0], "deadline": deadline}, "visible_to": None}
    )


def on_deadline(
    state: GutsTable, now: float, deck: Deck | None = None, in_place: bool = False
) -> Transition[GutsTable]:
    """Apply what the passed deadline decides: late declarers are out, or the next deal.

    `in_place`: change `state` itself (the caller's own, as a transition just returned
    it) rather than a copy."""
    deadline = state["deadline"]
    if deadline is None or now < deadline:
        return (state if in_place else copy_state(state)), []
    new = state if in_place else copy_state(state)
    events: list[Event] = []
    if new["phase"] == DECLARING:
        _time_out(new, now, events)
    elif new["phase"] == BETWEEN_DEALS:
        _begin_deal(new, now, verify_deck(deck), events)
    return new, events


def _time_out(state: GutsTable, now: float, events: list[Event]) -> None:
    """The seats that did not declare in time are out (in turn: the seat whose turn it was)."""
    deal = table.deal_of(state)
    late = [s for s in deal["players"] if str(s) not in deal["declarations"]]
    if deal["turn"] is not None:
        late = late[:1]
    for seat in late:
        deal["declarations"][str(seat)] = "out"
        deal["timeouts"].append(seat)
        events.append(
            {"type": "timeout", "data": {"seat": seat, "result": "out"}, "visible_to": None}
        )
        table.miss(state, seat, events)
    if deal["turn"] is not None:
        _advance_turn(state, now, events)
    else:
        _resolve(state, now, events)


def _resolve(state: GutsTable, now: float, events: list[Event]) -> None:
    deal = table.deal_of(state)
    deal["revealed"] = True
    deal["turn"] = None
    choices = {str(s): deal["declarations"][str(s)] for s in deal["players"]}
    events.append(
        {"type": "declarations_revealed", "data": {"choices": choices}, "visible_to": None}
    )
    ins = [s for s in deal["players"] if choices[str(s)] == "in"]
    if not ins:
        if state["options"]["wimp"]:
            _enter_showdown(state, deal["players"], "wimp", events)
            return
        if state["options"]["all_out_ante"]:
            state["next_ante"] = "all"
        carried: PotCarriedData = {"pot": state["pot"], "reason": "nobody_in"}
        events.append({"type": "pot_carried", "data": carried, "visible_to": None})
        table.end_deal(state, now, "nobody_in", events)
    elif len(ins) == 1 and not deal["ghost"]:
        _take_pot(state, ins, events)
        table.end_deal(state, now, "uncontested", events)
    else:
        _enter_showdown(state, ins, "showdown", events)


def _enter_showdown(state: GutsTable, seats: list[int], reason: str, events: list[Event]) -> None:
    deal = table.deal_of(state)
    needed = {str(s): list(deal["hands"][str(s)]) for s in seats}
    if reason == "showdown" and deal["ghost"]:
        needed["ghost"] = list(deal["hands"]["ghost"])
    deal["ranking_needed"] = needed
    deal["showdown_reason"] = reason
    table.set_phase(state, SHOWDOWN, None, events)


# --------------------------------------------------------------------------- settling


verify_settle = table.verify_settle


def settle(
    state: GutsTable, ranks: Mapping[str, Ranked], now: float, in_place: bool = False
) -> Transition[GutsTable]:
    """Finish a showdown with the evaluator's ranks: show hands, move chips, end the deal
    (`in_place`: in `state` itself, as `on_deadline`)."""
    verify_settle(state, ranks, now)
    new = state if in_place else copy_state(state)
    events: list[Event] = []
    deal = table.deal_of(new)
    needed = deal["ranking_needed"] or {}
    deal["ranks"] = {
        key: {
            "strength": ranks[key].strength,
            "category": ranks[key].category,
            "description": ranks[key].description,
        }
        for key in needed
    }
    deal["shown"] = {key: list(cards) for key, cards in needed.items()}
    hands: dict[str, ShownHand] = {
        key: {"cards": list(needed[key]), **deal["ranks"][key]} for key in needed
    }
    shown: ShowdownData = {"reason": deal["showdown_reason"] or "showdown", "hands": hands}
    events.append({"type": "showdown", "data": shown, "visible_to": None})
    if deal["showdown_reason"] == "wimp":
        _settle_wimp(new, events)
        outcome = "wimp"
    else:
        outcome = _settle_showdown(new, events)
    table.end_deal(new, now, outcome, events)
    return new, events


def _strength(state: GutsTable, key: str) -> int:
    return table.deal_of(state)["ranks"][key]["strength"]


def _settle_wimp(state: GutsTable, events: list[Event]) -> None:
    players = table.deal_of(state)["players"]
    best = max(_strength(state, str(s)) for s in players)
    wimp = next(s for s in players if _strength(state, str(s)) == best)
    owed = _capped(state, wimp, state["options"]["ante"] * (len(players) - 1))
    events.append(
        {"type": "wimp_paid", "data": _pay_in(state, wimp, owed, "wimp"), "visible_to": None}
    )
    state["next_ante"] = "none"


def _settle_showdown(state: GutsTable, events: list[Event]) -> str:
    deal = table.deal_of(state)
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
    if losers and state["options"]["losers_pay"] == "worst":
        worst = min(strength[s] for s in losers)
        losers = [s for s in losers if strength[s] == worst]
    if winners:
        _take_pot(state, winners, events)
    else:
        carried: PotCarriedData = {"pot": state["pot"], "reason": "ghost"}
        events.append({"type": "pot_carried", "data": carried, "visible_to": None})
    for seat in losers:
        payment = _pay_in(state, seat, _capped(state, seat, pot_before), "loss")
        if payment["amount"] > 0:
            state["seats"][str(seat)]["skip_ante"] = True
        events.append({"type": "paid", "data": payment, "visible_to": None})
    if not winners:
        return "ghost"
    return "won" if len(winners) == 1 else "split"


def _take_pot(state: GutsTable, winners: list[int], events: list[Event]) -> None:
    shares = table.split_evenly(state["pot"], len(winners))
    cap = _per_deal_cap(state)
    if cap is not None:
        shares = [min(share, cap) for share in shares]
    for seat, share in zip(winners, shares, strict=True):
        table.pay_out(state, seat, share, "win")
    if len(winners) == 1:
        won: PotWonData = {"seat": winners[0], "amount": shares[0], "pot": state["pot"]}
        events.append({"type": "pot_won", "data": won, "visible_to": None})
    else:
        table.tell_split(state, winners, shares, "tie", events)


# --------------------------------------------------------------------------- views


def _public_deal(state: GutsTable, deal: GutsDeal) -> GutsDealView:
    sequential = state["options"]["declare"] == "sequential"
    public_choices = deal["revealed"] or sequential
    declared = [s for s in deal["players"] if str(s) in deal["declarations"]]
    return {
        **table.deal_view(deal),
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
    }


def _pending(state: GutsTable) -> Pending | None:
    phase = state["phase"]
    if phase == DECLARING:
        deal = table.deal_of(state)
        if deal["turn"] is not None:
            seats = [deal["turn"]]
        else:
            seats = [s for s in deal["players"] if str(s) not in deal["declarations"]]
        return {"action": "declare", "seats": seats, "deadline": state["deadline"]}
    return table.pending_between(state)


def view(state: GutsTable, seat: int | None = None) -> TableView:
    """Return the table as `seat` (None for a spectator) may see it."""
    result, seated = table.view(state, seat)
    deal = state["deal"]
    if deal is not None:
        result["deal"] = _public_deal(state, deal)
    result["pending"] = _pending(state)
    if seated and seat is not None:
        mine = deal is not None and seat in deal["players"] and table.is_current_player(state, seat)
        you: GutsYou = {"seat": seat, "cards": None, "declaration": None}
        if mine and deal is not None:
            you["cards"] = list(deal["hands"][str(seat)])
            you["declaration"] = deal["declarations"].get(str(seat))
        result["you"] = you
    return result


# --------------------------------------------------------------------------- the game


class GutsGame(TableGame[GutsTable]):
    """Guts as a `Game`: the functions above, over Guts tables."""

    name = "guts"
    moves = frozenset({Start.name, Declare.name, Rebuy.name, Back.name})

    def own(self, state: TableState) -> GutsTable:
        """The state as a Guts table (TypeError for another game's)."""
        if state["game"] != "guts":
            raise other_game(self.name, state)
        return state

    def verify_own(self, state: GutsTable, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make this deal's `move` now."""
        match move:
            case Declare(choice=choice):
                verify_declare(state, seat, choice, now)
            case _:
                raise unsupported(self.name, self.moves, move)

    def act_own(self, state: GutsTable, seat: int, move: Move, now: float) -> Transition[GutsTable]:
        """Apply this deal's `move` by `seat` (verified first)."""
        match move:
            case Declare(choice=choice):
                return declare(state, seat, choice, now)
            case _:
                raise unsupported(self.name, self.moves, move)

    def hand_rules(self, state: TableState) -> HandRules:
        """Two- or three-card Guts hands, as the table deals them."""
        return HandRules(f"guts{self.own(state)['options']['cards']}")


GAME = GutsGame(
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
