"""The codes of refusals: the ones the code can answer, the ones docs/api.md lists, the
ones the two tables of api/errors.py give a status, are the same codes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from api.errors import (
    INTERNAL_RULE_CODES,
    PROBLEM_CODES,
    RULE_ERROR_STATUS,
    from_rule_error,
)
from api.http.schemas import openapi_document
from cardroom_client import RULE_CODES

ROOT = Path(__file__).resolve().parents[2]
# the calls that name a code as their first argument, and ApiError's second
_FIRST = {"problem", "from_rule_error", "RuleError", "_coded"}
_SECOND = {"ApiError"}


def _documented() -> dict[str, int]:
    """Each code docs/api.md's "Every code" tables list, with its status."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split("### Every code", 1)[1].split("\n## ", 1)[0]
    listed: dict[str, int] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[0].isdigit():
            continue
        for code in re.findall(r"`([a-z][a-z0-9_]*)`", cells[1]):
            assert code not in listed, f"{code} is listed twice"
            listed[code] = int(cells[0])
    return listed


def _raised() -> set[str]:
    """Every code the gateway's source names where it refuses a request."""
    codes: set[str] = set()
    for path in (ROOT / "api").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                index = 0 if name in _FIRST else 1 if name in _SECOND else None
                if index is not None and len(node.args) > index:
                    argument = node.args[index]
                    if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                        codes.add(argument.value)
            elif isinstance(node, ast.Subscript) and getattr(node.value, "id", "") == (
                "PROBLEM_CODES"
            ):
                if isinstance(node.slice, ast.Constant):
                    codes.add(str(node.slice.value))
            elif isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") in (
                "HTTP_EXCEPTION_CODES",
                "GUNICORN_CODES",
            ):
                assert isinstance(node.value, ast.Dict)
                codes |= {str(ast.literal_eval(value)) for value in node.value.values}
    codes |= _schema_codes(openapi_document())
    return codes


def _schema_codes(node: object) -> set[str]:
    """The codes the OpenAPI document's schemas name for their faults (x-problem-code)."""
    found: set[str] = set()
    if isinstance(node, dict):
        if "x-problem-code" in node:
            found.add(str(node["x-problem-code"]))
        for value in node.values():
            found |= _schema_codes(value)
    elif isinstance(node, list):
        for value in node:
            found |= _schema_codes(value)
    return found


def test_docs_list_every_code_with_its_status_and_no_other() -> None:
    table = {code: status for code, (status, _) in PROBLEM_CODES.items()}
    table.update(RULE_ERROR_STATUS)
    assert _documented() == table


def test_every_code_in_the_tables_is_answered_somewhere() -> None:
    unused = (set(PROBLEM_CODES) | set(RULE_ERROR_STATUS)) - _raised()
    assert not unused, f"codes nothing answers: {sorted(unused)}"


def test_every_code_the_source_answers_has_its_status() -> None:
    known = set(PROBLEM_CODES) | set(RULE_ERROR_STATUS) | INTERNAL_RULE_CODES
    unlisted = _raised() - known
    assert not unlisted, (
        f"codes without a status: {sorted(unlisted)}; give each one in api/errors.py"
        " (409 for the present state, 422 for the content) and list it in docs/api.md"
    )


@pytest.mark.parametrize("code", sorted(INTERNAL_RULE_CODES))
def test_a_rule_refusing_the_gateway_s_own_call_is_a_bug(code: str) -> None:
    error = from_rule_error(code, "A deal needs a shuffled deck.", "deck")
    assert (error.status, error.code, error.field) == (500, "internal_error", None)
    assert "deck" not in error.detail


def test_the_sdk_knows_the_rules_codes() -> None:
    assert set(RULE_CODES) == set(RULE_ERROR_STATUS)
