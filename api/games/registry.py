"""The games a table can be played in, by name: the one way a service reaches a game."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from api.games import guts, paiute
from api.games.common import RuleError
from api.games.game import Game
from api.games.state import TableState

GAMES: Mapping[str, Game] = MappingProxyType({"guts": guts.GAME, "paiute": paiute.GAME})


def game_for(state: TableState) -> Game:
    """The game a table's state is played in."""
    game = GAMES.get(state["game"])
    if game is None:
        raise RuleError(
            "unsupported_game", "No game is called {game!r}.", "game", game=state["game"]
        )
    return game
