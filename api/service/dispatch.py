"""The service's way to a game: the game a stored table is played in.

The store keeps a table's state as JSON, typed by the rules (`api.games.state`); the
games take and give `TableState`s and `Moved` records, so the service calls them
without converting anything.
"""

from __future__ import annotations

from api.games.game import Game
from api.games.registry import GAMES, game_for
from api.games.state import TableState

__all__ = ["GAMES", "game_of"]


def game_of(state: TableState) -> Game:
    """The game a stored state is played in."""
    return game_for(state)
