"""Computer players' endpoints: the table's creator, or an operator, seats or removes one.

    POST   /v1/tables/<id>/bots          {"strategy": "strong", "buy_in": 100, "name": ...}
    DELETE /v1/tables/<id>/bots/<seat>
    GET    /v1/bots/strategies           the strategies of each game

The bot is played by the runner (`python -m api.bots`), never by the caller, who gets the
table without the seat's token (docs/bots.md).
"""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from api.games.strategies import STRATEGIES
from api.http.auth import principal_of
from api.http.headers import idempotency
from api.http.schemas import parse_json_body
from api.service.bots import BotService
from api.service.idempotency import Outcome

bots_blueprint = Blueprint("bots", __name__)


def _bots() -> BotService:
    service: BotService = current_app.extensions["cardroom.services"].bots
    return service


def _respond(outcome: Outcome) -> Response:
    response = jsonify(outcome.body)
    response.status_code = outcome.status
    for name, value in outcome.headers.items():
        response.headers[name] = value
    response.headers["Cache-Control"] = "no-store"
    return response


@bots_blueprint.post("/v1/tables/<table_id>/bots")
def seat_bot(table_id: str) -> Response:
    """Seat a computer player with a strategy and a buy-in from the house's bots account."""
    principal = principal_of(request.environ)
    body = parse_json_body(request.get_data(), request.content_type, "SeatBot")
    keyed = idempotency(
        request.headers.get("Idempotency-Key"),
        request.method,
        request.path,
        request.get_data(),
        principal.scope,
    )
    outcome = _bots().seat(
        table_id, principal, body["strategy"], body["buy_in"], body.get("name"), keyed
    )
    return _respond(outcome)


@bots_blueprint.delete("/v1/tables/<table_id>/bots/<number:seat>")
def remove_bot(table_id: str, seat: int) -> Response:
    """A computer player leaves: now, or once the deal it is in is settled."""
    return _respond(_bots().remove(table_id, seat, principal_of(request.environ)))


@bots_blueprint.get("/v1/bots/strategies")
def strategies() -> Response:
    """The strategies a computer player of each game may play, weakest first."""
    response = jsonify({game: list(named) for game, named in STRATEGIES.items()})
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response
