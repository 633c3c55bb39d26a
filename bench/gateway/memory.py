"""What the gateway's tables cost Redis: bytes per table and per deal of history, and
moves/s on busy tables while more live tables are stored."""

from __future__ import annotations

import json
import multiprocessing
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import redis

from bench.gateway.inprocess import create_live_tables
from bench.gateway.load import Load
from bench.gateway.plan import Plan
from bench.gateway.rounds import deal_rounds
from bench.gateway.service import Service
from bench.gateway.tables import guts_tables


def table_memory(redis_url: str, table_ids: list[str]) -> dict[str, float]:
    """Mean bytes per table (MEMORY USAGE of its keys) and deals played, over `table_ids`."""
    client = redis.Redis.from_url(redis_url)
    totals, deals, hands = [], [], []
    for table_id in table_ids:
        keys = list(client.scan_iter(match=f"table:{{{table_id}}}*", count=1000))
        sizes = {key.decode(): client.memory_usage(key, samples=0) or 0 for key in keys}
        totals.append(sum(sizes.values()))
        hands.append(sum(v for k, v in sizes.items() if ":hand:" in k))
        state = client.hget(f"table:{{{table_id}}}", "state")
        deals.append(json.loads(state or b"{}").get("hand_number", 0))
    client.close()
    return {
        "bytes": statistics.mean(totals),
        "deals": statistics.mean(deals),
        "hand_history_bytes": statistics.mean(hands),
    }


def memory_costs(service: Service, played: list[str]) -> dict[str, float]:
    """Bytes per fresh 5-seat table, and per deal of history (events and hand record)."""
    fresh = [table_id for table_id, _ in guts_tables(service.url, 5)]
    new = table_memory(service.redis.url, fresh)
    old = table_memory(service.redis.url, played)
    per_deal = (old["bytes"] - new["bytes"]) / max(1.0, old["deals"])
    return {
        "bytes_per_table": new["bytes"],
        "bytes_per_deal": per_deal,
        "hand_record_bytes_per_deal": old["hand_history_bytes"] / max(1.0, old["deals"]),
        "deals_per_played_table": old["deals"],
    }


def grow(service: Service, load: Load, plan: Plan, log: Callable[[str], None]) -> dict[str, Any]:
    """Moves/s on 10 busy tables while the store holds 10, 1,000 and 10,000 live tables."""
    client = redis.Redis.from_url(service.redis.url)
    client.flushall()
    busy = 10
    results = {}
    spawn = multiprocessing.get_context("spawn")
    assert service.gateway is not None
    for level in plan.growth_levels:
        missing = level - busy - client.zcard("tables")
        started = time.monotonic()
        if missing > 0:
            parts = [missing // 2, missing - missing // 2]
            with ProcessPoolExecutor(2, mp_context=spawn) as pool:
                list(
                    pool.map(
                        create_live_tables,
                        [service.redis.url] * 2,
                        [service.evaluator.address] * 2,
                        parts,
                        [1, 2],
                    )
                )
        made = time.monotonic() - started
        memory = int(client.info("memory")["used_memory"])
        measured = deal_rounds(service, load, busy, plan.rounds, plan.growth_window)
        results[str(level)] = {
            "live_tables": int(client.zcard("tables")),
            "seconds_to_create": made,
            "used_memory": memory,
            **{k: v for k, v in measured.items() if k != "table_ids"},
        }
        log(
            f"  {results[str(level)]['live_tables']:,} live tables: "
            f"{measured['moves_per_second']['median']:,.0f} moves/s, "
            f"p99 {measured['move_p99_ms']['median']:.1f} ms"
        )
    client.close()
    return results
