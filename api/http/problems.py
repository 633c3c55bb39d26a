"""Every failure as an RFC 9457 problem: the one mapping from an exception to its answer.

The gateway's own errors (`api.errors.ApiError`) keep their status and code; a game
rule's (`RuleError`) takes its status from `RULE_ERROR_STATUS`; werkzeug's routing and
body exceptions get a stable code of their own; an unreachable Redis is 503
store_unavailable; anything else is 500 internal_error, its traceback logged and nothing
of it in the answer. The request pipeline (`api.http.pipeline`) calls `problem_of`
for every route.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from werkzeug.exceptions import HTTPException, MethodNotAllowed

from api.adapters.replication import NotReplicated
from api.adapters.store import STORE_ERRORS
from api.errors import (
    INTERNAL_DETAIL,
    PROBLEM_CODES,
    PROBLEM_CONTENT_TYPE,
    ApiError,
    StoreUnavailable,
    from_rule_error,
    internal_error,
    not_replicated,
)
from api.games.common import RuleError
from api.i18n import N_
from api.i18n.catalogs import say

logger = logging.getLogger("api.errors")
gateway_log = logging.getLogger("cardroom.gateway")

Headers = list[tuple[str, str]]

# Werkzeug's own exceptions (routing, body limits) by status -> stable code.
HTTP_EXCEPTION_CODES: dict[int, str] = {
    400: "bad_request",
    404: "route_not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "body_too_large",
    415: "unsupported_media_type",
}


def problem_body(error: ApiError, instance: str, language: str | None) -> dict[str, Any]:
    """The problem+json members of `error`, its title and detail in `language`."""
    if language is None or language == "en":
        return error.body(instance)
    return error.body(instance, lambda template, params: say(language, template, params))


def problem_parts(
    error: ApiError, instance: str, language: str | None = None
) -> tuple[int, Headers, bytes]:
    """The status, headers and application/problem+json body of `error` about `instance`,
    its title and detail in `language` (English when None)."""
    body = problem_body(error, instance, language)
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return (
        error.status,
        [("Content-Type", PROBLEM_CONTENT_TYPE), *error.headers.items()],
        text.encode(),
    )


def problem_of(error: Exception, method: str, path: str) -> ApiError:
    """The problem a failure of `method path` is answered with, logged as it deserves."""
    if isinstance(error, ApiError):
        if error.status >= 500:
            logger.warning("%s %s -> %s %s", method, path, error.status, error.code)
        return error
    if isinstance(error, RuleError):
        return from_rule_error(error.code, error.template, error.field, **error.params)
    if isinstance(error, HTTPException):
        return _from_http_exception(error, method, path)
    if isinstance(error, NotReplicated):
        gateway_log.warning(
            "write not replicated in time",
            extra={"confirmed": error.confirmed, "required": error.required},
        )
        return not_replicated()
    if isinstance(error, STORE_ERRORS):
        gateway_log.warning("redis unavailable", extra={"error": type(error).__name__})
        return StoreUnavailable()
    logger.error("Unhandled error on %s %s", method, path, exc_info=error)
    return internal_error()


def http_status(error: HTTPException) -> int:
    """The status werkzeug answers `error` with."""
    if error.code is not None:
        return error.code
    return error.response.status_code if error.response is not None else 500


# what werkzeug refuses before an endpoint runs, said in words the catalogues hold
_HTTP_DETAILS: dict[int, str] = {
    400: N_("The request is not one this server can read."),
    406: N_("This server cannot answer in any media type the request accepts."),
    415: N_("The request body's media type is not one this endpoint reads."),
}


def _from_http_exception(error: HTTPException, method: str, path: str) -> ApiError:
    status = http_status(error)
    if status == 500:
        logger.error("Internal error on %s %s", method, path, exc_info=error)
        return internal_error()
    code = HTTP_EXCEPTION_CODES.get(status) or error.name.lower().replace(" ", "_")
    title = PROBLEM_CODES[code][1] if code in PROBLEM_CODES else error.name
    headers: dict[str, str] = {}
    params: dict[str, Any] = {}
    if status == 404:
        detail = N_("No route matches {method} {path}.")
        params = {"method": method, "path": path}
    elif status == 405:
        detail = N_("{method} is not allowed on {path}.")
        params = {"method": method, "path": path}
        if isinstance(error, MethodNotAllowed) and error.valid_methods:
            headers["Allow"] = ", ".join(sorted(error.valid_methods))
    elif status == 413:
        detail = N_("The request body is larger than this server accepts.")
    elif status >= 500:
        detail = INTERNAL_DETAIL
    else:
        # werkzeug's own words are English only: the statuses it answers here have ours
        detail = _HTTP_DETAILS.get(status) or error.description or error.name
    return ApiError(status, code, title, detail, headers=headers, **params)
