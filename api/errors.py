"""One error family for the gateway, reported as RFC 9457 problem details.

Every failure the client sees is an `ApiError` with a stable snake_case `code`; its
HTTP status comes from one of two tables: `PROBLEM_CODES` for the gateway's own codes
and `RULE_ERROR_STATUS` for the codes of the game rules (`RuleError`). Each fault has
one code and each code one status, by one rule (docs/api.md, "Errors"): 409 when the
request is well formed but the present state of the table, the seat, the player or the
wallet refuses it, so that the same request may succeed later; 422 when its content
can never succeed as written, at that table whatever happens there.
The body is ``application/problem+json``::

    {"type": "https://cardroom.dev/problems/table_not_found", "title": "Table not found",
     "status": 404, "detail": "No table 't_x' exists.", "code": "table_not_found",
     "instance": "/v1/tables/t_x"}

plus ``field`` when one request member is to blame and any `extra` members. The
``type`` URL is an identifier of the problem type: it is not promised to resolve.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger("api.errors")

PROBLEM_CONTENT_TYPE = "application/problem+json"
PROBLEM_TYPE_BASE = "https://cardroom.dev/problems/"

# The gateway's own codes: code -> (HTTP status, title). A title names the problem
# type and never changes between occurrences (RFC 9457 section 3.1.3).
PROBLEM_CODES: dict[str, tuple[int, str]] = {
    "malformed_json": (400, "Malformed JSON"),
    "invalid_body": (400, "Invalid request body"),
    "invalid_parameter": (400, "Invalid parameter"),
    "invalid_idempotency_key": (400, "Invalid Idempotency-Key"),
    "invalid_cursor": (400, "Invalid cursor"),
    "bad_request": (400, "Bad request"),
    "missing_token": (401, "Missing credential"),
    "invalid_token": (401, "Invalid credential"),
    "invalid_ticket": (401, "Invalid stream ticket"),
    "wrong_seat": (403, "Wrong seat"),
    "player_required": (403, "Player credential required"),
    "operator_required": (403, "Operator key required"),
    "player_not_found": (404, "Player not found"),
    "key_not_found": (404, "Key not found"),
    "already_seated": (409, "Already seated"),
    # closing tables (api.service.closing)
    "not_table_creator": (403, "Not the table's creator"),
    "table_started": (409, "Table started"),
    "table_closing": (409, "Table closing"),
    # a player's limits (api.service.limits, api.service.player_limits)
    "limit_reached": (409, "Limit reached"),
    "invalid_limit": (422, "Invalid limit"),
    "limit_cooling": (409, "Limit change cooling"),
    "nothing_to_confirm": (409, "Nothing to confirm"),
    # time-outs and self-exclusion (api.service.exclusions)
    "player_excluded": (409, "Player excluded"),
    "invalid_exclusion": (422, "Invalid exclusion"),
    "exclusion_shorter": (409, "Exclusion cannot be shortened"),
    # session time limits (api.service.sessions)
    "session_limit_reached": (409, "Session limit reached"),
    "invalid_session": (422, "Invalid session settings"),
    "too_many_keys": (409, "Too many keys"),
    "insufficient_funds": (409, "Insufficient funds"),
    "table_not_found": (404, "Table not found"),
    "seat_not_found": (404, "Seat not found"),
    "hand_not_found": (404, "Hand not found"),
    "route_not_found": (404, "Route not found"),
    "method_not_allowed": (405, "Method not allowed"),
    "not_acceptable": (406, "Not acceptable"),
    "body_timeout": (408, "Request body timeout"),
    # what gunicorn refuses by itself, before the gateway reads the request (api.runtime.answers)
    "forbidden": (403, "Forbidden"),
    "uri_too_long": (414, "URI too long"),
    "expectation_failed": (417, "Expectation failed"),
    "headers_too_large": (431, "Request header fields too large"),
    "not_implemented": (501, "Not implemented"),
    "idempotency_key_reused": (409, "Idempotency key reused"),
    "idempotency_in_progress": (409, "Idempotent request in progress"),
    "conflict": (409, "Conflict"),
    "history_trimmed": (410, "History trimmed"),
    "table_closed": (410, "Table closed"),
    "stale_version": (412, "Stale table version"),
    "body_too_large": (413, "Request body too large"),
    "unsupported_media_type": (415, "Unsupported media type"),
    "unknown_field": (422, "Unknown field"),
    "invalid_type": (422, "Invalid field type"),
    "invalid_field": (422, "Invalid field value"),
    "missing_field": (422, "Missing field"),
    "invalid_hand": (422, "Invalid hand"),
    "invalid_card": (422, "Invalid card"),
    "invalid_amount": (422, "Invalid amount"),
    "balance_limit": (409, "Balance limit"),
    "unsupported_game": (422, "Unsupported game"),
    "unsupported_action": (422, "Unsupported action"),
    "rate_limited": (429, "Too many requests"),
    "quota_exceeded": (429, "Quota exceeded"),
    "internal_error": (500, "Internal server error"),
    "evaluator_unavailable": (503, "Evaluator unavailable"),
    "store_unavailable": (503, "Store unavailable"),
    "not_replicated": (503, "Not yet replicated"),
    "identity_provider_unavailable": (503, "Identity provider unavailable"),
    # computer players (api.service.bots)
    "bots_not_allowed": (403, "Computer players not allowed"),
    "not_table_owner": (403, "Not the table's creator"),
    "not_a_computer_player": (404, "Computer player not found"),
    "unknown_strategy": (422, "Unknown strategy"),
}

# The game rules' codes (see api.games.common): a move that is illegal now is a
# conflict with the table's state (409); a move that could never be legal as sent is
# unprocessable (422): a table's options are fixed when it is created, so what they
# forbid (a rebuy at a table without rebuys) is 422; a player with no seat at the table
# is forbidden (403).
RULE_ERROR_STATUS: dict[str, int] = {
    "not_your_turn": 409,
    "already_drawn": 409,
    "must_draw_first": 409,
    "empty_discard_pile": 409,
    "card_not_held": 422,
    "cards_not_held": 422,
    "cannot_discard_drawn": 422,
    "no_combination": 422,
    "invalid_combination": 422,
    "already_declared": 409,
    "no_hand_in_progress": 409,
    "not_seated": 403,
    "table_full": 409,
    "game_in_progress": 409,
    "not_enough_players": 409,
    "already_started": 409,
    "rebuy_not_allowed": 422,
    "invalid_choice": 422,
    "showdown_pending": 409,
    "already_left": 409,
    "invalid_buy_in": 422,
    "invalid_option": 422,
    "invalid_name": 422,
    "name_taken": 409,
    "too_late": 409,
    "not_away": 409,
}
RULE_ERROR_DEFAULT_STATUS = 409
# Codes the rules raise only when the gateway itself misuses them (a deal without a deck,
# a settlement without its ranks): a bug, answered as one (500 internal_error).
INTERNAL_RULE_CODES = frozenset({"invalid_deck", "invalid_ranking", "not_in_showdown"})

INTERNAL_DETAIL = "The server met an unexpected error; the failure has been logged."


def problem_type(code: str) -> str:
    """Return the `type` URI (an identifier, not a promise of a page) of a problem code."""
    return PROBLEM_TYPE_BASE + code


class Moment(float):
    """A message's placeholder that is a moment (Unix seconds): the English detail says
    it as `2026-12-05 01:45 UTC`, and a message in another language as that language
    writes a date and a time (`api.i18n.catalogs.say`)."""

    __slots__ = ()

    def __format__(self, spec: str) -> str:
        return datetime.fromtimestamp(self, UTC).strftime("%Y-%m-%d %H:%M UTC")


class ApiError(Exception):
    """A failure reported to the client as an application/problem+json response."""

    def __init__(
        self,
        status: int,
        code: str,
        title: str,
        detail: str,
        *,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
        **params: Any,
    ) -> None:
        """`detail` is a full sentence, a `str.format` template of `params` when given:
        `body` says the title and the detail in the language asked (api.i18n)."""
        text = detail.format(**params) if params else detail
        super().__init__(text)
        self.status = status
        self.code = code
        # a gateway code's title is the one of PROBLEM_CODES, wherever it is raised
        self.title = PROBLEM_CODES[code][1] if code in PROBLEM_CODES else title
        self.detail = text
        self.template = detail
        self.params: dict[str, Any] = params
        self.field = field
        self.headers: dict[str, str] = dict(headers or {})
        self.extra: dict[str, Any] = dict(extra or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status}, {self.code!r}, {self.detail!r})"

    def body(
        self, instance: str, say: Callable[[str, Mapping[str, Any]], str] | None = None
    ) -> dict[str, Any]:
        """Return the problem+json members; `extra` never overrides the standard ones.

        `say(template, params)` words the title and the detail in the language asked;
        without it they are the English ones.
        """
        members: dict[str, Any] = dict(self.extra)
        title, detail = self.title, self.detail
        if say is not None:
            title, detail = say(self.title, {}), say(self.template, self.params)
        members.update(
            type=problem_type(self.code),
            title=title,
            status=self.status,
            detail=detail,
            code=self.code,
            instance=instance,
        )
        if self.field is not None:
            members["field"] = self.field
        return members


def problem(
    code: str,
    detail: str,
    *,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
    **params: Any,
) -> ApiError:
    """Return the ApiError of a gateway code; its status and title come from PROBLEM_CODES."""
    status, title = PROBLEM_CODES[code]
    return ApiError(
        status, code, title, detail, field=field, headers=headers, extra=extra, **params
    )


EVALUATOR_UNAVAILABLE_DETAIL = "The hand evaluator cannot be reached; retry shortly."
STORE_UNAVAILABLE_DETAIL = "The table store cannot be reached; retry shortly."


class EvaluatorUnavailable(ApiError):  # noqa: N818 - named after its problem code
    """503 evaluator_unavailable, with Retry-After: 2: the evaluator could not be reached
    or did not answer within EVALUATOR_TIMEOUT (calls to an unreachable evaluator are
    retried until then, so the two look alike from here)."""

    def __init__(self, detail: str = EVALUATOR_UNAVAILABLE_DETAIL, **params: Any) -> None:
        status, title = PROBLEM_CODES["evaluator_unavailable"]
        super().__init__(
            status, "evaluator_unavailable", title, detail, headers={"Retry-After": "2"}, **params
        )


class StoreUnavailable(ApiError):  # noqa: N818 - named after its problem code
    """503 store_unavailable, with Retry-After: 1."""

    def __init__(self, detail: str = STORE_UNAVAILABLE_DETAIL) -> None:
        status, title = PROBLEM_CODES["store_unavailable"]
        super().__init__(status, "store_unavailable", title, detail, headers={"Retry-After": "1"})


def not_replicated() -> ApiError:
    """503 not_replicated, with Retry-After: 1: a change stands on the primary, but too
    few replicas confirmed it in time for it to be acknowledged."""
    return ApiError(
        503,
        "not_replicated",
        PROBLEM_CODES["not_replicated"][1],
        "The change was made, but no replica confirmed it in time, so it is not"
        " acknowledged yet: retry with the same Idempotency-Key to get its answer once a"
        " replica has it, or read the table to see whether it stands.",
        headers={"Retry-After": "1"},
    )


def table_not_found(table_id: str) -> ApiError:
    """Return 404 table_not_found."""
    return problem(
        "table_not_found", "No table {table_id!r} exists.", field="table_id", table_id=table_id
    )


def seat_not_found(seat: int | str) -> ApiError:
    """Return 404 seat_not_found."""
    return problem(
        "seat_not_found", "Seat {seat} is not taken at this table.", field="seat", seat=seat
    )


def hand_not_found(hand_number: int | str) -> ApiError:
    """Return 404 hand_not_found: no such deal, or it is still being played."""
    return problem(
        "hand_not_found",
        "Hand {hand_number} has not been played to the end at this table.",
        field="hand_number",
        hand_number=hand_number,
    )


def missing_token() -> ApiError:
    """Return 401 missing_token with the RFC 6750 Bearer challenge."""
    return problem(
        "missing_token",
        "This request needs a player's credential or a seat token in an"
        " 'Authorization: Bearer <credential>' header.",
        headers={"WWW-Authenticate": 'Bearer realm="cardroom"'},
    )


def invalid_token() -> ApiError:
    """Return 401 invalid_token: unknown, malformed, or its seat has left."""
    return problem(
        "invalid_token",
        "The seat token is not valid at this table; a token stops working when its seat is left.",
        headers={"WWW-Authenticate": 'Bearer realm="cardroom", error="invalid_token"'},
    )


def wrong_seat(seat: int | str) -> ApiError:
    """Return 403 wrong_seat: the token belongs to another seat than the one named."""
    return problem(
        "wrong_seat", "The seat token does not belong to seat {seat}.", field="seat", seat=seat
    )


def idempotency_key_reused() -> ApiError:
    """Return 409 idempotency_key_reused: the key was first used with another request."""
    return problem(
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different request; use a new key "
        "for a new request.",
        field="Idempotency-Key",
    )


def idempotency_in_progress() -> ApiError:
    """Return 409 idempotency_in_progress: the first request with the key still runs."""
    return problem(
        "idempotency_in_progress",
        "A request with this Idempotency-Key is still being processed; retry shortly.",
        field="Idempotency-Key",
        headers={"Retry-After": "1"},
    )


def too_much_contention() -> ApiError:
    """Return 409 conflict: the table changed under the request too many times in a row."""
    return problem(
        "conflict",
        "The table is changing too quickly to apply this request; retry shortly.",
        headers={"Retry-After": "1"},
    )


def stale_version(current_etag: str) -> ApiError:
    """Return 412 stale_version: If-Match names an older version than `current_etag`."""
    return problem(
        "stale_version",
        "The table has changed since the version given in If-Match; it is now {current_etag}.",
        field="If-Match",
        headers={"ETag": current_etag},
        current_etag=current_etag,
    )


def internal_error() -> ApiError:
    """Return 500 internal_error, whose detail reveals nothing about the cause."""
    return problem("internal_error", INTERNAL_DETAIL)


def from_rule_error(code: str, detail: str, field: str | None, **params: Any) -> ApiError:
    """Return the ApiError for a game rule's code, status from RULE_ERROR_STATUS (`detail`
    a template of `params`, as a RuleError's `template` and `params` are)."""
    if code in INTERNAL_RULE_CODES:
        log.error("the rules refused the gateway's own call: %s (%s)", code, detail)
        return internal_error()
    # a rule may also raise one of the gateway's own codes (invalid_card, unsupported_action)
    status = RULE_ERROR_STATUS.get(code) or PROBLEM_CODES.get(code, (RULE_ERROR_DEFAULT_STATUS,))[0]
    title = code.replace("_", " ").capitalize()
    return ApiError(status, code, title, detail, field=field, **params)
