"""Hand descriptions in the players' languages, read from a hand's strength.

A description is a function of the game, the cards a hand holds and its strength alone,
so the gateway words it from the strength's layout (the evaluator's: evaluator/guts.py
and evaluator/paiute.py say it) without asking the evaluator. In English the words are
the evaluator's own, letter for letter ("Pair of kings, 9 kicker", "Three queens and
three fours"); in another language they come from the `messages` catalogue: each hand's
template, and each rank's name in three forms ("counted" after a number, "pair" in a
pair's name, "named" in a list), since the languages inflect them differently. Single
cards keep the labels printed on them (2..10, J, Q, K, A).

`translated(language)` maps every English description of every game to its wording in
`language`: how the JSON bodies' descriptions are translated (`api.i18n.bodies`).
"""

from __future__ import annotations

import functools
import itertools
from typing import Final

from api.i18n.catalogs import say, translations

GUTS_SHIFT: Final = 12
PAIUTE_SHIFT: Final = 16
# Guts categories (the evaluator's wire numbers)
HIGH_CARD, PAIR, FLUSH, STRAIGHT, THREE_OF_A_KIND, STRAIGHT_FLUSH = range(1, 7)
# Paiute orders
TWO_TWO_TWO, THREE_THREE, FOUR_TWO, PAIUTE_STRAIGHT_FLUSH, ROYAL_FLUSH, FIVE_OF_A_KIND = range(1, 7)
RANKS: Final = tuple(range(14, 1, -1))
LABELS: Final = {rank: "10" if rank == 10 else "..23456789.JQKA"[rank] for rank in range(2, 15)}


def NP_(context: str, message: str) -> tuple[str, str]:  # noqa: N802 (gettext's marker name)
    """`(context, message)`: marks a message with a context for extraction."""
    return context, message


# NOTE: a rank's name after a number ("three kings", "four queens and two sevens").
COUNTED: Final = {
    2: NP_("counted", "twos"),
    3: NP_("counted", "threes"),
    4: NP_("counted", "fours"),
    5: NP_("counted", "fives"),
    6: NP_("counted", "sixes"),
    7: NP_("counted", "sevens"),
    8: NP_("counted", "eights"),
    9: NP_("counted", "nines"),
    10: NP_("counted", "tens"),
    11: NP_("counted", "jacks"),
    12: NP_("counted", "queens"),
    13: NP_("counted", "kings"),
    14: NP_("counted", "aces"),
}
# NOTE: a rank's name in the name of a pair ("pair of kings").
PAIRED: Final = {
    2: NP_("pair", "twos"),
    3: NP_("pair", "threes"),
    4: NP_("pair", "fours"),
    5: NP_("pair", "fives"),
    6: NP_("pair", "sixes"),
    7: NP_("pair", "sevens"),
    8: NP_("pair", "eights"),
    9: NP_("pair", "nines"),
    10: NP_("pair", "tens"),
    11: NP_("pair", "jacks"),
    12: NP_("pair", "queens"),
    13: NP_("pair", "kings"),
    14: NP_("pair", "aces"),
}
# NOTE: a rank's name on its own, in a list ("five of a kind, kings"; "three pairs,
# kings, nines and twos"; "kings are wild").
NAMED: Final = {
    2: NP_("named", "twos"),
    3: NP_("named", "threes"),
    4: NP_("named", "fours"),
    5: NP_("named", "fives"),
    6: NP_("named", "sixes"),
    7: NP_("named", "sevens"),
    8: NP_("named", "eights"),
    9: NP_("named", "nines"),
    10: NP_("named", "tens"),
    11: NP_("named", "jacks"),
    12: NP_("named", "queens"),
    13: NP_("named", "kings"),
    14: NP_("named", "aces"),
}


def rank_name(language: str, forms: dict[int, tuple[str, str]], rank: int) -> str:
    """The name of `rank` in `language`, in the form of the table `forms`."""
    context, message = forms[rank]
    if language == "en":
        return message
    return translations(language).gettext(f"{context}\x04{message}", message)


def _labels(ranks: tuple[int, ...]) -> str:
    return "-".join(LABELS[rank] for rank in ranks)


def _nibbles(tiebreak: int, count: int) -> tuple[int, ...]:
    return tuple(tiebreak >> 4 * (count - 1 - index) & 0xF for index in range(count))


def _ranks(
    language: str, forms: dict[int, tuple[str, str]], names: tuple[str, ...], tiebreak: int
) -> dict[str, str]:
    """The placeholders `names` filled with the ranks a tiebreak packs, in `forms`."""
    ranks = _nibbles(tiebreak, len(names))
    return {name: rank_name(language, forms, rank) for name, rank in zip(names, ranks, strict=True)}


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def straight_flush(language: str, top: int) -> str:
    """A straight flush topped by `top`, in either game."""
    return _capitalised(say(language, "Straight flush, {top}-high", {"top": LABELS[top]}))


