"""Players through the HTTP API, on a real Redis and the real evaluator.

A seat found again from another client with only the player's key; a player's own past
deals, kept theirs after they left or went broke; Idempotency-Keys that belong to their
player; the quotas at their edge; stream tickets, single-use, for one table, kept out of
the access log and the metrics.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.support.gateway import Gateway, close_app, make_app
from tests.support.play import seeded_decks, wait_for
from tests.support.problems import assert_problem
from tests.support.processes import GunicornGateway, RedisProcess, emptied
from tests.support.tables_api import Account, Player
from tests.support.transcript import card_strings


@pytest.fixture
def anonymous(gateway: Gateway) -> Gateway:
    """The gateway, with requests sent as they are (no player signed in for them)."""
    gateway.client.signs_in = False  # type: ignore[attr-defined]
    return gateway


def started(gateway: Gateway, **options: Any) -> tuple[str, Player, Player]:
    """A Guts table with ann and bo seated and the first deal dealt."""
    table_id = gateway.create(deal_pause_seconds=60, turn_seconds=60, **options)
    ann, bo = gateway.sit(table_id, "ann"), gateway.sit(table_id, "bo")
    assert gateway.act(table_id, ann, action="start").status_code == 200
    return table_id, ann, bo


# ---------------------------------------------------------------- seats found again


def test_a_second_client_finds_the_seat_and_plays_the_next_move(gateway: Gateway) -> None:
    table_id, ann, bo = started(gateway)
    assert ann.account is not None
    first = gateway.table(table_id, ann)["you"]["cards"]
    # another device: a new client that knows only ann's player key
    other = Gateway(gateway.app, gateway.app.test_client())
    key = Account(ann.account.id, ann.account.name, ann.account.key)
    found = other.call("GET", "/v1/players/me/seats", key)
    assert found.status_code == 200, found.get_json()
    assert found.headers["Cache-Control"] == "no-store"
    (seat,) = [s for s in found.get_json()["seats"] if s["table_id"] == table_id]
    assert (seat["seat"], seat["name"], seat["game"], seat["phase"]) == (
        ann.seat,
        "ann",
        "guts",
        "declaring",
    )
    assert seat["table"]["you"]["cards"] == first
    assert seat["version"] == gateway.table(table_id)["version"]
    assert "token" not in json.dumps(found.get_json())
    declared = other.call(
        "POST", f"/v1/tables/{table_id}/actions", key, json={"action": "declare", "choice": "in"}
    )
    assert declared.status_code == 200, declared.get_json()
    assert declared.get_json()["table"]["you"]["declaration"] == "in"
    # the first client's seat token still acts for the same seat
    assert_problem(
        gateway.act(table_id, ann, action="declare", choice="out"), 409, "already_declared"
    )
    assert ann.seat not in gateway.table(table_id)["pending"]["seats"]
    assert gateway.act(table_id, bo, action="declare", choice="in").status_code == 200


def test_a_player_holds_one_seat_a_table(gateway: Gateway) -> None:
    table_id = gateway.create()
    ann = gateway.sit(table_id, "ann")
    assert ann.account is not None
    again = gateway.call(
        "POST", f"/v1/tables/{table_id}/seats", ann.account, json={"name": "ann2", "buy_in": 50}
    )
    assert_problem(again, 409, "already_seated")


def test_a_refused_seat_stays_the_answer_to_its_key_after_the_seat_is_freed(
    gateway: Gateway,
) -> None:
    table_id = gateway.create()
    ann = gateway.sit(table_id, "ann")
    assert ann.account is not None
    path, body = f"/v1/tables/{table_id}/seats", {"name": "ann2", "buy_in": 50}
    headers = {"Idempotency-Key": "second-seat"}
    first = gateway.call("POST", path, ann.account, json=body, headers=headers)
    assert_problem(first, 409, "already_seated")
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{ann.seat}", ann)
    assert left.status_code == 200, left.get_json()
    # the retry gets the first answer, not a seat the first request was refused
    again = gateway.call("POST", path, ann.account, json=body, headers=headers)
    assert_problem(again, 409, "already_seated")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert gateway.table(table_id)["seats"] == {}


# ---------------------------------------------------------------- a player's own past


def own_cards(history: dict[str, Any], seat: int) -> set[str]:
    """The cards the private events of a history deal to `seat`."""
    found: set[str] = set()
    for item in history["events"]:
        data = item.get("data") or {}
        if data.get("seat") == seat and item["type"] != "showdown":
            found |= set(card_strings(data))
    return found


def all_cards(history: dict[str, Any]) -> set[str]:
    """Every card a history names: in its events, its showdown and its proof's openings."""
    return (
        set(card_strings(history["events"]))
        | set(card_strings(history.get("showdown")))
        | {item["card"] for item in history["fairness"]["opened"]}
    )


