"""The gateway benchmark's load: two processes of its own, and the jobs they run.

Each job runs a number of threads, each with its own keep-alive connection, and
returns what it saw (latencies with their completion times, errors, and the CPU time
the job's process used) so the benchmark can tell whether the load generator itself
was short of CPU. Times are `time.monotonic()`, one clock for every process of the
machine, so the parent can cut them into rounds.
"""

from __future__ import annotations

import multiprocessing
import queue
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from bench.gateway.client import Connection, EventStream, Seat


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


def sleep_until(start_at: float) -> None:
    """Wait until `time.monotonic()` reaches `start_at` (the job's start, for every client)."""
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)


Item = TypeVar("Item")


def in_client_threads(
    client: Callable[[Item], JobResult], items: list[Item], start_at: float
) -> JobResult:
    """`client(item)` in a thread of its own for each item: their results merged, the
    job's start and the CPU this process used meanwhile."""
    cpu = time.process_time()
    results: list[JobResult] = []
    lock = threading.Lock()

    def run(item: Item) -> None:
        done = client(item)
        with lock:
            results.append(done)

    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = _merged(iter(results))
    result.first_start = start_at
    result.cpu_seconds = time.process_time() - cpu
    return result


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

    def worker(plan: list[Request]) -> JobResult:
        conn = Connection(base_url)
        mine: list[tuple[float, float]] = []
        errors: Counter[str] = Counter()
        prepared = [
            (r.method, r.path, *Connection.encode(r.body, r.token, r.headers), r.expect)
            for r in plan
        ]
        conn.call("GET", "/healthz")  # open the connection before the clock starts
        sleep_until(start_at)
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
        return JobResult(
            latencies=mine,
            errors=errors,
            last_end=time.monotonic(),
            client_ends=[mine[-1][0] if mine else start_at],
        )

    return in_client_threads(worker, plans, start_at)


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
    ends = start_at + duration

    def table_loop(table: tuple[str, list[Seat], random.Random]) -> JobResult:
        table_id, seats, rng = table
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
        sleep_until(start_at)
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
        return JobResult(
            latencies=latencies,
            errors=errors,
            last_end=time.monotonic(),
            deals_ended=ended,
            deliveries=deliveries,
            after_reply=after_reply,
        )

    rng = random.Random(seed)
    played = [(table_id, seats, random.Random(rng.random())) for table_id, seats in tables]
    return in_client_threads(table_loop, played, start_at)


class Load:
    """Two load processes (spawned, so they share nothing with this one) and their jobs."""

    def __init__(self, processes: int = 2) -> None:
        """Start the processes."""
        self.processes = processes
        self.pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        list(self.pool.map(time.sleep, [0.0] * processes))  # import everything once

    def _split(self, items: list[Any]) -> list[list[Any]]:
        return [items[i :: self.processes] for i in range(self.processes)]

    def run(
        self, job: Callable[..., JobResult], url: str, plans: list[Any], *arguments: Any
    ) -> JobResult:
        """`job(url, share, start_at, *arguments)` in each process, on its share of the
        plans, every process starting half a second from now; their results merged."""
        start_at = time.monotonic() + 0.5
        futures = [
            self.pool.submit(job, url, part, start_at, *arguments)
            for part in self._split(plans)
            if part
        ]
        return _merged(future.result() for future in futures)

    def requests(self, url: str, plans: list[list[Request]], duration: float | None) -> JobResult:
        """Run the plans (one thread each) spread over the processes."""
        return self.run(run_requests, url, plans, duration)

    def deals(self, url: str, tables: list[tuple[str, list[Seat]]], duration: float) -> JobResult:
        """Play deals on these tables (one player and one watcher each) for `duration` s."""
        start_at = time.monotonic() + 1.0
        futures = [
            self.pool.submit(play_deals, url, part, start_at, duration, seed)
            for seed, part in enumerate(self._split(tables))
            if part
        ]
        return _merged(future.result() for future in futures)

    def close(self) -> None:
        """Stop the processes."""
        self.pool.shutdown()


def _merged(results: Iterator[JobResult]) -> JobResult:
    total = JobResult()
    for result in results:
        total.merge(result)
    return total


def busy_window(result: JobResult, duration: float | None) -> tuple[list[float], float]:
    """The latencies of the requests answered while every client was busy, and that time.

    A timed round keeps every client busy to its end. A round of a fixed number of
    moves (each legal once) ends with a drain, the clients that finished early idle
    while the last ones finish theirs: it is cut where the first client ran out of
    moves, so its rate and percentiles are those of all the clients at once, like the
    baseline's.
    """
    if duration is not None:
        return [seconds for _, seconds in result.latencies], duration
    ends = min(result.client_ends, default=result.last_end)
    answered = [seconds for at, seconds in result.latencies if at <= ends]
    return answered, max(1e-9, ends - result.first_start)
