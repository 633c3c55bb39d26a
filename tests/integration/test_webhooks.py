"""Turn notifications end to end: a gateway whose commits write them, the clock process that
delivers them, a local receiver that verifies them as docs/webhooks.md says, fails, hangs
and goes away."""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from api.games.common import FULL_DECK
from tests.support.gateway import Gateway, close_app, make_app
from tests.support.play import wait_for
from tests.support.tables_api import Player

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "var" / "reports"
# a Standard Webhooks secret (rotated in: it signs first) and the one it replaces
SECRET = "whsec_" + base64.b64encode(b"cardroom test secret, 32 bytes!!").decode()
OLD_SECRET = "an older secret of the receiver"


def verify(secret: str, headers: dict[str, str], body: bytes, tolerance: float = 300) -> bool:
    """The receiver's check, written from docs/webhooks.md."""
    key = (
        base64.b64decode(secret.removeprefix("whsec_"))
        if secret.startswith("whsec_")
        else secret.encode()
    )
    msg_id, timestamp = headers["webhook-id"], headers["webhook-timestamp"]
    if abs(time.time() - int(timestamp)) > tolerance:
        return False
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(part.removeprefix("v1,"), expected)
        for part in headers["webhook-signature"].split()
        if part.startswith("v1,")
    )


@dataclass
class Received:
    """One request the receiver got."""

    at: float
    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def json(self) -> dict[str, Any]:
        """The body."""
        return dict(json.loads(self.body))


@dataclass
class Receiver:
    """An HTTP server on a free port that records every POST; it may answer 500, hang
    for a while, or be stopped and started again on the same port."""

    port: int = 0
    requests: list[Received] = field(default_factory=list)
    failures: int = 0  # answer 500 to this many more requests
    hang: float = 0.0  # hold each answer this long
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """Where the gateway POSTs."""
        return f"http://127.0.0.1:{self.port}/hooks"

    def start(self) -> None:
        """Listen (on the same port as before, after a stop)."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                if receiver.hang:
                    time.sleep(receiver.hang)
                status = 200
                if receiver.failures > 0:
                    receiver.failures -= 1
                    status = 500
                headers = {name.lower(): value for name, value in self.headers.items()}
                receiver.requests.append(Received(time.time(), headers, body, status))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop listening: connections are refused."""
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def delivered(self) -> list[Received]:
        """The requests answered 2xx."""
        return [r for r in list(self.requests) if r.status == 200]

    def of_type(self, kind: str) -> list[Received]:
        """The delivered requests of one type."""
        return [r for r in self.delivered() if r.json["type"] == kind]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """The operator's push service, listening."""
    server = Receiver()
    server.start()
    yield server
    server.stop()


Start = Callable[..., subprocess.Popen[str]]


@pytest.fixture
def clock(redis_url: str, evaluator_address: str) -> Iterator[Start]:
    """Start `python -m api.runtime.clock` as deployed, with webhook settings; stopped after."""
    started: list[subprocess.Popen[str]] = []

    def start(url: str, **env: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "api.runtime.clock"],
            cwd=ROOT,
            env={
                **os.environ,
                "REDIS_URL": redis_url,
                "EVALUATOR_ADDR": evaluator_address,
                "CLOCK_INTERVAL": "0.05",
                "LOG_LEVEL": "warning",
                "WEBHOOK_URL": url,
                "WEBHOOK_SECRET": f"{SECRET},{OLD_SECRET}",
                "WEBHOOK_RETRY_BASE_SECONDS": "0.2",
                "WEBHOOK_RETRY_MAX_SECONDS": "1",
                "WEBHOOK_TIMEOUT_SECONDS": "2",
                **env,
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


OPERATOR_KEY = "operator-key-of-the-webhook-tests-0123456789"


def webhook_gateway(
    redis_url: str, evaluator_address: str, url: str, warning: float = 10.0
) -> Gateway:
    """A gateway in process whose commits write notices for `url`; its own clock is off."""
    app = make_app(
        redis_url,
        evaluator_address,
        clock=False,
        webhook_url=url,
        webhook_secrets=(SECRET, OLD_SECRET),
        webhook_turn_warning=warning,
        operator_keys=(OPERATOR_KEY,),
    )
    return Gateway(app, app.test_client())


@pytest.fixture
def gateway_for(redis_url: str, evaluator_address: str) -> Iterator[Callable[..., Gateway]]:
    """Gateways made by `webhook_gateway`, closed after the test."""
    made: list[Gateway] = []

    def make(url: str, warning: float = 10.0) -> Gateway:
        made.append(webhook_gateway(redis_url, evaluator_address, url, warning))
        return made[-1]

    yield make
    for gateway in made:
        close_app(gateway.app)


def guts_table(gateway: Gateway, **options: Any) -> tuple[str, list[Player]]:
    """A Guts table with two players, its first deal started."""
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=30, **options)
    players = [gateway.sit(table_id, name) for name in ("ann", "bo")]
    started = gateway.act(table_id, players[0], action="start")
    assert started.status_code == 200, started.get_json()
    return table_id, players


