"""What every strategy is: its name, its game, and one decision from a seat's view."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Protocol

from api.games.game import ActionBody
from api.games.state import TableView


@dataclass(frozen=True)
class Facts:
    """What a strategy may know beyond the seat's view: facts about its own cards.

    `odds` is a Guts hand's chance against one random hand of the remaining cards (wins
    plus half the ties, as the evaluator's exact `Odds` counts them); None in Paiute.
    """

    odds: float | None = None


class Strategy(Protocol):
    """A computer player's way of playing one game."""

    @property
    def name(self) -> str:
        """The strategy's name, as a seat request names it ("easy", "strong", "random")."""
        ...

    @property
    def game(self) -> str:
        """The game it plays."""
        ...

    def wants_odds(self, view: TableView) -> bool:
        """Whether `decide` needs the odds of the seat's cards for this view."""
        ...

    def decide(self, view: TableView, facts: Facts, rng: random.Random) -> ActionBody | None:
        """The seat's next move in `view`, or None when the table waits for no move of it."""
        ...


def my_turn(view: TableView, actions: tuple[str, ...]) -> bool:
    """Whether the table waits for one of `actions` from the seat whose view this is."""
    you = view["you"]
    pending = view["pending"]
    return (
        you is not None
        and pending is not None
        and pending["action"] in actions
        and you["seat"] in pending["seats"]
    )
