"""A real gateway (gunicorn) over HTTP and headless Chromium driving the table page."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.processes import GunicornGateway, RedisProcess, gateway_on

OPERATOR_KEY = "operator-key-of-the-browser-tests"


@pytest.fixture(scope="module")
def gateway_url(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A gunicorn gateway on a free port, on the session's Redis (emptied) and evaluator."""
    with gateway_on(
        redis_process,
        evaluator_address,
        tmp_path_factory.mktemp("gateway") / "gunicorn.log",
        workers=1,
        # Each open page holds one thread with its event stream.
        threads=16,
        GATEWAY_GRACEFUL_TIMEOUT="2",
        CLOCK_INTERVAL="0.1",
        LOG_LEVEL="warning",
        # Streams end often, so the pages reconnect (each time with a new ticket).
        STREAM_MAX_SECONDS="4",
    ) as gateway:
        yield gateway.url


@pytest.fixture
def operator_gateway(
    gateway_url: str, redis_process: RedisProcess, evaluator_address: str, tmp_path: Path
) -> Iterator[tuple[str, str]]:
    """A second gateway, in operator mode, beside the first (on another Redis database of
    the same server): its URL and its operator key."""
    server = GunicornGateway(
        redis_process.url.rsplit("/", 1)[0] + "/1",
        evaluator_address,
        tmp_path / "gunicorn-operator.log",
        workers=1,
        threads=8,
        GATEWAY_GRACEFUL_TIMEOUT="2",
        LOG_LEVEL="warning",
        PLAYERS_MODE="operator",
        OPERATOR_KEYS=OPERATOR_KEY,
    )
    server.start()
    try:
        yield server.url, OPERATOR_KEY
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless Chromium (the system's, no download) driven by Playwright."""
    if not (os.path.isfile(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM}: install it with `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
