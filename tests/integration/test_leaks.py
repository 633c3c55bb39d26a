"""No card leaks: not to a seat, not to a spectator, not into logs or metrics.

Whole games (Guts with 3 and 2 cards, with the ghost and the wimp rule; Paiute) are
played through a real gunicorn gateway at LOG_LEVEL=debug, against a real evaluator
process at debug level. Every participant (each seat, and a spectator) reads the table,
long-polls the event log, follows the server-sent event stream (resuming with
Last-Event-ID) and reads hand histories, and every seat also walks the error paths:
refused moves, wrong and foreign tokens, stale If-Match, If-None-Match, idempotent
replays (also from an earlier deal) and replays under another seat's token.

Everything received is audited against the server's own event log (transcript.py):
each body (errors included), each server-sent event at the moment it was written,
every header (no header may name a card at all), and every deal's secret salt (never
sent: a hand history's proof opens only the cards its reader saw). The logs and
metrics of both services may name no card that a deal kept face down, no salt and no
deck. A planted leak of each kind proves the scanners catch it.

The participants are players: some with a player key (one of them rotates it), some
with a token of the operator's identity provider. Each also reads the table, its
hand histories, `/v1/players/me` and `/v1/players/me/seats` with that credential, and
follows the event stream with a single-use ticket. No player key, key digest, seat
token, ticket or identity token may appear in any body, header, event, log line or
metric, except in the one answer that hands it to its holder (and that answer's
idempotent replays); and no player is told another's account or seats.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import re
import secrets
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from api.adapters.store import TableStore, connect
from api.games.table import deal_of
from tests.support.games import wild_card_of
from tests.support.identity import IdentityProvider, new_subject
from tests.support.processes import (
    EvaluatorProcess,
    GunicornGateway,
    HttpGateway,
    RedisProcess,
    Reply,
    Seat,
    poll,
)
from tests.support.tables_api import Account
from tests.support.transcript import Transcript, card_mentions, card_strings

CREDENTIAL_CACHE_SECONDS = 0.5


@dataclass
class Service:
    """The gateway and evaluator processes, their Redis, and where their logs go."""

    gateway: GunicornGateway
    evaluator: EvaluatorProcess
    store: TableStore
    provider: IdentityProvider


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, redis_process: RedisProcess
) -> Iterator[Service]:
    """Both services at debug level, logging to files, on the session's Redis."""
    import redis

    if redis_process.process is None:  # a test before may have stopped the session's Redis
        redis_process.start()
    redis.Redis.from_url(redis_process.url).flushall()
    directory = tmp_path_factory.mktemp("leaks")
    metrics = directory / "metrics"
    metrics.mkdir()
    provider = IdentityProvider()
    jwks = provider.write_jwks(directory / "jwks.json")
    evaluator = EvaluatorProcess(directory / "evaluator.log")
    gateway = GunicornGateway(
        redis_process.url,
        evaluator.address,
        directory / "gateway.log",
        workers=2,
        threads=16,
        LOG_LEVEL="debug",
        GATEWAY_ACCESS_LOG="1",
        STREAM_MAX_SECONDS="2",
        LONG_POLL_MAX_SECONDS="5",
        CLOCK_INTERVAL="0.05",
        # as deployed: /metrics adds up both workers' counters from files here
        PROMETHEUS_MULTIPROC_DIR=str(metrics),
        JWT_ISSUER=provider.issuer,
        JWT_AUDIENCE=provider.audience,
        JWT_JWKS=str(jwks),
        # a revoked key stops working on the other worker within this time
        CREDENTIAL_CACHE_SECONDS=str(CREDENTIAL_CACHE_SECONDS),
    )
    try:
        evaluator.start("debug")
        gateway.start()
        store = TableStore(connect(redis_process.url, cluster=False))
        yield Service(gateway, evaluator, store, provider)
    finally:
        gateway.stop()
        evaluator.stop()


class EventTranscript(Transcript):
    """A transcript in which an event is judged as of its own id, not as of its reading.

    An event written at id k may hold only what its reader could see at k, however
    late it is read: a private event streamed to the wrong seat is caught even when
    the cards in it were shown later in the deal.
    """

    @staticmethod
    def _parts(entry: Any) -> Iterator[tuple[int, int, Any]]:
        body = entry.body
        if isinstance(body, dict) and "hand_number" in body and "type" in body and "id" in body:
            yield body["hand_number"], body["id"], body
        else:
            yield from Transcript._parts(entry)


