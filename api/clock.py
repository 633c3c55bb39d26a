"""The clock: applies every passed deadline without waiting for any client.

Tables due for a deadline sit in the `deadlines` sorted set of Redis. The clock polls
it every `CLOCK_INTERVAL` seconds (0.2 by default) and applies each passed deadline
through the same atomic change as any move, so any number of clocks may run at once
(one per gateway process, or a separate `python -m api.clock` deployment): a deadline
is applied once, whoever gets there first. A deadline whose showdown cannot be
settled (evaluator down) stays due and is tried again on the next tick. Every
`sweep` seconds the clock also re-reads every table's deadline, which repairs a
schedule entry lost between a change and its scheduling.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from types import FrameType

from api.errors import ApiError
from api.tables import GAMES, TableService

log = logging.getLogger("cardroom.clock")


class Clock:
    """Polls for due tables and applies their deadlines, until stopped."""

    def __init__(self, service: TableService, interval: float, sweep: float = 30.0) -> None:
        """Tick every `interval` seconds; re-read every table's deadline every `sweep`."""
        self.service = service
        self.interval = interval
        self.sweep_every = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_sweep = 0.0

    def tick(self) -> int:
        """Apply every passed deadline once; how many tables changed."""
        changed = 0
        for table_id in self.service.store.due(self.service.clock()):
            try:
                changed += self.service.run_deadline(table_id)
            except ApiError as error:
                if error.code == "table_not_found":
                    self.service.store.schedule(table_id, None)
                else:
                    log.warning(
                        "deadline not applied yet", extra={"table": table_id, "code": error.code}
                    )
        if time.monotonic() - self._last_sweep >= self.sweep_every:
            self.sweep()
        return changed

    def sweep(self) -> None:
        """Schedule every table by the deadline in its state."""
        self._last_sweep = time.monotonic()
        store = self.service.store
        for table_id in store.all_tables():
            record = store.load(table_id)
            if record is not None:
                store.schedule(table_id, GAMES[record.state["game"]].next_deadline(record.state))

    def run(self) -> None:
        """Tick until `stop` is called; errors are logged and the clock goes on."""
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("clock tick failed")
            self._stop.wait(self.interval)

    def start(self) -> None:
        """Run in a daemon thread."""
        self._thread = threading.Thread(target=self.run, name="cardroom-clock", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current tick."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def main() -> None:
    """`python -m api.clock`: the clock as its own process."""
    from api import build_service
    from api.settings import Settings

    settings = Settings.from_env()
    from api.logs import configure_logging

    configure_logging(settings.log_level)
    service = build_service(settings)
    clock = Clock(service, settings.clock_interval)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        clock.stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log.info("clock running", extra={"interval": settings.clock_interval})
    clock.run()
    log.info("clock stopped")


if __name__ == "__main__":
    main()
