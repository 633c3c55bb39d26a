"""Rebuild a table from its event log, and the same summary from a stored state.

`replay(events)` folds a table's complete event log -- every stored event, the private
ones included, in id order -- into the part of the table that the events determine:
the seats (name, stack, status, leaving, away), the pot and the reserve, the chips bought and
cashed out, the phase and its deadline, the deal and game counters, the dealer, and of
the current or last deal: its players, whose turn it is, each seat's cards as the log
shows them, the cards shown at a showdown or a call, the declarations (Guts) and the
wild card, the discard pile, the stock's size, the reshuffles and the card drawn this
turn (Paiute). `summary(state)` extracts exactly that from a table's state, so a table
is consistent with its log when ``replay(log) == summary(state)``.

Events are read by their ``type`` and ``data`` only, so both the game modules' events
and the stored ones (with ``id``, ``at`` and ``audience``) can be replayed. Every event
that states a result (a stack after a payment, the pot after a win, the pot and reserve
at the end of a deal, a cash-out) is checked against what the fold computed, and an
unknown event type is refused: either raises `ReplayError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NotRequired, TypedDict

from api.games.common import FULL_DECK, copy_state
from api.games.events import (
    CashedOutData,
    ClaimData,
    DealEndedData,
    DealStartedData,
    Event,
    PaymentData,
    PhaseData,
    ReboughtData,
    ReserveOpenedData,
    ReshuffledData,
    SeatedData,
)
from api.games.state import Claim, Source, TableState

# Paiute deals a wild card and starts the discard pile from the deck besides the hands.
_PAIUTE_CARDS_OFF_HANDS = 2
_PAIUTE_HAND_SIZE = 5


class ReplayError(ValueError):
    """The event log contradicts itself or holds an event this fold does not know."""


class SeatSummary(TypedDict):
    """A seat as its events tell it."""

    name: str
    stack: int
    status: str
    leaving: bool
    away: bool


class DrawnSummary(TypedDict):
    """This turn's draw as the log tells it: from the stock, the card only to its drawer."""

    card: str | None
    source: Source


class DealSummary(TypedDict):
    """The current or last deal as its events tell it; each game's keys its own."""

    number: int
    dealer: int
    players: list[int]
    turn: int | None
    hands: dict[str, list[str]]
    shown: dict[str, list[str]]
    outcome: str | None
    ended: bool
    declarations: NotRequired[dict[str, str]]  # Guts
    wild_card: NotRequired[str | None]  # the rest: Paiute
    discard_pile: NotRequired[list[str]]
    stock_size: NotRequired[int]
    reshuffles: NotRequired[int]
    drawn: NotRequired[DrawnSummary | None]
    caller: NotRequired[int | None]
    claims: NotRequired[dict[str, Claim]]


class Summary(TypedDict):
    """The part of a table that its event log determines."""

    seats: dict[str, SeatSummary]
    pot: int
    reserve: int
    chips_bought: int
    chips_cashed: int
    chips_to_house: int
    phase: str
    deadline: float | None
    hand_number: int
    game_number: int
    game_in_progress: bool
    dealer: int | None
    deal: DealSummary | None


def empty_table() -> Summary:
    """The summary of a table before its first event: no seats, no chips, no deal."""
    return {
        "seats": {},
        "pot": 0,
        "reserve": 0,
        "chips_bought": 0,
        "chips_cashed": 0,
        "chips_to_house": 0,
        "phase": "waiting",
        "deadline": None,
        "hand_number": 0,
        "game_number": 0,
        "game_in_progress": False,
        "dealer": None,
        "deal": None,
    }


def replay(events: Iterable[Event]) -> Summary:
    """Fold a complete event log, in id order, into the table it describes."""
    table = empty_table()
    for item in events:
        apply_event(table, item)
    return table


def apply_event(table: Summary, item: Event) -> None:
    """Apply one event to a table summary in place; ReplayError if it does not fit."""
    kind = item.get("type")
    try:
        known = _seats(table, item) or _deals(table, item) or _turns(table, item)
    except ReplayError:
        raise
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        detail = f"Event {kind!r} {item.get('data')!r} does not fit the table: {error!r}."
        raise ReplayError(detail) from error
    if not known and kind not in _ANNOUNCEMENTS:
        raise ReplayError(f"Unknown event type {kind!r}.")


