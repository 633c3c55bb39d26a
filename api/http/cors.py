"""Cross-origin requests (CORS): which other sites' pages may call the API from a browser.

The step runs first in the pipeline (`api.http.pipeline`), before authentication,
so a preflight is answered without a credential and every answer, a refusal's
problem+json included, carries the headers that let an allowed page read it. It is a
step rather than flask-cors because flask-cors hooks Flask's `after_request`, which the
moves' endpoint below Flask and the pipeline's own problem answers never reach.

- An allowed origin is one of `CORS_ORIGINS` (exact origins), or the gateway's own
  (the `Origin` naming the request's `Host`); `*` alone allows any.
- A preflight (OPTIONS with `Access-Control-Request-Method`) is answered here with
  204: for an allowed origin with the methods and headers the API takes, for any other
  with no `Access-Control-Allow-*` header at all, which the browser takes as a refusal.
- Every other answer to an allowed origin names it in `Access-Control-Allow-Origin` and
  exposes the headers a client reads. No `Access-Control-Allow-Credentials`: the API
  takes credentials in `Authorization`, never in cookies.
"""

from __future__ import annotations

from collections.abc import Iterable

from api.http.pipeline import Answered, Exchange, Headers

ANY = "*"
ALLOW_METHODS = "GET, HEAD, POST, DELETE"
ALLOW_HEADERS = (
    "Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, Prefer, Last-Event-ID"
)
EXPOSE_HEADERS = (
    "ETag, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, "
    "Idempotent-Replayed, Preference-Applied, WWW-Authenticate"
)
# how long a browser keeps a preflight's answer, in seconds
MAX_AGE = "600"


class CorsStep:
    """Answer preflights and mark answers for the origins `origins` allows."""

    def __init__(self, origins: Iterable[str]) -> None:
        """`origins`: exact origins as `Settings.cors_origins` holds them, or ("*",)."""
        self.origins = frozenset(origins)
        self.any = ANY in self.origins

    def allows(self, exchange: Exchange, origin: str) -> bool:
        """Whether a page of `origin` may read the answer to `exchange`."""
        if self.any or origin in self.origins:
            return True
        host = exchange.environ.get("HTTP_HOST")
        return host is not None and origin.partition("://")[2] == host.lower()

    def before(self, exchange: Exchange) -> None:
        """Answer a preflight (204) without going further."""
        origin = exchange.header("Origin")
        if exchange.method != "OPTIONS" or origin is None:
            return
        requested = exchange.header("Access-Control-Request-Method")
        if requested is None:
            return
        headers: Headers = []
        if self.allows(exchange, origin):
            headers += [
                ("Access-Control-Allow-Methods", ALLOW_METHODS),
                ("Access-Control-Allow-Headers", ALLOW_HEADERS),
                ("Access-Control-Max-Age", MAX_AGE),
            ]
        raise Answered(204, headers)

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Name an allowed origin and expose the headers a client reads."""
        if not self.any:
            headers.append(("Vary", "Origin"))
        origin = exchange.header("Origin")
        if origin is None or not self.allows(exchange, origin):
            return
        headers.append(("Access-Control-Allow-Origin", ANY if self.any else origin))
        if exchange.method != "OPTIONS":
            headers.append(("Access-Control-Expose-Headers", EXPOSE_HEADERS))
