"""The pure rules (`api.games`) import nothing outside the standard library."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import api.games

_PROBE = """
import importlib, json, sys
before = set(sys.modules)
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_every_module_of_the_games_imports_only_the_standard_library() -> None:
    modules = [f"api.games.{info.name}" for info in pkgutil.iter_modules(api.games.__path__)]
    assert "api.games.guts" in modules
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
        and not (name == "api" or name.startswith("api.games"))
    )
    assert outside == []
