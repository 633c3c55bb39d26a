"""What thousands of watchers cost a gateway and its Redis (docs/capacity.md, "Watchers
share one read"): `make bench-fanout` (`python -m bench.gateway.fanout`).

It starts a private Redis, the evaluator and gunicorn as `make run` does (two gevent
workers) on free loopback ports, opens 50 tables, and has one player at each sit down
and stand up again, `--moves` times a second over all the tables, while watchers wait
on them through three windows of `--seconds`:

- **100**: 100 event streams (two a table);
- **5,000**: 5,000 event streams (a hundred a table);
- **5,000 + 1,000**: the same and 1,000 long polls (twenty a table).

In each window: Redis's `connected_clients` and `blocked_clients`, Redis's CPU
(`used_cpu_sys` + `used_cpu_user` of INFO) per event committed, and each event's delay
from its `at` (when the gateway made it) to the last of its table's watchers that got
it (p50, p99), with the deliveries missed or repeated. The watchers are asyncio clients
on raw sockets, in `--clients` processes (RLIMIT_NOFILE raised to its hard limit).

With `--against REV`, REV's gateway (checked out into a temporary worktree) is
measured the same way in the same run, first: the outside baseline. Results go to
`bench/results/fanout.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import re
import resource
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import redis

from bench.gateway.service import GatewayConfig, Service
from bench.measure import RESULTS, percentile
from tests.support.processes import ROOT

RESULT = RESULTS / "fanout.json"
TABLES = 50
WINDOWS = (("100", 100, 0), ("5,000", 5_000, 0), ("5,000 + 1,000", 5_000, 1_000))
LONG_POLL_WAIT = 20
# each watcher's connection is held for the whole run (and a stream's lifetime with it)
GATEWAY_ENV = {
    "GATEWAY_WORKER_CONNECTIONS": "8000",
    "WAITING_PER_ADDRESS": "1000000",
    "WAITING_PER_CREDENTIAL": "1000000",
    "STREAM_MAX_SECONDS": "3600",
    "LONG_POLL_MAX_SECONDS": "60",
    "QUOTA_OPEN_TABLES": "1000",
}
_FRAME = re.compile(rb"id: (\d+)\nevent: [a-z_]+\ndata: ([^\n]*)\n\n")

Target = tuple[str, str, int]  # (kind "sse" or "poll", table id, cursor)
Seen = dict[tuple[str, int], list[float]]  # (table, event id) -> [latest delay, deliveries, at]


def raise_open_files() -> None:
    """As many open files as the hard limit allows (a client holds thousands of sockets)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _note(seen: Seen, table_id: str, event: dict[str, Any], now: float) -> None:
    entry = seen.setdefault((table_id, int(event["id"])), [0.0, 0.0, float(event["at"])])
    entry[0] = max(entry[0], now - entry[2])
    entry[1] += 1


async def _stream(port: int, target: Target, seen: Seen, opened: list[int]) -> None:
    """An event stream of the target's table from its cursor, noting each event's delay."""
    _kind, table_id, cursor = target
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"GET /v1/tables/{table_id}/events/stream?after={cursor} HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n\r\n".encode()
    )
    opened[0] += 1
    buffer = b""
    while chunk := await reader.read(65536):
        buffer += chunk
        now = time.time()
        end = 0
        for found in _FRAME.finditer(buffer):
            _note(seen, table_id, json.loads(found[2]), now)
            end = found.end()
        buffer = buffer[end:]


async def _poll(port: int, target: Target, seen: Seen, opened: list[int]) -> None:
    """Long polls of the target's table on one keep-alive connection, one after another."""
    _kind, table_id, cursor = target
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    counted = False
    while True:
        writer.write(
            f"GET /v1/tables/{table_id}/events?after={cursor}&wait={LONG_POLL_WAIT} HTTP/1.1"
            "\r\nHost: 127.0.0.1\r\n\r\n".encode()
        )
        if not counted:
            opened[0] += 1
            counted = True
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head)[1])  # type: ignore[index]
        body = json.loads(await reader.readexactly(length))
        now = time.time()
        for event in body["events"]:
            _note(seen, table_id, event, now)
        cursor = int(body["next"])


def watch(port: int, targets: list[Target], stop: Any, opened: Any, out: Any) -> None:
    """In a process of its own: hold `targets` open until `stop` is set; put what was seen."""
    raise_open_files()
    seen: Seen = {}
    count = [0]

    async def main() -> None:
        tasks = []
        for target in targets:
            run = _stream if target[0] == "sse" else _poll
            tasks.append(asyncio.create_task(run(port, target, seen, count)))
            if len(tasks) % 50 == 0:
                await asyncio.sleep(0.05)  # a connection burst the listen queue holds
                opened.value = count[0]
        while not stop.is_set():
            opened.value = count[0]
            await asyncio.sleep(0.5)
        for task in tasks:
            task.cancel()
        errors = [t.exception() for t in tasks if t.done() and not t.cancelled()]
        failed = float(sum(1 for error in errors if error is not None))
        notes["errors"] = [failed, 0.0, 0.0]

    notes: dict[str, list[float]] = {}
    asyncio.run(main())
    notes.update((f"{table}\t{number}", entry) for (table, number), entry in seen.items())
    out.put(notes)


