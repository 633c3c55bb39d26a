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

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gateway.games.common import FULL_DECK, copy_state

Table = dict[str, Any]
Data = Mapping[str, Any]

# Paiute deals a wild card and starts the discard pile from the deck besides the hands.
_PAIUTE_CARDS_OFF_HANDS = 2
_PAIUTE_HAND_SIZE = 5


class ReplayError(ValueError):
    """The event log contradicts itself or holds an event this fold does not know."""


def empty_table() -> Table:
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


def replay(events: Iterable[Mapping[str, Any]]) -> Table:
    """Fold a complete event log, in id order, into the table it describes."""
    table = empty_table()
    for item in events:
        apply_event(table, item)
    return table


def apply_event(table: Table, item: Mapping[str, Any]) -> None:
    """Apply one event to a table summary in place; ReplayError if it does not fit."""
    kind = item.get("type")
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        raise ReplayError(f"Unknown event type {kind!r}.")
    data = item.get("data") or {}
    try:
        handler(table, data)
    except ReplayError:
        raise
    except (KeyError, ValueError, TypeError, AttributeError) as error:
        detail = f"Event {kind!r} {dict(data)!r} does not fit the table: {error!r}."
        raise ReplayError(detail) from error


def summary(state: Mapping[str, Any]) -> Table:
    """The part of a stored table state that its event log determines (see `replay`)."""
    table = {
        key: state[key] for key in empty_table() if key not in ("seats", "deal", "chips_to_house")
    }
    table["chips_to_house"] = state.get("chips_to_house", 0)
    table["seats"] = {
        key: {name: record[name] for name in ("name", "stack", "status", "leaving")}
        | {"away": bool(record.get("away", False))}
        for key, record in state["seats"].items()
    }
    deal = state["deal"]
    table["deal"] = None
    if deal is None:
        return table
    shown = {
        "number": deal["number"],
        "dealer": deal["dealer"],
        "players": list(deal["players"]),
        "turn": deal["turn"],
        "hands": {key: list(cards) for key, cards in deal["hands"].items() if key != "ghost"},
        "shown": copy_state(deal["shown"]),
        "outcome": deal["outcome"],
        "ended": deal["ended"],
    }
    if "declarations" in deal:
        shown["declarations"] = dict(deal["declarations"])
    else:
        drawn = deal["drawn"]
        shown.update(
            {
                "wild_card": deal["wild_card"],
                "discard_pile": list(deal["discard_pile"]),
                "stock_size": len(deal["stock"]),
                "reshuffles": deal["reshuffles"],
                "drawn": None if drawn is None else dict(drawn),
                "caller": deal["caller"],
                "claims": copy_state(deal["claims"]),
            }
        )
    table["deal"] = shown
    return table


# --------------------------------------------------------------------------- helpers


def _seat(table: Table, seat: object) -> dict[str, Any]:
    record = table["seats"].get(str(seat))
    if record is None:
        raise ReplayError(f"Seat {seat!r} is not occupied.")
    result: dict[str, Any] = record
    return result


def _deal(table: Table) -> dict[str, Any]:
    deal = table["deal"]
    if deal is None:
        raise ReplayError("No deal has started.")
    result: dict[str, Any] = deal
    return result


def _expect(what: str, stated: object, computed: object) -> None:
    if stated != computed:
        raise ReplayError(f"The log states {what} {stated!r}, the events add up to {computed!r}.")


def _pay_in(table: Table, data: Data) -> None:
    record = _seat(table, data["seat"])
    amount, to_pot, to_reserve = int(data["amount"]), int(data["to_pot"]), int(data["to_reserve"])
    _expect("the split of a payment", to_pot + to_reserve, amount)
    record["stack"] -= amount
    _expect(f"the stack of seat {data['seat']}", data["stack"], record["stack"])
    table["pot"] += to_pot
    table["reserve"] += to_reserve


def _pay_out(table: Table, seat: object, amount: int) -> None:
    _seat(table, seat)["stack"] += int(amount)
    table["pot"] -= int(amount)


def _take_from_hand(deal: dict[str, Any], seat: object, card: str) -> None:
    hand: list[str] = deal["hands"][str(seat)]
    if card not in hand:
        raise ReplayError(f"Seat {seat} does not hold {card}.")
    hand.remove(card)


