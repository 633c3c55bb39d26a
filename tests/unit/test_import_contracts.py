"""The import contracts of `.importlinter` bite: one import added to a copy of the tree
(one that closes a cycle, or deploy importing the tests) breaks them, where the same
copy without it keeps them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
PACKAGES = ("api", "evaluator", "deploy", "bench")


def copy_of_the_tree(target: Path) -> Path:
    """The product packages' Python files and `.importlinter`, copied under `target`."""

    def not_python(directory: str, names: list[str]) -> list[str]:
        return [
            name
            for name in names
            if name == "__pycache__"
            or (not name.endswith(".py") and not (Path(directory) / name).is_dir())
        ]

    for package in PACKAGES:
        shutil.copytree(ROOT / package, target / package, ignore=not_python)
    shutil.copy(ROOT / ".importlinter", target / ".importlinter")
    return target


def lint_imports(tree: Path, contract: str) -> subprocess.CompletedProcess[str]:
    """`lint-imports` on the copy (its own directory comes first on sys.path) for one contract."""
    command = [str(LINT_IMPORTS), "--no-cache", "--no-logo", "--contract", contract]
    return subprocess.run(command, cwd=tree, capture_output=True, text=True, check=False)


def test_the_copy_keeps_the_contracts(tmp_path: Path) -> None:
    result = lint_imports(copy_of_the_tree(tmp_path), "acyclic")
    assert result.returncode == 0, result.stdout + result.stderr


# An import that closes a cycle, in a module of each kind of package, and the package
# whose children the cycle runs between.
CYCLES = [
    # the pipeline's own step imported back by the pipeline: the cycle api.http once had
    ("api/http/pipeline.py", "api.http.language", "api.http"),
    ("api/games/common.py", "api.games.guts", "api.games"),
    # a layer importing one above it: the cycle runs between api.http and api.service
    ("api/service/tables.py", "api.http.problems", "api"),
    ("evaluator/cards.py", "evaluator.guts", "evaluator"),
    ("deploy/validate/files.py", "deploy.validate.tools", "deploy.validate"),
]


def test_an_import_cycle_breaks_the_build(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path)
    for module, imported, _ in CYCLES:
        with (tree / module).open("a") as source:
            source.write(f"\nimport {imported}  # noqa: E402\n")
    result = lint_imports(tree, "acyclic")
    assert result.returncode == 1, result.stdout
    for _, _, package in CYCLES:
        assert f"No cycles are allowed in {package}." in result.stdout, result.stdout


def test_deploy_importing_the_tests_breaks_the_build(tmp_path: Path) -> None:
    tree = copy_of_the_tree(tmp_path)
    assert lint_imports(tree, "deploy-needs-no-tests").returncode == 0
    with (tree / "deploy" / "local_run.py").open("a") as source:
        source.write("\nfrom tests.support.processes import poll  # noqa: E402\n")
    result = lint_imports(tree, "deploy-needs-no-tests")
    assert result.returncode == 1, result.stdout
    assert "deploy is not allowed to import tests" in result.stdout
