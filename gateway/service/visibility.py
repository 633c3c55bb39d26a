"""Who may see what: a seat sees its own private events, a spectator only public ones.

A player signed in with their own credential also sees the private events of the
seats they held at the table before (their past deals, after they left or went broke).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a seated player (with their player id) or a spectator."""

    seat: int | None = None
    player: int | None = None
    # a signed-in player's account, and every player id the account had at this table
    # (one per time it sat there): its past deals stay its own after it left
    account: str | None = None
    past: frozenset[int] = frozenset()

    def may_see(self, item: Mapping[str, Any]) -> bool:
        """True if this viewer may see the stored event `item`."""
        audience = item.get("audience")
        if audience is None:
            return True
        if self.player is not None and self.player in audience:
            return True
        return bool(self.past) and not self.past.isdisjoint(audience)


SPECTATOR = Viewer()


def public_event(item: Mapping[str, Any]) -> dict[str, Any]:
    """An event as clients see it (without its audience list)."""
    shown = {key: item[key] for key in ("id", "type", "data", "at", "hand_number")}
    if item.get("audience") is not None:
        shown["private"] = True
    return shown
