"""The one path every request takes, whichever route answers it.

    metrics ( errors ( steps.before -> endpoint -> steps.after ) )

`Pipeline` is the gateway's WSGI application. For each request it runs its steps in
order (the rate limits, then the body read within its limit: `api.http.steps`),
hands the request to the endpoint that answers it (the moves' endpoint for a move,
Flask for everything else), lets each step see the answer's status and headers, turns
any failure into a problem+json answer (`api.http.problems`, in the language the request
asked for: `request_language`) and counts the request in the metrics. Flask itself
keeps no hook of its own for any of these: its exceptions propagate to the pipeline, so
a move and a table read meet the same steps in the same order. A new cross-cutting step
is one more `Step` in the list.

A step's `after` sees the status and headers only. One that must rewrite the body too
(compression) registers a `BodyFilter` on the exchange from its `after`: the pipeline
then holds the answer back, joins its body, runs the filters in order (each may amend
the headers it was given) and sends the result with its new Content-Length. An answer
no filter was registered for (an event stream, for one) flows through untouched.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from flask import Flask
from werkzeug.datastructures import LanguageAccept
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES, parse_accept_header

from api.http.problems import http_status, problem_of, problem_parts
from api.i18n import LANGUAGES
from api.telemetry import observe_request

if TYPE_CHECKING:
    from _typeshed import OptExcInfo
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

Headers = list[tuple[str, str]]
# a filter of an answer's whole body, registered by a step's `after` (`Exchange.filters`)
BodyFilter = Callable[[bytes], bytes]
# the environ key where Flask's router leaves the rule it matched (the metrics' label)
ROUTE_KEY = "cardroom.route"
# the environ key of a route that is not timed (a long poll or a stream)
UNTIMED_KEY = "cardroom.untimed"
# the environ key where the language a request asked for is kept once read (its problems
# are said in it, whichever step or endpoint refuses it: the language step reads it too)
LANGUAGE_KEY = "cardroom.language"
UNMATCHED = "unmatched"


class Exchange:
    """One request on its way through the pipeline, and what the steps learnt of it."""

    __slots__ = ("body", "environ", "filters", "method", "path", "route", "status")

    def __init__(self, environ: WSGIEnvironment) -> None:
        """The request of `environ`: its body is read by the body step."""
        self.environ = environ
        self.method: str = environ.get("REQUEST_METHOD", "GET").upper()
        self.path: str = request_path(environ.get("PATH_INFO", ""))
        self.route: str = UNMATCHED
        self.body = b""
        self.status: int | None = None
        self.filters: list[BodyFilter] = []

    def header(self, name: str) -> str | None:
        """The request header `name` as sent, None when absent."""
        key = name.upper().replace("-", "_")
        if key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            return self.environ.get(key)
        return self.environ.get("HTTP_" + key)


class Answered(Exception):  # noqa: N818 (an answer, not an error)
    """Raised by a step's `before` that answers the request itself (a CORS preflight):
    the endpoint is skipped, and every step's `after` still sees the answer."""

    def __init__(self, status: int, headers: Headers, body: bytes = b"") -> None:
        """The answer's status, headers and body."""
        super().__init__(status)
        self.status = status
        self.headers = headers
        self.body = body


class Step(Protocol):
    """A cross-cutting step: it sees every request before its endpoint, every answer after."""

    def before(self, exchange: Exchange) -> None:
        """Check or prepare the request; raise an `ApiError` to refuse it, `Answered` to
        answer it."""

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """See (and amend) the status and headers of the answer, refusals included."""


class Endpoint(Protocol):
    """An answer below Flask: it claims requests by their method and path."""

    def route_of(self, exchange: Exchange) -> str | None:
        """The route label of a request this endpoint answers, None for any other."""

    def answer(self, exchange: Exchange) -> tuple[int, Headers, bytes]:
        """The status, headers and body of the answer."""


@functools.lru_cache(maxsize=512)
def negotiate(header: str) -> str:
    """The language of LANGUAGES an Accept-Language value prefers; English when none."""
    accepted = parse_accept_header(header, LanguageAccept)
    return accepted.best_match(LANGUAGES) or "en"


def request_language(environ: dict[str, Any]) -> str | None:
    """The language a request asked for; None when it sent no Accept-Language."""
    language = environ.get(LANGUAGE_KEY)
    if language is None:
        header = environ.get("HTTP_ACCEPT_LANGUAGE")
        if header is None:
            return None
        language = environ[LANGUAGE_KEY] = negotiate(header)
    return str(language)


def request_path(path_info: str) -> str:
    """The path as werkzeug's routing reads it: UTF-8 decoded, leading slashes as one."""
    return "/" + path_info.encode("latin-1").decode(errors="replace").lstrip("/")


def status_line(status: int) -> str:
    """The WSGI status line of `status`, worded as werkzeug words it ("404 NOT FOUND")."""
    return f"{status} {HTTP_STATUS_CODES.get(status, 'unknown').upper()}"


