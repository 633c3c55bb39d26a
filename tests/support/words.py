"""English words left in a text said in another language: the vocabulary of the
gateway's English messages (messages.pot), less what every language writes as it is.

A word counts once its placeholders, quoted text ('...', "...", `...`, <...>) and the
names the API itself spells (fields, query parameters, moves, games and options, as the
OpenAPI document and the games name them) are left out; a few words each language takes
as loanwords, or spells the same, are its own.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
_WORD = re.compile(r"[^\W\d_]{4,}")
# placeholders, quoted text, a parameter's value (after=3), hyphenated names (headers) and
# the names of settings (BOTS_ALLOWED)
_QUOTED = re.compile(
    r"\{[^}]*\}|'[^']*'|\"[^\"]*\"|`[^`]*`|<[^>]*>|\S+=\S+|[^\W\d_]+(?:-[^\W\d_]+)+"
    r"|\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"
)

# written as they are in every language: protocols, formats, headers, and words a
# sentence spells as a name of the API (a media type, a JSON value)
TECHNICAL = frozenset(
    {
        "json",
        "redis",
        "unix",
        "dfff",
        "escape",
        "application",
        "idempotency",
        "idempotent",
        "true",
        "false",
        "object",
        "array",
        "guts",
        "paiute",
        "bearer",
        "authorization",
        "credential",
    }
)
# words of a language that English spells the same, or loanwords it writes as they are
OWN: dict[str, frozenset[str]] = {
    "hu": frozenset({"token", "most"}),
    "et": frozenset({"string", "server", "just"}),
    "sw": frozenset(),
    "ps": frozenset(),
}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield str(key)
            yield from _strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from _strings(child)
    elif isinstance(value, str):
        yield value


@functools.cache
def api_names() -> frozenset[str]:
    """Every property, parameter and enum value the OpenAPI document spells."""
    document = yaml.safe_load((ROOT / "api" / "http" / "openapi.yaml").read_text())
    names: set[str] = set()
    pending: list[Any] = [document]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            names.update(str(key).lower() for key in item.get("properties", {}))
            if "name" in item and item.get("in") in {"query", "path", "header"}:
                names.add(str(item["name"]).lower())
            names.update(str(value).lower() for value in item.get("enum", []))
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return frozenset(names)


@functools.cache
def english_vocabulary() -> frozenset[str]:
    """The words of the gateway's English messages, less the ones every language keeps."""
    with (ROOT / "api" / "i18n" / "messages.pot").open("rb") as file:
        catalog = read_po(file)
    words: set[str] = set()
    for message in catalog:
        ids = [message.id] if isinstance(message.id, str) else list(message.id)
        for text in ids:
            if text:
                words.update(word.lower() for word in _WORD.findall(_QUOTED.sub(" ", text)))
    return frozenset(words - TECHNICAL - api_names())


def english_words(text: str, language: str) -> list[str]:
    """The English words left in `text`, said in `language`."""
    vocabulary = english_vocabulary() - OWN[language]
    return [word for word in _WORD.findall(_QUOTED.sub(" ", text)) if word.lower() in vocabulary]
