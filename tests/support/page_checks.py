"""Checks of the pages that several browser tests make: axe-core's, the words of a
page's catalogue, and a picture of a page as a reader sees it."""

from __future__ import annotations

from importlib.resources import files

from babel.messages.pofile import read_po
from playwright.sync_api import Page

from api.i18n.catalogs import catalogue_path
from tests.support.table_page import shot

# axe-core itself, as the axe-playwright-python package ships it (a pinned dev dependency).
AXE_SCRIPT = files("axe_playwright_python").joinpath("axe.min.js").read_text()


def settled(page: Page) -> None:
    """Wait until every animation on the page is over."""
    page.evaluate(
        "() => Promise.all(document.getAnimations().map(a => a.finished.catch(() => null)))"
    )


def assert_no_violations(page: Page, where: str) -> None:
    """axe-core finds nothing wrong with the page as it stands."""
    # what axe sees mid-flight (a card fading in) is not what a reader sees
    settled(page)
    page.evaluate(AXE_SCRIPT)
    violations = page.evaluate("() => axe.run().then(results => results.violations)")
    found = [
        f"{item['id']}: {item['help']} ({[node['target'] for node in item['nodes']]})"
        for item in violations
    ]
    assert not found, f"{where}: " + "\n".join(found)


def page_words(lang: str) -> dict[str, str]:
    """The page's catalogue in a language: each message's translation (its first form)."""
    with open(catalogue_path(lang, "page"), "rb") as source:
        catalogue = read_po(source, locale=lang)
    found = {}
    for message in catalogue:
        text = message.string[0] if isinstance(message.string, (tuple, list)) else message.string
        if isinstance(message.id, str) and text:
            found[message.id] = str(text)
        elif isinstance(message.id, (tuple, list)) and text:
            found[str(message.id[0])] = str(text)
    return found


def picture(page: Page, name: str) -> None:
    """A screenshot of the page from its top (make screenshots), every animation over."""
    page.evaluate("() => window.scrollTo(0, 0)")
    settled(page)
    shot(page, name)
