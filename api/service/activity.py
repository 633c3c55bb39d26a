"""A player's activity per UTC day, for the operator's view (pure, no I/O).

From the wallet's entries: deposits and withdrawals, buy-ins and rebuys, cash-outs, the
net result at the tables (cash-outs less buy-ins), and the time played, a seat's time
running from its buy-in to its cash-out at the same table, split across the days it
spans (a seat with no cash-out, held still or gone broke, runs to the end of the last
deal the player played there); and from the player's deal index, the deals played.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, TypedDict

DAY = 86_400


class Day(TypedDict):
    """One UTC day of a player's activity."""

    day: str
    deposits: int
    withdrawals: int
    buy_ins: int
    cash_outs: int
    net: int
    seconds_played: float
    deals: int


def day_of(at: float) -> str:
    """The UTC day of a time, as YYYY-MM-DD."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def _empty(day: str) -> Day:
    return {
        "day": day,
        "deposits": 0,
        "withdrawals": 0,
        "buy_ins": 0,
        "cash_outs": 0,
        "net": 0,
        "seconds_played": 0.0,
        "deals": 0,
    }


def _spread(days: dict[str, Day], start: float, end: float, since: float) -> None:
    """Add the time from `start` to `end` to the days it spans, from `since` on."""
    start = max(start, since)
    while start < end:
        boundary = (int(start) // DAY + 1) * DAY
        piece = min(end, boundary) - start
        found = days.get(day_of(start))
        if found is not None:
            found["seconds_played"] += piece
        start = min(end, boundary)


def activity(
    entries: Iterable[Mapping[str, Any]],
    deals: Iterable[tuple[str, float]],
    since: float,
    now: float,
) -> list[Day]:
    """Every day from `since` to `now`, newest first: the wallet `entries` (any order)
    and the player's `deals` ((table id, when it ended)) counted on their day."""
    deals = list(deals)
    last_deal: dict[str, float] = {}
    for place, ended in deals:
        last_deal[place] = max(ended, last_deal.get(place, ended))
    days: dict[str, Day] = {}
    at = float(int(since) // DAY * DAY)
    while at <= now:
        days[day_of(at)] = _empty(day_of(at))
        at += DAY
    seated: dict[str, float] = {}  # table -> when its seat was bought
    for entry in sorted(entries, key=lambda item: float(item["at"])):
        when, kind, amount = float(entry["at"]), entry["kind"], int(entry["amount"])
        table = (entry.get("cause") or {}).get("table")
        if kind == "buy_in" and table is not None:
            seated.setdefault(table, when)
        elif kind == "cash_out" and table in seated:
            _spread(days, seated.pop(table), when, since)
        found = days.get(day_of(when)) if when >= since else None
        if found is None:
            continue
        if kind == "deposit":
            found["deposits"] += amount
        elif kind == "withdrawal":
            found["withdrawals"] += amount
        elif kind in ("buy_in", "rebuy"):
            found["buy_ins"] += amount
            found["net"] -= amount
        elif kind == "cash_out":
            found["cash_outs"] += amount
            found["net"] += amount
    for place, bought in seated.items():
        _spread(days, bought, min(now, last_deal.get(place, bought)), since)
    for _, ended in deals:
        found = days.get(day_of(ended)) if ended >= since else None
        if found is not None:
            found["deals"] += 1
    return sorted(days.values(), key=lambda day: day["day"], reverse=True)
