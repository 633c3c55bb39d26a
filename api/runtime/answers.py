"""What gunicorn answers by itself, as problem+json like every other answer, and the
connections gunicorn must close said to close.

gunicorn refuses some requests before the gateway sees them (a control character in a
header, a bad Content-Length, Content-Length with Transfer-Encoding, a request line over
4,094 bytes, too many or too long headers...) and writes its own HTML page for each
(`gunicorn.workers.base.Worker.handle_error`, through `gunicorn.util.write_error`). Each
worker, once forked, writes them as `application/problem+json` instead, with a code of
the gateway's family; the headers were not read, so they are said in English.

A 408 body_timeout closes the connection (the rest of the body is no request), so its
answer says `Connection: close`: `closing` wraps the app to tell gunicorn so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from api.errors import PROBLEM_CODES, problem_type
from api.http.steps import CLOSE_KEY

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

# the code of each status gunicorn answers by itself
GUNICORN_CODES: dict[int, str] = {
    400: "bad_request",
    403: "forbidden",
    414: "uri_too_long",
    417: "expectation_failed",
    431: "headers_too_large",
    500: "internal_error",
    501: "not_implemented",
}


def problem_answer(status: int, detail: str) -> bytes:
    """The whole HTTP answer, as gunicorn writes it, of a refusal with `status`."""
    code = GUNICORN_CODES.get(status, "bad_request" if status < 500 else "internal_error")
    code_status, title = PROBLEM_CODES[code]
    body = {
        "type": problem_type(code),
        "title": title,
        "status": code_status,
        "detail": detail or f"{title}.",
        "code": code,
    }
    text = json.dumps(body, separators=(",", ":")).encode()
    head = (
        f"HTTP/1.1 {code_status} {title}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/problem+json\r\n"
        f"Content-Length: {len(text)}\r\n\r\n"
    )
    return head.encode("latin-1") + text


def write_problem(sock: Any, status: int, reason: str, detail: str) -> None:
    """gunicorn's `util.write_error`, written as problem+json."""
    from gunicorn import util

    util.write_nonblock(sock, problem_answer(status, detail))


def answer_problems() -> None:
    """Make this worker's gunicorn write its own refusals as problem+json."""
    from gunicorn import util

    util.write_error = write_problem


def closing(app: WSGIApplication) -> WSGIApplication:
    """`app`, whose answers to requests a step marked (`CLOSE_KEY`) tell gunicorn to
    close the connection: they then say `Connection: close`, and it is closed."""

    def application(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        def respond(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if environ.get(CLOSE_KEY):
                force: Callable[[], None] | None = getattr(
                    getattr(start_response, "__self__", None), "force_close", None
                )
                if force is not None:
                    force()  # gunicorn's response: it says close, then closes
            return start_response(status, headers, exc_info)

        return app(environ, respond)

    return application
