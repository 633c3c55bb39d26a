"""The gateway of the tree a benchmark measures, built in this process: its package, its
settings, its app, its table service and its clock.

`--against REV` runs another revision's gateway beside this tree's, in the same
benchmark, so the benchmarks reach the gateway's construction only through here, by
the package's name: `api/`, or `gateway/` in a tree from before the package had that
name. When the way the app, the service or the clock is built changes, this module is
the one place to follow (and, for the older trees still measured, to say what they did
instead). Nothing here imports the gateway before it is asked to, so that another
tree's package can be put first on the import path (`use_package`).
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT

# the gateway's package, newest name first; a tree holds the one with a runtime/ folder
# (a tree older than the layers held an api/ without one, which no benchmark measures)
PACKAGES = ("api", "gateway")
THIS_TREE = PACKAGES[0]


def package_in(source: Path) -> str:
    """The gateway's package in the checked-out tree `source`."""
    return next((name for name in PACKAGES if (source / name / "runtime").is_dir()), PACKAGES[-1])


def package_at(revision: str) -> str:
    """The gateway's package in `revision` of this repository."""
    listed = subprocess.run(
        ["git", "ls-tree", "--name-only", revision, *(f"{name}/runtime" for name in PACKAGES)],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout.split()  # fmt: skip
    return next((name for name in PACKAGES if f"{name}/runtime" in listed), PACKAGES[-1])


def link_package(source: Path, folder: Path) -> None:
    """Put in `folder` a link to the gateway's package of the checked-out tree `source`
    (the package alone, none of the tree's other code: `use_package`)."""
    package = package_in(source)
    (folder / package).symlink_to(source.resolve() / package, target_is_directory=True)


def extract_package(revision: str, folder: Path) -> None:
    """Write into `folder` the gateway's package of `revision`, and nothing else of it."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, package_at(revision)],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")


def use_package(shim: str | None) -> str:
    """The name of the gateway's package this process measures: this tree's with no
    `shim`, else the one in the folder `shim` (`link_package`, `extract_package`), put
    first on the import path; that package must not have been imported yet."""
    if shim is None:
        return THIS_TREE
    package = next(path.name for path in Path(shim).iterdir())
    if shim not in sys.path:
        if package in sys.modules:
            raise RuntimeError(f"the {package} package was imported already")
        sys.path.insert(0, shim)
    return package


def in_process_settings(redis_url: str, evaluator_address: str, package: str = THIS_TREE) -> Any:
    """The gateway's settings for in-process use: no clock, no rate limits (nor on players
    per address)."""
    settings = importlib.import_module(f"{package}.settings").Settings
    return settings.from_env(
        {
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_address,
            "CLOCK": "false",
            "RATE_LIMIT_PER_ADDRESS": "0",
            "RATE_LIMIT_PER_TOKEN": "0",
            # every player comes from one address
            "PLAYERS_PER_ADDRESS": "0",
            # its players buy in 100,000 chips, at many tables each
            "PLAY_MONEY_GRANT": str(10**12),
            "LOG_LEVEL": "warning",
        }
    )


def create_app(settings: Any, package: str = THIS_TREE) -> Any:
    """The gateway's WSGI app (Flask's, with its service in `extensions`)."""
    return importlib.import_module(f"{package}.app").create_app(settings)


def settle_after_load(settings: Any, package: str = THIS_TREE) -> None:
    """The garbage-collection policy a gunicorn worker applies once its app is loaded."""
    policy = importlib.import_module(f"{package}.runtime.gc_policy")
    policy.settle_after_load(settings.gc_threshold)


def clock_service(settings: Any, package: str = THIS_TREE) -> Any:
    """What the clock's own process builds, without players: the tree's services from its
    bootstrap, or a tree's table service from before there was one (both hold `store`
    and `evaluator`)."""
    tree_app = importlib.import_module(f"{package}.app")
    if hasattr(tree_app, "build_service"):
        return tree_app.build_service(settings, players=False)
    return importlib.import_module(f"{package}.bootstrap").bootstrap(settings, players=False)


def deadlines_of(service: Any) -> Any:
    """What a tree's clock is given: its services' deadlines, or an older tree's table
    service (both apply a table's deadline with `run_deadline`)."""
    return getattr(service, "deadlines", service)


def make_clock(
    service: Any, interval: float, sweep: float | None = None, package: str = THIS_TREE
) -> Any:
    """A clock over `service`: a tick every `interval` s, a repair pass every `sweep` s
    (the clock's own default without it)."""
    clock = importlib.import_module(f"{package}.runtime.clock").Clock
    deadlines = deadlines_of(service)
    if sweep is None:
        return clock(deadlines, interval)
    return clock(deadlines, interval, sweep=sweep)


def run_packer(service: Any, package: str = THIS_TREE) -> int:
    """What the tree's packer, which its clock runs, packs now (`api.service.packing`):
    the deals packed; 0 for a tree whose commits packed the deals themselves."""
    try:
        packer = getattr(importlib.import_module(f"{package}.service.packing"), "Packer", None)
    except ImportError:
        return 0
    return 0 if packer is None else int(packer(service.store).run())


def count_deadlines(service: Any) -> dict[str, float]:
    """Count what the service's clock does with each due table, by wrapping the service's
    `run_deadline`: "attempts" and "applied" (the ones that changed the table), filled
    in as the clock runs."""
    counts: dict[str, float] = {"attempts": 0, "applied": 0}
    deadlines = deadlines_of(service)
    applied = deadlines.run_deadline

    def counted(table_id: str) -> bool:
        counts["attempts"] += 1
        done = bool(applied(table_id))
        counts["applied"] += int(done)
        return done

    deadlines.run_deadline = counted
    return counts
