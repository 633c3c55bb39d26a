"""Every operation against every kind of credential, on a gateway in operator mode.

The gateway verifies an identity provider's tokens (a JWKS document with an RSA and an
EC key) and takes players' keys and seat tokens. Each case builds its own table: ann
and bo seated (both players of the provider), carl a player without a seat. A write
refuses a credential that does not hold (401 invalid_token), a missing one (401
missing_token), a seat token where a player is needed (403 player_required) and another
player's seat (403 wrong_seat or not_seated), and changes nothing; a public read
answers 200 with the public view, and tells a bad credential by
`WWW-Authenticate: ... error="invalid_token"`.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.gateway import Gateway, close_app, make_app
from tests.support.identity import IdentityProvider, bearer, new_subject
from tests.support.problems import assert_problem
from tests.support.processes import RedisProcess, emptied, poll

INVALID = 'Bearer realm="cardroom", error="invalid_token"'


@dataclass
class Operator:
    """The gateway in operator mode, its identity provider and its operator key file."""

    gateway: Gateway
    provider: IdentityProvider
    keys_file: Path
    operator_key: str
    fixed_key: str


@pytest.fixture(scope="module")
def operator(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Operator]:
    """A gateway taking the provider's tokens, players' keys and operator keys (a file)."""
    directory = tmp_path_factory.mktemp("identity")
    provider = IdentityProvider()
    jwks = provider.write_jwks(directory / "jwks.json")
    keys_file = directory / "operator-keys"
    operator_key = "op-" + secrets.token_hex(16)
    keys_file.write_text(f"# operator keys\n{operator_key}\n", encoding="utf-8")
    fixed_key = "op-" + secrets.token_hex(16)
    app = make_app(
        emptied(redis_process),
        evaluator_address,
        players_mode="operator",
        operator_keys_file=str(keys_file),
        operator_keys=(fixed_key,),
        jwt_issuer=provider.issuer,
        jwt_audience=provider.audience,
        jwt_jwks=str(jwks),
        # operator mode grants nothing by default; the matrix's players need chips to sit
        play_money_grant=10_000,
    )
    client = app.test_client()
    client.signs_in = False  # type: ignore[attr-defined]
    yield Operator(Gateway(app, client), provider, keys_file, operator_key, fixed_key)
    close_app(app)


def send(gateway: Gateway, method: str, path: str, credential: str | None, body: Any = None) -> Any:
    """One request with `credential` as its bearer (none if None)."""
    headers = bearer(credential) if credential is not None else {}
    if body is None:
        return gateway.client.open(path, method=method, headers=headers)
    return gateway.client.open(path, method=method, headers=headers, json=body)


# ---------------------------------------------------------------- the world of one case


@dataclass
class Person:
    """A player of the provider: their token, and their seat once seated."""

    subject: str
    jwt: str
    seat: int = 0
    token: str = ""


@dataclass
class World:
    """One case's table (Guts or Paiute), its players and the credentials under test."""

    operator: Operator
    game: str
    table_id: str = ""
    ann: Person = field(default_factory=lambda: Person("", ""))
    bo: Person = field(default_factory=lambda: Person("", ""))
    carl: Person = field(default_factory=lambda: Person("", ""))
    spare_key: str = ""
    hand: list[str] = field(default_factory=list)

    @property
    def gateway(self) -> Gateway:
        """The gateway under test."""
        return self.operator.gateway

    def person(self, name: str) -> Person:
        """A new player of the provider (created on the first request with the token)."""
        subject = new_subject()
        return Person(subject, self.operator.provider.token(subject, name=name))

    def call(self, method: str, path: str, credential: str | None, body: Any = None) -> Any:
        """One request."""
        return send(self.gateway, method, path, credential, body)

    def new_key(self, person: Person) -> dict[str, Any]:
        """A new key of `person`: {"key_id", "key", "created_at"}."""
        added = self.call("POST", "/v1/players/me/keys", person.jwt)
        assert added.status_code == 201, added.get_json()
        return dict(added.get_json())

    def revoke(self, person: Person, key_id: str) -> None:
        """Revoke one of `person`'s keys."""
        revoked = self.call("DELETE", f"/v1/players/me/keys/{key_id}", person.jwt)
        assert revoked.status_code == 204, revoked.get_data(as_text=True)

    def build(self) -> World:
        """Create the table and seat ann and bo; carl stays a player without a seat."""
        self.ann, self.bo, self.carl = self.person("ann"), self.person("bo"), self.person("carl")
        options: dict[str, Any] = {"game": self.game, "deal_pause_seconds": 60}
        if self.game == "guts":
            options["turn_seconds"] = 60
        created = self.call("POST", "/v1/tables", self.ann.jwt, options)
        assert created.status_code == 201, created.get_json()
        self.table_id = created.get_json()["table"]["id"]
        for person in (self.ann, self.bo):
            seated = self.call(
                "POST", f"/v1/tables/{self.table_id}/seats", person.jwt, {"buy_in": 100}
            )
            assert seated.status_code == 201, seated.get_json()
            person.seat, person.token = seated.get_json()["seat"], seated.get_json()["token"]
        self.spare_key = self.new_key(self.ann)["key_id"]
        return self

    def table(self, credential: str | None = None) -> dict[str, Any]:
        """The table as `credential` sees it."""
        response = self.call("GET", f"/v1/tables/{self.table_id}", credential)
        assert response.status_code == 200, response.get_json()
        return dict(response.get_json())

    def move(self, credential: str, **action: Any) -> dict[str, Any]:
        """A move that must be accepted; the answer."""
        response = self.call("POST", f"/v1/tables/{self.table_id}/actions", credential, action)
        assert response.status_code == 200, response.get_json()
        return dict(response.get_json())

    def start(self) -> None:
        """Start the game."""
        self.move(self.ann.token, action="start")

    def paiute_turn_to_ann(self) -> None:
        """Start Paiute and call whoever plays first `ann` (the other is `bo`)."""
        self.start()
        first = self.table()["pending"]["seats"][0]
        if first != self.ann.seat:
            self.ann, self.bo = self.bo, self.ann

    def finish_a_deal(self) -> None:
        """Play deal 1 to its end: both out, nobody in; deal 2 waits 60 s to begin."""
        self.start()
        self.move(self.ann.token, action="declare", choice="out")
        self.move(self.bo.token, action="declare", choice="out")

        def finished() -> bool:
            response = self.call("GET", f"/v1/tables/{self.table_id}/hands/1", None)
            return bool(response.status_code == 200)

        poll(finished, 30, "deal 1 finished")


