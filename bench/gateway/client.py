"""The benchmark's HTTP calls to the gateway, in one place.

Raw keep-alive HTTP/1.1 over `http.client`, one connection per load thread: a load
generator that shares two cores with the server must spend as little CPU per request
as it can, and every call here costs a few tens of microseconds. The table calls
mirror the Python SDK's, so they can be swapped for it where its cost does not matter.
Every seat is taken by a player of its own (`POST /v1/players`), as at a real table.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

# the environment variable whose value every benchmark request sends as Accept-Language
# (`--accept-language`); the load processes inherit it
ACCEPT_LANGUAGE_VARIABLE = "BENCH_ACCEPT_LANGUAGE"

# gunicorn closes a keep-alive connection idle for 5 s; reconnect before that
IDLE_RECONNECT_SECONDS = 4.0


class GatewayError(RuntimeError):
    """An unexpected answer from the gateway."""

    def __init__(self, status: int, body: Any, what: str) -> None:
        """Remember the status and problem body."""
        code = body.get("code") if isinstance(body, dict) else None
        super().__init__(f"{what}: HTTP {status} {code or body!r}")
        self.status = status
        self.code = code


class Connection:
    """One keep-alive connection to the gateway."""

    def __init__(self, base_url: str, timeout: float = 60.0) -> None:
        """Connect lazily to `base_url` (http://host:port)."""
        parts = urllib.parse.urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.timeout = timeout
        self._conn: http.client.HTTPConnection | None = None
        self._used = 0.0

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is not None and time.monotonic() - self._used > IDLE_RECONNECT_SECONDS:
            self._conn.close()
            self._conn = None
        if self._conn is None:
            self._conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self._conn

    @staticmethod
    def encode(
        body: Any = None, token: str | None = None, extra: dict[str, str] | None = None
    ) -> tuple[bytes | None, dict[str, str]]:
        """The payload and headers of a request with this JSON body and seat token (and
        the Accept-Language of `ACCEPT_LANGUAGE_VARIABLE`, when set)."""
        headers = {"Connection": "keep-alive", **(extra or {})}
        language = os.environ.get(ACCEPT_LANGUAGE_VARIABLE)
        if language:
            headers["Accept-Language"] = language
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return payload, headers

    @staticmethod
    def decode(data: bytes) -> Any:
        """An answer's JSON body (None when there is none)."""
        return json.loads(data) if data else None

    def call(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        """One request; the status and the decoded JSON body (None when there is none)."""
        status, data = self.send(method, path, *self.encode(body, token))
        return status, self.decode(data)

    def send(
        self, method: str, path: str, payload: bytes | None, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """One request, encoded already; the status and the body's bytes."""
        conn = self._connection()
        try:
            conn.request(method, path, payload, headers)
            response = conn.getresponse()
            data = response.read()
        except (http.client.HTTPException, OSError):
            conn.close()
            self._conn = None
            raise
        self._used = time.monotonic()
        if response.will_close:
            conn.close()
            self._conn = None
        return response.status, data

    def expect(
        self, method: str, path: str, body: Any = None, token: str | None = None, status: int = 200
    ) -> Any:
        """A request that must answer `status`; its body."""
        got, answer = self.call(method, path, body, token)
        if got != status:
            raise GatewayError(got, answer, f"{method} {path}")
        return answer

    def close(self) -> None:
        """Close the connection."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None


Item = TypeVar("Item")


def in_threads(url: str, count: int, one: Callable[[Connection, int], Item]) -> list[Item]:
    """`one(connection, n)` for each n below `count`, on 8 threads, each thread with a
    keep-alive connection of its own to `url` (a benchmark's setup); the results in order."""
    local = threading.local()
    opened: list[Connection] = []

    def run(number: int) -> Item:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = Connection(url)
            opened.append(conn)
        return one(conn, number)

    try:
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(run, range(count)))
    finally:
        for conn in opened:
            conn.close()


@dataclass(frozen=True)
class Seat:
    """A seat taken at a table: its number and secret token, and its player's key."""

    number: int
    token: str
    key: str | None = None


@dataclass(frozen=True)
class Table:
    """A table and the seats this client holds at it."""

    table_id: str
    seats: tuple[Seat, ...]


def sign_up(conn: Connection, name: str) -> str | None:
    """A new player (POST /v1/players): their key.

    None when the gateway has no players (404: a revision older than them, compared
    with `--against`), where tables and seats are taken without a credential.
    """
    status, body = conn.call("POST", "/v1/players", {"name": name})
    if status == 404:
        return None
    if status != 201:
        raise GatewayError(status, body, "POST /v1/players")
    return str(body["key"])


def created_table_id(answer: dict[str, Any]) -> str:
    """The id of a table from its creation's answer: `{"table", "events"}`, or the bare
    table that a revision before that envelope answers (`--against`, `--steps`)."""
    return str(answer.get("table", answer)["id"])


def create_table(conn: Connection, game: str, key: str | None = None, **options: Any) -> str:
    """Create a table as the player whose key is `key`; its id."""
    body = {"game": game, **options}
    return created_table_id(conn.expect("POST", "/v1/tables", body, token=key, status=201))


def sit(conn: Connection, table_id: str, name: str, buy_in: int, key: str | None = None) -> Seat:
    """Take a seat as the player whose key is `key`."""
    body = conn.expect(
        "POST",
        f"/v1/tables/{table_id}/seats",
        {"name": name, "buy_in": buy_in},
        token=key,
        status=201,
    )
    return Seat(int(body["seat"]), str(body["token"]), key)


def act(conn: Connection, table_id: str, seat: Seat, **action: Any) -> tuple[int, Any]:
    """A move by `seat`; status and body."""
    return conn.call("POST", f"/v1/tables/{table_id}/actions", action, seat.token)


def read_table(conn: Connection, table_id: str, seat: Seat | None = None) -> dict[str, Any]:
    """The table as `seat` (or a spectator) sees it."""
    return dict(conn.expect("GET", f"/v1/tables/{table_id}", token=seat.token if seat else None))


def events(
    conn: Connection, table_id: str, after: int, wait: float = 0, seat: Seat | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Events after a cursor (long-polling up to `wait` s); the events and the new cursor."""
    body = conn.expect(
        "GET",
        f"/v1/tables/{table_id}/events?after={after}&wait={wait}",
        token=seat.token if seat else None,
    )
    return list(body["events"]), int(body["next"])


def guts_table(conn: Connection, players: int, buy_in: int, **options: Any) -> Table:
    """A Guts table with `players` seats taken by this client, each by a player of its
    own (`sign_up`); the first one creates the table."""
    names = [f"p{i}" for i in range(players)]
    keys: list[str | None] = []
    for name in names:
        key = sign_up(conn, name)
        if key is None:  # no players at this gateway: anonymous seats
            keys = [None] * players
            break
        keys.append(key)
    table_id = create_table(conn, "guts", keys[0] if keys else None, **options)
    seats = tuple(
        sit(conn, table_id, name, buy_in, key) for name, key in zip(names, keys, strict=True)
    )
    return Table(table_id, seats)


class EventStream:
    """A table's server-sent events as a spectator, iterated as (arrival time, event).

    The arrival time is `time.monotonic()` when the event's line was read. When the
    server ends the stream it reconnects with Last-Event-ID; `close` (from any
    thread) ends the iteration.
    """

    def __init__(self, base_url: str, table_id: str, after: int = 0) -> None:
        """Prepare (not open) the stream of `table_id` after event `after`."""
        parts = urllib.parse.urlsplit(base_url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.table_id = table_id
        self.last = after
        self._conn: http.client.HTTPConnection | None = None
        self._open = threading.Event()
        self._closed = False

    def wait_open(self, timeout: float) -> bool:
        """Wait until the server has answered the stream's request; True if it has."""
        return self._open.wait(timeout)

    def close(self) -> None:
        """Stop the stream: the iteration ends."""
        self._closed = True
        conn = self._conn
        if conn is not None and conn.sock is not None:
            with contextlib.suppress(OSError):
                conn.sock.shutdown(socket.SHUT_RDWR)

    def __iter__(self) -> Iterator[tuple[float, dict[str, Any]]]:
        """The events as they arrive."""
        while not self._closed:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            self._conn = conn
            try:
                conn.request(
                    "GET",
                    f"/v1/tables/{self.table_id}/events/stream",
                    headers={"Accept": "text/event-stream", "Last-Event-ID": str(self.last)},
                )
                response = conn.getresponse()
                if response.status != 200:
                    raise GatewayError(response.status, response.read(), "event stream")
                self._open.set()
                while not self._closed:
                    line = response.readline()
                    if not line:
                        break  # the server ended the stream: resume after the last event
                    if line.startswith(b"data: "):
                        arrived = time.monotonic()
                        item = json.loads(line[6:])
                        self.last = int(item["id"])
                        yield arrived, item
            except (OSError, http.client.HTTPException):
                if self._closed:
                    return
                raise
            finally:
                conn.close()
