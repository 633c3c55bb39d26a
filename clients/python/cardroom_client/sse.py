"""A table's server-sent events as an iterator that reconnects by itself.

The gateway ends each stream after a while (``STREAM_MAX_SECONDS``) and a connection
may break at any time; `EventStream` then connects again with ``Last-Event-ID`` set to
the last event it yielded, after the ``retry:`` delay the server asked for, so the
caller sees every event once, in order, across any number of reconnects. Consecutive
failed connections back off and give up after `RetryPolicy.attempts` of them.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType

import httpx

from cardroom_client.errors import CardroomError
from cardroom_client.models import Event
from cardroom_client.transport import (
    NETWORK_ERRORS,
    RetryPolicy,
    Transport,
    connection_failed,
    error_from_response,
)


@dataclass
class ServerSentEvent:
    """One dispatched block of the stream."""

    id: str | None = None
    event: str = "message"
    data: str = ""
    retry: int | None = None


@dataclass
class _Block:
    data: list[str] = field(default_factory=list)
    id: str | None = None
    event: str | None = None
    retry: int | None = None
    seen: bool = False


def parse_stream(lines: Iterator[str]) -> Iterator[ServerSentEvent | None]:
    """Blocks of an event stream; None for a block with no data (a comment or keep-alive)."""
    block = _Block()
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if block.data:
                yield ServerSentEvent(
                    block.id, block.event or "message", "\n".join(block.data), block.retry
                )
            elif block.seen:
                yield None if block.retry is None else ServerSentEvent(retry=block.retry)
            block = _Block()
            continue
        block.seen = True
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            block.data.append(value)
        elif name == "id" and "\0" not in value:
            block.id = value
        elif name == "event":
            block.event = value
        elif name == "retry" and value.isdigit():
            block.retry = int(value)


class EventStream(Iterator[Event]):
    """Iterate a table's events as they happen; reconnects with Last-Event-ID.

    `last_event_id` is the id of the last event yielded (pass it as `after` to resume
    later); `reconnects` counts the connections made after the first. Use it as a
    context manager, or call `close`, to drop the connection. With `until` (a
    `time.monotonic()` value) iteration stops then. With `tickets`, each connection
    is opened with the stream ticket it returns (``?ticket=``) instead of `token`.
    """

    def __init__(
        self,
        transport: Transport,
        table_id: str,
        *,
        token: str | None,
        after: int,
        tickets: Callable[[], str] | None = None,
        retry: RetryPolicy,
        read_timeout: float,
        reconnect_delay: float | None,
        until: float | None,
    ) -> None:
        """Prepare the stream; nothing is sent before the first `next`."""
        self._transport = transport
        self._path = f"/v1/tables/{table_id}/events/stream"
        self._token = token
        self._tickets = tickets
        self.last_event_id = after
        self.reconnects = 0
        self._retry = retry
        self._read_timeout = read_timeout
        self._reconnect_delay = reconnect_delay
        self._server_delay = 1.0
        self._until = until
        self._closed = threading.Event()
        self._response: httpx.Response | None = None
        self._events = self._run()

    def __iter__(self) -> EventStream:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def __enter__(self) -> EventStream:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Drop the connection; iteration ends (also when called from another thread)."""
        self._closed.set()
        response = self._response
        if response is not None:
            response.close()

    def _expired(self) -> bool:
        return self._closed.is_set() or (
            self._until is not None and time.monotonic() >= self._until
        )

    def _run(self) -> Iterator[Event]:
        timer = None
        if self._until is not None:
            # a blocked read only ends when a block arrives: close the stream on time instead
            timer = threading.Timer(max(0.0, self._until - time.monotonic()), self.close)
            timer.daemon = True
            timer.start()
        try:
            yield from self._connections()
        finally:
            if timer is not None:
                timer.cancel()

    def _connections(self) -> Iterator[Event]:
        failures = 0
        first = True
        while not self._expired():
            if not first:
                self.reconnects += 1
            first = False
            headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
            if self._token is not None:
                headers["Authorization"] = f"Bearer {self._token}"
            headers["Last-Event-ID"] = str(self.last_event_id)
            # a ticket opens one connection: each one gets its own
            params = None if self._tickets is None else {"ticket": self._tickets()}
            request = self._transport.http.build_request(
                "GET",
                self._path,
                params=params,
                headers=headers,
                timeout=self._transport.timeout_for(self._read_timeout),
            )
            failure: CardroomError | None = None
            try:
                response = self._transport.http.send(request, stream=True)
            except NETWORK_ERRORS as error:
                failure = connection_failed(error, "GET", str(request.url))
            else:
                self._response = response
                try:
                    if response.status_code != 200:
                        response.read()
                        failure = error_from_response(response, "GET")
                        if not self._retry.retryable(failure):
                            raise failure
                    else:
                        for item in parse_stream(response.iter_lines()):
                            failures = 0
                            if item is not None and item.retry is not None:
                                self._server_delay = item.retry / 1000
                            if item is not None and item.data:
                                event = Event.from_json(json.loads(item.data))
                                self.last_event_id = event.id
                                yield event
                            if self._expired():
                                return
                except NETWORK_ERRORS as error:
                    if self._closed.is_set():
                        return
                    failure = connection_failed(error, "GET", str(request.url))
                except Exception:
                    # closing from another thread may surface as any error of the reader
                    if self._closed.is_set():
                        return
                    raise
                finally:
                    response.close()
                    self._response = None
            if failure is None:
                # the server ended the stream, as it does after a while: come back at once
                # after the delay it asked for
                delay = (
                    self._server_delay if self._reconnect_delay is None else self._reconnect_delay
                )
            else:
                failures += 1
                if failures >= self._retry.attempts:
                    raise failure
                delay = self._retry.delay(failures, failure.retry_after)
            if self._closed.wait(delay):
                return