@dataclass
class Heard:
    """One reply (or one server-sent event block) and who received it."""

    table_id: str | None
    viewer: Seat | None
    path: str
    headers: dict[str, str]
    text: str
    sent: set[str]
    # the secrets this reply hands to its receiver (a new key, seat token or ticket)
    issued: set[str] = field(default_factory=set)


@dataclass
class Wiretap:
    """Everything every participant received, with the transcripts that judge bodies."""

    store: TableStore
    transcripts: dict[str, EventTranscript] = field(default_factory=dict)
    heard: list[Heard] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    events: int = 0
    # every credential handed out or used, and the digests the gateway keeps of them
    secrets: dict[str, str] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)

    def issue(self, what: str, value: str, digest: bool = True) -> None:
        """Remember a credential (and its SHA-256) that may be shown only to its holder."""
        with self.lock:
            self.secrets[value] = what
            if digest:
                self.digests[hashlib.sha256(value.encode()).hexdigest()] = f"digest of {what}"

    def transcript(self, client: HttpGateway, table_id: str) -> EventTranscript:
        """The transcript of a table (created on first use)."""
        if table_id not in self.transcripts:
            self.transcripts[table_id] = EventTranscript(client, table_id, store=self.store)
        return self.transcripts[table_id]

    def reply(
        self,
        table_id: str | None,
        viewer: Seat | None,
        path: str,
        reply: Reply,
        sent: set[str],
        transcript: Transcript | None,
        issued: set[str] | None = None,
    ) -> Heard:
        """Record a reply: its body joins the table's transcript, all of it is scanned."""
        with self.lock:
            heard = Heard(table_id, viewer, path, reply.headers, reply.text(), sent)
            heard.issued |= issued or set()
            self.heard.append(heard)
            if transcript is not None and reply.is_json:
                body = reply.get_json()
                # a seat may be told back the cards it sent (a refused discard names its card)
                transcript.add(viewer, strip_cards(body, sent) if sent else body)
            return heard

    def event_block(
        self, table_id: str, viewer: Seat | None, block: str, transcript: Transcript
    ) -> None:
        """Record one server-sent event block as its reader received it."""
        with self.lock:
            self.heard.append(Heard(table_id, viewer, "events/stream", {}, block, set()))
            for line in block.splitlines():
                if line.startswith("data: "):
                    transcript.add(viewer, json.loads(line[6:]))
                    self.events += 1