def test_a_broke_player_and_one_who_left_read_their_own_cards_of_the_last_deal(
    gateway: Gateway,
) -> None:
    gateway.app.extensions["cardroom.service"].changes.deck_source = seeded_decks(21)
    # ante 10, buy-in 20: the loser of a showdown owes 30 and has 10 left
    table_id = gateway.create(ante=10, min_buy_in=20, deal_pause_seconds=0.2, turn_seconds=60)
    ann, bo = gateway.sit(table_id, "ann", 20), gateway.sit(table_id, "bo", 20)
    cy = gateway.sit(table_id, "cy", 100)
    assert gateway.act(table_id, ann, action="start").status_code == 200
    dealt = {p.name: set(gateway.table(table_id, p)["you"]["cards"]) for p in (ann, bo, cy)}
    assert gateway.act(table_id, cy, action="declare", choice="out").status_code == 200
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{cy.seat}", cy)
    assert left.status_code == 200, left.get_json()
    assert gateway.act(table_id, ann, action="declare", choice="in").status_code == 200
    assert gateway.act(table_id, bo, action="declare", choice="in").status_code == 200
    # deal 2 finds one seat with chips: the game is abandoned, the broke seat leaves
    view = wait_for(lambda: t if (t := gateway.table(table_id))["phase"] == "waiting" else None)
    assert len(view["seats"]) == 1, view["seats"]
    (winner,) = [p for p in (ann, bo) if str(p.seat) in view["seats"]]
    (broke,) = [p for p in (ann, bo) if p is not winner]
    stacks = [e for e in gateway.events(table_id)["events"] if e["type"] == "cashed_out"]
    assert {e["data"]["seat"]: e["data"]["amount"] for e in stacks} == {
        cy.seat: 90,
        broke.seat: 0,
    }
    path = f"/v1/tables/{table_id}/hands/1"
    public = gateway.call("GET", path).get_json()
    # cy left during deal 1: the change that ended it cashed cy out, in its history
    ending = [(e["type"], (e.get("data") or {}).get("seat")) for e in public["events"]]
    assert ("cashed_out", cy.seat) in ending
    assert ("left", cy.seat) in ending
    for past in (broke, cy):
        assert past.account is not None
        # the seat token stopped working with the seat; the player's key still reads
        assert gateway.call("GET", path, past).headers.get("WWW-Authenticate")
        mine = gateway.call("GET", path, past.account)
        assert mine.status_code == 200, mine.get_json()
        assert mine.headers.get("WWW-Authenticate") is None
        history = mine.get_json()
        assert own_cards(history, past.seat) == dealt[past.name], past.name
        assert dealt[past.name] <= {item["card"] for item in history["fairness"]["opened"]}
        assert len(history["events"]) > len(public["events"])
    assert winner.account is not None
    theirs = gateway.call("GET", path, winner.account).get_json()
    assert own_cards(theirs, winner.seat) == dealt[winner.name]
    # cy declared out: nobody else ever sees those cards, in the history or its proof
    assert not dealt["cy"] & all_cards(theirs)
    assert not dealt["cy"] & all_cards(public)
    assert not own_cards(theirs, broke.seat)  # the showdown shows them, not the private deal
    # a player who never sat there reads the public history
    stranger = gateway.sign_up("dee")
    assert gateway.call("GET", path, stranger).get_json() == public


# ---------------------------------------------------------------- idempotency


