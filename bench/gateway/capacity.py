"""The figures docs/capacity.md builds its model on, measured on a real Redis.

`make bench-capacity` (`python -m bench.gateway.capacity`) starts a private `redis-server` and
the evaluator on free loopback ports and measures, in one run:

- **memory**: `MEMORY USAGE` of every key of a 5-seat Guts table, fresh and after
  100, 1,000 and 1,100 deals (the history is capped at `HISTORY_DEALS`, 1,000), and
  Redis's whole `used_memory` per stored table;
- **histories**: the bytes a deal's history takes, packed and as JSON with its events
  in the stream (as before packing), for the same deals of both games
  (`bench.gateway.histories`): medians and their ratio;
- **watchers**: what an SSE watcher costs Redis while it waits (a connection blocked in
  `XREAD`: memory per client) and per event it is woken for (Redis CPU), and what the
  gateway spends per event per watcher (reading, filtering and framing it);
- **clock**: deadlines applied per second by 1, 2 and 4 clocks (processes of their
  own) on tables whose every deal times out, what each application costs the clocks'
  CPU and Redis, and how many of the clocks' attempts were wasted on a table another
  clock had already moved;
- **notices** (only when asked, `--parts notices`): webhook notices delivered per second
  to a receiver answering in 50 ms, the serial deliverer against the parallel one and
  http.client alone (`bench.gateway.notices`);
- **sweep**: the clock's repair pass over 10, 1,000 and 100,000 stored tables: Redis
  CPU and the clock's CPU per pass, and with several clocks;
- **lobby** (only when asked, `--parts lobby`): a filtered lobby page over 100 and
  100,000 stored tables, and a quick seat beside a plain one (`bench.gateway.lobby`).

Medians of `--rounds` rounds where a figure is repeated. Results go to
`bench/results/capacity.json`; docs/capacity.md reads them into its model.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import redis

from bench.gateway.inprocess import started_table
from bench.gateway.lobby import listing_of, lobby_costs
from bench.gateway.notices import notices
from bench.gateway.tree import (
    clock_service,
    count_deadlines,
    create_app,
    extract_package,
    in_process_settings,
    make_clock,
    use_package,
)
from bench.measure import RESULTS as RESULTS_FOLDER
from bench.servers import EvaluatorServer, RedisServer

RESULTS = RESULTS_FOLDER / "capacity.json"
# a --quick run's, which must not take the place of a real run's
QUICK_RESULTS = RESULTS.with_name("capacity_quick.json")

# tables whose every deal waits one second for declarations nobody makes, then the
# next deal a hundredth of a second later: each table asks its clock for two deadlines a
# second, for ever (with no pause at all, the change that times a deal out would deal
# the next one itself: one deadline a second)
TIMING_OUT = {
    "game": "guts",
    "turn_seconds": 1,
    "deal_pause_seconds": 0.01,
    "away_after": 0,
    "max_players": 2,
}


def redis_cpu(client: redis.Redis) -> float:
    """Seconds of CPU the Redis server used so far (main thread and the rest)."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def create_timing_out_tables(redis_url: str, evaluator_address: str, count: int) -> list[str]:
    """`count` two-seat tables of `TIMING_OUT`, started."""
    app = create_app(in_process_settings(redis_url, evaluator_address))
    http = app.test_client()
    made = [started_table(http, TIMING_OUT, 2, 500)[0] for _ in range(count)]
    app.extensions["cardroom.service"].evaluator.close()
    return made


def run_clock(
    redis_url: str,
    evaluator_address: str,
    seconds: float,
    start_at: float,
    shim: str | None,
    sweep: float,
) -> dict[str, float]:
    """One clock in this process for `seconds` from `start_at` (time.time()), a repair
    pass every `sweep` s: its counts.

    With `shim`, a folder holding another tree's gateway package, that gateway runs.
    """
    package = use_package(shim)
    service = clock_service(in_process_settings(redis_url, evaluator_address, package), package)
    counts = count_deadlines(service)
    clock = make_clock(service, 0.2, sweep, package)
    time.sleep(max(0.0, start_at - time.time()))
    timer = threading.Timer(seconds, clock.stop)
    cpu = time.process_time()
    timer.start()
    clock.run()
    counts["cpu_seconds"] = time.process_time() - cpu
    service.evaluator.close()
    return counts


