"""No English left in a problem said in another language: every translation in the
catalogues, every sentence the gateway's code says to a client (which must then be in the
catalogues), and every problem the gateway builds by itself, said in sw, ps, hu and et."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from api import errors
from api.errors import ApiError
from api.http.problems import problem_body
from api.http.schemas import parse_json_body
from api.i18n import LANGUAGES, SOURCE_LANGUAGE
from api.i18n.catalogs import catalogue_path
from api.service.credentials import missing_credential
from tests.support.words import english_words

ROOT = Path(__file__).resolve().parents[2]
TRANSLATED = [language for language in LANGUAGES if language != SOURCE_LANGUAGE]
# what speaks to no client: Prometheus' help texts, and the event-log replay the tests
# check tables with
NOT_SAID = {"api/telemetry.py", "api/games/replay.py"}
# what builds a problem from a detail template
PROBLEM_BUILDERS = frozenset(
    {
        "ApiError",
        "problem",
        "RuleError",
        "EvaluatorUnavailable",
        "StoreUnavailable",
        "from_rule_error",
        "_coded",
        "invalid_credential",
        "bad_option",
        "quota_exceeded",
    }
)
# a sentence: a capital letter (or a placeholder or quote) first, three words, a stop
_SENTENCE = re.compile(r"^[A-Z{'][^\n]*\s\S+\s\S+.*[.?]$")


def _msgids() -> set[str]:
    with (ROOT / "api" / "i18n" / "messages.pot").open("rb") as file:
        catalog = read_po(file)
    found: set[str] = set()
    for message in catalog:
        if message.id:
            found.update([message.id] if isinstance(message.id, str) else message.id)
    return found


def _callee(call: ast.Call) -> str | None:
    function = call.func
    if isinstance(function, ast.Name):
        return function.id
    return function.attr if isinstance(function, ast.Attribute) else None


def _said(path: Path) -> Iterator[tuple[int, str]]:
    """The sentences a module holds outside its docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        # text built at run time cannot be looked up: a problem's detail is a template
        if isinstance(node, ast.Call) and _callee(node) in PROBLEM_BUILDERS:
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if isinstance(argument, ast.JoinedStr) or (
                    isinstance(argument, ast.BinOp)
                    and any(
                        isinstance(side, ast.Constant) and isinstance(side.value, str)
                        for side in (argument.left, argument.right)
                    )
                ):
                    yield node.lineno, ast.unparse(argument)
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and _SENTENCE.match(node.value)
        ):
            yield node.lineno, node.value


@pytest.mark.parametrize("language", TRANSLATED)
def test_no_translation_leaves_an_english_word(language: str) -> None:
    with catalogue_path(language).open("rb") as file:
        catalog = read_po(file, locale=language)
    left = []
    for message in catalog:
        strings = [message.string] if isinstance(message.string, str) else message.string
        for text in strings or ():
            if message.id and english_words(text, language):
                left.append((english_words(text, language), text))
    assert not left, f"{language}: English words left in {left}"


def test_every_sentence_the_gateway_says_is_in_the_catalogues() -> None:
    known = _msgids()
    unknown = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sorted((ROOT / "api").rglob("*.py"))
        if str(path.relative_to(ROOT)) not in NOT_SAID
        for line, text in _said(path)
        if text not in known
    ]
    assert not unknown, "said to clients, but in no catalogue (mark it, make messages):\n" + (
        "\n".join(unknown)
    )


def _built_by_the_gateway() -> list[ApiError]:
    """The problems api.errors builds, and the schema's refusals of each kind."""
    built = [
        errors.StoreUnavailable(),
        errors.EvaluatorUnavailable(),
        errors.not_replicated(),
        errors.table_not_found("t1"),
        errors.seat_not_found(2),
        errors.hand_not_found(3),
        errors.missing_token(),
        errors.invalid_token(),
        errors.wrong_seat(2),
        errors.idempotency_key_reused(),
        errors.idempotency_in_progress(),
        errors.too_much_contention(),
        errors.stale_version('"v3"'),
        errors.internal_error(),
        *(missing_credential(needs) for needs in ("player", "actor", "operator")),
    ]
    bodies = [
        ("CreateTable", b'{"game": "poker"}'),
        ("CreateTable", b'{"game": "guts", "cards": 4}'),
        ("CreateTable", b'{"game": "guts", "ante": 0}'),
        ("CreateTable", b'{"game": "guts", "ante": "one"}'),
        ("CreateTable", b'{"game": "guts", "colour": "red"}'),
        ("CreateTable", b'{"cards": 3}'),
        ("CreateTable", b'{"game": "guts", "name": ""}'),
        ("CreateTable", b"[1]"),
        ("CreateTable", b'{"game": "guts",'),
        ("Action", b'{"action": 3}'),
        ("Action", b'{"action": "call", "cards": "Ah"}'),
        ("EvaluateRequest", b'{"game": "guts3", "hands": []}'),
    ]
    for schema, body in bodies:
        with pytest.raises(ApiError) as refused:
            parse_json_body(body, "application/json", schema)
        built.append(refused.value)
    return built


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_problem_the_gateway_builds_is_said_in_the_language(language: str) -> None:
    for error in _built_by_the_gateway():
        english = problem_body(error, "/x", None)
        said = problem_body(error, "/x", language)
        assert said["code"] == english["code"]
        assert said["title"] != english["title"], (language, said)
        left = english_words(f"{said['title']} {said['detail']}", language)
        assert not left, (language, left, said["detail"])
