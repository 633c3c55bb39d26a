"""A player's limits as the HTTP layer reads and sets them: the pure rules of
`api.service.limits` over the wallet's keys (`api.adapters.wallets`), where the wallet's
script enforces them in the same atomic step as each deposit, buy-in and rebuy."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import NotRequired, TypedDict, cast

from api import jsonio
from api.adapters.wallets import WalletStore
from api.errors import ApiError, Moment, problem
from api.games.state import SessionClock
from api.service import exclusions, limits, sessions
from api.service.exclusions import Exclusion, ExclusionError
from api.service.limits import (
    KINDS,
    LONGEST_WINDOW,
    WINDOWS,
    Flow,
    LimitChange,
    LimitError,
    Limits,
    Pending,
)
from api.service.sessions import SettingPending, SettingsChange


class LimitView(TypedDict):
    """One limit as a player or an operator reads it (docs/players.md#limits)."""

    kind: str
    window: str
    amount: int | None
    player: int | None
    operator: int | None
    pending: Pending | None
    used: int
    left: int | None
    resets_at: float | None


class LimitsView(TypedDict):
    """A player's limits; after a change, whether it applied now."""

    limits: list[LimitView]
    cooling_seconds: float
    applied: NotRequired[bool]


# a limits document changed by another request meanwhile is read again, at most this often
ATTEMPTS = 16
DEFAULT_COOLING_SECONDS = 86_400.0


class PlayerLimits:
    """Read, set and confirm players' limits; the operator's too."""

    def __init__(
        self,
        store: WalletStore,
        cooling: float = DEFAULT_COOLING_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Keep limits beside the wallets in `store`; an increase waits `cooling` seconds."""
        self.store = store
        self.cooling = cooling
        self.clock = clock

    def read(self, player: str) -> Limits:
        """The player's limits (none set: empty)."""
        _, raw, _ = self.store.limits(player)
        return limits.new_limits() if raw is None else jsonio.loads(raw)

    def view(self, player: str) -> LimitsView:
        """Every limit slot: what applies, the player's and the operator's, an increase
        waiting, and what the window holds (used, left, when its oldest flow leaves it)."""
        held = self.read(player)
        now = self.clock()
        applied = limits.effective(held)
        usage = limits.usage(self._flows(player, now), now)
        slots: list[LimitView] = []
        for kind in KINDS:
            for window in WINDOWS:
                slot = f"{kind}:{window}"
                amount = applied.get(slot)
                used = usage[slot]
                slots.append(
                    {
                        "kind": kind,
                        "window": window,
                        "amount": amount,
                        "player": held["player"].get(slot),
                        "operator": held["operator"].get(slot),
                        "pending": held["pending"].get(slot),
                        "used": used.used,
                        "left": None if amount is None else max(0, amount - used.used),
                        "resets_at": used.resets_at,
                    }
                )
        return {"limits": slots, "cooling_seconds": self.cooling}

    def set(self, player: str, body: Mapping[str, object], operator: bool) -> LimitsView:
        """Set one limit (`kind`, `window`, `amount`, null to remove): the player's, or with
        `operator` the operator's; the limits after it, and whether it applies now."""
        amount = body.get("amount")
        if amount is not None and not limits.valid_limit(amount):
            raise problem(
                "invalid_limit",
                "A limit is a whole number of chips from 0 to {max_limit}, or null to remove it.",
                field="amount",
                max_limit=limits.MAX_LIMIT,
            )
        assert amount is None or isinstance(amount, int)
        slot = _slot(body)
        now = self.clock()

        def change(held: Limits) -> LimitChange:
            if operator:
                return limits.set_by_operator(held, slot, amount)
            return limits.set_by_player(held, slot, amount, now, self.cooling)

        applied = self._apply(player, change)
        shown = self.view(player)
        shown["applied"] = applied
        return shown

    def confirm(self, player: str, body: Mapping[str, object]) -> LimitsView:
        """The player confirms a waiting increase or removal whose cooling is over."""
        slot = _slot(body)
        now = self.clock()
        self._apply(player, lambda held: limits.confirm(held, slot, now))
        shown = self.view(player)
        shown["applied"] = True
        return shown

    def _apply(self, player: str, change: Callable[[Limits], LimitChange]) -> bool:
        for _ in range(ATTEMPTS):
            version, raw, _ = self.store.limits(player)
            held = limits.new_limits() if raw is None else jsonio.loads(raw)
            try:
                done = change(held)
            except LimitError as error:
                raise _refusal(error) from None
            fields = {
                "doc": jsonio.dumps(done.limits),
                "effective": jsonio.dumps(limits.effective(done.limits)),
            }
            if self.store.write_limits(player, version, fields):
                return done.applied
        raise problem("conflict", "The limits changed too often meanwhile; try again.")

    # ------------------------------------------------------------ exclusions

    def exclusion(self, player: str) -> Exclusion | None:
        """The player's time-out or self-exclusion, the last one taken (None: never)."""
        _, _, raw = self.store.limits(player)
        return None if raw is None else cast(Exclusion, jsonio.loads(raw))

    def exclude(self, player: str, body: Mapping[str, object]) -> Exclusion:
        """Take a time-out or exclude oneself (`api.service.exclusions`); it cannot be
        shortened: 409 exclusion_shorter for one ending sooner than the one running."""
        now = self.clock()
        for _ in range(ATTEMPTS):
            version, _, raw = self.store.limits(player)
            current = None if raw is None else cast(Exclusion, jsonio.loads(raw))
            try:
                new = exclusions.asked(
                    body.get("kind"),
                    body.get("days"),
                    body.get("months"),
                    body.get("permanent"),
                    now,
                )
                taken = exclusions.extended(current, new, now)
            except ExclusionError as error:
                raise _exclusion_refusal(error, current) from None
            until = taken["until"]
            fields = {
                "exclusion": jsonio.dumps(taken),
                "excluded_until": "forever" if until is None else repr(until),
            }
            if self.store.write_limits(player, version, fields):
                self.store.note_excluded(player, until)
                return taken
        raise problem("conflict", "The limits changed too often meanwhile; try again.")

    # ------------------------------------------------------------ sessions

    def _session(
        self, player: str
    ) -> tuple[int, dict[str, int | None], dict[str, SettingPending], float | None]:
        """The hash's version, the player's session settings, the looser changes of them
        waiting, and their session's start."""
        fields = self.store.fields(
            player, "version", "session", "session_pending", "session_started"
        )
        version, settings, waiting, started = fields
        chosen: dict[str, int | None] = dict.fromkeys(sessions.SETTINGS)
        if settings:
            chosen.update(jsonio.loads(settings))
        pending: dict[str, SettingPending] = jsonio.loads(waiting) if waiting else {}
        return int(version or 0), chosen, pending, float(started) if started else None

    def session(self, player: str) -> dict[str, object]:
        """The player's session settings, the looser changes of them waiting, and the
        session running: when it began, the time played and, once its limit is up, until
        when no seat may be taken."""
        _, chosen, pending, started = self._session(player)
        now = self.clock()
        running = started is not None and now < started + sessions.DAY
        limit = chosen["limit_minutes"]
        blocked = None
        if running and started is not None and limit and now >= started + limit * 60:
            blocked = started + sessions.DAY
        return {
            **chosen,
            "pending": pending,
            "cooling_seconds": self.cooling,
            "started": started if running else None,
            "played_seconds": now - started if running and started is not None else 0.0,
            "blocked_until": blocked,
        }

    def set_session(self, player: str, body: Mapping[str, object]) -> dict[str, object]:
        """Set the session's time limit and reality-check interval (minutes; null: none; a
        member left out: as it is): stricter at once, looser once cooled and confirmed."""
        asked: dict[str, int | None] = {}
        for name, (low, high) in sessions.SETTINGS.items():
            if name not in body:
                continue
            value = body[name]
            if value is not None and not (type(value) is int and low <= value <= high):
                raise _invalid_session(name)
            asked[name] = value if isinstance(value, int) else None
        now = self.clock()
        return self._change_session(
            player,
            lambda chosen, pending: sessions.change_settings(
                chosen, pending, asked, now, self.cooling
            ),
        )

    def confirm_session(self, player: str, body: Mapping[str, object]) -> dict[str, object]:
        """The player confirms a looser session setting waiting, once its cooling is over."""
        name = body.get("setting")
        if not isinstance(name, str) or name not in sessions.SETTINGS:
            raise _invalid_session("setting")
        now = self.clock()
        return self._change_session(
            player, lambda chosen, pending: sessions.confirm_setting(chosen, pending, name, now)
        )

    def _change_session(
        self,
        player: str,
        change: Callable[[dict[str, int | None], dict[str, SettingPending]], SettingsChange],
    ) -> dict[str, object]:
        for _ in range(ATTEMPTS):
            version, chosen, pending, _ = self._session(player)
            try:
                done = change(chosen, pending)
            except LimitError as error:
                raise _refusal(error) from None
            limit = done.settings["limit_minutes"]
            fields = {
                "session": jsonio.dumps(done.settings),
                "session_pending": jsonio.dumps(done.pending),
                "session_limit": "" if limit is None else str(limit * 60),
            }
            if self.store.write_limits(player, version, fields):
                shown = self.session(player)
                shown["applied"] = done.applied
                return shown
        raise problem("conflict", "The limits changed too often meanwhile; try again.")

    def session_clock(self, player: str) -> SessionClock | None:
        """The session clock a seat taken now keeps at its table (None: no settings)."""
        _, chosen, _, started = self._session(player)
        limit, check = chosen["limit_minutes"], chosen["reality_check_minutes"]
        return sessions.session_clock(limit, check, started, self.clock())

    def excluded(self, limit: int) -> list[dict[str, object]]:
        """The players whose time-out or self-exclusion runs now, soonest to end first."""
        now = self.clock()
        listed: list[dict[str, object]] = []
        for player in self.store.excluded_players(now, limit):
            exclusion = self.exclusion(player)
            if exclusions.is_active(exclusion, now) and exclusion is not None:
                listed.append({"player": player, **exclusion})
        return listed

    def _flows(self, player: str, now: float) -> list[Flow]:
        found: list[Flow] = []
        for member, at in self.store.flows(player, now - LONGEST_WINDOW):
            _, tag, amount = member.rsplit(" ", 2)
            found.append({"tag": tag, "amount": int(amount), "at": at})
        return found


def _slot(body: Mapping[str, object]) -> str:
    try:
        return limits.slot_of(body.get("kind"), body.get("window"))
    except LimitError:
        raise problem(
            "invalid_limit",
            "A limit's kind is deposit, buy_in or loss, and its window 24h, 7d or 30d.",
            field="kind" if body.get("kind") not in KINDS else "window",
        ) from None


def _invalid_session(field: str) -> ApiError:
    return problem(
        "invalid_session",
        "A session's limit is 1 to 1440 minutes and its reality checks 1 to 240"
        " minutes apart (null: none).",
        field=field,
    )


def _exclusion_refusal(error: ExclusionError, current: Exclusion | None) -> ApiError:
    if error.code == "exclusion_shorter":
        return problem(
            "exclusion_shorter",
            "A time-out or self-exclusion cannot be shortened; the one running ends later.",
            extra={"exclusion": current},
        )
    return problem(
        "invalid_exclusion",
        "A time-out is 1 to 30 days (`days`); a self-exclusion 6 to 60 months (`months`)"
        " or for good (`permanent`: true).",
    )


def _refusal(error: LimitError) -> ApiError:
    if error.code == "limit_cooling":
        return problem(
            "limit_cooling",
            "This increase can be confirmed once its cooling period is over, at {from_at}.",
            extra={"from_at": error.at},
            from_at=Moment(error.at or 0),
        )
    return problem("nothing_to_confirm", "No increase or removal of this limit is waiting.")
