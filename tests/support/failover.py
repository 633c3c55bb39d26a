"""Redis failing over under play: replicated Redis, Sentinels, a primary cut off from its
replica and killed, and players who keep what the gateway acknowledged.

The scenario every failover test plays: a primary's replica is frozen (SIGSTOP) and the
primary drops its link to it, so that for a while nothing the primary writes reaches
the replica; players go on playing; the primary is killed (SIGKILL) and its replica,
thawed, is promoted without those writes. An answer the gateway acknowledged in that
while is lost unless acknowledging waited for a replica (`REDIS_ACK_REPLICAS`), which
is what the tests check, from each player's log of the answers it was given.
"""

from __future__ import annotations

import http.client
import os
import random
import signal
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis

from deploy.processes import redis_server_binary
from tests.support.processes import VOLATILE, HttpGateway, RedisProcess, free_port, poll
from tests.support.tables_api import Account

# ---------------------------------------------------------------- Redis topologies


class ReplicaOf(RedisProcess):
    """A redis-server replicating `primary`."""

    def __init__(self, directory: Path, primary: RedisProcess) -> None:
        """Prepare (not start) a replica of `primary`, its files in `directory`."""
        super().__init__(
            directory, flags=(*VOLATILE, "--replicaof", "127.0.0.1", str(primary.port))
        )


class Sentinel:
    """A Redis Sentinel watching one primary (as service `name`)."""

    def __init__(self, directory: Path, primary: RedisProcess, name: str, down_ms: int) -> None:
        """Prepare (not start) a Sentinel that calls the primary down after `down_ms`."""
        self.directory = directory
        self.settings = (
            f"sentinel monitor {name} 127.0.0.1 {primary.port} 2\n"
            f"sentinel down-after-milliseconds {name} {down_ms}\n"
            f"sentinel failover-timeout {name} {4 * down_ms}\n"
            f"sentinel parallel-syncs {name} 1\n"
        )
        self._configure()
        self.process: subprocess.Popen[bytes] | None = None

    def _configure(self) -> None:
        """Take a free port and write the configuration for it."""
        self.port = free_port()
        self.config = self.directory / f"sentinel-{self.port}.conf"
        self.config.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.directory}\n{self.settings}"
        )

    def start(self) -> None:
        """Start and wait until it answers; on another free port if another process took
        the one it was given before it could bind it."""
        for attempt in range(3):
            if attempt:
                self._configure()
            self.process = subprocess.Popen(
                [redis_server_binary(), str(self.config), "--sentinel"], stdout=subprocess.DEVNULL
            )
            poll(self._answers_or_exited, 30, "a sentinel answers")
            if self.process.poll() is None:
                return
        raise AssertionError("no Sentinel could start: each port was taken")

    def _answers_or_exited(self) -> bool:
        """It answers, or its process ended (its port taken: `start` tries another)."""
        return self._answers() or (self.process is not None and self.process.poll() is not None)

    def _answers(self) -> bool:
        try:
            with redis.Redis(port=self.port, socket_timeout=1) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def primary_port(self, name: str) -> int:
        """The port of the primary this Sentinel names now."""
        with redis.Redis(port=self.port, decode_responses=True) as client:
            _host, port = client.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
        return int(port)

    def stop(self) -> None:
        """Stop it."""
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@dataclass
class SentinelGroup:
    """A primary, its replica and three Sentinels: what `redis+sentinel://` reaches."""

    primary: RedisProcess
    replica: RedisProcess
    sentinels: list[Sentinel]
    name: str = "cardroom"

    @classmethod
    def build(cls, directory: Path, down_ms: int = 1000) -> SentinelGroup:
        """Prepare (not start) the group, its files in `directory`."""
        directory.mkdir(parents=True, exist_ok=True)
        primary = RedisProcess(directory)
        replica = ReplicaOf(directory, primary)
        sentinels = [Sentinel(directory, primary, "cardroom", down_ms) for _ in range(3)]
        return cls(primary, replica, sentinels)

    @property
    def url(self) -> str:
        """The URL the gateway is given."""
        hosts = ",".join(f"127.0.0.1:{sentinel.port}" for sentinel in self.sentinels)
        return f"redis+sentinel://{hosts}/{self.name}/0"

    def start(self) -> None:
        """Start the primary, its replica in sync, then the Sentinels."""
        self.primary.start()
        self.replica.start()
        poll(lambda: link_up(self.replica), 30, "the replica in sync")
        for sentinel in self.sentinels:
            sentinel.start()

    def promoted(self) -> bool:
        """Whether the Sentinels name the replica as the primary now."""
        return all(s.primary_port(self.name) == self.replica.port for s in self.sentinels)

    def stop(self) -> None:
        """Stop everything."""
        for sentinel in self.sentinels:
            sentinel.stop()
        self.replica.stop()
        self.primary.stop()


def link_up(replica: RedisProcess) -> bool:
    """Whether a replica's link to its primary is up."""
    with redis.Redis(port=replica.port, decode_responses=True) as client:
        return bool(client.info("replication").get("master_link_status") == "up")


def cut_off(primary: RedisProcess, replica: RedisProcess) -> None:
    """Freeze the replica and have the primary drop its link: from now on nothing the
    primary writes reaches the replica."""
    assert replica.process is not None
    os.kill(replica.process.pid, signal.SIGSTOP)
    with redis.Redis(port=primary.port) as client:
        client.execute_command("CLIENT", "KILL", "TYPE", "replica")