def test_an_idempotency_key_belongs_to_its_player(gateway: Gateway) -> None:
    table_id = gateway.create()
    ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
    path, body = f"/v1/tables/{table_id}/seats", {"buy_in": 100}
    key = {"Idempotency-Key": "seat-once"}
    first = gateway.call("POST", path, ann, json=body, headers=key)
    assert first.status_code == 201, first.get_json()
    theirs = gateway.call("POST", path, bo, json=body, headers=key)
    assert theirs.status_code == 201, theirs.get_json()
    assert theirs.headers.get("Idempotent-Replayed") is None
    assert theirs.get_json()["token"] != first.get_json()["token"]
    assert theirs.get_json()["seat"] != first.get_json()["seat"]
    assert first.get_json()["token"] not in theirs.get_data(as_text=True)
    replayed = gateway.call("POST", path, ann, json=body, headers=key)
    assert replayed.status_code == 201
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert replayed.get_json()["token"] == first.get_json()["token"]
    # a table too: the same key and body from another player is another table
    created = [
        gateway.call("POST", "/v1/tables", who, json={"game": "guts"}, headers=key)
        for who in (ann, bo, ann)
    ]
    assert [c.status_code for c in created] == [201, 201, 201]
    ids = [c.get_json()["table"]["id"] for c in created]
    assert ids[0] != ids[1]
    assert ids[0] == ids[2]


# ---------------------------------------------------------------- quotas


def test_anonymous_clients_get_no_write(anonymous: Gateway) -> None:
    owner = anonymous.sign_up("ann")
    table_id = anonymous.create(owner)
    ann = anonymous.sit(table_id, "ann", account=owner)
    for method, path, body in (
        ("POST", "/v1/tables", {"game": "guts"}),
        ("POST", f"/v1/tables/{table_id}/seats", {"name": "eve", "buy_in": 100}),
        ("POST", f"/v1/tables/{table_id}/actions", {"action": "start"}),
        ("DELETE", f"/v1/tables/{table_id}/seats/{ann.seat}", None),
        ("POST", f"/v1/tables/{table_id}/stream-tickets", None),
        ("POST", "/v1/players/me/keys", None),
    ):
        refused = anonymous.json_call(method, path, None, body)
        assert_problem(refused, 401, "missing_token")
        assert refused.headers["WWW-Authenticate"] == 'Bearer realm="cardroom"'
    assert anonymous.table(table_id)["version"] == 2


