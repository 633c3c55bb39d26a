"""Guts strategies: whether to go in, from the hand's odds, the pot and the table's options.

`StrongGuts` weighs what going in is worth against staying out: the chance of holding
the best hand among the players who go in (from the evaluator's odds against one random
hand, sharpened for opponents who go in only with good hands), what it wins (the pot, to
the cap), what a loss costs (matching the pot, to the cap and the stack; under Survivor
only the worst hand pays), the ghost it must beat too, and the wimp rule's price of
staying out with the best hand. `EasyGuts` goes in with any hand that beats most others,
whatever the table. `RandomGuts` tosses a coin. docs/bots.md gives the reasoning and the
measured results.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from math import comb
from typing import cast

from api.games.game import ActionBody
from api.games.state import GutsDealView, GutsOptions, GutsYou, TableView
from api.games.strategies.base import Facts, my_turn

# How often an opponent is taken to go in: the top half of hands.
OPPONENT_IN = 0.5
# How many opponents go in only with good hands, rather than at random.
SELECTIVE = 0.5
# How much of its even share of a carried pot a seat counts on winning back.
SHARE = 1.0
# The easy strategy goes in with a hand that beats this share of random hands.
EASY_THRESHOLD = 0.8


def _declaring(view: TableView) -> tuple[GutsYou, GutsDealView] | None:
    """The seat's cards and the deal, when the table waits for the seat to declare."""
    if view["game"] != "guts" or not my_turn(view, ("declare",)):
        return None
    you = cast(GutsYou, view["you"])
    deal = cast(GutsDealView | None, view["deal"])
    if deal is None or not you["cards"] or you["declaration"] is not None:
        return None
    return you, deal


def _declare(going_in: bool) -> ActionBody:
    return {"action": "declare", "choice": "in" if going_in else "out"}


class GutsStrategy:
    """What the Guts strategies share: a declaration when the seat must make one."""

    name = ""
    game = "guts"
    uses_odds = True

    def wants_odds(self, view: TableView) -> bool:
        """The odds of the seat's hand, when it must declare and the strategy uses them."""
        return self.uses_odds and _declaring(view) is not None

    def decide(self, view: TableView, facts: Facts, rng: random.Random) -> ActionBody | None:
        """In or out (`going_in`) when the table waits for the seat's declaration."""
        found = _declaring(view)
        if found is None:
            return None
        you, deal = found
        return _declare(self.going_in(view, you, deal, facts.odds or 0.0, rng))

    def going_in(
        self, view: TableView, you: GutsYou, deal: GutsDealView, odds: float, rng: random.Random
    ) -> bool:
        """Whether to go in."""
        raise NotImplementedError


class RandomGuts(GutsStrategy):
    """In or out at random, one chance in two: the baseline the others are measured by."""

    name = "random"
    uses_odds = False

    def going_in(
        self, view: TableView, you: GutsYou, deal: GutsDealView, odds: float, rng: random.Random
    ) -> bool:
        """A coin toss."""
        return rng.random() < 0.5


class EasyGuts(GutsStrategy):
    """In with a hand that beats most random hands, whatever the pot, players or options."""

    name = "easy"

    def going_in(
        self, view: TableView, you: GutsYou, deal: GutsDealView, odds: float, rng: random.Random
    ) -> bool:
        """In when the hand beats `EASY_THRESHOLD` of random hands."""
        return odds >= EASY_THRESHOLD


@dataclass(frozen=True)
class Situation:
    """What the strong strategy weighs: the odds, the opponents, the chips at stake."""

    odds: float  # against one random hand
    unknown: int  # opponents whose choice is not known (all, declaring simultaneously)
    known_in: int  # opponents seen declaring in (sequential declaring)
    win: int  # what a win takes from the pot
    loss: int  # what a loss pays into it
    worst_pays: bool  # Survivor: only the worst in-hand pays
    ghost: bool
    wimp_cost: int  # what staying out costs when nobody is in and this hand is best
    share: float  # the part of a carried pot this seat can expect to win back


def situation(view: TableView, you: GutsYou, deal: GutsDealView, odds: float) -> Situation:
    """The strong strategy's reading of the seat's view."""
    options = cast(GutsOptions, view["options"])
    seat = you["seat"]
    others = [s for s in deal["players"] if s != seat]
    choices = deal["declarations"]
    known_in = sum(1 for s in others if choices.get(str(s)) == "in")
    unknown = sum(1 for s in others if str(s) not in choices)
    stack = view["seats"][str(seat)]["stack"]
    pot = view["pot"]
    anted = sum(f["amount"] for f in deal["flow"] if f["seat"] == seat and f["kind"] == "ante")
    win, loss = pot, pot
    cap = options["cap"]
    if cap is not None and options["cap_mode"] == "per_deal":
        win, loss = min(win, cap), min(loss, max(cap - anted, 0))
    wimp_cost = options["ante"] * len(others) if options["wimp"] else 0
    if cap is not None and options["cap_mode"] == "per_deal":
        wimp_cost = min(wimp_cost, max(cap - anted, 0))
    return Situation(
        odds=odds,
        unknown=unknown,
        known_in=known_in,
        win=win,
        loss=min(loss, stack),
        worst_pays=options["losers_pay"] == "worst",
        ghost=options["ghost"],
        wimp_cost=min(wimp_cost, stack),
        share=SHARE / len(deal["players"]),
    )


def value_of_going_in(s: Situation) -> float:
    """The chips going in is expected to win, less what staying out is expected to cost."""
    # against a player who goes in with the top OPPONENT_IN of hands, or at random
    selective = min(max((s.odds - (1.0 - OPPONENT_IN)) / OPPONENT_IN, 0.0), 1.0)
    against_in = SELECTIVE * selective + (1.0 - SELECTIVE) * s.odds
    ghost = s.odds if s.ghost else 1.0
    value = 0.0
    for joining in range(s.unknown + 1):
        chance = (
            comb(s.unknown, joining)
            * OPPONENT_IN**joining
            * (1.0 - OPPONENT_IN) ** (s.unknown - joining)
        )
        opponents = joining + s.known_in
        best = against_in**opponents * ghost
        if opponents == 0 and not s.ghost:
            value += chance * s.win
            continue
        # under Survivor a losing hand pays only when it is the worst of those in
        paying = (1.0 - against_in) ** opponents if s.worst_pays and opponents else 1.0 - best
        # what a loss pays stays in the game's pot, of which this seat wins its share
        value += chance * (best * s.win - paying * s.loss * (1.0 - s.share))
    if s.wimp_cost and s.known_in == 0:
        nobody_in = (1.0 - OPPONENT_IN) ** s.unknown
        # the others all out hold the lower hands: this one is best against each of them
        against_out = min(s.odds / (1.0 - OPPONENT_IN), 1.0)
        value += nobody_in * against_out**s.unknown * s.wimp_cost
    return value


class StrongGuts(GutsStrategy):
    """In when going in is worth more than staying out (`value_of_going_in`)."""

    name = "strong"

    def going_in(
        self, view: TableView, you: GutsYou, deal: GutsDealView, odds: float, rng: random.Random
    ) -> bool:
        """In when `value_of_going_in` is positive."""
        return value_of_going_in(situation(view, you, deal, odds)) > 0
