"""The message catalogues: every message translated in every language, the same
placeholders in each translation as in its message, and templates that say what the code
says (`make messages` re-extracts them)."""

from __future__ import annotations

import re
import shlex
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po

from api.i18n import LANGUAGES, SOURCE_LANGUAGE
from api.i18n.catalogs import DOMAINS, catalogue_path

ROOT = Path(__file__).resolve().parents[2]
I18N = ROOT / "api" / "i18n"
TRANSLATED = [language for language in LANGUAGES if language != SOURCE_LANGUAGE]
KEYWORDS = {"messages": "MESSAGE_KEYWORDS", "page": "PAGE_KEYWORDS"}


def template(domain: str) -> Catalog:
    """The domain's template; an empty one while the code has no message of it."""
    path = I18N / f"{domain}.pot"
    if not path.exists():
        return Catalog()
    with path.open("rb") as file:
        return read_po(file)


def catalogue(language: str, domain: str) -> Catalog:
    """A language's catalogue of a domain; an empty one when it has none yet."""
    path = catalogue_path(language, domain)
    if not path.exists():
        return Catalog(locale=language)
    with path.open("rb") as file:
        return read_po(file, locale=language)


def messages(catalog: Catalog) -> Iterator[Message]:
    """A catalogue's messages, its header aside."""
    return (message for message in catalog if message.id)


def key(message: Message) -> tuple[str | None, str]:
    msgid = message.id if isinstance(message.id, str) else message.id[0]
    return message.context, msgid


def placeholders(text: str) -> set[str]:
    """The names of the `str.format` fields of `text` ("{seat!r}" names seat)."""
    return {
        re.split(r"[.\[]", field)[0]
        for _, field, _, _ in string.Formatter().parse(text)
        if field is not None
    }


def makefile_keywords(variable: str) -> list[str]:
    """The pybabel -k options the Makefile's `variable` holds."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(rf"^{variable} := (.*)$", text, re.MULTILINE)
    assert found is not None, variable
    return shlex.split(found.group(1))


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_is_translated(language: str, domain: str) -> None:
    translated = {key(message): message for message in messages(catalogue(language, domain))}
    missing = []
    for message in messages(template(domain)):
        found = translated.get(key(message))
        strings = () if found is None else found.string
        strings = (strings,) if isinstance(strings, str) else strings
        if found is None or found.fuzzy or not strings or not all(strings):
            missing.append(key(message)[1])
    assert not missing, f"{language} {domain}.po lacks (or has fuzzy) translations of {missing}"


@pytest.mark.parametrize("domain", DOMAINS)
@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_keep_the_placeholders(language: str, domain: str) -> None:
    wrong = []
    for message in messages(catalogue(language, domain)):
        ids = (message.id,) if isinstance(message.id, str) else tuple(message.id)
        strings = (message.string,) if isinstance(message.string, str) else message.string or ()
        wanted = [placeholders(msgid) for msgid in ids]
        for text in strings:
            if not text:
                continue
            got = placeholders(text)
            # a plural form may leave the count out where the language needs no figure
            if got not in wanted and not (len(ids) > 1 and got == wanted[-1] - {"n"}):
                wrong.append((ids[0], text))
    assert not wrong, f"{language} {domain}.po changes the placeholders of {wrong}"


@pytest.mark.parametrize("domain", DOMAINS)
def test_templates_hold_what_the_code_says(domain: str, tmp_path: Path) -> None:
    extracted = tmp_path / f"{domain}.pot"
    CommandLineInterface().run(  # type: ignore[no-untyped-call]
        [
            "pybabel",
            "--quiet",
            "extract",
            "--no-default-keywords",
            *makefile_keywords(KEYWORDS[domain]),
            "--add-comments=NOTE:",
            "--no-location",
            "-F",
            str(I18N / f"babel-{domain}.cfg"),
            "-o",
            str(extracted),
            str(ROOT / "api"),
        ]
    )
    with extracted.open("rb") as file:
        fresh = {key(message) for message in messages(read_po(file))}
    kept = {key(message) for message in messages(template(domain))}
    assert fresh == kept, (
        f"{domain}.pot is out of date (run make messages): new {sorted(fresh - kept, key=str)},"
        f" gone {sorted(kept - fresh, key=str)}"
    )


def test_catalogues_name_their_plural_forms() -> None:
    for language in TRANSLATED:
        catalog = catalogue(language, "messages")
        assert catalog.num_plurals >= 1
        assert "n" in catalog.plural_expr