def summary(state: TableState) -> Summary:
    """The part of a stored table state that its event log determines (see `replay`)."""
    seats: dict[str, SeatSummary] = {
        key: {
            "name": record["name"],
            "stack": record["stack"],
            "status": record["status"],
            "leaving": record["leaving"],
            "away": record.get("away", False),
        }
        for key, record in state["seats"].items()
    }
    return {
        "seats": seats,
        "pot": state["pot"],
        "reserve": state["reserve"],
        "chips_bought": state["chips_bought"],
        "chips_cashed": state["chips_cashed"],
        "chips_to_house": state.get("chips_to_house", 0),
        "phase": state["phase"],
        "deadline": state["deadline"],
        "hand_number": state["hand_number"],
        "game_number": state["game_number"],
        "game_in_progress": state["game_in_progress"],
        "dealer": state["dealer"],
        "deal": _deal_summary(state),
    }


def _deal_summary(state: TableState) -> DealSummary | None:
    deal = state["deal"]
    if deal is None:
        return None
    shown: DealSummary = {
        "number": deal["number"],
        "dealer": deal["dealer"],
        "players": list(deal["players"]),
        "turn": deal["turn"],
        "hands": {key: list(cards) for key, cards in deal["hands"].items() if key != "ghost"},
        "shown": copy_state(deal["shown"]),
        "outcome": deal["outcome"],
        "ended": deal["ended"],
    }
    if state["game"] == "guts":
        guts = state["deal"]
        shown["declarations"] = {} if guts is None else dict(guts["declarations"])
        return shown
    paiute = state["deal"]
    if paiute is not None:
        drawn = paiute["drawn"]
        shown["wild_card"] = paiute["wild_card"]
        shown["discard_pile"] = list(paiute["discard_pile"])
        shown["stock_size"] = len(paiute["stock"])
        shown["reshuffles"] = paiute["reshuffles"]
        shown["drawn"] = (
            None if drawn is None else {"card": drawn["card"], "source": drawn["source"]}
        )
        shown["caller"] = paiute["caller"]
        shown["claims"] = copy_state(paiute["claims"])
    return shown


# --------------------------------------------------------------------------- helpers


def _seat(table: Summary, seat: object) -> SeatSummary:
    record = table["seats"].get(str(seat))
    if record is None:
        raise ReplayError(f"Seat {seat!r} is not occupied.")
    return record


def _deal(table: Summary) -> DealSummary:
    deal = table["deal"]
    if deal is None:
        raise ReplayError("No deal has started.")
    return deal


def _expect(what: str, stated: object, computed: object) -> None:
    if stated != computed:
        raise ReplayError(f"The log states {what} {stated!r}, the events add up to {computed!r}.")


def _pay_in(table: Summary, data: PaymentData) -> None:
    record = _seat(table, data["seat"])
    amount, to_pot, to_reserve = int(data["amount"]), int(data["to_pot"]), int(data["to_reserve"])
    _expect("the split of a payment", to_pot + to_reserve, amount)
    record["stack"] -= amount
    _expect(f"the stack of seat {data['seat']}", data["stack"], record["stack"])
    table["pot"] += to_pot
    table["reserve"] += to_reserve


def _pay_out(table: Summary, seat: object, amount: int) -> None:
    _seat(table, seat)["stack"] += int(amount)
    table["pot"] -= int(amount)


def _take_from_hand(deal: DealSummary, seat: object, card: str) -> None:
    hand = deal["hands"][str(seat)]
    if card not in hand:
        raise ReplayError(f"Seat {seat} does not hold {card}.")
    hand.remove(card)


# --------------------------------------------------------------------------- seats

# Events that only announce what other events (or nothing on the table) record: an idle
# table closes once every seat has cashed out (`cashed_out` and `left`).
_ANNOUNCEMENTS = frozenset(
    {"table_created", "table_closed", "ante_skipped", "dealt", "pot_carried"}
)


def _seats(table: Summary, item: Event) -> bool:
    """Apply an event of the seats and the games; False for another kind."""
    if item["type"] == "seated":
        _seated(table, item["data"])
    elif item["type"] == "rebought":
        _rebought(table, item["data"])
    elif item["type"] == "leaving":
        _seat(table, item["data"]["seat"])["leaving"] = True
    elif item["type"] == "cashed_out":
        _cashed_out(table, item["data"])
    elif item["type"] == "reserve_to_house":
        amount = int(item["data"]["amount"])
        _expect("the reserve of a closed table", amount, table["reserve"])
        table["reserve"] = 0
        table["chips_to_house"] += amount
    elif item["type"] == "left":
        _seat(table, item["data"]["seat"])
        del table["seats"][str(item["data"]["seat"])]
    elif item["type"] == "game_started":
        table["game_number"] = int(item["data"]["game_number"])
        table["game_in_progress"] = True
        for seat in item["data"]["players"]:
            _seat(table, seat)["status"] = "playing"
    elif item["type"] == "game_ended":
        table["game_in_progress"] = False
    elif item["type"] == "away" or item["type"] == "back":
        _seat(table, item["data"]["seat"])["away"] = item["type"] == "away"
    else:
        return False
    return True


