"""Every move of every game, `POST /v1/tables/{table_id}/actions`, answered below Flask.

A move is the request the gateway answers most, and most of what it costs is the
move itself (the rules, one round trip to Redis); around it, Flask's request and
application contexts, routing and response objects cost a declare about as much CPU
again as the whole of `GET /healthz`. So the request pipeline (`api.http.pipeline`)
hands moves to `MovesEndpoint`, after the same steps every other request meets, and it
answers them through the pieces the Flask routes use: `parse_json_body`, the headers'
rules (`api.http.headers`) and the table service.

Every other request goes on to Flask: other paths, and other methods on this one, whose
rule Flask keeps (405 with `Allow`, `OPTIONS`). The path is matched as werkzeug's
routing matches it (the WSGI path decoded as UTF-8, leading slashes merged), so a POST
the rule would match never reaches Flask.
"""

from __future__ import annotations

import re
from typing import cast

from api import jsonio
from api.errors import ApiError
from api.games.common import RuleError
from api.games.game import ActionBody, unsupported_move
from api.http.auth import principal_of
from api.http.etags import if_match
from api.http.headers import idempotency, prefers_minimal
from api.http.pipeline import Exchange, Headers, request_path
from api.http.schemas import parse_json_body
from api.service.dispatch import game_of
from api.service.idempotency import Outcome
from api.service.tables import TableService

ROUTE = "/v1/tables/<table_id>/actions"
_PATH = re.compile(r"/v1/tables/([^/]+)/actions")


def move_path(path_info: str) -> tuple[str, str] | None:
    """The path and table id of a move's WSGI `PATH_INFO`; None for any other path."""
    path = request_path(path_info)
    match = _PATH.fullmatch(path)
    return None if match is None else (path, match.group(1))


class MovesEndpoint:
    """The moves' POSTs, answered by the table service without Flask."""

    def __init__(self, service: TableService) -> None:
        """Answer moves with `service`."""
        self.service = service

    def route_of(self, exchange: Exchange) -> str | None:
        """ROUTE for a move's POST, None for any other request."""
        if exchange.method == "POST" and _PATH.fullmatch(exchange.path):
            return ROUTE
        return None

    def answer(self, exchange: Exchange) -> tuple[int, Headers, bytes]:
        """Apply the move; its status, headers and body."""
        environ = exchange.environ
        match = _PATH.fullmatch(exchange.path)
        assert match is not None  # route_of claimed it
        principal = principal_of(environ)
        principal.require_actor()
        data = exchange.body
        # the schema checked the body's shape: it is a move as the rules take it
        try:
            action = cast(ActionBody, parse_json_body(data, environ.get("CONTENT_TYPE"), "Action"))
        except ApiError as error:
            if error.code == "unsupported_action":
                raise self._unknown_move(match.group(1), data) from None
            raise
        sent_key = environ.get("HTTP_IDEMPOTENCY_KEY")
        key = None
        if sent_key is not None:
            key = idempotency(sent_key, "POST", exchange.path, data, principal.scope)
        minimal = prefers_minimal(environ.get("HTTP_PREFER"))
        outcome = self.service.act(
            match.group(1),
            principal,
            action,
            if_match(environ.get("HTTP_IF_MATCH")),
            key,
            minimal,
        )
        return _response(outcome, minimal)

    def _unknown_move(self, table_id: str, data: bytes) -> RuleError:
        """unsupported_action for a move no game has, naming the moves of this table's game
        (404 when there is no such table)."""
        game = game_of(self.service.record(table_id).state)
        return unsupported_move(game.name, game.moves, str(jsonio.loads(data)["action"]))


def _response(outcome: Outcome, minimal: bool) -> tuple[int, Headers, bytes]:
    """The status, headers (Content-Length aside) and body of a move's outcome."""
    # a replay of a 200 also leaves its body out when asked; a replay of a 204 stays one
    if outcome.status == 204 or (minimal and outcome.status == 200):
        headers = dict(outcome.headers)  # its ETag...
        headers["Preference-Applied"] = "return=minimal"
        return 204, list(headers.items()), b""
    body = jsonio.dumps_bytes(outcome.body)
    return outcome.status, [("Content-Type", "application/json"), *outcome.headers.items()], body
