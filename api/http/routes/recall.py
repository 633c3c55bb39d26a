"""HTTP <-> game recall: a player's own deals, newest first, and deals as text modeled on
PHH (docs/hand-histories.md)."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from api.http.auth import principal_of
from api.http.routes.tables import _int_arg, deal_as_seen, query_arg
from api.service.recall import Recall, text_of
from api.service.tables import TableService

recall_blueprint = Blueprint("recall", __name__)
TEXT_TYPE = "application/toml; charset=utf-8"


def _recall() -> Recall:
    service: TableService = current_app.extensions["cardroom.service"]
    recall = service.changes.recall
    assert recall is not None  # the gateway's bootstrap always builds it
    return recall


def _player() -> str:
    return principal_of(request.environ).require_player()


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "no-store"
    return response


@recall_blueprint.get("/v1/players/me/deals")
def my_deals() -> Response:
    """The deals the player played, newest first (`?limit=`, `?cursor=`)."""
    player = _player()
    limit = _int_arg("limit", 20, 1, 100)
    return _private(jsonify(_recall().page(player, limit, query_arg("cursor"))))


@recall_blueprint.get("/v1/players/me/deals/phh")
def my_deals_text() -> Response:
    """The player's last `?last=` deals (10 by default) as PHH-style text, newest first."""
    player = _player()
    recall = _recall()
    last = _int_arg("last", 10, 1, recall.copies)
    return _private(Response(recall.export(player, last), content_type=TEXT_TYPE))


@recall_blueprint.get("/v1/players/me/deals/<table_id>/<number:hand_number>")
def my_deal(table_id: str, hand_number: int) -> Response:
    """One of the player's deals as they saw it: their kept copy, or the table's history."""
    player = _player()
    kept = _recall().kept(player, table_id, hand_number)
    return _private(jsonify(kept if kept is not None else deal_as_seen(table_id, hand_number)))


@recall_blueprint.get("/v1/tables/<table_id>/hands/<number:hand_number>/phh")
def deal_text(table_id: str, hand_number: int) -> Response:
    """One finished deal as PHH-style text, as the caller may see it."""
    shown = deal_as_seen(table_id, hand_number)
    service: TableService = current_app.extensions["cardroom.service"]
    record = service.store.load(table_id)
    if record is not None:
        shown["game"] = record.state["game"]
        shown["table_name"] = record.state.get("name")
        shown["cards"] = record.state["options"].get("cards")
    response = Response(text_of(shown), content_type=TEXT_TYPE)
    response.headers["Cache-Control"] = "private, max-age=3600"
    response.headers["Vary"] = "Authorization"
    return response
