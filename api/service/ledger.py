"""The ledger, pure: transfers between accounts, and the audit of what the store holds.

Every chip movement is a transfer: an id, the account debited, the account credited, an
amount (a positive integer), a kind, a time and its cause. Transfers are never changed
or deleted; a mistake is undone by another transfer. The accounts:

    wallet:<player id>   a player's chips off the tables
    table:<table id>     everything on a table: stacks, pot and reserve
    house                the chips issued (grants, top-ups, deposits) and redeemed

A wallet and a table live on different Redis Cluster slots, so a transfer between
them takes two steps (docs/ledger.md): a buy-in or a rebuy is reserved in the wallet
(pending), accepted by the table's commit, then posted, or voided if the table never
took it; a cash-out is written to the table's outbox by the table's commit, then
credited to the wallet once by its id. This module holds what both steps agree on and
the audit's arithmetic; the Redis side, and the types of what it stores (`Transfer`,
`Entry`, `Held`), are `api.adapters.wallets`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from api.adapters.wallets import Cause, Entry, Held, Transfer

HOUSE = "house"
# The largest amount of one transfer, and the largest balance of a wallet: integers a
# double, JSON numbers in any client and Redis's Lua all hold exactly.
MAX_AMOUNT = 10**12
MAX_BALANCE = 10**15

# kinds of transfer, by the accounts they move chips between
ISSUED = ("grant", "top_up", "deposit")  # house -> wallet
REDEEMED = ("withdrawal",)  # wallet -> house
TO_TABLE = ("buy_in", "rebuy")  # wallet -> table
FROM_TABLE = ("cash_out",)  # table -> wallet
TO_HOUSE = ("reserve_to_house",)  # table -> house
KINDS = ISSUED + REDEEMED + TO_TABLE + FROM_TABLE + TO_HOUSE


def wallet_account(player: str) -> str:
    """The account of a player's wallet."""
    return f"wallet:{player}"


def table_account(table_id: str) -> str:
    """The account of a table."""
    return f"table:{table_id}"


def valid_amount(amount: object) -> bool:
    """True for an amount a transfer may move: a whole number from 1 to MAX_AMOUNT."""
    return isinstance(amount, int) and not isinstance(amount, bool) and 1 <= amount <= MAX_AMOUNT


def transfer(
    transfer_id: str,
    kind: str,
    amount: int,
    debit: str,
    credit: str,
    at: float,
    cause: Cause | None = None,
) -> Transfer:
    """A transfer as the ledger keeps it (a wallet's entry adds its balance after it)."""
    if kind not in KINDS:
        raise ValueError(f"unknown transfer kind {kind!r}")
    if not valid_amount(amount):
        raise ValueError(f"a transfer moves 1 to {MAX_AMOUNT} chips, not {amount!r}")
    if debit == credit:
        raise ValueError("a transfer moves chips between two accounts")
    return {
        "id": transfer_id,
        "kind": kind,
        "amount": amount,
        "debit": debit,
        "credit": credit,
        "at": at,
        "cause": {} if cause is None else cause.copy(),
    }


def buy_in_id(table_id: str, nonce: str) -> str:
    """The id of a buy-in or rebuy: the table's and the request's."""
    return f"bi_{table_id}_{nonce}"


def cash_out_id(table_id: str, event_id: int) -> str:
    """The id of a cash-out: the table's and its `cashed_out` event's, so one at most."""
    return f"co_{table_id}_{event_id}"


def reserve_out_id(table_id: str, event_id: int) -> str:
    """The id of a closed table's reserve going to the house."""
    return f"rh_{table_id}_{event_id}"


def table_of(transfer_id: str) -> str | None:
    """The table a buy-in, rebuy or cash-out id names (ids are `<kind>_<table>_<nonce>`)."""
    parts = transfer_id.split("_")
    if len(parts) < 3 or parts[0] not in ("bi", "co", "rh"):
        return None
    return "_".join(parts[1:-1])


# --------------------------------------------------------------------------- audit


@dataclass
class WalletSnapshot:
    """What the store holds of one wallet."""

    player: str
    posted: int
    pending: int
    issued: int
    entries: list[Entry]
    # pending transfers by id
    pending_transfers: dict[str, Held] = field(default_factory=dict)


@dataclass
class TableSnapshot:
    """What the store holds of one table's chips: its ledger, its outbox, its state."""

    table_id: str
    transfers: dict[str, Transfer]
    outbox: dict[str, Transfer]
    # chips on the table (stacks, pot, reserve); None once the table's state is gone
    chips: int | None
    # when each outbox entry was written
    outbox_since: dict[str, float] = field(default_factory=dict)


@dataclass
class Snapshot:
    """The whole store's chips, as the audit reads them."""

    wallets: list[WalletSnapshot]
    tables: list[TableSnapshot]
    house_entries: list[Entry]
    now: float


@dataclass
class Report:
    """The audit's findings: the totals and every discrepancy, one line each."""

    discrepancies: list[str]
    totals: dict[str, int]

    @property
    def clean(self) -> bool:
        """True when no invariant is broken."""
        return not self.discrepancies


def _signed(entries: Iterable[Transfer], account: str) -> int:
    total = 0
    for entry in entries:
        if entry["credit"] == account:
            total += int(entry["amount"])
        elif entry["debit"] == account:
            total -= int(entry["amount"])
    return total


