"""Computer players' strategies: pure functions from what one seat sees to its next move.

A strategy is given a seat's own view of its table (`TableView`, the view a player's
client gets: its own cards, never another seat's), the facts its game needs from the
evaluator (a Guts hand's odds) and a random generator, and answers with the move a
client would send (`ActionBody`), or None when it has nothing to do. Each game has a
random legal player, an easy and a strong strategy (docs/bots.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from api.games.strategies import guts, paiute
from api.games.strategies.base import Facts, Strategy

__all__ = ["STRATEGIES", "Facts", "Strategy", "names_for", "strategy_for"]

STRATEGIES: Mapping[str, Mapping[str, Strategy]] = MappingProxyType(
    {
        "guts": MappingProxyType(
            {"random": guts.RandomGuts(), "easy": guts.EasyGuts(), "strong": guts.StrongGuts()}
        ),
        "paiute": MappingProxyType(
            {
                "random": paiute.RandomPaiute(),
                "easy": paiute.EasyPaiute(),
                "strong": paiute.StrongPaiute(),
            }
        ),
    }
)


def names_for(game: str) -> list[str]:
    """The strategies a computer player of `game` may play, weakest first."""
    return list(STRATEGIES.get(game, {}))


def strategy_for(game: str, name: str) -> Strategy | None:
    """The strategy called `name` for `game`, or None."""
    return STRATEGIES.get(game, {}).get(name)
