"""Computer players: seating one, removing it, and the one door its runner acts through.

A bot is seated by its table's creator or an operator, with a strategy of the table's
game (`api.games.strategies`) and a buy-in paid from the house's account for computer
players (the wallet `house-bots`, staked from the house as it needs chips, so that the
ledger and its audit cover every chip a bot plays with). Its seat is marked ``computer``
with the strategy's name, in the table's state, so every view of the table shows it.
The seat's token is kept with the bot's record (`api.adapters.bots`) for the runner
(`python -m api.bots`), which reads the seat's own view and moves through the same
checks as any player's client (`BotService.view`, `BotService.act`).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass

from api.adapters.bots import BotRecord, BotStore, new_bot_id
from api.adapters.store import MoveRead
from api.errors import ApiError, problem
from api.games.game import ActionBody
from api.games.state import TableState, TableView
from api.games.strategies import names_for, strategy_for
from api.service import names
from api.service.changes import Changed, Move, TableChanges
from api.service.credentials import Principal
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, IfMatch, Outcome
from api.service.ledger import HOUSE, MAX_BALANCE, transfer, valid_amount, wallet_account
from api.service.seats import Payment, fit_seat_name, funded, seat_change
from api.service.tables import TableService

# The house's account for computer players' chips: their buy-ins and their cash-outs.
BOTS_ACCOUNT = "house-bots"
BOTS_ALLOWED = ("never", "play_money", "everywhere")


@dataclass(frozen=True)
class BotPolicy:
    """Where bots may sit (`allowed`: never, play_money or everywhere) and whether this
    gateway's chips are play money (its wallets are granted or topped up play chips)."""

    allowed: str = "play_money"
    play_money: bool = True

    def verify(self) -> None:
        """403 bots_not_allowed unless this gateway's setting lets a bot sit."""
        if self.allowed == "everywhere" or (self.allowed == "play_money" and self.play_money):
            return
        if self.allowed == "never":
            raise problem(
                "bots_not_allowed",
                "Computer players may sit at no table on this service (BOTS_ALLOWED).",
            )
        raise problem(
            "bots_not_allowed",
            "Computer players may sit only at play-money tables on this service (BOTS_ALLOWED).",
        )


