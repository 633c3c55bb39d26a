"""The pure rules (`gateway.games`) import nothing outside the standard library."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import gateway.games

_PROBE = """
import importlib, json, sys
before = set(sys.modules)
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_every_module_of_the_games_imports_only_the_standard_library() -> None:
    modules = [
        f"gateway.games.{info.name}" for info in pkgutil.iter_modules(gateway.games.__path__)
    ]
    assert "gateway.games.guts" in modules
    loaded = subprocess.run(
        [sys.executable, "-c", _PROBE, *modules],
        capture_output=True,
        text=True,
        check=True,
    )
    imported = json.loads(loaded.stdout)
    outside = sorted(
        name
        for name in imported
        if name.partition(".")[0] not in sys.stdlib_module_names
        and not (name == "gateway" or name.startswith("gateway.games"))
    )
    assert outside == []
