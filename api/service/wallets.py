"""Wallets: where chips enter and leave, and the two steps that move them to and from tables.

Chips enter from the house (a play-money grant when a player is created and a daily
top-up in open mode; an operator's deposits) and leave to it (withdrawals, a closed
table's reserve). A buy-in or rebuy is reserved in the wallet, accepted by the table's
commit, then posted (or voided when the table did not take it); a cash-out is written
to the table's outbox by the table's commit, then credited to the wallet. Every step
is idempotent by its transfer id, so any gateway, clock or sweeper may finish another's
work (`sweep`). docs/ledger.md tells the whole story; `api.service.ledger` is the
arithmetic, `api.adapters.wallets` the Redis side.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from api import jsonio
from api.adapters.store import STORE_ERRORS
from api.adapters.wallets import (
    HOUSE_WALLET,
    OUTBOX_KEY,
    PENDING_KEY,
    Cause,
    Entry,
    Held,
    Step,
    Transfer,
    WalletStore,
    table_ledger_key,
    table_outbox_key,
)
from api.errors import ApiError, problem
from api.games.state import TableState
from api.service import ledger
from api.service.ledger import HOUSE, MAX_AMOUNT, MAX_BALANCE, table_account, wallet_account
from api.service.limits import FLOW_CASH, FLOW_DEPOSIT, FLOW_SPEND

log = logging.getLogger("cardroom.wallets")


@dataclass(frozen=True)
class WalletPolicy:
    """Amounts and times of the wallets (docs/configuration.md#wallets-and-the-ledger)."""

    # chips granted to a new player, and the floor a wallet is topped up to once a day
    grant: int = 0
    daily: int = 0
    # a reservation lasts this long; a sweeper resolves it `margin` seconds later (the
    # clocks of the processes and Redis servers agree within the margin)
    pending_seconds: float = 30.0
    margin: float = 5.0
    # a cash-out not relayed at once is relayed by a sweeper this much later
    relay_seconds: float = 10.0
    # how often a sweeper looks (the clock runs it)
    sweep_seconds: float = 2.0


@dataclass(frozen=True)
class Reservation:
    """A buy-in or rebuy reserved in a wallet, to be accepted by a table's commit."""

    player: str
    table_id: str
    transfer: Transfer
    expires: float

    @property
    def transfer_id(self) -> str:
        """The transfer's id."""
        return self.transfer["id"]


def insufficient_funds(available: int, wanted: int) -> ApiError:
    """409 insufficient_funds, with what the wallet holds."""
    return problem(
        "insufficient_funds",
        "The wallet holds {available} chips free to spend; this needs {wanted}.",
        field="amount",
        extra={"balance": available},
        available=available,
        wanted=wanted,
    )


def invalid_amount(field: str = "amount") -> ApiError:
    """422 invalid_amount."""
    return problem(
        "invalid_amount",
        "An amount is a whole number of chips from 1 to {max_amount}.",
        field=field,
        max_amount=MAX_AMOUNT,
    )


def _key_reused() -> ApiError:
    """409 idempotency_key_reused."""
    return problem(
        "idempotency_key_reused",
        "This Idempotency-Key was used with a different request.",
        field="Idempotency-Key",
    )


def limit_reached(refused: str, amount: int) -> ApiError:
    """409 limit_reached: the player's limit a deposit or buy-in of `amount` would pass,
    as wallet.lua names it ("<kind>:<window> <limit> <left> <resets at>")."""
    slot, limit, left, resets = refused.split(" ")[:4]  # resets may be empty
    kind, _, window = slot.partition(":")
    resets_at = float(resets) if resets else None
    return problem(
        "limit_reached",
        "This would pass the player's {kind} limit of {limit} chips over {window}:"
        " {left} chips are left until the window moves on.",
        extra={
            "limit": {"kind": kind, "window": window, "amount": int(limit)},
            "left": int(left),
            "resets_at": resets_at,
            "amount": amount,
        },
        kind=kind,
        limit=int(limit),
        window=window,
        left=int(left),
    )


def player_excluded(until: str) -> ApiError:
    """409 player_excluded: a deposit or buy-in during a time-out or self-exclusion that
    ends at `until` (Unix time, or "forever"), as wallet.lua says."""
    ends = None if until == "forever" else float(until)
    return problem(
        "player_excluded",
        "The player has taken a time-out or excluded themselves: no deposit, seat or"
        " rebuy until it ends.",
        extra={"until": ends},
    )


def refuse_limited(step: Step, amount: int) -> None:
    """Raise the refusal of a step a player's limit or exclusion stopped, if one did."""
    if step.outcome == "over_limit":
        raise limit_reached(step.refused, amount)
    if step.outcome == "excluded":
        raise player_excluded(step.refused)
    if step.outcome == "session_limit":
        raise problem(
            "session_limit_reached",
            "The player's session time limit is reached: no seat or rebuy until a new"
            " session may begin.",
            extra={"until": float(step.refused)},
        )


def _refuse_operator_step(step: Step, amount: int) -> None:
    """Raise the refusal of an operator's transfer the wallet did not take, if it did not."""
    if step.outcome == "reused":
        raise _key_reused()
    refuse_limited(step, amount)
    if step.outcome == "insufficient":
        raise insufficient_funds(step.available, amount)
    if step.outcome == "limit":
        raise problem(
            "balance_limit",
            "A wallet holds at most {max_balance} chips.",
            field="amount",
            max_balance=MAX_BALANCE,
        )


def _fingerprint(body: Mapping[str, object]) -> str:
    return hashlib.sha256(jsonio.dumps_bytes(dict(body))).hexdigest()[:16]


class WalletService:
    """Players' wallets, the transfers to and from tables, the sweeps and the audit."""

    def __init__(
        self,
        store: WalletStore,
        policy: WalletPolicy | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Wallets in `store`, as `policy` says; `clock` gives the time."""
        self.store = store
        self.policy = policy or WalletPolicy()
        self.clock = clock

    # ------------------------------------------------------------ entering and leaving

    def open(self, player: str) -> None:
        """A new player's wallet, with the play-money grant if there is one."""
        now = self.clock()
        self.store.note_wallet(player, now)
        if self.policy.grant > 0:
            entry = ledger.transfer(
                f"gr_{player}",
                "grant",
                self.policy.grant,
                HOUSE,
                wallet_account(player),
                now,
                {"reason": "new player"},
            )
            self.store.step(
                player, "credit", entry["id"], self.policy.grant, "-", entry, "1", MAX_BALANCE
            )
            # the grant is the day's top-up
            self.store.mark_topped(player, _day(now))

    def top_up(self, player: str) -> None:
        """Once a (UTC) day, bring a play-money wallet up to the daily floor."""
        if self.policy.daily <= 0:
            return
        now = self.clock()
        day = _day(now)
        transfer_id = f"tu_{player}_{day.replace('-', '')}"
        entry: Transfer = {
            "id": transfer_id,
            "kind": "top_up",
            "amount": 0,  # the script writes what the wallet lacked
            "debit": HOUSE,
            "credit": wallet_account(player),
            "at": now,
            "cause": {"reason": "daily top-up", "day": day},
        }
        self.store.note_wallet(player, now)
        self.store.step(player, "top_up", transfer_id, self.policy.daily, "-", entry, day)

    def balance(self, player: str) -> dict[str, int]:
        """What a player's wallet holds: free to spend, reserved, and both."""
        wallet = self.store.wallet(player)
        return {
            "balance": wallet["posted"] - wallet["pending"],
            "pending": wallet["pending"],
        }

    def move(
        self,
        player: str,
        kind: str,
        amount: object,
        operator: str,
        idempotency: str | None,
        reference: str | None,
    ) -> tuple[Entry, bool]:
        """An operator's deposit or withdrawal: the entry, and whether it was a replay.

        With an Idempotency-Key the transfer's id comes from the key, so a retry has one
        effect; the same key with another request is 409 idempotency_key_reused.
        """
        if not ledger.valid_amount(amount):
            raise invalid_amount()
        assert isinstance(amount, int)
        request = {"kind": kind, "amount": amount, "player": player, "reference": reference}
        transfer_id, fingerprint = self._operator_transfer(operator, idempotency, request)
        now = self.clock()
        house, wallet = HOUSE, wallet_account(player)
        debit, credit = (house, wallet) if kind == "deposit" else (wallet, house)
        cause: Cause = {"operator": operator}
        if reference is not None:
            cause["reference"] = reference
        entry = ledger.transfer(transfer_id, kind, amount, debit, credit, now, cause)
        self.store.note_wallet(player, now)
        op, flow = ("credit", FLOW_DEPOSIT) if kind == "deposit" else ("debit", "")
        step = self.store.step(
            player, op, transfer_id, amount, fingerprint, entry, "1", MAX_BALANCE, flow
        )
        _refuse_operator_step(step, amount)
        replayed = step.outcome.startswith("seen")
        if step.position is None:
            raise RuntimeError(f"{transfer_id}: {step.outcome} without an entry")
        (found,) = self.store.entries(player, step.position - 1, step.position - 1)
        return found, replayed

    def _operator_transfer(
        self, operator: str, idempotency: str | None, request: Mapping[str, object]
    ) -> tuple[str, str]:
        """An operator's transfer's id and its request's fingerprint: from the key, claimed
        for this request, when there is one (409 idempotency_key_reused for another)."""
        prefix = "dp" if request["kind"] == "deposit" else "wd"
        if idempotency is None:
            return f"{prefix}_{secrets.token_hex(12)}", "-"
        key = hashlib.sha256(f"{operator}\0{idempotency}".encode()).hexdigest()
        fingerprint = _fingerprint(request)
        # the key names one request of the operator's, whichever wallet it is for
        if not self.store.claim_key(key, fingerprint):
            raise _key_reused()
        return f"{prefix}_{key[:24]}", fingerprint

    # ------------------------------------------------------------ to and from tables

    def reserve(self, player: str, table_id: str, kind: str, amount: int) -> Reservation:
        """Reserve a buy-in or rebuy; 409 insufficient_funds when the wallet is short
        (after the day's top-up, if there is one)."""
        try:
            return self._reserve(player, table_id, kind, amount)
        except ApiError as error:
            if error.code != "insufficient_funds" or self.policy.daily <= 0:
                raise
        self.top_up(player)
        return self._reserve(player, table_id, kind, amount)

    def _reserve(self, player: str, table_id: str, kind: str, amount: int) -> Reservation:
        now = self.clock()
        expires = now + self.policy.pending_seconds
        transfer = ledger.transfer(
            ledger.buy_in_id(table_id, secrets.token_hex(8)),
            kind,
            amount,
            wallet_account(player),
            table_account(table_id),
            now,
            {"table": table_id},
        )
        # the pointer first: a reservation is never left where no sweeper looks
        due = expires + self.policy.margin
        self.store.point_at(PENDING_KEY, f"{player} {transfer['id']}", due)
        held: Held = {"amount": amount, "table": table_id, "expires": expires}
        step = self.store.step(
            player,
            "reserve",
            transfer["id"],
            amount,
            "-",
            None,
            jsonio.dumps(held),
            int(expires * 1000) / 1000,
            FLOW_SPEND,
        )
        if step.outcome == "insufficient":
            raise insufficient_funds(step.available, amount)
        refuse_limited(step, amount)
        if step.outcome == "expired":
            # Redis's clock is past this process's by the whole reservation's time
            log.error("reservation refused as expired", extra={"transfer": transfer["id"]})
            raise ApiError(
                409,
                "conflict",
                "Clocks disagree",
                "The gateway's clock and the store's disagree; try again shortly.",
                headers={"Retry-After": "1"},
            )
        if step.outcome != "done":
            raise RuntimeError(f"reservation of {transfer['id']}: {step.outcome}")
        return Reservation(player, table_id, transfer, int(expires * 1000) / 1000)

    def table_entry(self, reservation: Reservation) -> tuple[str, str, str]:
        """What the table's commit writes to accept a reservation (its ledger's entry)."""
        transfer = reservation.transfer
        return (table_ledger_key(reservation.table_id), transfer["id"], jsonio.dumps(transfer))

    def post(self, reservation: Reservation) -> None:
        """The table took the reservation: debit the wallet."""
        self._post(reservation.player, reservation.transfer)

    def _post(self, player: str, transfer: Transfer) -> str:
        step = self.store.step(player, "post", transfer["id"], transfer["amount"], "-", transfer)
        return step.outcome

    def void(self, reservation: Reservation) -> None:
        """The table did not take the reservation (refused, replayed): release it.

        Only where the commit surely did not land; otherwise the sweeper decides.
        """
        try:
            self.store.step(reservation.player, "void", reservation.transfer_id, 0, "-")
        except STORE_ERRORS:
            log.warning(
                "reservation left to the sweeper", extra={"transfer": reservation.transfer_id}
            )

    def cash_out(
        self,
        table_id: str,
        event_id: int,
        amount: int,
        player: str | None,
        now: float,
        cause: Cause,
    ) -> Transfer:
        """The transfer of a seat's chips from the table to its player's wallet (or to the
        house, for a seat no player holds)."""
        credit = HOUSE if player is None else wallet_account(player)
        return ledger.transfer(
            ledger.cash_out_id(table_id, event_id),
            "cash_out",
            amount,
            table_account(table_id),
            credit,
            now,
            cause,
        )

    def reserve_to_house(self, table_id: str, event_id: int, amount: int, now: float) -> Transfer:
        """The transfer of a closed table's reserve to the house."""
        return ledger.transfer(
            ledger.reserve_out_id(table_id, event_id),
            "reserve_to_house",
            amount,
            table_account(table_id),
            HOUSE,
            now,
            {"table": table_id, "reason": "table closed"},
        )

    def outgoing(
        self, table_id: str, transfers: list[Transfer]
    ) -> tuple[list[tuple[str, str, str]], float]:
        """What a table's commit writes for transfers leaving it (its ledger and its
        outbox), and the time the commit must land before; points the sweeper first."""
        due = self.clock() + self.policy.relay_seconds
        self.store.point(OUTBOX_KEY, table_id, due)
        writes = []
        for item in transfers:
            text = jsonio.dumps(item)
            writes.append((table_ledger_key(table_id), item["id"], text))
            writes.append((table_outbox_key(table_id), item["id"], text))
        return writes, due - self.policy.margin

    def relay(self, table_id: str) -> int:
        """Credit every cash-out in the table's outbox to its wallet, once; how many."""
        outbox = self.store.outbox(table_id)
        done = []
        for transfer_id, item in sorted(outbox.items(), key=lambda pair: pair[1]["at"]):
            player = _wallet_of(item["credit"])
            if player != HOUSE_WALLET:
                self.store.note_wallet(player, float(item["at"]))
            # chips off a table always find their wallet: no balance limit
            flow = FLOW_CASH if item["kind"] == "cash_out" and player != HOUSE_WALLET else ""
            step = self.store.step(
                player, "credit", transfer_id, item["amount"], "-", item, "0", 2**53, flow
            )
            if step.outcome == "done" or step.outcome.startswith("seen"):
                done.append(transfer_id)
            else:
                log.error(
                    "cash-out not relayed", extra={"transfer": transfer_id, "outcome": step.outcome}
                )
        self.store.relayed(table_id, done)
        return len(done)

    def relay_quietly(self, table_id: str) -> None:
        """`relay`, leaving what fails to the sweeper."""
        try:
            self.relay(table_id)
        except STORE_ERRORS:
            log.warning("cash-outs left to the sweeper", extra={"table": table_id})

    # ------------------------------------------------------------ the sweeper

    def sweep(self, limit: int = 100) -> dict[str, int]:
        """Finish what crashed processes left: reservations past their time (posted if
        their table holds them, else voided) and cash-outs not relayed. Any number of
        sweepers may run at once."""
        now = self.clock()
        done = {"posted": 0, "voided": 0, "relayed": 0}
        # a pointer per reservation, due once no commit can accept it any more: each is
        # resolved on its own time, however many more the player makes meanwhile
        for member, _ in self.store.due(PENDING_KEY, now, limit):
            player, _, transfer_id = member.partition(" ")
            held = self.store.reservation(player, transfer_id)
            if held is not None:
                entry = self.store.table_transfer(held["table"], transfer_id)
                if entry is not None:
                    if self._post(player, entry) == "done":
                        done["posted"] += 1
                else:
                    step = self.store.step(player, "void", transfer_id, 0, "-")
                    done["voided"] += step.outcome == "done"
            self.store.drop(PENDING_KEY, member)
        for table_id, seen in self.store.due(OUTBOX_KEY, now, limit):
            done["relayed"] += self.relay(table_id)
            self.store.repoint(OUTBOX_KEY, table_id, seen, None)
        return done

    # ------------------------------------------------------------ reading the ledger

    def entries_page(
        self, player: str, cursor: int | None, limit: int
    ) -> tuple[list[Entry], int | None]:
        """A page of the wallet's entries, newest first, before position `cursor`."""
        count = self.store.entry_count(player)
        stop = count if cursor is None else min(cursor, count)
        start = max(0, stop - limit)
        entries = list(reversed(self.store.entries(player, start, stop - 1)))
        return entries, (start if start > 0 else None)

    def export(
        self, cursor: tuple[str, float, int] | None, limit: int
    ) -> tuple[list[Entry], tuple[str, float, int] | None]:
        """Up to `limit` transfers of the whole ledger, wallet after wallet by creation and
        then the house's own credits, from `cursor` (wallet, its time, next entry)."""
        found: list[Entry] = []
        for player, at, start in self._walk(cursor):
            room = limit - len(found)
            entries = self.store.entries(player, start, start + room - 1)
            found += entries
            if len(found) >= limit:
                return found, (player, at, start + len(entries))
        return found, None

    def _walk(self, cursor: tuple[str, float, int] | None) -> Iterator[tuple[str, float, int]]:
        if cursor is not None and cursor[0] == HOUSE_WALLET:
            yield HOUSE_WALLET, cursor[1], cursor[2]
            return
        after = None
        if cursor is not None:
            yield cursor[0], cursor[1], cursor[2]
            after = (cursor[1], cursor[0])
        while True:
            page = self.store.wallets(after, 200)
            for player, at in page:
                yield player, at, 0
            if len(page) < 200:
                break
            after = (page[-1][1], page[-1][0])
        yield HOUSE_WALLET, 0.0, 0

    # ------------------------------------------------------------ the audit

    def snapshot(self) -> ledger.Snapshot:
        """Everything the audit checks, read from the whole store (a scan: for operators)."""
        store = self.store
        wallets = []
        for key in store.scan("player:{*}:wallet"):
            player = key[len("player:{") : -len("}:wallet")]
            wallet = store.wallet(player)
            count = store.entry_count(player)
            wallets.append(
                ledger.WalletSnapshot(
                    player,
                    wallet["posted"],
                    wallet["pending"],
                    wallet["issued"],
                    store.entries(player, 0, count - 1),
                    store.pending(player),
                )
            )
        tables = []
        for key in store.scan("table:{*}:ledger"):
            table_id = key[len("table:{") : -len("}:ledger")]
            outbox = store.outbox(table_id)
            raw = store.client.hget(f"table:{{{table_id}}}", "state")
            chips = None
            if raw is not None:
                state: TableState = jsonio.loads(raw)
                chips = (
                    sum(s["stack"] for s in state["seats"].values())
                    + state["pot"]
                    + state["reserve"]
                )
            tables.append(
                ledger.TableSnapshot(
                    table_id,
                    store.table_ledger(table_id),
                    outbox,
                    chips,
                    {tid: float(item["at"]) for tid, item in outbox.items()},
                )
            )
        house_count = store.entry_count(HOUSE_WALLET)
        return ledger.Snapshot(
            wallets, tables, store.entries(HOUSE_WALLET, 0, house_count - 1), self.clock()
        )

    def audit(self) -> ledger.Report:
        """Check every invariant of the ledger over the whole store."""
        slack = self.policy.margin + 5 * self.policy.sweep_seconds
        return ledger.audit(self.snapshot(), slack, self.policy.relay_seconds + slack)


def _day(now: float) -> str:
    """The UTC day of a time, as a top-up counts days."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


def _wallet_of(account: str) -> str:
    if account == HOUSE:
        return HOUSE_WALLET
    assert account.startswith("wallet:"), account
    return account[len("wallet:") :]
