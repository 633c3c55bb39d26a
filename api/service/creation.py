"""Creating a table: its options checked by its game, its name, its place in its owner's
quota, and its first commit through the change loop (`api.service.changes`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from api.errors import from_rule_error, problem
from api.games.events import Event
from api.games.game import Game
from api.games.state import TableState
from api.service.changes import Change, Changed, NewTable, Respond, TableChanges
from api.service.decks import new_table_id
from api.service.dispatch import GAMES
from api.service.idempotency import Idempotency, Outcome
from api.service.names import display_name
from api.service.players import PlayerService
from api.service.queries import TableQueries
from api.service.visibility import SPECTATOR, public_event

# The longest table name (the OpenAPI document's CreateTable.name.maxLength).
MAX_TABLE_NAME = 64


class OwnerQuota:
    """A new table's place among its owner's open tables: taken by the change that makes
    the table, given back when the table is not made."""

    def __init__(self, players: PlayerService | None, owner: str | None, table_id: str) -> None:
        """Count `table_id` against `owner`'s quota (nobody's without an owner or players)."""
        self.players = players
        self.owner = owner
        self.table_id = table_id
        self.taken = False

    def take(self) -> None:
        """Count the table; 429 quota_exceeded when the owner's tables are all open."""
        if self.owner is not None and self.players is not None:
            self.players.reserve_table(self.owner, self.table_id)
            self.taken = True

    def give_back(self) -> None:
        """Stop counting a table that was counted and not made."""
        if self.taken and self.owner is not None and self.players is not None:
            self.players.release_table(self.owner, self.table_id)


def create_table(
    changes: TableChanges,
    players: PlayerService | None,
    body: Mapping[str, object],
    idempotency: Idempotency | None,
    owner: str | None = None,
) -> Outcome:
    """Create a table from the validated request body, counted against `owner`'s quota."""
    options = dict(body)
    game = str(options.pop("game"))
    name = options.pop("name", None)
    rules = GAMES.get(game)
    if rules is None:
        raise problem(
            "unsupported_game",
            "This gateway does not host {game!r} tables yet.",
            field="game",
            game=game,
        )
    table_id = new_table_id()
    now = changes.clock()
    quota = OwnerQuota(players, owner, table_id)
    make = _new_table(rules, options, name, table_id, now, quota, owner)
    change = Change(
        None,
        _created(changes.queries, table_id),
        idempotency=idempotency,
        creates=NewTable(now, make, quota.give_back),
    )
    return changes.apply(table_id, change)


def _new_table(
    rules: Game,
    options: Mapping[str, object],
    name: object,
    table_id: str,
    now: float,
    quota: OwnerQuota,
    owner: str | None = None,
) -> Callable[[], Changed]:
    """The change that makes the table, once its place in the quota is taken."""

    def make() -> Changed:
        quota.take()
        state = rules.new_table(options, table_id, now)
        shown = None
        if name is not None:
            shown = display_name(name, MAX_TABLE_NAME)
            if shown is None:
                raise from_rule_error(
                    "invalid_name",
                    "A table's name is 1 to {max_table_name} characters, not counting"
                    " spaces at either end, with no control or invisible formatting"
                    " character.",
                    "name",
                    max_table_name=MAX_TABLE_NAME,
                )
        state["name"] = shown or f"{state['game']} table {table_id[:6]}"
        state["accounts"] = {}
        if owner is not None:
            state["owner"] = owner
        created: Event = {
            "type": "table_created",
            "data": {"options": state["options"], "name": state["name"]},
            "visible_to": None,
        }
        return state, [created]

    return make


def _created(queries: TableQueries, table_id: str) -> Respond:
    """The answer to a table's creation: the table as a spectator sees it, and its event."""

    def respond(state: TableState, events: list[Event]) -> Outcome:
        return Outcome(
            201,
            {
                "table": queries.present(state, SPECTATOR),
                "events": [public_event(e) for e in events],
            },
            {"Location": f"/v1/tables/{table_id}"},
        )

    return respond
