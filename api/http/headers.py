"""Request headers, read by one set of rules for the Flask routes and the moves' endpoint.

Each function takes the header's value as the request sent it (None when absent), so
a Flask route passes `request.headers.get(...)` and the moves' plain WSGI endpoint
(`api.http.moves`) the environ's entry.
"""

from __future__ import annotations

import hashlib

from api.errors import ApiError
from api.service.idempotency import Idempotency

_KEY_CHARS = frozenset(chr(c) for c in range(0x21, 0x7F))


def idempotency(
    key: str | None, method: str, path: str, body: bytes, scope: str
) -> Idempotency | None:
    """The request's `Idempotency-Key` with what makes two requests under it the same.

    A key belongs to the credential that sent it (`scope`: the player, the seat token,
    the operator): the same key from another is another key, so a replay never hands
    one player's answer, or secret, to another. A key is 1 to 255 printable ASCII
    characters without spaces (400 invalid_idempotency_key otherwise).
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
    return Idempotency(f"{scope} {key}", fingerprint(method, path, body, scope))


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


def fingerprint(method: str, path: str, body: bytes, scope: str) -> str:
    """What makes two requests with one Idempotency-Key the same request."""
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode(), body, scope.encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()
