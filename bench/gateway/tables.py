"""The gateway benchmark's tables: set up over HTTP before the clock starts, and the
moves its rounds play on them."""

from __future__ import annotations

import time

from bench.gateway.client import Connection, Seat, guts_table, in_threads
from bench.gateway.load import Request
from bench.gateway.plan import BUY_IN, GUTS_OPTIONS, PLAYERS

MINIMAL = {"Prefer": "return=minimal"}
# what the request rounds' moves and reads carry: the seat's token, or (--moves-with key)
# its player's key, where the gateway has players
MOVES_WITH = {"credential": "token"}


def guts_tables(url: str, count: int) -> list[tuple[str, list[Seat]]]:
    """`count` fresh 5-seat Guts tables, each seat a player of its own (setup, not measured).

    A gateway without players (an older revision: 404 for POST /v1/players) gets
    anonymous seats.
    """

    def one(conn: Connection, _: int) -> tuple[str, list[Seat]]:
        table = guts_table(conn, PLAYERS, BUY_IN, **GUTS_OPTIONS)
        return table.table_id, list(table.seats)

    return in_threads(url, count, one)


def start_all(url: str, tables: list[tuple[str, list[Seat]]]) -> None:
    """Start the first deal of every table."""
    conn = Connection(url)
    for table_id, seats in tables:
        conn.expect("POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, seats[0].token)
    conn.close()


def wait_for_deal(url: str, tables: list[tuple[str, list[Seat]]], hand: int) -> None:
    """Wait until every table is declaring deal `hand` (the clock deals it)."""
    conn = Connection(url)
    deadline = time.monotonic() + 60
    for table_id, _ in tables:
        while True:
            view = conn.expect("GET", f"/v1/tables/{table_id}")
            if view["hand_number"] >= hand and view["phase"] == "declaring":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"table {table_id} did not reach deal {hand} in 60 s")
            time.sleep(0.02)
    conn.close()


def credential(seat: Seat) -> str:
    """The credential a seat's moves and reads are sent with (`MOVES_WITH`)."""
    if MOVES_WITH["credential"] == "key" and seat.key is not None:
        return seat.key
    return seat.token


def declare_request(table_id: str, seat: Seat, choice: str, minimal: bool = False) -> Request:
    """A declare; with `minimal`, answered 204 without the table (Prefer: return=minimal)."""
    body = {"action": "declare", "choice": choice}
    path = f"/v1/tables/{table_id}/actions"
    if minimal:
        return Request("POST", path, body, credential(seat), MINIMAL, expect=204)
    return Request("POST", path, body, credential(seat))
