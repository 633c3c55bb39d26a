"""Whole games played through the HTTP API, shared by the table and scale-out tests."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from typing import Any, TypeVar

from api.games.common import FULL_DECK, Deck
from tests.support.gateway import Gateway
from tests.support.processes import poll
from tests.support.tables_api import Player

T = TypeVar("T")


def wait_for(predicate: Callable[[], T | None], seconds: float = 60.0) -> T:
    """Poll until `predicate` returns something truthy; that value (see `poll`)."""
    return poll(predicate, seconds)


def seeded_decks(seed: int) -> Callable[[], Deck]:
    """A deck source shuffling from `seed`: for tests whose checks depend on the cards."""
    shuffler = random.Random(seed)

    def deck() -> Deck:
        cards = list(FULL_DECK)
        shuffler.shuffle(cards)
        return Deck(tuple(cards), f"{shuffler.getrandbits(128):032x}")

    return deck


def chips(table: dict[str, Any]) -> int:
    """Stacks, pot and reserve of a table view."""
    stacks = sum(int(seat["stack"]) for seat in table["seats"].values())
    return stacks + int(table["pot"]) + int(table["reserve"])


def sum_cashed(gateway: Gateway, table_id: str) -> int:
    """Chips cashed out so far, from the event log."""
    return sum(
        e["data"]["amount"] for e in gateway.events(table_id)["events"] if e["type"] == "cashed_out"
    )


def play_guts_game(gateway: Gateway, options: dict[str, Any], deals: int = 8) -> int:
    """Play up to `deals` deals with random declarations, checking chips; deals played."""
    rng = random.Random(str(options))
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=5, **options)
    players = [gateway.sit(table_id, f"p{i}", buy_in=60) for i in range(4)]
    bought = 4 * 60
    gateway.act(table_id, players[0], action="start")
    deals_seen = 0
    for _ in range(deals):
        table = wait_for(
            lambda: (
                t if (t := gateway.table(table_id))["phase"] in ("declaring", "waiting") else None
            )
        )
        assert chips(table) == bought - sum_cashed(gateway, table_id)
        if table["phase"] == "waiting":
            break
        deals_seen += 1
        hand = table["hand_number"]
        for seat in (
            list(table["pending"]["seats"]) if options.get("declare") != "sequential" else []
        ):
            player = next(p for p in players if p.seat == seat)
            gateway.act(table_id, player, action="declare", choice=rng.choice(["in", "out"]))
        while options.get("declare") == "sequential":
            table = gateway.table(table_id)
            if table["hand_number"] != hand or table["phase"] != "declaring":
                break
            seat = table["pending"]["seats"][0]
            player = next(p for p in players if p.seat == seat)
            gateway.act(table_id, player, action="declare", choice=rng.choice(["in", "out"]))

        def moved_on(h: int = hand) -> bool:
            view = gateway.table(table_id)
            return bool(view["hand_number"] > h or view["phase"] == "waiting")

        wait_for(moved_on)
    table = gateway.table(table_id)
    assert chips(table) == bought - sum_cashed(gateway, table_id)
    for number in range(1, table["hand_number"]):
        history = gateway.call("GET", f"/v1/tables/{table_id}/hands/{number}")
        assert history.status_code == 200
    return deals_seen


def paiute_table(gateway: Gateway, players: int = 3, **options: Any) -> tuple[str, list[Player]]:
    """Create a Paiute table and seat `players` players with 50 chips each."""
    response = gateway.call(
        "POST", "/v1/tables", json={"game": "paiute", "deal_pause_seconds": 60, **options}
    )
    assert response.status_code == 201, response.get_json()
    table_id = response.get_json()["table"]["id"]
    return table_id, [gateway.sit(table_id, f"p{i}", buy_in=50) for i in range(players)]


def play_paiute_turns(
    gateway: Gateway,
    table_id: str,
    players: list[Player],
    turns: int,
    rng: random.Random,
    send: Callable[..., Any] | None = None,
    after_turn: Callable[[], None] | None = None,
) -> None:
    """Play Paiute turns: call when the evaluator finds a combination, else discard."""
    if send is None:

        def send(viewer: Player | None, method: str, path: str, **kwargs: Any) -> Any:
            return gateway.call(method, path, viewer, **kwargs)

    for _ in range(turns):
        table = gateway.table(table_id)
        if table["phase"] not in ("playing", "last_turns"):
            wait_for(lambda: gateway.table(table_id)["phase"] in ("playing", "last_turns"))
            continue
        seat = table["pending"]["seats"][0]
        player = next(p for p in players if p.seat == seat)
        source = "discard" if rng.random() < 0.3 and table["deal"]["discard_top"] else "stock"
        drew = send(
            player,
            "POST",
            f"/v1/tables/{table_id}/actions",
            json={"action": "draw", "source": source},
        ).get_json()
        if drew["table"]["you"]["drawn"] is None:
            continue  # the draw emptied the stock once too often: the deal is void
        hand = drew["table"]["you"]["cards"]
        ranked = gateway.call(
            "POST",
            "/v1/evaluate",
            json={
                "game": "paiute",
                "wild_rank": "23456789TJQKA".index(drew["table"]["deal"]["wild_card"][0]) + 2,
                "hands": [" ".join(hand)],
            },
        ).get_json()["results"][0]
        taken = drew["table"]["you"]["drawn"]
        spare = ranked["leftover"]
        if ranked["strength"] and (
            spare is None or taken["source"] == "stock" or spare != taken["card"]
        ):
            shown = [card for card in hand if card != spare]
            send(
                player,
                "POST",
                f"/v1/tables/{table_id}/actions",
                json={"action": "call", "cards": shown, "discard": spare},
            )
        else:
            choices = [c for c in hand if not (taken["source"] == "discard" and c == taken["card"])]
            send(
                player,
                "POST",
                f"/v1/tables/{table_id}/actions",
                json={"action": "discard", "card": rng.choice(choices)},
            )
        if after_turn is not None:
            after_turn()


def seated(gateway: Gateway, **options: Any) -> tuple[str, Player, Player]:
    """A Guts table with two seated players."""
    table_id = gateway.create(deal_pause_seconds=60, **options)
    return table_id, gateway.sit(table_id, "ann"), gateway.sit(table_id, "bo")


def opened_cards(proof: dict[str, Any], commitment: str) -> dict[int, str]:
    """Check a history's proof as any reader can; the cards it opens, by deck position."""
    leaves = proof["leaves"]
    assert len(leaves) == 52
    assert hashlib.sha256(",".join(leaves).encode()).hexdigest() == proof["commitment"]
    assert proof["commitment"] == commitment
    for item in proof["opened"]:
        text = f"{item['position']}:{item['card']}:{item['salt']}"
        assert hashlib.sha256(text.encode()).hexdigest() == leaves[item["position"]]
    return {item["position"]: item["card"] for item in proof["opened"]}
