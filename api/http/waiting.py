"""Waiting requests (long polls and event streams): how many one client may hold, and the
wait ended as soon as the client goes.

A waiting request holds a connection of its worker for as long as it waits, so the
gateway counts them per client address and per credential (`PlayerService.lease_waiting`,
in Redis, over every worker and gateway; 429 quota_exceeded past either cap) and gives
the count back the moment the request ends.

A client that goes away while its request waits must not hold its place until the wait
is over: in a gevent worker (the deployed one) the wait runs in a greenlet of its own
while the request's greenlet watches the client's socket, and a socket that reads as
closed ends the wait at once (`ClientGone`). A socket that has more bytes to read (a
pipelined request) cannot tell, and the wait runs its course. Elsewhere (the tests in one
thread, gthread workers, TLS served by gunicorn itself) the wait runs as it is.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class ClientGone(Exception):  # noqa: N818 - the client's departure, not a fault
    """The client closed its connection while its request waited."""


def until_client_leaves(environ: Mapping[str, Any], work: Callable[[], T]) -> T:
    """`work()`, given up (`ClientGone`) as soon as the request's client closes its socket."""
    client = environ.get("gunicorn.socket")
    if client is None or isinstance(client, ssl.SSLSocket) or not _gevent_patched():
        return work()
    import gevent

    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        # the outcome is kept, never raised in the greenlet (gevent would print it)
        try:
            outcome.append((True, work()))
        except Exception as error:
            outcome.append((False, error))

    job = gevent.spawn(run)
    watcher = gevent.spawn(_closed, client)
    try:
        gevent.wait([job, watcher], count=1)
        if not job.dead and watcher.dead and watcher.value:
            raise ClientGone
        job.join()
    finally:
        watcher.kill()
        job.kill()  # the wait is abandoned; its Redis connection is closed, not reused
    succeeded, value = outcome[0]
    if not succeeded:
        raise value
    result: T = value
    return result


def _closed(client: socket.socket) -> bool:
    """Wait until `client` can be read; whether it then reads as closed."""
    from gevent.socket import wait_read

    wait_read(client.fileno())
    try:
        return client.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True  # reset by the peer


def _gevent_patched() -> bool:
    with contextlib.suppress(ImportError):
        from gevent import monkey

        return bool(monkey.is_module_patched("socket"))
    return False