@pytest.fixture
def idle_gateway(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway that closes a table after 3 s without a move (long enough to create six)."""
    app = make_app(redis_url, evaluator_address, table_idle_seconds=3)
    yield Gateway(app, app.test_client())
    close_app(app)


def test_five_open_tables_then_429_until_one_closes(idle_gateway: Gateway) -> None:
    gateway = idle_gateway
    owner, other = gateway.sign_up("ann"), gateway.sign_up("bo")
    tables = [gateway.create(owner) for _ in range(5)]
    refused = gateway.call("POST", "/v1/tables", owner, json={"game": "guts"})
    body = assert_problem(refused, 429, "quota_exceeded")
    assert (body["quota"], body["limit"]) == ("open_tables", 5)
    assert refused.headers["Retry-After"]
    assert gateway.create(other)  # the quota is each player's
    # the tables close for idleness: they no longer count
    wait_for(lambda: gateway.call("GET", f"/v1/tables/{tables[0]}").status_code == 410)
    assert gateway.call("POST", "/v1/tables", owner, json={"game": "guts"}).status_code == 201


class HeldStream:
    """An event stream opened and held in a thread of its own until `close`.

    Each stream runs in its own thread: Flask keeps a streaming response's request
    context until the stream ends, and contexts of one thread end in order.
    """

    def __init__(self, gateway: Gateway, path: str, who: Account | None = None) -> None:
        """Open the stream and read its first frame (or its refusal)."""
        self.gateway, self.path, self.who = gateway, path, who
        self.response: Any = None
        self.opened, self.release, self.closed = (threading.Event() for _ in range(3))
        threading.Thread(target=self._hold, daemon=True).start()
        assert self.opened.wait(30), "the stream opened"

    def _hold(self) -> None:
        headers = self.who.auth if self.who is not None else {}
        # the client itself: `Gateway.call` would read a stream to its end to record it
        response = self.gateway.client.open(self.path, headers=headers, buffered=False)
        try:
            if response.status_code == 200:
                first: Any = next(iter(response.response))
                assert first.startswith(b"retry:")
            else:
                response.get_data()
            self.response = response
        finally:
            self.opened.set()
        self.release.wait(60)
        response.close()
        self.closed.set()

    @property
    def status_code(self) -> int:
        """The stream's status."""
        return int(self.response.status_code)

    def close(self) -> None:
        """End the stream."""
        self.release.set()
        assert self.closed.wait(30)


@pytest.fixture
def two_streams(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway letting a player hold two event streams at once."""
    app = make_app(redis_url, evaluator_address, waiting_per_credential=2)
    yield Gateway(app, app.test_client())
    close_app(app)


def test_a_player_holds_up_to_quota_streams(two_streams: Gateway) -> None:
    gateway = two_streams
    table_id = gateway.create()
    ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
    path = f"/v1/tables/{table_id}/events/stream"
    held = [HeldStream(gateway, path, ann) for _ in range(2)]
    assert [r.status_code for r in held] == [200, 200]
    refused = HeldStream(gateway, path, ann)
    body = assert_problem(refused.response, 429, "quota_exceeded")
    assert (body["quota"], body["limit"]) == ("waiting", 2)
    # a ticket opens a stream of the same player: counted too
    ticket = gateway.call("POST", f"/v1/tables/{table_id}/stream-tickets", ann).get_json()
    ticketed = HeldStream(gateway, f"{path}?ticket={ticket['ticket']}")
    assert_problem(ticketed.response, 429, "quota_exceeded")
    other = HeldStream(gateway, path, bo)  # another player's streams are theirs
    spectator = HeldStream(gateway, path)
    assert (other.status_code, spectator.status_code) == (200, 200)
    held[0].close()  # a stream that ends gives its place back
    again = HeldStream(gateway, path, ann)
    assert again.status_code == 200
    for stream in (held[1], other, spectator, again, refused, ticketed):
        stream.close()


def test_one_address_holds_up_to_its_streams_players_and_spectators_alike(
    redis_url: str, evaluator_address: str
) -> None:
    app = make_app(redis_url, evaluator_address, waiting_per_address=3)
    gateway = Gateway(app, app.test_client())
    held: list[HeldStream] = []
    try:
        table_id = gateway.create()
        ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
        path = f"/v1/tables/{table_id}/events/stream"
        held += [HeldStream(gateway, path, ann), HeldStream(gateway, path, bo)]
        held.append(HeldStream(gateway, path))
        assert [r.status_code for r in held] == [200, 200, 200]
        for who in (None, ann):
            refused = HeldStream(gateway, path, who)
            held.append(refused)
            body = assert_problem(refused.response, 429, "quota_exceeded")
            assert (body["quota"], body["limit"]) == ("waiting_per_address", 3)
            assert refused.response.headers["Retry-After"]
        held[2].close()  # a stream that ends gives its place back
        again = HeldStream(gateway, path)
        held.append(again)
        assert again.status_code == 200
        # play goes on meanwhile
        assert gateway.sit(table_id, "cy").seat
    finally:
        for stream in held:
            stream.close()
        close_app(app)


def test_long_polls_and_streams_count_together(redis_url: str, evaluator_address: str) -> None:
    app = make_app(redis_url, evaluator_address, waiting_per_address=3, long_poll_max=30.0)
    gateway = Gateway(app, app.test_client())
    held: list[HeldStream] = []
    try:
        table_id = gateway.create()
        ann = gateway.sign_up("ann")
        path = f"/v1/tables/{table_id}/events/stream"
        held += [HeldStream(gateway, path), HeldStream(gateway, path, ann)]
        after = gateway.events(table_id)["next"]
        poll = f"/v1/tables/{table_id}/events?after={after}&wait=30"
        answers: list[Any] = []

        def start_waiting() -> threading.Thread:
            thread = threading.Thread(target=lambda: answers.append(gateway.client.get(poll)))
            thread.start()
            return thread

        waiting = start_waiting()
        # the third place is the long poll's once it waits: a fourth request of either
        # kind is refused at once
        probe = f"/v1/tables/{table_id}/events?after={after}&wait=0.1"

        def long_poll_holds_the_third_place() -> bool:
            nonlocal waiting
            if not waiting.is_alive():
                # a probe held the third place when the long poll asked: it was refused
                assert answers.pop().status_code == 429
                waiting = start_waiting()
                return False
            return bool(gateway.client.get(probe).status_code == 429 and waiting.is_alive())

        wait_for(long_poll_holds_the_third_place, 30)
        body = assert_problem(HeldStream(gateway, path).response, 429, "quota_exceeded")
        assert (body["quota"], body["limit"]) == ("waiting_per_address", 3)
        gateway.sit(table_id, "cy")  # an event: the long poll answers, its place is free
        waiting.join(60)
        assert answers[0].status_code == 200
        assert answers[0].get_json()["events"]
        assert (
            gateway.client.get(f"/v1/tables/{table_id}/events?after=0&wait=0.1").status_code == 200
        )
    finally:
        for stream in held:
            stream.close()
        close_app(app)


def test_the_twenty_first_stream_of_a_player_is_refused(gateway: Gateway) -> None:
    table_id = gateway.create()
    ann = gateway.sign_up("ann")
    path = f"/v1/tables/{table_id}/events/stream"
    held = [HeldStream(gateway, path, ann) for _ in range(20)]
    try:
        assert {r.status_code for r in held} == {200}
        refused = HeldStream(gateway, path, ann)
        held.append(refused)
        body = assert_problem(refused.response, 429, "quota_exceeded")
        assert body["limit"] == 20
    finally:
        for stream in held:
            stream.close()


def test_players_per_address_in_open_mode(redis_url: str, evaluator_address: str) -> None:
    app = make_app(redis_url, evaluator_address, players_per_address=3)
    client = app.test_client()

    def sign_up(address: str) -> Any:
        return client.post(
            "/v1/players", json={"name": "pat"}, environ_overrides={"REMOTE_ADDR": address}
        )

    try:
        assert [sign_up("192.0.2.7").status_code for _ in range(3)] == [201, 201, 201]
        refused = sign_up("192.0.2.7")
        assert_problem(refused, 429, "rate_limited")
        assert refused.headers["Retry-After"]
        assert sign_up("192.0.2.8").status_code == 201  # the limit is each address's
    finally:
        close_app(app)


def test_a_sign_up_refused_for_its_body_uses_none_of_the_allowance(
    redis_url: str, evaluator_address: str
) -> None:
    app = make_app(redis_url, evaluator_address, players_per_address=3)
    client = app.test_client()
    address = {"REMOTE_ADDR": "192.0.2.9"}
    try:
        for body in ({"name": ""}, {"name": "\u3164"}, {"nom": "pat"}, {"name": 7}) * 5:
            refused = client.post("/v1/players", json=body, environ_overrides=address)
            assert_problem(refused, 422)
        assert [
            client.post("/v1/players", json={"name": "pat"}, environ_overrides=address).status_code
            for _ in range(4)
        ] == [201, 201, 201, 429]
    finally:
        close_app(app)


# ---------------------------------------------------------------- stream tickets


def ticket_for(gateway: Gateway, table_id: str, who: Player | Account) -> str:
    """A new stream ticket of `who` for the table."""
    issued = gateway.call("POST", f"/v1/tables/{table_id}/stream-tickets", who)
    assert issued.status_code == 201, issued.get_json()
    assert issued.headers["Cache-Control"] == "no-store"
    return str(issued.get_json()["ticket"])


def streamed(gateway: Gateway, path: str, blocks: int) -> list[dict[str, Any]]:
    """The events of a stream's first `blocks` blocks."""
    response = gateway.client.open(path, buffered=False)
    assert response.status_code == 200, response.get_data(as_text=True)
    text = ""
    chunk: Any
    for chunk in response.response:
        text += chunk.decode()
        if text.count("\n\n") > blocks:
            break
    response.close()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


def test_a_ticketed_stream_carries_the_seat_s_private_events(gateway: Gateway) -> None:
    table_id, ann, _ = started(gateway)
    assert ann.account is not None
    cards = set(gateway.table(table_id, ann)["you"]["cards"])
    count = len(gateway.events(table_id, ann)["events"])
    path = f"/v1/tables/{table_id}/events/stream?ticket="
    for who in (ann, ann.account):
        events = streamed(gateway, path + ticket_for(gateway, table_id, who), count)
        assert len(events) == count
        assert set(card_strings(events)) == cards
    public = streamed(gateway, f"/v1/tables/{table_id}/events/stream", 1)
    assert not set(card_strings(public))


def test_a_ticket_opens_one_stream_of_one_table_for_thirty_seconds(
    gateway: Gateway, redis_url: str
) -> None:
    table_id, ann, bo = started(gateway)
    other_table = gateway.create()
    path = f"/v1/tables/{table_id}/events/stream?ticket="
    ticket = ticket_for(gateway, table_id, ann)
    assert streamed(gateway, path + ticket, 1)
    reused = gateway.call("GET", path + ticket)
    assert_problem(reused, 401, "invalid_ticket", field="ticket")
    elsewhere = ticket_for(gateway, table_id, bo)
    assert_problem(
        gateway.call("GET", f"/v1/tables/{other_table}/events/stream?ticket={elsewhere}"),
        401,
        "invalid_ticket",
    )
    assert streamed(gateway, path + elsewhere, 1)  # still good where it was issued
    # it expires after 30 s: Redis holds it that long, and a ticket gone is refused
    store = redis.Redis.from_url(redis_url)
    expiring = ticket_for(gateway, table_id, ann)
    digest = hashlib.sha256(expiring.encode()).hexdigest()
    stored = f"table:{{{table_id}}}:ticket:{digest}"
    assert 0 < store.ttl(stored) <= 30
    assert expiring.encode() not in (store.get(stored) or b"")
    store.delete(stored)
    assert_problem(gateway.call("GET", path + expiring), 401, "invalid_ticket")
    assert_problem(gateway.call("GET", path + "crt_forged"), 401, "invalid_ticket")


def test_a_ticket_needs_a_player_or_the_seat(gateway: Gateway) -> None:
    _, ann, _ = started(gateway)
    elsewhere = f"/v1/tables/{gateway.create()}/stream-tickets"
    # ann's seat token is not for that table; her player's key is (as a spectator there)
    assert_problem(gateway.call("POST", elsewhere, ann), 401, "invalid_token")
    assert ann.account is not None
    assert gateway.call("POST", elsewhere, ann.account).status_code == 201


@pytest.mark.slow
def test_tickets_stay_out_of_the_access_log_and_metrics(
    redis_process: RedisProcess, evaluator_address: str, tmp_path: Path
) -> None:
    logs = tmp_path / "gateway.log"
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    server = GunicornGateway(
        emptied(redis_process),
        evaluator_address,
        logs,
        workers=1,
        GATEWAY_ACCESS_LOG="1",
        STREAM_MAX_SECONDS="1",
        PROMETHEUS_MULTIPROC_DIR=str(metrics),
    )
    server.start()
    try:
        client = server.http
        table_id = client.create()
        ann = client.sit(table_id, "ann")
        ticket = client.call("POST", f"/v1/tables/{table_id}/stream-tickets", ann).get_json()
        path = f"/v1/tables/{table_id}/events/stream"
        link = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            link.request("GET", f"{path}?ticket={ticket['ticket']}&after=0")
            response = link.getresponse()
            assert response.status == 200
            text = response.read().decode()  # the stream ends after a second
        finally:
            link.close()
        assert '"type": "seated"' in text or '"type":"seated"' in text
        reused = client.call("GET", f"{path}?ticket={ticket['ticket']}")
        assert_problem(reused, 401, "invalid_ticket")
        page = client.call("GET", "/metrics").text()
    finally:
        server.stop()
    log = logs.read_text()
    assert f"GET {path} " in log  # the access log is on, and names the path
    assert ticket["ticket"] not in log
    assert "ticket=" not in log
    assert ann.token not in log
    assert ticket["ticket"] not in page
    assert "crt_" not in page
