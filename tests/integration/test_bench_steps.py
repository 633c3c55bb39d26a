"""`make bench-gateway ARGS=--steps` times each step of a declare where the tree measured
holds it: the first of the step's places that tree has, or none (the step is reported
absent, not a crash), whichever name the gateway's package has; and every timer it set
is taken away again.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.gateway.steps import OUTER, STEPS, StepTimer, located
from bench.gateway.tree import package_in, use_package

ROOT = Path(__file__).resolve().parents[2]


def _package(tmp_path: Path) -> str:
    """A gateway package of another tree, written into `tmp_path`: its tables' service
    where the step table first looked for it, a module that cannot be imported, and
    runtime/ (what marks a gateway's package)."""
    name = "tree_" + re.sub(r"\W", "_", tmp_path.name)
    package = tmp_path / name
    for folder in ("service", "runtime"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "service" / "tables.py").write_text(
        "class TableService:\n    def act(self) -> str:\n        return 'acted'\n"
    )
    (package / "broken.py").write_text("import a_module_nobody_has\n")
    return name


def test_a_step_is_timed_at_the_first_of_its_places_the_tree_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = _package(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    moved = ("service.commands:TableCommands.act", "service.tables:TableService.act")
    found = located(name, moved)
    assert found is not None
    owner, attribute, candidate = found
    assert (owner.__name__, attribute, candidate) == ("TableService", "act", moved[1])
    # a step none of whose places is in the tree is absent
    assert located(name, ("service.tables:TableService.gone", "adapters.warm:Warm.get")) is None
    # a module that is there but cannot be imported is an error, not an absence
    with pytest.raises(ModuleNotFoundError):
        located(name, ("broken:anything",))


def test_this_tree_holds_a_place_for_every_step() -> None:
    assert package_in(ROOT) == use_package(None) == "api"
    for label, candidates in STEPS.items():
        assert (label == OUTER) == (not candidates), label
        if candidates:
            assert located("api", candidates) is not None, label


def test_a_timed_callable_is_put_back_as_it_was() -> None:
    class Base:
        def act(self) -> str:
            return "base"

    class Child(Base):
        def read(self) -> str:
            return "child"

    timer = StepTimer()
    read = Child.__dict__["read"]
    timer.wrap(Child, "act", "inherited")
    timer.wrap(Child, "read", "its own")
    with timer.timing():
        assert (Child().act(), Child().read()) == ("base", "child")
    assert set(timer.totals) == {"inherited", "its own"}
    timer.unwrap()
    assert "act" not in vars(Child)
    assert Child.__dict__["read"] is read