def hands_played(client: redis.Redis, table_ids: list[str]) -> int:
    """Deals dealt so far over `table_ids` (their hand numbers, summed)."""
    pipe = client.pipeline(transaction=False)
    for table_id in table_ids:
        pipe.hget(f"table:{{{table_id}}}", "state")
    return sum(json.loads(raw or b"{}").get("hand_number", 0) for raw in pipe.execute())


def clock_window(
    redis_url: str,
    evaluator_address: str,
    tables: list[str],
    count: int,
    seconds: float,
    shim: str | None,
    sweep: float = 30.0,
) -> dict[str, Any]:
    """`count` clocks, each a process of its own, for `seconds`: what they applied."""
    client = redis.Redis.from_url(redis_url)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(count, mp_context=spawn) as pool:
        # every process imports the gateway before the window opens
        start_at = time.time() + 6.0
        futures = [
            pool.submit(run_clock, redis_url, evaluator_address, seconds, start_at, shim, sweep)
            for _ in range(count)
        ]
        time.sleep(max(0.0, start_at - time.time()))
        cpu, hands = redis_cpu(client), hands_played(client, tables)
        parts = [future.result() for future in futures]
        cpu, hands = redis_cpu(client) - cpu, hands_played(client, tables) - hands
    client.close()
    applied = sum(part["applied"] for part in parts)
    attempts = sum(part["attempts"] for part in parts)
    clock_cpu = sum(part["cpu_seconds"] for part in parts)
    return {
        "clocks": count,
        "tables": len(tables),
        "seconds": seconds,
        "applied": applied,
        "applied_per_second": applied / seconds,
        "deals_per_second": hands / seconds,
        "attempts_per_applied": attempts / max(1, applied),
        "clock_cpu_us_per_applied": 1e6 * clock_cpu / max(1, applied),
        "redis_cpu_us_per_applied": 1e6 * cpu / max(1, applied),
        "clock_cores": clock_cpu / seconds,
        "redis_cores": cpu / seconds,
    }


@contextmanager
def trees(against: str | None) -> Iterator[dict[str, str | None]]:
    """The gateways to measure: REV's (`against`) first, then this tree's."""
    if against is None:
        yield {"this tree": None}
        return
    with tempfile.TemporaryDirectory(prefix="cardroom-capacity-") as shim:
        extract_package(against, Path(shim))
        yield {"before": shim, "this tree": None}


