"""Types shared by the pure game state machines: errors, decks, events, ranks.

Every illegal move raises `RuleError` with a stable machine `code`, a full-sentence
`detail` and, where one argument is to blame, its name in `field`. The codes:

- ``invalid_option``: a table option is unknown, of the wrong type or out of range
  (`field` names the option).
- ``invalid_name``: a player name is not a string of 1 to 32 characters after trimming,
  or holds a character that does not show (`display_name`).
- ``name_taken``: another seat at the table already uses that name (`name_key`: case,
  compatibility forms and runs of spaces are not told apart).
- ``table_full``: every seat from 1 to ``max_players`` is taken.
- ``invalid_buy_in``: a buy-in or rebuy amount is not a whole number of chips, or the
  stack it gives falls outside ``min_buy_in`` .. ``max_buy_in``.
- ``not_seated``: the seat number names no occupied seat.
- ``already_left``: the seat has already asked to leave at the end of the deal.
- ``already_started``: the table is already playing; ``start`` is only for a waiting table.
- ``not_enough_players``: fewer than ``min_players`` seats hold chips.
- ``rebuy_not_allowed``: the table was created with ``rebuy: false``.
- ``game_in_progress``: the seat is dealt into the current deal, so it cannot rebuy
  until the deal is settled.
- ``no_hand_in_progress``: nobody is declaring now (no deal, or it is between deals).
- ``showdown_pending``: the deal waits for hands to be ranked; only ``sit``, ``leave``
  and ``settle`` are accepted until then.
- ``not_your_turn``: the seat is not dealt into this deal, or (sequential declaring)
  another seat is to declare first.
- ``already_declared``: the seat has declared in this deal; a declaration is final.
- ``invalid_choice``: a declaration is neither ``"in"`` nor ``"out"``.
- ``too_late``: the declaring deadline has passed; the seat counts as out once the
  deadline is processed.
- ``not_in_showdown``: ``settle`` was called while no showdown is pending.
- ``invalid_ranking``: ``settle`` got a ranking that misses a requested hand or holds
  something other than a `Ranked`.
- ``invalid_deck``: a deck is not 52 distinct cards with a hexadecimal salt, or a deal
  had to start and no deck was given.
- ``invalid_card``: a card's text names no card (`api.games.cards.canonical_card`).
- Paiute's turns: ``already_drawn`` (the seat has drawn this turn already),
  ``empty_discard_pile`` (a draw from the discard pile while it is empty),
  ``must_draw_first`` (a discard or call before drawing), ``card_not_held`` (the card to
  discard is not in the hand), ``cannot_discard_drawn`` (discarding, also as a call's
  sixth card, the card just taken from the discard pile), ``invalid_combination``
  (``cards`` is not 5 or 6 distinct card texts, five shown cards come without a
  discard or six with one, the discard is among them, or six are shown that form no
  six-card combination), ``cards_not_held`` (the shown cards and the discard are not
  exactly the six cards held), ``no_combination`` (the ranked strength is 0); Paiute's
  ``invalid_choice`` is a ``source`` other than ``"stock"`` or ``"discard"``, and its
  ``too_late`` a turn whose deadline has passed (the timer plays it).
- ``unsupported_action``: a move the table's game has not (`api.games.game`).
- ``unsupported_game``: a state of no known game (`api.games.registry`).

``not_in_showdown``, ``invalid_ranking`` and ``invalid_deck`` refuse a call the gateway
itself got wrong, never a player's move; every other code is a refusal a player may
meet, with its HTTP status in `api.errors.RULE_ERROR_STATUS`.
"""

from __future__ import annotations

import copy
import unicodedata
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")

RANKS = "23456789TJQKA"
SUITS = "cdhs"
FULL_DECK: tuple[str, ...] = tuple(rank + suit for rank in RANKS for suit in SUITS)


