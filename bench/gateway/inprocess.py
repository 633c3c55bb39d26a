"""The gateway's code run in this process, for what HTTP cannot show.

- Redis commands per kind of move: the gateway app (Flask's test client, clock off) on
  a Redis of its own that nobody else talks to, with MONITOR listening; an ECHO marker
  before and after each request attributes every command to the request it served.
- Live tables in bulk, created through the service's own code path (`TableService`).
- Profiles of a move and of a showdown with pyinstrument.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import redis

from bench.gateway.client import created_table_id
from bench.gateway.tree import create_app, in_process_settings, make_clock
from bench.servers import RedisServer

MARK = "cardroom-bench-mark"


class CommandLog:
    """Every command Redis runs while it listens, split into client and script commands."""

    def __init__(self, port: int) -> None:
        """Start MONITOR on the Redis at `port`."""
        self.client = redis.Redis(port=port, decode_responses=True)
        self.entries: list[tuple[str, str]] = []  # (client type, command line)
        self._stop = False
        self._count = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._ready.is_set():
            self.client.echo(f"{MARK} ready")
            if self._ready.wait(0.05) or time.monotonic() > deadline:
                break

    def _listen(self) -> None:
        monitor_client = redis.Redis(port=self.client.connection_pool.connection_kwargs["port"])
        with monitor_client.monitor() as monitor:  # type: ignore[no-untyped-call]
            for item in monitor.listen():
                command = str(item["command"])
                if command.startswith(f"ECHO {MARK}"):
                    self._ready.set()
                self.entries.append((str(item.get("client_type")), command))
                if self._stop and command == f"ECHO {MARK} stop":
                    return

    def measure(self, action: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
        """Run `action`; its result and the commands Redis ran for it."""
        self._count += 1
        begin, end = f"ECHO {MARK} begin {self._count}", f"ECHO {MARK} end {self._count}"
        self.client.echo(begin[5:])
        result = action()
        self.client.echo(end[5:])
        deadline = time.monotonic() + 10
        while not any(command == end for _, command in self.entries[-200:]):
            if time.monotonic() > deadline:
                raise RuntimeError("MONITOR fell behind")
            time.sleep(0.001)
        commands = [command for _, command in self.entries]
        first = len(commands) - 1 - commands[::-1].index(begin)
        last = len(commands) - 1 - commands[::-1].index(end)
        return result, self.entries[first + 1 : last]

    def close(self) -> None:
        """Stop listening."""
        self._stop = True
        self.client.echo(f"{MARK} stop")
        self._thread.join(10)
        self.client.close()


class Tally:
    """Commands per kind of move, over every sample of it."""

    def __init__(self) -> None:
        """Nothing counted yet."""
        self.samples: Counter[str] = Counter()
        self.client: Counter[str] = Counter()
        self.script: Counter[str] = Counter()
        self.names: dict[str, Counter[str]] = {}

    def add(self, kind: str, commands: list[tuple[str, str]]) -> None:
        """One sample of `kind`."""
        self.samples[kind] += 1
        names = self.names.setdefault(kind, Counter())
        for client_type, command in commands:
            name = command.split(" ", 1)[0].strip('"').upper()
            if client_type == "lua":
                self.script[kind] += 1
            else:
                self.client[kind] += 1
                names[name] += 1

    def report(self) -> dict[str, dict[str, Any]]:
        """Per kind: samples, client commands (round trips) and script commands per move."""
        return {
            kind: {
                "samples": count,
                "round_trips": self.client[kind] / count,
                "script_commands": self.script[kind] / count,
                "by_command": {
                    name: value / count for name, value in self.names[kind].most_common()
                },
            }
            for kind, count in self.samples.items()
        }


def count_commands(evaluator_address: str, tables: int = 10) -> dict[str, dict[str, Any]]:
    """Redis commands per kind of move, through the real app on a Redis of its own."""
    server = RedisServer()
    app = create_app(in_process_settings(server.url, evaluator_address))
    service = app.extensions["cardroom.service"]
    http = app.test_client()
    log = CommandLog(server.port)
    tally = Tally()

    def call(kind: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response, commands = log.measure(
            lambda: http.open(path, method=method, json=body, headers=headers)
        )
        if response.status_code >= 400:
            raise RuntimeError(f"{kind}: {response.status_code} {response.get_json()}")
        tally.add(kind, commands)
        return response.get_json()

    def sign_up(name: str) -> str:
        return str(call("sign up", "POST", "/v1/players", {"name": name})["key"])

    try:
        guts = []
        for _ in range(tables):
            keys = [sign_up(f"p{i}") for i in range(5)]
            body = {"game": "guts", **_GUTS}
            table_id = created_table_id(call("create table", "POST", "/v1/tables", body, keys[0]))
            tokens = [
                call(
                    "sit",
                    "POST",
                    f"/v1/tables/{table_id}/seats",
                    {"name": f"p{i}", "buy_in": 500},
                    key,
                )["token"]
                for i, key in enumerate(keys)
            ]
            guts.append((table_id, tokens))
        for table_id, tokens in guts:
            call("start", "POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, tokens[0])
            call("read table", "GET", f"/v1/tables/{table_id}", token=tokens[0])
            call("read table, spectator", "GET", f"/v1/tables/{table_id}")
            call("events, ready (long poll)", "GET", f"/v1/tables/{table_id}/events?after=0&wait=5")
            cursor = call("events", "GET", f"/v1/tables/{table_id}/events?after=0")["next"]
            call(
                "events, waits 0.2 s (long poll)",
                "GET",
                f"/v1/tables/{table_id}/events?after={cursor}&wait=0.2",
            )
            for i, token in enumerate(tokens[:-1]):
                body = {"action": "declare", "choice": "in" if i < 2 else "out"}
                call("declare", "POST", f"/v1/tables/{table_id}/actions", body, token)
            body = {"action": "declare", "choice": "in"}
            call("declare that settles", "POST", f"/v1/tables/{table_id}/actions", body, tokens[-1])
        clock = make_clock(app.extensions["cardroom.services"], 1.0, sweep=3600.0)
        clock._last_sweep = time.monotonic()  # the sweep is counted on its own below
        time.sleep(_GUTS["deal_pause_seconds"])  # every table's next deal is due
        _, commands = log.measure(clock.tick)
        tally.add(f"clock tick dealing {tables} tables", commands)
        _, commands = log.measure(clock.tick)
        tally.add("clock tick, nothing due", commands)
        _, commands = log.measure(clock.sweep)
        tally.add(f"clock sweep over {tables} Guts tables", commands)

        def hand_of(path: str, token: str) -> list[str]:
            view = http.get(path, headers={"Authorization": f"Bearer {token}"}).get_json()
            return list(view["you"]["cards"])

        # A stacked deck lets the first player call at once: the commands of a move do
        # not depend on the cards, and random deals reach a call only every few
        # hundred turns. Everything else is the service's own path.
        dealt_deck = service.changes.deck_source
        service.changes.deck_source = _calling_deck
        for _ in range(tables):
            keys = [sign_up(f"q{i}") for i in range(2)]
            body = {"game": "paiute", **_PAIUTE}
            table_id = created_table_id(call("create table", "POST", "/v1/tables", body, keys[0]))
            path = f"/v1/tables/{table_id}"
            tokens = [
                call("sit", "POST", f"{path}/seats", {"name": f"q{i}", "buy_in": 500}, key)["token"]
                for i, key in enumerate(keys)
            ]
            call("start", "POST", f"{path}/actions", {"action": "start"}, tokens[0])
            first = int(http.get(path).get_json()["pending"]["seats"][0])
            caller, last = tokens[first - 1], tokens[2 - first]
            draw = {"action": "draw", "source": "stock"}
            call("draw", "POST", f"{path}/actions", draw, caller)
            shown = {"action": "call", "cards": hand_of(path, caller), "discard": None}
            call("call (five or six cards ranked)", "POST", f"{path}/actions", shown, caller)
            call("draw", "POST", f"{path}/actions", draw, last)
            thrown = {"action": "discard", "card": hand_of(path, last)[-1]}
            call("discard that ends the deal (showdown)", "POST", f"{path}/actions", thrown, last)
        service.changes.deck_source = dealt_deck
    finally:
        log.close()
        clock_thread = app.extensions.get("cardroom.clock")
        if clock_thread is not None:
            clock_thread.stop()
        service.evaluator.close()
        server.stop()
    return tally.report()


# a pause between deals, so that the settling declare and the clock's next deal are
# counted apart (with no pause, the settling declare deals the next deal itself)
_GUTS: dict[str, Any] = {"ante": 1, "cap": 10, "turn_seconds": 3600, "deal_pause_seconds": 0.2}
_PAIUTE: dict[str, Any] = {"ante": 1, "turn_seconds": 3600, "deal_pause_seconds": 0}


def _calling_deck() -> Any:
    """A Paiute deck whose first player to act holds two pairs and draws a third."""
    from api.games.common import FULL_DECK, Deck

    first = ["Ah", "Ad", "Kh", "Kd", "Qh"]  # dealt to the first player to act
    second = ["5c", "6d", "7h", "8s", "Tc"]  # dealt to the dealer
    wild, discard, draw = "2c", "3c", "Qd"
    hands = [card for pair in zip(first, second, strict=True) for card in pair]
    used = [*hands, wild, discard]
    rest = [card for card in FULL_DECK if card not in [*used, draw]]
    return Deck((*used, draw, *rest), "0" * 32)


def player_key(http: Any, name: str) -> dict[str, str]:
    """The Authorization header of a new player, made through the app's test client `http`."""
    response = http.post("/v1/players", json={"name": name})
    if response.status_code != 201:
        raise RuntimeError(f"sign up: {response.status_code} {response.get_json()}")
    return {"Authorization": f"Bearer {response.get_json()['key']}"}


