"""A runner of computer players: it takes the bots no other runner holds, and plays each
from its seat's own view, through the same service and checks as a player's client.

Every round (`Runner.round`) the runner takes the lease of each bot nobody holds
(`api.adapters.bots`), renews the leases it holds and plays its bots: it reads the seat's
view (its own cards, nobody else's), asks the strategy for a move, and makes it after a
human-like delay, drawn between the two of `Pace.delay` (seconds) and cut to half the
time left before the deadline, so a bot never times out. A move is sent with the table's
version the bot saw (`If-Match`) and an Idempotency-Key of its own: if the table moved
on, or another runner moved first, it is refused and nothing is played twice. A runner
that dies lets its leases run out, and another runner plays its bots from then on.
"""

from __future__ import annotations

import logging
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from api.adapters.bots import BotRecord, BotStore
from api.errors import ApiError
from api.games.game import ActionBody
from api.games.state import TableView
from api.games.strategies import Facts, strategy_for
from api.service.bots import BotService

log = logging.getLogger("cardroom.bots")

Odds = Callable[[list[str]], float]


@dataclass(frozen=True)
class Planned:
    """A move a bot will make at `due`, if the table is still at `version`."""

    version: int
    action: ActionBody
    due: float


@dataclass(frozen=True)
class Pace:
    """How a runner paces its bots: the delay of a move, the leases, a round's length."""

    delay: tuple[float, float] = (1.0, 3.0)  # a move's, drawn between the two
    lease_seconds: float = 10.0
    round_seconds: float = 0.25


class Runner:
    """Plays the bots whose leases it holds."""

    def __init__(
        self,
        bots: BotService,
        store: BotStore,
        odds: Odds,
        pace: Pace,
        rng: random.Random | None = None,
        clock: Callable[[], float] = time.time,
        after_round: Callable[[], None] | None = None,
    ) -> None:
        """Play `bots` kept in `store`; `odds` gives a Guts hand's chance against one
        random hand (the evaluator's), `pace` the delays and leases; `after_round` runs
        after every round (a heartbeat)."""
        self.bots = bots
        self.store = store
        self.odds = odds
        self.pace = pace
        self.rng = rng or random.Random()
        self.clock = clock
        self.token = secrets.token_hex(8)
        self.held: dict[str, BotRecord] = {}
        self.planned: dict[str, Planned] = {}
        self.moves = 0
        self.after_round = after_round
        self._stop = threading.Event()

    def round(self) -> None:
        """Take the free bots, renew the held ones and play each."""
        for record in self.store.all():
            bot_id = record["bot_id"]
            if bot_id not in self.held and self.store.take(
                bot_id, self.token, self.pace.lease_seconds
            ):
                self.held[bot_id] = record
        for bot_id in list(self.held):
            if not self.store.renew(bot_id, self.token, self.pace.lease_seconds):
                self._drop(bot_id)  # ran out: another runner may play it now
                continue
            try:
                self.play(self.held[bot_id])
            except Exception:
                log.exception("bot round failed", extra={"bot": bot_id})

    def play(self, record: BotRecord) -> None:
        """One look at a bot's table: plan its move, or make the one planned and due."""
        bot_id = record["bot_id"]
        view = self.bots.view(record)
        if view is None and not record["seat"] and self.clock() - record["seated_at"] < 60:
            return  # its seat is still being taken
        if view is None:  # the seat is gone: it left, went broke or its table closed
            self.store.remove(bot_id)
            self.store.release(bot_id, self.token)
            self._drop(bot_id)
            return
        you = view["you"]
        if not record["seat"] and you is not None:
            # seated, though the seat's number did not reach its record: note it
            record = {**record, "seat": you["seat"]}
            self.held[bot_id] = record
            self.store.add(record)
        self._leave_if_alone(record, view)
        planned = self.planned.get(bot_id)
        if planned is not None and planned.version == view["version"]:
            if self.clock() >= planned.due:
                self._move(record, planned)
            return
        self.planned.pop(bot_id, None)
        strategy = strategy_for(record["game"], record["strategy"])
        if strategy is None:
            return
        facts = Facts()
        if strategy.wants_odds(view) and you is not None and you["cards"]:
            facts = Facts(odds=self.odds(you["cards"]))
        action = strategy.decide(view, facts, self.rng)
        if action is not None:
            self.planned[bot_id] = Planned(view["version"], action, self._due(view))

    def _leave_if_alone(self, record: BotRecord, view: TableView) -> None:
        """Once only computer players are left at the table the bot leaves (at the end
        of the deal it plays, which it finishes), so that bots never play on by
        themselves."""
        if any("computer" not in seat for seat in view["seats"].values()):
            return
        mine = view["seats"].get(str(record["seat"]))
        if mine is not None and not mine["leaving"]:
            try:
                self.bots.leave(record)
            except ApiError as error:
                if error.status >= 500:
                    raise

    def _due(self, view: TableView) -> float:
        """When to move: after a human-like delay, within half the time left to decide."""
        now = self.clock()
        delay = self.rng.uniform(*self.pace.delay)
        deadline = view["deadline"]
        if deadline is not None:
            delay = min(delay, max(deadline - now, 0.0) / 2)
        return now + delay

    def _move(self, record: BotRecord, planned: Planned) -> None:
        self.planned.pop(record["bot_id"], None)
        try:
            self.bots.act(record, planned.action, planned.version)
        except ApiError as error:
            # the table moved on (another runner, a deadline, a departure): look again
            if error.status >= 500:
                raise
            log.info(
                "bot move refused",
                extra={"bot": record["bot_id"], "code": error.code, "action": planned.action},
            )
            return
        self.moves += 1

    def _drop(self, bot_id: str) -> None:
        self.held.pop(bot_id, None)
        self.planned.pop(bot_id, None)

    def run(self) -> None:
        """Play rounds until `stop`; give the leases back then."""
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.round()
            except Exception:
                log.exception("bot round failed")
            if self.after_round is not None:
                self.after_round()
            self._stop.wait(max(self.pace.round_seconds - (time.monotonic() - started), 0.0))
        for bot_id in list(self.held):
            self.store.release(bot_id, self.token)
        self.held.clear()

    def stop(self) -> None:
        """End `run` after its round."""
        self._stop.set()
