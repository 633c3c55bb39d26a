"""What a deal's history costs Redis: kept as JSON with its events in the stream (as
before packing) against packed (`api.adapters.packed`), for the same deals in one run.

Tables of each kind of `bench.gateway.deals.TABLES` are played through the gateway's
own code. For every packed deal, its packed record's `MEMORY USAGE` is set against what
the same deal took before: its hand record as JSON (written to a scratch key and
weighed the same way) and its share of the events stream (a scratch stream holding the
table's whole log, built as the table's commits built it, shared out by events).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable
from typing import Any

import redis

from api import jsonio
from api.adapters import packed
from api.adapters.store import TableStore, hand_key, raw_command
from bench.gateway.deals import TABLES, play_table
from bench.gateway.tree import create_app, in_process_settings, run_packer


def weigh(client: redis.Redis, key: str) -> int:
    """MEMORY USAGE of a key, every element counted."""
    return int(client.memory_usage(key, samples=0) or 0)


def table_deals(store: TableStore, client: redis.Redis, table_id: str) -> list[dict[str, float]]:
    """Per packed deal of the table: its bytes packed and as JSON with its events."""
    log = store.events_log(table_id)
    scratch = f"scratch:{{{table_id}}}:events"
    for event in log:
        client.xadd(scratch, {"event": jsonio.dumps_bytes(event)}, id=f"{event['id']}-0")
    per_event = weigh(client, scratch) / max(1, len(log))
    client.delete(scratch)
    rows = []
    number = 1
    while (raw := raw_command(store.client, "GET", hand_key(table_id, number))) is not None:
        if packed.is_packed(raw):
            held = packed.unpack(raw)
            record = f"scratch:{{{table_id}}}:hand"
            client.set(record, held.record)
            rows.append(
                {
                    "events": len(held.events),
                    "packed": weigh(client, hand_key(table_id, number)),
                    "json_record": weigh(client, record),
                    "json_events": per_event * len(held.events),
                }
            )
            client.delete(record)
        number += 1
    return rows


def history_bytes(
    redis_url: str, evaluator_address: str, deals: int, log: Callable[[str], None]
) -> dict[str, Any]:
    """Bytes of Redis a deal's history takes, as JSON and packed: medians over the
    deals of tables of both games, and their ratio."""
    app = create_app(in_process_settings(redis_url, evaluator_address))
    service = app.extensions["cardroom.service"]
    http = app.test_client()
    client = redis.Redis.from_url(redis_url)
    rng = random.Random(5)
    rows: list[dict[str, float]] = []
    kinds = {}
    try:
        for options in TABLES:
            table_id = play_table(http, options, deals, rng)
            run_packer(service)  # as the clock would, once the deals ended
            found = table_deals(service.store, client, table_id)
            rows += found
            name = f"{options['game']} {options['max_players']} seats"
            kinds[name] = {
                "deals": len(found),
                "json": statistics.median(r["json_record"] + r["json_events"] for r in found),
                "packed": statistics.median(r["packed"] for r in found),
            }
            log(
                f"  {name}: {kinds[name]['json']:,.0f} bytes a deal as JSON,"
                f" {kinds[name]['packed']:,.0f} packed (medians of {len(found)} deals)"
            )
    finally:
        service.evaluator.close()
        client.close()
    json_form = statistics.median(r["json_record"] + r["json_events"] for r in rows)
    compact = statistics.median(r["packed"] for r in rows)
    return {
        "deals": len(rows),
        "kinds": kinds,
        "json_bytes_per_deal": json_form,
        "json_record_bytes_per_deal": statistics.median(r["json_record"] for r in rows),
        "json_events_bytes_per_deal": statistics.median(r["json_events"] for r in rows),
        "events_per_deal": statistics.median(r["events"] for r in rows),
        "packed_bytes_per_deal": compact,
        "ratio": compact / json_form,
        "dictionary": packed.writing(),
    }
