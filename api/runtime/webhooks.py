"""The webhooks' deliverer: a thread of the clock that sends the tables' due notices.

It keeps up to the policy's `concurrency` tables in flight, each in a thread of its
pool: one table's notices go one after the other, in order (`WebhookService.deliver`),
different tables' at the same time, over the sender's keep-alive connections. It asks
for due tables whenever a place is free, and every `interval` seconds when none was
due; a table whose look sent nothing (its outbox held by another deliverer, or its
notices not due yet) rests for `interval` before it is looked at again. Any number of
deliverers may run (one per clock): a table's outbox is leased to one at a time
(`api.service.webhooks`).
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from api.service.webhooks import WebhookService

log = logging.getLogger("cardroom.webhooks")


class Deliverer:
    """Delivers due webhooks until stopped, up to `concurrency` tables at once."""

    def __init__(self, webhooks: WebhookService, interval: float = 0.05) -> None:
        """Look every `interval` seconds (at once while tables are due)."""
        self.webhooks = webhooks
        self.interval = interval
        self.concurrency = webhooks.policy.concurrency
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._flying: dict[Future[int], str] = {}
        self._resting: dict[str, float] = {}  # table id -> when it may be looked at again

    def run(self) -> None:
        """Deliver until `stop` is called; errors are logged and the deliverer goes on."""
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="cardroom-webhook") as pool:
            while not self._stop.is_set():
                started = 0
                try:
                    started = self._start_due(pool)
                except Exception:
                    log.exception("webhook delivery failed")
                if self._flying:
                    done, _ = wait(self._flying, timeout=self.interval, return_when=FIRST_COMPLETED)
                    self._finish(done)
                elif not started:
                    self._stop.wait(self.interval)
            self._finish(wait(self._flying).done)

    def _start_due(self, pool: ThreadPoolExecutor) -> int:
        """Start the due tables not in flight nor resting, up to the free places."""
        free = self.concurrency - len(self._flying)
        if free <= 0:
            return 0
        now = time.monotonic()
        self._resting = {table: until for table, until in self._resting.items() if until > now}
        flying = set(self._flying.values())
        skipped = len(flying) + len(self._resting)
        started = 0
        for table_id, seen in self.webhooks.due(free + skipped):
            if table_id in flying or table_id in self._resting:
                continue
            self._flying[pool.submit(self.webhooks.deliver, table_id, seen)] = table_id
            started += 1
            if started == free:
                break
        return started

    def _finish(self, done: set[Future[int]]) -> None:
        """Take finished tables out of flight; one that sent nothing rests a while."""
        for future in done:
            table_id = self._flying.pop(future)
            try:
                sent = future.result()
            except Exception:
                log.exception("webhooks of a table not delivered", extra={"table": table_id})
                sent = 0
            if not sent:
                self._resting[table_id] = time.monotonic() + self.interval

    def start(self) -> None:
        """Run in a daemon thread."""
        self._thread = threading.Thread(target=self.run, name="cardroom-webhooks", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the tables in flight."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
