"""Table ids and shuffled decks: what a new table and a new deal are made from."""

from __future__ import annotations

import re
import secrets

from gateway.games.common import FULL_DECK, Deck


def shuffled_deck() -> Deck:
    """A fresh deck, shuffled from the operating system's secure random source."""
    cards = list(FULL_DECK)
    secrets.SystemRandom().shuffle(cards)
    return Deck(tuple(cards), secrets.token_hex(16))


# what new_table_id makes (and a little more, for ids of other lengths)
TABLE_ID = re.compile(r"[0-9a-f]{1,64}")


def new_table_id() -> str:
    """A short random table id, safe in a URL and a Redis hash tag."""
    return secrets.token_hex(8)