def clock_throughput(
    redis_url: str,
    evaluator_address: str,
    tables: list[str],
    clocks: tuple[int, ...],
    seconds: float,
    shims: dict[str, str | None],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Deadlines applied per second by each number of clocks, on the same tables; with
    another tree in `shims`, its clocks in a window of their own before this tree's."""
    results: dict[str, Any] = {}
    for count in clocks:
        for label, shim in shims.items():
            row = clock_window(redis_url, evaluator_address, tables, count, seconds, shim)
            results.setdefault(label, {})[str(count)] = row
            log(
                f"  {label}, {count} clock(s): {row['applied_per_second']:,.0f}"
                f" deadlines/s ({row['deals_per_second']:,.0f} deals/s),"
                f" {row['attempts_per_applied']:.2f} attempts each,"
                f" {row['clock_cpu_us_per_applied']:,.0f} us of clock CPU and"
                f" {row['redis_cpu_us_per_applied']:,.0f} us of Redis CPU each"
            )
    return results


def sweeping_clocks(
    redis_url: str,
    evaluator_address: str,
    count: int,
    seconds: float,
    shims: dict[str, str | None],
    log: Callable[[str], None],
) -> dict[str, Any]:
    """`count` clocks for `seconds` over the stored tables, nothing due, a repair pass
    every 5 s: the cores their sweeping took of Redis and of the clocks."""
    results = {}
    for label, shim in shims.items():
        row = clock_window(redis_url, evaluator_address, [], count, seconds, shim, sweep=5.0)
        results[label] = {
            "clocks": count,
            "seconds": seconds,
            "redis_cores": row["redis_cores"],
            "clock_cores": row["clock_cores"],
        }
        log(
            f"  {label}, {count} clocks sweeping for {seconds:.0f} s: Redis"
            f" {row['redis_cores']:.3f} cores, the clocks {row['clock_cores']:.3f} cores"
        )
    return results


def table_keys(client: redis.Redis, table_id: str) -> dict[str, int]:
    """MEMORY USAGE of each key of a table."""
    keys = list(client.scan_iter(match=f"table:{{{table_id}}}*", count=1000))
    return {key.decode(): int(client.memory_usage(key, samples=0) or 0) for key in keys}


def memory(redis_url: str, evaluator_address: str, checkpoints: tuple[int, ...]) -> dict[str, Any]:
    """A 5-seat Guts table's keys, fresh and after each number of deals in `checkpoints`."""
    app = create_app(in_process_settings(redis_url, evaluator_address))
    service = app.extensions["cardroom.service"]
    http = app.test_client()
    options = {"turn_seconds": 3600, "deal_pause_seconds": 0, "max_players": 5}
    # seated and started: the first deal waits for its declarations
    table_id, tokens = started_table(http, options, 5, 500)
    client = redis.Redis.from_url(redis_url)
    rows: dict[str, Any] = {}

    def measure(deals: int) -> None:
        sizes = table_keys(client, table_id)
        rows[str(deals)] = {
            "bytes": sum(sizes.values()),
            "keys": len(sizes),
            "hand_records": sum(1 for key in sizes if ":hand:" in key),
            "hand_record_bytes": sum(v for k, v in sizes.items() if ":hand:" in k),
            "events_bytes": sum(v for k, v in sizes.items() if k.endswith(":events")),
            "table_hash_bytes": sizes.get(f"table:{{{table_id}}}", 0),
            "events": int(client.hget(f"table:{{{table_id}}}", "seq") or 0),
        }

    measure(0)
    headers = [{"Authorization": f"Bearer {token}"} for token in tokens]
    deals = 0
    for target in checkpoints:
        while deals < target:
            for seat, header in enumerate(headers):
                choice = "in" if seat < 2 else "out"
                answer = http.post(
                    f"/v1/tables/{table_id}/actions",
                    json={"action": "declare", "choice": choice},
                    headers=header,
                )
                assert answer.status_code == 200, answer.get_json()
            deals += 1  # with no pause, the settling declare dealt the next deal
        measure(deals)
    service.evaluator.close()
    client.close()
    fresh, full = rows["0"], rows[str(max(c for c in checkpoints if c <= 1000))]
    deals_full = max(c for c in checkpoints if c <= 1000)
    return {
        "table_id": table_id,
        "rows": rows,
        "fresh_table_bytes": fresh["bytes"],
        "bytes_per_deal": (full["bytes"] - fresh["bytes"]) / deals_full,
        "hand_record_bytes_per_deal": full["hand_record_bytes"] / max(1, full["hand_records"]),
        "events_per_deal": (full["events"] - fresh["events"]) / deals_full,
    }


def _resp(*parts: str | bytes) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def _read_reply(sock: socket.socket) -> None:
    """Read one whole reply (the benchmark's replies end with the event's last field)."""
    data = b""
    while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("redis closed a watcher")
        data += chunk


def watchers(
    redis_url: str, table_id: str, count: int, events: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """What `count` watchers blocked in XREAD on one stream cost Redis, while they wait
    and per event each is woken for (the event: the table's last one, as stored)."""
    client = redis.Redis.from_url(redis_url)
    key = f"table:{{{table_id}}}:events"
    newest = cast(list[tuple[bytes, dict[bytes, bytes]]], client.xrevrange(key, count=1))
    last = newest[0][1][b"event"]
    stream = f"capacity:{{{table_id}}}:events"
    client.delete(stream)
    client.xadd(stream, {"event": last}, id="1-0")
    used = int(client.info("memory")["used_memory"])
    clients_before = int(client.info("clients")["connected_clients"])
    sockets = []
    host, port = "127.0.0.1", int(redis_url.rsplit(":", 1)[1].split("/")[0])

    def block(sock: socket.socket, after: int) -> None:
        sock.sendall(_resp("XREAD", "BLOCK", "60000", "STREAMS", stream, f"{after}-0"))

    for _ in range(count):
        sock = socket.create_connection((host, port))
        sockets.append(sock)
        block(sock, 1)
    deadline = time.monotonic() + 30
    while int(client.info("clients")["blocked_clients"]) < count:
        if time.monotonic() > deadline:
            raise RuntimeError("watchers not blocked")
        time.sleep(0.05)
    waiting = int(client.info("memory")["used_memory"])
    connected = int(client.info("clients")["connected_clients"]) - clients_before
    cpu = redis_cpu(client)
    for n in range(2, events + 2):
        client.xadd(stream, {"event": last}, id=f"{n}-0")
        for sock in sockets:
            _read_reply(sock)
        for sock in sockets:
            block(sock, n)
        while int(client.info("clients")["blocked_clients"]) < count:
            time.sleep(0.005)
    cpu = redis_cpu(client) - cpu
    for sock in sockets:
        sock.close()
    client.delete(stream)
    client.close()
    row = {
        "watchers": count,
        "connected": connected,
        "bytes_per_waiting_watcher": (waiting - used) / count,
        "event_bytes": len(last),
        "events": events,
        "redis_cpu_us_per_event_per_watcher": 1e6 * cpu / (events * count),
    }
    log(
        f"  {count:,} watchers blocked in XREAD: {row['bytes_per_waiting_watcher']:,.0f} bytes"
        f" of Redis each; {row['redis_cpu_us_per_event_per_watcher']:.1f} us of Redis CPU per"
        f" event per watcher (a {len(last)}-byte event)"
    )
    return row


def gateway_fan_out(
    redis_url: str, evaluator_address: str, table_id: str, rounds: int
) -> dict[str, Any]:
    """The gateway's CPU per event per watcher: a watcher's read of a deal's events,
    filtered for a spectator and framed as server-sent events, as the stream does."""
    from api import jsonio
    from api.adapters.store import events_key
    from api.service.visibility import SPECTATOR, public_event

    service = clock_service(in_process_settings(redis_url, evaluator_address))
    client = service.store.client
    key = events_key(table_id)
    # the events the stream holds (those of the last deals: older ones are packed), each
    # read as often as it takes to read 200
    kept = [int(entry[0].split("-")[0]) for entry in client.xrange(key)]
    numbers = (kept * (200 // max(1, len(kept)) + 1))[:200]
    samples = []
    delivered = 0
    for _ in range(rounds):
        cpu = time.thread_time()
        delivered = 0
        # one event a wake-up, as a stream mostly gets them: its read (XRANGE of that
        # one event, for XREAD's reply), what a spectator may see of it, its frame
        for number in numbers:
            entries = client.xrange(key, f"{number}-0", f"{number}-0")
            items = [jsonio.loads(fields["event"]) for _, fields in entries]
            visible = [public_event(item) for item in items if SPECTATOR.may_see(item)]
            frames = [
                f"id: {item['id']}\nevent: {item['type']}\ndata: {jsonio.dumps(item)}\n\n"
                for item in visible
            ]
            "".join(frames)
            delivered += len(visible)
        samples.append(1e6 * (time.thread_time() - cpu) / len(numbers))
    service.evaluator.close()
    return {
        "events_read": len(numbers),
        "events_visible_to_a_spectator": delivered,
        "gateway_cpu_us_per_event_per_watcher": statistics.median(samples),
    }


def store_tables(client: redis.Redis, count: int, state: bytes, now: float) -> None:
    """Stored tables up to `count` in all, each scheduled and listed right (as the sweep
    finds most)."""
    have = int(client.zcard("tables"))
    pipe = client.pipeline(transaction=False)
    decoded = json.loads(state)
    for n in range(have, count):
        table_id = f"s{n:07d}"
        deadline = now + 86_400 + n
        entry = listing_of({**decoded, "table_id": table_id})
        pipe.hset(
            f"table:{{{table_id}}}",
            mapping={
                "state": state,
                "version": 1,
                "seq": 0,
                "deadline": repr(float(deadline)),
                "listing": entry.place,
            },
        )
        if entry.member:
            pipe.zadd(f"lobby:{{{entry.shard}}}", {entry.member: 0})
            pipe.hset(f"lobby:{{{entry.shard}}}:rows", table_id, entry.member)
        pipe.zadd("deadlines", {table_id: deadline})
        pipe.zadd("tables", {table_id: now - 86_400 + n / 1000})
        if len(pipe) >= 3000:
            pipe.execute()
    pipe.execute()


def sweep_costs(
    redis_url: str,
    evaluator_address: str,
    levels: tuple[int, ...],
    state: bytes,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """One whole repair pass over each number of stored tables: Redis CPU, the clock's
    CPU and the wall time per pass."""
    client = redis.Redis.from_url(redis_url)
    client.flushall()
    service = clock_service(in_process_settings(redis_url, evaluator_address))
    clock = make_clock(service, 0.2)
    results = {}
    for level in levels:
        store_tables(client, level, state, time.time())
        passes = []
        for _ in range(3):
            cpu, mine, wall = redis_cpu(client), time.thread_time(), time.perf_counter()
            fixed = clock.sweep()
            passes.append(
                (
                    redis_cpu(client) - cpu,
                    time.thread_time() - mine,
                    time.perf_counter() - wall,
                    fixed,
                )
            )
        redis_s = statistics.median(p[0] for p in passes)
        clock_s = statistics.median(p[1] for p in passes)
        row = {
            "stored_tables": int(client.zcard("tables")),
            "used_memory": int(client.info("memory")["used_memory"]),
            "redis_cpu_ms_per_pass": 1e3 * redis_s,
            "clock_cpu_ms_per_pass": 1e3 * clock_s,
            "wall_ms_per_pass": 1e3 * statistics.median(p[2] for p in passes),
            "redis_cpu_us_per_table": 1e6 * redis_s / level,
            "clock_cpu_us_per_table": 1e6 * clock_s / level,
            "repaired": max(p[3] for p in passes),
            # at a tick's pace (a page of 200 every 0.2 s), a pass lasts at least this
            "pass_seconds_at_tick_pace": level / 200 * 0.2,
        }
        results[str(level)] = row
        log(
            f"  {level:,} stored tables: a pass costs Redis {row['redis_cpu_ms_per_pass']:,.1f}"
            f" ms and the clock {row['clock_cpu_ms_per_pass']:,.1f} ms of CPU"
            f" ({row['redis_cpu_us_per_table']:.2f} and {row['clock_cpu_us_per_table']:.2f}"
            f" us a table)"
        )
    service.evaluator.close()
    client.close()
    return results


# The model's assumptions (docs/capacity.md, "Assumptions")
PLAYERS_PER_TABLE = 5
DEALS_PER_HOUR = 60  # per table: a deal a minute
WATCHERS_PER_TABLE = 6  # each seat's event stream and one spectator
WAKES_PER_DEAL = 6  # a watcher is woken by every commit: the deal and five declarations
DEADLINES_PER_DEAL = 1.5  # the clock deals every next hand; every other deal, a turn times out
NOTICES_PER_DEAL = 10  # webhooks, when on: a turn and a deal's end for each seat
SESSION_HOURS = 4.0  # a table is played this long, then left until it closes
IDLE_HOURS = 24.0  # TABLE_IDLE_SECONDS
HISTORY_DEALS = 1000
# from docs/performance.md ("The gateway's speed: the latest full run" and "What is left")
GATEWAY_US_PER_DEAL = 8_800  # a whole 5-player deal, the gateway's CPU (the slow hour)
REDIS_US_PER_DEAL = 4 * 49 + 137  # four declares and the settling one
EVALUATOR_US_PER_SHOWDOWN = 488
# what one process or shard is given
CORE_BUDGET = 0.7  # of a core, for a gateway worker, a clock or a Redis shard's thread
WORKER_CONNECTIONS = 1000  # GATEWAY_WORKER_CONNECTIONS
SHARD_MEMORY = 25e9  # bytes of data a shard holds (half of a 64 GB host, for the AOF rewrite)
SHARD_CLIENTS = 10_000  # Redis's default maxclients
CLOCK_PAGE_RATE = 1000  # tables a sweeping clock reads a second (200 a tick of 0.2 s)
SWEEP_SECONDS = 30.0
SCALES = (10_000, 100_000, 1_000_000)
# a gateway worker's or a clock's Redis connections for commands (at most: the pool's
# size, api.adapters.store.COMMAND_CONNECTIONS)
COMMAND_CONNECTIONS = 32


def model(results: dict[str, Any], players: int) -> dict[str, float]:
    """What `players` at once take, from the measured `results` and the assumptions."""
    memory_row, watcher, sweep = results["memory"], results["watchers"], results["sweep"]
    clock = results["clock"]["this tree"]["1"]
    tables = players / PLAYERS_PER_TABLE
    deals = tables * DEALS_PER_HOUR / 3600
    watchers = tables * WATCHERS_PER_TABLE
    wakes = deals * WAKES_PER_DEAL * WATCHERS_PER_TABLE
    deadlines = deals * DEADLINES_PER_DEAL
    stored = tables * (SESSION_HOURS + IDLE_HOURS) / SESSION_HOURS
    history = min(HISTORY_DEALS, SESSION_HOURS * DEALS_PER_HOUR)
    per_table = memory_row["fresh_table_bytes"] + history * memory_row["bytes_per_deal"]
    sweep_us = sweep[max(sweep, key=int)]["redis_cpu_us_per_table"]
    gateway_cores = (
        deals * GATEWAY_US_PER_DEAL + wakes * watcher["gateway_cpu_us_per_event_per_watcher"]
    ) / 1e6
    clock_cores = deadlines * clock["clock_cpu_us_per_applied"] / 1e6
    clocks = max(2, math.ceil(clock_cores / CORE_BUDGET))
    workers = max(math.ceil(gateway_cores / CORE_BUDGET), math.ceil(watchers / WORKER_CONNECTIONS))
    # a pass sweeps every stored table, at most CLOCK_PAGE_RATE a second
    sweeping = min(stored / SWEEP_SECONDS, CLOCK_PAGE_RATE)
    redis_cores = (
        deals * REDIS_US_PER_DEAL
        + deadlines * clock["redis_cpu_us_per_applied"]
        + wakes * watcher["redis_cpu_us_per_event_per_watcher"]
    ) / 1e6
    # the watchers wait on their process's hub (api.adapters.fanout): on one Redis, one
    # connection blocked in XREAD a gateway process; on a Cluster, one a table each
    # process watches (a table's watchers spread over the processes: one a watcher)
    pooled = (workers + clocks) * COMMAND_CONNECTIONS
    blocked = watcher["bytes_per_waiting_watcher"]
    histories = stored * per_table
    single = (
        histories + workers * blocked <= SHARD_MEMORY
        and redis_cores <= CORE_BUDGET
        and pooled + workers <= SHARD_CLIENTS
    )
    readers = workers if single else watchers
    memory_bytes = histories + readers * blocked
    as_json = stored * (
        memory_row["fresh_table_bytes"] + history * results["histories"]["json_bytes_per_deal"]
    )
    shards = 1
    if not single:
        shards = max(
            math.ceil(memory_bytes / SHARD_MEMORY),
            math.ceil(redis_cores / CORE_BUDGET),
            math.ceil((pooled + readers) / SHARD_CLIENTS),
        )
    return {
        "players": players,
        "tables": tables,
        "stored_tables": stored,
        "deals_per_second": deals,
        "watchers": watchers,
        "deadlines_per_second": deadlines,
        "gateway_cores": gateway_cores,
        "gateway_workers": workers,
        "evaluator_cores": deals * EVALUATOR_US_PER_SHOWDOWN / 1e6,
        "clock_cores": clock_cores,
        "clocks": clocks,
        "redis_cores": redis_cores,
        "redis_memory_gb": memory_bytes / 1e9,
        "histories_as_json_gb": (as_json + readers * blocked) / 1e9,
        "watcher_memory_gb": readers * blocked / 1e9,
        "redis_clients": pooled + readers,
        "shards": shards,
        # one repair pass at a time, whatever the number of clocks (the clock:sweep lease)
        "sweep_redis_cores": sweeping * sweep_us / 1e6,
        "notices_per_second": deals * NOTICES_PER_DEAL,
        "before_fix_clocks_needed": deadlines
        / results["clock"]["before"]["1"]["applied_per_second"]
        if "before" in results["clock"]
        else math.nan,
    }


def report_model(results: dict[str, Any]) -> list[dict[str, float]]:
    """Print the model at each scale (a Markdown table) and return its rows."""
    rows = [model(results, players) for players in SCALES]
    names = [
        ("tables", "tables playing", 0),
        ("stored_tables", "tables stored", 0),
        ("deals_per_second", "deals/s", 0),
        ("watchers", "SSE watchers", 0),
        ("deadlines_per_second", "deadlines/s", 0),
        ("gateway_cores", "gateway cores", 1),
        ("gateway_workers", "gateway workers", 0),
        ("evaluator_cores", "evaluator cores", 2),
        ("clock_cores", "clock cores", 2),
        ("clocks", "clocks", 0),
        ("redis_cores", "Redis cores", 2),
        ("redis_memory_gb", "Redis memory, GB", 1),
        ("histories_as_json_gb", "the same with histories as JSON, GB", 1),
        ("watcher_memory_gb", "of it the watchers' connections, GB", 1),
        ("redis_clients", "Redis clients", 0),
        ("shards", "Redis shards", 0),
        ("sweep_redis_cores", "the repair pass, Redis cores", 3),
        ("notices_per_second", "webhook notices/s", 0),
    ]
    print("\n| players at once | " + " | ".join(f"{p:,}" for p in SCALES) + " |")
    print("|---|" + "---|" * len(SCALES))
    for key, label, digits in names:
        print(f"| {label} | " + " | ".join(f"{row[key]:,.{digits}f}" for row in rows) + " |")
    return rows


def main(argv: list[str] | None = None) -> None:
    """Run the parts asked for (all by default) and write bench/results/capacity.json."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--parts",
        default="memory,histories,watchers,clock,sweep",
        help="comma-separated parts to run",
    )
    parser.add_argument("--tables", type=int, default=1500, help="timing-out tables (clock)")
    parser.add_argument("--seconds", type=float, default=10.0, help="each clock window")
    parser.add_argument("--clocks", default="1,2,4", help="numbers of clocks (clock)")
    parser.add_argument(
        "--against", metavar="REV", help="also run REV's clock, in windows of its own (clock)"
    )
    parser.add_argument("--deals", default="100,1000,1100", help="memory checkpoints")
    parser.add_argument(
        "--history-deals", type=int, default=120, help="deals a table of each kind (histories)"
    )
    parser.add_argument(
        "--concurrency", type=int, default=32, help="the parallel deliverer's (notices)"
    )
    parser.add_argument("--watchers", type=int, default=2000)
    parser.add_argument("--stored", default="10,1000,100000", help="stored tables (sweep)")
    parser.add_argument("--lobby-stored", default="100,100000", help="stored tables (lobby)")
    parser.add_argument("--lobby-pages", type=int, default=200, help="pages asked (lobby)")
    parser.add_argument("--lobby-seats", type=int, default=100, help="quick seats (lobby)")
    parser.add_argument("--quick", action="store_true", help="small sizes, to see it work")
    parser.add_argument(
        "--model", action="store_true", help="only the model, from the last results' JSON"
    )
    args = parser.parse_args(argv)
    if args.model:
        report_model(json.loads(RESULTS.read_text()))
        return
    if args.quick:
        args.tables, args.seconds, args.clocks = 100, 3.0, "1,2"
        args.deals, args.watchers, args.stored = "5,10", 50, "10,1000"
        args.history_deals = 8
        args.lobby_stored, args.lobby_pages, args.lobby_seats = "100,2000", 20, 10

    def log(line: str) -> None:
        print(line, flush=True)

    results: dict[str, Any] = {
        "recorded": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "arguments": vars(args),
    }
    parts = set(args.parts.split(","))
    server = RedisServer()
    evaluator = EvaluatorServer()
    client = redis.Redis.from_url(server.url)
    results["against"] = args.against
    try:
        with trees(args.against) as shims:
            measure(args, parts, server, evaluator, client, shims, results, log)
    finally:
        client.close()
        evaluator.stop()
        server.stop()
    if {"memory", "histories", "watchers", "clock", "sweep"} <= set(results):
        results["model"] = report_model(results)
    written = QUICK_RESULTS if args.quick else RESULTS
    written.parent.mkdir(exist_ok=True)
    if written.exists() and "model" not in results:
        # a run of some parts keeps the other parts' figures of the last run
        results = {**json.loads(written.read_text()), **results}
    written.write_text(json.dumps(results, indent=2) + "\n")
    log(f"results in {written}")


def measure(
    args: argparse.Namespace,
    parts: set[str],
    server: RedisServer,
    evaluator: EvaluatorServer,
    client: redis.Redis,
    shims: dict[str, str | None],
    results: dict[str, Any],
    log: Callable[[str], None],
) -> None:
    """The parts of a run, their figures put in `results`."""
    if "lobby" in parts:
        levels = tuple(int(n) for n in args.lobby_stored.split(","))
        log(f"lobby: a page over {args.lobby_stored} stored tables, and quick seats")
        results["lobby"] = lobby_costs(
            server.url, evaluator.address, levels, args.lobby_pages, args.lobby_seats, log
        )
        client.flushall()
    if "histories" in parts:
        from bench.gateway.histories import history_bytes

        log("histories: a deal's bytes, as JSON with its events and packed, both games")
        sizes = history_bytes(server.url, evaluator.address, args.history_deals, log)
        results["histories"] = sizes
        log(
            f"  {sizes['json_bytes_per_deal']:,.0f} bytes a deal as JSON"
            f" ({sizes['json_record_bytes_per_deal']:,.0f} the record,"
            f" {sizes['json_events_bytes_per_deal']:,.0f} its events),"
            f" {sizes['packed_bytes_per_deal']:,.0f} packed: {sizes['ratio']:.3f} of it"
            f" (medians of {sizes['deals']} deals)"
        )
        client.flushall()
    if "notices" in parts:
        log("notices: delivered per second to a receiver answering in 50 ms")
        results["notices"] = notices(
            server.url, evaluator.address, shims, args.concurrency, args.seconds, log
        )
    if not parts & {"memory", "watchers", "clock", "sweep"}:
        return
    checkpoints = tuple(int(n) for n in args.deals.split(","))
    log(f"memory: a 5-seat Guts table, fresh and after {args.deals} deals")
    played = memory(server.url, evaluator.address, checkpoints)
    results["memory"] = played
    for deals, row in played["rows"].items():
        log(
            f"  {int(deals):,} deals: {row['bytes']:,} bytes in {row['keys']:,} keys"
            f" ({row['hand_records']:,} hand records, {row['events_bytes']:,} bytes of events)"
        )
    log(
        f"  fresh {played['fresh_table_bytes']:,} bytes, {played['bytes_per_deal']:,.0f}"
        f" bytes a deal of history"
    )
    state = cast(bytes, client.hget(f"table:{{{played['table_id']}}}", "state") or b"{}")
    if "watchers" in parts:
        log("watchers: SSE watchers as Redis sees them, and the gateway's fan-out")
        results["watchers"] = watchers(server.url, played["table_id"], args.watchers, 20, log)
        fan_out = gateway_fan_out(server.url, evaluator.address, played["table_id"], 5)
        results["watchers"].update(fan_out)
        log(
            f"  the gateway: {fan_out['gateway_cpu_us_per_event_per_watcher']:.1f} us of CPU"
            f" per event per watcher (a spectator's stream, read, filtered and framed)"
        )
    if "clock" in parts:
        log(f"clock: creating {args.tables:,} tables whose deals time out")
        used = int(client.info("memory")["used_memory"])
        spawn = multiprocessing.get_context("spawn")
        shares = [args.tables // 2, args.tables - args.tables // 2]
        with ProcessPoolExecutor(2, mp_context=spawn) as pool:
            made = pool.map(
                create_timing_out_tables, [server.url] * 2, [evaluator.address] * 2, shares
            )
            tables = [table_id for part in made for table_id in part]
        per_table = (int(client.info("memory")["used_memory"]) - used) / len(tables)
        results["stored_two_seat_table_bytes"] = per_table
        log(f"  {per_table:,.0f} bytes of Redis's used_memory per two-seat table")
        clocks = tuple(int(n) for n in args.clocks.split(","))
        results["clock"] = clock_throughput(
            server.url, evaluator.address, tables, clocks, args.seconds, shims, log
        )
    if "sweep" in parts:
        levels = tuple(int(n) for n in args.stored.split(","))
        log(f"sweep: one repair pass over {args.stored} stored tables")
        results["sweep"] = sweep_costs(server.url, evaluator.address, levels, state, log)
        count = max(int(n) for n in args.clocks.split(","))
        log(f"sweep: {count} clocks over {max(levels):,} stored tables, a pass every 5 s")
        results["sweep_clocks"] = sweeping_clocks(
            server.url, evaluator.address, count, 2 * args.seconds, shims, log
        )


if __name__ == "__main__":
    main()
