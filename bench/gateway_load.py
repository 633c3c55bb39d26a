"""Load jobs that run in separate processes of the gateway benchmark.

Each job runs a number of threads, each with its own keep-alive connection, and
returns what it saw (latencies with their completion times, errors, and the CPU time
the job's process used) so the benchmark can tell whether the load generator itself
was short of CPU. Times are `time.monotonic()`, one clock for every process of the
machine, so the parent can cut them into rounds.
"""

from __future__ import annotations

import queue
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from bench.gateway_http import Connection, EventStream, Seat


class Request(NamedTuple):
    """One call of a load plan and the status it should answer."""

    method: str
    path: str
    body: Any = None
    token: str | None = None
    headers: dict[str, str] | None = None
    expect: int = 200


@dataclass
class JobResult:
    """What one load process measured."""

    latencies: list[tuple[float, float]] = field(default_factory=list)  # (done at, seconds)
    errors: Counter[str] = field(default_factory=Counter)
    cpu_seconds: float = 0.0
    first_start: float = 0.0
    last_end: float = 0.0
    client_ends: list[float] = field(default_factory=list)  # when each client ran out of work
    deals_ended: list[float] = field(default_factory=list)  # arrival times at the watcher
    deliveries: list[tuple[float, float]] = field(default_factory=list)  # (arrived, seconds)
    # (arrived, seconds after the move's reply had come back; negative: before it)
    after_reply: list[tuple[float, float]] = field(default_factory=list)
    # (done at, seconds): reads a job made besides its timed requests (a cash-out's check)
    reads: list[tuple[float, float]] = field(default_factory=list)

    def merge(self, other: JobResult) -> None:
        """Add another process's results to these."""
        self.latencies += other.latencies
        self.errors.update(other.errors)
        self.cpu_seconds += other.cpu_seconds
        self.first_start = min(self.first_start or other.first_start, other.first_start)
        self.last_end = max(self.last_end, other.last_end)
        self.client_ends += other.client_ends
        self.deals_ended += other.deals_ended
        self.deliveries += other.deliveries
        self.after_reply += other.after_reply
        self.reads += other.reads


