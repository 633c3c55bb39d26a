"""Every move of every game, `POST /v1/tables/{table_id}/actions`, answered in plain WSGI.

A move is the request the gateway answers most, and most of what it costs is the
move itself (the rules, one round trip to Redis); around it, Flask's request and
application contexts, routing, hooks and response objects cost a declare about as much
CPU again as the whole of `GET /healthz`. So `MovesEndpoint` wraps the Flask app
(`app.wsgi_app`, where Flask's own test client also calls it) and answers these POSTs
itself, through the pieces the Flask routes use, in the same order: the rate limits
(`gateway.http.limits.RequestLimits`), the body and its limit (`read_body`, `parse_json_body`),
the headers (`gateway.http.headers`), the table service, problem+json errors for every
failure (`gateway.errors.problem_of`) and the request metrics (`observe_request`).

Everything else goes on to Flask: other paths, and other methods on this one, whose
rule Flask keeps (405 with `Allow`, `OPTIONS`). The path is matched as werkzeug's
routing matches it (the WSGI path decoded as UTF-8, leading slashes merged), so a
POST the rule would match never reaches Flask.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from werkzeug.http import HTTP_STATUS_CODES

from gateway import jsonio
from gateway.errors import problem_of, problem_parts
from gateway.http.headers import idempotency, prefers_minimal, seat_token
from gateway.http.limits import RequestLimits, read_body
from gateway.http.schemas import parse_json_body
from gateway.service.tables import Outcome, TableService
from gateway.telemetry import observe_request

if TYPE_CHECKING:
    from collections.abc import Iterable

    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

ROUTE = "/v1/tables/<table_id>/actions"
_PATH = re.compile(r"/v1/tables/([^/]+)/actions")

Headers = list[tuple[str, str]]


def move_path(path_info: str) -> tuple[str, str] | None:
    """The path and table id of a move's WSGI `PATH_INFO`; None for any other path.

    Read as werkzeug's routing reads it: the WSGI (latin-1) string decoded as UTF-8,
    leading slashes as one.
    """
    path = "/" + path_info.encode("latin-1").decode(errors="replace").lstrip("/")
    match = _PATH.fullmatch(path)
    return None if match is None else (path, match.group(1))


def status_line(status: int) -> str:
    """The WSGI status line of `status`, worded as werkzeug words it ("404 NOT FOUND")."""
    return f"{status} {HTTP_STATUS_CODES.get(status, 'unknown').upper()}"


_STATUS_LINES = {status: status_line(status) for status in HTTP_STATUS_CODES}


class MovesEndpoint:
    """WSGI middleware: the moves' POSTs answered here, every other request by `app`."""

    def __init__(
        self, app: WSGIApplication, service: TableService, limits: RequestLimits | None
    ) -> None:
        """Answer moves with `service`, counted against `limits`; pass the rest to `app`."""
        self.app = app
        self.service = service
        self.limits = limits

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        """Answer a move, or hand the request on."""
        move = None
        if environ.get("REQUEST_METHOD", "").upper() == "POST":
            move = move_path(environ.get("PATH_INFO", ""))
        if move is None:
            return self.app(environ, start_response)
        path, table_id = move
        started = time.perf_counter()
        try:
            status, headers, body = self._move(environ, path, table_id)
        except Exception as error:  # every failure is answered as Flask's handlers answer it
            status, headers, body = problem_parts(problem_of(error, "POST", path), path)
        if body:
            headers.insert(1, ("Content-Length", str(len(body))))
        observe_request("POST", ROUTE, status, started)
        start_response(_STATUS_LINES.get(status) or status_line(status), headers)
        return [body]

    def _move(
        self, environ: WSGIEnvironment, path: str, table_id: str
    ) -> tuple[int, Headers, bytes]:
        authorization = environ.get("HTTP_AUTHORIZATION")
        if self.limits is not None:
            self.limits.check(
                environ.get("REMOTE_ADDR"), environ.get("HTTP_X_FORWARDED_FOR"), authorization
            )
        data = read_body(environ)
        action = parse_json_body(data, environ.get("CONTENT_TYPE"), "Action")
        key = idempotency(environ.get("HTTP_IDEMPOTENCY_KEY"), "POST", path, data, authorization)
        minimal = prefers_minimal(environ.get("HTTP_PREFER"))
        outcome = self.service.act(
            table_id,
            seat_token(authorization),
            action,
            environ.get("HTTP_IF_MATCH"),
            key,
            minimal,
        )
        return _response(outcome, minimal)


def _response(outcome: Outcome, minimal: bool) -> tuple[int, Headers, bytes]:
    """The status, headers (Content-Length aside) and body of a move's outcome."""
    # a replay of a 200 also leaves its body out when asked; a replay of a 204 stays one
    if outcome.status == 204 or (minimal and outcome.status == 200):
        headers = dict(outcome.headers)  # its ETag...
        headers["Preference-Applied"] = "return=minimal"
        return 204, list(headers.items()), b""
    body = jsonio.dumps_bytes(outcome.body)
    return outcome.status, [("Content-Type", "application/json"), *outcome.headers.items()], body