_STATUS_LINES = {status: status_line(status) for status in HTTP_STATUS_CODES}


class Pipeline:
    """The gateway's WSGI application: every request through `steps`, then its endpoint."""

    def __init__(
        self, app: WSGIApplication, steps: Sequence[Step], endpoints: Sequence[Endpoint] = ()
    ) -> None:
        """Requests no endpoint of `endpoints` claims go on to `app` (Flask's)."""
        self.app = app
        self.steps: list[Step] = list(steps)
        self.endpoints = list(endpoints)

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Answer one request."""
        started = time.perf_counter()
        exchange = Exchange(environ)
        held: list[tuple[str, Headers, OptExcInfo | None]] = []
        written: list[bytes] = []

        def respond(
            status: str, headers: Headers, exc_info: OptExcInfo | None = None
        ) -> Callable[[bytes], object]:
            exchange.status = int(status[:3])
            exchange.filters.clear()  # an answer started again (exc_info) starts afresh
            held.clear()
            for step in self.steps:
                step.after(exchange, exchange.status, headers)
            if exchange.filters:
                held.append((status, headers, exc_info))
                return written.append
            return start_response(status, headers, exc_info)

        try:
            result = self._answer(exchange, cast("StartResponse", respond))
        except Answered as answer:
            result = _send(respond, answer.status, list(answer.headers), answer.body)
        except HTTPException as error:
            if exchange.status is not None:
                raise
            if http_status(error) < 400:  # a redirect (a missing trailing slash) is no error
                result = error.get_response(environ)(environ, cast("StartResponse", respond))
            else:
                result = self._problem(exchange, error, respond)
        except Exception as error:
            if exchange.status is not None:
                raise  # the answer has begun: nothing else can be said
            result = self._problem(exchange, error, respond)
        if held:
            result = _filtered(result, written, held[0], exchange.filters, start_response)
        route = environ.get(ROUTE_KEY, exchange.route)
        timed = None if environ.get(UNTIMED_KEY) else started
        observe_request(exchange.method, route, exchange.status or 500, timed)
        return result

    def _answer(self, exchange: Exchange, respond: StartResponse) -> Iterable[bytes]:
        endpoint = None
        for candidate in self.endpoints:
            route = candidate.route_of(exchange)
            if route is not None:
                exchange.route, endpoint = route, candidate
                break
        for step in self.steps:
            step.before(exchange)
        if endpoint is None:
            return self.app(exchange.environ, respond)
        status, headers, body = endpoint.answer(exchange)
        return _send(respond, status, headers, body)

    @staticmethod
    def _problem(
        exchange: Exchange, error: Exception, respond: Callable[[str, Headers], object]
    ) -> Iterable[bytes]:
        problem = problem_of(error, exchange.method, exchange.path)
        language = request_language(exchange.environ)
        status, headers, body = problem_parts(problem, exchange.path, language)
        return _send(respond, status, headers, body)


def _send(
    respond: Callable[[str, Headers], object], status: int, headers: Headers, body: bytes
) -> list[bytes]:
    if body:
        headers.insert(1, ("Content-Length", str(len(body))))
    respond(_STATUS_LINES.get(status) or status_line(status), headers)
    return [body]


def _filtered(
    result: Iterable[bytes],
    written: list[bytes],
    answer: tuple[str, Headers, OptExcInfo | None],
    filters: Sequence[BodyFilter],
    start_response: StartResponse,
) -> list[bytes]:
    """The held answer's whole body through `filters`, then sent with its new length."""
    try:
        body = b"".join([*written, *result])
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    status, headers, exc_info = answer
    for body_filter in filters:
        body = body_filter(body)
    headers[:] = [(name, value) for name, value in headers if name.lower() != "content-length"]
    headers.append(("Content-Length", str(len(body))))
    start_response(status, headers, exc_info)
    return [body]


def install_pipeline(
    app: Flask, steps: Sequence[Step], endpoints: Sequence[Endpoint] = ()
) -> Pipeline:
    """Put `app` behind the pipeline: Flask's failures propagate to it, its router names routes."""
    # every exception, werkzeug's routing ones included, goes out of Flask to the pipeline
    app.config["PROPAGATE_EXCEPTIONS"] = True
    app.config["TRAP_HTTP_EXCEPTIONS"] = True

    @app.url_value_preprocessor
    def _name_route(endpoint: str | None, values: dict[str, object] | None) -> None:
        from flask import request

        if request.url_rule is not None:
            request.environ[ROUTE_KEY] = request.url_rule.rule
        if endpoint in UNTIMED_ENDPOINTS:
            request.environ[UNTIMED_KEY] = True

    pipeline = Pipeline(app.wsgi_app, steps, endpoints)
    app.wsgi_app = pipeline  # type: ignore[method-assign]
    app.extensions["cardroom.pipeline"] = pipeline
    return pipeline


# long polls and event streams: their time is the client's wait, not the gateway's work
UNTIMED_ENDPOINTS = frozenset({"tables.events", "tables.event_stream"})
