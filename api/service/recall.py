"""Game recall: each player's own deals, newest first, at every table they played.

The commit that finishes a deal also writes, atomically with it, for each player dealt
into it, the deal in their index and a copy of it (its history and events, made once
for all its players and read as the player saw it, their own cards opened, when they
ask for it), the newest `copies` (10) kept whatever the table's retention. The commit's
script makes the copies from the deal's events in the table's stream, so the move that
ends a deal reads nothing more than any move. On a single Redis the script writes them
to the players' keys itself; on a cluster those keys sit on other slots, so it writes
them as notes to the table's recall outbox (on the table's slot, `api.adapters.recall`),
delivered to the players right after the commit; a process that dies in between leaves
them to the sweeper, pointed at the table before the commit. The history of an
older deal is read from its table while the table keeps it. A deal is also exported as
text modeled on PHH (`api.service.phh`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import TypedDict, cast

from api import jsonio
from api.adapters.recall import (
    INDEX_MAX,
    OUTBOX_KEY,
    RecallNote,
    RecallStore,
    copies_key,
    deals_key,
    outbox_key,
)
from api.adapters.store import STORE_ERRORS, Commit, DealCopies, HandRecord, TableStore
from api.errors import problem
from api.games.events import Event
from api.games.state import GutsDeal, PaiuteDeal
from api.service import phh
from api.service.queries import shown_history
from api.service.visibility import Viewer, public_event

log = logging.getLogger("cardroom.recall")

DEFAULT_COPIES = 10
# a sweeper delivers the notes a commit wrote this long after it, if nobody did
RELAY_SECONDS = 10.0


class Recall:
    """Players' deal indexes and kept copies, written with the commits that end deals."""

    def __init__(
        self,
        tables: TableStore,
        store: RecallStore,
        copies: int = DEFAULT_COPIES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Read deals from `tables`; keep each player's index and newest `copies` in `store`."""
        self.tables = tables
        self.store = store
        self.copies = copies
        self.clock = clock

    def pointer(self, now: float) -> tuple[str, float]:
        """Where and when a sweeper is pointed at a table before a commit ending a deal."""
        return OUTBOX_KEY, now + RELAY_SECONDS

    def writes(
        self, commit: Commit, history: HandRecord, deal: GutsDeal | PaiuteDeal, due: float
    ) -> None:
        """Add to `commit`, which finishes `deal` (its history `history`), its copies for
        every player dealt into it (on a cluster, notes in the table's recall outbox,
        the sweeper pointed at the table for `due`).

        Every player's copy is the same, made once by the commit's script: the deal's
        history and all its events, after the player ids its player had there; what the
        player saw of it (the events they may see, the proof opening their cards) is
        worked out when they read it (`seen`), which players do for few of their deals."""
        state = commit.state
        table_id = history["table_id"]
        member = f"{table_id}:{history['hand_number']}"
        dealt_ids = set(deal["player_ids"].values())
        players = [
            (account, jsonio.dumps(sorted(entry["players"])))
            for account, entry in (state.get("accounts") or {}).items()
            if dealt_ids.intersection(entry["players"])
        ]
        if not players:
            return
        last = history["last_event"]
        at = next((float(e["at"]) for e in commit.events if e["id"] == last), self.clock())
        copy: CopyHead = {
            "recall_of": member,
            "game": state["game"],
            "table_name": state.get("name"),
            "cards": cast(int | None, state["options"].get("cards")),
            "history": history,
        }
        outbox = self.tables.cluster
        keys = (
            [outbox_key(table_id)]
            if outbox
            else [
                key for account, _ in players for key in (deals_key(account), copies_key(account))
            ]
        )
        commit.copies = DealCopies(
            member=member,
            at=at,
            first=history["first_event"],
            last=last,
            # the copy's fields after the player's ids, up to its events
            head=jsonio.dumps(copy)[1:-1] + ',"events":[',
            players=players,
            keys=keys,
            outbox=outbox,
            kept=self.copies,
            indexed=INDEX_MAX,
            due=due,
        )

    def committed(self, commit: Commit) -> None:
        """Deliver the notes `commit` wrote to the table's recall outbox, if any (a
        cluster's); a failure is logged and leaves them to the sweeper."""
        notes = {
            name: cast(RecallNote, jsonio.loads(value)) for name, value in commit.notes.items()
        }
        if not notes:
            return
        try:
            self.store.deliver(commit.record.table_id, notes, self.copies, unpoint=True)
        except STORE_ERRORS:
            log.warning(
                "deal notes left to the sweeper",
                extra={"table": commit.record.table_id},
                exc_info=True,
            )

    def sweep(self, limit: int = 100) -> int:
        """Deliver the notes that processes which died after their commit left; how many
        tables were looked at. Any number of sweepers may run at once."""
        due = self.store.due(self.clock(), limit)
        for table_id, seen in due:
            self.store.deliver(table_id, self.store.pending(table_id), self.copies)
            self.store.looked(table_id, seen)
        return len(due)

    def page(self, account: str, limit: int, cursor: str | None) -> dict[str, object]:
        """A page of the player's deals, newest first; `next` is the next page's cursor."""
        before = None
        if cursor is not None:
            try:
                before = float(cursor)
                if not math.isfinite(before):  # "NaN" and "inf" parse, but end no page
                    raise ValueError(cursor)
            except ValueError:
                raise problem(
                    "invalid_cursor",
                    "A deals cursor is the `next` of an earlier page.",
                    field="cursor",
                ) from None
        rows = self.store.page(account, before, limit)
        deals = []
        for member, at in rows:
            table_id, _, hand = member.rpartition(":")
            deals.append({"table_id": table_id, "hand_number": int(hand), "ended_at": at})
        following = repr(rows[-1][1]) if len(rows) == limit else None
        return {"deals": deals, "next": following}

    def kept(self, account: str, table_id: str, hand_number: int) -> dict[str, object] | None:
        """The player's kept copy of a deal, None when it is not one of their newest."""
        member = f"{table_id}:{hand_number}"
        copy = next((c for c in self.store.copies(account) if c.get("recall_of") == member), None)
        return None if copy is None else seen(copy, account)

    def export(self, account: str, last: int) -> str:
        """The player's last `last` kept deals as one PHH-style text, newest first."""
        copies = self.store.copies(account)[:last]
        return phh.deals_text([text_of(seen(copy, account)) for copy in copies])


class CopyHead(TypedDict):
    """The copy of a finished deal each of its players keeps, but for the player ids in
    front of it and the deal's events after it, which the commit's script adds."""

    recall_of: str
    game: str
    table_name: str | None
    cards: int | None
    history: HandRecord


def seen(copy: dict[str, object], account: str) -> dict[str, object]:
    """A kept copy as its player saw the deal: the events they may see and the fairness
    proof opening the cards they saw. A copy kept as seen already is returned as it is."""
    history = copy.get("history")
    if history is None:
        return copy
    players = cast(list[int], copy["players"])
    viewer = Viewer(account=account, past=frozenset(players))
    events = cast(list[Event], copy["events"])
    shown = shown_history(
        cast(HandRecord, history), [public_event(e) for e in events if viewer.may_see(e)]
    )
    for key in ("game", "table_name", "cards", "recall_of"):
        shown[key] = copy[key]
    return shown


def text_of(shown: dict[str, object]) -> str:
    """A deal's history as its reader sees it (with its game), as PHH-style text."""
    cards = shown.get("cards")
    name = shown.get("table_name")
    return phh.deal_text(
        shown,
        str(shown.get("game") or "guts"),
        cards if isinstance(cards, int) else None,
        name if isinstance(name, str) else None,
    )
