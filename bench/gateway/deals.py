"""Deals of both games played through the gateway's own code, by its computer players'
strategies: the stored deals that `bench.gateway.capacity` weighs and that the
histories' zstd dictionary is trained on (`bench.gateway.dictionary`).

Each table is made and played through the app's test client (in process); every seat
is a player of its own whose moves a strategy of the table's game picks from the seat's
own view, as the bots' runner does (`api.bots.runner`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from api.games.strategies import Facts, names_for, strategy_for
from bench.bots.table import guts_odds
from bench.gateway.inprocess import player_key

# the tables played: each game with a few seats, turns long enough that nothing times out
TABLES: list[dict[str, Any]] = [
    {"game": "guts", "max_players": 5},
    {"game": "guts", "max_players": 3, "cards": 3},
    {"game": "paiute", "max_players": 4},
    {"game": "paiute", "max_players": 3},
]
BUY_IN = 500


def play_table(
    http: Any,
    options: dict[str, Any],
    deals: int,
    rng: random.Random,
    ended: Callable[[str, int, list[dict[str, str]]], None] | None = None,
) -> str:
    """A table of `options` played by strategies until `deals` deals ended (or nobody
    is left to play); its id. A player who goes broke buys in again. `ended` is told of
    each deal once it has ended (the table's id, the deal's number, the seats' headers),
    before the next one is played."""
    game = options["game"]
    seats = int(options["max_players"])
    keys = [player_key(http, f"p{rng.randrange(10**6)}") for _ in range(seats)]
    body = {**options, "turn_seconds": 3600, "deal_pause_seconds": 0}
    answer = http.post("/v1/tables", json=body, headers=keys[0])
    table_id = str(answer.get_json()["table"]["id"])
    path = f"/v1/tables/{table_id}"
    strategies = names_for(game)
    tokens: dict[int, dict[str, str]] = {}
    playing = {}

    def sit(index: int) -> None:
        sat = http.post(
            f"{path}/seats", json={"name": f"p{index}", "buy_in": BUY_IN}, headers=keys[index]
        ).get_json()
        if "token" not in sat:
            raise RuntimeError(f"sit: {sat}")
        tokens[index] = {"Authorization": f"Bearer {sat['token']}"}
        playing[index] = strategy_for(game, strategies[index % len(strategies)])

    for index in range(seats):
        sit(index)
    http.post(f"{path}/actions", json={"action": "start"}, headers=tokens[0])
    told = 0
    while True:
        moved = False
        for index, header in list(tokens.items()):
            view = http.get(path, headers=header).get_json()
            finished = view["hand_number"] - (view["phase"] not in ("waiting", "between_deals"))
            while ended is not None and told < min(finished, deals):
                told += 1
                ended(table_id, told, list(tokens.values()))
            if view["hand_number"] > deals or finished >= deals:
                return table_id
            you = view.get("you")
            if you is None:  # broke and gone: a new buy-in
                sit(index)
                moved = True
                continue
            pending = view.get("pending") or {}
            if you["seat"] not in pending.get("seats", ()):
                continue
            strategy = playing[index]
            assert strategy is not None
            facts = Facts()
            if strategy.wants_odds(view) and you["cards"]:
                facts = Facts(odds=guts_odds(you["cards"]))
            action = strategy.decide(view, facts, rng)
            if action is not None:
                answer = http.post(f"{path}/actions", json=action, headers=header)
                moved = moved or answer.status_code == 200
        if not moved:
            started = http.post(f"{path}/actions", json={"action": "start"}, headers=tokens[0])
            if started.status_code != 200:
                return table_id  # nobody can play on


def play_deals(http: Any, deals: int, seed: int = 7) -> list[str]:
    """A table of each of `TABLES` played for `deals` deals; their ids."""
    rng = random.Random(seed)
    return [play_table(http, options, deals, rng) for options in TABLES]
