"""Every failure of a call as one exception family, built from the problem+json body.

`CardroomError` carries the problem's `status`, `code`, `title`, `detail` and `field`.
The class raised says the family (`NotFound`, `Conflict`, `Unprocessable`, ...) and, for
a game rule's refusal, also `RuleViolation`. To catch one code::

    try:
        seat.declare("in")
    except error_for("already_declared"):
        ...

`error_for(code)` is a class that every error with that code is an instance of. The
credentials' codes: 401 ``missing_token``, ``invalid_token`` (a key unknown or revoked,
a JWT that does not verify, a seat token whose seat has left) and ``invalid_ticket``;
403 ``player_required`` (a seat token where a player's credential is needed),
``operator_required``, ``wrong_seat`` and ``not_seated``; 404 ``player_not_found`` and
``key_not_found``; 409 ``already_seated`` and ``too_many_keys``; 410 ``table_closed``
(a `CardroomError` of no family); 429 ``quota_exceeded``
(its `problem` names the ``quota`` and its ``limit``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The game rules' codes (the gateway's OpenAPI description lists them with their status).
RULE_CODES: frozenset[str] = frozenset(
    {
        "not_your_turn",
        "already_drawn",
        "must_draw_first",
        "empty_discard_pile",
        "card_not_held",
        "cards_not_held",
        "cannot_discard_drawn",
        "no_combination",
        "invalid_combination",
        "already_declared",
        "no_hand_in_progress",
        "not_seated",
        "table_full",
        "game_in_progress",
        "not_enough_players",
        "already_started",
        "rebuy_not_allowed",
        "invalid_choice",
        "showdown_pending",
        "already_left",
        "invalid_buy_in",
        "invalid_option",
        "invalid_name",
        "name_taken",
        "too_late",
        "not_away",
    }
)


class CardroomError(Exception):
    """A call that failed: the gateway's problem details, or why no answer came."""

    def __init__(
        self,
        status: int | None,
        code: str,
        title: str,
        detail: str,
        field: str | None = None,
        *,
        problem: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
        method: str | None = None,
        url: str | None = None,
    ) -> None:
        """An error with the problem's members; `status` is None when no answer came."""
        super().__init__(detail)
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.field = field
        self.problem: dict[str, Any] = dict(problem or {})
        self.retry_after = retry_after
        self.method = method
        self.url = url

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.method and self.url else ""
        status = f"{self.status} " if self.status is not None else ""
        blame = f" [field {self.field}]" if self.field else ""
        return f"{status}{self.code}: {self.detail}{blame}{where}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.status!r}, {self.code!r}, {self.detail!r})"


class BadRequest(CardroomError):  # noqa: N818 - named after its HTTP family
    """400: the request could not be read (malformed JSON, bad parameter or header)."""


class Unauthorized(CardroomError):  # noqa: N818 - named after its HTTP family
    """401: no credential where one is needed, one that does not hold, or a bad ticket."""


class Forbidden(CardroomError):  # noqa: N818 - named after its HTTP family
    """403: the credential holds, but not for this (another seat, not a player's, ...)."""


class NotFound(CardroomError):  # noqa: N818 - named after its HTTP family
    """404: no such table, seat, hand, player, key or route."""


class Conflict(CardroomError):  # noqa: N818 - named after its HTTP family
    """409: the state refuses this now (a rule, a reused Idempotency-Key, a seat held)."""


class PreconditionFailed(CardroomError):  # noqa: N818 - named after its HTTP family
    """412: If-Match named a version the table has moved past."""


class Unprocessable(CardroomError):  # noqa: N818 - named after its HTTP family
    """422: a field is unknown, of the wrong type or out of range, or a move is impossible."""


class RateLimited(CardroomError):  # noqa: N818 - named after its HTTP family
    """429: too many requests, or a player's quota is full; `retry_after` says when to
    come back."""


class ServerError(CardroomError):
    """500 and other unexpected server failures."""


class Unavailable(CardroomError):  # noqa: N818 - named after its HTTP family
    """503 (and 502, 504): Redis or the evaluator cannot be reached; nothing was changed."""


class ConnectionFailed(Unavailable):
    """No answer at all: the connection failed or timed out (status None)."""


class RuleViolation(CardroomError):  # noqa: N818 - named after its HTTP family
    """A game rule refused the move (its code is one of `RULE_CODES`); nothing changed."""


class RuleConflict(Conflict, RuleViolation):
    """A move that the rules refuse now (409 with a rule code)."""


class RuleUnprocessable(Unprocessable, RuleViolation):
    """A move that the rules can never accept as sent (422 with a rule code)."""


class RuleForbidden(Forbidden, RuleViolation):
    """A move for a seat the caller does not hold (403 with a rule code)."""


class FairnessError(Exception):
    """A hand history whose fairness proof does not hold."""


_BY_STATUS: dict[int, type[CardroomError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: PreconditionFailed,
    422: Unprocessable,
    429: RateLimited,
    502: Unavailable,
    503: Unavailable,
    504: Unavailable,
}
_RULE_FAMILY: dict[type[CardroomError], type[CardroomError]] = {
    Conflict: RuleConflict,
    Unprocessable: RuleUnprocessable,
    Forbidden: RuleForbidden,
}
_CODE_CLASSES: dict[str, type[CardroomError]] = {}
_RAISED_CLASSES: dict[tuple[type[CardroomError], str], type[CardroomError]] = {}


def family(status: int | None, code: str) -> type[CardroomError]:
    """The family class for a status and code, before any per-code refinement."""
    if status is None:
        return ConnectionFailed
    base = _BY_STATUS.get(status)
    if base is None:
        base = ServerError if status >= 500 else CardroomError
    if code in RULE_CODES:
        base = _RULE_FAMILY.get(base, base)
    return base


def error_for(code: str) -> type[CardroomError]:
    """The class that every raised error with this `code` is an instance of (for `except`)."""
    found = _CODE_CLASSES.get(code)
    if found is None:
        name = "".join(part.capitalize() for part in code.split("_")) or "Unknown"
        found = type(f"{name}Code", (CardroomError,), {"__doc__": f"Any error coded {code}."})
        _CODE_CLASSES[code] = found
    return found


def raised_class(status: int | None, code: str) -> type[CardroomError]:
    """The class raised for a status and code: its family and its code's class together."""
    base = family(status, code)
    key = (base, code)
    found = _RAISED_CLASSES.get(key)
    if found is None:
        coded = error_for(code)
        # named after its family, so that tracebacks and reprs read "RuleConflict(...)"
        namespace = {"__doc__": base.__doc__, "__module__": __name__}
        # a status without a family of its own (410) has CardroomError itself as its base,
        # which the code's class already derives from
        bases = (coded,) if base is CardroomError else (base, coded)
        found = type(base.__name__, bases, namespace)
        _RAISED_CLASSES[key] = found
    return found


def from_problem(
    status: int,
    body: Mapping[str, Any] | None,
    *,
    retry_after: float | None,
    method: str,
    url: str,
    fallback: str = "",
) -> CardroomError:
    """The exception for an error response (problem+json, or anything else a proxy sent)."""
    problem = dict(body or {})
    code = str(problem.get("code") or f"http_{status}")
    title = str(problem.get("title") or f"HTTP {status}")
    detail = str(problem.get("detail") or fallback or title)
    field = problem.get("field")
    cls = raised_class(status, code)
    return cls(
        status,
        code,
        title,
        detail,
        None if field is None else str(field),
        problem=problem,
        retry_after=retry_after,
        method=method,
        url=url,
    )
