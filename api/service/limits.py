"""A player's deposit, buy-in and loss limits, as pure rules (no I/O).

A limit caps what a player may deposit, buy in (buy-ins and rebuys) or lose (buy-ins
and rebuys less cash-outs) over a rolling window of 24 hours, 7 days or 30 days. The
player sets their own and an operator may set theirs: the lowest applies. A player's
decrease (or a new limit) applies at once; an increase or a removal waits a cooling
period, then applies only once the player confirms it (docs/players.md, "Limits").

The wallet's script (`api/adapters/lua/wallet.lua`) enforces the limits that apply in the
same atomic step as the transfer; these rules say which apply, and what is used of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypedDict

KINDS = ("deposit", "buy_in", "loss")
WINDOWS: dict[str, int] = {"24h": 86_400, "7d": 7 * 86_400, "30d": 30 * 86_400}
LONGEST_WINDOW = max(WINDOWS.values())
MAX_LIMIT = 10**12
# the flows a wallet keeps for its limits: a deposit, a buy-in or rebuy, a cash-out
FLOW_DEPOSIT, FLOW_SPEND, FLOW_CASH = "d", "b", "c"


class Pending(TypedDict):
    """A player's increase or removal (`amount` None) waiting: asked when, from when."""

    amount: int | None
    asked_at: float
    from_at: float


class Limits(TypedDict):
    """A player's limits by slot ("<kind>:<window>"), theirs and the operator's, and the
    player's increases waiting; `version` grows with every change."""

    version: int
    player: dict[str, int]
    operator: dict[str, int]
    pending: dict[str, Pending]


class Flow(TypedDict):
    """One flow a limit counts: its kind (`FLOW_*`), amount and time."""

    tag: str
    amount: int
    at: float


@dataclass(frozen=True)
class Usage:
    """What a slot's window holds: used, and when its oldest counted flow leaves it."""

    used: int
    resets_at: float | None


class LimitError(Exception):
    """A limit change the rules refuse: `code` says which rule, `at` when it may be done."""

    def __init__(self, code: str, at: float | None = None) -> None:
        """`code`: invalid_limit, nothing_to_confirm or limit_cooling (until `at`)."""
        super().__init__(code)
        self.code = code
        self.at = at


@dataclass(frozen=True)
class LimitChange:
    """The limits after a change, and whether it applied now (False: it waits)."""

    limits: Limits
    applied: bool


def new_limits() -> Limits:
    """A player without limits."""
    return {"version": 0, "player": {}, "operator": {}, "pending": {}}


def slot_of(kind: object, window: object) -> str:
    """The slot of a kind and window; LimitError invalid_limit for any other."""
    if kind not in KINDS or window not in WINDOWS:
        raise LimitError("invalid_limit")
    return f"{kind}:{window}"


def valid_limit(amount: object) -> bool:
    """Whether `amount` is a limit: a whole number of chips from 0 to 10^12."""
    return type(amount) is int and 0 <= amount <= MAX_LIMIT


def effective(limits: Limits) -> dict[str, int]:
    """The limit that applies in each slot: the lowest of the player's and operator's."""
    slots = set(limits["player"]) | set(limits["operator"])
    return {
        slot: min(
            limits["player"].get(slot, MAX_LIMIT + 1), limits["operator"].get(slot, MAX_LIMIT + 1)
        )
        for slot in sorted(slots)
    }


def _changed(limits: Limits) -> Limits:
    return {
        "version": limits["version"] + 1,
        "player": dict(limits["player"]),
        "operator": dict(limits["operator"]),
        "pending": dict(limits["pending"]),
    }


def set_by_player(
    limits: Limits, slot: str, amount: int | None, now: float, cooling: float
) -> LimitChange:
    """The player sets a slot's limit (None removes it): a decrease or a new limit at
    once, an increase or a removal after `cooling` seconds and a confirmation."""
    new = _changed(limits)
    current = limits["player"].get(slot)
    if amount is not None and (current is None or amount <= current):
        new["player"][slot] = amount
        new["pending"].pop(slot, None)
        return LimitChange(new, True)
    if current is None:  # removing a limit there is not
        new["pending"].pop(slot, None)
        return LimitChange(new, True)
    new["pending"][slot] = {"amount": amount, "asked_at": now, "from_at": now + cooling}
    return LimitChange(new, False)


def confirm(limits: Limits, slot: str, now: float) -> LimitChange:
    """The player confirms a slot's waiting increase or removal once its cooling is over."""
    waiting = limits["pending"].get(slot)
    if waiting is None:
        raise LimitError("nothing_to_confirm")
    if now < waiting["from_at"]:
        raise LimitError("limit_cooling", waiting["from_at"])
    new = _changed(limits)
    new["pending"].pop(slot)
    if waiting["amount"] is None:
        new["player"].pop(slot, None)
    else:
        new["player"][slot] = waiting["amount"]
    return LimitChange(new, True)


def set_by_operator(limits: Limits, slot: str, amount: int | None) -> LimitChange:
    """The operator sets (or, with None, removes) their own limit of a slot, at once."""
    new = _changed(limits)
    if amount is None:
        new["operator"].pop(slot, None)
    else:
        new["operator"][slot] = amount
    return LimitChange(new, True)


def usage(flows: Iterable[Flow], now: float) -> dict[str, Usage]:
    """What each slot's window holds of `flows`: deposits, buy-ins, and buy-ins less
    cash-outs (never below zero) for losses; as the wallet's script counts them."""
    rows = sorted(flows, key=lambda flow: flow["at"])
    found: dict[str, Usage] = {}
    for window, seconds in WINDOWS.items():
        inside = [flow for flow in rows if flow["at"] > now - seconds]
        sums = dict.fromkeys((FLOW_DEPOSIT, FLOW_SPEND, FLOW_CASH), 0)
        for flow in inside:
            sums[flow["tag"]] = sums.get(flow["tag"], 0) + flow["amount"]
        for kind, used, tags in (
            ("deposit", sums[FLOW_DEPOSIT], (FLOW_DEPOSIT,)),
            ("buy_in", sums[FLOW_SPEND], (FLOW_SPEND,)),
            ("loss", max(0, sums[FLOW_SPEND] - sums[FLOW_CASH]), (FLOW_SPEND,)),
        ):
            oldest = next((flow["at"] for flow in inside if flow["tag"] in tags), None)
            found[f"{kind}:{window}"] = Usage(used, None if oldest is None else oldest + seconds)
    return found
