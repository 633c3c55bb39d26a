"""Shared fixtures: real servers on free loopback ports, started and stopped by the tests.

The harnesses themselves live in tests/support; here they become fixtures.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import flask
import grpc
import pytest
from hypothesis import settings

from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from tests.support.gateway import SignedInClient
from tests.support.processes import RedisProcess

# Every Flask app's test client signs in as an app does: a table's creation or a seat's
# grant sent without a credential gets a new player's key (tests/support/gateway.py).
flask.Flask.test_client_class = SignedInClient

# Tests assert behaviour, never timings: no property test fails because a busy machine
# ran one of its examples slowly (Hypothesis's default deadline is 200 ms an example).
settings.register_profile("cardroom", deadline=None)
settings.load_profile("cardroom")

if TYPE_CHECKING:
    from evaluator.server import EvaluatorServer


@pytest.fixture(scope="session")
def evaluator_server() -> Iterator[EvaluatorServer]:
    """The real evaluator, serving on a free loopback port for the whole session."""
    from evaluator.server import create_server

    server = create_server("127.0.0.1:0", workers=8)
    server.start()
    yield server
    server.stop(grace=1)


@pytest.fixture(scope="session")
def evaluator_address(evaluator_server: EvaluatorServer) -> str:
    """host:port of the session's evaluator."""
    return f"127.0.0.1:{evaluator_server.port}"


@pytest.fixture
def evaluator_stub(evaluator_address: str) -> Iterator[pb_grpc.EvaluatorStub]:
    """A client stub on a fresh channel to the session's evaluator."""
    with grpc.insecure_channel(evaluator_address) as channel:
        yield pb_grpc.EvaluatorStub(channel)


@pytest.fixture(scope="session")
def redis_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisProcess]:
    """The session's private Redis."""
    server = RedisProcess(str(tmp_path_factory.mktemp("redis")))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, redis_process: RedisProcess) -> Iterator[str]:
    """The private Redis, emptied for this test; after it, the ledger's audit over the
    whole store must be clean (docs/ledger.md#the-audit), unless the test is marked
    `ledger_unchecked` (it breaks the store on purpose)."""
    import redis

    if redis_process.process is None:
        redis_process.start()
    redis.Redis.from_url(redis_process.url).flushall()
    yield redis_process.url
    if request.node.get_closest_marker("ledger_unchecked") is None:
        audit_store(redis_process)


def audit_store(redis_process: RedisProcess) -> None:
    """Fail unless the ledger's audit over the store is clean (a stopped Redis: nothing)."""
    import redis

    from tests.support.ledger import assert_ledger_clean

    if redis_process.process is None:
        return
    client = redis.Redis.from_url(redis_process.url)
    try:
        client.ping()
    except redis.RedisError:
        return
    finally:
        client.close()
    assert_ledger_clean(redis_process.url)


