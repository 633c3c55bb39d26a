"""Names people see (a player's, a seat's, a table's), checked with Unicode's own data.

ICU (`icu`, PyICU) holds the Unicode properties and the confusables these checks read;
nothing here lists characters of its own. A name is kept in NFKC (fullwidth letters,
ligatures and other compatibility forms become their plain letters, odd spaces a space)
with the spaces at either end trimmed, and is refused when it holds:

- a character that does not show: a control or format character, a Default_Ignorable
  code point (the Hangul fillers U+3164, U+FFA0 and U+1160, the combining grapheme
  joiner U+034F, the Khmer inherent vowels, variation selectors), a line or paragraph
  separator, an unassigned or private-use code point;
- a character that is neither an identifier character (UTS #39's
  Identifier_Status=Allowed: the letters, digits and marks of the scripts in use),
  printable ASCII, punctuation, a currency or mathematical symbol nor an emoji (this
  leaves out the Braille blank U+2800 and box drawing, which show as nothing or as
  lines);
- a combining mark with no letter to sit on (at the start, or after a space), or the
  same mark twice on one letter (ICU's INVISIBLE check);
- no letter, digit or symbol at all.

Two names at one table may not look alike: each is reduced to its UTS #39 skeleton
(Unicode's confusables.txt: Cyrillic U+0430 and Latin "a", "rn" and "m", "l", "1" and
"I" come out the same) after case folding and with runs of spaces as one.
"""

from __future__ import annotations

import unicodedata

import icu

# characters a name may never hold (a UnicodeSet of Unicode properties, read by ICU)
_UNSHOWABLE = icu.UnicodeSet("[[:Default_Ignorable_Code_Point:][:C:][:Zl:][:Zp:]]")
_SHOWN = icu.UnicodeSet(
    "[[:Identifier_Status=Allowed:][\\u0020-\\u007e][:P:][:Sc:][:Sm:]"
    "[:Emoji:][:Extended_Pictographic:]]"
)
_MARKS = icu.UnicodeSet("[:M:]")
_VISIBLE = icu.UnicodeSet("[[:L:][:N:][:S:]]")
_SPOOF = icu.SpoofChecker()
_SPOOF.setChecks(icu.USpoofChecks.INVISIBLE)


def display_name(name: object, longest: int) -> str | None:
    """`name` as it is kept and shown (NFKC, trimmed), or None if it is not a fit name:
    not text, 1 to `longest` characters once trimmed, or holding what the module's
    docstring lists."""
    if not isinstance(name, str):
        return None
    shown = unicodedata.normalize("NFKC", name).strip()
    if not 1 <= len(shown) <= longest or not _fit(shown):
        return None
    return shown


def _fit(shown: str) -> bool:
    """Whether every character of `shown` shows, and shows as itself."""
    previous = " "
    for char in shown:
        if _UNSHOWABLE.contains(char) or not _SHOWN.contains(char):
            return False
        if _MARKS.contains(char) and previous == " ":
            return False
        previous = char
    if not any(_VISIBLE.contains(char) for char in shown):
        return False
    return not _SPOOF.check(shown)


def lookalike_key(name: str) -> str:
    """What two names at one table may not share: their confusables' skeleton, case and
    runs of spaces aside ("Ann", "ANN" and "ann" with a Cyrillic U+0430 are one, and so are
    "A  nn" and "a nn")."""
    folded = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    skeleton: str = _SPOOF.getSkeleton(0, folded)
    return skeleton


def lookalike_of(name: str, others: list[str]) -> str | None:
    """The first of `others` that looks like `name`, or None."""
    wanted = lookalike_key(name)
    return next((other for other in others if lookalike_key(other) == wanted), None)
