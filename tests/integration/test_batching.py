"""Group commit (api.adapters.batching) in a gevent process, as in a gateway worker, on a real
Redis: each request gets its own replies and errors, whatever shares its batch."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.processes import probe_results


@pytest.fixture(scope="module")
def probe(redis_process: Any) -> dict[str, Any]:
    import redis

    redis.Redis.from_url(redis_process.url).flushall()
    return probe_results("tests.support.batching_probe", redis_process.url)


def test_requests_made_at_once_share_batches_and_each_gets_its_replies(
    probe: dict[str, Any],
) -> None:
    seen = probe["concurrent"]
    assert seen["right"] == 300
    assert seen["requests"] == seen["observed"] == 300
    # the first request goes out alone; the 299 made while it was on the wire, together
    assert seen["batches"] < 300
    assert seen["largest"] > 1
    assert seen["idle"]


def test_a_request_made_alone_goes_out_at_once_on_its_own(probe: dict[str, Any]) -> None:
    assert probe["sequential"] == {"right": True, "sizes": [1] * 20}


def test_an_error_reply_is_its_own_requests_only(probe: dict[str, Any]) -> None:
    seen = probe["errors"]
    assert seen["one_batch"]  # the three requests went out together
    assert seen["kinds"] == [["ResponseError"], ["NoScriptError"], ["int", "ResponseError"]]
    assert seen["counter"] == 1


def test_scripts_a_redis_forgot_are_loaded_again_for_every_request(
    probe: dict[str, Any],
) -> None:
    # the table does not exist, so each compare-and-set answers 0, none raises NOSCRIPT
    assert probe["scripts_flushed"]["answers"] == [False]


def test_without_redis_every_request_fails_and_none_waits_forever(probe: dict[str, Any]) -> None:
    assert probe["redis_down"] == {"finished": 10, "errors": ["ConnectionError"], "idle": True}


def test_greenlets_killed_in_the_queue_leave_the_others_answered(probe: dict[str, Any]) -> None:
    seen = probe["interrupted"]
    assert seen["answers"] == ["GreenletExit", ["1"], ["2"], "GreenletExit", ["4"], ["5"]]
    assert seen["after"] == ["after"]
    assert seen["idle"]


def test_rate_limit_buckets_batched_count_every_request_once(probe: dict[str, Any]) -> None:
    assert probe["rate_limits"] == {"allowed": 10, "others": 50, "batched": True}


def test_too_few_replicas_refuse_the_requests_that_wrote_and_answer_the_reads(
    probe: dict[str, Any],
) -> None:
    seen = probe["unconfirmed"]
    assert seen["shared"]
    assert seen["writes"] == ['"not replicated"']
    assert seen["reads"] == ['["here", {}]']
    assert seen["after"] == ["here", {}]  # the connection goes on


def test_no_batching_when_off_or_on_a_cluster(probe: dict[str, Any]) -> None:
    assert probe["not_batched"] == {"off": True, "cluster": True}
