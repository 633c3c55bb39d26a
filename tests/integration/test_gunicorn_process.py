"""The gateway as deployed: gunicorn with two workers, over real HTTP, stopped by SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.conftest import free_port


def call(
    base: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_two_workers_play_a_deal_and_stop_cleanly(redis_url: str, evaluator_address: str) -> None:
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "EVALUATOR_ADDR": evaluator_address,
        "GATEWAY_BIND": f"127.0.0.1:{port}",
        "GATEWAY_WORKERS": "2",
        "GATEWAY_THREADS": "8",
        "LOG_LEVEL": "warning",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "api/gunicorn_conf.py", "api.wsgi:app"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if call(base, "GET", "/healthz")[0] == 200:
                    break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.05)
        status, table = call(base, "POST", "/v1/tables", {"game": "guts", "deal_pause_seconds": 60})
        assert status == 201
        table_id = table["id"]
        tokens = [
            call(base, "POST", f"/v1/tables/{table_id}/seats", {"name": f"w{i}", "buy_in": 50})[1][
                "token"
            ]
            for i in range(6)
        ]
        assert (
            call(base, "POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, tokens[0])[0]
            == 200
        )
        with ThreadPoolExecutor(6) as pool:
            codes = list(
                pool.map(
                    lambda token: call(
                        base,
                        "POST",
                        f"/v1/tables/{table_id}/actions",
                        {"action": "declare", "choice": "in"},
                        token,
                    )[0],
                    tokens,
                )
            )
        assert codes == [200] * 6
        status, view = call(base, "GET", f"/v1/tables/{table_id}")
        assert view["phase"] == "between_deals"
        chips = sum(s["stack"] for s in view["seats"].values()) + view["pot"] + view["reserve"]
        assert chips == 6 * 50
        assert call(base, "GET", "/readyz")[0] == 200
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
