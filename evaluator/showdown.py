"""Who wins and who loses a showdown, from strengths alone (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ShowdownOutcome:
    """The seats that win, lose worst, and stand against the ghost."""

    winners: tuple[int, ...]
    worst: tuple[int, ...]
    ghost_wins: bool
    beaten_by_ghost: tuple[int, ...]
    tied_with_ghost: tuple[int, ...]


def decide_showdown(hands: Sequence[tuple[int, int]], ghost: int | None) -> ShowdownOutcome:
    """Decide a showdown from (seat, strength) pairs and the ghost's strength, if any.

    Winners hold the best strength among the seats and, when there is a ghost, beat it
    strictly. The worst are the seats at the lowest strength, except when nobody loses:
    every seat ties and wins, or every seat ties the ghost that wins (RULES.md: players
    tied with the ghost neither win nor pay).
    """
    if not hands:
        return ShowdownOutcome((), (), ghost is not None, (), ())
    best = max(strength for _, strength in hands)
    low = min(strength for _, strength in hands)
    ghost_wins = ghost is not None and ghost >= best
    winners = () if ghost_wins else tuple(seat for seat, s in hands if s == best)
    nobody_loses = low == best if not ghost_wins else low == ghost
    worst = () if nobody_loses else tuple(seat for seat, s in hands if s == low)
    if ghost is None:
        return ShowdownOutcome(winners, worst, False, (), ())
    beaten = tuple(seat for seat, s in hands if s < ghost)
    tied = tuple(seat for seat, s in hands if s == ghost)
    return ShowdownOutcome(winners, worst, ghost_wins, beaten, tied)
