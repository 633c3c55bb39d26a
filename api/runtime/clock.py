"""The clock: applies every passed deadline without waiting for any client.

Tables due for a deadline sit in the `deadlines` sorted set of Redis. The clock polls
it every `CLOCK_INTERVAL` seconds (0.2 by default) and applies each passed deadline
through the same atomic change as any move, so any number of clocks may run at once
(one per gateway process, or a separate `python -m api.runtime.clock` deployment): a deadline
is applied once, whoever gets there first. Each tick claims up to `DUE_PAGE` due
tables (`TableStore.claim_due`): they are held for this clock for `CLAIM_SECONDS`, so
several clocks share the due tables instead of each reading all of them, and a tick
that found a full page ticks again at once instead of waiting the interval, so one
clock applies as many deadlines a second as its CPU allows (docs/capacity.md). The
change a clock commits schedules the table's next deadline; a table whose clock died
comes due again when the hold ends, and so does a deadline whose showdown cannot be
settled (evaluator down): it is tried again `CLAIM_SECONDS` later. Idle tables are
closed the same way: their idle time is a deadline like any other.

Every `sweep` seconds the clock also starts a repair pass over all tables, which fixes a
schedule entry lost between a change and its scheduling (on a Redis Cluster the schedule
is written after the commit), and each table's entry in the lobby's index
(`api.service.lobby.LobbyQueries.repair`: on a cluster also written after the commit;
four more round trips a page, from the place each table's last commit recorded). The
pass goes `SWEEP_PAGE` tables per tick, by creation time, each page three round trips
whatever its size (the next page of the lobby, the `deadline` field of each table hash,
one ZMSCORE) plus a load and a write per table found wrong: 10,000 tables cost 150 small
reads spread over 50 ticks, instead of 10,000 full loads in one tick. One pass runs at a
time, whatever the number of clocks: a clock starts one only if it takes the
`SWEEP_LEASE_KEY` lease, which it holds until `sweep` seconds after its pass's last page
(a clock that dies mid-pass leaves the next pass to another clock that much later).

Every `PACK_SECONDS` it also runs the packer (`api.service.packing`): the histories of
the deals that ended since, but the newest at each table, are packed, many tables' in
each of its few round trips.

Every `WalletPolicy.sweep_seconds` it also runs the ledger's sweeper
(`api.service.wallets`): reservations a crashed gateway left are posted or voided,
cash-outs it did not relay are relayed.

With a webhook URL set, the clock also runs the webhooks' deliverer, a thread of its
own with a pool of `WEBHOOK_CONCURRENCY` more (`api.runtime.webhooks`), while it runs.

Run as its own process with `CLOCK_HEARTBEAT_FILE` set, the clock touches that file
after every tick (`api.runtime.heartbeat`), and its liveness probe checks the file's age.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from types import FrameType

from api.adapters.store import deadline_field
from api.bootstrap import bootstrap
from api.errors import ApiError
from api.runtime import heartbeat
from api.runtime.logs import configure_logging
from api.runtime.webhooks import Deliverer
from api.service.deadlines import Deadlines
from api.service.lobby import LobbyQueries
from api.service.packing import Packer
from api.settings import Settings

log = logging.getLogger("cardroom.clock")

SWEEP_PAGE = 200
# how often the packer runs: packing saves memory and nobody waits for it, so it gathers
# the deals of a second, a few round trips for all of them
PACK_SECONDS = 1.0
# due tables a tick claims at most, and how long they are held for the clock that did
DUE_PAGE = 100
CLAIM_SECONDS = 2.0
# held by the clock whose repair pass runs: one pass at a time over all clocks
SWEEP_LEASE_KEY = "clock:sweep"


class Clock:
    """Polls for due tables and applies their deadlines, until stopped."""

    def __init__(
        self,
        deadlines: Deadlines,
        interval: float,
        sweep: float = 30.0,
        page: int = SWEEP_PAGE,
        heartbeat_file: str | None = None,
    ) -> None:
        """Apply `deadlines` every `interval` s; check all schedules every `sweep` s, `page`
        tables a tick.

        With `heartbeat_file`, touch it after every tick, failed or not.
        """
        self.deadlines = deadlines
        self.lobby = LobbyQueries(deadlines.store)
        self.packer = Packer(deadlines.store, deadlines.clock)
        self.heartbeat_file = heartbeat_file
        self._heartbeat_failing = False
        self.interval = interval
        self.sweep_every = sweep
        self._lease = max(1, math.ceil(sweep))
        self.page = page
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_sweep = -float("inf")
        self._last_ledger_sweep = -float("inf")
        self._last_packing = -float("inf")
        # the repair pass goes on after this creation time; None between passes
        self._sweep_after: float | None = None
        self._sweeping = False
        # whether the last tick claimed a full page of due tables (more may be due)
        self.behind = False

    def tick(self, repair: bool = True) -> int:
        """Apply the passed deadlines of a page of due tables; how many tables changed.

        With `repair`, the tick also goes one page on with the repair pass, if one runs.
        """
        changed = 0
        self.behind = False
        now = self.deadlines.clock()
        due = self.deadlines.store.claim_due(now, DUE_PAGE, now + CLAIM_SECONDS)
        self.behind = len(due) == DUE_PAGE
        for table_id in due:
            try:
                changed += self.deadlines.run_deadline(table_id)
            except ApiError as error:
                if error.code in ("table_not_found", "table_closed"):
                    self.deadlines.store.schedule(table_id, None)
                else:
                    log.warning(
                        "deadline not applied yet", extra={"table": table_id, "code": error.code}
                    )
        if time.monotonic() - self._last_packing >= PACK_SECONDS:
            self._last_packing = time.monotonic()
            try:
                self.packer.run()
            except Exception:
                log.exception("packing failed")
        wallets = self.deadlines.wallets
        if time.monotonic() - self._last_ledger_sweep >= wallets.policy.sweep_seconds:
            # reservations and cash-outs a crashed process left (api.service.wallets)
            self._last_ledger_sweep = time.monotonic()
            try:
                wallets.sweep()
            except Exception:
                log.exception("ledger sweep failed")
            recall = self.deadlines.changes.recall
            try:
                # deals' notes a crashed process did not deliver (api.service.recall)
                if recall is not None:
                    recall.sweep()
            except Exception:
                log.exception("recall sweep failed")
        if not self._sweeping and time.monotonic() - self._last_sweep >= self.sweep_every:
            self._last_sweep = time.monotonic()
            # another clock's pass holds the lease: this one looks again `sweep` s later
            self._sweeping = self.deadlines.store.claim(SWEEP_LEASE_KEY, {"at": now}, self._lease)
            self._sweep_after = None
        if self._sweeping and repair:
            self._sweeping, self._sweep_after, _ = self.sweep_page(self._sweep_after)
            self.deadlines.store.put_json(SWEEP_LEASE_KEY, {"at": now}, self._lease)
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
        store = self.deadlines.store
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
                deadline = self.deadlines.next_deadline(record.state, self.deadlines.clock())
                store.reschedule(record, deadline)
            fixed += 1
        # the lobby's index, from what each table's last commit placed there
        fixed += self.lobby.repair(table_ids)
        return len(rows) == self.page, rows[-1][1] if rows else after, fixed

    def run(self) -> None:
        """Tick until `stop` is called; errors are logged and the clock goes on."""
        deliverer = None
        if self.deadlines.webhooks.policy.enabled:
            deliverer = Deliverer(self.deadlines.webhooks, min(self.interval, 0.05))
            deliverer.start()
        try:
            self._ticks()
        finally:
            if deliverer is not None:
                deliverer.stop()

    def _ticks(self) -> None:
        last_page = -float("inf")
        while not self._stop.is_set():
            # a page of the repair pass an interval, however often a clock behind ticks
            repair = time.monotonic() - last_page >= self.interval
            if repair:
                last_page = time.monotonic()
            try:
                self.tick(repair)
            except Exception:
                log.exception("clock tick failed")
            if self.heartbeat_file is not None:
                self._beat(self.heartbeat_file)
            if not self.behind:
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
    """`python -m api.runtime.clock`: the clock as its own process."""
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    services = bootstrap(settings, players=False)
    clock = Clock(
        services.deadlines, settings.clock_interval, heartbeat_file=settings.clock_heartbeat_file
    )

    def request_stop(signum: int, frame: FrameType | None) -> None:
        clock.stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log.info(
        "clock running",
        extra={"interval": settings.clock_interval, "heartbeat": settings.clock_heartbeat_file},
    )
    clock.run()
    services.close()
    log.info("clock stopped")


if __name__ == "__main__":
    main()
