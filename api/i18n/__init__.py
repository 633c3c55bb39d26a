"""The players' languages: message catalogues, hand descriptions and event lines.

English is the source language: every message is written in English in the code and
translated in gettext catalogues read with Babel (`api.i18n.catalogs`), one per
language and domain: `messages` for what the gateway says (problems, hand descriptions,
event lines), `page` for the table page's JavaScript. docs/languages.md says how a
client asks for a language and how a translation is added or corrected.
"""

from __future__ import annotations

from typing import Final

SOURCE_LANGUAGE: Final = "en"
# the languages a client may ask for, the source language first
LANGUAGES: Final = ("en", "sw", "ps", "hu", "et")
RIGHT_TO_LEFT: Final = frozenset({"ps"})


def N_(message: str) -> str:  # noqa: N802 (gettext's name for the marker)
    """`message` itself: marks a message kept as data for `make messages` to extract."""
    return message


def direction(language: str) -> str:
    """The writing direction of `language`: "rtl" or "ltr"."""
    return "rtl" if language in RIGHT_TO_LEFT else "ltr"
