"""Session time limits and reality checks at a table (no I/O).

A player's session begins with their first buy-in a day (24 hours) after the last one
began. With a time limit, once it is up the player's seats leave after their deal and
the wallet's script refuses their buy-ins and rebuys until a day after the session
began; with reality checks, every N minutes each seat of theirs gets a private
`reality_check` event (time played this session, the seat's result at this table). The
table keeps each player's session clock in its `accounts` (`SessionClock`), set when
they sit, and its schedule wakes the clock for them (docs/players.md, "Sessions").

The settings change as the money limits do (`api.service.limits`): a stricter setting
(a new one, a shorter limit, checks closer together) applies at once; a looser one (a
longer limit, checks further apart, a removal) waits a cooling period, then applies
only once the player confirms it (`change_settings`, `confirm_setting`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

from api.games.common import RuleError, copy_state
from api.games.events import Event, RealityCheckData, SessionLimitData
from api.games.state import SessionClock, TableState
from api.service.dispatch import game_of
from api.service.limits import LimitError

DAY = 86_400.0
LIMIT_MINUTES = (1, 1440)
CHECK_MINUTES = (1, 240)
# the settings a player chooses, each with its bounds in minutes (None: off)
SETTINGS = {"limit_minutes": LIMIT_MINUTES, "reality_check_minutes": CHECK_MINUTES}


class SettingPending(TypedDict):
    """A looser setting waiting (`value` None: the setting's removal): asked when, from when."""

    value: int | None
    asked_at: float
    from_at: float


@dataclass(frozen=True)
class SettingsChange:
    """The settings after a change, the changes waiting, and whether all applied now."""

    settings: dict[str, int | None]
    pending: dict[str, SettingPending]
    applied: bool


def stricter(current: int | None, asked: int | None) -> bool:
    """Whether `asked` is as strict as `current` or stricter: the same, a new setting, or
    fewer minutes (a shorter session, checks closer together)."""
    return asked == current or (asked is not None and (current is None or asked < current))


def change_settings(
    settings: Mapping[str, int | None],
    pending: Mapping[str, SettingPending],
    asked: Mapping[str, int | None],
    now: float,
    cooling: float,
) -> SettingsChange:
    """The player asks for some settings (a name left out keeps its value): a stricter one
    applies at once and cancels a looser change of it waiting; a looser one waits
    `cooling` seconds and the player's confirmation, the setting staying as it was."""
    new_settings, new_pending, applied = dict(settings), dict(pending), True
    for name, value in asked.items():
        if stricter(settings.get(name), value):
            new_settings[name] = value
            new_pending.pop(name, None)
        else:
            new_pending[name] = {"value": value, "asked_at": now, "from_at": now + cooling}
            applied = False
    return SettingsChange(new_settings, new_pending, applied)


def confirm_setting(
    settings: Mapping[str, int | None],
    pending: Mapping[str, SettingPending],
    name: str,
    now: float,
) -> SettingsChange:
    """The player confirms the looser change of `name` waiting, once its cooling is over;
    LimitError nothing_to_confirm or limit_cooling (with when) otherwise."""
    waiting = pending.get(name)
    if waiting is None:
        raise LimitError("nothing_to_confirm")
    if now < waiting["from_at"]:
        raise LimitError("limit_cooling", waiting["from_at"])
    new_pending = {key: value for key, value in pending.items() if key != name}
    return SettingsChange({**settings, name: waiting["value"]}, new_pending, True)


def session_clock(
    limit_minutes: int | None, check_minutes: int | None, started: float | None, now: float
) -> SessionClock | None:
    """The clock of a session that began at `started` (None, or a day ago: it begins
    now), with its limit and reality checks; None without either."""
    if limit_minutes is None and check_minutes is None:
        return None
    if started is None or now >= started + DAY:
        started = now
    every = None if check_minutes is None else check_minutes * 60.0
    next_check = None
    if every is not None:
        next_check = started + every * (math.floor((now - started) / every) + 1)
    until = None if limit_minutes is None else started + limit_minutes * 60.0
    return {"started": started, "until": until, "every": every, "next_check": next_check}


def _seated(state: TableState) -> list[tuple[str, int, SessionClock]]:
    """(account, seat, clock) of every seated player with a session clock."""
    seats = {record["player_id"]: int(key) for key, record in state["seats"].items()}
    found = []
    for account, entry in (state.get("accounts") or {}).items():
        clock = entry.get("session")
        if clock is None:
            continue
        seat = next((seats[p] for p in entry["players"] if p in seats), None)
        if seat is not None:
            found.append((account, seat, clock))
    return found


def next_due(state: TableState) -> float | None:
    """When the table's next reality check or session limit is due, if any."""
    times = []
    for _, seat, clock in _seated(state):
        if clock["next_check"] is not None:
            times.append(clock["next_check"])
        if clock["until"] is not None and not state["seats"][str(seat)]["leaving"]:
            times.append(clock["until"])
    return min(times, default=None)


def apply_due(state: TableState, now: float) -> tuple[TableState, list[Event]]:
    """The reality checks and session limits due by `now`: private events, and the seats
    whose time is up leaving (now, or after their deal)."""
    due = [
        (account, seat, clock)
        for account, seat, clock in _seated(state)
        if (clock["next_check"] is not None and clock["next_check"] <= now)
        or (clock["until"] is not None and clock["until"] <= now)
    ]
    if not due:
        return state, []
    state = copy_state(state)
    events: list[Event] = []
    for account, seat, _ in due:
        clock = SessionClock(**(state.get("accounts") or {})[account]["session"])
        record = state["seats"][str(seat)]
        played = now - clock["started"]
        if clock["next_check"] is not None and clock["next_check"] <= now:
            check: RealityCheckData = {
                "seat": seat,
                "played_seconds": played,
                "net": record["stack"] - record["bought_in"],
            }
            events.append({"type": "reality_check", "data": check, "visible_to": [seat]})
            every = clock["every"] or DAY
            clock["next_check"] += every * (math.floor((now - clock["next_check"]) / every) + 1)
        if clock["until"] is not None and clock["until"] <= now and not record["leaving"]:
            limit: SessionLimitData = {"seat": seat, "played_seconds": played}
            events.append({"type": "session_limit", "data": limit, "visible_to": [seat]})
            clock["until"] = None  # told once; the wallet refuses the next buy-in
            try:
                left = game_of(state).leave(state, seat, now)
                state, events = left.state, events + left.events
            except RuleError:
                pass  # already leaving
        (state.get("accounts") or {})[account]["session"] = clock
    return state, events