def declaring(gateway: Gateway, table_id: str, hand: int) -> dict[str, Any]:
    """The table once deal `hand` is declaring."""

    def found() -> dict[str, Any] | None:
        table = gateway.table(table_id)
        return table if table["hand_number"] == hand and table["phase"] == "declaring" else None

    return wait_for(found, seconds=30)


def play_deal(gateway: Gateway, table_id: str, players: list[Player], hand: int) -> None:
    """Wait for deal `hand` to be declaring, then every seat declares out (simultaneously)."""
    table = declaring(gateway, table_id, hand)
    for seat in table["pending"]["seats"]:
        player = next(p for p in players if p.seat == seat)
        answer = gateway.act(table_id, player, action="declare", choice="out")
        assert answer.status_code == 200, answer.get_json()


def write_report(figures: dict[str, Any]) -> None:
    """Add `figures` to this run's var/reports/webhooks.json."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    path = REPORTS / "webhooks.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    path.write_text(json.dumps({**previous, **figures}, indent=2) + "\n")


def percentile(values: list[float], share: float) -> float:
    """The `share` percentile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def test_turns_and_deal_ends_arrive_signed_with_ids_and_no_card(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url)
    deals = 25
    table_id, players = guts_table(gateway)
    accounts = {p.seat: p.account.id for p in players if p.account is not None}
    for hand in range(1, deals + 1):
        play_deal(gateway, table_id, players, hand)
    wait_for(lambda: len(receiver.of_type("deal_ended")) >= 2 * deals or None, seconds=60)
    # a turn per dealt seat and deal (simultaneous declaring); the warnings went unsent,
    # every turn being taken before its deadline's warning was due
    wait_for(lambda: len(receiver.of_type("turn")) >= 2 * deals or None, seconds=30)
    got = receiver.delivered()
    assert not receiver.of_type("turn_warning")
    for request in got:
        body = request.json
        assert request.headers["webhook-id"] == body["id"]
        assert body["id"].startswith("msg_")
        assert request.headers["content-type"] == "application/json"
        assert verify(SECRET, request.headers, request.body)
        assert verify(OLD_SECRET, request.headers, request.body)  # rotation: both sign
        assert not verify("another secret altogether", request.headers, request.body)
        tampered = request.body.replace(b'"seat":', b'"seat": ')
        assert not verify(SECRET, request.headers, tampered)
        assert set(body) == {
            "id", "type", "table_id", "seat", "player", "hand_number", "deadline", "at",
        }  # fmt: skip
        assert body["table_id"] == table_id
        assert body["player"] == accounts[body["seat"]]
        # no card, as a JSON string anywhere (ids are hex, where "2c" may well occur)
        text = request.body.decode()
        assert not [card for card in FULL_DECK if f'"{card}"' in text], text
        assert all(not isinstance(value, list | dict) for value in body.values())
    by_id: dict[str, list[Received]] = {}
    for request in got:
        by_id.setdefault(request.json["id"], []).append(request)
    # at least once: a repeat, if any, is the same notice under the same id
    assert all(len({r.body for r in same}) == 1 for same in by_id.values())
    notices = {(r.json["type"], r.json["hand_number"], r.json["seat"]) for r in got}
    for hand in range(1, deals + 1):
        for seat in accounts:
            assert ("turn", hand, seat) in notices
            assert ("deal_ended", hand, seat) in notices
    latencies = [r.at - r.json["at"] for same in by_id.values() for r in same[:1]]
    report = {
        "deliveries": len(latencies),
        "latency_p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
        "latency_p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        "latency_max_ms": round(max(latencies) * 1000, 1),
    }
    write_report(report)