class RuleError(Exception):
    """A move that the rules forbid; the state it was tried on is left unchanged."""

    def __init__(self, code: str, detail: str, field: str | None = None, **params: object) -> None:
        """`detail` is a full sentence, a `str.format` template of `params` when given
        (the gateway says it in the client's language: api.i18n)."""
        text = detail.format(**params) if params else detail
        super().__init__(text)
        self.code = code
        self.detail = text
        self.template = detail
        self.params = params
        self.field = field

    def __repr__(self) -> str:
        return f"RuleError({self.code!r}, {self.detail!r}, field={self.field!r})"


@dataclass(frozen=True)
class Deck:
    """A shuffled 52-card pack and the deal's secret (`api.games.fairness`)."""

    cards: tuple[str, ...]
    salt: str


@dataclass(frozen=True)
class Ranked:
    """A hand's rank as the evaluator returns it: higher strength wins, equal ties."""

    strength: int
    category: str
    description: str


def verify_deck(deck: object) -> Deck:
    """Raise RuleError('invalid_deck') unless `deck` is 52 distinct cards and a hex salt."""
    if not isinstance(deck, Deck):
        raise RuleError("invalid_deck", "A deal needs a shuffled deck, and none was given.", "deck")
    if len(deck.cards) != len(FULL_DECK) or set(deck.cards) != set(FULL_DECK):
        raise RuleError(
            "invalid_deck", "A deck must hold each of the 52 cards exactly once.", "deck"
        )
    salt = deck.salt
    if not isinstance(salt, str) or not salt or any(c not in "0123456789abcdef" for c in salt):
        raise RuleError(
            "invalid_deck", "A deck's salt must be a non-empty lowercase hex string.", "deck"
        )
    return deck


# The values a state holds that are copied by reference: none of them can change.
_ATOMS = frozenset({str, int, bool, float, type(None)})
_all_atoms = _ATOMS.issuperset
_join = "".join


def copy_state(value: T) -> T:
    """Return a deep copy of a JSON-shaped value, several times faster than copy.deepcopy.

    Every move copies the state it changes, so this is on the hot path of each request
    (about 25 µs for a five-seat table's state). Containers whose items are all plain
    values are copied in one C call each (a list of card texts is recognised by joining
    it); the others item by item. JSON-shaped means what JSON holds: a tuple comes back
    as a list, as from the store; any other value is copied with copy.deepcopy.
    """
    return cast(T, _copy(value))


# Any: a JSON value of any shape, told apart by its type at run time (isinstance-free, for speed)
def _copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        if _all_atoms(map(type, value.values())):
            return value.copy()
        return {key: item if type(item) in _ATOMS else _copy(item) for key, item in value.items()}
    if kind is list:
        if value and type(value[0]) is str:
            try:
                _join(value)
            except TypeError:
                pass  # not only text: copied item by item below
            else:
                return value.copy()
        return [item if type(item) in _ATOMS else _copy(item) for item in value]
    if kind is tuple:
        return [item if type(item) in _ATOMS else _copy(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


# Characters a display name may not hold: controls, format characters (zero-width
# spaces and joiners, direction marks), surrogates, private use, unassigned code points,
# and line and paragraph separators. Names are shown to others and compared.
_UNSHOWABLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def display_name(name: object, longest: int) -> str | None:
    """`name` as it is kept and shown (NFC, trimmed), or None if it is not a fit name:
    not text, 1 to `longest` characters once trimmed, with no character that does not
    show (see _UNSHOWABLE)."""
    if not isinstance(name, str):
        return None
    shown = unicodedata.normalize("NFC", name).strip()
    if not 1 <= len(shown) <= longest:
        return None
    if any(unicodedata.category(char) in _UNSHOWABLE for char in shown):
        return None
    return shown


def name_key(name: str) -> str:
    """What two names at one table may not share: case, compatibility forms and runs of
    spaces are not told apart ("Ann", "ANN" and "Ann" in fullwidth letters are one name,
    "A  nn" and "a nn" another)."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