def strip_cards(body: Any, cards: set[str]) -> Any:
    """`body` with the given cards blanked, alone or inside a string (the receiver's own)."""
    if isinstance(body, str):
        for card in cards:
            body = re.sub(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", "", body)
        return body
    if isinstance(body, list):
        return [strip_cards(item, cards) for item in body]
    if isinstance(body, dict):
        return {key: strip_cards(item, cards) for key, item in body.items()}
    return body


@dataclass
class Secrets:
    """What no log, metric or early reply may hold: per deal, its hidden cards and salt."""

    hidden: set[str] = field(default_factory=set)
    salts: dict[tuple[str, int], str] = field(default_factory=dict)
    decks: list[str] = field(default_factory=list)


def deal_secrets(store: TableStore, table_ids: list[str]) -> Secrets:
    """Every played deal's face-down cards, salt and commitment deck string."""
    found = Secrets()
    for table_id in table_ids:
        record = store.load(table_id)
        assert record is not None
        for number in range(1, record.state["hand_number"] + 1):
            history = store.hand(table_id, number)
            if history is not None:
                deck, salt = history["sealed"]["deck"], history["sealed"]["salt"]
                wild = history.get("wild_card")
            else:
                deal = deal_of(record.state)
                assert deal["number"] == number
                deck, salt, wild = deal["deck"], deal["salt"], wild_card_of(deal)
            face_up = set()
            if wild is not None:  # Paiute: the wild card and the first discard are dealt face up
                face_up = {deck[deck.index(wild)], deck[deck.index(wild) + 1]}
            found.hidden |= set(deck) - face_up
            found.salts[(table_id, number)] = salt
            found.decks.append(",".join(deck))
    return found


# ---------------------------------------------------------------- the players


class Table:
    """One table played over HTTP by its seats and a spectator, all of them recorded."""

    def __init__(self, service: Service, tap: Wiretap, body: dict[str, Any], seats: int) -> None:
        """Create the table and seat `seats` players (one of them twice via a replay).

        Every other player signs in with the identity provider's token, the rest with
        a player key; the first player rotates their key once seated.
        """
        self.client = service.gateway.http
        self.tap = tap
        self.last_heard = Heard(None, None, "", {}, "", set())
        self.provider = service.provider
        self.rng = random.Random(json.dumps(body, sort_keys=True))
        self.key_ids: dict[str, str] = {}
        self.host = self.sign_up("host")
        created = self.client.call("POST", "/v1/tables", self.host, body)
        tap.reply(None, None, "/v1/tables", created, set(), None)  # its headers are scanned too
        assert created.status_code == 201, created.text()
        self.table_id = str(created.get_json()["table"]["id"])
        self.transcript = tap.transcript(self.client, self.table_id)
        self.seats: list[Seat] = []
        for number in range(seats):
            name = f"p{number}"
            account = self.jwt_player(name) if number % 2 else self.sign_up(name)
            key = {"Idempotency-Key": f"seat-{self.table_id}-{number}"}
            path = f"/v1/tables/{self.table_id}/seats"
            request = {"name": name, "buy_in": 60}
            reply = self.send(account, "POST", path, request, key)
            assert reply.status_code == 201, reply.text()
            token = str(reply.get_json()["token"])
            tap.issue(f"seat token of {name}", token)
            self.last_heard.issued.add(token)
            again = self.send(account, "POST", path, request, key)  # the seat grant replayed
            assert again.headers.get("idempotent-replayed") == "true"
            self.last_heard.issued.add(token)
            body = reply.get_json()
            assert again.get_json()["token"] == token
            self.seats.append(Seat(name, body["seat"], token, account))
        self.revoked = self.rotate(self.seats[0])
        self.viewers: list[Seat | None] = [*self.seats, None]
        self.cursors: dict[str | None, int] = {}
        self.stop = threading.Event()
        self.streams: list[threading.Thread] = []
        self.remembered: list[tuple[Seat, dict[str, Any], str]] = []

    # ------------------------------------------------------------ players

    def sign_up(self, name: str) -> Account:
        """A new player with a key (open mode); the answer hands the key to them alone."""
        reply = self.client.call("POST", "/v1/players", None, {"name": name})
        assert reply.status_code == 201, reply.text()
        created = reply.get_json()
        self.tap.issue(f"player key of {name}", created["key"])
        self.tap.reply(None, None, "/v1/players", reply, set(), None, {created["key"]})
        self.key_ids[created["key"]] = created["key_id"]
        return Account(created["id"], created["name"], created["key"])

    def jwt_player(self, name: str) -> Account:
        """A player of the identity provider, signing in with its token (as `key`)."""
        subject = new_subject()
        token = self.provider.token(subject, name=name, lifetime=3600)
        self.tap.issue(f"identity token of {name}", token)
        return Account(self.provider.player_id(subject), name, token)

    def rotate(self, seat: Seat) -> str:
        """Rotate a key player's key: add a new one, revoke the old; the old key."""
        account = seat.account
        assert account is not None
        old = account.key
        added = self.send(account, "POST", "/v1/players/me/keys")
        assert added.status_code == 201, added.text()
        new = str(added.get_json()["key"])
        self.tap.issue(f"new player key of {seat.name}", new)
        self.last_heard.issued.add(new)
        account.key = new
        revoked = self.send(account, "DELETE", f"/v1/players/me/keys/{self.key_ids[old]}")
        assert revoked.status_code == 204, revoked.text()
        self.revoked_at = time.monotonic()
        return old

    def seen_as(self, holder: Seat | Account | None) -> Seat | None:
        """The seat whose view a credential's holder gets at this table (None: a spectator)."""
        if holder is None or isinstance(holder, Seat):
            return holder
        return next((s for s in getattr(self, "seats", []) if s.account is holder), None)

    def send(
        self,
        viewer: Seat | Account | None,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """One request with `viewer`'s credential whose reply is recorded for its seat."""
        reply = self.client.call(method, path, viewer, body, headers)
        sent = set(card_strings(body)) if body is not None else set()
        self.last_heard = self.tap.reply(
            self.table_id if hasattr(self, "table_id") else None,
            self.seen_as(viewer),
            path,
            reply,
            sent,
            getattr(self, "transcript", None),
        )
        return reply

    def view(self, viewer: Seat | Account | None = None) -> dict[str, Any]:
        """The table as `viewer` sees it."""
        reply = self.send(viewer, "GET", f"/v1/tables/{self.table_id}")
        assert reply.status_code == 200, reply.text()
        return dict(reply.get_json())

    def wait_for(self, *phases: str) -> dict[str, Any]:
        """The table (as a spectator sees it) once it is in one of `phases`."""

        def ready() -> dict[str, Any] | None:
            view = self.view()
            return view if view["phase"] in phases else None

        return poll(ready, 60, f"the table in {phases}")

    def act(self, seat: Seat | Account, **action: Any) -> Reply:
        """A move by `seat` (its token, or a player's credential)."""
        return self.send(seat, "POST", f"/v1/tables/{self.table_id}/actions", action)

    def act_with(
        self, seat: Seat | Account, headers: dict[str, str], action: dict[str, Any]
    ) -> Reply:
        """A move by `seat` with extra request headers."""
        return self.send(seat, "POST", f"/v1/tables/{self.table_id}/actions", action, headers)

    def everyone_looks(self, wait: float = 0) -> None:
        """Each participant reads the table (with its seat token and its player's
        credential) and long-polls its new events."""
        for viewer in self.viewers:
            self.view(viewer)
            if viewer is not None:
                assert viewer.account is not None
                mine = self.view(viewer.account)
                assert mine["you"]["seat"] == viewer.seat
            key = viewer.name if viewer else None
            page = self.send(
                viewer,
                "GET",
                f"/v1/tables/{self.table_id}/events?after={self.cursors.get(key, 0)}&wait={wait}",
            )
            assert page.status_code == 200, page.text()
            self.cursors[key] = page.get_json()["next"]

    def accounts_look(self) -> None:
        """Each player reads their account and their seats: their own, nobody else's."""
        host = self.send(self.host, "GET", "/v1/players/me/seats")
        assert host.get_json() == {"seats": []}, host.text()  # the host sits nowhere
        for seat in self.seats:
            account = seat.account
            assert account is not None
            me = self.send(account, "GET", "/v1/players/me")
            assert me.status_code == 200, me.text()
            assert me.get_json()["id"] == account.id
            assert me.get_json()["name"] == seat.name
            mine = self.send(account, "GET", "/v1/players/me/seats")
            assert mine.status_code == 200, mine.text()
            (held,) = mine.get_json()["seats"]
            assert (held["table_id"], held["seat"], held["name"]) == (
                self.table_id,
                seat.seat,
                seat.name,
            )
            assert held["table"]["you"]["seat"] == seat.seat

    # ------------------------------------------------------------ streams

    def follow_streams(self) -> None:
        """Each participant follows the event stream, reconnecting with Last-Event-ID;
        each player also follows it with stream tickets (one per connection)."""
        followers: list[tuple[Seat | None, bool]] = [(viewer, False) for viewer in self.viewers]
        followers += [(seat, True) for seat in self.seats]
        for viewer, ticketed in followers:
            thread = threading.Thread(target=self._follow, args=(viewer, ticketed), daemon=True)
            thread.start()
            self.streams.append(thread)

    def _ticket(self, viewer: Seat) -> str:
        """A stream ticket of `viewer`'s player, recorded as handed to them alone."""
        assert viewer.account is not None
        path = f"/v1/tables/{self.table_id}/stream-tickets"
        reply = self.client.call("POST", path, viewer.account)
        assert reply.status_code == 201, reply.text()
        ticket = str(reply.get_json()["ticket"])
        self.tap.issue(f"stream ticket of {viewer.name}", ticket)
        self.tap.reply(self.table_id, viewer, path, reply, set(), None, {ticket})
        return ticket

    def _follow(self, viewer: Seat | None, ticketed: bool = False) -> None:
        last: str | None = None
        while not self.stop.is_set():
            link = http.client.HTTPConnection("127.0.0.1", self.client.base_port, timeout=30)
            headers = dict(viewer.auth) if viewer and not ticketed else {}
            path = f"/v1/tables/{self.table_id}/events/stream"
            if ticketed:
                assert viewer is not None
                path += f"?ticket={self._ticket(viewer)}"
            if last is not None:
                headers["Last-Event-ID"] = last
            try:
                link.request("GET", path, headers=headers)
                response = link.getresponse()
                assert response.status == 200
                self.tap.reply(
                    self.table_id,
                    viewer,
                    "events/stream",
                    Reply(200, {k.lower(): v for k, v in response.getheaders()}, b""),
                    set(),
                    None,
                )
                block = ""
                while not self.stop.is_set():
                    line = response.readline().decode()
                    if not line:
                        break
                    if line.strip():
                        block += line
                        continue
                    if block:
                        self.tap.event_block(self.table_id, viewer, block, self.transcript)
                        for entry in block.splitlines():
                            if entry.startswith("id: "):
                                last = entry[4:]
                    block = ""
            finally:
                link.close()

    def end_streams(self) -> None:
        """Stop following the streams."""
        self.stop.set()
        for thread in self.streams:
            thread.join(30)

    # ------------------------------------------------------------ error paths

    def probe_errors(self, seat: Seat, other: Seat, action: dict[str, Any]) -> None:
        """Refused and replayed requests as `seat`; each must leak nothing either."""
        table_path = f"/v1/tables/{self.table_id}"
        # a token nobody holds, for no seat: reads answer the public view, writes refuse
        stranger = Seat("stranger", 0, secrets.token_hex(32))
        assert self.send(stranger, "GET", table_path).headers["www-authenticate"]
        assert self.act(stranger, **action).status_code == 401
        assert self.send(stranger, "GET", f"{table_path}/events?after=0").status_code == 200
        malformed = self.client.call("GET", table_path, None, None, {"Authorization": "Basic x"})
        self.tap.reply(self.table_id, None, table_path, malformed, set(), self.transcript)
        assert malformed.status_code == 200
        assert "invalid_token" in malformed.headers["www-authenticate"]
        # credentials that do not hold, and a player without a seat here
        revoked = Account("revoked", "p0", self.revoked)
        # the worker that did not revoke it trusts its lookup for the cache time at most
        time.sleep(max(0.0, self.revoked_at + CREDENTIAL_CACHE_SECONDS - time.monotonic()))
        assert self.act(revoked, **action).status_code == 401
        expired = self.provider.token(new_subject(), lifetime=-600)
        self.tap.issue("expired identity token", expired)
        assert self.act(Account("expired", "x", expired), **action).status_code == 401
        assert self.act(self.host, **action).status_code == 403
        current = self.send(seat, "GET", table_path)
        etag = current.headers["etag"]
        assert self.send(seat, "GET", table_path, None, {"If-None-Match": etag}).status_code in (
            200,
            304,
        )
        stale = self.act_with(seat, {"If-Match": '"1"'}, action)
        assert stale.status_code == 412, stale.text()
        assert self.act(seat, action="declare", choice="maybe").status_code in (409, 422)
        assert self.act(seat, action="rebuy", amount=10**9).status_code in (409, 422)
        assert self.send(seat, "GET", f"{table_path}/hands/999").status_code == 404
        assert self.send(None, "GET", f"{table_path}/hands/0").status_code == 404
        assert self.act(other, action="dance").status_code == 422
        assert self.send(seat, "POST", f"{table_path}/actions", "not an object").status_code in (
            400,
            422,
        )

    def idempotent(self, seat: Seat, action: dict[str, Any]) -> Reply:
        """A move with an Idempotency-Key, replayed by its seat and sent by another."""
        key = {"Idempotency-Key": secrets.token_hex(8)}
        first = self.act_with(seat, key, action)
        replayed = self.act_with(seat, key, action)
        assert replayed.status_code == first.status_code
        if first.status_code < 300:
            assert replayed.headers.get("idempotent-replayed") == "true"
            self.remembered.append((seat, action, key["Idempotency-Key"]))
        other = next(s for s in self.seats if s is not seat)
        # the key is the seat's: another seat's request with it is its own, never a replay
        theirs = self.act_with(other, key, action)
        assert theirs.headers.get("idempotent-replayed") is None
        return first

    def replay_old_moves(self) -> None:
        """Replay moves of earlier deals: the stored answer shows that deal, nothing newer."""
        for seat, action, key in self.remembered:
            replayed = self.act_with(seat, {"Idempotency-Key": key}, action)
            assert replayed.headers.get("idempotent-replayed") == "true"

    def histories(self, number: int) -> None:
        """Every participant reads a finished deal's history (a player with both of
        their credentials), and every player their account and seats."""
        for viewer in self.viewers:
            reply = self.send(viewer, "GET", f"/v1/tables/{self.table_id}/hands/{number}")
            assert reply.status_code == 200, reply.text()
            if viewer is not None and viewer.account is not None:
                path = f"/v1/tables/{self.table_id}/hands/{number}"
                assert self.send(viewer.account, "GET", path).status_code == 200
        self.accounts_look()


def play_guts(table: Table, deals: int) -> int:
    """Play `deals` deals with random declarations and every probe; deals played."""
    rng = table.rng
    assert table.act(table.seats[0], action="start").status_code == 200
    played = 0
    for _ in range(deals):
        state = table.wait_for("declaring", "waiting")
        if state["phase"] == "waiting":
            break
        number = state["hand_number"]
        played += 1
        table.everyone_looks()
        first = True
        while True:
            state = table.view()
            if state["hand_number"] != number or state["phase"] != "declaring":
                break
            seat_number = rng.choice(state["pending"]["seats"])
            seat = next(s for s in table.seats if s.seat == seat_number)
            other = next(s for s in table.seats if s is not seat)
            move = {"action": "declare", "choice": rng.choice(["in", "out"])}
            if first:
                table.probe_errors(seat, other, move)
                table.idempotent(seat, move)
                first = False
            else:
                assert table.act(seat, **move).status_code == 200
            table.act(seat, **move)  # again: already declared (or not its turn)
            table.act(other, **move)  # maybe not its turn yet
            table.everyone_looks()
        table.histories(number)
        table.everyone_looks(wait=0.5)
    table.replay_old_moves()
    return played


def play_paiute(table: Table, turns: int) -> int:
    """Play Paiute turns: call with a combination, else discard; probes on the way."""
    rng = table.rng
    assert table.act(table.seats[0], action="start").status_code == 200
    finished: set[int] = set()
    for turn in range(turns):
        state = table.wait_for("playing", "last_turns")
        for number in range(1, state["hand_number"]):
            if number not in finished:
                table.histories(number)
                finished.add(number)
        seat = next(s for s in table.seats if s.seat == state["pending"]["seats"][0])
        other = next(s for s in table.seats if s is not seat)
        if turn % 5 == 0:
            table.probe_errors(seat, other, {"action": "draw", "source": "stock"})
            assert table.act(seat, action="discard", card="Ah").status_code in (409, 422)
        source = "discard" if rng.random() < 0.3 and state["deal"]["discard_top"] else "stock"
        drew = table.act(seat, action="draw", source=source)
        if drew.status_code != 200:
            continue
        table.act(seat, action="draw", source="stock")  # already drawn
        mine = drew.get_json()["table"]["you"]
        if mine["drawn"] is None:
            continue  # the draw ended the deal (void)
        hand = mine["cards"]
        # a card another seat holds, named by this seat: refused, and nothing told about it
        theirs = table.tap.store.load(table.table_id)
        assert theirs is not None
        held = deal_of(theirs.state)["hands"].get(str(other.seat)) or []
        if held:
            refused = table.act(seat, action="discard", card=rng.choice(held))
            assert refused.status_code == 422, refused.text()
        table.everyone_looks()
        wild = "23456789TJQKA".index(drew.get_json()["table"]["deal"]["wild_card"][0]) + 2
        ranked = table.send(
            seat,
            "POST",
            "/v1/evaluate",
            {"game": "paiute", "wild_rank": wild, "hands": [" ".join(hand)]},
        ).get_json()["results"][0]
        taken, spare = mine["drawn"], ranked["leftover"]
        if ranked["strength"] and (
            spare is None or taken["source"] == "stock" or spare != taken["card"]
        ):
            shown = [card for card in hand if card != spare]
            table.act(seat, action="call", cards=shown, discard=spare)
        else:
            choices = [c for c in hand if not (taken["source"] == "discard" and c == taken["card"])]
            if turn % 3 == 0:
                table.idempotent(seat, {"action": "discard", "card": rng.choice(choices)})
            else:
                table.act(seat, action="discard", card=rng.choice(choices))
        table.everyone_looks()
    table.replay_old_moves()
    return len(finished)


# ---------------------------------------------------------------- the checks


def text_leaks(tap: Wiretap, found: Secrets) -> list[str]:
    """Cards in headers and event-stream framing, cards hidden in strings, early salts."""
    problems = []
    for heard in tap.heard:
        who = heard.viewer.name if heard.viewer else "a spectator"
        for name, value in heard.headers.items():
            cards = card_mentions(f"{name}: {value}", bare=True)
            if cards:
                problems.append(f"{who}: header {name}: {value} names {sorted(cards)}")
        framing = "\n".join(
            line for line in heard.text.splitlines() if not line.startswith("data: ")
        )
        if heard.path == "events/stream" and card_mentions(framing, bare=True):
            problems.append(f"{who}: event stream framing names cards: {framing}")
        for (_, number), salt in found.salts.items():
            if salt in heard.text:
                problems.append(f"{who}: salt of deal {number} in {heard.path}")
        for deck in found.decks:
            if deck in heard.text:
                problems.append(f"{who}: a deck string in {heard.path}")
    return problems


def embedded_leaks(tap: Wiretap) -> list[str]:
    """Cards written inside longer strings of a body (an error detail naming a card)."""
    problems = []
    for table_id, transcript in tap.transcripts.items():
        log = tap.store.events_after(table_id, 0, None)
        for entry in transcript.received:
            texts = [s for s in strings(entry.body) if s not in CARD_TEXTS]
            named = set().union(*(card_mentions(s, bare=True) for s in texts)) if texts else set()
            if not named:
                continue
            allowed: set[str] = set()
            for deal, seq, _ in transcript._parts(entry):
                allowed |= transcript._allowed(log, entry.viewer, deal, seq)
            if named - allowed:
                who = entry.viewer.name if entry.viewer else "a spectator"
                problems.append(f"{who}: {sorted(named - allowed)} inside {texts}")
    return problems


CARD_TEXTS = {rank + suit for rank in "23456789TJQKA" for suit in "cdhs"}


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys too)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)


