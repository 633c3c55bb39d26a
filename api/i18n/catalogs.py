"""The message catalogues, read from their .po files once per process.

Each language's `locales/<lang>/LC_MESSAGES/<domain>.po` is read with Babel's
`read_po` the first time it is needed; a fuzzy or empty translation counts as none, and
a message without a translation is said in English. Plurals follow the catalogue's
Plural-Forms, compiled by the standard library's `gettext.c2py` (no eval). Messages are
`str.format` templates with named placeholders (`{seat}`); `say` fills them in.
"""

from __future__ import annotations

import functools
import gettext
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from babel.dates import format_datetime
from babel.messages.pofile import read_po

from api.errors import Moment
from api.i18n import LANGUAGES, SOURCE_LANGUAGE

log = logging.getLogger("api.i18n")

LOCALES: Final = Path(__file__).parent / "locales"
DOMAINS: Final = ("messages", "page")
ENGLISH_PLURAL: Final = "(n != 1)"


@dataclass(frozen=True)
class Translations:
    """One language's translations of one domain: msgid -> msgstr, or its plural forms."""

    language: str
    messages: Mapping[str, str | tuple[str, ...]]
    plural_expr: str
    plural: Callable[[int], int]

    def gettext(self, message: str, default: str | None = None) -> str:
        """The translation of `message` (`context\x04message` for one in a context), or
        `default`, or `message` itself."""
        found = self.messages.get(message)
        if isinstance(found, str):
            return found
        return message if default is None else default

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """The form of `singular`/`plural` for the number `n`."""
        forms = self.messages.get(singular)
        if isinstance(forms, tuple):
            index = self.plural(n)
            if 0 <= index < len(forms):
                return forms[index]
        return singular if n == 1 else plural


def catalogue_path(language: str, domain: str = "messages") -> Path:
    """Where the catalogue of `language` and `domain` is kept."""
    return LOCALES / language / "LC_MESSAGES" / f"{domain}.po"


@functools.cache
def translations(language: str, domain: str = "messages") -> Translations:
    """The translations of `language` in `domain` (English: none), read once."""
    if language not in LANGUAGES:
        raise ValueError(f"{language!r} is not one of the languages {LANGUAGES}")
    path = catalogue_path(language, domain)
    if language == SOURCE_LANGUAGE or not path.exists():
        return Translations(language, {}, ENGLISH_PLURAL, gettext.c2py(ENGLISH_PLURAL))
    with path.open("rb") as file:
        catalog = read_po(file, locale=language, domain=domain)
    messages: dict[str, str | tuple[str, ...]] = {}
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        key = message.id if isinstance(message.id, str) else message.id[0]
        if message.context:
            key = f"{message.context}\x04{key}"
        if isinstance(message.string, str):
            if message.string:
                messages[key] = message.string
        elif message.string and all(message.string):
            messages[key] = tuple(message.string)
    expr = catalog.plural_expr
    return Translations(language, messages, expr, gettext.c2py(expr))


class Phrase(str):
    """A placeholder's value that is itself a message (marked `N_` where it is written):
    said in the language of the template it fills, English as it is."""

    __slots__ = ()


def say(language: str, template: str, params: Mapping[str, Any] | None = None) -> str:
    """`template` in `language`, its placeholders filled from `params` (a `Phrase` among
    them in that language too).

    Without params the template is the text itself (it is never formatted, as the English
    text never was); a translation whose placeholders do not fit is replaced by English.
    """
    if language == SOURCE_LANGUAGE:
        text = template
    else:
        catalog = translations(language)
        text = catalog.gettext(template)
        if params and any(isinstance(value, Phrase | Moment) for value in params.values()):
            params = {key: _said(catalog, value) for key, value in params.items()}
    if not params:
        return text
    try:
        return text.format(**params)
    except (KeyError, IndexError, ValueError):
        log.warning("translation does not fit its placeholders", extra={"msgid": template})
        return template.format(**params)


def _said(catalog: Translations, value: Any) -> Any:
    """A placeholder's value in the catalogue's language: a `Phrase` translated, a
    `Moment` written as the language writes a date and a time (UTC)."""
    if isinstance(value, Phrase):
        return catalog.gettext(value)
    if isinstance(value, Moment):
        moment = datetime.fromtimestamp(value, UTC)
        return f"{format_datetime(moment, 'medium', tzinfo=UTC, locale=catalog.language)} UTC"
    return value


def say_plural(
    language: str, singular: str, plural: str, n: int, params: Mapping[str, Any] | None = None
) -> str:
    """The plural form of `singular`/`plural` for `n` in `language`, filled from `params`
    (`n` among them)."""
    text = translations(language).ngettext(singular, plural, n)
    filled = {"n": n, **(params or {})}
    try:
        return text.format(**filled)
    except (KeyError, IndexError, ValueError):
        return (singular if n == 1 else plural).format(**filled)
