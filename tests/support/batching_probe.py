"""Run in a process of its own (`python -m tests.support.batching_probe URL`): the
standard library patched by gevent, as in a gateway worker, so that `api.adapters.batching`
batches. Each scenario runs against the Redis at URL and the results are printed as
one JSON object for `test_batching.py` to check."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import json  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402
import redis  # noqa: E402

from api.adapters.batching import CommandBatcher, batcher_for  # noqa: E402
from api.adapters.ratelimit import RateLimiter  # noqa: E402
from api.adapters.replication import NotReplicated, Replication  # noqa: E402
from api.adapters.store import TableRecord, TableStore, connect  # noqa: E402
from tests.support.processes import free_port  # noqa: E402


def _batcher(client: Any) -> tuple[CommandBatcher, list[int]]:
    sizes: list[int] = []
    batcher = batcher_for(client, True, sizes.append)
    assert isinstance(batcher, CommandBatcher)
    return batcher, sizes


def concurrent(url: str) -> dict[str, Any]:
    """300 greenlets at once, each with a pair of commands: each gets its own replies."""
    client = connect(url, False)
    batcher, sizes = _batcher(client)

    def one(i: int) -> list[Any]:
        return batcher.send([("SET", f"probe:{i}", i), ("INCRBY", f"probe:{i}", i)])

    jobs = [gevent.spawn(one, i) for i in range(300)]
    gevent.joinall(jobs, timeout=30, raise_error=True)
    return {
        "right": sum(job.value == [True, 2 * i] for i, job in enumerate(jobs)),
        "batches": batcher.batches,
        "requests": batcher.requests,
        "largest": max(sizes),
        "observed": sum(sizes),
        "idle": not batcher._busy and not batcher._queue,
    }


def sequential(url: str) -> dict[str, Any]:
    """One request at a time: each goes out alone, at once."""
    batcher, sizes = _batcher(connect(url, False))
    replies = [batcher.send([("ECHO", str(i))]) for i in range(20)]
    return {"right": replies == [[str(i)] for i in range(20)], "sizes": sizes}


def errors(url: str) -> dict[str, Any]:
    """Error replies in a batch belong to their own request only."""
    client = connect(url, False)
    client.set("probe:text", "not a number")
    client.delete("probe:counter")
    batcher, _ = _batcher(client)
    held = gevent.spawn(batcher.send, [("BLPOP", "probe:nothing", "0.2")])
    gevent.sleep(0.05)  # the BLPOP is on the wire: the next three queue behind it
    jobs = [
        gevent.spawn(batcher.send, [("INCR", "probe:text")]),
        gevent.spawn(batcher.send, [("EVALSHA", "0" * 40, 0)]),
        gevent.spawn(batcher.send, [("INCR", "probe:counter"), ("INCR", "probe:text")]),
    ]
    gevent.joinall([held, *jobs], timeout=30, raise_error=True)
    return {
        "kinds": [[type(reply).__name__ for reply in job.value] for job in jobs],
        "counter": jobs[2].value[0],
        "one_batch": batcher.batches == 2,
    }


def scripts_flushed(url: str) -> dict[str, Any]:
    """A Redis that forgot the scripts: every queued EVALSHA is loaded and sent again."""
    client = connect(url, False)
    batcher, _ = _batcher(client)
    store = TableStore(client, None, batcher)
    client.script_flush()
    nothing: Any = {}  # Any: a state the reschedule never reads, not a table's
    record = TableRecord("probe-missing", nothing, 3, 0, stamp="stamp")
    jobs = [gevent.spawn(store.reschedule, record, 1.0) for _ in range(20)]
    gevent.joinall(jobs, timeout=30, raise_error=True)
    return {"answers": sorted({job.value for job in jobs}), "batches": batcher.batches}


def redis_down(url: str) -> dict[str, Any]:
    """No Redis: every request fails with the connection's error, none waits forever."""
    client = connect(f"redis://127.0.0.1:{free_port()}/0", False)
    batcher, _ = _batcher(client)

    def one() -> str:
        try:
            batcher.send([("PING",)])
        except redis.exceptions.RedisError as error:
            return type(error).__name__
        return "answered"

    jobs = [gevent.spawn(one) for _ in range(10)]
    gevent.joinall(jobs, timeout=60)
    return {
        "finished": sum(job.ready() for job in jobs),
        "errors": sorted({str(job.value) for job in jobs}),
        "idle": not batcher._busy and not batcher._queue,
    }