def log_leaks(text: str, found: Secrets, source: str) -> list[str]:
    """Face-down cards, salts and deck strings in a log or a metrics page."""
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        cards = card_mentions(line) & found.hidden
        if cards:
            problems.append(f"{source}:{number}: names {sorted(cards)}: {line[:200]}")
        if any(salt in line for salt in found.salts.values()):
            problems.append(f"{source}:{number}: holds a deal's salt")
        if any(deck in line for deck in found.decks):
            problems.append(f"{source}:{number}: holds a deck")
    return problems


def secret_leaks(tap: Wiretap, sources: dict[str, str]) -> list[str]:
    """Credentials outside the answer that hands each to its holder; digests anywhere."""
    problems = []
    for heard in tap.heard:
        who = heard.viewer.name if heard.viewer else "a spectator"
        texts = [heard.text, *(f"{name}: {value}" for name, value in heard.headers.items())]
        for value, what in tap.secrets.items():
            if value not in heard.issued and any(value in text for text in texts):
                problems.append(f"{who}: {what} in {heard.path}")
        for value, what in tap.digests.items():
            if any(value in text for text in texts):
                problems.append(f"{who}: {what} in {heard.path}")
    for source, text in sources.items():
        for value, what in [*tap.secrets.items(), *tap.digests.items()]:
            if value in text:
                problems.append(f"{source}: holds the {what}")
    return problems


