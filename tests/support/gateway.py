"""The gateway in this process, via Flask's test client, with shortcuts for the table API."""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import brotli
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from api.app import create_app
from api.settings import Settings
from tests.support.tables_api import Account, Player, TableCalls

# seconds a test gateway waits for the evaluator, where that deadline is not under test
EVALUATOR_TIMEOUT = 30.0


SIGN_UP_ADDRESS = "198.51.100.7"
_NEEDS_PLAYER = re.compile(r"/v1/tables(/[^/]+/seats)?/?")


class SignedInClient(FlaskClient):
    """Flask's test client as a signed-in app uses the gateway.

    A table's creation or a seat's grant sent without an Authorization header gets a
    new player's key, created through `POST /v1/players` (named as the seat, when that
    is a fit name): each seat is its own player, as at a real table. Set `signs_in` to
    False to send such requests as they are (anonymous).
    """

    signs_in = True

    def open(self, *args: Any, **kwargs: Any) -> Any:
        """The request, with a new player's key where it needs one and has none."""
        path = args[0] if args and isinstance(args[0], str) else kwargs.get("path", "/")
        method = str(kwargs.get("method", "GET")).upper()
        headers = dict(kwargs.get("headers") or {})
        if (
            self.signs_in
            and method == "POST"
            and isinstance(path, str)
            and _NEEDS_PLAYER.fullmatch(path.split("?")[0])
            and not any(name.lower() == "authorization" for name in headers)
        ):
            body = kwargs.get("json")
            name = body.get("name") if isinstance(body, dict) and "/seats" in path else None
            key = self.new_player_key(name)
            if not isinstance(key, str):
                return key  # the gateway could not create a player (Redis is down...)
            headers["Authorization"] = "Bearer " + key
            kwargs["headers"] = headers
        return super().open(*args, **kwargs)

    def new_player_key(self, name: Any = None) -> Any:
        """A new player's key, or the answer that refused to create one (a 5xx).

        The player signs up from an address of its own (TEST-NET-2), so that its sign-up
        counts against none of the limits of the address the test sends from.
        """
        response = None
        for candidate in (name, "player"):
            if not isinstance(candidate, str):
                continue
            response = super().open(
                "/v1/players",
                method="POST",
                json={"name": candidate},
                environ_overrides={"REMOTE_ADDR": SIGN_UP_ADDRESS},
            )
            if response.status_code == 201:
                return str(response.get_json()["key"])
            if response.status_code >= 500:
                return response
        assert response is not None
        raise AssertionError(f"no player could be created: {response.get_data(as_text=True)}")


@dataclass
class Gateway(TableCalls):
    """A test client with shortcuts for the table API; records every body it receives."""

    app: Flask
    client: FlaskClient
    received: list[tuple[str | None, Any]] = field(default_factory=list)

    def call(
        self, method: str, path: str, player: Player | Account | None = None, **kwargs: Any
    ) -> Any:
        """One request; the response (its JSON is recorded for the transcript check)."""
        headers = dict(kwargs.pop("headers", {}))
        if player is not None:
            headers.update(player.auth)
        response = self.client.open(path, method=method, headers=headers, **kwargs)
        if response.is_json and "Content-Encoding" in response.headers:
            self.received.append((player.name if player else None, decoded_json(response)))
        elif response.is_json:
            self.received.append((player.name if player else None, response.get_json()))
        elif response.mimetype == "text/event-stream":
            self.received.append((player.name if player else None, response.get_data(True)))
        return response

    def sign_up(self, name: str = "host") -> Account:
        """A new player, signed up from an address of its own (`SignedInClient`)."""
        for candidate in (name, "player"):
            response = self.client.open(
                "/v1/players",
                method="POST",
                json={"name": candidate},
                environ_overrides={"REMOTE_ADDR": SIGN_UP_ADDRESS},
            )
            if response.status_code != 422:
                break
        assert response.status_code == 201, response.get_data(as_text=True)
        created = response.get_json()
        return Account(created["id"], created["name"], created["key"])

    def json_call(self, method: str, path: str, player: Player | Account | None, body: Any) -> Any:
        """One request through `call`, with `body` as JSON unless it is None."""
        if body is None:
            return self.call(method, path, player)
        return self.call(method, path, player, json=body)

    def stream(
        self,
        table_id: str,
        player: Player | None,
        blocks: int,
        headers: dict[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """Read the server-sent event stream until `blocks` blocks came; the events in it."""
        response = self.call(
            "GET",
            f"/v1/tables/{table_id}/events/stream",
            player,
            headers=headers or {},
            buffered=False,
        )
        assert response.mimetype == "text/event-stream"
        text = ""
        for chunk in response.response:
            text += chunk.decode() if isinstance(chunk, bytes) else chunk
            if text.count("\n\n") > blocks:
                break
        response.close()
        return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]

    def events(
        self, table_id: str, player: Player | None = None, after: int = 0, wait: float = 0
    ) -> dict[str, Any]:
        """Events after a cursor."""
        response = self.call(
            "GET", f"/v1/tables/{table_id}/events?after={after}&wait={wait}", player
        )
        assert response.status_code == 200, response.get_json()
        return dict(response.get_json())


def decoded_json(response: Any) -> Any:
    """The JSON of an answer in its Content-Encoding (br, gzip or none)."""
    body = response.get_data()
    coding = response.headers.get("Content-Encoding")
    if coding == "br":
        body = brotli.decompress(body)
    elif coding == "gzip":
        body = gzip.decompress(body)
    return json.loads(body)


def gateway_settings(redis_url: str, evaluator_address: str, **overrides: Any) -> Settings:
    """Settings for a test gateway: fast clock, short long-polls, a patient evaluator client.

    The evaluator's deadline is long (the 2 s default is a production budget that a loaded
    machine can eat); the tests of that deadline set their own.
    """
    values: dict[str, Any] = {
        "redis_url": redis_url,
        "evaluator_addr": evaluator_address,
        "evaluator_timeout": EVALUATOR_TIMEOUT,
        "clock": True,
        "clock_interval": 0.05,
        "long_poll_max": 10.0,
        "stream_max_seconds": 5.0,
        # the tests create players by the hundred from one address; one test sets a limit
        "players_per_address": 0,
    }
    values.update(overrides)
    return Settings(**values)


def make_app(redis_url: str, evaluator_address: str, **overrides: Any) -> Flask:
    """A testing gateway app on this Redis and evaluator (`gateway_settings` plus overrides)."""
    app = create_app(gateway_settings(redis_url, evaluator_address, **overrides))
    app.testing = True
    return app


def close_app(app: Flask) -> None:
    """Stop the app's clock (if it runs one) and release its evaluator channel."""
    clock = app.extensions.get("cardroom.clock")
    if clock is not None:
        clock.stop()
    app.extensions["cardroom.service"].evaluator.close()


def served(redis_url: str, evaluator_address: str, **overrides: Any) -> Iterator[str]:
    """A gateway with its clock, served by werkzeug on a free loopback port."""
    app = create_app(gateway_settings(redis_url, evaluator_address, **overrides))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="demo-gateway", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(10)
        clock = app.extensions.get("cardroom.clock")
        if clock is not None:
            clock.stop()
        app.extensions["cardroom.service"].evaluator.close()
