"""The lobby's part of `make bench-capacity ARGS='--parts lobby'`: a filtered lobby page
over 100 and over 100,000 stored tables, and a quick seat against a plain seat, in one
run, through the gateway's WSGI app in this process on a private Redis.

The stored tables are copies of real ones (a table of each game variant made through
the gateway with one seat, its seat copied to fill more), written as a commit writes
them: the table hash with its `listing`, the table among all tables, and its lobby
shard. Half of them have nobody seated (the abandoned tables of the issue that asked
for a lobby); the rest spread over the variants (3-card Guts 60 %, 2-card Guts and
Paiute 20 % each), six antes and every number of seats taken, full tables included.

A page's figure is the median wall time of the same request asked `--pages` times
(each answered whole: the page's tables read from Redis and encoded), and the Redis
CPU it cost; the ratio of the 100,000-table figure to the 100-table one says what the
number of stored tables costs a page. A quick seat's figure is the median of quick
seats at 3-card Guts tables of ante 2, beside plain seats (`POST .../seats` at a table
named) at the same kind of tables, measured alternately in the same run.
"""

from __future__ import annotations

import importlib
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import redis

from bench.gateway.tree import THIS_TREE, create_app, in_process_settings

# the pages asked: one a player would ask, and one that few tables pass
PAGES = {
    "guts, ante 1-10, a free seat": "game=guts&ante_max=10&free_seats=1",
    "guts-2, ante 50, 9 free seats": "game=guts&cards=2&ante_min=50&ante_max=50&free_seats=9",
    "no filter": "",
}
ANTES = (1, 2, 5, 10, 25, 50)
# variant of every tenth listed table: 6 of 3-card Guts, 2 of 2-card Guts, 2 of Paiute
VARIANTS = ("guts-3",) * 6 + ("guts-2",) * 2 + ("paiute",) * 2


def listing_of(state: dict[str, Any]) -> Any:
    """A table's place in the lobby as its commit would write it (this tree's rule)."""
    return importlib.import_module(f"{THIS_TREE}.service.lobby").entry_of(state)


def redis_cpu(client: redis.Redis) -> float:
    """Seconds of CPU the Redis server used so far."""
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


