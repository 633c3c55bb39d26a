"""The clock: applies every passed deadline without waiting for any client.

Tables due for a deadline sit in the `deadlines` sorted set of Redis. The clock polls
it every `CLOCK_INTERVAL` seconds (0.2 by default) and applies each passed deadline
through the same atomic change as any move, so any number of clocks may run at once
(one per gateway process, or a separate `python -m gateway.runtime.clock` deployment): a deadline
is applied once, whoever gets there first. A deadline whose showdown cannot be
settled (evaluator down) stays due and is tried again on the next tick. Idle
tables are closed the same way: their idle time is a deadline like any other.

Every `sweep` seconds the clock also starts a repair pass over the lobby, which fixes
a schedule entry lost between a change and its scheduling (on a Redis Cluster the
schedule is written after the commit). The pass goes `SWEEP_PAGE` tables per tick,
by creation time, each page three round trips whatever its size (the next page of
the lobby, the `deadline` field of each table hash, one ZMSCORE) plus a load and a
write per table found wrong: 10,000 tables cost 150 small reads spread over 50
ticks, instead of 10,000 full loads in one tick.

Every `WalletPolicy.sweep_seconds` it also runs the ledger's sweeper
(`gateway.service.wallets`): reservations a crashed gateway left are posted or voided,
cash-outs it did not relay are relayed.

With a webhook URL set, the clock also runs the webhooks' deliverer, a thread of its
own (`gateway.runtime.webhooks`), while it runs.

Run as its own process with `CLOCK_HEARTBEAT_FILE` set, the clock touches that file
after every tick (`gateway.runtime.heartbeat`), and its liveness probe checks the file's age.
"""

from __future__ import annotations

import logging
import random
import signal
import threading
import time
from types import FrameType

from gateway.adapters.store import deadline_field
from gateway.errors import ApiError
from gateway.runtime import heartbeat
from gateway.runtime.webhooks import Deliverer
from gateway.service.tables import TableService

log = logging.getLogger("cardroom.clock")

SWEEP_PAGE = 200


class Clock:
    """Polls for due tables and applies their deadlines, until stopped."""

    def __init__(
        self,
        service: TableService,
        interval: float,
        sweep: float = 30.0,
        page: int = SWEEP_PAGE,
        heartbeat_file: str | None = None,
    ) -> None:
        """Tick every `interval` s; check all schedules every `sweep` s, `page` tables a tick.

        With `heartbeat_file`, touch it after every tick, failed or not.
        """
        self.service = service
        self.heartbeat_file = heartbeat_file
        self._heartbeat_failing = False
        self.interval = interval
        self.sweep_every = sweep
        self.page = page
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_sweep = -float("inf")
        self._last_ledger_sweep = -float("inf")
        # the repair pass goes on after this creation time; None between passes
        self._sweep_after: float | None = None
        self._sweeping = False

    def tick(self) -> int:
        """Apply every passed deadline once; how many tables changed."""
        changed = 0
        due = self.service.store.due(self.service.clock())
        # every gateway process runs a clock: in its own order, clocks rarely race for a table
        random.shuffle(due)
        for table_id in due:
            try:
                changed += self.service.run_deadline(table_id)
            except ApiError as error:
                if error.code in ("table_not_found", "table_closed"):
                    self.service.store.schedule(table_id, None)
                else:
                    log.warning(
                        "deadline not applied yet", extra={"table": table_id, "code": error.code}
                    )
        wallets = self.service.wallets
        if time.monotonic() - self._last_ledger_sweep >= wallets.policy.sweep_seconds:
            # reservations and cash-outs a crashed process left (gateway.service.wallets)
            self._last_ledger_sweep = time.monotonic()
            try:
                wallets.sweep()
            except Exception:
                log.exception("ledger sweep failed")
        if not self._sweeping and time.monotonic() - self._last_sweep >= self.sweep_every:
            self._last_sweep = time.monotonic()
            self._sweeping = True
            self._sweep_after = None
        if self._sweeping:
            self._sweeping, self._sweep_after, _ = self.sweep_page(self._sweep_after)
        return changed

    def sweep(self) -> int:
        """A whole repair pass at once (page after page); how many entries it fixed."""
        fixed = 0
        more, after = True, None
        while more:
            more, after, repaired = self.sweep_page(after)
            fixed += repaired
        return fixed

    def sweep_page(self, after: float | None) -> tuple[bool, float | None, int]:
        """Repair the schedules of one page of tables created after `after`.

        Returns whether more pages follow, the cursor of the next one and how many
        entries were repaired.
        """
        store = self.service.store
        rows = store.lobby_after(after, self.page)
        table_ids = [table_id for table_id, _ in rows]
        fixed = 0
        for table_id, (field, score) in zip(table_ids, store.schedules(table_ids), strict=True):
            if field is not None and field == deadline_field(score):
                continue
            # no schedule written yet (an older table) or an entry lost: ask the state
            record = store.load(table_id)
            if record is None or record.closed:
                store.forget(table_id)
            else:
                deadline = self.service.next_deadline(record.state, self.service.clock())
                store.reschedule(record, deadline)
            fixed += 1
        return len(rows) == self.page, rows[-1][1] if rows else after, fixed

    def run(self) -> None:
        """Tick until `stop` is called; errors are logged and the clock goes on."""
        deliverer = None
        if self.service.webhooks.policy.enabled:
            deliverer = Deliverer(self.service.webhooks, min(self.interval, 0.05))
            deliverer.start()
        try:
            self._ticks()
        finally:
            if deliverer is not None:
                deliverer.stop()

    def _ticks(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
            except Exception:
                log.exception("clock tick failed")
            if self.heartbeat_file is not None:
                self._beat(self.heartbeat_file)
            self._stop.wait(self.interval)

    def _beat(self, path: str) -> None:
        try:
            heartbeat.beat(path)
        except OSError as error:
            if not self._heartbeat_failing:  # once, not every tick
                log.error("heartbeat file not written", extra={"path": path, "error": str(error)})
            self._heartbeat_failing = True
        else:
            self._heartbeat_failing = False

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
    """`python -m gateway.runtime.clock`: the clock as its own process."""
    from gateway.app import build_service
    from gateway.settings import Settings

    settings = Settings.from_env()
    from gateway.runtime.logs import configure_logging

    configure_logging(settings.log_level)
    service = build_service(settings, players=False)
    clock = Clock(service, settings.clock_interval, heartbeat_file=settings.clock_heartbeat_file)

    def request_stop(signum: int, frame: FrameType | None) -> None:
        clock.stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log.info(
        "clock running",
        extra={"interval": settings.clock_interval, "heartbeat": settings.clock_heartbeat_file},
    )
    clock.run()
    log.info("clock stopped")


if __name__ == "__main__":
    main()
