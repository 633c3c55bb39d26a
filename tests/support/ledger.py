"""The ledger's audit as the tests run it: after a test, over the whole store."""

from __future__ import annotations

import time

import redis

from gateway.adapters.wallets import WalletStore
from gateway.service.wallets import WalletService


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
