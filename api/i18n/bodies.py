"""A JSON answer said in a client's language: its hand descriptions translated and a
readable `line` on each of its events (`api.http.language` registers this filter
for a request that sent Accept-Language).

An answer's events are the list under its top-level `events` (an event page, a move's or
a seat's answer, a hand history); a description is the value of any `description`
member, wherever it is. The descriptions are replaced in the JSON text itself, each
English one by its translation (the set of them is finite: `hands.translated`), so only
an answer with events is decoded and encoded again; a move must stay cheap.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from api import jsonio
from api.games.events import Event
from api.i18n import SOURCE_LANGUAGE, hands
from api.i18n.events import event_line

# a description member in the JSON text as the gateway writes it (compact, no escapes
# in an English description)
_DESCRIPTION = re.compile(rb'"description":"([^"\\]*)"')


@functools.cache
def _worded(language: str) -> dict[bytes, bytes]:
    """English description -> its translation, as the JSON text of each (unquoted)."""
    return {
        jsonio.dumps_bytes(english)[1:-1]: jsonio.dumps_bytes(worded)[1:-1]
        for english, worded in hands.translated(language).items()
    }


def _add_lines(value: Any, language: str) -> None:
    events = value.get("events") if isinstance(value, dict) else None
    if isinstance(events, list):
        for event in events:
            if isinstance(event, dict) and "type" in event and "id" in event:
                event["line"] = event_line(language, event)


def localise(value: Any, language: str) -> Any:
    """`value` (decoded JSON) as `localise_body` would answer it, changed in place."""
    descriptions = {} if language == SOURCE_LANGUAGE else hands.translated(language)
    pending = [value] if descriptions else []
    while pending:
        item = pending.pop()
        children = item.values() if isinstance(item, dict) else item
        if isinstance(item, dict) and isinstance(item.get("description"), str):
            item["description"] = descriptions.get(item["description"], item["description"])
        pending.extend(child for child in children if isinstance(child, dict | list))
    _add_lines(value, language)
    return value


def localise_item(language: str, item: Event) -> Event:
    """One event item (of an event stream) in `language`: its line, its descriptions."""
    localise({"events": [item]}, language)
    return item


def localise_body(language: str, body: bytes) -> bytes:
    """A JSON body in `language`; untouched when it holds nothing to say otherwise."""
    if language != SOURCE_LANGUAGE and b'"description":"' in body:
        words = _worded(language)
        body = _DESCRIPTION.sub(
            lambda found: b'"description":"%s"' % words.get(found[1], found[1]), body
        )
    if b'"events":[' not in body:
        return body
    # a move's answer ends with its events ({"table": ..., "events": [...]}): only they
    # (and the members after them) are decoded, the rest of the text kept; the tail is
    # an object only when those events are the answer's own, not a nested list's
    start = body.rfind(b',"events":[')
    if start > 0:
        try:
            tail = jsonio.loads(b"{" + body[start + 1 :])
        except ValueError:
            tail = None
        if isinstance(tail, dict):
            _add_lines(tail, language)
            return body[:start] + b"," + jsonio.dumps_bytes(tail)[1:]
    value = jsonio.loads(body)
    _add_lines(value, language)
    return jsonio.dumps_bytes(value)