class Tables:
    """The run's tables, each with a player who sits down and stands up again."""

    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, timeout=60)
        self.ids: list[str] = []
        self.keys: list[str] = []
        self.seated: list[int | None] = []
        for number in range(TABLES):
            key = self.http.post("/v1/players", json={"name": f"p{number}"}).json()["key"]
            answer = self.http.post(
                "/v1/tables", json={"game": "guts"}, headers={"authorization": f"Bearer {key}"}
            )
            self.ids.append(answer.json()["table"]["id"])
            self.keys.append(key)
            self.seated.append(None)

    def cursor(self, table_id: str) -> int:
        """The table's last event id now."""
        return int(self.http.get(f"/v1/tables/{table_id}/events").json()["next"])

    def move(self, index: int) -> None:
        """The player of table `index` sits down, or stands up if seated."""
        table_id, auth = self.ids[index], {"authorization": f"Bearer {self.keys[index]}"}
        seat = self.seated[index]
        if seat is None:
            answer = self.http.post(
                f"/v1/tables/{table_id}/seats", json={"buy_in": 100}, headers=auth
            )
            answer.raise_for_status()
            self.seated[index] = int(answer.json()["seat"])
        else:
            self.http.delete(f"/v1/tables/{table_id}/seats/{seat}", headers=auth).raise_for_status()
            self.seated[index] = None


@contextmanager
def moving(tables: Tables, per_second: float) -> Iterator[None]:
    """Moves at `per_second`, round the tables, until the block ends."""
    stop = threading.Event()
    failed: list[BaseException] = []

    def run() -> None:
        turn = 0
        next_at = time.monotonic()
        try:
            while not stop.is_set():
                tables.move(turn % TABLES)
                turn += 1
                next_at += 1 / per_second
                stop.wait(max(0.0, next_at - time.monotonic()))
        except BaseException as error:
            failed.append(error)

    mover = threading.Thread(target=run, daemon=True)
    mover.start()
    try:
        yield
    finally:
        stop.set()
        mover.join()
    if failed:
        raise failed[0]


def redis_figures(client: redis.Redis, table_ids: list[str]) -> tuple[float, int]:
    """Redis's CPU seconds so far and the events its tables hold."""
    cpu = client.info("cpu")
    pipe = client.pipeline(transaction=False)
    for table_id in table_ids:
        pipe.xlen(f"table:{{{table_id}}}:events")
    events = sum(pipe.execute())
    return float(cpu["used_cpu_sys"]) + float(cpu["used_cpu_user"]), events


def run_gateway(config: GatewayConfig, args: argparse.Namespace, log: Any) -> dict[str, Any]:
    """The three windows on one gateway of `config`."""
    service = Service(config)
    try:
        assert service.gateway is not None
        client = redis.Redis.from_url(service.redis.url, decode_responses=True)
        tables = Tables(service.url)
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        stop = context.Event()
        workers: list[Any] = []
        opened: list[Any] = []
        held = {"sse": 0, "poll": 0}
        windows: dict[str, Any] = {}
        for name, all_streams, all_polls in WINDOWS:
            streams, polls = int(all_streams * args.scale), int(all_polls * args.scale)
            # the watchers added now start from each table's last event
            cursors = {table_id: tables.cursor(table_id) for table_id in tables.ids}
            targets: list[Target] = [
                (kind, tables.ids[n % TABLES], cursors[tables.ids[n % TABLES]])
                for kind, wanted in (("sse", streams), ("poll", polls))
                for n in range(held[kind], wanted)
            ]
            held = {"sse": streams, "poll": polls}
            for part in range(args.clients):
                if share := targets[part :: args.clients]:
                    counter = context.Value("i", 0)
                    worker = context.Process(
                        target=watch,
                        args=(service.gateway.port, share, stop, counter, out),
                        daemon=True,
                    )
                    worker.start()
                    workers.append(worker)
                    opened.append(counter)
            while sum(counter.value for counter in opened) < streams + polls:
                time.sleep(0.5)
            # every request sent has reached its wait: the gateway holds its place
            while waiting_held(client) < streams + polls:
                time.sleep(0.5)
            time.sleep(2)
            log(f"  {name}: {streams + polls:,} watchers connected")
            windows[name] = window(client, tables, args)
            windows[name]["watchers_per_table"] = (streams + polls) / TABLES
        stop.set()
        seen = gather(out, len(workers), 300)
        for worker in workers:
            worker.join(10)
        for name, figures in windows.items():
            figures.update(delays(seen, figures.pop("span"), figures["watchers_per_table"]))
            log(f"  {name}: {describe(figures)}")
            log(f"    Redis commands per event: {figures['redis_commands_per_event']}")
        return windows
    finally:
        service.stop()


