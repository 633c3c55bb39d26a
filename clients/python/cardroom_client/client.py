"""`Client`: the whole cardroom HTTP API as methods; `Seat`: one seat's moves.

A client sends one credential, as `Authorization: Bearer`: a player's key (`crk_...`),
an identity provider's JWT, or a seat token. Creating tables and taking seats need a
player's; a seat acts with its own token when it has one, else with the client's
credential.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVar, Union

import httpx

from cardroom_client.errors import CardroomError
from cardroom_client.fairness import FairnessReport, verify_fairness
from cardroom_client.models import (
    ActionResult,
    DealPage,
    EvaluatorGame,
    Event,
    EventPage,
    Exclusion,
    GutsOptions,
    HandHistory,
    HeldSeat,
    LeaveResult,
    LedgerEntry,
    LedgerPage,
    Limits,
    LobbyFilters,
    LobbyPage,
    MoveAccepted,
    NewKey,
    NewPlayer,
    Odds,
    PaiuteValuation,
    Player,
    RankedHand,
    Readiness,
    StreamTicket,
    Table,
    TableClosing,
    TableOptions,
    TableSummary,
)
from cardroom_client.sse import EventStream
from cardroom_client.transport import RetryPolicy, Transport

Choice = Literal["in", "out"]
Source = Literal["stock", "discard"]
# Union, not `|`: evaluated at run time, where Python 3.9 has no `|` of types
ETag = Union[str, Table]


def _etag_header(name: str, value: ETag | None) -> dict[str, str]:
    """`{name: the ETag}` for a conditional request, or no header without one."""
    if value is None:
        return {}
    return {name: value if isinstance(value, str) else value.etag}


def _events(items: Sequence[Mapping[str, Any]]) -> list[Event]:
    return [Event.from_json(item) for item in items]


class Client:
    """A cardroom gateway at `base_url`; one instance serves any number of threads.

    `credential` (a player's key, a JWT or a seat token) is sent with every API
    request that no seat token of its own goes with; without one the client is
    anonymous (it may read, and create a player in the gateway's open mode).
    Connections are pooled and reused. Every write to a table carries a fresh
    Idempotency-Key, kept across its retries; see `RetryPolicy` for what is retried.
    Failures raise `CardroomError` subclasses. Use it as a context manager or call
    `close`.
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        credential: str | None = None,
        timeout: float = 10.0,
        connect_timeout: float = 5.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        limits: httpx.Limits | None = None,
        verify: bool | str = True,
    ) -> None:
        """Talk to `base_url`; `timeout` seconds per read (long polls add their wait)."""
        self.credential = credential
        self.retry = retry or RetryPolicy()
        self.transport = Transport(
            base_url,
            timeout=timeout,
            connect_timeout=connect_timeout,
            retry=self.retry,
            headers=headers,
            event_hooks=event_hooks,
            limits=limits,
            verify=verify,
        )

    @property
    def base_url(self) -> str:
        """The gateway's URL."""
        return self.transport.base_url

    def with_credential(self, credential: str | None) -> Client:
        """A client of the same gateway that sends `credential`, sharing this one's pooled
        connections and retry policy (closing either closes the connections of both)."""
        other = copy.copy(self)
        other.credential = credential
        return other

    def _bearer(self, seat: Seat | None) -> str | None:
        """What a request for `seat` (or none) is sent with: its token, or the credential."""
        if seat is not None and seat.token is not None:
            return seat.token
        return self.credential

    def close(self) -> None:
        """Close the pooled connections."""
        self.transport.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ operations

    def health(self) -> bool:
        """True when the gateway process answers `/healthz`."""
        self.transport.request("GET", "/healthz")
        return True

    def readiness(self, *, retry: RetryPolicy | None = None) -> Readiness:
        """`/readyz` (no retry by default): ready, or why not (Redis, evaluator)."""
        try:
            body = self.transport.request("GET", "/readyz", retry=retry or RetryPolicy.never())
        except CardroomError as error:
            if error.status != 503:
                raise
            # Redis is checked first: when it is down the evaluator was not asked
            if error.code == "store_unavailable":
                return Readiness(False, "unavailable", "unknown", error.detail)
            return Readiness(False, "ok", "unavailable", error.detail)
        reply = body.json()
        return Readiness(True, str(reply.get("redis")), str(reply.get("evaluator")))

    # ------------------------------------------------------------------ players

    def create_player(self, name: str) -> NewPlayer:
        """A new player and their first key, shown only in this answer.

        In the gateway's open mode anyone may create one; in operator mode the client's
        credential must be an operator key.
        """
        reply = self.transport.request(
            "POST", "/v1/players", body={"name": name}, token=self.credential
        )
        return NewPlayer.from_json(reply.json())

    def me(self) -> Player:
        """The player the client's credential belongs to, with the ids of their keys."""
        reply = self.transport.request("GET", "/v1/players/me", token=self.credential)
        return Player.from_json(reply.json())

    def add_key(self) -> NewKey:
        """Another key for the player, shown only in this answer (at most 10 at once).

        To rotate a key: add one, send it (`credential`), then revoke the old one.
        """
        reply = self.transport.request("POST", "/v1/players/me/keys", token=self.credential)
        return NewKey.from_json(reply.json())

    def revoke_key(self, key_id: str) -> None:
        """Revoke one of the player's keys, the one in use included (404 if unknown)."""
        self.transport.request(
            "DELETE",
            f"/v1/players/me/keys/{key_id}",
            token=self.credential,
            ok=frozenset({204}),
        )

    def my_seats(self) -> list[HeldSeat]:
        """Every seat the player holds, each with its table as that seat sees it.

        To carry on playing one from another client with the same key:
        ``client.seat(held.table_id, held.seat)``, which acts with the key.
        """
        reply = self.transport.request("GET", "/v1/players/me/seats", token=self.credential)
        return [HeldSeat.from_json(item) for item in reply.json()["seats"]]

    def my_ledger(self, limit: int = 50, cursor: str | None = None) -> LedgerPage:
        """One page of the player's wallet ledger, newest first, and the balance."""
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        reply = self.transport.request(
            "GET", "/v1/players/me/ledger", params=params, token=self.credential
        )
        return LedgerPage.from_json(reply.json())

    def ledger_entries(self, page_size: int = 50) -> Iterator[LedgerEntry]:
        """Every entry of the player's wallet ledger, newest first, page after page."""

        def page(cursor: str | None) -> tuple[Sequence[LedgerEntry], str | None]:
            found = self.my_ledger(page_size, cursor)
            return found.entries, found.next

        return _pages(page)

    def deposit(
        self,
        player_id: str,
        amount: int,
        reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> LedgerEntry:
        """An operator's deposit of chips into a player's wallet (an operator key).

        With an `idempotency_key` a retry has one effect and returns the same entry.
        """
        return self._wallet_transfer(player_id, "deposits", amount, reference, idempotency_key)

    def withdraw(
        self,
        player_id: str,
        amount: int,
        reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> LedgerEntry:
        """An operator's withdrawal of chips from a player's wallet (never below zero:
        `Conflict` with code insufficient_funds)."""
        return self._wallet_transfer(player_id, "withdrawals", amount, reference, idempotency_key)

    def _wallet_transfer(
        self,
        player_id: str,
        what: str,
        amount: int,
        reference: str | None,
        idempotency_key: str | None,
    ) -> LedgerEntry:
        body: dict[str, Any] = {"amount": amount}
        if reference is not None:
            body["reference"] = reference
        reply = self.transport.request(
            "POST",
            f"/v1/operator/players/{player_id}/{what}",
            body=body,
            token=self.credential,
            write=True,
            idempotency_key=idempotency_key,
        )
        return LedgerEntry.from_json(reply.json())

    # ------------------------------------------------------------------ limits

    def my_limits(self) -> Limits:
        """The player's deposit, buy-in and loss limits, and what is left of each."""
        reply = self.transport.request("GET", "/v1/players/me/limits", token=self.credential)
        return Limits.from_json(reply.json())

    def set_my_limit(self, kind: str, window: str, amount: int | None) -> Limits:
        """Set one of the player's limits (None removes it): a lower one applies at once,
        a higher one or a removal once cooled and confirmed (`confirm_my_limit`)."""
        return self._limits(
            "/v1/players/me/limits", {"kind": kind, "window": window, "amount": amount}
        )

    def confirm_my_limit(self, kind: str, window: str) -> Limits:
        """Confirm a raised or removed limit once its cooling period is over."""
        body = {"kind": kind, "window": window}
        return self._limits("/v1/players/me/limits/confirmations", body)

    def player_limits(self, player_id: str) -> Limits:
        """A player's limits, for an operator (an operator key)."""
        reply = self.transport.request(
            "GET", f"/v1/operator/players/{player_id}/limits", token=self.credential
        )
        return Limits.from_json(reply.json())

    def set_player_limit(
        self, player_id: str, kind: str, window: str, amount: int | None
    ) -> Limits:
        """Set the operator's own limit for a player, at once (the lowest applies)."""
        body = {"kind": kind, "window": window, "amount": amount}
        return self._limits(f"/v1/operator/players/{player_id}/limits", body)

    def my_exclusion(self) -> Exclusion | None:
        """The player's last time-out or self-exclusion (None: never took one)."""
        reply = self.transport.request("GET", "/v1/players/me/exclusions", token=self.credential)
        found = reply.json()["exclusion"]
        return None if found is None else Exclusion.from_json(found)

    def take_time_out(self, days: int) -> Exclusion:
        """A time-out of 1 to 30 days: every seat left after its deal, no seat, buy-in or
        deposit until it ends; it cannot be shortened."""
        return self._exclude({"kind": "time_out", "days": days})

    def exclude_myself(self, months: int | None = None) -> Exclusion:
        """Self-exclusion for 6 to 60 months, or for good without `months`."""
        body: dict[str, Any] = {"kind": "self_exclusion"}
        if months is None:
            body["permanent"] = True
        else:
            body["months"] = months
        return self._exclude(body)

    def excluded_players(self, limit: int = 100) -> list[Exclusion]:
        """The players excluded now, the soonest to end first (an operator key)."""
        reply = self.transport.request(
            "GET", "/v1/operator/exclusions", params={"limit": limit}, token=self.credential
        )
        return [Exclusion.from_json(item) for item in reply.json()["players"]]

    def my_session(self) -> dict[str, Any]:
        """The player's session settings and the session running (the JSON as sent)."""
        reply = self.transport.request("GET", "/v1/players/me/session", token=self.credential)
        return dict(reply.json())

    def set_my_session(
        self, limit_minutes: int | None, reality_check_minutes: int | None
    ) -> dict[str, Any]:
        """Set the session's time limit and reality-check interval (None: none). A stricter
        setting applies at once; a looser one (more minutes, or None where there was one)
        waits in `pending` (`applied` is False) until it is cooled and confirmed
        (`confirm_my_session`)."""
        body = {"limit_minutes": limit_minutes, "reality_check_minutes": reality_check_minutes}
        return self._session("/v1/players/me/session", body)

    def confirm_my_session(self, setting: str) -> dict[str, Any]:
        """Confirm a looser session setting (`limit_minutes` or `reality_check_minutes`)
        once its cooling period is over; `Conflict` (`limit_cooling`, with `from_at`, or
        `nothing_to_confirm`) otherwise."""
        return self._session("/v1/players/me/session/confirmations", {"setting": setting})

    def _session(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.transport.request("POST", path, body=body, token=self.credential, write=True)
        return dict(reply.json())

    def player_overview(self, player_id: str, days: int = 30) -> dict[str, Any]:
        """A player for an operator (an operator key): name, wallet, limits, exclusion and
        activity per UTC day over the last `days` days, newest first (the JSON as sent)."""
        reply = self.transport.request(
            "GET",
            f"/v1/operator/players/{player_id}",
            params={"days": days},
            token=self.credential,
        )
        return dict(reply.json())

    def _exclude(self, body: dict[str, Any]) -> Exclusion:
        reply = self.transport.request(
            "POST", "/v1/players/me/exclusions", body=body, token=self.credential, write=True
        )
        return Exclusion.from_json(reply.json()["exclusion"])

    def _limits(self, path: str, body: dict[str, Any]) -> Limits:
        reply = self.transport.request("POST", path, body=body, token=self.credential, write=True)
        return Limits.from_json(reply.json())

    # ------------------------------------------------------------------ tables

    def lobby_page(
        self, limit: int = 20, cursor: str | None = None, *, filters: LobbyFilters | None = None
    ) -> LobbyPage:
        """One page of the lobby: the tables to join first (the fullest with a free seat,
        then the full ones), only those that pass `filters`. A page may hold fewer than
        `limit` tables and still have a `next`."""
        params: dict[str, Any] = {"limit": limit}
        if filters is not None:
            params.update(filters.to_params())
        if cursor is not None:
            params["cursor"] = cursor
        body = self.transport.request(
            "GET", "/v1/tables", params=params, token=self.credential
        ).json()
        return LobbyPage(
            [TableSummary.from_json(item) for item in body["tables"]],
            body.get("next", body.get("next_cursor")),
        )

    def lobby(
        self, page_size: int = 20, *, filters: LobbyFilters | None = None
    ) -> Iterator[TableSummary]:
        """Every table of the lobby that passes `filters`, in its order, fetching pages of
        `page_size` as iteration goes on."""

        def page(cursor: str | None) -> tuple[Sequence[TableSummary], str | None]:
            found = self.lobby_page(page_size, cursor, filters=filters)
            return found.tables, found.next

        return _pages(page)

    def quick_seat(
        self,
        options: TableOptions | None,
        buy_in: int,
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Seat:
        """A seat at a table like `options` (Guts if None; an option left unset matches
        any table) with a free seat, the fullest first, or at a table made for it with
        those options; `Seat.created` says which. One call: two players never both get a
        table's last seat. It needs a player's credential."""
        body: dict[str, Any] = {"table": (options or GutsOptions()).to_json(), "buy_in": buy_in}
        reply = self._named_write("/v1/tables/quick-seat", body, name, idempotency_key).json()
        return self._granted(reply, name, created=bool(reply.get("created", False)))

    def _named_write(
        self, path: str, body: dict[str, Any], name: str | None, idempotency_key: str | None
    ) -> httpx.Response:
        """A player's POST of `body` to `path`, with its `name` when one is given."""
        if name is not None:
            body["name"] = name
        return self.transport.request(
            "POST",
            path,
            body=body,
            token=self.credential,
            write=True,
            idempotency_key=idempotency_key,
        )

    def create_table(
        self,
        options: TableOptions | None = None,
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Table:
        """Create a table (Guts with every default unless `options` say otherwise).

        It needs a player's credential, and counts against the player's open tables.
        """
        reply = self._named_write(
            "/v1/tables", (options or GutsOptions()).to_json(), name, idempotency_key
        )
        return Table.from_json(reply.json()["table"])

    def table(self, table_id: str, *, seat: Seat | None = None) -> Table:
        """The table as `seat` (or a spectator) sees it; `seat` adds its own cards."""
        found = self.table_if_changed(table_id, None, seat=seat)
        assert found is not None  # without If-None-Match the gateway never answers 304
        return found

    def table_if_changed(
        self, table_id: str, if_none_match: ETag | None, *, seat: Seat | None = None
    ) -> Table | None:
        """The table, or None while its ETag is still `if_none_match` (a Table or '"4"')."""
        headers = _etag_header("If-None-Match", if_none_match)
        reply = self.transport.request(
            "GET",
            f"/v1/tables/{table_id}",
            token=self._bearer(seat),
            headers=headers,
        )
        if reply.status_code == 304:
            return None
        return Table.from_json(reply.json())

    # ------------------------------------------------------------------ seats

    def take_seat(
        self,
        table_id: str,
        name: str | None,
        buy_in: int,
        *,
        idempotency_key: str | None = None,
    ) -> Seat:
        """Sit the player down with `buy_in` chips, as `name` (None: the player's name).

        It needs a player's credential; a player holds at most one seat at a table. The
        seat holds its token (shown only once); the player's key acts for it as well.
        """
        body: dict[str, Any] = {"buy_in": buy_in}
        path = f"/v1/tables/{table_id}/seats"
        return self._granted(self._named_write(path, body, name, idempotency_key).json(), name)

    def _granted(self, reply: Mapping[str, Any], name: str | None, created: bool = False) -> Seat:
        """The seat a seat grant's answer gives."""
        joined = Table.from_json(reply["table"])
        number = int(reply["seat"])
        seated = joined.seats.get(number)
        return Seat(
            self,
            joined.id,
            number,
            str(reply["token"]),
            seated.name if seated is not None else name,
            waiting=bool(reply.get("waiting", False)),
            joined=joined,
            created=created,
        )

    def seat(
        self, table_id: str, number: int, token: str | None = None, name: str | None = None
    ) -> Seat:
        """A seat from what was kept earlier: its table id, number and token; without a
        token the seat acts with the client's credential (the player's key)."""
        return Seat(self, table_id, number, token, name)

    def seat_bot(
        self,
        table_id: str,
        strategy: str,
        buy_in: int,
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[int, Table]:
        """Seat a computer player playing `strategy` ("random", "easy" or "strong") with
        `buy_in` chips from the house; the seat's number and the table.

        It needs the credential of the player who created the table, or an operator key;
        the gateway's bots runner plays the seat (docs/bots.md).
        """
        body: dict[str, Any] = {"strategy": strategy, "buy_in": buy_in}
        reply = self._named_write(f"/v1/tables/{table_id}/bots", body, name, idempotency_key).json()
        return int(reply["seat"]), Table.from_json(reply["table"])

    def remove_bot(self, table_id: str, seat: int) -> LeaveResult:
        """Make the computer player in `seat` leave: now, or when its deal is settled."""
        reply = self.transport.request(
            "DELETE", f"/v1/tables/{table_id}/bots/{seat}", token=self.credential, write=True
        ).json()
        return _left(reply)

    def leave(
        self,
        seat: Seat,
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> LeaveResult:
        """Leave now, or when the deal the seat is in is settled."""
        headers = _etag_header("If-Match", if_match)
        reply = self.transport.request(
            "DELETE",
            f"/v1/tables/{seat.table_id}/seats/{seat.number}",
            token=self._bearer(seat),
            headers=headers,
            write=True,
            idempotency_key=idempotency_key,
        ).json()
        return _left(reply)

    def close_table(
        self,
        table_id: str,
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> TableClosing:
        """Close a table: its creator before its first deal, an operator at any time.
        Every seat is cashed out (a seat in the current deal when it is settled)."""
        reply = self.transport.request(
            "DELETE",
            f"/v1/tables/{table_id}",
            token=self.credential,
            headers=_etag_header("If-Match", if_match),
            write=True,
            idempotency_key=idempotency_key,
        ).json()
        return TableClosing(
            bool(reply["closed"]), Table.from_json(reply["table"]), _events(reply["events"])
        )

    def remove_seat(
        self,
        table_id: str,
        number: int,
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> LeaveResult:
        """An operator removes a seat: it leaves now, or when its deal is settled."""
        return self.leave(
            Seat(self, table_id, number, None), if_match=if_match, idempotency_key=idempotency_key
        )

    # ------------------------------------------------------------------ moves

    def _move(
        self,
        seat: Seat,
        action: Mapping[str, Any],
        if_match: ETag | None,
        idempotency_key: str | None,
        prefer: dict[str, str],
    ) -> httpx.Response:
        return self.transport.request(
            "POST",
            f"/v1/tables/{seat.table_id}/actions",
            body=dict(action),
            token=self._bearer(seat),
            headers={**prefer, **_etag_header("If-Match", if_match)},
            write=True,
            idempotency_key=idempotency_key,
            ok=frozenset({200, 204}),
        )

    def act(
        self,
        seat: Seat,
        action: Mapping[str, Any],
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> ActionResult:
        """Any move as its JSON body (`{"action": "declare", "choice": "in"}`).

        A retry of a key first sent by `act_minimal` replays its answer, which holds no
        table: the table is then read as it is now, and `events` is empty.
        """
        reply = self._move(seat, action, if_match, idempotency_key, {})
        replayed = reply.headers.get("Idempotent-Replayed") == "true"
        if reply.status_code == 204:
            # a replay of a key whose first request asked for no table: read it now
            return ActionResult(self.table(seat.table_id, seat=seat), [], replayed)
        body = reply.json()
        return ActionResult(Table.from_json(body["table"]), _events(body["events"]), replayed)

    def act_minimal(
        self,
        seat: Seat,
        action: Mapping[str, Any],
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> MoveAccepted:
        """A move answered without the table (`Prefer: return=minimal`): for a program
        that follows the table's events anyway, it saves the gateway building the view
        and both sides its bytes."""
        reply = self._move(seat, action, if_match, idempotency_key, {"Prefer": "return=minimal"})
        replayed = reply.headers.get("Idempotent-Replayed") == "true"
        if reply.status_code == 200:  # a gateway that does not apply the preference
            return MoveAccepted(int(reply.json()["table"]["version"]), replayed)
        return MoveAccepted(int(reply.headers["ETag"].strip('"')), replayed)

    # ------------------------------------------------------------------ events

    def events(
        self, table_id: str, *, seat: Seat | None = None, after: int = 0, wait: float = 0.0
    ) -> EventPage:
        """Events after `after`, long-polling up to `wait` seconds for the first one."""
        params: dict[str, Any] = {"after": after}
        if wait:
            params["wait"] = f"{wait:g}"
        reply = self.transport.request(
            "GET",
            f"/v1/tables/{table_id}/events",
            params=params,
            token=self._bearer(seat),
            read_timeout=self.transport.timeout + wait,
        ).json()
        return EventPage(_events(reply["events"]), int(reply["next"]))

    def follow(
        self,
        table_id: str,
        *,
        seat: Seat | None = None,
        after: int = 0,
        wait: float = 10.0,
    ) -> Iterator[Event]:
        """Every event after `after`, forever, by long polls of up to `wait` seconds."""
        cursor = after
        while True:
            page = self.events(table_id, seat=seat, after=cursor, wait=wait)
            yield from page.events
            cursor = page.next

    def stream_ticket(self, table_id: str, *, seat: Seat | None = None) -> StreamTicket:
        """A single-use ticket (valid 30 s) that opens the table's event stream as the
        player, or as `seat` with its token: for a program that cannot send the
        credential itself, such as a browser's EventSource (``?ticket=``)."""
        reply = self.transport.request(
            "POST", f"/v1/tables/{table_id}/stream-tickets", token=self._bearer(seat)
        )
        return StreamTicket.from_json(reply.json())

    def stream(
        self,
        table_id: str,
        *,
        seat: Seat | None = None,
        after: int = 0,
        retry: RetryPolicy | None = None,
        read_timeout: float = 40.0,
        reconnect_delay: float | None = None,
        until: float | None = None,
        ticket: str | StreamTicket | Callable[[], str | StreamTicket] | None = None,
    ) -> EventStream:
        """The server-sent event stream, reconnecting with Last-Event-ID when it ends.

        `read_timeout` exceeds the server's keep-alive interval (15 s); a silent
        connection is taken as broken and reopened. `reconnect_delay` overrides the
        server's ``retry:`` delay; `until` (a `time.monotonic()` value) ends iteration.

        With `ticket` the stream is opened with it (``?ticket=``) instead of a
        credential. A ticket opens one connection: a function is asked for a fresh one
        at each connection; after a single ticket, reconnections ask the gateway for
        new ones with the seat's token or the client's credential, or, with neither,
        fail with ``invalid_ticket``.
        """
        tickets = None
        if ticket is not None:
            tickets = self._tickets(table_id, seat, ticket)
        return EventStream(
            self.transport,
            table_id,
            token=None if tickets is not None else self._bearer(seat),
            tickets=tickets,
            after=after,
            retry=retry or self.retry,
            read_timeout=read_timeout,
            reconnect_delay=reconnect_delay,
            until=until,
        )

    def _tickets(
        self,
        table_id: str,
        seat: Seat | None,
        ticket: str | StreamTicket | Callable[[], str | StreamTicket],
    ) -> Callable[[], str]:
        """A ticket for each connection of a stream: the one given first, then new ones."""
        if callable(ticket):
            source = ticket
            return lambda: _ticket_text(source())
        first: list[str] = [_ticket_text(ticket)]
        spent = first[0]

        def next_ticket() -> str:
            if first:
                return first.pop()
            if self._bearer(seat) is None:
                return spent  # refused as invalid_ticket: there is nothing to ask with
            return self.stream_ticket(table_id, seat=seat).ticket

        return next_ticket

    # ------------------------------------------------------------------ hand histories

    def hand(self, table_id: str, hand_number: int, *, seat: Seat | None = None) -> HandHistory:
        """A finished deal's history with its fairness proof (with `seat`: its own events)."""
        reply = self.transport.request(
            "GET",
            f"/v1/tables/{table_id}/hands/{hand_number}",
            token=self._bearer(seat),
        )
        return HandHistory.from_json(reply.json())

    def hand_text(self, table_id: str, hand_number: int, *, seat: Seat | None = None) -> str:
        """A finished deal as PHH-style TOML text (docs/hand-histories.md)."""
        reply = self.transport.request(
            "GET", f"/v1/tables/{table_id}/hands/{hand_number}/phh", token=self._bearer(seat)
        )
        return reply.text

    def my_deals(self, limit: int = 20, cursor: str | None = None) -> DealPage:
        """A page of the deals the player played, newest first, at every table."""
        params: dict[str, Any] = {"limit": limit}
        if cursor is not None:
            params["cursor"] = cursor
        reply = self.transport.request(
            "GET", "/v1/players/me/deals", params=params, token=self.credential
        )
        return DealPage.from_json(reply.json())

    def my_deal(self, table_id: str, hand_number: int) -> HandHistory:
        """One of the player's deals as they saw it (kept for their newest deals)."""
        reply = self.transport.request(
            "GET", f"/v1/players/me/deals/{table_id}/{hand_number}", token=self.credential
        )
        return HandHistory.from_json(reply.json())

    def my_deals_text(self, last: int = 10) -> str:
        """The player's last deals, newest first, as one PHH-style TOML text."""
        reply = self.transport.request(
            "GET", "/v1/players/me/deals/phh", params={"last": last}, token=self.credential
        )
        return reply.text

    def verify_hand(
        self,
        table_id: str,
        hand_number: int,
        *,
        seat: Seat | None = None,
        announced: str | None = None,
        dealt: Mapping[int, Sequence[str]] | None = None,
    ) -> FairnessReport:
        """Fetch a deal's history and check its fairness proof (see `verify_fairness`)."""
        history = self.hand(table_id, hand_number, seat=seat)
        return verify_fairness(history, announced=announced, dealt=dealt)

    # ------------------------------------------------------------------ evaluator

    def evaluate(
        self,
        game: EvaluatorGame,
        hands: Sequence[str],
        *,
        wild_rank: int | None = None,
        paiute_valuation: PaiuteValuation | None = None,
    ) -> list[RankedHand]:
        """Rank hands ("Ah Kd Qc"), in order; Paiute needs `wild_rank` (2..14).

        `paiute_valuation` (Paiute only) values six-card hands: "six_card_combinations"
        (the rule, the default) or "best_of_any" (the best five of six, or all six).
        """
        body: dict[str, Any] = {"game": game, "hands": list(hands)}
        if wild_rank is not None:
            body["wild_rank"] = wild_rank
        if paiute_valuation is not None:
            body["paiute_valuation"] = paiute_valuation
        reply = self.transport.request(
            "POST", "/v1/evaluate", body=body, token=self.credential
        ).json()
        return [RankedHand.from_json(item) for item in reply["results"]]

    def odds(
        self,
        game: Literal["guts2", "guts3"],
        hand: str,
        opponents: int,
        *,
        samples: int | None = None,
        seed: int | None = None,
    ) -> Odds:
        """A Guts hand's chances against `opponents` random hands."""
        query: dict[str, Any] = {"hand": hand, "opponents": opponents}
        if samples is not None:
            query["samples"] = samples
        if seed is not None:
            query["seed"] = seed
        reply = self.transport.request(
            "POST", "/v1/evaluate", body={"game": game, "odds": query}, token=self.credential
        ).json()
        return Odds.from_json(reply)


def _ticket_text(ticket: str | StreamTicket) -> str:
    return ticket if isinstance(ticket, str) else ticket.ticket


@dataclass(frozen=True)
class Seat:
    """A seat at a table: its table id, number and token, and its moves as methods.

    The token is shown once: keep `table_id`, `number` and `token` to act for the seat
    later (`Client.seat` rebuilds it). A seat without a token acts with its client's
    credential, the player's key (`Client.my_seats` lists the seats a player holds).
    """

    client: Client = field(repr=False, compare=False)
    table_id: str
    number: int
    token: str | None = field(default=None, repr=False)
    name: str | None = None
    waiting: bool = False
    joined: Table | None = field(default=None, repr=False, compare=False)
    # a quick seat's: its table was made for it (`Client.quick_seat`)
    created: bool = False

    def table(self) -> Table:
        """The table as this seat sees it (its own cards under `you`)."""
        return self.client.table(self.table_id, seat=self)

    def table_if_changed(self, if_none_match: ETag | None) -> Table | None:
        """The table as this seat sees it, or None while its ETag is `if_none_match`."""
        return self.client.table_if_changed(self.table_id, if_none_match, seat=self)

    def act(
        self,
        action: Mapping[str, Any],
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> ActionResult:
        """Any move as its JSON body (see `Client.act`)."""
        return self.client.act(self, action, if_match=if_match, idempotency_key=idempotency_key)

    def act_minimal(
        self,
        action: Mapping[str, Any],
        *,
        if_match: ETag | None = None,
        idempotency_key: str | None = None,
    ) -> MoveAccepted:
        """Any move, answered without the table (see `Client.act_minimal`)."""
        return self.client.act_minimal(
            self, action, if_match=if_match, idempotency_key=idempotency_key
        )

    def start(self, *, if_match: ETag | None = None) -> ActionResult:
        """Start the first game at a waiting table."""
        return self.act({"action": "start"}, if_match=if_match)

    def declare(self, choice: Choice, *, if_match: ETag | None = None) -> ActionResult:
        """Guts: declare "in" or "out" of the current deal (final)."""
        return self.act({"action": "declare", "choice": choice}, if_match=if_match)

    def rebuy(self, amount: int, *, if_match: ETag | None = None) -> ActionResult:
        """Buy `amount` more chips between deals."""
        return self.act({"action": "rebuy", "amount": amount}, if_match=if_match)

    def back(self, *, if_match: ETag | None = None) -> ActionResult:
        """Back after being away (`away` in the seat): dealt in again from the next deal."""
        return self.act({"action": "back"}, if_match=if_match)

    def draw(self, source: Source = "stock", *, if_match: ETag | None = None) -> ActionResult:
        """Paiute: take the top card of the stock or of the discard pile."""
        return self.act({"action": "draw", "source": source}, if_match=if_match)

    def discard(self, card: str, *, if_match: ETag | None = None) -> ActionResult:
        """Paiute: discard one card after drawing."""
        return self.act({"action": "discard", "card": card}, if_match=if_match)

    def call(
        self, cards: Sequence[str], discard: str | None, *, if_match: ETag | None = None
    ) -> ActionResult:
        """Paiute: show a winning combination (5 cards and `discard` the sixth, or all 6)."""
        body = {"action": "call", "cards": list(cards), "discard": discard}
        return self.act(body, if_match=if_match)

    def leave(self, *, if_match: ETag | None = None) -> LeaveResult:
        """Leave now, or when the deal this seat is in is settled."""
        return self.client.leave(self, if_match=if_match)

    def events(self, *, after: int = 0, wait: float = 0.0) -> EventPage:
        """Events this seat may see after `after` (its private ones included)."""
        return self.client.events(self.table_id, seat=self, after=after, wait=wait)

    def stream(
        self,
        *,
        after: int = 0,
        reconnect_delay: float | None = None,
        until: float | None = None,
    ) -> EventStream:
        """This seat's server-sent event stream (see `Client.stream`)."""
        return self.client.stream(
            self.table_id, seat=self, after=after, reconnect_delay=reconnect_delay, until=until
        )

    def stream_ticket(self) -> StreamTicket:
        """A single-use ticket that opens this seat's event stream (see `Client.stream`)."""
        return self.client.stream_ticket(self.table_id, seat=self)

    def hand(self, hand_number: int) -> HandHistory:
        """A finished deal's history as this seat may see it."""
        return self.client.hand(self.table_id, hand_number, seat=self)


Item = TypeVar("Item")


def _pages(page: Callable[[str | None], tuple[Sequence[Item], str | None]]) -> Iterator[Item]:
    """Every item of a paged list: `page(cursor)` gives a page's items and the next cursor."""
    cursor: str | None = None
    while True:
        items, cursor = page(cursor)
        yield from items
        if cursor is None:
            return


def _left(reply: Mapping[str, Any]) -> LeaveResult:
    """A leave's answer, a player's or a computer player's."""
    cashed = reply.get("cashed_out")
    return LeaveResult(
        int(reply["seat"]),
        bool(reply["left"]),
        bool(reply["leaving"]),
        None if cashed is None else int(cashed),
        Table.from_json(reply["table"]),
        _events(reply["events"]),
    )
