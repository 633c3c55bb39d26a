"""Request headers, read by one set of rules for the Flask routes and the moves' endpoint.

Each function takes the header's value as the request sent it (None when absent), so
a Flask route passes `request.headers.get(...)` and the moves' plain WSGI endpoint
(`gateway.http.moves`) the environ's entry.
"""

from __future__ import annotations

import hashlib

from gateway.errors import ApiError
from gateway.service.idempotency import Idempotency

_KEY_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, if it has one."""
    if authorization is None:
        return None
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def seat_token(authorization: str | None) -> str | None:
    """The seat token of an `Authorization: Bearer <token>` header; None without one.

    Any other Authorization header is 401 invalid_token.
    """
    token = bearer_token(authorization)
    if token is None and authorization is not None:
        raise ApiError(
            401,
            "invalid_token",
            "Invalid Authorization header",
            "Send the seat token as 'Authorization: Bearer <token>'.",
            headers={"WWW-Authenticate": "Bearer"},
        )
    return token


def idempotency(
    key: str | None, method: str, path: str, body: bytes, authorization: str | None
) -> Idempotency | None:
    """The request's `Idempotency-Key` with what makes two requests under it the same.

    A key is 1 to 255 printable ASCII characters without spaces (400
    invalid_idempotency_key otherwise).
    """
    if key is None:
        return None
    if not 1 <= len(key) <= 255 or not set(key) <= _KEY_CHARS:
        raise ApiError(
            400,
            "invalid_idempotency_key",
            "Invalid Idempotency-Key",
            "An Idempotency-Key is 1 to 255 printable characters without spaces.",
            field="Idempotency-Key",
        )
    return Idempotency(key, fingerprint(method, path, body, authorization))


def prefers_minimal(prefer: str | None) -> bool:
    """Whether a `Prefer` header says `return=minimal` (RFC 7240).

    Preferences are comma-separated, each `name[=value][; parameters]`; names and this
    value are matched without regard to case, a quoted value is unquoted. Preferences
    the gateway does not know, and malformed ones, are ignored, and of a preference
    given more than once only the first counts, as the RFC asks (section 2).
    """
    # the server joins repeated fields into one, comma-separated (WSGI's environ)
    if prefer is None:
        return False
    for preference in prefer.split(","):
        name, _, value = preference.split(";", 1)[0].partition("=")
        if name.strip().lower() == "return":
            return value.strip().strip('"').lower() == "minimal"
    return False


def fingerprint(method: str, path: str, body: bytes, token: str | None) -> str:
    """What makes two requests with one Idempotency-Key the same request."""
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode(), body, (token or "").encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()
