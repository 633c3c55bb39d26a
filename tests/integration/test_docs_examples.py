"""The README's and docs/sdk.md's examples, run against a real gateway (werkzeug serving
the app, a real Redis and the real evaluator): every ``sh`` block with curl and jq, in
order in one shell, what each command prints compared by its shape with what the
document says it prints; every ``python`` block, in order, through the SDK. A block that
is not run says why in the document (``<!-- example: not run: ... -->``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardroom_client import Client, GutsOptions
from tests.support.examples import commands, examples, same_output
from tests.support.gateway import served

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "docs" / "sdk.md"]
# the address the documents name for the gateway that `make run` starts
DOCUMENTED = re.compile(r"(?:localhost|127\.0\.0\.1):8000")


@pytest.fixture
def gateway_url(redis_url: str, evaluator_address: str) -> Iterator[str]:
    # as `make run` serves it: the defaults of the settings the documents speak of
    yield from served(redis_url, evaluator_address, long_poll_max=30.0)


def here(text: str, url: str) -> str:
    return DOCUMENTED.sub(url.removeprefix("http://"), text)


def test_every_example_is_run_or_says_why_not() -> None:
    for document in DOCUMENTS:
        found = examples(document)
        assert found, document
        for example in found:
            assert example.not_run is None or len(example.not_run) > 10, example.where


def test_the_readmes_shell_examples_print_what_it_says(gateway_url: str) -> None:
    if shutil.which("jq") is None or shutil.which("curl") is None:
        pytest.skip("needs curl and jq (apt-get install curl jq)")
    steps = [
        (example, command)
        for example in examples(ROOT / "README.md")
        if example.language == "sh" and example.not_run is None
        for command in commands(example)
    ]
    assert len(steps) >= 8
    script = "".join(
        f"printf '\\n@@@ {index}\\n'\n{here(command.text, gateway_url)}"
        for index, (_, command) in enumerate(steps)
    )
    run = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    printed = re.split(r"\n@@@ \d+\n", "\n" + run.stdout)[1:]
    assert len(printed) == len(steps), run.stdout
    for (example, command), output in zip(steps, printed, strict=True):
        got = [line for line in output.splitlines() if line.strip()]
        assert len(got) == len(command.printed), (example.where, command.text, output)
        for expected, actual in zip(command.printed, got, strict=True):
            assert same_output(expected, actual), (example.where, command.text, expected, actual)


def _preludes(url: str) -> dict[str, str]:
    """What a fragment of docs/sdk.md takes as given, by a line of the fragment."""
    return {
        # a player's key with a seat at a Guts table whose deal waits for its declaration
        "for held in again.my_seats():": (
            "from tests.integration.test_docs_examples import seated_player\n"
            f"url = {url!r}\nkey = seated_player(url)\n"
        ),
        # an open client, a table and ann's seat there
        "with cardroom.stream(": (
            "from tests.integration.test_docs_examples import dealt_table\n"
            f"cardroom = Client({url!r})\ntable, ann, bo = dealt_table(cardroom)\n"
        ),
        # bo, who has declared already
        'bo.declare("in")': (
            "from tests.integration.test_docs_examples import dealt_table\n"
            f"cardroom = Client({url!r})\ntable, ann, bo = dealt_table(cardroom)\n"
            'bo.declare("in")\n'
        ),
    }


def seated_player(url: str) -> str:
    """A new player's key; the player sits at a Guts table (turns of 5 s) with another,
    in a deal that waits for both to declare."""
    with Client(url) as anonymous:
        key = anonymous.create_player("ann").key
        other = anonymous.with_credential(anonymous.create_player("bo").key)
        player = anonymous.with_credential(key)
        table = player.create_table(GutsOptions(turn_seconds=5))
        seat = player.take_seat(table.id, None, 100)
        other.take_seat(table.id, None, 100)
        seat.start()
        return key


def dealt_table(cardroom: Client) -> tuple[object, object, object]:
    """A Guts table (turns of 5 s) where ann and bo were dealt: the table and their seats."""
    ann_player = cardroom.with_credential(cardroom.create_player("ann").key)
    bo_player = cardroom.with_credential(cardroom.create_player("bo").key)
    table = ann_player.create_table(GutsOptions(turn_seconds=5))
    ann = ann_player.take_seat(table.id, None, 100)
    bo = bo_player.take_seat(table.id, None, 100)
    ann.start()
    return table, ann, bo


@pytest.mark.parametrize("document", ["README.md", "docs/sdk.md"])
def test_the_python_examples_run(gateway_url: str, document: str) -> None:
    preludes = _preludes(gateway_url)
    ran = 0
    for example in examples(ROOT / document):
        if example.language != "python" or example.not_run is not None:
            continue
        prelude = next((code for line, code in preludes.items() if line in example.text), "")
        code = "from cardroom_client import Client\n" + prelude + here(example.text, gateway_url)
        run = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert run.returncode == 0, (example.where, run.stdout, run.stderr)
        ran += 1
    assert ran >= 1