def test_a_reality_check_reaches_the_player_s_receiver_signed_and_retried(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url)
    receiver.failures = 1  # the first attempt fails: the same notice comes again
    ann = gateway.sign_up("ann")
    chosen = {"reality_check_minutes": 20}
    assert gateway.call("POST", "/v1/players/me/session", ann, json=chosen).status_code == 200
    # ann's session began an hour ago: her seat's first reality check is due at once
    limits = gateway.app.extensions["cardroom.services"].limits
    limits.clock = lambda: time.time() - 3600
    table_id = gateway.create(deal_pause_seconds=60, turn_seconds=30)
    seat = gateway.sit(table_id, "ann", 100, ann)
    gateway.sit(table_id, "bo")
    checks = wait_for(lambda: receiver.of_type("reality_check") or None, seconds=60)
    notice = checks[0]
    assert verify(SECRET, notice.headers, notice.body)
    assert verify(OLD_SECRET, notice.headers, notice.body)
    body = notice.json
    assert set(body) == {
        "id", "type", "table_id", "seat", "player", "hand_number", "deadline", "at",
        "played_seconds", "net",
    }  # fmt: skip
    assert (body["table_id"], body["seat"], body["player"]) == (table_id, seat.seat, ann.id)
    assert body["played_seconds"] >= 3600 - 60
    assert (body["net"], body["deadline"]) == (0, None)
    # the failed attempt and the delivered one: one notice, one id, one body
    tries = [r for r in receiver.requests if r.json["type"] == "reality_check"]
    assert [r.status for r in tries[:2]] == [500, 200]
    assert {r.headers["webhook-id"] for r in tries} == {body["id"]}
    assert len({r.body for r in tries}) == 1
    # the table's log has the same check, private to the seat
    events = gateway.call("GET", f"/v1/tables/{table_id}/events", ann).get_json()["events"]
    logged = [e for e in events if e["type"] == "reality_check"]
    assert logged
    assert logged[0]["data"]["net"] == body["net"]
    # nobody else's receiver hears of it: bo has no session settings
    assert all(r.json["player"] == ann.id for r in receiver.of_type("reality_check"))


def test_a_turn_warning_goes_before_the_deadline_unless_the_turn_is_taken(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url, warning=2.0)
    table_id = gateway.create(deal_pause_seconds=60, turn_seconds=8, declare="sequential")
    players = [gateway.sit(table_id, name) for name in ("ann", "bo")]
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    first = wait_for(lambda: receiver.of_type("turn") or None)[0].json
    # the first seat declares at once (well before its warning is due, 6 s into its turn,
    # however late its turn's notice comes on a busy machine): its warning is dropped;
    # the second waits
    mover = next(p for p in players if p.seat == first["seat"])
    assert gateway.act(table_id, mover, action="declare", choice="in").status_code == 200
    second = wait_for(lambda: receiver.of_type("turn")[1:] or None)[0].json
    assert second["seat"] != first["seat"]
    warning = wait_for(lambda: receiver.of_type("turn_warning") or None, seconds=10)[0]
    body = warning.json
    assert body["seat"] == second["seat"]
    assert body["deadline"] == second["deadline"]
    assert body["deadline"] - 2.0 - 0.5 <= warning.at < body["deadline"]
    wait_for(lambda: receiver.of_type("deal_ended") or None, seconds=20)
    assert [r.json["seat"] for r in receiver.of_type("turn_warning")] == [second["seat"]]


def test_a_receiver_answering_500_gets_the_same_id_again_until_it_is_taken(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url)
    receiver.failures = 2
    guts_table(gateway, declare="sequential")
    wait_for(lambda: receiver.delivered() or None, seconds=20)
    first_three = receiver.requests[:3]
    assert [r.status for r in first_three] == [500, 500, 200]
    assert len({r.headers["webhook-id"] for r in first_three}) == 1
    assert len({r.body for r in first_three}) == 1
    # each attempt is signed anew, at its own time
    assert all(verify(SECRET, r.headers, r.body) for r in first_three)
    gaps = [b.at - a.at for a, b in itertools.pairwise(first_three)]
    assert all(gap >= 0.09 for gap in gaps), gaps  # backoff: at least half of 0.2 s, 0.4 s
    report = {"retry_gaps_ms": [round(gap * 1000) for gap in gaps]}
    write_report(report)


