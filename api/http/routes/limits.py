"""HTTP <-> players' limits and exclusions: a player's own limits
(`/v1/players/me/limits`) and the operator's for a player
(`/v1/operator/players/{id}/limits`); a player's time-out or self-exclusion
(`/v1/players/me/exclusions`) and the operator's list (`/v1/operator/exclusions`); a
player's session settings (`/v1/players/me/session`); docs/players.md#limits."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from api.http.auth import principal_of
from api.http.routes.tables import _int_arg
from api.http.schemas import parse_json_body
from api.service import exclusions
from api.service.overview import overview
from api.service.player_limits import LimitsView, PlayerLimits
from api.service.players import PlayerService
from api.service.tables import TableService

limits_blueprint = Blueprint("limits", __name__)


def _limits() -> PlayerLimits:
    limits: PlayerLimits = current_app.extensions["cardroom.services"].limits
    return limits


def _private(body: LimitsView) -> Response:
    return _private_json(dict(body))


def _player() -> str:
    return principal_of(request.environ).require_player()


def _known_player(player_id: str) -> str:
    principal_of(request.environ).require_operator()
    players: PlayerService = current_app.extensions["cardroom.players"]
    players.record(player_id)  # 404 player_not_found
    return player_id


@limits_blueprint.get("/v1/players/me/limits")
def my_limits() -> Response:
    """The player's limits: what applies in each kind and window, and what is left."""
    return _private(_limits().view(_player()))


@limits_blueprint.post("/v1/players/me/limits")
def set_my_limit() -> Response:
    """Set one of the player's limits: lower at once, higher once cooled and confirmed."""
    player = _player()
    body = parse_json_body(request.get_data(), request.content_type, "SetLimit")
    return _private(_limits().set(player, body, operator=False))


@limits_blueprint.post("/v1/players/me/limits/confirmations")
def confirm_my_limit() -> Response:
    """Confirm a raised or removed limit once its cooling period is over."""
    player = _player()
    body = parse_json_body(request.get_data(), request.content_type, "LimitSlot")
    return _private(_limits().confirm(player, body))


@limits_blueprint.get("/v1/operator/players/<player_id>/limits")
def player_limits(player_id: str) -> Response:
    """A player's limits, as the player reads them."""
    return _private(_limits().view(_known_player(player_id)))


@limits_blueprint.post("/v1/operator/players/<player_id>/limits")
def set_player_limit(player_id: str) -> Response:
    """Set the operator's own limit for a player, at once (the lowest applies)."""
    player = _known_player(player_id)
    body = parse_json_body(request.get_data(), request.content_type, "SetLimit")
    return _private(_limits().set(player, body, operator=True))


@limits_blueprint.get("/v1/players/me/exclusions")
def my_exclusion() -> Response:
    """The player's time-out or self-exclusion, the last taken, and whether it runs."""
    player = _player()
    exclusion = _limits().exclusion(player)
    active = exclusions.is_active(exclusion, _limits().clock())
    return _private_json({"exclusion": exclusion, "active": active})


@limits_blueprint.post("/v1/players/me/exclusions")
def exclude_me() -> Response:
    """Take a time-out or exclude oneself; every seat held is left after its deal."""
    player = _player()
    body = parse_json_body(request.get_data(), request.content_type, "Exclude")
    exclusion = _limits().exclude(player, body)
    tables: TableService = current_app.extensions["cardroom.service"]
    seats = tables.leave_everywhere(player)
    response = _private_json({"exclusion": exclusion, "active": True, "seats": seats})
    response.status_code = 201
    return response


@limits_blueprint.get("/v1/operator/exclusions")
def excluded_players() -> Response:
    """The players whose time-out or self-exclusion runs now, soonest to end first."""
    principal_of(request.environ).require_operator()
    limit = _int_arg("limit", 100, 1, 1000)
    return _private_json({"players": _limits().excluded(limit)})


def _private_json(body: dict[str, object]) -> Response:
    response = jsonify(body)
    response.headers["Cache-Control"] = "no-store"
    return response


@limits_blueprint.get("/v1/operator/players/<player_id>")
def player_overview(player_id: str) -> Response:
    """A player for the operator: limits, exclusion, wallet, activity per day."""
    player = _known_player(player_id)
    days = _int_arg("days", 30, 1, 90)
    service: TableService = current_app.extensions["cardroom.service"]
    recall = service.changes.recall
    assert recall is not None  # the gateway's bootstrap always builds it
    body = overview(player, days, service.wallets, _limits(), recall)
    body["name"] = current_app.extensions["cardroom.players"].record(player)["name"]
    return _private_json(body)


@limits_blueprint.get("/v1/players/me/session")
def my_session() -> Response:
    """The player's session settings and the session running."""
    return _private_json(_limits().session(_player()))


@limits_blueprint.post("/v1/players/me/session")
def set_my_session() -> Response:
    """Set the session's time limit and reality-check interval (minutes; null: none):
    stricter at once, looser once cooled and confirmed."""
    player = _player()
    body = parse_json_body(request.get_data(), request.content_type, "SessionSettings")
    return _private_json(_limits().set_session(player, body))


@limits_blueprint.post("/v1/players/me/session/confirmations")
def confirm_my_session() -> Response:
    """Confirm a longer or removed session setting once its cooling period is over."""
    player = _player()
    body = parse_json_body(request.get_data(), request.content_type, "SessionSetting")
    return _private_json(_limits().confirm_session(player, body))