def kill_and_thaw(primary: RedisProcess, replica: RedisProcess) -> None:
    """Kill the primary (SIGKILL) and thaw its replica, which the cluster or the Sentinels
    then promote without what the primary wrote after the cut."""
    primary.kill()
    assert replica.process is not None
    os.kill(replica.process.pid, signal.SIGCONT)


# ---------------------------------------------------------------- players


LOST = (OSError, http.client.HTTPException)


@dataclass
class Acknowledged:
    """One answer the gateway gave as done: the table and the events it told of."""

    table_id: str
    what: str
    events: list[dict[str, Any]]


@dataclass
class Player:
    """A player at the tables: what it was told, and how its requests went."""

    account: Account
    rng: random.Random
    told: list[Acknowledged] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    # when each refusal of the store came (503), for the seconds a failover costs
    unavailable: list[float] = field(default_factory=list)
    keys: int = 0
    failure: BaseException | None = None

    def new_key(self) -> str:
        """A fresh Idempotency-Key."""
        self.keys += 1
        return f"{self.account.name}-{self.keys}"


def send(gateway: HttpGateway, player: Player, method: str, path: str, body: Any) -> Any:
    """One change under an Idempotency-Key, sent again under the same key while the store
    answers 503 or the answer is lost; the final answer, or None after many tries. A 500
    fails the test: a failover is answered 503 until it is over."""
    headers = {"Idempotency-Key": player.new_key()}
    for _ in range(60):
        try:
            reply = gateway.call(method, path, player.account, body, headers=headers)
        except LOST:
            player.outcomes["lost"] += 1
            time.sleep(0.25)
            continue
        status = reply.status_code
        code = reply.get_json().get("code", "") if status >= 400 else ""
        player.outcomes[f"{status} {code}".strip()] += 1
        assert status < 500 or status == 503, reply.text()
        if status == 503:
            player.unavailable.append(time.monotonic())
            time.sleep(0.25)
            continue
        return reply
    return None


def acknowledge(player: Player, table_id: str, what: str, reply: Any) -> None:
    """Keep what a 2xx answer told of: its events, each with its id, kind and data."""
    if reply is not None and 200 <= reply.status_code < 300 and reply.data:
        events = reply.get_json().get("events", [])
        player.told.append(Acknowledged(table_id, what, events))


def play(gateway: HttpGateway, player: Player, tables: list[str], stop: threading.Event) -> None:
    """Sit, start, declare, rebuy and leave at the tables until told to stop; what
    fails the player (an assertion, an error) is kept in `player.failure`."""
    try:
        _play(gateway, player, tables, stop)
    except BaseException as error:
        player.failure = error


def _play(gateway: HttpGateway, player: Player, tables: list[str], stop: threading.Event) -> None:
    rng = player.rng
    held: set[str] = set()
    body: dict[str, Any]
    while not stop.is_set():
        table_id = rng.choice(tables)
        if table_id not in held:
            body = {"buy_in": rng.randint(20, 100)}
            reply = send(gateway, player, "POST", f"/v1/tables/{table_id}/seats", body)
            acknowledge(player, table_id, "seat", reply)
            if reply is not None and reply.status_code in (201, 409):
                held.add(table_id)
            continue
        roll = rng.random()
        path = f"/v1/tables/{table_id}/actions"
        if roll < 0.6:
            choice = "in" if rng.random() < 0.5 else "out"
            body = {"action": "declare", "choice": choice}
            acknowledge(player, table_id, "declare", send(gateway, player, "POST", path, body))
        elif roll < 0.75:
            reply = send(gateway, player, "POST", path, {"action": "start"})
            acknowledge(player, table_id, "start", reply)
        elif roll < 0.9:
            body = {"action": "rebuy", "amount": rng.randint(1, 20)}
            acknowledge(player, table_id, "rebuy", send(gateway, player, "POST", path, body))
        else:
            seat = seat_of(gateway, player, table_id)
            if seat is None:
                held.discard(table_id)
                continue
            reply = send(gateway, player, "DELETE", f"/v1/tables/{table_id}/seats/{seat}", None)
            acknowledge(player, table_id, "leave", reply)
            held.discard(table_id)


def seat_of(gateway: HttpGateway, player: Player, table_id: str) -> int | None:
    """The seat the player holds at the table, as the table says now (None: none)."""
    try:
        reply = gateway.call("GET", f"/v1/tables/{table_id}", player.account)
    except LOST:
        return None
    if reply.status_code != 200:
        return None
    you = reply.get_json().get("you")
    return None if you is None else int(you["seat"])


def missing(
    told: list[Acknowledged], logs: dict[str, dict[int, dict[str, Any]]]
) -> dict[int, list[str]]:
    """By answer (its place in `told`), the events it told of that the tables' logs (by
    table, by event id) no longer hold as told: the acknowledged answers a failover lost."""
    lost: dict[int, list[str]] = {}
    for number, answer in enumerate(told):
        log = logs[answer.table_id]
        for item in answer.events:
            kept = log.get(item["id"])
            if kept is None or (kept["type"], kept["data"]) != (item["type"], item["data"]):
                line = f"{answer.table_id} {answer.what}: event {item['id']} {item['type']}"
                lost.setdefault(number, []).append(line)
    return lost


def unavailable_seconds(players: list[Player], since: float) -> float:
    """How long, after `since`, the players met 503s: from the first to the last one."""
    times = sorted(t for player in players for t in player.unavailable if t >= since)
    return times[-1] - times[0] if times else 0.0