# --------------------------------------------------------------------------- seats


def _seated(table: Table, data: Data) -> None:
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


def _rebought(table: Table, data: Data) -> None:
    record = _seat(table, data["seat"])
    record["stack"] += int(data["amount"])
    table["chips_bought"] += int(data["amount"])
    _expect(f"the stack of seat {data['seat']}", data["stack"], record["stack"])


def _leaving(table: Table, data: Data) -> None:
    _seat(table, data["seat"])["leaving"] = True


def _cashed_out(table: Table, data: Data) -> None:
    record = _seat(table, data["seat"])
    _expect(f"the cash-out of seat {data['seat']}", data["amount"], record["stack"])
    table["chips_cashed"] += int(data["amount"])


def _reserve_to_house(table: Table, data: Data) -> None:
    amount = int(data["amount"])
    _expect("the reserve of a closed table", amount, table["reserve"])
    table["reserve"] = 0
    table["chips_to_house"] += amount


def _left(table: Table, data: Data) -> None:
    _seat(table, data["seat"])
    del table["seats"][str(data["seat"])]


def _game_started(table: Table, data: Data) -> None:
    table["game_number"] = int(data["game_number"])
    table["game_in_progress"] = True
    for seat in data["players"]:
        _seat(table, seat)["status"] = "playing"


def _game_ended(table: Table, data: Data) -> None:
    table["game_in_progress"] = False


def _away(table: Table, data: Data) -> None:
    _seat(table, data["seat"])["away"] = True


def _back(table: Table, data: Data) -> None:
    _seat(table, data["seat"])["away"] = False


# --------------------------------------------------------------------------- deals


