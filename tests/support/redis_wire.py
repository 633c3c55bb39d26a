"""A Redis client that counts its round trips: which commands each request carried."""

from __future__ import annotations

from typing import Any

import redis


class Wire:
    """What the counting connections sent: one list of command names per round trip."""

    def __init__(self) -> None:
        """Start empty."""
        self.trips: list[list[str]] = []

    def take(self) -> list[list[str]]:
        """The round trips since the last call."""
        trips, self.trips = self.trips, []
        return trips


def command_names(payload: bytes) -> list[str]:
    """The name of each command in a RESP-encoded request (one or a pipeline of many)."""
    names: list[str] = []
    position = 0
    while position < len(payload):
        assert payload[position : position + 1] == b"*"
        end = payload.index(b"\r\n", position)
        count = int(payload[position + 1 : end])
        position = end + 2
        for index in range(count):
            end = payload.index(b"\r\n", position)
            length = int(payload[position + 1 : end])
            value = payload[end + 2 : end + 2 + length]
            if index == 0:
                names.append(value.decode().upper())
            position = end + 2 + length + 2
    return names


def counting_connection(wire: Wire) -> type[redis.Connection]:
    """A connection class that logs every request it sends to `wire`."""

    class CountingConnection(redis.Connection):
        def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            chunks = [command] if isinstance(command, (bytes, str)) else list(command)
            payload = b"".join(c.encode() if isinstance(c, str) else bytes(c) for c in chunks)
            wire.trips.append(command_names(payload))
            super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]

    return CountingConnection


def counting_client(url: str, wire: Wire) -> redis.Redis:
    """A Redis client whose connections log every request they send to `wire`."""
    pool = redis.ConnectionPool.from_url(
        url, decode_responses=True, connection_class=counting_connection(wire)
    )
    return redis.Redis(connection_pool=pool)
