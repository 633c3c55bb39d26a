"""The request pipeline's steps (`api.http.pipeline`): the rate limits and the body.

The steps run in the order the app lists them, before every endpoint, the moves'
endpoint and Flask's routes alike.
"""

from __future__ import annotations

import contextlib
import functools
import io
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING

from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wsgi import get_content_length, get_input_stream

from api.errors import ApiError, problem
from api.http.auth import principal_of
from api.http.limits import RequestLimits
from api.http.pipeline import Exchange, Headers

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

# The largest request body the gateway reads, however it is sent.
MAX_BODY_BYTES = 256 * 1024

# What orchestrators and scrapers poll: reachable whatever a client does.
UNLIMITED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# the environ key of a request whose connection is closed once it is answered (its
# answer says `Connection: close`: api.runtime.answers.closing)
CLOSE_KEY = "cardroom.close"
# the environ key of what counts a new player against its address's hourly allowance
# (429 rate_limited past it), called once the sign-up is found fit
ADMIT_PLAYER_KEY = "cardroom.admit_player"


class RateLimitStep:
    """429 rate_limited for a request over its address's or its credential's limit.

    It runs after the authentication step, so a player is counted as one whichever of
    their keys or tokens they send.
    """

    def __init__(self, limits: RequestLimits) -> None:
        """Count requests against `limits`."""
        self.limits = limits

    def before(self, exchange: Exchange) -> None:
        """Count the request; refuse it when a bucket it counts against is empty."""
        if exchange.path in UNLIMITED_PATHS:
            return
        environ = exchange.environ
        principal = principal_of(environ)
        scope = principal.scope if principal.kind in ("player", "seat") else None
        self.limits.check(environ.get("REMOTE_ADDR"), environ.get("HTTP_X_FORWARDED_FOR"), scope)
        creating = exchange.method == "POST" and exchange.path == "/v1/players"
        if creating and principal.kind != "operator":
            # counted by the route once the body is found fit: a refused one costs nothing
            environ[ADMIT_PLAYER_KEY] = functools.partial(
                self.limits.check_creation,
                environ.get("REMOTE_ADDR"),
                environ.get("HTTP_X_FORWARDED_FOR"),
            )

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Nothing to add to an answer."""


class BodyStep:
    """The request body, read once within MAX_BODY_BYTES however it is sent.

    A longer declared Content-Length is refused unread, and a streamed (chunked) body
    that runs past the limit is refused too (413 body_too_large) instead of cut short.
    What was read is the exchange's `body`, and what Flask reads again.
    """

    def __init__(self, timeout: float = 0.0) -> None:
        """Refuse a body that has not arrived whole within `timeout` seconds (0: never)."""
        self.timeout = timeout

    def before(self, exchange: Exchange) -> None:
        """Read the body; 413 body_too_large past the limit, 408 body_timeout past the time."""
        environ = exchange.environ
        length = get_content_length(environ)
        if not length and "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", "").lower():
            return
        try:
            with body_deadline(self.timeout):
                exchange.body = read_body(environ)
        except ApiError as error:
            if error.code == "body_timeout":
                _stop_reading(environ)
                environ[CLOSE_KEY] = True
            raise
        if length is None:  # a streamed body: Flask reads it again by its length
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            environ["wsgi.input_terminated"] = False
            environ["CONTENT_LENGTH"] = str(len(exchange.body))
        environ["wsgi.input"] = io.BytesIO(exchange.body)

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Nothing to add to an answer."""


class _BodyTimeout(Exception):  # noqa: N818 - raised by gevent's Timeout, then answered
    """The body did not arrive in time."""


@contextlib.contextmanager
def body_deadline(seconds: float) -> Iterator[None]:
    """Cut a body read short after `seconds`: 408 body_timeout.

    Only in a gevent worker (the deployed one), where a read waits cooperatively and a
    `gevent.Timeout` interrupts it; elsewhere (tests in one thread, gthread workers) the
    read is left alone and the edge's own body timeout applies (deploy/edge).
    """
    if seconds <= 0 or not _gevent_patched():
        yield
        return
    import gevent

    try:
        with gevent.Timeout(seconds, _BodyTimeout):
            yield
    except _BodyTimeout:
        raise problem(
            "body_timeout",
            "The request body did not arrive within {seconds:g} s.",
            seconds=seconds,
        ) from None


def _stop_reading(environ: WSGIEnvironment) -> None:
    """Read nothing more from this connection: the rest of a cut body is no request.

    A WSGI answer may not say `Connection: close` (a hop-by-hop header); gunicorn closes
    the connection once it finds no next request to read.
    """
    sock = environ.get("gunicorn.socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)


def _gevent_patched() -> bool:
    try:
        from gevent import monkey
    except ImportError:
        return False
    return bool(monkey.is_module_patched("socket"))


def body_too_large() -> ApiError:
    """Return 413 body_too_large."""
    return problem("body_too_large", "The request body is larger than this server accepts.")


def read_body(environ: WSGIEnvironment) -> bytes:
    """A request's body, at most MAX_BODY_BYTES, else 413 body_too_large."""
    try:
        data: bytes = get_input_stream(environ, max_content_length=MAX_BODY_BYTES).read()
    except RequestEntityTooLarge:
        raise body_too_large() from None
    streamed = get_content_length(environ) is None
    # werkzeug stops a streamed body at the limit without saying whether more was sent
    if streamed and len(data) >= MAX_BODY_BYTES and environ["wsgi.input"].read(1):
        raise body_too_large()
    return data
