"""A page of another origin plays through the API in Chromium, as CORS_ORIGINS allows.

The page (`tests/browser/cross_origin/index.html`) is served from a second loopback
origin by a small static server; the gateway allows that origin alone. The browser
itself enforces CORS: from the allowed origin the page signs up two players, creates a
Guts table, seats both, plays a whole deal through fetch() and follows the event stream
(with a stream ticket); from a third origin the same call fails as a TypeError.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import RedisProcess, free_port, gateway_on

PAGES = Path(__file__).parent / "cross_origin"


class QuietHandler(SimpleHTTPRequestHandler):
    """Serves the page's folder without logging each request."""

    def log_message(self, format: str, *args: Any) -> None:
        """Say nothing."""


@pytest.fixture(scope="module")
def page_port() -> Iterator[int]:
    """A static server of the page's folder on a free loopback port."""
    handler = functools.partial(QuietHandler, directory=str(PAGES))
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def cors_gateway_url(
    page_port: int,
    redis_process: RedisProcess,
    evaluator_address: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """A gunicorn gateway that allows the page's origin (http://127.0.0.1:port) alone."""
    with gateway_on(
        redis_process,
        evaluator_address,
        tmp_path_factory.mktemp("cors") / "gunicorn.log",
        workers=1,
        threads=8,
        GATEWAY_GRACEFUL_TIMEOUT="2",
        LOG_LEVEL="warning",
        CORS_ORIGINS=f"http://127.0.0.1:{page_port}",
    ) as gateway:
        yield gateway.url


def outcome(browser: Any, url: str) -> dict[str, Any]:
    """Open `url` in a fresh context; what the page reported into #result."""
    context = browser.new_context()
    try:
        page = context.new_page()
        console: list[str] = []
        page.on("console", lambda message: console.append(message.text))
        page.goto(url)
        try:
            page.wait_for_function(
                "document.getElementById('result').textContent !== 'playing'", timeout=30_000
            )
        except Exception:
            progress = page.text_content("#progress")
            raise AssertionError(f"the page did not finish: {progress!r} {console}") from None
        result: dict[str, Any] = json.loads(page.text_content("#result") or "{}")
        return result
    finally:
        context.close()


def test_a_page_of_an_allowed_origin_plays_a_deal_and_follows_its_stream(
    browser: Any, cors_gateway_url: str, page_port: int
) -> None:
    played = outcome(browser, f"http://127.0.0.1:{page_port}/?gateway={cors_gateway_url}")
    assert "error" not in played, played
    assert played["location"] == f"/v1/tables/{played['table']}" or played["location"].endswith(
        f"/v1/tables/{played['table']}"
    )
    assert played["etag"]
    assert played["cards"] == 3
    assert played["refused"] == {"status": 409, "code": "already_started"}
    assert played["hands"] == 2
    assert played["events"][-1] == "showdown"
    assert {"table_created", "seated", "deal_started", "declared"} <= set(played["events"])


def test_a_page_of_another_origin_is_refused_by_the_browser(
    browser: Any, cors_gateway_url: str, page_port: int
) -> None:
    # localhost and 127.0.0.1 are two origins: this one is not in CORS_ORIGINS
    refused = outcome(browser, f"http://localhost:{page_port}/?probe&gateway={cors_gateway_url}")
    assert refused == {"refused": True, "error": "TypeError"}
    allowed = outcome(browser, f"http://127.0.0.1:{page_port}/?probe&gateway={cors_gateway_url}")
    assert allowed == {"refused": False}