def _sleep_until(start_at: float) -> None:
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def run_requests(
    base_url: str,
    plans: list[list[Request]],
    start_at: float,
    duration: float | None,
) -> JobResult:
    """One thread per plan: its requests in order, once (no duration) or round and round.

    Bodies are encoded before the clock starts, and an answer's body is decoded only
    when its status is not the expected one (for the problem's code): the generator
    shares the machine with the server, and what it spends is taken from the server.
    """
    result = JobResult()
    lock = threading.Lock()
    cpu = time.process_time()

    def worker(plan: list[Request]) -> None:
        conn = Connection(base_url)
        mine: list[tuple[float, float]] = []
        errors: Counter[str] = Counter()
        prepared = [
            (r.method, r.path, *Connection.encode(r.body, r.token, r.headers), r.expect)
            for r in plan
        ]
        conn.call("GET", "/healthz")  # open the connection before the clock starts
        _sleep_until(start_at)
        ends = start_at + duration if duration is not None else None
        i = 0
        while True:
            if ends is None and i == len(prepared):
                break
            if ends is not None and time.monotonic() >= ends:
                break
            method, path, payload, headers, expect = prepared[i % len(prepared)]
            i += 1
            sent = time.monotonic()
            try:
                status, data = conn.send(method, path, payload, headers)
            except OSError as error:
                errors[type(error).__name__] += 1
                continue
            done = time.monotonic()
            if status != expect:
                answer = Connection.decode(data)
                code = answer.get("code") if isinstance(answer, dict) else None
                errors[f"{status} {code}"] += 1
            mine.append((done, done - sent))
        conn.close()
        with lock:
            result.latencies += mine
            result.errors.update(errors)
            result.last_end = max(result.last_end, time.monotonic())
            result.client_ends.append(mine[-1][0] if mine else start_at)

    threads = [threading.Thread(target=worker, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.first_start = start_at
    result.cpu_seconds = time.process_time() - cpu
    return result


def play_deals(
    base_url: str,
    tables: list[tuple[str, list[Seat]]],
    start_at: float,
    duration: float,
    seed: int,
) -> JobResult:
    """Play whole Guts deals on each table (one player thread, one stream watcher each).

    `tables` holds fresh tables (id, seats), which this job starts. The player waits
    for `deal_started` on the stream, declares for every seat in dealing order (the
    first two in, so every deal goes to a showdown), and goes on with the next deal the
    clock starts; the watcher notes when each declaration and each `deal_ended`
    reaches it.
    """
    result = JobResult()
    lock = threading.Lock()
    cpu = time.process_time()
    ends = start_at + duration

    def table_loop(table_id: str, seats: list[Seat], rng: random.Random) -> None:
        by_number = {seat.number: seat for seat in seats}
        started: queue.Queue[dict[str, Any]] = queue.Queue()
        arrivals: dict[tuple[int, int], float] = {}
        ended: list[float] = []
        conn = Connection(base_url)
        stream = EventStream(base_url, table_id, after=0)

        def watch() -> None:
            try:
                for arrived, item in stream:
                    kind = item["type"]
                    if kind == "declared":
                        arrivals[(item["hand_number"], item["data"]["seat"])] = arrived
                    elif kind == "deal_ended":
                        ended.append(arrived)
                    elif kind == "deal_started":
                        started.put(item)
            except OSError:
                pass  # closed by the player at the end

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        sent: dict[tuple[int, int], float] = {}
        replied: dict[tuple[int, int], float] = {}
        latencies: list[tuple[float, float]] = []
        errors: Counter[str] = Counter()
        if not stream.wait_open(30):
            errors["stream did not open"] += 1
        _sleep_until(start_at)
        status, answer = conn.call(
            "POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, seats[0].token
        )
        if status != 200:
            errors[f"start {status} {answer.get('code')}"] += 1
        seen = 0
        while time.monotonic() < ends:
            try:
                item = started.get(timeout=max(0.1, min(30.0, ends - time.monotonic() + 5)))
            except queue.Empty:
                errors["no deal started within 30 s"] += 1
                break
            hand = int(item["hand_number"])
            if hand <= seen:
                continue
            seen = hand
            order = list(item["data"]["players"])
            for index, number in enumerate(order):
                choice = "in" if index < 2 else rng.choice(("in", "out"))
                sent_at = time.monotonic()
                sent[(hand, number)] = sent_at
                try:
                    status, answer = conn.call(
                        "POST",
                        f"/v1/tables/{table_id}/actions",
                        {"action": "declare", "choice": choice},
                        by_number[number].token,
                    )
                except OSError as error:
                    errors[type(error).__name__] += 1
                    continue
                done = time.monotonic()
                replied[(hand, number)] = done
                if status != 200:
                    errors[f"declare {status} {answer.get('code')}"] += 1
                latencies.append((done, done - sent_at))
        time.sleep(0.5)  # let the last events reach the watcher
        stream.close()
        conn.close()
        deliveries = [
            (arrivals[key], arrivals[key] - at) for key, at in sent.items() if key in arrivals
        ]
        after_reply = [
            (arrivals[key], arrivals[key] - at) for key, at in replied.items() if key in arrivals
        ]
        with lock:
            result.latencies += latencies
            result.errors.update(errors)
            result.deals_ended += ended
            result.deliveries += deliveries
            result.after_reply += after_reply
            result.last_end = max(result.last_end, time.monotonic())

    rng = random.Random(seed)
    threads = [
        threading.Thread(target=table_loop, args=(table_id, seats, random.Random(rng.random())))
        for table_id, seats in tables
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result.first_start = start_at
    result.cpu_seconds = time.process_time() - cpu
    return result
