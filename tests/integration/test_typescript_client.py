"""The TypeScript client (clients/typescript) plays whole deals against the real gateway.

The Node tests are built with `tsc` and run with `node --test` by `npm test`; this test
starts the gateway under gunicorn on the session's Redis and evaluator and points them at
it with CARDROOM_URL. `make ts-client` installs the client's packages (`npm ci`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import GunicornGateway

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "typescript"

pytestmark = pytest.mark.slow


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str, tmp_path: Path) -> Iterator[GunicornGateway]:
    server = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gunicorn.log",
        workers=1,
        RATE_LIMIT_PER_ADDRESS="0",
        RATE_LIMIT_PER_TOKEN="0",
    )
    server.start()
    yield server
    server.stop()


def test_the_typescript_client_plays_guts_and_paiute(gateway: GunicornGateway) -> None:
    npm = shutil.which("npm")
    if npm is None or not (CLIENT / "node_modules").is_dir():
        pytest.fail("the TypeScript client needs Node and its packages: run `make ts-client`")
    result = subprocess.run(
        [npm, "test"],
        cwd=CLIENT,
        env={**os.environ, "CARDROOM_URL": gateway.url},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, f"npm test failed:\n{result.stdout}\n{result.stderr}"
    assert "# fail 0" in result.stdout, result.stdout
