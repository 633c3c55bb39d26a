"""`make demo` against a real gateway served over HTTP, and the images' healthchecks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from cardroom_client import Client, Event, Table, deck_commitment, leaf_digest
from cardroom_client.errors import from_problem
from cardroom_client.models import Fairness, HandHistory, Opening
from deploy import demo
from tests.support.deployment import image_healthcheck, run_with
from tests.support.gateway import served
from tests.support.processes import free_port

OPERATOR_KEY = "operator-key-of-the-demo-test-0123456789"


@pytest.fixture
def gateway_url(redis_url: str, evaluator_address: str) -> Iterator[str]:
    """A gateway where anyone may create a player (open mode)."""
    yield from served(redis_url, evaluator_address)


@pytest.fixture
def operator_gateway_url(redis_url: str, evaluator_address: str) -> Iterator[str]:
    """A gateway where players are created with an operator key only."""
    yield from served(
        redis_url, evaluator_address, players_mode="operator", operator_keys=(OPERATOR_KEY,)
    )


def test_the_demo_plays_complete_deals(gateway_url: str) -> None:
    lines: list[str] = []
    status = demo.main(["--url", gateway_url, "--timeout", "30"], say=lines.append)
    transcript = "\n".join(lines)
    assert status == 0, transcript
    assert "gateway ready: redis ok, evaluator ok" in transcript
    guts = transcript[transcript.index("== Guts") : transcript.index("== Paiute")]
    for seat, name in enumerate(demo.PLAYERS, start=1):
        assert f"seat {seat}: {name} buys in for 100" in guts
        assert re.search(rf"{name} holds (\S\S ){{2}}\S\S: wins \d+% .* -> (in|out)", guts)
    assert "declarations_revealed:" in guts
    assert re.search(r"deal_ended: outcome (won|uncontested|split|nobody_in)", guts)
    assert "= the commitment announced" in guts
    assert "the 9 cards dealt are at the deck's places in dealing order" in guts
    assert "chips: 300 on the table = 300 bought in" in guts
    assert re.search(r"Guts deal 1 complete: \w+, fairness verified\.", guts)
    paiute = transcript[transcript.index("== Paiute") :]
    if "Paiute: skipped" in paiute:
        assert "422 unsupported_game" in paiute
    else:
        assert "the 15 cards dealt are at the deck's places in dealing order" in paiute
        assert re.search(r"Paiute deal 1 complete: \w+, fairness verified\.", paiute)
    assert transcript.splitlines()[-1].startswith("summary: guts: deal 1 ")


def test_the_demo_signs_up_with_an_operator_key_where_it_must(operator_gateway_url: str) -> None:
    lines: list[str] = []
    status = demo.main(["--url", operator_gateway_url], say=lines.append)
    assert status == 1
    assert "401 missing_token" in lines[-1], lines[-1]
    assert "--operator-key" in lines[-1], lines[-1]
    lines.clear()
    arguments = ["--url", operator_gateway_url, "--timeout", "30", "--operator-key", OPERATOR_KEY]
    status = demo.main(arguments, say=lines.append)
    transcript = "\n".join(lines)
    assert status == 0, transcript
    assert "players: ann, bo, cy signed up (POST /v1/players), each with a key" in transcript
    assert re.search(r"Guts deal 1 complete: \w+, fairness verified\.", transcript)


def test_the_demo_says_when_no_gateway_answers() -> None:
    lines: list[str] = []
    status = demo.main(["--url", f"http://127.0.0.1:{free_port()}"], say=lines.append)
    assert status == 2
    assert "cannot reach the gateway" in lines[-1]


def test_a_forged_fairness_proof_is_caught() -> None:
    deck = tuple(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
    salts = [f"{i:032x}" for i in range(52)]
    leaves = tuple(leaf_digest(i, card, salts[i]) for i, card in enumerate(deck))
    commitment = deck_commitment(leaves)
    started = Event(
        1, "deal_started", {"commitment": commitment, "players": [1, 2], "cards": 2}, 0, 1
    )

    def history(*places: int) -> HandHistory:
        opened = tuple(Opening(i, deck[i], salts[i]) for i in places)
        proof = Fairness(commitment, leaves, opened, "")
        return HandHistory("t", 1, 1, 2, "won", [started], None, [], proof, None, {})

    dealt = {1: deck[0:4:2], 2: deck[1:4:2]}
    own = {1: history(0, 2), 2: history(1, 3)}
    lines: list[str] = []
    demo.check_fairness(history(), own, commitment, dealt, lines.append)
    assert "  fairness: the 4 cards dealt are at the deck's places in dealing order" in lines
    assert "  fairness: the other 52 places stay hidden from a spectator" in lines
    with pytest.raises(demo.DemoError, match="FAILED"):
        demo.check_fairness(history(), own, "0" * 64, dealt, lambda _: None)
    wrong = {1: ("Ah", "Kh"), 2: deck[1:4:2]}
    with pytest.raises(demo.DemoError, match="deck dealt it"):
        demo.check_fairness(history(), own, commitment, wrong, lambda _: None)
    with pytest.raises(demo.DemoError, match="does not open"):
        demo.check_fairness(history(), {1: history(1, 3)}, commitment, dealt, lambda _: None)


def test_paiute_is_skipped_when_the_gateway_has_no_paiute_tables() -> None:
    class NoPaiute(Client):
        def create_table(self, options: Any = None, **_: Any) -> Table:
            raise from_problem(
                422,
                {"code": "unsupported_game", "title": "Unsupported game", "detail": "not yet"},
                retry_after=None,
                method="POST",
                url="/v1/tables",
            )

    lines: list[str] = []
    with NoPaiute("http://unused") as client:
        players = dict.fromkeys(demo.PLAYERS, client)
        report = demo.play_paiute(client, players, lines.append, 1.0)
    assert report.skipped is not None
    assert lines[-1].startswith("Paiute: skipped: this gateway does not host Paiute")


def test_the_discard_keeps_wilds_and_pairs() -> None:
    assert demo.choose_discard(["7h", "7d", "9s", "Kc", "2c", "Ah"], wild_rank=9) == "2c"
    assert demo.choose_discard(["9h", "9d", "9s", "9c", "4h", "4d"], wild_rank=9) == "4h"


# ---------------------------------------------------------------- the images' healthchecks


def test_the_gateway_imageimage_healthcheck(gateway_url: str) -> None:
    command = image_healthcheck("Dockerfile.gateway")
    port = gateway_url.rpartition(":")[2]
    assert run_with(command, GATEWAY_BIND=f"0.0.0.0:{port}") == 0
    assert run_with(command, GATEWAY_BIND=f"0.0.0.0:{free_port()}") != 0


def test_the_evaluator_imageimage_healthcheck(evaluator_address: str) -> None:
    command = image_healthcheck("Dockerfile.evaluator")
    port = evaluator_address.rpartition(":")[2]
    assert run_with(command, EVALUATOR_LISTEN=f"[::]:{port}") == 0
    assert run_with(command, EVALUATOR_LISTEN=f"[::]:{free_port()}") != 0