# ---------------------------------------------------------------- the operations


@dataclass(frozen=True)
class Operation:
    """One request of the API: its kind, its game, how to set it up, what it sends."""

    kind: str  # "player" (needs a player), "seat" (a player or seat token), "read"
    game: str
    prepare: Callable[[World], None]
    request: Callable[[World], tuple[str, str, Any]]
    success: int = 200


def _nothing(world: World) -> None:
    pass


def _other_table(world: World) -> tuple[str, str, Any]:
    created = world.call("POST", "/v1/tables", world.carl.jwt, {"game": "guts"})
    assert created.status_code == 201, created.get_json()
    return "POST", f"/v1/tables/{created.get_json()['table']['id']}/seats", {"buy_in": 100}


def _drawn(world: World) -> None:
    world.paiute_turn_to_ann()
    drew = world.move(world.ann.token, action="draw", source="stock")
    world.hand = list(drew["table"]["you"]["cards"])


def _actions(body: dict[str, Any]) -> Callable[[World], tuple[str, str, Any]]:
    def request(world: World) -> tuple[str, str, Any]:
        return "POST", f"/v1/tables/{world.table_id}/actions", body

    return request


def _discard(world: World) -> tuple[str, str, Any]:
    return (
        "POST",
        f"/v1/tables/{world.table_id}/actions",
        {"action": "discard", "card": world.hand[0]},
    )


def _call(world: World) -> tuple[str, str, Any]:
    body = {"action": "call", "cards": world.hand[:5], "discard": world.hand[5]}
    return "POST", f"/v1/tables/{world.table_id}/actions", body