def interrupted(url: str) -> dict[str, Any]:
    """Greenlets killed while queued, the next batch's leader among them: the others
    are answered and the batcher takes requests afterwards."""
    batcher, _ = _batcher(connect(url, False))
    held = gevent.spawn(batcher.send, [("BLPOP", "probe:nothing", "0.3")])
    gevent.sleep(0.05)
    jobs = [gevent.spawn(batcher.send, [("ECHO", str(i))]) for i in range(6)]
    gevent.sleep(0.05)  # all six queued behind the BLPOP
    gevent.killall([jobs[0], jobs[3]])  # the first would have led the next batch
    gevent.joinall([held, *jobs], timeout=30)
    after = batcher.send([("ECHO", "after")])
    return {
        "answers": [
            type(job.value).__name__ if isinstance(job.value, BaseException) else job.value
            for job in jobs
        ],
        "after": after,
        "idle": not batcher._busy and not batcher._queue,
    }


def rate_limits(url: str) -> dict[str, Any]:
    """The rate limiter's buckets through the batcher, on a Redis that forgot the script:
    of 50 requests at once against a bucket of 10, exactly 10 pass."""
    client = connect(url, False)
    batcher, sizes = _batcher(client)
    limiter = RateLimiter(client, 60.0, TableStore(client, None, batcher).send)
    client.script_flush()
    jobs = [
        gevent.spawn(limiter.check, [("ratelimit:{probe}", 10), (f"ratelimit:{{probe{i}}}", 99)])
        for i in range(50)
    ]
    gevent.joinall(jobs, timeout=30, raise_error=True)
    return {
        "allowed": sum(job.value[0].allowed for job in jobs),
        "others": sum(job.value[1].allowed for job in jobs),
        # the 49 made while the first was on the wire left together (each request may
        # then send again after NOSCRIPT, so the number of batches is not bounded)
        "batched": max(sizes) > 1,
    }


def unconfirmed(url: str) -> dict[str, Any]:
    """Writes wait for a replica this Redis lacks: in a batch, the requests that wrote are
    refused as not replicated, and those that only read get their replies."""
    connect(url, False).set("probe:kept", "here")
    client = connect(url, False, replication=Replication(replicas=1, timeout_seconds=0.05))
    batcher, sizes = _batcher(client)

    def one(commands: list[tuple[Any, ...]]) -> Any:
        try:
            return batcher.send(commands)
        except NotReplicated:
            return "not replicated"

    reads = [("GET", "probe:kept"), ("HGETALL", "probe:nothing")]
    writes = [("SET", "probe:written", "1")]
    # the first goes out alone; the others queue behind it and leave as one batch
    jobs = [gevent.spawn(one, reads if i % 4 else writes) for i in range(1, 41)]
    gevent.joinall(jobs, timeout=30, raise_error=True)
    return {
        "reads": sorted({json.dumps(job.value) for i, job in enumerate(jobs, 1) if i % 4}),
        "writes": sorted({json.dumps(job.value) for i, job in enumerate(jobs, 1) if not i % 4}),
        "shared": max(sizes) > 1,
        "after": one(reads),
    }


def not_batched(url: str) -> dict[str, Any]:
    """Where batching does not apply: switched off, or a cluster client."""
    cluster = redis.cluster.RedisCluster.__new__(redis.cluster.RedisCluster)
    return {
        "off": batcher_for(connect(url, False), False) is None,
        "cluster": batcher_for(cluster, True) is None,
    }


SCENARIOS = (
    concurrent,
    sequential,
    errors,
    scripts_flushed,
    redis_down,
    interrupted,
    rate_limits,
    unconfirmed,
    not_batched,
)

if __name__ == "__main__":
    print(json.dumps({scenario.__name__: scenario(sys.argv[1]) for scenario in SCENARIOS}))
