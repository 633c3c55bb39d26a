"""A process's sign of life: a file it touches as it works, and the check of that file.

The clock (`python -m api.runtime.clock`) serves nothing a probe could call, so with
`CLOCK_HEARTBEAT_FILE` set it touches that file after every tick, whether the tick
succeeded or not: the file's age says whether its loop still turns. A loop stuck for
good (a deadlock, a call that never returns) stops the touches, and the liveness
probe restarts the process; an unreachable Redis does not, since a restart would not
bring it back and the clock goes on ticking and logging meanwhile.

`python -m api.runtime.heartbeat FILE MAX_AGE` exits 0 when FILE was touched within MAX_AGE
seconds and 1, saying why, when it was not or does not exist (2 for bad arguments).
It imports nothing else of the gateway, so a probe costs a bare interpreter's start.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence

USAGE = "usage: python -m api.runtime.heartbeat FILE MAX_AGE_SECONDS"


def beat(path: str) -> None:
    """Set `path`'s modification time to now, creating the file if needed."""
    with open(path, "a"):
        pass
    os.utime(path)


def age(path: str, now: float | None = None) -> float | None:
    """Seconds since `path` was last touched, or None if it does not exist."""
    try:
        touched = os.stat(path).st_mtime
    except FileNotFoundError:
        return None
    return (time.time() if now is None else now) - touched


def check(path: str, max_age: float, now: float | None = None) -> str | None:
    """None if `path` was touched within `max_age` seconds, else the reason it was not."""
    seconds = age(path, now)
    if seconds is None:
        return f"{path} does not exist: the process has not completed a round yet"
    if seconds > max_age:
        return f"{path} was last touched {seconds:.1f} s ago (more than {max_age:g} s)"
    return None


def main(argv: Sequence[str]) -> int:
    """The probe: 0 if alive, 1 if not, 2 for bad arguments."""
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    path, raw = argv
    try:
        max_age = float(raw)
    except ValueError:
        max_age = -1.0
    if not max_age > 0:
        print(f"MAX_AGE_SECONDS must be a positive number, not {raw!r}\n{USAGE}", file=sys.stderr)
        return 2
    problem = check(path, max_age)
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