OPERATIONS: dict[str, Operation] = {
    "create table": Operation(
        "player", "guts", _nothing, lambda w: ("POST", "/v1/tables", {"game": "guts"}), 201
    ),
    "take seat": Operation("player", "guts", _nothing, _other_table, 201),
    "start": Operation("seat", "guts", _nothing, _actions({"action": "start"})),
    "declare": Operation(
        "seat", "guts", World.start, _actions({"action": "declare", "choice": "in"})
    ),
    "rebuy": Operation("seat", "guts", _nothing, _actions({"action": "rebuy", "amount": 10})),
    "draw": Operation(
        "seat", "paiute", World.paiute_turn_to_ann, _actions({"action": "draw", "source": "stock"})
    ),
    "discard": Operation("seat", "paiute", _drawn, _discard),
    "call": Operation("seat", "paiute", _drawn, _call),
    "leave": Operation(
        "seat",
        "guts",
        _nothing,
        lambda w: ("DELETE", f"/v1/tables/{w.table_id}/seats/{w.ann.seat}", None),
    ),
    "stream ticket": Operation(
        "seat",
        "guts",
        _nothing,
        lambda w: ("POST", f"/v1/tables/{w.table_id}/stream-tickets", None),
        201,
    ),
    "me": Operation("player", "guts", _nothing, lambda w: ("GET", "/v1/players/me", None)),
    "add key": Operation(
        "player", "guts", _nothing, lambda w: ("POST", "/v1/players/me/keys", None), 201
    ),
    "revoke key": Operation(
        "player",
        "guts",
        _nothing,
        lambda w: ("DELETE", f"/v1/players/me/keys/{w.spare_key}", None),
        204,
    ),
    "my seats": Operation(
        "player", "guts", _nothing, lambda w: ("GET", "/v1/players/me/seats", None)
    ),
    "table": Operation(
        "read", "guts", World.start, lambda w: ("GET", f"/v1/tables/{w.table_id}", None)
    ),
    "lobby": Operation("read", "guts", _nothing, lambda w: ("GET", "/v1/tables", None)),
    "events": Operation(
        "read",
        "guts",
        World.start,
        lambda w: ("GET", f"/v1/tables/{w.table_id}/events?after=0", None),
    ),
    "hand history": Operation(
        "read",
        "guts",
        World.finish_a_deal,
        lambda w: ("GET", f"/v1/tables/{w.table_id}/hands/1", None),
    ),
}

# ---------------------------------------------------------------- the credentials


def _key(world: World) -> str:
    return str(world.new_key(world.ann)["key"])


def _revoked(world: World) -> str:
    added = world.new_key(world.ann)
    world.revoke(world.ann, added["key_id"])
    return str(added["key"])


def _rotated(world: World) -> tuple[str, str]:
    """Rotation: a new key added, the old one revoked; (old, new)."""
    old = world.new_key(world.ann)
    new = world.new_key(world.ann)
    world.revoke(world.ann, old["key_id"])
    return str(old["key"]), str(new["key"])


def _provider(world: World) -> IdentityProvider:
    return world.operator.provider


CREDENTIALS: dict[str, Callable[[World], str | None]] = {
    "none": lambda w: None,
    "another player's key": lambda w: str(w.new_key(w.carl)["key"]),
    "another seated player's key": lambda w: str(w.new_key(w.bo)["key"]),
    "another seat's token": lambda w: w.bo.token,
    "revoked key": _revoked,
    "old key after rotation": lambda w: _rotated(w)[0],
    "new key after rotation": lambda w: _rotated(w)[1],
    "expired jwt": lambda w: _provider(w).token(w.ann.subject, lifetime=-120),
    "jwt for another audience": lambda w: _provider(w).token(w.ann.subject, aud="elsewhere"),
    "jwt from another issuer": lambda w: _provider(w).token(
        w.ann.subject, iss="https://evil.example/"
    ),
    "jwt with alg none": lambda w: _provider(w).unsigned(w.ann.subject),
    "jwt hs256 with the public key": lambda w: _provider(w).hmac_with_public_key(w.ann.subject),
    "jwt from an unknown key id": lambda w: _provider(w).token(w.ann.subject, kid="rsa-9"),
    "the player's key": _key,
    "the player's jwt (ES256)": lambda w: _provider(w).token(
        w.ann.subject, algorithm="ES256", name="ann"
    ),
    "the seat's token": lambda w: w.ann.token,
}

REFUSED = {
    "revoked key",
    "old key after rotation",
    "expired jwt",
    "jwt for another audience",
    "jwt from another issuer",
    "jwt with alg none",
    "jwt hs256 with the public key",
    "jwt from an unknown key id",
}
ANN = {"new key after rotation", "the player's key", "the player's jwt (ES256)"}
AUTH_CODES = {
    "missing_token",
    "invalid_token",
    "player_required",
    "operator_required",
    "not_seated",
    "wrong_seat",
}