def describe_guts(language: str, cards_per_hand: int, strength: int) -> str:
    """The description of a Guts hand of `cards_per_hand` cards and `strength`."""
    category, tiebreak = strength >> GUTS_SHIFT, strength & (1 << GUTS_SHIFT) - 1
    if category == STRAIGHT_FLUSH:
        return straight_flush(language, tiebreak)
    if category == THREE_OF_A_KIND:
        rank = rank_name(language, COUNTED, tiebreak)
        return _capitalised(say(language, "Three {rank}", {"rank": rank}))
    if category == STRAIGHT:
        top = LABELS[tiebreak]
        return _capitalised(say(language, "Straight, {top}-high", {"top": top}))
    if category == FLUSH:
        cards = _labels(_nibbles(tiebreak, 3))
        return _capitalised(say(language, "Flush, {cards}", {"cards": cards}))
    if category == PAIR and cards_per_hand == 3:
        pair, kicker = _nibbles(tiebreak, 2)
        rank = rank_name(language, PAIRED, pair)
        params = {"rank": rank, "kicker": LABELS[kicker]}
        return _capitalised(say(language, "Pair of {rank}, {kicker} kicker", params))
    if category == PAIR:
        rank = rank_name(language, PAIRED, tiebreak)
        return _capitalised(say(language, "Pair of {rank}", {"rank": rank}))
    if category == HIGH_CARD:
        cards = _labels(_nibbles(tiebreak, cards_per_hand))
        return _capitalised(say(language, "{cards} high", {"cards": cards}))
    raise ValueError(f"{strength} is not the strength of a {cards_per_hand}-card Guts hand")


def describe_paiute(language: str, strength: int) -> str:
    """The description of a Paiute hand of `strength`."""
    order, tiebreak = strength >> PAIUTE_SHIFT, strength & (1 << PAIUTE_SHIFT) - 1
    if strength == 0:
        return say(language, "No winning combination")
    if order == ROYAL_FLUSH:
        return say(language, "Royal flush")
    if order == FIVE_OF_A_KIND:
        rank = rank_name(language, NAMED, tiebreak)
        return _capitalised(say(language, "Five of a kind, {rank}", {"rank": rank}))
    if order == PAIUTE_STRAIGHT_FLUSH:
        return straight_flush(language, tiebreak)
    if order == FOUR_TWO:
        params = _ranks(language, COUNTED, ("four", "two"), tiebreak)
        return _capitalised(say(language, "Four {four} and two {two}", params))
    if order == THREE_THREE:
        params = _ranks(language, COUNTED, ("high", "low"), tiebreak)
        return _capitalised(say(language, "Three {high} and three {low}", params))
    if order == TWO_TWO_TWO:
        params = _ranks(language, NAMED, ("high", "middle", "low"), tiebreak)
        return _capitalised(say(language, "Three pairs, {high}, {middle} and {low}", params))
    raise ValueError(f"{strength} is not the strength of a Paiute hand")


def guts_strengths(cards_per_hand: int) -> list[int]:
    """Every strength a Guts hand of `cards_per_hand` cards can have."""
    found: set[int] = set()
    for ranks in itertools.combinations_with_replacement(RANKS, cards_per_hand):
        distinct = len(set(ranks))
        if cards_per_hand == 2:
            category = PAIR if distinct == 1 else HIGH_CARD
            deciding = ranks[:1] if distinct == 1 else ranks
            found.add(_encode(GUTS_SHIFT, category, deciding))
            continue
        high, middle, low = ranks
        if distinct == 1:
            found.add(_encode(GUTS_SHIFT, THREE_OF_A_KIND, (high,)))
            continue
        top = high if high - middle == middle - low == 1 else 3 if ranks == (14, 3, 2) else 0
        if top:
            found.add(_encode(GUTS_SHIFT, STRAIGHT, (top,)))
            found.add(_encode(GUTS_SHIFT, STRAIGHT_FLUSH, (top,)))
        elif distinct == 3:
            found.add(_encode(GUTS_SHIFT, FLUSH, ranks))
            found.add(_encode(GUTS_SHIFT, HIGH_CARD, ranks))
        else:
            pair, odd = (high, low) if high == middle else (middle, high)
            found.add(_encode(GUTS_SHIFT, PAIR, (pair, odd)))
    return sorted(found)


def paiute_strengths() -> list[int]:
    """Every strength a Paiute hand can have, 0 (no winning combination) first."""
    found = {0, ROYAL_FLUSH << PAIUTE_SHIFT}
    for rank in RANKS:
        found.add(_encode(PAIUTE_SHIFT, FIVE_OF_A_KIND, (rank,)))
    for top in range(5, 14):
        found.add(_encode(PAIUTE_SHIFT, PAIUTE_STRAIGHT_FLUSH, (top,)))
    for pair in itertools.permutations(RANKS, 2):
        found.add(_encode(PAIUTE_SHIFT, FOUR_TWO, pair))
    for pair in itertools.combinations(RANKS, 2):
        found.add(_encode(PAIUTE_SHIFT, THREE_THREE, pair))
    for triple in itertools.combinations(RANKS, 3):
        found.add(_encode(PAIUTE_SHIFT, TWO_TWO_TWO, triple))
    return sorted(found)


def _encode(shift: int, category: int, deciding: tuple[int, ...]) -> int:
    tiebreak = 0
    for rank in deciding:
        tiebreak = tiebreak << 4 | rank
    return category << shift | tiebreak


@functools.cache
def translated(language: str) -> dict[str, str]:
    """Every English description of every game -> its wording in `language`."""
    words: dict[str, str] = {}
    for cards_per_hand in (2, 3):
        for strength in guts_strengths(cards_per_hand):
            english = describe_guts("en", cards_per_hand, strength)
            words[english] = describe_guts(language, cards_per_hand, strength)
    for strength in paiute_strengths():
        words[describe_paiute("en", strength)] = describe_paiute(language, strength)
    return words
