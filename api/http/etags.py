"""Entity tags: a table's version as an ETag, and the If-Match / If-None-Match lists."""

from __future__ import annotations

import re

from api.errors import problem
from api.service.idempotency import IfMatch

# one element of a list of entity tags: optional whitespace, an optional tag (a comma is
# allowed inside its quotes), optional whitespace, then a comma or the end (RFC 9110, 5.6.1)
_ENTITY_TAG_ELEMENT = re.compile(r'[ \t]*(?:(W/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|\Z)')


def entity_tags(header: str) -> list[tuple[bool, str]] | None:
    """The (weak, opaque tag) of each entity tag of an If-Match or If-None-Match list
    (RFC 9110, 8.8.3), [] for "*", or None when the list is malformed."""
    if header.strip() == "*":
        return []
    tags = []
    position = 0
    while position < len(header):
        match = _ENTITY_TAG_ELEMENT.match(header, position)
        if match is None or match.end() == position:
            return None
        if match.group(2) is not None:  # empty list elements are allowed
            tags.append((match.group(1) is not None, match.group(2)))
        position = match.end()
    return tags or None


def if_match(header: str | None) -> IfMatch | None:
    """The If-Match header as a precondition (strong comparison, RFC 9110, 13.1.1): "*" or
    the listed strong ETags; a weak one never matches. A malformed list is 400."""
    if header is None:
        return None
    tags = entity_tags(header)
    if tags is None:
        raise problem(
            "invalid_parameter",
            'If-Match must be "*" or a list of quoted entity tags, such as "4".',
            field="If-Match",
        )
    return IfMatch(None if not tags else frozenset(tag for weak, tag in tags if not weak))