@pytest.mark.parametrize("credential", list(CREDENTIALS))
@pytest.mark.parametrize("name", list(OPERATIONS))
def test_every_operation_with_every_credential(
    operator: Operator, name: str, credential: str
) -> None:
    operation = OPERATIONS[name]
    world = World(operator, operation.game).build()
    operation.prepare(world)
    bearer_of = CREDENTIALS[credential](world)
    method, path, body = operation.request(world)
    before = world.table()
    response = world.call(method, path, bearer_of, body)
    challenge = response.headers.get("WWW-Authenticate")

    if operation.kind == "read":
        assert response.status_code == 200, response.get_json()
        if credential in REFUSED:
            assert challenge == INVALID
        else:
            assert challenge is None
        check_view(world, name, credential, response.get_json())
        return

    if credential == "none":
        assert_problem(response, 401, "missing_token")
        assert challenge == 'Bearer realm="cardroom"'
    elif credential in REFUSED:
        assert_problem(response, 401, "invalid_token")
        assert challenge == INVALID
    elif credential in ("the seat's token", "another seat's token") and operation.kind == "player":
        assert_problem(response, 403, "player_required")
    elif name == "leave" and credential in ("another seat's token", "another seated player's key"):
        assert_problem(response, 403, "wrong_seat")
    elif (
        credential == "another player's key"
        and operation.kind == "seat"
        and name != "stream ticket"
    ):
        assert_problem(response, 403, "not_seated")
    elif name == "revoke key" and credential.startswith("another"):
        assert_problem(response, 404, "key_not_found")  # ann's key is not theirs to revoke
    elif name == "call" or (operation.game == "paiute" and credential.startswith("another")):
        # accepted as that seat's: a call without a combination, or not bo's turn
        if response.status_code >= 400:
            assert assert_problem(response, (409, 422))["code"] not in AUTH_CODES
    else:
        assert response.status_code == operation.success, response.get_data(as_text=True)
        check_answer(world, name, credential, response)
        return
    if response.status_code >= 400:
        assert world.table() == before  # a refused write changed nothing


def acting_as(world: World, credential: str) -> Person:
    """Whose credential it is."""
    if credential in ("another seated player's key", "another seat's token"):
        return world.bo
    if credential == "another player's key":
        return world.carl
    return world.ann


def check_answer(world: World, name: str, credential: str, response: Any) -> None:
    """An accepted request answered for the credential's player."""
    person = acting_as(world, credential)
    body: Any = response.get_json() if response.status_code != 204 else {}
    player = world.operator.provider.player_id(person.subject)
    if name == "me":
        assert body["id"] == player
        assert "key" not in body
        assert all(set(key) == {"id", "created_at"} for key in body["keys"])
    elif name == "my seats":
        tables = {seat["table_id"] for seat in body["seats"]}
        assert (world.table_id in tables) == (person is not world.carl)
    elif name == "create table":
        assert response.headers["Location"] == f"/v1/tables/{body['table']['id']}"
    elif name in ("take seat", "add key"):
        assert response.headers["Cache-Control"] == "no-store"
    elif name == "stream ticket":
        assert body["ticket"].startswith("crt_")
        assert body["stream"] == f"/v1/tables/{world.table_id}/events/stream"
    elif name in ("start", "declare", "rebuy", "draw", "discard"):
        assert body["table"]["you"]["seat"] == person.seat
    elif name == "leave":
        assert str(world.ann.seat) not in world.table()["seats"]
        assert str(world.ann.seat) not in body["table"]["seats"]


def check_view(world: World, name: str, credential: str, body: dict[str, Any]) -> None:
    """A read answered with the view the credential gives: a seat's, or the public one."""
    seated = credential in ANN or credential in (
        "the seat's token",
        "another seat's token",
        "another seated player's key",
    )
    person = acting_as(world, credential)
    public = world.call("GET", world_path(world, name), None).get_json()
    if name == "table":
        if seated:
            assert body["you"]["seat"] == person.seat
            assert len(body["you"]["cards"]) == 3
        else:
            assert body.get("you") is None
            assert body == public
    elif name in ("events", "hand history"):
        own = [e for e in body["events"] if e not in public["events"]]
        if seated:
            assert own, "a seat sees its private events"
            assert all(e.get("data", {}).get("seat", person.seat) == person.seat for e in own)
        else:
            assert body == public
    else:
        # the lobby is the same for every credential, and lists the table on some page
        assert body == public
        listed: set[str] = set()
        cursor = ""
        while True:
            page = world.call("GET", f"/v1/tables?limit=100{cursor}", None).get_json()
            listed |= {t["id"] for t in page["tables"]}
            if page["next"] is None:
                break
            cursor = f"&cursor={page['next']}"
        assert world.table_id in listed


def world_path(world: World, name: str) -> str:
    """The path a read operation asks."""
    return str(OPERATIONS[name].request(world)[1])


# ---------------------------------------------------------------- the provider's keys