# The long suites (each over about five seconds on a loaded machine, measured with
# `pytest --durations`): marked slow here, by node id prefix, so that `make test-fast`
# (`-m "not slow"`) leaves them to `make test`.
SLOW = (
    "tests/browser/",
    "tests/integration/test_bench_gateway.py",
    "tests/integration/test_bench_capacity.py",
    "tests/integration/test_schema_fuzz.py",
    "tests/integration/test_stateful_tables.py",
    "tests/integration/test_leaks.py",
    "tests/integration/test_fault_injection.py",
    "tests/integration/test_races.py",
    "tests/integration/test_gunicorn_process.py",
    "tests/integration/test_compression_gunicorn.py",
    "tests/integration/test_evaluator_process.py",
    "tests/integration/test_clock_process.py",
    "tests/integration/test_locustfile.py",
    "tests/integration/test_demo.py",
    "tests/integration/test_bots.py::test_the_bots_process_plays_and_a_killed_one_is_replaced",
    # a gthread worker sees its clients gone only at its next keep-alive
    "tests/integration/test_fanout.py::test_event_streams_of_a_gunicorn_gateway_hold_a_read"
    "_per_worker[gthread]",
    "tests/integration/test_bench_evaluator.py::test_the_floors_measure_every_server_and_say",
    "tests/integration/test_docs_examples.py::test_the_python_examples_run[docs/sdk.md]",
    "tests/integration/test_abuse.py::test_oversized_chunked_bodies_get_413_through_gunicorn",
    "tests/integration/test_away.py::test_an_abandoned_paiute_deal_is_void_and_the_table_waits",
    "tests/integration/test_away.py::test_a_table_left_alone_deals_away_after_deals_then_waits",
    "tests/integration/test_ledger_crashes.py::test_killed_workers_neither_make_nor_lose_a_chip",
    "tests/integration/test_webhooks.py::test_a_move_answers_while_the_receiver_hangs",
    "tests/integration/test_abuse.py::test_the_limit_holds_across_gunicorn_workers",
    "tests/integration/test_evaluator_grpc.py::test_paiute_batch_matches_the_scalar_path",
    "tests/integration/test_paiute_tables.py::test_random_games_keep_cards_private_and_chips_whole",
    "tests/integration/test_transcript_privacy.py::test_no_one_receives_a_card_they_may_not_see",
    "tests/unit/test_deal_uniformity.py::test_production_deals_are_uniform_and_never_repeat_a_card",
    "tests/unit/test_guts_chips_property.py::test_random_play_keeps_every_invariant",
    "tests/unit/test_paiute_chips_property.py::test_random_play_keeps_every_invariant",
    "tests/unit/test_paiute_ranking.py::test_agrees_with_brute_force",
    "tests/unit/test_parser_fuzz.py",
    "tests/unit/test_replay.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the long suites `slow`."""
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)


REPORTS = Path(__file__).resolve().parent.parent / "var" / "reports"
_SESSION_STARTED = time.time()


def _report_line(name: str, report: dict[str, Any]) -> str:
    if name == "schema_fuzz":
        stateful = report["stateful"]
        shares = report.get("accepted_shares", {})
        accepted = ", ".join(
            f"{operation} {shares[operation]:.0%}"
            for operation in ("takeSeat", "leaveSeat", "streamEvents")
            if operation in shares
        )
        return (
            f"schema fuzzing: {report['operations']} operations, {report['cases']:,} cases "
            f"({report['cases_on_real_tables']:,} on real tables), "
            f"{report['failures']} failures, {report['seconds']} s; stateful: "
            f"{stateful['scenarios']} scenarios, {stateful['cases']:,} cases, "
            f"{stateful['moves_accepted']} moves and {stateful['leaves_accepted']} leaves "
            f"accepted, {stateful['failures']} failures; accepted: {accepted}"
        )
    if name == "stateful":
        return (
            f"stateful tables: {report['steps']:,} steps in {report['examples']} examples, "
            f"{report['events_replayed']:,} events replayed, {report['seconds']} s"
        )
    if name == "uniformity":
        games = ", ".join(
            f"{game} min p {figures['min_p']:.3g} (global p {figures['global_p']:.3g})"
            for game, figures in report["games"].items()
        )
        return f"deal uniformity: {report['deals_per_game']:,} deals per game, {games}"
    return f"{name}: {json.dumps(report)[:200]}"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print the figures the attacking tests wrote in this run (var/reports/*.json)."""
    fresh = sorted(
        path for path in REPORTS.glob("*.json") if path.stat().st_mtime >= _SESSION_STARTED
    )
    if not fresh:
        return
    terminalreporter.section("figures of this run (var/reports)")
    for path in fresh:
        try:
            line = _report_line(path.stem, json.loads(path.read_text()))
        except (KeyError, TypeError, ValueError) as error:
            line = f"{path.stem}: unreadable ({error})"
        terminalreporter.write_line(line)
