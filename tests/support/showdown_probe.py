"""Run in a process of its own (`python -m tests.support.showdown_probe ADDRESS`): the
standard library patched by gevent and gRPC made cooperative, as in a gateway worker,
so that the gateway's evaluator client batches its showdowns. Each scenario runs
against the evaluator at ADDRESS (or against no evaluator) and the results are printed
as one JSON object for `test_showdown_batches.py` to check."""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import grpc.experimental.gevent  # noqa: E402

grpc.experimental.gevent.init_gevent()

import json  # noqa: E402
import random  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import gevent  # noqa: E402

from api.adapters.evaluator import EvaluatorClient  # noqa: E402
from api.errors import ApiError  # noqa: E402
from evaluator.cards import parse_cards  # noqa: E402
from evaluator.guts import rank_guts3  # noqa: E402
from tests.support.processes import free_port  # noqa: E402

DECK = [rank + suit for rank in "23456789TJQKA" for suit in "cdhs"]


def _deal(seed: int) -> dict[str, list[str]]:
    cards = random.Random(seed).sample(DECK, 15)
    return {str(seat + 1): cards[3 * seat : 3 * seat + 3] for seat in range(5)}


def _outcome(client: EvaluatorClient, hands: dict[str, list[str]]) -> Any:
    """The strengths by seat, or the error's status, code and detail."""
    try:
        ranks = client.showdown("guts3", hands)
    except ApiError as error:
        return [error.status, error.code, error.detail]
    return {key: ranked.strength for key, ranked in ranks.items()}


def _at_once(client: EvaluatorClient, deals: list[dict[str, list[str]]]) -> list[Any]:
    jobs = [gevent.spawn(_outcome, client, hands) for hands in deals]
    gevent.joinall(jobs, timeout=60, raise_error=True)
    return [job.value for job in jobs]


def _expected(hands: dict[str, list[str]]) -> dict[str, int]:
    return {key: rank_guts3(parse_cards(" ".join(cards))).strength for key, cards in hands.items()}


def concurrent(address: str) -> dict[str, Any]:
    """40 tables' showdowns at once, then 5 one after the other: each gets its own ranks;
    a showdown with a card twice among them is refused alone."""
    client = EvaluatorClient(address, timeout=30)
    deals = [_deal(seed) for seed in range(40)]
    bad = 17
    deals[bad] = {**deals[bad], "2": [deals[bad]["1"][0], *deals[bad]["2"][1:]]}
    answers = _at_once(client, deals)
    alone = [_outcome(client, _deal(100 + seed)) for seed in range(5)]
    client.close()
    return {
        "right": sum(answers[i] == _expected(deals[i]) for i in range(40) if i != bad),
        "refused": answers[bad],
        "alone_right": sum(alone[i] == _expected(_deal(100 + i)) for i in range(5)),
    }


def unreachable(_: str) -> dict[str, Any]:
    """Showdowns at once with no evaluator listening: each is refused as unavailable."""
    client = EvaluatorClient(f"127.0.0.1:{free_port()}", timeout=1.0)
    answers = _at_once(client, [_deal(seed) for seed in range(10)])
    client.close()
    return {"answers": answers}


def silent(_: str) -> dict[str, Any]:
    """Showdowns at once against a listener that never speaks gRPC: each runs out its
    own deadline."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = EvaluatorClient(f"127.0.0.1:{listener.getsockname()[1]}", timeout=0.3)
        answers = _at_once(client, [_deal(seed) for seed in range(6)])
        client.close()
    return {"answers": answers}


if __name__ == "__main__":
    target = sys.argv[1]
    print(json.dumps({run.__name__: run(target) for run in (concurrent, unreachable, silent)}))
