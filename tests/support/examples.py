"""The examples of a Markdown document: its fenced ``sh`` and ``python`` blocks, each run
by a test unless an HTML comment on the line before says why not
(``<!-- example: not run: <why> -->``).

A shell block is commands and what they print: a line starting ``$ `` begins a command
(its continuation lines end in ``\\`` or ``|`` or start with blanks), the lines up to the
next command are its output; a block without ``$`` is commands alone. What a command
printed is compared by its shape (`same_output`): dealt cards, hashes and ids differ from
run to run, the members, the types and the lengths do not.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FENCE = re.compile(r"^```(\w*)\s*$")
_SKIP = re.compile(r"^<!-- example: not run: (.+) -->$")


@dataclass(frozen=True)
class Example:
    """One fenced block of a document: where it starts, its language and text, and why it
    is not run (None when it is)."""

    path: Path
    line: int
    language: str
    text: str
    not_run: str | None

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass(frozen=True)
class Command:
    """A shell command of an example and what the document says it prints."""

    text: str
    printed: list[str]


def examples(path: Path) -> list[Example]:
    """The ``sh`` and ``python`` blocks of the Markdown document `path`, in order."""
    lines = path.read_text().splitlines()
    found: list[Example] = []
    index = 0
    while index < len(lines):
        fence = _FENCE.match(lines[index])
        if fence is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        language = fence.group(1)
        if language in {"sh", "python"}:
            before = lines[index - 1].strip() if index else ""
            skipped = _SKIP.match(before)
            found.append(
                Example(
                    path,
                    index + 1,
                    language,
                    "\n".join(lines[index + 1 : end]) + "\n",
                    skipped.group(1) if skipped else None,
                )
            )
        index = end + 1
    return found


def commands(example: Example) -> list[Command]:
    """The commands of a shell example and what each prints."""
    lines = example.text.splitlines()
    if not any(line.startswith("$ ") for line in lines):
        return [Command(example.text, [])]
    found: list[Command] = []
    for line in lines:
        continued = bool(found) and (
            found[-1].text.rstrip().endswith(("\\", "|")) and not found[-1].printed
        )
        if line.startswith("$ "):
            found.append(Command(line[2:] + "\n", []))
        elif continued:
            found[-1] = Command(found[-1].text + line + "\n", [])
        elif found:
            found[-1].printed.append(line)
    return found


def _token_shape(token: str) -> str:
    if re.fullmatch(r"[0-9a-f]{64}", token):
        return "hex64"
    if re.fullmatch(r"-?\d+(\.\d+)?", token):
        return "number"
    return token


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def same_output(expected: str, actual: str) -> bool:
    """Whether the line a command printed has the shape of the document's: JSON by
    `same_shape`; other text token by token (a hash for a hash, a number for a number)."""
    wanted, got = _json(expected), _json(actual)
    if wanted is not None and got is not None:
        return same_shape(wanted, got)
    return [_token_shape(token) for token in expected.split()] == [
        _token_shape(token) for token in actual.split()
    ]


def same_shape(expected: Any, actual: Any) -> bool:
    """Whether the JSON value `actual` has the shape of `expected`: the same members,
    types and lengths, and the API's own names (lower-case words: an event type, a phase,
    a code) as they are."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(expected) == set(actual)
            and all(same_shape(expected[key], actual[key]) for key in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(same_shape(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, str):
        if re.fullmatch(r"[a-z_]+", expected):
            return bool(expected == actual)
        return isinstance(actual, str)
    if isinstance(expected, bool) or expected is None:
        return type(expected) is type(actual)
    if isinstance(expected, int | float):
        return isinstance(actual, int | float) and not isinstance(actual, bool)
    return type(expected) is type(actual)
