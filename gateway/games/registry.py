"""The games a table can be played in, by name: the one way a service reaches a game."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from gateway.games import guts, paiute
from gateway.games.common import RuleError
from gateway.games.game import Game

GAMES: Mapping[str, Game] = MappingProxyType({"guts": guts.GAME, "paiute": paiute.GAME})


def game_for(state: Mapping[str, Any]) -> Game:
    """The game a table's state is played in."""
    game = GAMES.get(state["game"])
    if game is None:
        raise RuleError(
            "unsupported_game", "No game is called {game!r}.", "game", game=state["game"]
        )
    return game
