"""The images, built by deploy/images/build.sh, run by deploy/compose.yaml under podman.

`make test` leaves this directory out: `make test-images` prepares the engine, builds
the images and then runs these tests with CARDROOM_IMAGES=1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.images.stack import Stack

# test_kubernetes.py needs no engine: `make test` runs it too
ENGINE_TESTS = ["test_images.py", "test_labels.py"]
collect_ignore = [] if os.environ.get("CARDROOM_IMAGES") == "1" else ENGINE_TESTS


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    """The compose project up on a free loopback port, ready; taken down (volumes too) after."""
    running = Stack.on_free_port()
    try:
        running.up()
        yield running
    finally:
        running.down()
