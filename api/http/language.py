"""The client's language, from Accept-Language, as one step of the request pipeline.

The language is one of `api.i18n.LANGUAGES` that the header prefers (werkzeug's
reading of it: quality values, and a regional tag such as sw-KE matching sw), English
when none matches. The pipeline reads it (`api.http.pipeline.request_language`), since
it says in it the problems of every step, this one's predecessors included. A request
without the header is answered as it always was, in English and without
Content-Language. One that sends it gets:

- problems whose title and detail are in that language (`api.http.problems`);
- JSON bodies whose hand descriptions are in that language and whose event items carry
  a `line` (`api.i18n.bodies`), English included when English is what it asked for;
- Content-Language naming the language chosen.

Every JSON, problem or event-stream answer lists Accept-Language in its Vary, since its
body may depend on it.
"""

from __future__ import annotations

import functools
import re

from api.errors import PROBLEM_CONTENT_TYPE
from api.http.pipeline import LANGUAGE_KEY, Exchange, Headers, request_language
from api.i18n import LANGUAGES
from api.i18n.bodies import localise_body

_JSON_TYPES = frozenset({"application/json", PROBLEM_CONTENT_TYPE})
# what a language changes: JSON bodies and the events of a stream
_WORDED_TYPES = _JSON_TYPES | {"text/event-stream"}


def _media(headers: Headers) -> str | None:
    for key, value in headers:
        if key.lower() == "content-type":
            return value.partition(";")[0].strip().lower()
    return None


def _add_vary(headers: Headers) -> None:
    for index, (key, value) in enumerate(headers):
        if key.lower() == "vary":
            names = {name.strip().lower() for name in value.split(",")}
            if "*" not in names and "accept-language" not in names:
                headers[index] = (key, f"{value}, Accept-Language")
            return
    headers.append(("Vary", "Accept-Language"))


# A worded answer's strong ETag carries its language as a suffix ("7" becomes "7-sw",
# and "7-sw-br" once compressed), so that no two languages share a tag: a client that
# changes its language is not told 304 for the words of the other one. The suffix comes
# before the coding's, which the compression step (after this one) takes off first.
_LANGUAGE_TAG = re.compile(r"-(?:" + "|".join(LANGUAGES) + r')(?=(?:-br|-gzip)?")')
_TAG = re.compile(r'(W/)?"([^"]*)"')
# stands for a tag of another language in If-None-Match: it matches no representation
_ANOTHER_LANGUAGE = '"~"'


def held_tags(header: str, language: str | None) -> str:
    """If-None-Match with the language suffixes taken off the tags of the representation
    in `language` (None: the one without a suffix), and the tags of any other language
    replaced by one that matches nothing."""

    def plain(match: re.Match[str]) -> str:
        found = _LANGUAGE_TAG.search(match.group(0))
        held = None if found is None else found.group(0)[1:]
        if held != language:
            return _ANOTHER_LANGUAGE
        return _LANGUAGE_TAG.sub("", match.group(0))

    return _TAG.sub(plain, header)


def _suffix_tag(headers: Headers, language: str) -> None:
    for index, (key, value) in enumerate(headers):
        if key.lower() == "etag" and value.endswith('"'):
            headers[index] = (key, f'{value[:-1]}-{language}"')
            return


class LanguageStep:
    """Reads Accept-Language before the endpoint; says the answer in that language after."""

    def before(self, exchange: Exchange) -> None:
        """Note the language the request asks for (the routes read it: `request_language`),
        and take the language suffixes off the tags of If-Match and If-None-Match."""
        environ = exchange.environ
        language = request_language(environ)
        header = environ.get("HTTP_IF_MATCH")
        if header is not None:
            environ["HTTP_IF_MATCH"] = _LANGUAGE_TAG.sub("", header)
        header = environ.get("HTTP_IF_NONE_MATCH")
        if header is not None:
            environ["HTTP_IF_NONE_MATCH"] = held_tags(header, language)

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        """Content-Language and Vary on a JSON answer; its descriptions and lines; the
        language as a suffix of its ETag."""
        language = exchange.environ.get(LANGUAGE_KEY)
        if status == 304:
            if language is not None:
                _suffix_tag(headers, language)
            return
        media = _media(headers)
        if media not in _WORDED_TYPES:
            return
        _add_vary(headers)
        if language is None:
            return
        _suffix_tag(headers, language)
        headers.append(("Content-Language", language))
        if media == "application/json" and exchange.method != "HEAD" and status != 204:
            exchange.filters.append(functools.partial(localise_body, language))
