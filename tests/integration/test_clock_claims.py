"""Clocks share their work on a real Redis: each due table is claimed by one clock,
held for it a while, and given again once the hold ends; a clock that is behind ticks
again at once instead of waiting its interval; one repair pass runs at a time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
import redis

from api.adapters.evaluator import EvaluatorClient
from api.adapters.store import DEADLINES_KEY, LOBBY_KEY, TableStore
from api.bootstrap import Services, bootstrap
from api.runtime.clock import DUE_PAGE, SWEEP_LEASE_KEY, Clock
from api.service.deadlines import Deadlines
from api.settings import Settings
from tests.support.gateway import EVALUATOR_TIMEOUT
from tests.support.play import wait_for


def _store(redis_url: str) -> TableStore:
    return TableStore(redis.Redis.from_url(redis_url, decode_responses=True))


@pytest.fixture
def services(redis_url: str, evaluator_address: str) -> Iterator[list[Services]]:
    """Two processes' services on the same Redis, as two clocks' processes would have."""
    made = [
        bootstrap(
            Settings(redis_url=redis_url, evaluator_addr=evaluator_address),
            players=False,
            client=redis.Redis.from_url(redis_url, decode_responses=True),
            evaluator=EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT),
        )
        for _ in range(2)
    ]
    yield made
    for service in made:
        service.close()


def test_a_due_table_is_given_to_one_claimer_until_its_hold_ends(redis_url: str) -> None:
    first, second = _store(redis_url), _store(redis_url)
    for n in range(150):
        first.schedule(f"t{n:03d}", float(n))
    first.schedule("later", 5_000.0)

    mine = first.claim_due(1_000.0, 100, 1_002.0)
    assert mine == [f"t{n:03d}" for n in range(100)]  # the oldest deadlines first
    theirs = second.claim_due(1_000.0, 100, 1_002.0)
    assert theirs == [f"t{n:03d}" for n in range(100, 150)]
    # while held, nobody is given them again; a table not due yet is never given
    assert second.claim_due(1_001.0, 500, 1_003.0) == []
    # a claimer that died: its tables come due again when the hold ends
    again = second.claim_due(1_002.5, 500, 1_004.0)
    assert sorted(again) == sorted(mine + theirs)
    assert first.client.zscore(DEADLINES_KEY, "later") == 5_000.0
    # a change that schedules a claimed table replaces the hold
    first.schedule("t000", 10.0)
    assert first.claim_due(1_003.0, 500, 1_005.0) == ["t000"]


def test_two_clocks_never_take_the_same_due_table(redis_url: str, services: list[Services]) -> None:
    """The second clock ticks while the first is applying its page: it gets the rest."""
    ids = [f"gone{n:03d}" for n in range(DUE_PAGE + 40)]
    store = services[0].store
    for n, table_id in enumerate(ids):
        store.schedule(table_id, float(n))  # long passed, and no such table
    first, second = Clock(services[0].deadlines, 3600.0), Clock(services[1].deadlines, 3600.0)
    attempts: Counter[str] = Counter()
    by_second: list[str] = []

    def tracked(service: Deadlines, nested: Clock | None) -> None:
        apply = service.run_deadline

        def run_deadline(table_id: str) -> bool:
            attempts[table_id] += 1
            if service is services[1].deadlines:
                by_second.append(table_id)
            if nested is not None and sum(attempts.values()) == 1:
                nested.tick()  # the other clock, in the middle of this one's page
            return apply(table_id)

        service.run_deadline = run_deadline  # type: ignore[method-assign]

    tracked(services[0].deadlines, second)
    tracked(services[1].deadlines, None)
    first.tick()
    assert first.behind  # it claimed a whole page: more may be due
    assert not second.behind
    assert len(by_second) == 40
    assert set(attempts) == set(ids)
    assert set(attempts.values()) == {1}
    # a table that no longer exists leaves the clock's list
    assert store.client.zcard(DEADLINES_KEY) == 0


def test_a_clock_behind_ticks_again_without_waiting_its_interval(
    redis_url: str, services: list[Services]
) -> None:
    """Pages of due tables, one after another, with an interval of an hour."""
    store = services[0].store
    for n in range(3 * DUE_PAGE + 10):
        store.schedule(f"gone{n:03d}", float(n))
    clock = Clock(services[0].deadlines, 3600.0, sweep=3600.0)
    clock.start()
    try:
        wait_for(lambda: store.client.zcard(DEADLINES_KEY) == 0, seconds=60)
        assert not clock.behind
    finally:
        clock.stop()


def test_one_repair_pass_runs_at_a_time_over_all_clocks(
    redis_url: str, services: list[Services]
) -> None:
    """A clock whose turn to sweep comes while another's pass holds the lease skips it."""
    store = services[0].store
    client = store.client
    for n in range(5):
        store.index_table(f"lost{n}", float(n))  # in the lobby, no keys: entries to forget
    holder = Clock(services[0].deadlines, 3600.0, sweep=3600.0, page=2)
    other = Clock(services[1].deadlines, 3600.0, sweep=0.0, page=2)  # looks at every tick

    holder.tick()
    assert client.zcard(LOBBY_KEY) == 3  # its first page
    for _ in range(3):
        other.tick()
        assert client.exists(SWEEP_LEASE_KEY)
    holder.tick()
    assert client.zcard(LOBBY_KEY) == 1  # only the holder's pages went on
    holder.tick()
    assert client.zcard(LOBBY_KEY) == 0
    # the pass is over, the lease held a while longer: the other clock still waits
    store.index_table("lost-again", 10.0)
    other.tick()
    assert client.zcard(LOBBY_KEY) == 1
    # the lease ends (its holder died, or its time ran out): the next pass is the other's
    client.delete(SWEEP_LEASE_KEY)
    other.tick()
    assert client.zcard(LOBBY_KEY) == 0
