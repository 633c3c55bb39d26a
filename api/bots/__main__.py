"""`python -m api.bots`: the computer players' runner as its own process.

It reads the gateway's settings (`REDIS_URL`, `EVALUATOR_ADDR`, ...) and
`BOT_DELAY_MIN_SECONDS`, `BOT_DELAY_MAX_SECONDS` (1 and 3), `BOT_LEASE_SECONDS` (10) and
`BOT_HEARTBEAT_FILE` (touched after every round, for a liveness probe); any number may
run at once (docs/bots.md).
"""

from __future__ import annotations

import functools
import logging
import signal
from types import FrameType

from api.bootstrap import bootstrap
from api.bots.runner import Pace, Runner
from api.runtime import heartbeat
from api.runtime.logs import configure_logging
from api.settings import Settings

log = logging.getLogger("cardroom.bots")


def main() -> None:
    """Run the computer players until SIGTERM or SIGINT."""
    settings = Settings.from_env()
    configure_logging(settings.log_level)
    services = bootstrap(settings, players=False)
    evaluator = services.evaluator

    def odds(cards: list[str]) -> float:
        counted = evaluator.odds(f"guts{len(cards)}", " ".join(cards), 1, 1, None)
        return float(str(counted["win"])) + float(str(counted["tie"])) / 2

    pace = Pace((settings.bot_delay_min, settings.bot_delay_max), settings.bot_lease_seconds)
    beat = settings.bot_heartbeat_file
    runner = Runner(
        services.bots,
        services.bots.store,
        odds,
        pace,
        after_round=None if beat is None else functools.partial(heartbeat.beat, beat),
    )

    def request_stop(signum: int, frame: FrameType | None) -> None:
        runner.stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    log.info("bots running", extra={"runner": runner.token})
    runner.run()
    services.close()
    log.info("bots stopped")


if __name__ == "__main__":
    main()
