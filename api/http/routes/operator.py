"""HTTP <-> the operator's side of the ledger: deposits, withdrawals, ledgers, the audit.

Every route takes an operator key (`Authorization: Bearer <operator key>`); see
docs/ledger.md for what each transfer does.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request

from api import jsonio
from api.adapters.wallets import HOUSE_WALLET
from api.errors import problem
from api.http.auth import principal_of
from api.http.routes.tables import _int_arg, query_arg
from api.http.schemas import parse_json_body
from api.service.players import PlayerService
from api.service.wallets import WalletService

operator_blueprint = Blueprint("operator", __name__)


def _wallets() -> WalletService:
    service = current_app.extensions["cardroom.service"]
    wallets: WalletService = service.wallets
    return wallets


def _operator() -> str:
    return principal_of(request.environ).require_operator()


def _known_player(player_id: str) -> str:
    players: PlayerService = current_app.extensions["cardroom.players"]
    players.record(player_id)  # 404 player_not_found
    return player_id


def _private(response: Response, status: int = 200) -> Response:
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response


def entries_page(player: str) -> Response:
    """A page of a wallet's entries, newest first (`?cursor=`, `?limit=`)."""
    limit = _int_arg("limit", 50, 1, 500)
    raw = query_arg("cursor")
    cursor = None
    if raw is not None:
        # a `next` is a position past the page's first entry: ASCII digits from 1 on (0
        # would read the list to its end, and other scripts' digits are no position)
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 15 or int(raw) == 0:
            raise problem(
                "invalid_cursor",
                "A ledger cursor is the `next` of an earlier page.",
                field="cursor",
            )
        cursor = int(raw)
    entries, following = _wallets().entries_page(player, cursor, limit)
    body = {
        **_wallets().balance(player),
        "entries": entries,
        "next": None if following is None else str(following),
    }
    return _private(jsonify(body))


def _move(player_id: str, kind: str) -> Response:
    operator = _operator()
    player = _known_player(player_id)
    body = parse_json_body(request.get_data(), request.content_type, "WalletTransfer")
    entry, replayed = _wallets().move(
        player,
        kind,
        body["amount"],
        operator,
        request.headers.get("Idempotency-Key"),
        body.get("reference"),
    )
    response = _private(jsonify(entry), 200 if replayed else 201)
    if replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response


@operator_blueprint.post("/v1/operator/players/<player_id>/deposits")
def deposit(player_id: str) -> Response:
    """Chips from the house to a player's wallet."""
    return _move(player_id, "deposit")


@operator_blueprint.post("/v1/operator/players/<player_id>/withdrawals")
def withdraw(player_id: str) -> Response:
    """Chips from a player's wallet back to the house (never below zero)."""
    return _move(player_id, "withdrawal")


@operator_blueprint.get("/v1/operator/players/<player_id>/ledger")
def player_ledger(player_id: str) -> Response:
    """A player's balance and ledger, newest first."""
    _operator()
    return entries_page(_known_player(player_id))


# what an export cursor holds: a wallet (a player's id, or the house's), the time that
# wallet was opened and the index of its next entry, as the gateway writes them
_CURSOR_WALLET = re.compile(r"p_[0-9a-f]{24}|" + re.escape(HOUSE_WALLET))
_LONGEST_CURSOR = 200
_LAST_ENTRY = 2**53


def _export_cursor(raw: str | None) -> tuple[str, float, int] | None:
    """The export cursor `raw` as the gateway wrote it; 400 invalid_cursor for anything
    else (deep nesting, NaN, numbers past what a ledger holds, another shape)."""
    if raw is None:
        return None
    try:
        if len(raw) > _LONGEST_CURSOR:
            raise ValueError("too long")
        decoded = json.loads(
            base64.urlsafe_b64decode(raw.encode() + b"=="), parse_constant=_no_constant
        )
        player, at, start = decoded
        wallet = isinstance(player, str) and _CURSOR_WALLET.fullmatch(player)
        time_ok = type(at) in (int, float) and math.isfinite(at) and 0 <= at < 10**12
        start_ok = type(start) is int and 0 <= start <= _LAST_ENTRY
        if not (wallet and time_ok and start_ok):
            raise ValueError(raw)
        return player, float(at), start
    except (ValueError, TypeError, binascii.Error, RecursionError):
        raise problem(
            "invalid_cursor",
            "An export cursor is the `Next-Cursor` of an earlier page.",
            field="cursor",
        ) from None


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN and Infinity are no cursor's numbers


@operator_blueprint.get("/v1/operator/ledger")
def export() -> Response:
    """The whole ledger as JSON lines, wallet after wallet; `Next-Cursor` for more."""
    _operator()
    limit = _int_arg("limit", 1000, 1, 10_000)
    entries, following = _wallets().export(_export_cursor(query_arg("cursor")), limit)
    lines = "".join(jsonio.dumps(entry) + "\n" for entry in entries)
    response = _private(Response(lines, mimetype="application/jsonl"))
    if following is not None:
        token = base64.urlsafe_b64encode(json.dumps(list(following)).encode()).decode().rstrip("=")
        response.headers["Next-Cursor"] = token
    return response


@operator_blueprint.get("/v1/operator/audit")
def audit() -> Response:
    """Every invariant of the ledger checked over the whole store."""
    _operator()
    report = _wallets().audit()
    body: dict[str, Any] = {
        "clean": report.clean,
        "discrepancies": report.discrepancies,
        "totals": report.totals,
    }
    return _private(jsonify(body))


@operator_blueprint.get("/v1/operator/webhooks/dead")
def dead_webhooks() -> Response:
    """The latest webhook notices given up on, newest first (`?limit=`)."""
    _operator()
    limit = _int_arg("limit", 100, 1, 1000)
    service = current_app.extensions["cardroom.service"]
    return _private(jsonify({"dead": service.webhooks.dead(limit)}))
