"""HTTP <-> players: /v1/players, a player's keys and seats (`api.service.players`)."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from api.http.auth import principal_of
from api.http.schemas import parse_json_body
from api.http.steps import ADMIT_PLAYER_KEY
from api.service.players import PlayerService
from api.service.tables import TableService

players_blueprint = Blueprint("players", __name__)


def _players() -> PlayerService:
    players: PlayerService = current_app.extensions["cardroom.players"]
    return players


def _private(response: Response, status: int = 200) -> Response:
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response


@players_blueprint.post("/v1/players")
def create_player() -> Response:
    """A new player and their first key, shown only in this answer.

    Open mode: anyone may create one (a few an hour from one address); operator mode:
    only with an operator key.
    """
    body = parse_json_body(request.get_data(), request.content_type, "CreatePlayer")
    admit = request.environ.get(ADMIT_PLAYER_KEY)
    created = _players().create(principal_of(request.environ), body["name"], admit)
    response = _private(jsonify(created), 201)
    response.headers["Location"] = "/v1/players/me"
    return response


@players_blueprint.get("/v1/players/me")
def me() -> Response:
    """The player the credential belongs to, with the ids of their keys."""
    return _private(jsonify(_players().me(principal_of(request.environ))))


@players_blueprint.post("/v1/players/me/keys")
def add_key() -> Response:
    """A new key for the player (to rotate: add one, then revoke the old one)."""
    return _private(jsonify(_players().add_key(principal_of(request.environ))), 201)


@players_blueprint.delete("/v1/players/me/keys/<key_id>")
def revoke_key(key_id: str) -> Response:
    """Revoke one of the player's keys, the one in use included."""
    _players().revoke_key(principal_of(request.environ), key_id)
    return _private(Response(status=204), 204)


@players_blueprint.get("/v1/players/me/seats")
def my_seats() -> Response:
    """Every seat the player holds, with what a client needs to carry on playing it."""
    player = principal_of(request.environ).require_player()
    service: TableService = current_app.extensions["cardroom.service"]
    return _private(jsonify({"seats": service.seats_of(player)}))


@players_blueprint.get("/v1/players/me/ledger")
def my_ledger() -> Response:
    """The player's balance and their wallet's entries, newest first, with a cursor."""
    from api.http.routes.operator import entries_page

    player = principal_of(request.environ).require_player()
    service: TableService = current_app.extensions["cardroom.service"]
    service.wallets.top_up(player)
    return entries_page(player)
