"""The table service: the tables' use cases as the HTTP layer calls them, and their reads.

Each use case is a module of its own over the change loop (`api.service.changes`):
creating a table (`api.service.creation`), seats (`api.service.seats`), moves
(`api.service.moves`) and leaving (`api.service.leaving`); the deadlines the clock
applies are `api.service.deadlines`, the reads `api.service.queries`. `api.bootstrap`
builds it with everything it uses.
"""

from __future__ import annotations

from collections.abc import Mapping

from api.errors import ApiError
from api.games.game import ActionBody
from api.service import closing, creation, leaving, moves, quickseat, seats
from api.service.changes import TableChanges
from api.service.credentials import Principal
from api.service.idempotency import Idempotency, IfMatch, Outcome
from api.service.lobby import Filters, LobbyQueries
from api.service.player_limits import PlayerLimits
from api.service.players import PlayerService
from api.service.queries import TableQueries


class TableService(TableQueries):
    """Create tables, seat players, apply moves and leaves; the reads of `TableQueries`."""

    def __init__(
        self,
        changes: TableChanges,
        players: PlayerService | None = None,
        limits: PlayerLimits | None = None,
    ) -> None:
        """Change tables through `changes`; count tables against quotas and list seats
        with `players` (None for a process that authenticates nobody, as the clock's);
        give each seat its player's session clock from `limits`."""
        super().__init__(changes.store)
        self.changes = changes
        self.players = players
        self.limits = limits
        self.evaluator = changes.evaluator
        self.wallets = changes.wallets
        self.webhooks = changes.webhooks
        self.lobby_queries = LobbyQueries(changes.store)

    def lobby(
        self, filters: Filters, limit: int, cursor: str | None, owner: str | None = None
    ) -> dict[str, object]:
        """A page of the lobby (`api.service.lobby`); with `owner`, that player's own
        open tables, empty ones included."""
        if owner is not None:
            owned = [] if self.players is None else self.players.store.created_tables(owner)
            return self.lobby_queries.owned(filters, owned)
        return self.lobby_queries.page(filters, limit, cursor)

    def quick_seat(
        self, body: Mapping[str, object], idempotency: Idempotency | None, account: str
    ) -> Outcome:
        """Seat `account` at a table like the one `body` describes, or at a new one."""
        session = None if self.limits is None else self.limits.session_clock(account)
        return quickseat.quick_seat(
            self.changes, self.players, self.lobby_queries, body, idempotency, account, session
        )

    def create_table(
        self, body: Mapping[str, object], idempotency: Idempotency | None, owner: str | None = None
    ) -> Outcome:
        """Create a table from the validated request body, counted against `owner`'s quota."""
        return creation.create_table(self.changes, self.players, body, idempotency, owner)

    def take_seat(
        self,
        table_id: str,
        name: str | None,
        buy_in: int,
        idempotency: Idempotency | None,
        account: str | None = None,
    ) -> Outcome:
        """Seat the player `account` (under `name`, by default their own); the reply holds
        a seat token, a credential for this seat alone, shown only this once."""
        session = None
        if account is not None and self.limits is not None:
            session = self.limits.session_clock(account)
        return seats.take_seat(
            self.changes, self.players, table_id, name, buy_in, idempotency, account, session
        )

    def seats_of(self, account: str) -> list[dict[str, object]]:
        """Every seat the player `account` holds, with the table as that seat sees it."""
        return seats.seats_of(self, self.players, account)

    def leave(
        self,
        table_id: str,
        seat: int,
        principal: Principal,
        if_match: IfMatch | None,
        idempotency: Idempotency | None,
    ) -> Outcome:
        """A seat asks to leave, or an operator removes it: now, or when the deal it is
        in is settled."""
        if principal.kind == "operator":
            return closing.remove_seat(
                self.changes, table_id, seat, principal, if_match, idempotency
            )
        return leaving.leave(self.changes, table_id, seat, principal, if_match, idempotency)

    def leave_everywhere(self, account: str) -> list[dict[str, object]]:
        """Every seat the player `account` holds leaves, now or after its deal (a time-out
        or self-exclusion): what became of each."""
        if self.players is None:
            return []
        left = []
        for table_id in self.players.store.seat_tables(account):
            try:
                gone = closing.remove_player(self.changes, table_id, account)
            except ApiError as error:
                if error.status != 410 and error.status != 404:  # closed or gone: no seat
                    raise
                continue
            if gone is not None:
                left.append(gone)
        return left

    def close_table(
        self,
        table_id: str,
        principal: Principal,
        if_match: IfMatch | None,
        idempotency: Idempotency | None,
    ) -> Outcome:
        """Close a table (its creator before its first deal, an operator always): every
        seat cashed out after the current deal, the table out of the lobby."""
        return closing.close_table(self.changes, table_id, principal, if_match, idempotency)

    def act(
        self,
        table_id: str,
        principal: Principal,
        action: ActionBody,
        if_match: IfMatch | None,
        idempotency: Idempotency | None,
        minimal: bool = False,
    ) -> Outcome:
        """Apply one seat's move (start, declare, rebuy, draw, discard, call); with
        `minimal`, a 204 whose body is never built (`api.service.moves.act`)."""
        return moves.act(self.changes, table_id, principal, action, if_match, idempotency, minimal)
