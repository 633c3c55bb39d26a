"""Digits written into the page's sentences are the digits its numbers come in.

The page writes numbers with `Intl.NumberFormat(lang)`, which in Chromium writes Pashto's
numbers in Latin digits (ps has no other numbering system there): a digit typed into a
Pashto sentence ("5 or 6 cards") must be a Latin one too, or one button reads an Eastern
Arabic five beside a chip count that reads 5."""

from __future__ import annotations

import re

from babel.messages.pofile import read_po

from api.i18n.catalogs import catalogue_path

OTHER_DIGITS = re.compile("[\u0660-\u0669\u06f0-\u06f9]")


def test_pashto_page_words_use_the_digits_of_its_numbers() -> None:
    with open(catalogue_path("ps", "page"), "rb") as source:
        catalogue = read_po(source, locale="ps")
    found = []
    for message in catalogue:
        strings = message.string if isinstance(message.string, (tuple, list)) else [message.string]
        if any(OTHER_DIGITS.search(str(text or "")) for text in strings):
            found.append(message.id)
    assert not found, found