def test_a_receiver_down_for_a_while_gets_everything_once_back(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url)
    receiver.stop()
    down_at = time.time()
    table_id, players = guts_table(gateway)
    for hand in (1, 2, 3):
        play_deal(gateway, table_id, players, hand)
    time.sleep(3)  # several failed attempts each, backing off to 1 s
    receiver.start()
    back_at = time.time()
    wanted = {(kind, hand, p.seat) for kind in ("turn", "deal_ended") for hand in (1, 2, 3)
              for p in players}  # fmt: skip

    def everything() -> bool | None:
        got = {
            (r.json["type"], r.json["hand_number"], r.json["seat"]) for r in receiver.delivered()
        }
        return wanted <= got or None

    wait_for(everything, seconds=30)
    caught_up = max(r.at for r in receiver.delivered()) - back_at
    assert all(verify(SECRET, r.headers, r.body) for r in receiver.delivered())
    report = {
        "down_seconds": round(back_at - down_at, 1),
        "notices_while_down": len(wanted),
        "caught_up_after_back_ms": round(caught_up * 1000),
    }
    write_report(report)


def test_a_receiver_that_never_answers_2xx_ends_in_the_dead_letters(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start, redis_url: str
) -> None:
    import redis

    clock(receiver.url, WEBHOOK_MAX_ATTEMPTS="3")
    gateway = gateway_for(receiver.url)
    receiver.failures = 10**6
    guts_table(gateway, declare="sequential")
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    dead = wait_for(lambda: client.lrange("{webhooks}:dead", 0, -1) or None, seconds=20)
    entry = json.loads(dead[0])
    assert entry["attempts"] == 3
    assert entry["status"] == 500
    assert entry["body"]["type"] == "turn"
    tries = [r for r in receiver.requests if r.json["id"] == entry["body"]["id"]]
    assert len(tries) == 3
    time.sleep(1.5)  # and no fourth
    assert len([r for r in receiver.requests if r.json["id"] == entry["body"]["id"]]) == 3
    # the operator reads them, newest first; a player may not
    listed = gateway.call(
        "GET",
        "/v1/operator/webhooks/dead?limit=1",
        headers={"Authorization": f"Bearer {OPERATOR_KEY}"},
    )
    assert listed.status_code == 200, listed.get_json()
    assert listed.headers["Cache-Control"] == "no-store"
    assert listed.get_json()["dead"] == [json.loads(dead[0])]
    assert gateway.call("GET", "/v1/operator/webhooks/dead").status_code == 401


def test_a_move_answers_while_the_receiver_hangs(
    gateway_for: Callable[..., Gateway], receiver: Receiver, clock: Start
) -> None:
    clock(receiver.url)
    gateway = gateway_for(receiver.url)
    receiver.hang = 1.5  # within the 2 s timeout: every delivery waits this long
    table_id, players = guts_table(gateway)
    timings = []
    for hand in (1, 2, 3):
        table = declaring(gateway, table_id, hand)
        for seat in table["pending"]["seats"]:
            player = next(p for p in players if p.seat == seat)
            began = time.perf_counter()
            assert gateway.act(table_id, player, action="declare", choice="out").status_code == 200
            timings.append(time.perf_counter() - began)
    assert max(timings) < 0.5, timings
    wait_for(lambda: len(receiver.of_type("deal_ended")) >= 6 or None, seconds=60)


def test_with_no_url_nothing_is_written(redis_url: str, evaluator_address: str) -> None:
    import redis

    app = make_app(redis_url, evaluator_address, clock=False)
    gateway = Gateway(app, app.test_client())
    try:
        guts_table(gateway)
    finally:
        close_app(app)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    assert not client.keys("*webhooks*")


def test_a_url_needs_a_secret() -> None:
    from api.settings import Settings

    with pytest.raises(ValueError, match="WEBHOOK_SECRET"):
        Settings.from_env({"WEBHOOK_URL": "https://push.example/hooks"})
    with pytest.raises(ValueError, match="WEBHOOK_URL"):
        Settings.from_env({"WEBHOOK_URL": "ftp://push.example", "WEBHOOK_SECRET": SECRET})
    settings = Settings.from_env({"WEBHOOK_URL": "https://push.example/h", "WEBHOOK_SECRET":
                                  f"{SECRET}, {OLD_SECRET}"})  # fmt: skip
    assert settings.webhook_secrets == (SECRET, OLD_SECRET)