class BotService:
    """Seat and remove computer players; their runner's view and moves."""

    def __init__(self, tables: TableService, store: BotStore, policy: BotPolicy) -> None:
        """Seat bots at `tables`, keep them in `store`, where `policy` lets them sit."""
        self.tables = tables
        self.store = store
        self.policy = policy

    # ------------------------------------------------------------ seating and removing

    def seat(
        self,
        table_id: str,
        principal: Principal,
        strategy: str,
        buy_in: int,
        name: str | None,
        idempotency: Idempotency | None,
    ) -> Outcome:
        """Seat a computer player with `strategy`, paid from the house's bots account."""
        self.policy.verify()
        state = self.tables.record(table_id).state
        _verify_owner(state, principal)
        if strategy_for(state["game"], strategy) is None:
            raise problem(
                "unknown_strategy",
                "A computer player of {game} plays one of {known}, not {strategy!r}.",
                field="strategy",
                game=state["game"],
                known=", ".join(names_for(state["game"])),
                strategy=strategy,
            )
        shown = name if name is not None else _free_name(state, strategy)
        token = secrets.token_bytes(32).hex()
        changes = self.tables.changes
        sit = _sit_bot(changes, shown, buy_in, strategy)
        change = seat_change(changes, sit, table_id, token, idempotency, None)
        # kept before the seat is taken, its seat not known yet (0): a crash after the
        # commit leaves a bot its runner plays, never a seat nobody can play or remove
        record: BotRecord = {
            "bot_id": new_bot_id(),
            "table_id": table_id,
            "game": state["game"],
            "seat": 0,
            "token": token,
            "strategy": strategy,
            "seated_at": changes.clock(),
        }
        self.store.add(record)
        try:
            self._stake(buy_in)
            outcome = funded(changes, table_id, change, _house_payer(buy_in))
        except ApiError:
            self.store.remove(record["bot_id"])
            raise
        if outcome.headers.get("Idempotent-Replayed") == "true":
            self.store.remove(record["bot_id"])  # the first request's bot plays the seat
        else:
            self.store.add({**record, "seat": int(str(outcome.body["seat"]))})
        # the bot's credential stays with its runner
        shown_body = {key: value for key, value in outcome.body.items() if key != "token"}
        return Outcome(outcome.status, shown_body, outcome.headers)

    def remove(self, table_id: str, seat: int, principal: Principal) -> Outcome:
        """A computer player leaves its seat: now, or when the deal it is in ends."""
        state = self.tables.record(table_id).state
        _verify_owner(state, principal)
        record = next((r for r in self.store.at_table(table_id) if r["seat"] == seat), None)
        held = state["seats"].get(str(seat))
        if record is None or held is None or "computer" not in held:
            raise problem(
                "not_a_computer_player",
                "Seat {seat} of this table holds no computer player.",
                field="seat",
                seat=seat,
            )
        return self.tables.leave(table_id, seat, _acting(record), None, None)

    def leave(self, record: BotRecord) -> Outcome:
        """The bot leaves its seat by itself (its runner's choice), as a player leaves."""
        return self.tables.leave(record["table_id"], record["seat"], _acting(record), None, None)

    def _stake(self, amount: int) -> None:
        """Move what the bots' account lacks for a buy-in of `amount` from the house."""
        if not valid_amount(amount):
            return  # the rules refuse it, with the reason
        wallets = self.tables.wallets
        lacking = amount - wallets.balance(BOTS_ACCOUNT)["balance"]
        if lacking <= 0:
            return
        now = self.tables.changes.clock()
        transfer_id = f"dp_{secrets.token_hex(12)}"
        entry = transfer(
            transfer_id,
            "deposit",
            lacking,
            HOUSE,
            wallet_account(BOTS_ACCOUNT),
            now,
            {"reason": "computer players' buy-ins"},
        )
        wallets.store.note_wallet(BOTS_ACCOUNT, now)
        wallets.store.step(
            BOTS_ACCOUNT, "credit", transfer_id, lacking, "-", entry, "1", MAX_BALANCE
        )

    # ------------------------------------------------------------ the runner's door

    def view(self, record: BotRecord) -> TableView | None:
        """The bot's seat's own view of its table, as its token shows it to a client;
        None once the seat is gone (it left, or the table closed)."""
        try:
            viewer, table = self.tables.look(record["table_id"], _acting(record))
        except ApiError as error:
            if error.code in ("table_not_found", "table_closed"):
                return None
            raise
        if viewer.seat is None or viewer.seat != (record["seat"] or viewer.seat):
            return None
        return game_of(table.state).view(table.state, viewer.seat)

    def act(self, record: BotRecord, action: ActionBody, version: int) -> Outcome:
        """The bot's move, through the same checks as a player's, on the version it saw
        (412 stale_version if the table changed since: no move is made twice)."""
        key = f"bot-{record['bot_id']}-{version}-{action['action']}"
        return self.tables.act(
            record["table_id"],
            _acting(record),
            action,
            IfMatch(frozenset({str(version)})),
            Idempotency(key, key),
            minimal=True,
        )


def _acting(record: BotRecord) -> Principal:
    """The credential a bot acts with: its seat's token, as a client sends it."""
    return Principal(kind="seat", token=record["token"])


def _verify_owner(state: TableState, principal: Principal) -> None:
    """403 unless `principal` is an operator or the player who created the table."""
    if principal.kind == "operator":
        return
    player = principal.require_player()
    if state.get("owner") != player:
        raise problem(
            "not_table_owner",
            "Only the player who created this table, or an operator, seats or removes its"
            " computer players.",
        )


def _free_name(state: TableState, strategy: str) -> str:
    """A name no seat at the table looks like: "Strong bot", "Strong bot 2", ..."""
    taken = [seat["name"] for seat in state["seats"].values()]
    base = f"{strategy.capitalize()} bot"
    number = 1
    while True:
        name = base if number == 1 else f"{base} {number}"
        if names.lookalike_of(name, taken) is None:
            return name
        number += 1


def _sit_bot(changes: TableChanges, name: str, buy_in: int, strategy: str) -> Move:
    """The change that seats a computer player playing `strategy`, marked so in the
    seat and its `seated` event, its chips the house's bots account's."""

    def move(state: TableState) -> Changed:
        sat = game_of(state).sit(state, fit_seat_name(state, name), buy_in, changes.clock())
        after, events = sat.state, sat.events
        for event in events:
            if event["type"] == "seated":
                seat = after["seats"][str(event["data"]["seat"])]
                seat["computer"] = strategy
                event["data"]["computer"] = strategy
                accounts = dict(after.get("accounts") or {})
                held = accounts.get(BOTS_ACCOUNT, {"players": [], "left": None})
                accounts[BOTS_ACCOUNT] = {
                    "players": [*held["players"], seat["player_id"]],
                    "left": None,
                }
                after["accounts"] = accounts
        return after, events

    return move


def _house_payer(buy_in: int) -> Callable[[MoveRead], Payment | None]:
    """A bot's buy-in, paid from the house's bots account."""

    def payer(read: MoveRead) -> Payment | None:
        return Payment(BOTS_ACCOUNT, "buy_in", buy_in) if valid_amount(buy_in) else None

    return payer
