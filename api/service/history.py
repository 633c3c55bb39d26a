"""What a change keeps of a table's story: its events as stored, and a finished deal's history.

A change's events are numbered after the table's last one and stamped with the deal
they belong to; the change that ends a deal also writes that deal's hand history (its
outcome, showdown, pot flow and the sealed deck its fairness proof opens,
`api.service.queries.TableQueries.hand_history`). Players who left stay listed in the
table's `accounts` while a kept history holds a deal they played, so that they still
read their own cards in it. All of it is pure: the change loop (`api.service.changes`)
writes what these functions return.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from api import jsonio
from api.adapters.store import HandRecord, ShownHand, TableRecord, hand_key
from api.games.events import Event
from api.games.state import GutsDeal, PaiuteDeal, TableState

# events that open the next deal's story: a deal's history stops before them
NEXT_DEAL_EVENTS = ("game_started", "deal_started")


def next_deal_start(types: Sequence[str]) -> int | None:
    """Where, in the event types of a change that ends a deal and opens another, the
    next deal's story begins (its new game or `deal_started`); None for any other change."""
    if "deal_started" not in types:
        return None
    opened = len(types) - 1 - types[::-1].index("deal_started")
    ends = [i for i in range(opened) if types[i] == "deal_ended"]
    if not ends:
        return None
    return next(i for i in range(ends[-1] + 1, opened + 1) if types[i] in NEXT_DEAL_EVENTS)


def stored_events(
    record: TableRecord, state: TableState, events: list[Event], now: float
) -> list[Event]:
    """Number the events and turn seat audiences into player audiences.

    Each event is stamped with the deal it belongs to: a change that ends a deal and
    deals the next stamps the events before the next deal's story the ended deal's."""
    types = [item["type"] for item in events]
    boundary = next_deal_start(types)
    ended_hand = record.state.get("hand_number", 0)
    stored: list[Event] = []
    for offset, item in enumerate(events, start=1):
        audience = None
        seats = item.get("visible_to")
        if seats is not None:
            audience = []
            for seat in seats:
                holder = state["seats"].get(str(seat)) or record.state["seats"].get(str(seat))
                if holder is not None:
                    audience.append(holder["player_id"])
        kept = {
            "id": record.seq + offset,
            "type": item["type"],
            "data": item["data"],
            "at": now,
            "hand_number": (
                ended_hand if boundary is not None and offset <= boundary else state["hand_number"]
            ),
            "audience": audience,
        }
        # the same kind and data as `item`, which mypy cannot follow through the new dict
        stored.append(cast(Event, kept))
    return stored


def deal_history(
    record: TableRecord,
    state: TableState,
    stored: list[Event],
    deal: GutsDeal | PaiuteDeal | None,
) -> tuple[dict[str, tuple[str, int]], HandRecord | None]:
    """The hand history of a deal that this change finished, if any: what the commit
    writes (the history's JSON under its key) and the history itself.

    A deal's history runs from the first event of the change that opened it (an
    abandoned game's split and departures, the new game) to the last event of the
    change that ended it: the end of the game, cash-outs and departures included,
    stopping short of a next game or deal that change starts. A change that opens a
    deal notes that deal's first event in the state (`deal_first_event`).
    """
    types = [item["type"] for item in stored]
    # the first event of the deal that was open when this change began
    first_event = state.get("deal_first_event", 1)
    opened = None
    if "deal_started" in types:
        # a deal's story starts with the change that opens it: the end of a game too few
        # could go on with, its departures and the new game come before `deal_started`
        opened = len(types) - 1 - types[::-1].index("deal_started")
        first = next_deal_start(types) or 0
        state["deal_first_event"] = stored[first]["id"]
    ended = types.index("deal_ended") if "deal_ended" in types else None
    if deal is None or ended is None:
        return {}, None
    if opened is not None and opened < ended:
        first_event = state["deal_first_event"]  # the deal this change opened ended
    boundary = next(
        (i for i in range(ended + 1, len(stored)) if types[i] in NEXT_DEAL_EVENTS),
        len(stored),
    )
    history = _history_record(record.table_id, state, deal, first_event, stored[boundary - 1])
    extra = {hand_key(record.table_id, deal["number"]): (jsonio.dumps(history), 0)}
    return extra, history


def _history_record(
    table_id: str,
    state: TableState,
    deal: GutsDeal | PaiuteDeal,
    first_event: int,
    last: Event,
) -> HandRecord:
    """A finished deal's hand history as it is stored (its events are read by id range)."""
    hands: dict[str, ShownHand] = {
        key: {"cards": deal["shown"].get(key), **rank} for key, rank in deal["ranks"].items()
    }
    wild_card: str | None = None
    reshuffles: list[list[str]] = []
    if "wild_card" in deal:  # a Paiute deal
        wild_card, reshuffles = deal["wild_card"], deal.get("reshuffle_orders", [])
    return {
        "table_id": table_id,
        "hand_number": deal["number"],
        "game_number": deal["game_number"],
        "dealer": deal["dealer"],
        "outcome": deal["outcome"],
        "showdown": {"reason": deal["showdown_reason"], "hands": hands} if deal["ranks"] else None,
        "pot_flow": deal["flow"],
        "wild_card": wild_card,
        # sealed: only `hand_history` reads it, to open each reader the cards it saw
        "sealed": {
            "deck": list(deal["deck"]),
            "salt": deal["salt"],
            "game": state["game"],
            "reshuffles": reshuffles,
        },
        "first_event": first_event,
        "last_event": last["id"],
    }


def departed_tokens(before: TableState, after: TableState) -> list[str]:
    """Token entries of players who are no longer seated: their tokens stop working."""
    present = {seat["player_id"] for seat in after["seats"].values()}
    return [
        f"player:{seat['player_id']}"
        for seat in before["seats"].values()
        if seat["player_id"] not in present
    ]


def note_departures(state: TableState, hand_number: int) -> None:
    """Mark the accounts whose seat this change ended with the deal they left at,
    `hand_number`.

    An account's entry stays while the table keeps a history of a deal it played, so
    that the player still reads their own cards in it (`forget_departed`).
    """
    accounts = state.get("accounts")
    if not accounts:
        return
    present = {seat["player_id"] for seat in state["seats"].values()}
    changed = None
    for account, entry in accounts.items():
        if entry["left"] is None and present.isdisjoint(entry["players"]):
            changed = changed or dict(accounts)
            changed[account] = {**entry, "left": hand_number}
    if changed is not None:
        state["accounts"] = changed


def forget_departed(state: TableState, first_hand: int) -> None:
    """Drop the accounts that left before the oldest deal the table still keeps."""
    accounts = state.get("accounts")
    if accounts:
        state["accounts"] = {
            account: entry
            for account, entry in accounts.items()
            if entry["left"] is None or entry["left"] >= first_hand
        }
