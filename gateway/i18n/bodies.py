"""A JSON answer said in a client's language: its hand descriptions translated and a
readable `line` on each of its events (`gateway.http.language` registers this filter
for a request that sent Accept-Language)."""

from __future__ import annotations

from typing import Any

from gateway import jsonio
from gateway.i18n import SOURCE_LANGUAGE, hands
from gateway.i18n.events import event_line


def localise(value: Any, language: str) -> Any:
    """`value` (decoded JSON) with its descriptions in `language` and its events' lines
    added, changed in place and returned."""
    descriptions = None if language == SOURCE_LANGUAGE else hands.translated(language)
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, list):
            pending.extend(child for child in item if isinstance(child, dict | list))
            continue
        if not isinstance(item, dict):
            continue
        if descriptions is not None:
            description = item.get("description")
            if isinstance(description, str):
                item["description"] = descriptions.get(description, description)
        events = item.get("events")
        if isinstance(events, list):
            for event in events:
                if isinstance(event, dict) and "type" in event and "id" in event:
                    event["line"] = event_line(language, event)
        pending.extend(child for child in item.values() if isinstance(child, dict | list))
    return value


def localise_item(language: str, item: dict[str, Any]) -> dict[str, Any]:
    """One event item (of an event stream) in `language`: its line, its descriptions."""
    localise({"events": [item]}, language)
    return item


def localise_body(language: str, body: bytes) -> bytes:
    """A JSON body in `language`; untouched when it holds nothing to say otherwise."""
    if b'"events"' not in body and (language == SOURCE_LANGUAGE or b'"description"' not in body):
        return body
    return jsonio.dumps_bytes(localise(jsonio.loads(body), language))
