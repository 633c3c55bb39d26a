"""A real gateway (gunicorn) over HTTP and headless Chromium driving the table page."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import RedisProcess, free_port

CHROMIUM = os.environ.get("CHROMIUM_BIN", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
# Phone: a small touch screen; desktop: a laptop window.
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "is_mobile": True}
DESKTOP = {"viewport": {"width": 1280, "height": 860}, "device_scale_factor": 1, "is_mobile": False}


def wait_until_up(base: str, seconds: float = 90.0) -> None:
    """Poll /healthz until the gateway answers."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the gateway at {base} did not start")


@pytest.fixture(scope="module")
def gateway_url(redis_process: RedisProcess, evaluator_address: str) -> Iterator[str]:
    """A gunicorn gateway on a free port, on the session's Redis (emptied) and evaluator."""
    import redis

    if redis_process.process is None:
        redis_process.start()
    redis.Redis.from_url(redis_process.url).flushall()
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_process.url,
        "EVALUATOR_ADDR": evaluator_address,
        "GATEWAY_BIND": f"127.0.0.1:{port}",
        "GATEWAY_WORKERS": "1",
        # Each open page holds one thread with its event stream.
        "GATEWAY_THREADS": "16",
        "GATEWAY_GRACEFUL_TIMEOUT": "2",
        "CLOCK_INTERVAL": "0.1",
        "LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "api/gunicorn_conf.py", "api.wsgi:app"],
        cwd=ROOT,
        env=env,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(base)
        yield base
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


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
