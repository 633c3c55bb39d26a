"""The service's way to a game: the `Game` protocol over the JSON states the store keeps.

The store keeps a table's state as a plain JSON dict (with keys of the service's own
beside the rules'); the games take and give `TableState`s and `Moved` records. These
few functions are the one place the two meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from gateway.games.common import Event, Transition
from gateway.games.game import Game, Moved, TableState
from gateway.games.registry import GAMES, game_for

__all__ = ["GAMES", "game_of", "table_state", "transition"]


def game_of(state: Mapping[str, Any]) -> Game:
    """The game a stored state is played in."""
    return game_for(state)


def table_state(state: Mapping[str, Any]) -> TableState:
    """A stored state as the games take it (the same dict)."""
    return cast(TableState, state)


def transition(moved: Moved) -> Transition:
    """A move's record as the change loop takes it: the new state and its events."""
    return cast(dict[str, Any], moved.state), cast(list[Event], list(moved.events))
