"""The authentication step: who each request comes from, resolved once for every route.

It runs before every endpoint (`api.http.pipeline`), reads the
`Authorization: Bearer` header and leaves the request's `Principal`
(`api.service.credentials`) in the WSGI environ, where the moves' endpoint and the
Flask routes take it (`principal_of`). It refuses nothing by itself: each operation
says what it needs (a write a player or a seat, a public read nothing), so a credential
that does not hold is refused by a write and ignored by a read of what is public. An
answer to a request whose credential did not hold says so in `WWW-Authenticate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.http.pipeline import Exchange, Headers
from api.service.credentials import ANONYMOUS, Credentials, Principal

PRINCIPAL_KEY = "cardroom.principal"
# set by a read that ignored a seat token its table no longer knows
IGNORED_KEY = "cardroom.credential_ignored"


def principal_of(environ: Mapping[str, Any]) -> Principal:
    """The principal the authentication step found for this request (anonymous if none)."""
    principal: Principal = environ.get(PRINCIPAL_KEY, ANONYMOUS)
    return principal


class AuthStep:
    """Resolve the request's credential into its principal."""

    def __init__(self, credentials: Credentials) -> None:
        """Resolve credentials with `credentials`."""
        self.credentials = credentials

    def before(self, exchange: Exchange) -> None:
        """Leave the request's principal in its environ."""
        authorization = exchange.environ.get("HTTP_AUTHORIZATION")
        if authorization is not None:
            exchange.environ[PRINCIPAL_KEY] = self.credentials.resolve(authorization)

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Tell a client whose credential did not hold, even where it was not needed."""
        principal = principal_of(exchange.environ)
        ignored = principal.refused is not None or exchange.environ.get(IGNORED_KEY)
        if ignored and status < 400:
            headers.append(("WWW-Authenticate", 'Bearer realm="cardroom", error="invalid_token"'))
