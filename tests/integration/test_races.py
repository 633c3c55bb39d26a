"""Races through real processes: two gunicorn gateways (two workers each) on one Redis.

Fifty copies of one move fired at the same instant, half at each gateway, take effect
exactly once: with one shared Idempotency-Key the others get the first answer again
(``Idempotent-Replayed: true``) or a clean ``409 idempotency_in_progress``; without a
key they get the rule's clean refusal. Then both gateways drive one table through a
whole game at once, every player sending each move to either of them: every
acknowledged move is in the event log exactly once, the versions the moves were
acknowledged at never repeat and grow for every player, the log replays to the stored
state, and no chip is made or lost.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest

from api.adapters.store import TableStore, connect
from api.games.replay import replay, summary
from tests.support.games import stored_events, stored_state
from tests.support.processes import GunicornGateway, HttpGateway, RedisProcess, Reply, Seat, poll

COPIES = 50
# a player holds one seat a table: copies of one player's seat grant meet the first seat
REFUSAL = {"declare": "already_declared", "seat": "already_seated", "leave": "already_left"}


@pytest.fixture(scope="module")
def gateways(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[GunicornGateway]]:
    """Two gunicorn gateways, two workers of eight threads each, on the session's Redis."""
    logs = tmp_path_factory.mktemp("races")
    started: list[GunicornGateway] = []
    try:
        for number in range(2):
            gateway = GunicornGateway(
                redis_process.url,
                evaluator_address,
                Path(logs) / f"gateway{number}.log",
                workers=2,
                threads=8,
                LOG_LEVEL="warning",
                RATE_LIMIT_PER_ADDRESS="0",
                RATE_LIMIT_PER_TOKEN="0",
            )
            gateway.start()
            started.append(gateway)
        yield started
    finally:
        for gateway in started:
            gateway.stop()


def at_once(
    gateways: list[GunicornGateway], send: Callable[[HttpGateway, HTTPConnection], Reply]
) -> list[Reply]:
    """COPIES requests released together by a barrier, alternating between the gateways."""
    barrier = threading.Barrier(COPIES)

    def one(index: int) -> Reply:
        """One copy of the move, sent once every copy is ready."""
        client = gateways[index % len(gateways)].http
        # The connection is open before the barrier, so only the requests race.
        link = HTTPConnection("127.0.0.1", client.base_port, timeout=client.timeout)
        link.connect()
        try:
            barrier.wait(timeout=60)
            return send(client, link)
        finally:
            link.close()

    with ThreadPoolExecutor(COPIES) as pool:
        return list(pool.map(one, range(COPIES)))


def public_events(http: HttpGateway, table_id: str) -> list[dict[str, Any]]:
    """The table's events as a spectator sees them."""
    reply = http.call("GET", f"/v1/tables/{table_id}/events?after=0")
    assert reply.status_code == 200, reply.text()
    return list(reply.get_json()["events"])


@pytest.mark.parametrize("keyed", [True, False], ids=["one-key", "no-key"])
@pytest.mark.parametrize("move", ["declare", "seat", "leave"])
def test_fifty_copies_of_one_move_take_effect_once(
    gateways: list[GunicornGateway], redis_url: str, move: str, keyed: bool
) -> None:
    http = gateways[0].http
    table_id = http.create(turn_seconds=600, deal_pause_seconds=60)
    players = [http.sit(table_id, name, 50) for name in ("ann", "bob", "cy")]
    assert http.act(table_id, players[0], action="start").status_code == 200
    before = http.table(table_id)
    mover = players[1]
    racer = http.sign_up("racer")
    headers = {"Idempotency-Key": f"race-{move}"} if keyed else {}

    def send(gateway: HttpGateway, link: HTTPConnection) -> Reply:
        """One copy of the move under test."""
        if move == "declare":
            body = {"action": "declare", "choice": "in"}
            path = f"/v1/tables/{table_id}/actions"
            return gateway.call("POST", path, mover, body, headers, link)
        if move == "seat":
            seat_body: dict[str, Any] = {"name": "racer", "buy_in": 50}
            path = f"/v1/tables/{table_id}/seats"
            return gateway.call("POST", path, racer, seat_body, headers, link)
        path = f"/v1/tables/{table_id}/seats/{mover.seat}"
        return gateway.call("DELETE", path, mover, None, headers, link)

    replies = at_once(gateways, send)
    done = [r for r in replies if r.status_code < 400 and "idempotent-replayed" not in r.headers]
    assert len(done) == 1, Counter(r.status_code for r in replies)
    first = done[0]
    for reply in replies:
        if reply is first:
            continue
        assert reply.mimetype in ("application/json", "application/problem+json"), reply.text()
        if keyed and reply.status_code == first.status_code:
            assert reply.headers["idempotent-replayed"] == "true"
            assert reply.get_json() == first.get_json()
        elif keyed:
            assert (reply.status_code, reply.get_json()["code"]) == (
                409,
                "idempotency_in_progress",
            ), reply.text()
            assert reply.get_json()["field"] == "Idempotency-Key"
            assert "retry-after" in reply.headers
        else:
            assert reply.mimetype == "application/problem+json"
            assert (reply.status_code, reply.get_json()["code"]) == (409, REFUSAL[move])
    after = http.table(table_id)
    assert after["version"] == before["version"] + 1
    kinds = {"declare": "declared", "seat": "seated", "leave": "leaving"}
    logged = [
        e
        for e in public_events(http, table_id)
        if e["type"] == kinds[move]
        and (e["data"].get("name") == "racer" if move == "seat" else e["data"]["seat"] == 2)
    ]
    assert len(logged) == 1, logged
    store = TableStore(connect(redis_url, False))
    record = store.load(table_id)
    assert record is not None
    assert replay(stored_events(store.events_after(table_id, 0, None))) == summary(
        stored_state(record.state)
    )


