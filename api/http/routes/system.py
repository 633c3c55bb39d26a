"""HTTP <-> service: health, readiness, metrics and ranking without a table."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from api.adapters.store import STORE_ERRORS
from api.errors import ApiError, StoreUnavailable
from api.games.cards import canonical_hand
from api.http.schemas import parse_json_body
from api.i18n import N_
from api.i18n.catalogs import Phrase
from api.service.tables import TableService
from api.telemetry import metrics_page

system_blueprint = Blueprint("system", __name__)

# The fields of an evaluate request that only Paiute hands have, and why.
_PAIUTE_ONLY = {
    "wild_rank": Phrase(N_("has no wild cards")),
    "paiute_valuation": Phrase(N_("has no six-card hands")),
}


def _service() -> TableService:
    service: TableService = current_app.extensions["cardroom.service"]
    return service


@system_blueprint.get("/healthz")
def healthz() -> Response:
    """Alive: the process answers."""
    return jsonify({"status": "ok"})


@system_blueprint.get("/readyz")
def readyz() -> Response:
    """Ready: Redis and the evaluator both answer."""
    service = _service()
    try:
        service.store.ping()
    except STORE_ERRORS:
        raise StoreUnavailable("The table store (Redis) does not answer.") from None
    service.evaluator.ping()
    return jsonify({"status": "ready", "redis": "ok", "evaluator": "ok"})


@system_blueprint.get("/metrics")
def metrics() -> Response:
    """Prometheus metrics."""
    page, content_type = metrics_page()
    return Response(page, content_type=content_type)


@system_blueprint.post("/v1/evaluate")
def evaluate() -> Response:
    """Rank hands, or a Guts hand's odds, through the evaluator."""
    body = parse_json_body(request.get_data(), request.content_type, "EvaluateRequest")
    game = body["game"]
    evaluator = _service().evaluator
    if "odds" in body:
        odds = body["odds"]
        hand = canonical_hand(odds["hand"], game, "odds.hand")
        result = evaluator.odds(
            game, hand, odds["opponents"], odds.get("samples", 100_000), odds.get("seed")
        )
        return jsonify(result)
    wild = body.get("wild_rank")
    if game == "paiute" and wild is None:
        raise ApiError(
            422,
            "missing_field",
            "Missing field",
            "Field 'wild_rank' is required for paiute.",
            field="wild_rank",
        )
    for name, reason in _PAIUTE_ONLY.items():
        if game != "paiute" and name in body:
            raise ApiError(
                422,
                "invalid_field",
                "Invalid field value",
                "Field '{name}' is for paiute only; {game} {reason}.",
                field=name,
                name=name,
                game=game,
                reason=reason,
            )
    hands = [
        canonical_hand(hand, game, f"hands[{index}]") for index, hand in enumerate(body["hands"])
    ]
    results = evaluator.evaluate(game, hands, wild, body.get("paiute_valuation"))
    return jsonify({"results": results})