def _deal_started(table: Table, data: Data) -> None:
    players = [int(seat) for seat in data["players"]]
    deal: dict[str, Any] = {
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
        deal.update(
            {
                "wild_card": None,
                "discard_pile": [],
                "stock_size": len(FULL_DECK) - dealt,
                "reshuffles": 0,
                "drawn": None,
                "caller": None,
                "claims": {},
            }
        )
    table["deal"] = deal
    table["hand_number"] = deal["number"]
    table["dealer"] = data["dealer"]


def _ante(table: Table, data: Data) -> None:
    _pay_in(table, data)


def _reserve_opened(table: Table, data: Data) -> None:
    amount = int(data["amount"])
    table["reserve"] -= amount
    table["pot"] += amount
    _expect("the pot", data["pot"], table["pot"])
    _expect("the reserve", data["reserve"], table["reserve"])


def _cards_dealt(table: Table, data: Data) -> None:
    _deal(table)["hands"][str(data["seat"])] = list(data["cards"])


def _phase(table: Table, data: Data) -> None:
    table["phase"] = data["phase"]
    table["deadline"] = data["deadline"]
    if data["phase"] == "waiting" and not table["game_in_progress"]:
        # a running game waits for its away players with its seats still in it
        for record in table["seats"].values():
            record["status"] = "waiting"
    if data["phase"] == "showdown" and table["deal"] is not None:
        table["deal"]["turn"] = None
        if "drawn" in table["deal"]:
            table["deal"]["drawn"] = None


def _turn(table: Table, data: Data) -> None:
    deal = _deal(table)
    deal["turn"] = data["seat"]
    table["deadline"] = data["deadline"]
    if "drawn" in deal:
        deal["drawn"] = None


def _turn_held(table: Table, data: Data) -> None:
    if _deal(table)["turn"] != data["seat"]:
        raise ReplayError(f"turn_held for seat {data['seat']}, whose turn it is not")
    table["deadline"] = data["deadline"]


def _declared(table: Table, data: Data) -> None:
    if "choice" in data:
        _deal(table)["declarations"][str(data["seat"])] = data["choice"]


def _your_declaration(table: Table, data: Data) -> None:
    _deal(table)["declarations"][str(data["seat"])] = data["choice"]


def _declarations_revealed(table: Table, data: Data) -> None:
    deal = _deal(table)
    _expect("the declarations", dict(data["choices"]), deal["declarations"])
    deal["turn"] = None


def _timeout(table: Table, data: Data) -> None:
    deal = _deal(table)
    if "declarations" in deal:
        deal["declarations"][str(data["seat"])] = data["result"]


def _showdown(table: Table, data: Data) -> None:
    deal = _deal(table)
    for key, hand in data["hands"].items():
        deal["shown"][key] = list(hand["cards"])


def _pot_won(table: Table, data: Data) -> None:
    _pay_out(table, data["seat"], data["amount"])
    _expect("the pot", data["pot"], table["pot"])


def _pot_split(table: Table, data: Data) -> None:
    for share in data["shares"]:
        _pay_out(table, share["seat"], share["amount"])
    _expect("the pot", data["pot"], table["pot"])


def _paid(table: Table, data: Data) -> None:
    _pay_in(table, data)


def _deal_ended(table: Table, data: Data) -> None:
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


def _wild_card(table: Table, data: Data) -> None:
    _deal(table)["wild_card"] = data["card"]


def _discard_started(table: Table, data: Data) -> None:
    _deal(table)["discard_pile"] = [data["card"]]


def _drew(table: Table, data: Data) -> None:
    deal = _deal(table)
    if data["source"] == "discard":
        pile: list[str] = deal["discard_pile"]
        if not pile or pile[-1] != data["card"]:
            raise ReplayError(f"{data['card']} is not on top of the discard pile.")
        pile.pop()
        deal["hands"][str(data["seat"])].append(data["card"])
        deal["drawn"] = {"card": data["card"], "source": "discard"}
    else:
        if deal["stock_size"] < 1:
            raise ReplayError("A card was drawn from an empty stock.")
        deal["stock_size"] -= 1
        deal["drawn"] = {"card": None, "source": "stock"}


def _drew_card(table: Table, data: Data) -> None:
    deal = _deal(table)
    deal["hands"][str(data["seat"])].append(data["card"])
    deal["drawn"] = {"card": data["card"], "source": "stock"}


def _discarded(table: Table, data: Data) -> None:
    deal = _deal(table)
    _take_from_hand(deal, data["seat"], data["card"])
    deal["discard_pile"].append(data["card"])
    deal["drawn"] = None


def _called(table: Table, data: Data) -> None:
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


def _reshuffled(table: Table, data: Data) -> None:
    deal = _deal(table)
    _expect("the stock before a reshuffle", 0, deal["stock_size"])
    pile: list[str] = deal["discard_pile"]
    deal["reshuffles"] = int(data["number"])
    deal["stock_size"] = int(data["stock"])
    _expect("the size of the reshuffled stock", deal["stock_size"], len(pile) - 1)
    deal["discard_pile"] = pile[-1:]


def _deal_void(table: Table, data: Data) -> None:
    _deal(table)["drawn"] = None


def _no_change(table: Table, data: Data) -> None:
    """Events that only announce what other events (or nothing on the table) record."""


_HANDLERS: dict[str, Callable[[Table, Data], None]] = {
    "table_created": _no_change,
    # An idle table closes once every seat has cashed out (`cashed_out` and `left` above).
    "table_closed": _no_change,
    # and a closed table's reserve goes to the house
    "reserve_to_house": _reserve_to_house,
    "seated": _seated,
    "rebought": _rebought,
    "leaving": _leaving,
    "cashed_out": _cashed_out,
    "left": _left,
    "game_started": _game_started,
    "game_ended": _game_ended,
    "away": _away,
    "back": _back,
    "deal_started": _deal_started,
    "reserve_opened": _reserve_opened,
    "ante": _ante,
    "ante_skipped": _no_change,
    "cards_dealt": _cards_dealt,
    "dealt": _no_change,
    "phase": _phase,
    "turn": _turn,
    "turn_held": _turn_held,
    "declared": _declared,
    "your_declaration": _your_declaration,
    "timeout": _timeout,
    "declarations_revealed": _declarations_revealed,
    "showdown": _showdown,
    "pot_won": _pot_won,
    "pot_split": _pot_split,
    "pot_carried": _no_change,
    "paid": _paid,
    "wimp_paid": _paid,
    "deal_ended": _deal_ended,
    "wild_card": _wild_card,
    "discard_started": _discard_started,
    "drew": _drew,
    "drew_card": _drew_card,
    "discarded": _discarded,
    "called": _called,
    "laid_down": _called,
    "reshuffled": _reshuffled,
    "deal_void": _deal_void,
}
