"""What the gateway reads: a table as its viewer may see it, events, histories (the
lobby: `api.service.lobby`).

Nothing here writes. A viewer is found from a seat token in the same round trip as
the table it is for; a spectator sees only public events, a seat its own private ones
too (`api.service.visibility`).
"""

from __future__ import annotations

import hmac
import time

from api.adapters.store import HandRecord, TableRecord, TableStore, TokenEntry, closed_key
from api.errors import ApiError, invalid_token, problem
from api.games import fairness
from api.games.events import Event
from api.games.state import TableState
from api.service.credentials import Principal
from api.service.dispatch import game_of
from api.service.visibility import SPECTATOR, Viewer, public_event


class TableQueries:
    """Reads of tables kept in `store`."""

    def __init__(self, store: TableStore) -> None:
        """Read tables from `store`."""
        self.store = store

    def record(self, table_id: str) -> TableRecord:
        """The table, or 404 (410 once it was closed)."""
        return self.open_table(table_id, self.store.load(table_id))

    def open_table(self, table_id: str, record: TableRecord | None) -> TableRecord:
        """`record` if the table is open; 410 table_closed or 404 table_not_found if not."""
        if record is not None and not record.closed:
            return record
        closing = self.store.get_json(closed_key(table_id))
        if isinstance(closing, dict) and closing.pop("accounts", None) is not None:
            raise problem(
                "table_closed",
                "Table {table_id!r} was closed by its creator or an operator; every seat was"
                " cashed out (see `closing`).",
                extra={"closing": closing},
                table_id=table_id,
            )
        if record is not None or closing is not None:
            raise problem(
                "table_closed",
                "Table {table_id!r} was closed after a time without moves; every seat was"
                " cashed out (see `closing`).",
                extra={"closing": closing},
                table_id=table_id,
            )
        raise problem(
            "table_not_found",
            "There is no table {table_id!r}.",
            field="table_id",
            table_id=table_id,
        )

    def look(
        self, table_id: str, principal: Principal, seat_entry: TokenEntry | None = None
    ) -> tuple[Viewer, TableRecord]:
        """The table and who `principal` is at it, in one round trip; 404/410.

        A read ignores a credential that does not hold (a spectator sees what is public);
        `seat_entry` is a stream ticket's seat, checked against the table like a token.
        """
        token = principal.token if principal.kind == "seat" else None
        read = self.store.read(table_id, token, None)
        record = self.open_table(table_id, read.record)
        if seat_entry is not None:
            return self.viewer_of(record, None, seat_entry, lenient=True), record
        account = principal.player if principal.kind == "player" else None
        return self.viewer_of(record, token, read.player, account, lenient=True), record

    @staticmethod
    def viewer_of(
        record: TableRecord,
        token: str | None,
        found: TokenEntry | None,
        account: str | None = None,
        lenient: bool = False,
    ) -> Viewer:
        """Who holds `token` (its entry `found`) or who `account` is at the table.

        A token that does not hold is 401 invalid_token, or a spectator when `lenient`.
        """
        if account is not None:
            return account_viewer(record.state, account)
        if token is None and found is None:
            return SPECTATOR
        if found is None:
            if lenient:
                return SPECTATOR
            raise invalid_token()
        seat = record.state["seats"].get(str(found["seat"]))
        if seat is None or not hmac.compare_digest(str(seat["player_id"]), str(found["player"])):
            if lenient:
                return SPECTATOR
            raise invalid_token()
        return Viewer(int(found["seat"]), int(found["player"]))

    def present(self, record: TableRecord | TableState, viewer: Viewer) -> dict[str, object]:
        """The table as `viewer` may see it."""
        state = record.state if isinstance(record, TableRecord) else record
        view = game_of(state).view(state, viewer.seat)
        # the table's one id field is `id`, as in the lobby; the rules' view calls it table_id
        shown: dict[str, object] = {"id": state["table_id"], "name": state.get("name")}
        shown.update((key, value) for key, value in view.items() if key != "table_id")
        if viewer.account is not None and state.get("owner") == viewer.account:
            shown["created_by_you"] = True  # it may seat and remove computer players
        return shown

    def events(
        self, table_id: str, viewer: Viewer, after: int, wait: float
    ) -> tuple[list[Event], int]:
        """Events after the cursor that `viewer` may see, waiting up to `wait` seconds.

        The cursor returned moves past events the viewer may not see, so a long poll
        never spins on them. Event ids have no gaps, so a first event past the cursor's
        successor means events after the cursor were trimmed: 410 history_trimmed.
        """
        deadline = time.monotonic() + wait
        cursor = after
        while True:
            remaining = deadline - time.monotonic()
            block = int(remaining * 1000) if remaining > 0.001 else None
            items = self.store.events_after(table_id, cursor, block)
            if items:
                if int(items[0]["id"]) > cursor + 1:
                    raise self.trimmed_events(table_id, cursor, int(items[0]["id"]))
                cursor = int(items[-1]["id"])
            visible = [public_event(item) for item in items if viewer.may_see(item)]
            if visible or block is None or time.monotonic() >= deadline:
                return visible, cursor

    def check_cursor(self, table_id: str, after: int, field: str = "after") -> None:
        """410 history_trimmed if events after `after` (given as `field`) are no longer kept."""
        first = self.store.first_event_after(table_id, after)
        if first is not None and first > after + 1:
            raise self.trimmed_events(table_id, after, first, field)

    @staticmethod
    def trimmed_events(table_id: str, after: int, first: int, field: str = "after") -> ApiError:
        return problem(
            "history_trimmed",
            "Events after {after} of table {table_id!r} are no longer kept; the oldest"
            " kept event is {first}: resume with after={resume_after}, or read the table.",
            field=field,
            extra={"first_event": first, "resume_after": first - 1},
            after=after,
            table_id=table_id,
            first=first,
            resume_after=first - 1,
        )

    def closed_viewer(self, table_id: str, principal: Principal) -> Viewer | None:
        """Who reads a deal of a table closed on request: the player by the seats the
        table's closing record keeps, or a spectator; None for any other table."""
        closing = self.store.get_json(closed_key(table_id))
        accounts = closing.get("accounts") if isinstance(closing, dict) else None
        if not isinstance(accounts, dict):
            return None
        entry = accounts.get(principal.player or "") if principal.kind == "player" else None
        held = entry.get("players") if isinstance(entry, dict) else None
        if not isinstance(held, list):
            return SPECTATOR
        past = frozenset(int(local) for local in held if isinstance(local, int))
        return Viewer(account=principal.player, past=past)

    def hand_history(self, table_id: str, hand_number: int, viewer: Viewer) -> dict[str, object]:
        """One finished deal: its events (as the viewer may see them) and the proof."""
        history, events = self.store.hand_and_events(table_id, hand_number)
        if history is None:
            record = self.store.load(table_id)
            if record is not None and 1 <= hand_number < record.first_hand:
                raise problem(
                    "history_trimmed",
                    "The history of deal {hand_number} of table {table_id!r} is no longer"
                    " kept; the oldest kept deal is {first_hand}.",
                    field="hand_number",
                    extra={"first_hand": record.first_hand},
                    hand_number=hand_number,
                    table_id=table_id,
                    first_hand=record.first_hand,
                )
            raise problem(
                "hand_not_found",
                "Deal {hand_number} of table {table_id!r} has not finished (or never happened).",
                field="hand_number",
                hand_number=hand_number,
                table_id=table_id,
            )
        if events is None:
            events = self.store.events_between(
                table_id, history["first_event"], history["last_event"]
            )
        visible = [public_event(item) for item in events if viewer.may_see(item)]
        return shown_history(history, visible)


