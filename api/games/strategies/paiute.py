"""Paiute strategies: which card to take, which to discard, and when to call.

`StrongPaiute` counts outs: of the cards it has not seen, how many would complete a
winning combination with the five it keeps. It takes the discard pile's top card when
that completes a call or leaves more outs than its hand has now, discards the card
whose loss leaves the most outs (then the most wild cards, groups and suited runs), and
calls as soon as it can, showing the best combination its six cards form. `EasyPaiute`
takes the pile's card when it matches a rank it holds or is wild, discards a card of its
rarest rank and shows the first combination it finds. `RandomPaiute` makes a random
legal move. docs/bots.md gives the reasoning and the measured results.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from api.games.cards import FULL_DECK, rank_value
from api.games.game import ActionBody
from api.games.state import PaiuteDealView, PaiuteYou, TableView
from api.games.strategies import combinations
from api.games.strategies.base import Facts, my_turn
from api.games.strategies.combinations import Shown


@dataclass(frozen=True)
class Turn:
    """What a Paiute seat sees on its turn."""

    cards: list[str]  # five before drawing, six after
    wild_rank: int
    top: str | None  # the discard pile's top card
    kept: str | None  # a card just taken from the pile, which may not be discarded
    drawn: bool
    unseen: frozenset[str]  # the cards the seat has not seen anywhere


def turn_of(view: TableView) -> Turn | None:
    """The seat's turn as it sees it, or None when the table waits for another move."""
    if view["game"] != "paiute" or not my_turn(view, ("draw", "discard_or_call")):
        return None
    you = cast(PaiuteYou, view["you"])
    deal = cast(PaiuteDealView | None, view["deal"])
    if deal is None or not you["cards"]:
        return None
    drawn = you["drawn"]
    seen = {*you["cards"], deal["wild_card"]}
    if deal["discard_top"] is not None:
        seen.add(deal["discard_top"])
    for claim in deal["claims"].values():
        seen.update(claim["cards"])
    return Turn(
        cards=list(you["cards"]),
        wild_rank=deal["wild_rank"],
        top=deal["discard_top"],
        kept=drawn["card"] if drawn is not None and drawn["source"] == "discard" else None,
        drawn=drawn is not None,
        unseen=frozenset(FULL_DECK) - seen,
    )


def _draw(source: str) -> ActionBody:
    return {"action": "draw", "source": source}


def _discard(card: str) -> ActionBody:
    return {"action": "discard", "card": card}


def _call(shown: Shown) -> ActionBody:
    return {"action": "call", "cards": list(shown.cards), "discard": shown.discard}


def _discardable(turn: Turn) -> list[str]:
    return [c for c in turn.cards if c != turn.kept]


class PaiuteStrategy:
    """What the Paiute strategies share: a move when it is the seat's turn."""

    name = ""
    game = "paiute"

    def wants_odds(self, view: TableView) -> bool:
        """Paiute has no odds to ask for."""
        return False

    def decide(self, view: TableView, facts: Facts, rng: random.Random) -> ActionBody | None:
        """The seat's draw (`draw`), then its discard or call (`finish`), on its turn."""
        turn = turn_of(view)
        if turn is None:
            return None
        if not turn.drawn:
            return _draw(self.draw(turn, rng))
        return self.finish(turn, rng)

    def draw(self, turn: Turn, rng: random.Random) -> str:
        """The pile to draw from: "stock" or "discard"."""
        raise NotImplementedError

    def finish(self, turn: Turn, rng: random.Random) -> ActionBody:
        """The discard or call that ends the turn."""
        raise NotImplementedError


class RandomPaiute(PaiuteStrategy):
    """A random legal move: either pile, then any card it may discard or a call."""

    name = "random"

    def draw(self, turn: Turn, rng: random.Random) -> str:
        """Either pile, when the discard pile has a card."""
        return rng.choice(["stock", "discard"]) if turn.top else "stock"

    def finish(self, turn: Turn, rng: random.Random) -> ActionBody:
        """Each legal discard, and a call when one is possible, with the same chance."""
        shown = combinations.best_call(turn.cards, turn.wild_rank, turn.kept)
        choices: list[ActionBody] = [_discard(c) for c in _discardable(turn)]
        if shown is not None:
            choices.append(_call(shown))
        return rng.choice(choices)


class EasyPaiute(PaiuteStrategy):
    """Pairs up: takes a card of a rank it holds, throws its rarest rank, calls at once."""

    name = "easy"

    def draw(self, turn: Turn, rng: random.Random) -> str:
        """The pile's card if it matches a rank held or is wild."""
        held = {rank_value(c) for c in turn.cards}
        wanted = turn.top is not None and (
            rank_value(turn.top) in held or rank_value(turn.top) == turn.wild_rank
        )
        return "discard" if wanted else "stock"

    def finish(self, turn: Turn, rng: random.Random) -> ActionBody:
        """The first call found; else a card of the rarest rank, never a wild one."""
        found = combinations.calls(turn.cards, turn.wild_rank, turn.kept)
        if found:
            return _call(found[0])
        ranks = Counter(rank_value(c) for c in turn.cards)
        choices = [c for c in _discardable(turn) if rank_value(c) != turn.wild_rank]
        return _discard(min(choices or _discardable(turn), key=lambda c: ranks[rank_value(c)]))


def shape(kept: Sequence[str], wild_rank: int) -> tuple[int, int]:
    """How near five cards are to a combination beyond their outs: wild cards, groups,
    and the longest suited run a straight flush could grow from."""
    counted = combinations.count(kept, wild_rank)
    groups = sum(n * n for n in counted.counts)
    runs = max(
        (mask & window).bit_count() for mask in counted.masks for _, window in combinations.WINDOWS
    )
    return counted.wilds * 4 + max(groups, runs * runs), groups


def _score(kept: Sequence[str], turn: Turn) -> tuple[int, int, int]:
    return (
        combinations.outs(kept, turn.unseen, turn.wild_rank),
        *shape(kept, turn.wild_rank),
    )


def best_discard(turn: Turn) -> str:
    """The card whose loss leaves the five kept the most outs, then the best shape."""
    return max(
        _discardable(turn),
        key=lambda card: _score([c for c in turn.cards if c != card], turn),
    )


def worth_taking(turn: Turn) -> bool:
    """Whether the pile's top card completes a call or leaves more outs than now."""
    top = turn.top
    if top is None:
        return False
    six = [*turn.cards, top]
    if combinations.best_call(six, turn.wild_rank, top) is not None:
        return True
    unseen = turn.unseen | {top}
    now = combinations.outs(turn.cards, unseen, turn.wild_rank)
    after = max(
        combinations.outs([c for c in six if c != card], turn.unseen, turn.wild_rank)
        for card in turn.cards
    )
    return after > now


class StrongPaiute(PaiuteStrategy):
    """Counts outs to choose its pile and its discard; calls with its best combination."""

    name = "strong"

    def draw(self, turn: Turn, rng: random.Random) -> str:
        """The pile when its card helps (`worth_taking`), else the stock."""
        return "discard" if worth_taking(turn) else "stock"

    def finish(self, turn: Turn, rng: random.Random) -> ActionBody:
        """The best call; else the best discard."""
        shown = combinations.best_call(turn.cards, turn.wild_rank, turn.kept)
        if shown is not None:
            return _call(shown)
        return _discard(best_discard(turn))
