"""Who may see what: a seat sees its own private events, a spectator only public ones.

A player signed in with their own credential also sees the private events of the
seats they held at the table before (their past deals, after they left or went broke).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from api.games.events import Event


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a seated player (with their player id) or a spectator."""

    seat: int | None = None
    player: int | None = None
    # a signed-in player's account, and every player id the account had at this table
    # (one per time it sat there): its past deals stay its own after it left
    account: str | None = None
    past: frozenset[int] = frozenset()

    def may_see(self, item: Event) -> bool:
        """True if this viewer may see the stored event `item`."""
        audience = item.get("audience")
        if audience is None:
            return True
        if self.player is not None and self.player in audience:
            return True
        return bool(self.past) and not self.past.isdisjoint(audience)


SPECTATOR = Viewer()


def public_event(item: Event) -> Event:
    """An event as clients see it: its id, kind, data, time and deal, and `private` for
    one only some may see (its audience list stays with the server)."""
    shown = {
        "id": item["id"],
        "type": item["type"],
        "data": item["data"],
        "at": item["at"],
        "hand_number": item["hand_number"],
    }
    if item.get("audience") is not None:
        shown["private"] = True
    # the same kind and data as `item`, which mypy cannot follow through the new dict
    return cast(Event, shown)