class LobbyBench:
    """The gateway's app over a private Redis, with tables to copy."""

    def __init__(self, redis_url: str, evaluator_address: str) -> None:
        """An app on `redis_url`; one real table of each variant, with one seat."""
        self.client = redis.Redis.from_url(redis_url)
        self.client.flushall()
        self.app = create_app(in_process_settings(redis_url, evaluator_address))
        self.http = self.app.test_client()
        self.lobby = importlib.import_module(f"{THIS_TREE}.service.lobby")
        self.templates: dict[str, dict[str, Any]] = {}
        self.players = 0
        for variant in ("guts-3", "guts-2", "paiute"):
            game, _, cards = variant.partition("-")
            options: dict[str, Any] = {"game": game, **({"cards": int(cards)} if cards else {})}
            table_id = self.post("/v1/tables", options, self.player())["table"]["id"]
            self.post(f"/v1/tables/{table_id}/seats", {"buy_in": 100}, self.player())
            raw = self.client.hget(f"table:{{{table_id}}}", "state")
            self.templates[variant] = json.loads(raw or b"{}")
        self.client.delete("tables")
        for shard in self.lobby.SHARDS:
            self.client.delete(f"lobby:{{{shard}}}", f"lobby:{{{shard}}}:rows")

    def player(self) -> str:
        """A new player's key."""
        self.players += 1
        made = self.http.post("/v1/players", json={"name": f"player {self.players}"})
        assert made.status_code == 201, made.get_data(as_text=True)
        return str(made.get_json()["key"])

    def post(self, path: str, body: dict[str, Any], key: str) -> dict[str, Any]:
        """A player's write; its answer."""
        answer = self.http.post(path, json=body, headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 201, answer.get_data(as_text=True)
        return dict(answer.get_json())

    def state(self, n: int, now: float) -> dict[str, Any]:
        """The n-th stored table's state: empty for every other one, else of a variant,
        ante and number of seats taken that n picks."""
        listed = n % 2 == 1
        variant = VARIANTS[(n // 2) % len(VARIANTS)] if listed else "guts-3"
        state: dict[str, Any] = json.loads(json.dumps(self.templates[variant]))
        state["table_id"] = f"b{n:07d}"
        state["created_at"] = now - n / 1000
        state["options"]["ante"] = ANTES[(n // 20) % len(ANTES)]
        seat = state["seats"]["1"]
        taken = 0 if not listed else 1 + (n // 120) % state["options"]["max_players"]
        state["seats"] = {str(k): dict(seat, player_id=k) for k in range(1, taken + 1)}
        return state

    def store(self, count: int) -> None:
        """Stored tables up to `count` in all, as their commits would have written them."""
        have = int(self.client.zcard("tables"))
        now = time.time()
        pipe = self.client.pipeline(transaction=False)
        for n in range(have, count):
            state = self.state(n, now)
            table_id = state["table_id"]
            entry = listing_of(state)
            pipe.hset(
                f"table:{{{table_id}}}",
                mapping={
                    "state": json.dumps(state),
                    "version": 2,
                    "seq": 2,
                    "stamp": "bench",
                    "listing": entry.place,
                },
            )
            pipe.zadd("tables", {table_id: state["created_at"]})
            if entry.member:
                pipe.zadd(f"lobby:{{{entry.shard}}}", {entry.member: 0})
                pipe.hset(f"lobby:{{{entry.shard}}}:rows", table_id, entry.member)
            if len(pipe) >= 4000:
                pipe.execute()
        pipe.execute()

    def lobby_sizes(self) -> dict[str, int]:
        """How many tables each shard lists."""
        return {shard: int(self.client.zcard(f"lobby:{{{shard}}}")) for shard in self.lobby.SHARDS}

    def page_costs(self, query: str, pages: int) -> dict[str, float]:
        """Median wall time and Redis CPU of a lobby page, and how many tables it held."""
        walls: list[float] = []
        shown = 0
        cpu = redis_cpu(self.client)
        for _ in range(pages):
            start = time.perf_counter()
            answer = self.http.get(f"/v1/tables?limit=20&{query}")
            walls.append(time.perf_counter() - start)
            assert answer.status_code == 200, answer.get_data(as_text=True)
            shown = len(answer.get_json()["tables"])
        return {
            "page_ms": 1e3 * statistics.median(walls),
            "redis_cpu_us_per_page": 1e6 * (redis_cpu(self.client) - cpu) / pages,
            "tables_on_the_page": shown,
        }

    def seat_costs(self, seats: int) -> dict[str, float]:
        """Median wall time of a quick seat and of a plain seat at a table named, alternately."""
        quick: list[float] = []
        plain: list[float] = []
        body = {"table": {"game": "guts", "cards": 3, "ante": 2}, "buy_in": 100}
        for _ in range(seats):
            key = self.player()
            start = time.perf_counter()
            self.post("/v1/tables/quick-seat", body, key)
            quick.append(time.perf_counter() - start)
            found = self.http.get("/v1/tables?game=guts&cards=3&ante_min=2&ante_max=2&limit=1")
            table_id = found.get_json()["tables"][0]["id"]
            key = self.player()
            start = time.perf_counter()
            self.post(f"/v1/tables/{table_id}/seats", {"buy_in": 100}, key)
            plain.append(time.perf_counter() - start)
        return {
            "quick_seat_ms": 1e3 * statistics.median(quick),
            "plain_seat_ms": 1e3 * statistics.median(plain),
            "ratio": statistics.median(quick) / statistics.median(plain),
        }

    def close(self) -> None:
        """Release the app's evaluator channel and the client."""
        self.app.extensions["cardroom.service"].evaluator.close()
        self.client.close()


def lobby_costs(
    redis_url: str,
    evaluator_address: str,
    levels: tuple[int, ...],
    pages: int,
    seats: int,
    log: Callable[[str], None],
) -> dict[str, Any]:
    """Each page of `PAGES` over each number of stored tables, then quick seats."""
    bench = LobbyBench(redis_url, evaluator_address)
    results: dict[str, Any] = {"levels": {}}
    try:
        for level in levels:
            bench.store(level)
            row: dict[str, Any] = {"listed": sum(bench.lobby_sizes().values())}
            for name, query in PAGES.items():
                row[name] = bench.page_costs(query, pages)
                log(
                    f"  {level:,} stored tables, {name}: {row[name]['page_ms']:.2f} ms a page"
                    f" ({row[name]['tables_on_the_page']} tables),"
                    f" Redis {row[name]['redis_cpu_us_per_page']:.0f} us of CPU"
                )
            results["levels"][str(level)] = row
        low, high = (results["levels"][str(level)] for level in (min(levels), max(levels)))
        results["ratios"] = {name: high[name]["page_ms"] / low[name]["page_ms"] for name in PAGES}
        for name, ratio in results["ratios"].items():
            log(f"  {name}: {max(levels):,} against {min(levels):,} stored tables, x{ratio:.2f}")
        results["seats"] = bench.seat_costs(seats)
        seat = results["seats"]
        log(
            f"  a quick seat {seat['quick_seat_ms']:.2f} ms, a plain seat"
            f" {seat['plain_seat_ms']:.2f} ms (x{seat['ratio']:.2f}), at {max(levels):,}"
            " stored tables"
        )
    finally:
        bench.close()
    return results