def test_a_public_key_gateway_refuses_hs256_signed_with_that_key(
    redis_url: str, evaluator_address: str
) -> None:
    provider = IdentityProvider()
    app = make_app(
        redis_url,
        evaluator_address,
        players_mode="operator",
        jwt_issuer=provider.issuer,
        jwt_audience=provider.audience,
        jwt_public_key=provider.public_pem(),
    )
    try:
        gateway = Gateway(app, app.test_client())
        subject = new_subject()
        forged = provider.hmac_with_public_key(subject)
        assert_problem(send(gateway, "GET", "/v1/players/me", forged), 401, "invalid_token")
        assert_problem(
            send(gateway, "POST", "/v1/tables", forged, {"game": "guts"}), 401, "invalid_token"
        )
        assert_problem(
            send(gateway, "GET", "/v1/players/me", provider.unsigned(subject)), 401, "invalid_token"
        )
        signed = provider.token(subject, name="dee")
        me = send(gateway, "GET", "/v1/players/me", signed)
        assert me.status_code == 200, me.get_json()
        assert me.get_json()["id"] == provider.player_id(subject)
        assert me.get_json()["name"] == "dee"
        assert me.get_json()["origin"] == "jwt"
    finally:
        close_app(app)


def test_a_token_names_the_same_player_whichever_key_signed_it(operator: Operator) -> None:
    provider, gateway = operator.provider, operator.gateway
    subject = new_subject()
    by_rsa = send(gateway, "GET", "/v1/players/me", provider.token(subject))
    by_ec = send(gateway, "GET", "/v1/players/me", provider.token(subject, algorithm="ES256"))
    assert by_rsa.status_code == by_ec.status_code == 200
    assert by_rsa.get_json()["id"] == by_ec.get_json()["id"] == provider.player_id(subject)
    # another provider's key under a known key id is no signature of this one
    stranger = IdentityProvider(issuer=provider.issuer, audience=provider.audience)
    assert_problem(
        send(gateway, "GET", "/v1/players/me", stranger.token(subject)), 401, "invalid_token"
    )


# ---------------------------------------------------------------- operator mode


def test_operator_mode_creates_players_only_with_an_operator_key(operator: Operator) -> None:
    gateway = operator.gateway
    assert_problem(
        send(gateway, "POST", "/v1/players", None, {"name": "eve"}), 401, "missing_token"
    )
    jwt_player = operator.provider.token(new_subject())
    assert_problem(
        send(gateway, "POST", "/v1/players", jwt_player, {"name": "eve"}), 403, "operator_required"
    )
    assert_problem(
        send(gateway, "POST", "/v1/players", "op-" + secrets.token_hex(16), {"name": "eve"}),
        401,
        "invalid_token",
    )
    assert (
        send(gateway, "POST", "/v1/players", operator.fixed_key, {"name": "eve"}).status_code == 201
    )
    created = send(gateway, "POST", "/v1/players", operator.operator_key, {"name": "eve"})
    assert created.status_code == 201, created.get_json()
    key = created.get_json()["key"]
    assert_problem(
        send(gateway, "POST", "/v1/players", key, {"name": "eve"}), 403, "operator_required"
    )
    me = send(gateway, "GET", "/v1/players/me", key).get_json()
    assert (me["name"], me["origin"]) == ("eve", "operator")
    # an operator key is not a player's: it neither creates tables nor reads /me
    for method, path, body in (
        ("POST", "/v1/tables", {"game": "guts"}),
        ("GET", "/v1/players/me", None),
        ("POST", "/v1/players/me/keys", None),
    ):
        refused = send(gateway, method, path, operator.operator_key, body)
        assert_problem(refused, 403, "player_required")
        assert refused.headers["WWW-Authenticate"].endswith('error="insufficient_scope"')


def test_a_rotated_operator_key_file_takes_effect_without_a_restart(operator: Operator) -> None:
    gateway, path = operator.gateway, operator.keys_file
    old, new = operator.operator_key, "op-" + secrets.token_hex(16)

    def creates(key: str) -> bool:
        return bool(send(gateway, "POST", "/v1/players", key, {"name": "fay"}).status_code == 201)

    assert creates(old)
    path.write_text(f"{new}\n", encoding="utf-8")
    stamp = time.time() + 5  # a clock tick coarser than the rewrite still shows a change
    os.utime(path, (stamp, stamp))
    poll(lambda: creates(new), 10, "the new operator key works")
    assert_problem(send(gateway, "POST", "/v1/players", old, {"name": "fay"}), 401, "invalid_token")
    operator.operator_key = new
    assert creates(operator.fixed_key)  # the keys of OPERATOR_KEYS stay whatever the file says