def _seated(table: Summary, data: SeatedData) -> None:
    key = str(data["seat"])
    if key in table["seats"]:
        raise ReplayError(f"Seat {key} is taken already.")
    table["seats"][key] = {
        "name": data["name"],
        "stack": int(data["stack"]),
        "status": data["status"],
        "leaving": False,
        "away": False,
    }
    table["chips_bought"] += int(data["stack"])


def _rebought(table: Summary, data: ReboughtData) -> None:
    record = _seat(table, data["seat"])
    record["stack"] += int(data["amount"])
    table["chips_bought"] += int(data["amount"])
    _expect(f"the stack of seat {data['seat']}", data["stack"], record["stack"])


def _cashed_out(table: Summary, data: CashedOutData) -> None:
    record = _seat(table, data["seat"])
    _expect(f"the cash-out of seat {data['seat']}", data["amount"], record["stack"])
    table["chips_cashed"] += int(data["amount"])


# --------------------------------------------------------------------------- deals


def _deals(table: Summary, item: Event) -> bool:
    """Apply an event of a deal both games tell; False for another kind."""
    if item["type"] == "deal_started":
        _deal_started(table, item["data"])
    elif item["type"] == "ante" or item["type"] == "paid" or item["type"] == "wimp_paid":
        _pay_in(table, item["data"])
    elif item["type"] == "reserve_opened":
        _reserve_opened(table, item["data"])
    elif item["type"] == "cards_dealt":
        _deal(table)["hands"][str(item["data"]["seat"])] = list(item["data"]["cards"])
    elif item["type"] == "phase":
        _phase(table, item["data"])
    elif item["type"] == "turn":
        deal = _deal(table)
        deal["turn"] = item["data"]["seat"]
        table["deadline"] = item["data"]["deadline"]
        if "drawn" in deal:
            deal["drawn"] = None
    elif item["type"] == "declared" or item["type"] == "your_declaration":
        if "choice" in item["data"]:
            _deal(table)["declarations"][str(item["data"]["seat"])] = item["data"]["choice"]
    elif item["type"] == "timeout":
        deal = _deal(table)
        if "declarations" in deal:
            deal["declarations"][str(item["data"]["seat"])] = item["data"]["result"]
    elif item["type"] == "declarations_revealed":
        deal = _deal(table)
        _expect("the declarations", dict(item["data"]["choices"]), deal["declarations"])
        deal["turn"] = None
    elif item["type"] == "showdown":
        for key, hand in item["data"]["hands"].items():
            _deal(table)["shown"][key] = list(hand["cards"])
    else:
        return _payouts(table, item)
    return True


def _payouts(table: Summary, item: Event) -> bool:
    """Apply a pot's payout or a deal's end; False for another kind."""
    if item["type"] == "pot_won":
        _pay_out(table, item["data"]["seat"], item["data"]["amount"])
        _expect("the pot", item["data"]["pot"], table["pot"])
    elif item["type"] == "pot_split":
        for share in item["data"]["shares"]:
            _pay_out(table, share["seat"], share["amount"])
        _expect("the pot", item["data"]["pot"], table["pot"])
    elif item["type"] == "deal_ended":
        _deal_ended(table, item["data"])
    else:
        return False
    return True


def _deal_started(table: Summary, data: DealStartedData) -> None:
    players = [int(seat) for seat in data["players"]]
    deal: DealSummary = {
        "number": int(data["hand_number"]),
        "dealer": data["dealer"],
        "players": players,
        "turn": None,
        "hands": {str(seat): [] for seat in players},
        "shown": {},
        "outcome": None,
        "ended": False,
    }
    if "ghost" in data:
        deal["declarations"] = {}
    else:
        dealt = _PAIUTE_HAND_SIZE * len(players) + _PAIUTE_CARDS_OFF_HANDS
        deal["wild_card"] = None
        deal["discard_pile"] = []
        deal["stock_size"] = len(FULL_DECK) - dealt
        deal["reshuffles"] = 0
        deal["drawn"] = None
        deal["caller"] = None
        deal["claims"] = {}
    table["deal"] = deal
    table["hand_number"] = deal["number"]
    table["dealer"] = data["dealer"]


