"""The table page's catalogue as JSON: what the page's JavaScript reads to speak a language."""

from __future__ import annotations

import functools
from typing import Any

from babel import Locale

from api.i18n import direction
from api.i18n.catalogs import translations

# whole numbers enough to meet every CLDR plural category a language has for them
_SAMPLES = range(0, 1001)


@functools.cache
def page_catalog(language: str) -> dict[str, Any]:
    """The page catalogue of `language` (one of LANGUAGES; ValueError for another).

    {"lang", "dir" ("rtl" or "ltr"), "plural": {CLDR category -> index of the plural
    form}, "messages": {msgid: translation, or its plural forms as a list}}: the page
    picks a form with `Intl.PluralRules(lang).select(n)` and this map. A msgid without a
    translation is absent (the page shows the English). The same dict is returned on
    every call: do not change it.
    """
    found = translations(language, "page")
    rule = Locale.parse(language).plural_form
    plural: dict[str, int] = {}
    for n in _SAMPLES:
        plural.setdefault(rule(n), found.plural(n))
    plural.setdefault("other", found.plural(_SAMPLES[-1]))
    messages = {
        msgid: list(value) if isinstance(value, tuple) else value
        for msgid, value in found.messages.items()
    }
    return {"lang": language, "dir": direction(language), "plural": plural, "messages": messages}