def audit(snapshot: Snapshot, pending_late: float, outbox_late: float) -> Report:
    """Check every invariant of the ledger over `snapshot` (docs/ledger.md#the-audit).

    - each wallet's balance equals the sum of its entries, each entry's balance the
      running sum, no wallet below zero, no transfer id twice;
    - each table's account (the sum of its transfers) equals the chips on it;
    - the accounts sum to zero, counting what is in flight: a reservation no table
      accepted yet, a cash-out not yet relayed;
    - nothing in flight too long: a reservation `pending_late` seconds past its time,
      a cash-out `outbox_late` seconds after it was written.
    """
    found, accepted = _audit_tables(snapshot, outbox_late)
    relayed: set[str] = set()
    wallets_total = issued = in_flight = 0
    seen: dict[str, str] = {}
    for wallet in snapshot.wallets:
        account = wallet_account(wallet.player)
        found += _audit_wallet(wallet, accepted, seen, relayed)
        for transfer_id, pending in wallet.pending_transfers.items():
            if transfer_id not in accepted:
                in_flight += int(pending["amount"])  # reserved, on no table yet
            if snapshot.now - float(pending["expires"]) > pending_late:
                found.append(f"{account}: {transfer_id} still pending past its time")
        wallets_total += wallet.posted - wallet.pending
        issued += wallet.issued
    unrelayed = 0
    for table in snapshot.tables:
        for transfer_id, item in table.outbox.items():
            if transfer_id not in relayed:
                unrelayed += int(item["amount"])
    tables_total = sum(
        _signed(t.transfers.values(), table_account(t.table_id)) for t in snapshot.tables
    )
    house = _signed(snapshot.house_entries, HOUSE) - issued
    total = wallets_total + tables_total + house
    if total + in_flight + unrelayed != 0:
        found.append(
            f"the accounts sum to {total} with {in_flight} reserved on no table and"
            f" {unrelayed} cashed out not yet relayed: {total + in_flight + unrelayed} chips"
            " made or lost"
        )
    totals = {
        "wallets": wallets_total,
        "tables": tables_total,
        "house": house,
        "reserved": in_flight,
        "unrelayed": unrelayed,
    }
    return Report(found, totals)


def _audit_tables(snapshot: Snapshot, outbox_late: float) -> tuple[list[str], dict[str, str]]:
    """What is wrong with the tables' accounts, and which table accepted each transfer."""
    found: list[str] = []
    accepted: dict[str, str] = {}
    for table in snapshot.tables:
        account = table_account(table.table_id)
        balance = _signed(table.transfers.values(), account)
        if table.chips is not None and balance != table.chips:
            found.append(
                f"{account}: its transfers sum to {balance}, the table holds {table.chips} chips"
            )
        if table.chips is None and balance != 0:
            found.append(f"{account}: closed, but its transfers sum to {balance}")
        for transfer_id in table.transfers:
            accepted[transfer_id] = table.table_id
        for transfer_id, since in table.outbox_since.items():
            if snapshot.now - since > outbox_late:
                found.append(f"{account}: {transfer_id} not relayed for {outbox_late:g} s")
    return found, accepted


def _audit_wallet(
    wallet: WalletSnapshot, accepted: Mapping[str, str], seen: dict[str, str], relayed: set[str]
) -> list[str]:
    """What is wrong with one wallet's entries and sums; notes the transfers it holds in
    `seen` (by account) and the cash-outs it was credited in `relayed`."""
    found: list[str] = []
    account = wallet_account(wallet.player)
    running = 0
    for position, entry in enumerate(wallet.entries, start=1):
        if entry["id"] in seen:
            # a transfer is between a wallet and another kind of account: once in one
            found.append(f"{account}: transfer {entry['id']} also in {seen[entry['id']]}")
        seen[entry["id"]] = account
        if account not in (entry["debit"], entry["credit"]):
            found.append(f"{account}: entry {position} ({entry['id']}) is not its transfer")
            continue
        running += int(entry["amount"]) if entry["credit"] == account else -int(entry["amount"])
        if entry.get("balance") != running:
            found.append(
                f"{account}: entry {position} ({entry['id']}) says balance"
                f" {entry.get('balance')}, its entries sum to {running}"
            )
        if entry["kind"] in FROM_TABLE:
            relayed.add(entry["id"])
        if entry["kind"] in TO_TABLE and entry["id"] not in accepted:
            # posted only once a table took it: that table's ledger (kept) holds it
            found.append(f"{account}: {entry['id']} posted, no table holds it")
    if running != wallet.posted:
        found.append(f"{account}: balance {wallet.posted}, its entries sum to {running}")
    if wallet.posted - wallet.pending < 0:
        found.append(f"{account}: below zero ({wallet.posted - wallet.pending})")
    reserved = sum(int(p["amount"]) for p in wallet.pending_transfers.values())
    if reserved != wallet.pending:
        found.append(f"{account}: {wallet.pending} pending, its reservations sum to {reserved}")
    issued_sum = sum(
        int(e["amount"]) if e["kind"] in ISSUED else -int(e["amount"])
        for e in wallet.entries
        if e["kind"] in ISSUED + REDEEMED
    )
    if issued_sum != wallet.issued:
        found.append(f"{account}: {wallet.issued} issued, its entries say {issued_sum}")
    return found
