"""No function over 60 lines and no class over 400 in api/ or evaluator/ (`make lint`
runs this test, and the suite with it).

A definition's size is its lines from `def` (or `class`) to its last line, its docstring
and nested definitions included, its decorators not; each is named by its place (a
method as Class.method, a nested function as outer.inner).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "evaluator")
FUNCTION_LINES = 60
CLASS_LINES = 400

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(frozen=True)
class Size:
    """One function or class: where it is, its name, its lines and its limit."""

    path: str
    name: str
    kind: str
    line: int
    lines: int
    limit: int


def sizes(tree: ast.AST, path: str, prefix: str = "") -> Iterator[Size]:
    """Every function and class in `tree`, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, Definition):
            name = prefix + node.name
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if isinstance(node, ast.ClassDef):
                yield Size(path, name, "class", node.lineno, lines, CLASS_LINES)
            else:
                yield Size(path, name, "function", node.lineno, lines, FUNCTION_LINES)
            yield from sizes(node, path, name + ".")
        else:
            yield from sizes(node, path, prefix)


def modules(root: Path, packages: Iterable[str]) -> Iterator[Path]:
    """The Python files of `packages` under `root`."""
    for package in packages:
        yield from sorted((root / package).rglob("*.py"))


def problems(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> list[str]:
    """One line per definition over its limit; the empty list when all is well."""
    found: list[str] = []
    for module in modules(root, packages):
        path = module.relative_to(root).as_posix()
        for size in sizes(ast.parse(module.read_text(), str(module)), path):
            if size.lines > size.limit:
                found.append(
                    f"{path}:{size.line}: {size.kind} {size.name} is {size.lines} lines long"
                    f" (at most {size.limit}): shorten it"
                )
    return found


def test_no_function_or_class_is_over_its_limit() -> None:
    found = problems()
    assert not found, "\n".join(found)


# --------------------------------------------------------------------------- the check itself


def function(name: str, lines: int, indent: str = "") -> str:
    """A function of exactly `lines` lines."""
    body = "".join(f"{indent}    x{number} = {number}\n" for number in range(lines - 2))
    return f"{indent}def {name}() -> None:\n{indent}    '''Docstring.'''\n{body}"


def tree(tmp_path: Path, source: str) -> Path:
    """A package `api` under `tmp_path` with one module holding `source`."""
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "module.py").write_text(source)
    return tmp_path


def test_a_function_of_61_lines_fails_and_one_of_60_passes(tmp_path: Path) -> None:
    root = tree(tmp_path, function("short", 60) + function("long", 61))
    assert problems(root, ["api"]) == [
        "api/module.py:61: function long is 61 lines long (at most 60): shorten it"
    ]


def test_methods_and_nested_functions_are_named_by_their_place(tmp_path: Path) -> None:
    source = "class Table:\n" + function("move", 61, "    ")
    source += "def outer() -> None:\n" + function("inner", 61, "    ")
    found = problems(tree(tmp_path, source), ["api"])
    assert [line.split(": ")[1] for line in found] == [
        "function Table.move is 61 lines long (at most 60)",
        "function outer is 62 lines long (at most 60)",
        "function outer.inner is 61 lines long (at most 60)",
    ]


def test_a_class_of_401_lines_fails(tmp_path: Path) -> None:
    methods = "".join(function(f"move{number}", 40, "    ") for number in range(10))
    root = tree(tmp_path, "class Table:\n" + methods)
    assert problems(root, ["api"]) == [
        "api/module.py:1: class Table is 401 lines long (at most 400): shorten it"
    ]