def test_two_gateway_processes_play_one_game_without_losing_a_move(
    gateways: list[GunicornGateway], redis_url: str
) -> None:
    http = gateways[0].http
    table_id = http.create(turn_seconds=30, deal_pause_seconds=0, ante=1)
    players = [http.sit(table_id, f"p{number}", 40) for number in range(5)]
    assert http.act(table_id, players[0], action="start").status_code == 200
    acknowledged: list[tuple[int, int, str, int]] = []  # seat, deal, choice, version
    lock = threading.Lock()
    finished = threading.Event()
    failures: list[str] = []

    gone: set[int] = set()
    served: Counter[int] = Counter()  # acknowledged moves by gateway port

    def play(player: Seat, rng: random.Random) -> None:
        """A player's thread: its failure is the test's."""
        try:
            declare_until_gone(player, rng)
        except Exception as error:  # a thread's failure fails the test, not just the thread
            failures.append(repr(error))

    def declare_until_gone(player: Seat, rng: random.Random) -> None:
        """Declare whenever it is this player's turn, until the game is over."""
        last_version = 0
        while not finished.is_set():
            gateway = rng.choice(gateways).http
            looked = gateway.call("GET", f"/v1/tables/{table_id}", player)
            if looked.status_code == 401:
                gone.add(player.seat)  # out of chips at the end of a game: the seat is gone
                return
            assert looked.status_code == 200, looked.text()
            view = looked.get_json()
            pending = view["pending"] or {}
            hand = view["hand_number"]
            if pending.get("action") != "declare" or player.seat not in pending["seats"]:
                time.sleep(0.01)
                continue
            choice = rng.choice(["in", "out"])
            reply = gateway.call(
                "POST",
                f"/v1/tables/{table_id}/actions",
                player,
                {"action": "declare", "choice": choice},
                {"Idempotency-Key": f"{player.seat}-{hand}", "If-Match": f'"{view["version"]}"'},
            )
            if reply.status_code == 200:
                version = int(reply.headers["etag"].strip('"'))
                if version <= last_version:
                    failures.append(f"seat {player.seat}: version {version} after {last_version}")
                last_version = version
                with lock:
                    acknowledged.append((player.seat, hand, choice, version))
                    served[gateway.base_port] += 1
            elif reply.status_code not in (409, 412):
                failures.append(reply.text())

    threads = [
        threading.Thread(target=play, args=(player, random.Random(player.seat)), daemon=True)
        for player in players
    ]
    for thread in threads:
        thread.start()

    def game_over() -> bool:
        """True once a whole game, or enough deals, have been played."""
        events = public_events(http, table_id)
        dealt = sum(e["type"] == "deal_ended" for e in events)
        return dealt >= 20 or (dealt >= 6 and any(e["type"] == "game_ended" for e in events))

    try:
        poll(game_over, 240, "a whole game played through both gateways")
    finally:
        finished.set()
        for thread in threads:
            thread.join(60)
    assert failures == []
    store = TableStore(connect(redis_url, False))
    record = store.load(table_id)
    assert record is not None
    log = store.events_after(table_id, 0, None)
    assert [e["id"] for e in log] == list(range(1, record.seq + 1))
    declared = Counter(
        (e["data"]["seat"], e["hand_number"]) for e in log if e["type"] == "declared"
    )
    choices = {
        (e["data"]["seat"], e["hand_number"]): e["data"]["choice"]
        for e in log
        if e["type"] == "your_declaration"
    }
    assert len(served) == 2, served
    for seat, hand, choice, _version in acknowledged:
        assert declared[(seat, hand)] == 1, (seat, hand)
        assert choices[(seat, hand)] == choice
    # No move was acknowledged twice, nor two moves at one version.
    assert len({(seat, hand) for seat, hand, _, _ in acknowledged}) == len(acknowledged)
    versions = [version for _, _, _, version in acknowledged]
    assert len(set(versions)) == len(versions)
    assert max(versions) <= record.version
    assert replay(stored_events(log)) == summary(stored_state(record.state))
    left = {e["data"]["seat"] for e in log if e["type"] == "left"}
    assert gone <= left
    view = http.table(table_id)
    on_table = sum(s["stack"] for s in view["seats"].values()) + view["pot"] + view["reserve"]
    cashed = sum(e["data"]["amount"] for e in log if e["type"] == "cashed_out")
    assert on_table == 5 * 40 - cashed
