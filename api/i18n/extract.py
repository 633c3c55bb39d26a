"""Babel's extraction of what the catalogues must hold beyond the calls in the code:
api/errors.py's problem titles, which its tables hold as data (a gateway code's title in
PROBLEM_CODES, a rule code's title made from its name), and the OpenAPI document's words
for what a pattern expects (``x-expected``) and why a field has no place
(``x-because``), which a refusal says."""

from __future__ import annotations

import ast
import io
from collections.abc import Collection, Iterator, Mapping
from typing import IO, Any

from babel.messages.extract import extract_python

Extracted = tuple[int, str | None, Any, list[str]] | tuple[int, Any, list[str], str | None]


def rule_title(code: str) -> str:
    """The English title of a rule code: "already_declared" -> "Already declared"."""
    return code.replace("_", " ").capitalize()


def extract_gateway(
    fileobj: IO[bytes],
    keywords: Mapping[str, Any],
    comment_tags: Collection[str],
    options: dict[str, Any],
) -> Iterator[Extracted]:
    """The messages of a Python file, then the titles of its PROBLEM_CODES and
    RULE_ERROR_STATUS tables."""
    source = fileobj.read()
    yield from extract_python(io.BytesIO(source), keywords, comment_tags, options)  # type: ignore[arg-type]
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id.endswith("_DETAIL")
            and isinstance(node.value, ast.Constant)
        ):
            yield node.lineno, None, node.value.value, []
        target: ast.expr | None = None
        if isinstance(node, ast.AnnAssign):
            target, table = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, table = node.targets[0], node.value
        if not isinstance(target, ast.Name) or not isinstance(table, ast.Dict):
            continue
        for key, value in zip(table.keys, table.values, strict=True):
            if not isinstance(key, ast.Constant) or not isinstance(key.value, str):
                continue
            comment = [f"the title of problem {key.value}"]
            if target.id == "PROBLEM_CODES" and isinstance(value, ast.Tuple):
                title = value.elts[1]
                if isinstance(title, ast.Constant):
                    yield title.lineno, None, title.value, comment
            elif target.id == "RULE_ERROR_STATUS":
                yield key.lineno, None, rule_title(key.value), comment


def extract_openapi(
    fileobj: IO[bytes],
    keywords: Mapping[str, Any],
    comment_tags: Collection[str],
    options: dict[str, Any],
) -> Iterator[Extracted]:
    """The ``x-expected`` and ``x-because`` words of the OpenAPI document, each once."""
    seen: set[str] = set()
    for number, line in enumerate(fileobj.read().decode().splitlines(), start=1):
        name, _, value = line.strip().partition(":")
        text = value.strip()
        if name in {"x-expected", "x-because"} and text and text not in seen:
            seen.add(text)
            yield (
                number,
                None,
                text,
                [f"{name} of the OpenAPI document: what a field expects, or why it has no place"],
            )
