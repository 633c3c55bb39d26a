"""The ledger's audit as the tests run it: after a test, over the whole store."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import redis

from api.adapters.wallets import WalletStore
from api.service.wallets import WalletService
from tests.support.gateway import Gateway, close_app, make_app


def assert_ledger_clean(url: str) -> None:
    """Fail unless the ledger's audit over the Redis at `url` is clean, once a sweeper
    has finished whatever was still in flight (docs/ledger.md#the-audit)."""
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        wallets = WalletService(WalletStore(client))
        wallets.clock = lambda: time.time() + 3600  # whatever is still in flight is due
        wallets.sweep()
        report = wallets.audit()
    finally:
        client.close()
    assert report.clean, "the ledger's audit after the test:\n" + "\n".join(report.discrepancies)


@contextlib.contextmanager
def audited_gateway(url: str, evaluator_address: str, **overrides: Any) -> Iterator[Gateway]:
    """A gateway on the Redis at `url`; once the block is over, whatever is in flight is
    finished and the ledger's audit must be clean."""
    app = make_app(url, evaluator_address, **overrides)
    yield Gateway(app, app.test_client())
    wallets = app.extensions["cardroom.service"].wallets
    wallets.clock = lambda: time.time() + 3600  # whatever is in flight is due
    wallets.sweep()
    report = wallets.audit()
    close_app(app)
    assert report.clean, report.discrepancies
