"""The webhooks' deliverer: a thread of the clock that sends the tables' due notices.

It looks for due outboxes every `interval` seconds, and at once again after a look that
sent something. Any number of deliverers may run (one per clock): a table's outbox is
leased to one at a time (`gateway.service.webhooks`).
"""

from __future__ import annotations

import logging
import threading

from gateway.service.webhooks import WebhookService

log = logging.getLogger("cardroom.webhooks")


class Deliverer:
    """Delivers due webhooks until stopped."""

    def __init__(self, webhooks: WebhookService, interval: float = 0.05) -> None:
        """Look every `interval` seconds."""
        self.webhooks = webhooks
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        """Deliver until `stop` is called; errors are logged and the deliverer goes on."""
        while not self._stop.is_set():
            sent = 0
            try:
                sent = self.webhooks.deliver_due()
            except Exception:
                log.exception("webhook delivery failed")
            if not sent:
                self._stop.wait(self.interval)

    def start(self) -> None:
        """Run in a daemon thread."""
        self._thread = threading.Thread(target=self.run, name="cardroom-webhooks", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current look."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