def started_table(
    http: Any, options: dict[str, Any], players: int, buy_in: int
) -> tuple[str, list[str]]:
    """A Guts table made through the app's test client `http`, seated and started; each
    seat a player of its own, the first one the table's creator.

    Its id and the seat tokens in seat order (the first one started the deal).
    """
    keys = [player_key(http, f"p{i}") for i in range(players)]
    body = {"game": "guts", **options}
    table_id = created_table_id(http.post("/v1/tables", json=body, headers=keys[0]).get_json())
    path = f"/v1/tables/{table_id}"
    tokens = [
        http.post(
            f"{path}/seats", json={"name": f"p{i}", "buy_in": buy_in}, headers=key
        ).get_json()["token"]
        for i, key in enumerate(keys)
    ]
    response = http.post(
        f"{path}/actions",
        json={"action": "start"},
        headers={"Authorization": f"Bearer {tokens[0]}"},
    )
    if response.status_code != 200:
        raise RuntimeError(f"start: {response.status_code} {response.get_json()}")
    return table_id, tokens


def create_live_tables(redis_url: str, evaluator_address: str, count: int, seed: int) -> int:
    """`count` live Guts tables (two seats, a deal waiting an hour for declarations).

    Made through the gateway's own code (its app, in process, through Flask's test
    client), which saves the HTTP round trips and the server's threads.
    """
    app = create_app(in_process_settings(redis_url, evaluator_address))
    http = app.test_client()
    for _ in range(count):
        started_table(http, _GUTS, players=2, buy_in=100)
    app.extensions["cardroom.service"].evaluator.close()
    return count


def profile_moves(redis_url: str, evaluator_address: str, deals: int) -> dict[str, str]:
    """Profiles (pyinstrument text) of declares that do not end a deal and of showdowns."""
    from pyinstrument import Profiler

    app = create_app(in_process_settings(redis_url, evaluator_address))
    service = app.extensions["cardroom.service"]
    http = app.test_client()
    tables = []
    for _ in range(deals):
        tables.append(started_table(http, _GUTS, players=5, buy_in=500))

    def declare(table_id: str, token: str) -> None:
        response = http.post(
            f"/v1/tables/{table_id}/actions",
            json={"action": "declare", "choice": "in"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 200, response.get_json()

    texts = {}
    profiler = Profiler(interval=0.0002)
    profiler.start()
    for table_id, tokens in tables:
        for token in tokens[:-1]:
            declare(table_id, token)
    profiler.stop()
    texts["declare"] = profiler.output_text(unicode=False, color=False, show_all=False)
    profiler = Profiler(interval=0.0002)
    profiler.start()
    for table_id, tokens in tables:
        declare(table_id, tokens[-1])
    profiler.stop()
    texts["declare that settles (showdown)"] = profiler.output_text(
        unicode=False, color=False, show_all=False
    )
    service.evaluator.close()
    return texts
