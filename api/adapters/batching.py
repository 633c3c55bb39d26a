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
have failed each command on it. When writes wait for replicas (`api.adapters.replication`)
and too few confirm a batch's writes, only the requests that wrote are refused: a move's
read that shared its batch with the clock's write gets its replies.

Since only the leader sends, the batcher has a connection of its own, outside the
client's pool: no pool checkout and no check of the connection for unread replies
before each command (a poll of its socket), which cost a command about as much again
as the rest of the client's work. The client's
retry policy applies to it as to the pool's connections.

Only for a gevent worker (the standard library patched), where a waiting greenlet
costs little: a threaded worker, a Redis Cluster, a primary found through Sentinels and
processes without gevent send each request's commands directly (`batcher_for` returns
None).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import redis
import redis.sentinel

from api.adapters.replication import NotReplicated, is_write

Command = Sequence[Any]


class Queued:
    """A request waiting in a `Batches` queue: its greenlet's waiter (None when it went
    out at once, alone) and whether it is to send the next batch."""

    __slots__ = ("leading", "waiter")

    def __init__(self) -> None:
        self.waiter: Any = None
        self.leading = False


S = TypeVar("S", bound=Queued)


class Batches(Generic[S]):
    """One batch in flight per worker: a request made while none is goes out at once,
    alone; those made meanwhile queue, and once it is back they leave together (at most
    `limit` a batch), sent by the first of them, the batch's leader. `_send` sends a
    batch and leaves each request's answer in its slot."""

    limit = 0  # 0: no limit

    def __init__(self) -> None:
        """An empty queue (gevent's hub and waiters: a gevent worker only)."""
        from gevent.hub import Waiter, get_hub

        self._waiter = Waiter
        self._hub = get_hub
        self._queue: list[S] = []
        self._busy = False

    def _take_turn(self, slot: S) -> None:
        """Send `slot` at once, alone, or in a batch once the one in flight is back."""
        if self._busy:
            slot.waiter = self._waiter()
            self._queue.append(slot)
            try:
                lead = slot.waiter.get()
            except BaseException:
                self._leave(slot)
                raise
            if lead:  # woken as the next batch's leader: send what queued
                self._lead(self._take())
        else:
            self._busy = True
            self._lead([slot])

    def _take(self) -> list[S]:
        if self.limit:
            batch, self._queue = self._queue[: self.limit], self._queue[self.limit :]
        else:
            batch, self._queue = self._queue, []
        return batch

    def _leave(self, slot: S) -> None:
        """A queued greenlet was interrupted (killed, a timeout) before its batch left."""
        if slot in self._queue:
            self._queue.remove(slot)
        if slot.leading:  # it was to send the batch: the next one in the queue does
            self._pass_lead()

    def _lead(self, batch: list[S]) -> None:
        """Send `batch`, wake its greenlets, and pass the lead to the next batch."""
        try:
            self._send(batch)
        finally:
            # the next batch's leader first: it sends its batch before the greenlets of
            # this one go on with their requests, so that the server has work meanwhile
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

    def _send(self, batch: list[S]) -> None:
        raise NotImplementedError


class _Slot(Queued):
    """A request's commands in the queue and, once their batch is back, their replies."""

    __slots__ = ("commands", "error", "replies")

    def __init__(self, commands: Sequence[Command]) -> None:
        super().__init__()
        self.commands = commands
        self.replies: list[Any] = []
        self.error: BaseException | None = None


class CommandBatcher(Batches[_Slot]):
    """Sends the commands of concurrent greenlets in batches, one batch in flight."""

    def __init__(self, client: redis.Redis, observe: Callable[[int], Any] | None = None) -> None:
        """Batch commands sent through `client` (a single Redis, not a cluster).

        `observe` is told the number of requests in each batch sent.
        """
        super().__init__()
        self._client = client
        pool = client.connection_pool
        self._connection = pool.connection_class(**pool.connection_kwargs)
        self._observe = observe
        self.batches = 0  # batches sent and the requests in them (the tests read them)
        self.requests = 0

    def send(self, commands: Sequence[Command]) -> list[Any]:
        """Send a request's `commands` (each a command's name and arguments).

        Their replies in order, an error reply as its exception (`ResponseError`, a
        `NoScriptError`...); raises what made the connection fail.
        """
        slot = _Slot(commands)
        self._take_turn(slot)
        if slot.error is not None:
            own = _own_copy(slot.error)
            if own is None:
                raise slot.error
            raise own from slot.error
        return slot.replies

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
        except _UnconfirmedError as unconfirmed:
            # every reply was read, then too few replicas confirmed the batch's writes:
            # a request that wrote is told so; one that only read gets its replies
            start = 0
            for slot in batch:
                if any(is_write(command) for command in slot.commands):
                    slot.error = unconfirmed.error
                else:
                    slot.replies = unconfirmed.replies[start : start + len(slot.commands)]
                start += len(slot.commands)
            return
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
        """Write `commands` at once and read their replies, as a pipeline does
        (`_UnconfirmedError`, holding them, when too few replicas confirmed its writes)."""
        connection = self._connection
        unconfirmed: NotReplicated | None = None
        try:
            connection.send_packed_command(connection.pack_commands(commands))
            replies: list[Any] = []
            for command in commands:
                try:
                    replies.append(self._client.parse_response(connection, command[0]))  # type: ignore[no-untyped-call]
                except redis.exceptions.ResponseError as error:
                    replies.append(error)
                except NotReplicated as error:
                    # the last reply was read, and the WAIT after it: the connection is fine
                    replies.append(self._parsed(command, error.reply))
                    unconfirmed = error
        except BaseException:
            # replies may be left unread on it: the next batch reconnects
            connection.disconnect()
            raise
        if unconfirmed is not None:
            raise _UnconfirmedError(unconfirmed, replies)
        return replies

    def _parsed(self, command: Command, reply: Any) -> Any:
        """`reply` to `command` as the client's `parse_response` gives it."""
        if isinstance(reply, BaseException):
            return reply
        callbacks = cast(dict[str, Any], self._client.response_callbacks)
        callback = callbacks.get(command[0])
        return reply if callback is None else callback(reply)


class _UnconfirmedError(Exception):
    """A batch's replies were all read, but too few replicas confirmed its writes."""

    def __init__(self, error: NotReplicated, replies: list[Any]) -> None:
        super().__init__(str(error))
        self.error = error
        self.replies = replies


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
    if isinstance(client.connection_pool, redis.sentinel.SentinelConnectionPool):
        # a connection of the batcher's own would not follow the Sentinels to the primary
        return None
    try:
        from gevent import monkey
    except ImportError:
        return None
    if not monkey.is_module_patched("socket"):
        return None
    return CommandBatcher(client, observe)
