"""A quick seat: "seat me at a table like this", in one call.

The lobby names the tables with a free seat whose options are the ones asked for
(`api.service.lobby`), fullest first; the player takes a seat at the first that has
one, through the table's change loop like any seat (`api.service.seats`): when two
players race for a table's last seat, one commit lands and the other's change is
computed again from the table as it now is, where the rules refuse it (`table_full`),
and that player goes on to the next table. When none has a seat, a table is made with
the options asked for (counted against the player's open tables) and the player sits
at it, once it is sure the seat would be taken (its buy-in within the new table's
limits, the wallet able to cover it): a refused quick seat leaves no empty table.

An Idempotency-Key is held for the whole call (a record of its own, like a table's
creation) and the answer kept under it, its seat token sealed; each seat tried is
keyed too, so a retry after a crash finds the seat it took.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace

from api.adapters.store import idempotency_key
from api.errors import ApiError, from_rule_error
from api.games.common import RuleError
from api.games.state import SessionClock
from api.games.table import verify_sit
from api.service import creation, seats
from api.service.changes import TableChanges
from api.service.dispatch import GAMES
from api.service.idempotency import Idempotency, Outcome, error_outcome
from api.service.lobby import Filters, LobbyQueries
from api.service.players import PlayerService
from api.service.wallets import insufficient_funds

# a refusal at one table that another table may not give: try the next one
NEXT_TABLE = frozenset(
    {
        "table_full",
        "table_closed",
        "table_not_found",
        "already_seated",
        "name_taken",
        "invalid_buy_in",
        "conflict",
    }
)
# lobby pages a quick seat looks through before it makes a table
PAGES = 5
PAGE_SIZE = 20


def quick_seat(
    changes: TableChanges,
    players: PlayerService | None,
    lobby: LobbyQueries,
    body: Mapping[str, object],
    idempotency: Idempotency | None,
    account: str,
    session: SessionClock | None = None,
) -> Outcome:
    """Seat `account` (with their `session` clock) at a table like `body["table"]` with a
    free seat, or at a new one."""
    replays = changes.replays
    claim_key = None
    if idempotency is not None:
        claim_key = idempotency_key("quick-seat", idempotency.key)
        replay = replays.claim(claim_key, idempotency)
        if replay is not None:
            return replay
    try:
        outcome = _seat_somewhere(changes, players, lobby, body, idempotency, account, session)
    except ApiError as error:
        if claim_key is not None:
            if error.status >= 500:
                replays.release(claim_key)
            else:
                replays.remember(claim_key, idempotency, error_outcome(error))
        raise
    except Exception:
        if claim_key is not None:
            replays.release(claim_key)
        raise
    if claim_key is not None:
        token = outcome.body.get("token")
        replays.remember(claim_key, idempotency, outcome, str(token) if token else None)
    return outcome


def _seat_somewhere(
    changes: TableChanges,
    players: PlayerService | None,
    lobby: LobbyQueries,
    body: Mapping[str, object],
    idempotency: Idempotency | None,
    account: str,
    session: SessionClock | None,
) -> Outcome:
    """The seat taken at the first matching table that has one, else at a new table."""
    wanted = dict(_mapping(body["table"]))
    name = body.get("name")
    seat_name = name if isinstance(name, str) else None
    buy_in = int(str(body["buy_in"]))
    # each table tried gets a key of its own from the call's, so a retry finds its seat
    keyed = None
    if idempotency is not None:
        keyed = replace(idempotency, key=f"quick-seat:{idempotency.key}")
    for table_id in candidates(lobby, wanted):
        try:
            outcome = seats.take_seat(
                changes, players, table_id, seat_name, buy_in, keyed, account, session
            )
        except ApiError as error:
            if error.code in NEXT_TABLE:
                continue
            raise
        return _answer(outcome, created=False)
    _verify_new_seat(changes, players, wanted, seat_name, buy_in, account)
    made = creation.create_table(changes, players, wanted, None, account)
    table = _mapping(made.body["table"])
    outcome = seats.take_seat(
        changes, players, str(table["id"]), seat_name, buy_in, keyed, account, session
    )
    return _answer(outcome, created=True)


def _verify_new_seat(
    changes: TableChanges,
    players: PlayerService | None,
    wanted: Mapping[str, object],
    name: str | None,
    buy_in: int,
    account: str,
) -> None:
    """Refuse before a table is made for a seat it would refuse: a buy-in outside the new
    table's limits or a name unfit for a seat (as the rules say), or a wallet that cannot
    cover the buy-in, so that a refused quick seat leaves no empty table behind."""
    rules = GAMES.get(str(wanted["game"]))
    options = {key: value for key, value in wanted.items() if key not in ("game", "name")}
    if rules is not None:
        try:
            probe = rules.new_table(options, "0", changes.clock())
        except RuleError:
            probe = None  # the table's creation refuses its options, and says why
        if probe is not None:
            shown = name or (players.name_of(account) if players is not None else None)
            try:
                verify_sit(probe, shown or "player", buy_in, changes.clock())
            except RuleError as error:
                raise from_rule_error(
                    error.code, error.template, error.field, **error.params
                ) from None
    wallets = changes.wallets
    if wallets.balance(account)["balance"] < buy_in:
        wallets.top_up(account)  # the day's top-up, where there is one
        free = wallets.balance(account)["balance"]
        if free < buy_in:
            raise insufficient_funds(free, buy_in)


def candidates(lobby: LobbyQueries, wanted: Mapping[str, object]) -> Iterator[str]:
    """The tables with a free seat whose options are all the ones `wanted` names, in
    the lobby's order (a few pages of it)."""
    cards = wanted.get("cards")
    ante = wanted.get("ante")
    filters = Filters(game=str(wanted["game"]), cards=cards if isinstance(cards, int) else None)
    if isinstance(ante, int):
        filters = replace(filters, ante_min=ante, ante_max=ante)
    options = {key: value for key, value in wanted.items() if key not in ("game", "name")}
    cursor: str | None = None
    for _ in range(PAGES):
        page = lobby.page(filters, PAGE_SIZE, cursor)
        for table in _tables(page):
            shown = _mapping(table["options"])
            if all(shown.get(key) == value for key, value in options.items()):
                yield str(table["id"])
        next_cursor = page["next"]
        if not isinstance(next_cursor, str):
            return
        cursor = next_cursor


def _answer(outcome: Outcome, created: bool) -> Outcome:
    """A seat's answer, saying whether its table was made for it."""
    return Outcome(outcome.status, {**outcome.body, "created": created}, dict(outcome.headers))


def _mapping(value: object) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise TypeError("expected a JSON object")
    return value


def _tables(page: Mapping[str, object]) -> list[Mapping[str, object]]:
    tables = page["tables"]
    if not isinstance(tables, list):
        raise TypeError("expected a list of tables")
    return [_mapping(table) for table in tables]