def _reserve_opened(table: Summary, data: ReserveOpenedData) -> None:
    amount = int(data["amount"])
    table["reserve"] -= amount
    table["pot"] += amount
    _expect("the pot", data["pot"], table["pot"])
    _expect("the reserve", data["reserve"], table["reserve"])


def _phase(table: Summary, data: PhaseData) -> None:
    table["phase"] = data["phase"]
    table["deadline"] = data["deadline"]
    if data["phase"] == "waiting" and not table["game_in_progress"]:
        # a running game waits for its away players with its seats still in it
        for record in table["seats"].values():
            record["status"] = "waiting"
    deal = table["deal"]
    if data["phase"] == "showdown" and deal is not None:
        deal["turn"] = None
        if "drawn" in deal:
            deal["drawn"] = None


def _deal_ended(table: Summary, data: DealEndedData) -> None:
    deal = _deal(table)
    _expect("the deal number", data["hand_number"], deal["number"])
    _expect("the pot", data["pot"], table["pot"])
    _expect("the reserve", data["reserve"], table["reserve"])
    deal["outcome"] = data["outcome"]
    deal["turn"] = None
    deal["ended"] = True
    if "drawn" in deal:
        deal["drawn"] = None


# --------------------------------------------------------------------------- Paiute turns


def _turns(table: Summary, item: Event) -> bool:
    """Apply an event of Paiute's turns; False for another kind."""
    if item["type"] == "wild_card":
        _deal(table)["wild_card"] = item["data"]["card"]
    elif item["type"] == "discard_started":
        _deal(table)["discard_pile"] = [item["data"]["card"]]
    elif item["type"] == "drew":
        _drew(table, item["data"]["seat"], item["data"]["source"], item["data"].get("card"))
    elif item["type"] == "drew_card":
        deal = _deal(table)
        deal["hands"][str(item["data"]["seat"])].append(item["data"]["card"])
        deal["drawn"] = {"card": item["data"]["card"], "source": "stock"}
    elif item["type"] == "discarded":
        deal = _deal(table)
        _take_from_hand(deal, item["data"]["seat"], item["data"]["card"])
        deal["discard_pile"].append(item["data"]["card"])
        deal["drawn"] = None
    elif item["type"] == "called" or item["type"] == "laid_down":
        _called(table, item["data"])
    elif item["type"] == "reshuffled":
        _reshuffled(table, item["data"])
    elif item["type"] == "deal_void":
        _deal(table)["drawn"] = None
    elif item["type"] == "turn_held":
        if _deal(table)["turn"] != item["data"]["seat"]:
            raise ReplayError(f"turn_held for seat {item['data']['seat']}, whose turn it is not")
        table["deadline"] = item["data"]["deadline"]
    else:
        return False
    return True


def _drew(table: Summary, seat: int, source: Source, card: str | None) -> None:
    deal = _deal(table)
    if source == "discard":
        pile = deal["discard_pile"]
        if card is None or not pile or pile[-1] != card:
            raise ReplayError(f"{card} is not on top of the discard pile.")
        pile.pop()
        deal["hands"][str(seat)].append(card)
        deal["drawn"] = {"card": card, "source": "discard"}
    else:
        if deal["stock_size"] < 1:
            raise ReplayError("A card was drawn from an empty stock.")
        deal["stock_size"] -= 1
        deal["drawn"] = {"card": None, "source": "stock"}


def _called(table: Summary, data: ClaimData) -> None:
    deal = _deal(table)
    seat = str(data["seat"])
    held = sorted(deal["hands"][seat])
    named = sorted([*data["cards"], *([data["discard"]] if data["discard"] is not None else [])])
    _expect(f"the cards of seat {seat}", named, held)
    deal["hands"][seat] = list(data["cards"])
    deal["shown"][seat] = list(data["cards"])
    deal["claims"][seat] = {
        "cards": list(data["cards"]),
        "discard": data["discard"],
        "category": data["category"],
        "description": data["description"],
    }
    if data["discard"] is not None:
        deal["discard_pile"].append(data["discard"])
    deal["drawn"] = None
    if deal["caller"] is None:
        deal["caller"] = data["seat"]


def _reshuffled(table: Summary, data: ReshuffledData) -> None:
    deal = _deal(table)
    _expect("the stock before a reshuffle", 0, deal["stock_size"])
    pile = deal["discard_pile"]
    deal["reshuffles"] = int(data["number"])
    deal["stock_size"] = int(data["stock"])
    _expect("the size of the reshuffled stock", deal["stock_size"], len(pile) - 1)
    deal["discard_pile"] = pile[-1:]