def shown_history(history: HandRecord, visible: list[Event]) -> dict[str, object]:
    """A finished deal's history as its reader sees it: the events it may see and the
    fairness proof opening the cards it saw come off the deck."""
    shown: dict[str, object] = {
        key: value
        for key, value in history.items()
        if key not in ("first_event", "last_event", "sealed")
    }
    shown["events"] = visible
    sealed = history.get("sealed")
    if sealed is None:
        # a deal finished before proofs were opened card by card: its proof stays as
        # it was published then (the whole deck), the one its commitment can match
        return shown
    game = sealed["game"]
    seen = fairness.cards_off_the_deck(visible, game)
    showdown = history["showdown"]
    if game == "guts" and showdown is not None:
        # the hands shown at a Guts showdown are the hands as dealt
        for hand in showdown["hands"].values():
            seen.update(hand["cards"] or ())
    if history["wild_card"]:
        seen.add(history["wild_card"])
    shown["fairness"] = fairness.proof(
        sealed["deck"],
        sealed["salt"],
        seen,
        reshuffles=sealed.get("reshuffles", []) if game == "paiute" else None,
        draws_seen=fairness.stock_draws_seen(visible),
    )
    return shown


def account_viewer(state: TableState, account: str) -> Viewer:
    """The signed-in player `account` at a table: their seat, if they hold one, and the
    player ids they had there before."""
    entry = (state.get("accounts") or {}).get(account)
    if entry is None:
        return Viewer(account=account)
    players = frozenset(int(player) for player in entry["players"])
    for number, seat in state["seats"].items():
        if seat["player_id"] in players:
            return Viewer(int(number), int(seat["player_id"]), account, players)
    return Viewer(account=account, past=players)


def account_of(state: TableState, local: int | None) -> str | None:
    """The player who holds or held the table's local player id `local` (None: nobody)."""
    for account, entry in (state.get("accounts") or {}).items():
        if local in entry["players"]:
            return str(account)
    return None
