"""Group commit: the Redis commands that a gevent worker's requests make while another
batch is on the wire go to Redis together, as one pipeline.

A move's commit is one `EVALSHA`. Sent alone, each one is a write to Redis's socket
that wakes Redis and a reply that wakes the worker again, and on a busy worker those
wake-ups and the client library's work around each command cost more than the
command. A `CommandBatcher` keeps at most one batch in flight per worker:

- a request's commands (one command, or a few that belong together, like a move's
  read) made while no batch is in flight go out at once: an idle worker pays nothing
  for batching and waits for nothing;
- those made while a batch is in flight wait for it to come back; then everything
  that queued meanwhile leaves as one write answered by one read, sent by the first
  of the waiting greenlets (the batch's leader), and each greenlet gets its own
  replies, errors included. The busier the worker, the larger the batches.

Commands in a batch are independent: each is answered as if sent alone (a pipeline
without a transaction); a connection that fails fails the whole batch, as it would
have failed each command on it. Since only the leader sends, the batcher has a
connection of its own, outside the client's pool: no pool checkout and no check of
the connection for unread replies before each command (a poll of its socket), which
cost a command about as much again as the rest of the client's work. The client's
retry policy applies to it as to the pool's connections.

Only for a gevent worker (the standard library patched), where a waiting greenlet
costs little: a threaded worker, a Redis Cluster and processes without gevent send
each request's commands directly (`batcher_for` returns None).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, cast

import redis

Command = Sequence[Any]


class _Slot:
    """A request's commands in the queue and, once their batch is back, their replies."""

    __slots__ = ("commands", "error", "leading", "replies", "waiter")

    def __init__(self, commands: Sequence[Command], waiter: Any) -> None:
        self.commands = commands
        self.waiter = waiter
        self.leading = False
        self.replies: list[Any] = []
        self.error: BaseException | None = None


class CommandBatcher:
    """Sends the commands of concurrent greenlets in batches, one batch in flight."""

    def __init__(self, client: redis.Redis, observe: Callable[[int], Any] | None = None) -> None:
        """Batch commands sent through `client` (a single Redis, not a cluster).

        `observe` is told the number of requests in each batch sent.
        """
        from gevent.hub import Waiter, get_hub

        self._client = client
        pool = client.connection_pool
        self._connection = pool.connection_class(**pool.connection_kwargs)
        self._observe = observe
        self._waiter = Waiter
        self._hub = get_hub
        self._queue: list[_Slot] = []
        self._busy = False
        self.batches = 0  # batches sent and the requests in them (the tests read them)
        self.requests = 0

    def send(self, commands: Sequence[Command]) -> list[Any]:
        """Send a request's `commands` (each a command's name and arguments).

        Their replies in order, an error reply as its exception (`ResponseError`, a
        `NoScriptError`...); raises what made the connection fail.
        """
        if self._busy:
            slot = _Slot(commands, self._waiter())
            self._queue.append(slot)
            try:
                lead = slot.waiter.get()
            except BaseException:
                self._leave(slot)
                raise
            if lead:  # woken as the next batch's leader: send everything queued
                self._lead(self._take())
        else:
            self._busy = True
            slot = _Slot(commands, None)
            self._lead([slot])
        if slot.error is not None:
            own = _own_copy(slot.error)
            if own is None:
                raise slot.error
            raise own from slot.error
        return slot.replies

    def _take(self) -> list[_Slot]:
        batch, self._queue = self._queue, []
        return batch

    def _leave(self, slot: _Slot) -> None:
        """A queued greenlet was interrupted (killed, a timeout) before its batch left."""
        if slot in self._queue:
            self._queue.remove(slot)
        if slot.leading:  # it was to send the batch: the next one in the queue does
            self._pass_lead()

    def _lead(self, batch: list[_Slot]) -> None:
        """Send `batch`, wake its greenlets, and pass the lead to the next batch."""
        try:
            self._send(batch)
        finally:
            # the next batch's leader first: it sends its batch before the greenlets of
            # this one go on with their requests, so that Redis has work meanwhile
            self._pass_lead()
            loop = self._hub().loop
            for slot in batch:
                if slot.waiter is not None and not slot.leading:
                    loop.run_callback(slot.waiter.switch, False)

    def _pass_lead(self) -> None:
        if self._queue:
            first = self._queue[0]
            first.leading = True
            self._hub().loop.run_callback(first.waiter.switch, True)
        else:
            self._busy = False

    def _send(self, batch: list[_Slot]) -> None:
        self.batches += 1
        self.requests += len(batch)
        if self._observe is not None:
            self._observe(len(batch))
        connection = self._connection
        commands = [command for slot in batch for command in slot.commands]
        try:
            replies = connection.retry.call_with_retry(
                lambda: self._exchange(commands), lambda _: connection.disconnect()
            )
        except Exception as error:  # the connection failed: every command shares it
            for slot in batch:
                slot.error = error
            return
        except BaseException:  # the leader was interrupted (killed) mid-batch
            for slot in batch:
                slot.error = redis.exceptions.ConnectionError(
                    "the batch's sender was interrupted before the reply"
                )
            raise
        start = 0
        for slot in batch:
            slot.replies = replies[start : start + len(slot.commands)]
            start += len(slot.commands)

    def _exchange(self, commands: list[Command]) -> list[Any]:
        """Write `commands` at once and read their replies, as a pipeline does."""
        connection = self._connection
        try:
            connection.send_packed_command(connection.pack_commands(commands))
            replies: list[Any] = []
            for command in commands:
                try:
                    replies.append(self._client.parse_response(connection, command[0]))  # type: ignore[no-untyped-call]
                except redis.exceptions.ResponseError as error:
                    replies.append(error)
        except BaseException:
            # replies may be left unread on it: the next batch reconnects
            connection.disconnect()
            raise
        return replies


def _own_copy(error: BaseException) -> BaseException | None:
    """A batch's error is shared by its requests: each raises its own copy, so that no
    traceback grows with every greenlet that raises it (None if it cannot be copied)."""
    try:
        return copy.copy(error)
    except Exception:
        return None


def send_now(client: Any, commands: Sequence[Command]) -> list[Any]:
    """Send `commands` at once (one command alone, several as a pipeline without a
    transaction); their replies, an error reply as its exception."""
    if len(commands) == 1:
        try:
            return [client.execute_command(*commands[0])]
        except redis.exceptions.ResponseError as error:
            return [error]
    pipe = client.pipeline(transaction=False)
    for command in commands:
        pipe.execute_command(*command)
    return cast(list[Any], pipe.execute(raise_on_error=False))


def batcher_for(
    client: Any, enabled: bool, observe: Callable[[int], Any] | None = None
) -> CommandBatcher | None:
    """A batcher for `client` where batching applies (see the module), else None."""
    if not enabled or not isinstance(client, redis.Redis):
        return None
    try:
        from gevent import monkey
    except ImportError:
        return None
    if not monkey.is_module_patched("socket"):
        return None
    return CommandBatcher(client, observe)