def window(client: redis.Redis, tables: Tables, args: argparse.Namespace) -> dict[str, Any]:
    """One window's Redis figures: its CPU while the watchers wait with nothing to read
    (the clock's ticks, keep-alives, long polls timing out), then while the moves go on;
    what each event cost beyond the first is its CPU per event. Its span, for delays."""
    idle_cpu, _ = redis_figures(client, tables.ids)
    time.sleep(args.seconds / 2)
    begun = time.time()
    cpu_before, events_before = redis_figures(client, tables.ids)
    idle_rate = (cpu_before - idle_cpu) / (args.seconds / 2)
    calls_before = command_calls(client)
    started = time.monotonic()
    with moving(tables, args.moves):
        time.sleep(args.seconds / 2)
        clients = client.info("clients")
        time.sleep(args.seconds / 2)
    cpu_after, events_after = redis_figures(client, tables.ids)
    spent = cpu_after - cpu_before - idle_rate * (time.monotonic() - started)
    events = events_after - events_before
    calls = command_calls(client)
    per_event = {
        name: round((count - calls_before.get(name, 0)) / max(events, 1), 2)
        for name, count in calls.items()
        if count - calls_before.get(name, 0) >= events / 10
    }
    return {
        "connected_clients": int(clients["connected_clients"]),
        "blocked_clients": int(clients["blocked_clients"]),
        "events": events,
        "redis_idle_cpu_percent": idle_rate * 100,
        "redis_cpu_us_per_event": spent * 1e6 / max(events, 1),
        "redis_commands_per_event": per_event,
        "span": (begun, time.time()),
    }


def waiting_held(client: redis.Redis) -> int:
    """The waiting requests the gateway counts for this machine's address now."""
    return int(client.zcount("address:{127.0.0.1}:streams", int(time.time() * 1000), "+inf"))


def command_calls(client: redis.Redis) -> dict[str, int]:
    """How many times Redis has run each command (INFO commandstats)."""
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


def gather(out: Any, count: int, seconds: float) -> dict[str, list[float]]:
    """Every client process's notes, merged: per event, the latest delay, deliveries, at."""
    merged: dict[str, list[float]] = {}
    for _ in range(count):
        part: dict[str, list[float]] = out.get(timeout=seconds)
        for key, (delay, deliveries, at) in part.items():
            entry = merged.setdefault(key, [0.0, 0.0, at])
            entry[0] = max(entry[0], delay)
            entry[1] += deliveries
    return merged


def delays(
    seen: dict[str, list[float]], span: tuple[float, float], watchers: float
) -> dict[str, float]:
    """Of the events made within `span`: the delay to the last watcher (p50, p99, ms), and
    how many did not reach each of their table's watchers exactly once (a spectator never
    gets a private event at all: those are not counted)."""
    made = [
        entry for key, entry in seen.items() if key != "errors" and span[0] <= entry[2] <= span[1]
    ]
    latest = [entry[0] for entry in made]
    return {
        "delay_p50_ms": percentile(latest, 0.5) * 1000,
        "delay_p99_ms": percentile(latest, 0.99) * 1000,
        "events_delivered": len(made),
        "events_not_delivered_once_to_each": sum(1 for entry in made if entry[1] != watchers),
        "client_errors": seen.get("errors", [0.0])[0],
    }


def describe(figures: dict[str, Any]) -> str:
    """A window's figures on one line."""
    return (
        f"connected_clients {figures['connected_clients']}, blocked"
        f" {figures['blocked_clients']}, {figures['events']} events, Redis CPU"
        f" {figures['redis_cpu_us_per_event']:.0f} us/event (idle"
        f" {figures['redis_idle_cpu_percent']:.1f}%), delay p50"
        f" {figures['delay_p50_ms']:.1f} ms, p99 {figures['delay_p99_ms']:.1f} ms,"
        f" {figures['events_not_delivered_once_to_each']} of {figures['events_delivered']}"
        f" events not given once to each watcher, {figures['client_errors']:.0f} client errors"
    )


def main(argv: list[str] | None = None) -> None:
    """Measure this tree's gateway (and REV's first, with --against) and write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30, help="length of each window")
    parser.add_argument("--moves", type=float, default=20, help="moves a second, all tables")
    parser.add_argument("--clients", type=int, default=3, help="client processes per window")
    parser.add_argument("--scale", type=float, default=1, help="watchers' share, for a try")
    parser.add_argument("--against", help="a revision to measure first, as the baseline")
    args = parser.parse_args(argv)
    raise_open_files()

    def log(line: str) -> None:
        print(line, flush=True)

    results: dict[str, Any] = {"settings": vars(args)}
    if args.against:
        with tempfile.TemporaryDirectory(prefix="cardroom-against-") as scratch:
            tree = Path(scratch) / "tree"
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(tree), args.against],
                cwd=ROOT, check=True, capture_output=True,
            )  # fmt: skip
            try:
                log(f"{args.against}'s gateway")
                results[args.against] = run_gateway(
                    GatewayConfig(source=tree, extra_env=GATEWAY_ENV), args, log
                )
            finally:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False
                )
    log("this tree's gateway")
    results["this tree"] = run_gateway(GatewayConfig(extra_env=GATEWAY_ENV), args, log)
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps(results, indent=2))
    log(f"written to {RESULT}")


if __name__ == "__main__":
    main()