def test_no_card_leaks_to_anyone_nor_into_logs_and_metrics(service: Service) -> None:
    tap = Wiretap(service.store)
    tables: list[Table] = []
    deals = 0
    for body, seats, rounds in (
        ({"game": "guts", "cards": 3, "cap": 6}, 4, 4),
        ({"game": "guts", "cards": 2, "declare": "sequential", "cap": 6}, 3, 3),
        ({"game": "guts", "ghost": True, "wimp": True, "losers_pay": "worst", "cap": 6}, 4, 3),
        ({"game": "paiute", "max_reshuffles": 0}, 4, 60),
    ):
        table = Table(service, tap, {**body, "deal_pause_seconds": 0.2, "turn_seconds": 60}, seats)
        tables.append(table)
        table.follow_streams()
        try:
            if body["game"] == "guts":
                deals += play_guts(table, rounds)
            else:
                deals += play_paiute(table, rounds)
        finally:
            table.end_streams()
    assert deals >= 10
    metrics = [
        service.gateway.http.call("GET", "/metrics").text() for _ in range(4)
    ]  # more reads than workers
    with urllib.request.urlopen(
        f"http://127.0.0.1:{service.evaluator.metrics_port}/metrics", timeout=10
    ) as page:
        metrics.append(page.read().decode())

    checked = sum(transcript.check() for transcript in tap.transcripts.values())
    assert checked > 500
    assert tap.events > 100  # server-sent events were audited
    found = deal_secrets(service.store, [table.table_id for table in tables])
    assert text_leaks(tap, found) == []
    assert embedded_leaks(tap) == []
    logs = {
        "gateway log": service.gateway.logs.read_text(),
        "evaluator log": service.evaluator.logs.read_text(),
    }
    assert "DEBUG" in logs["gateway log"]
    assert "DEBUG" in logs["evaluator log"]
    problems = []
    for source, text in [*logs.items(), *(("metrics", page) for page in metrics)]:
        problems += log_leaks(text, found, source)
    assert problems == []
    kinds = {what.split(" of ")[0] for what in tap.secrets.values()}
    assert kinds >= {
        "player key",
        "new player key",
        "identity token",
        "seat token",
        "stream ticket",
        "expired identity token",
    }
    assert "ticket=" not in logs["gateway log"]
    sources = {**logs, **{f"metrics page {n}": page for n, page in enumerate(metrics)}}
    assert secret_leaks(tap, sources) == []
    # ------------------------------------------------------------ the scanners work
    hidden = sorted(found.hidden)
    table = tables[0]
    number = max(n for (t, n) in found.salts if t == table.table_id)
    seat = table.seats[0]
    planted = [
        json.dumps({"message": "dealt", "cards": hidden[:2]}),
        f"settling {hidden[2]} {hidden[3]} {hidden[4]}",
        f"commitment input {found.decks[0]}:salt",
        f"drew card={hidden[5]}",
        f"salt {found.salts[(table.table_id, number)]}",
    ]
    for line in planted:
        assert log_leaks(line, found, "planted"), line
    assert log_leaks("table 3c9f2ad4c3d8e1f0 seat 2 version 14", found, "planted") == []
    leaky = Wiretap(service.store)
    leaky.heard.append(
        Heard(table.table_id, seat, "/v1/tables", {"x-debug": hidden[0]}, "{}", set())
    )
    leaky.heard.append(
        Heard(
            table.table_id,
            None,
            f"/v1/tables/{table.table_id}",
            {},
            found.salts[(table.table_id, 1)],
            set(),
        )
    )
    assert len(text_leaks(leaky, found)) == 2
    key, ticket = (
        next(v for v, w in tap.secrets.items() if w.startswith(kind))
        for kind in (
            "player key",
            "stream ticket",
        )
    )
    leaky.secrets, leaky.digests = tap.secrets, tap.digests
    leaky.heard = [
        Heard(table.table_id, seat, "/v1/players/me", {}, json.dumps({"key": key}), set()),
        Heard(table.table_id, seat, "/v1/tables", {"x-ticket": ticket}, "{}", set()),
        Heard(table.table_id, seat, "/v1/players", {}, json.dumps({"key": key}), set(), {key}),
    ]
    digest = hashlib.sha256(key.encode()).hexdigest()
    planted_logs = {"planted log": f"GET /v1/tables?ticket={ticket}\nkey {digest[:64]}"}
    assert len(secret_leaks(leaky, planted_logs)) == 4
    # a card of deal 1 that no event of deal 1 ever showed to anyone (Guts deals 12 of 52)
    history = service.store.hand(table.table_id, 1)
    assert history is not None
    public = {
        card
        for item in service.store.events_after(table.table_id, 0, None)
        if item["hand_number"] == 1
        for card in card_strings(item["data"])
    }
    secret = sorted(set(history["sealed"]["deck"]) - public)[0]
    leaky.transcripts[table.table_id] = EventTranscript(
        table.client, table.table_id, store=service.store
    )
    leaky.transcripts[table.table_id].add(seat, {"hand_number": 1, "detail": f"it is {secret}"})
    assert embedded_leaks(leaky)
    table.transcript.add(None, {"hand_number": 1, "planted": secret})
    with pytest.raises(AssertionError, match="planted"):
        table.transcript.check()
