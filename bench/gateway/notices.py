"""Notices delivered per second to a receiver that answers in 50 ms
(`make bench-capacity ARGS="--parts notices [--against REV]"`).

Each window fills the outboxes of `tables` tables with `per_table` due `turn` notices
(the layout every tree since the outbox shares: `table:{id}:webhooks`, `{webhooks}:due`)
and runs one deliverer, in a spawned process of its own, for `seconds`: REV's (the
serial deliverer before this tree, with `--against`), this tree's with
`WEBHOOK_CONCURRENCY=1` and with the concurrency asked for. The receiver
(`bench.gateway.receiver`) is a process of its own; what it answered within the window
is the figure. The floor: `concurrency` threads posting the same notice with
http.client alone, each over its own keep-alive connection, for as long.
"""

from __future__ import annotations

import http.client
import importlib
import json
import multiprocessing
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any

import redis

from bench.gateway.tree import clock_service, use_package

SECRET = "a secret of the notices benchmark"
WARM_UP = 6.0  # seconds a spawned process has to import the gateway before its window


@contextmanager
def receiver(delay: float) -> Iterator[str]:
    """A receiver process answering every POST after `delay` s: its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.gateway.receiver", "--delay", str(delay)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/hooks"
    finally:
        process.terminate()
        process.wait(timeout=30)


def received(url: str) -> int:
    """What the receiver at `url` answered so far."""
    with urllib.request.urlopen(url.replace("/hooks", "/stats"), timeout=10) as answer:
        return int(json.loads(answer.read())["received"])


def fill(client: redis.Redis, tables: int, per_table: int) -> None:
    """Empty every outbox, then give `tables` tables `per_table` notices due now."""
    for key in client.scan_iter(match="*webhooks*", count=1000):
        client.delete(key)
    now = time.time()
    pipe = client.pipeline(transaction=False)
    for number in range(tables):
        table_id = f"bench{number:06d}"
        for seat in range(per_table):
            notice_id = f"msg_{number:06d}{seat:04d}"
            body = {
                "id": notice_id, "type": "turn", "table_id": table_id, "seat": seat,
                "player": f"p_{seat}", "hand_number": 1, "deadline": now + 30, "at": now,
            }  # fmt: skip
            entry = {"body": body, "due": now, "attempts": 0}
            pipe.hset(f"table:{{{table_id}}}:webhooks", notice_id, json.dumps(entry))
        pipe.zadd("{webhooks}:due", {table_id: now})
        pipe.hset("{webhooks}:written", table_id, now - 60)
    pipe.execute()


def run_deliverer(
    redis_url: str,
    evaluator_address: str,
    url: str,
    concurrency: int,
    seconds: float,
    shim: str | None,
    start_at: float,
) -> float:
    """One tree's deliverer in this (spawned) process for `seconds` from `start_at`: the
    CPU seconds this process used meanwhile. With `shim`, that folder's gateway runs."""
    package = use_package(shim)
    settings = importlib.import_module(f"{package}.settings").Settings.from_env(
        {
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_address,
            "CLOCK": "false",
            "LOG_LEVEL": "warning",
            "WEBHOOK_URL": url,
            "WEBHOOK_SECRET": SECRET,
            "WEBHOOK_CONCURRENCY": str(concurrency),
        }
    )
    services = clock_service(settings, package)
    deliverer = importlib.import_module(f"{package}.runtime.webhooks").Deliverer(
        services.webhooks, 0.05
    )
    time.sleep(max(0.0, start_at - time.time()))
    cpu = time.process_time()
    deliverer.start()
    time.sleep(max(0.0, start_at + seconds - time.time()))
    deliverer.stop()
    cpu = time.process_time() - cpu
    services.close()
    return cpu


def post_alone(url: str, concurrency: int, seconds: float, start_at: float) -> int:
    """`concurrency` threads POSTing one notice over http.client keep-alive connections
    from `start_at` for `seconds`: how many were answered 200."""
    target = urllib.parse.urlparse(url)
    body = json.dumps({"id": "msg_floor", "type": "turn", "seat": 1, "at": time.time()}).encode()
    counts = [0] * concurrency
    ends = start_at + seconds

    def post(index: int) -> None:
        connection = http.client.HTTPConnection(target.hostname or "", target.port, timeout=10)
        while time.time() < ends:
            connection.request("POST", target.path, body, {"content-type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            counts[index] += answer.status == 200
        connection.close()

    time.sleep(max(0.0, start_at - time.time()))
    threads = [threading.Thread(target=post, args=(i,)) for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts)


def window(url: str, seconds: float, run: Callable[..., Any]) -> dict[str, float]:
    """Run `run(start_at=...)` in a spawned process: notices/s the receiver answered within
    the window, and what `run` returned."""
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
        start_at = time.time() + WARM_UP
        future = pool.submit(run, start_at=start_at)
        time.sleep(max(0.0, start_at - time.time()))
        before = received(url)
        time.sleep(max(0.0, start_at + seconds - time.time()))
        during = received(url) - before
        value = future.result()
    return {"notices_per_second": during / seconds, "returned": value}


def notices(
    redis_url: str,
    evaluator_address: str,
    shims: dict[str, str | None],
    concurrency: int,
    seconds: float,
    log: Callable[[str], None],
    delay: float = 0.05,
) -> dict[str, Any]:
    """Notices/s for each deliverer and the http.client floor, in one run."""
    client = redis.Redis.from_url(redis_url)
    tables, per_table = max(400, concurrency * 12), 20
    rows: dict[str, Any] = {}
    runs: list[tuple[str, str | None, int]] = []
    for label, shim in shims.items():
        if shim is not None:
            runs.append((f"{label} (serial)", shim, 1))
    runs += [("this tree, WEBHOOK_CONCURRENCY=1", None, 1)]
    runs += [(f"this tree, WEBHOOK_CONCURRENCY={concurrency}", None, concurrency)]
    with receiver(delay) as url:
        for label, shim, level in runs:
            fill(client, tables, per_table)
            row = window(
                url,
                seconds,
                partial(
                    run_deliverer, redis_url, evaluator_address, url, level, seconds, shim=shim
                ),
            )
            rows[label] = {
                "concurrency": level,
                "notices_per_second": row["notices_per_second"],
                "deliverer_cpu_us_per_notice": 1e6
                * row["returned"]
                / max(1.0, row["notices_per_second"] * seconds),
            }
            log(f"  {label}: {row['notices_per_second']:,.1f} notices/s")
        floor = window(url, seconds, partial(post_alone, url, concurrency, seconds))
        rows[f"http.client alone, {concurrency} connections"] = {
            "concurrency": concurrency,
            "notices_per_second": floor["notices_per_second"],
        }
        log(f"  http.client alone, {concurrency} connections: {floor['notices_per_second']:,.1f}/s")
    client.delete(*client.keys("*webhooks*") or ["{webhooks}:due"])
    client.close()
    parallel = rows[runs[-1][0]]["notices_per_second"]
    ratios = {
        label: parallel / row["notices_per_second"]
        for label, row in rows.items()
        if label != runs[-1][0] and row["notices_per_second"]
    }
    for label, ratio in ratios.items():
        log(f"  {runs[-1][0]} against {label}: {ratio:.2f}x")
    return {
        "receiver_delay_seconds": delay,
        "seconds": seconds,
        "rows": rows,
        "parallel_against": ratios,
    }
