"""api.service.ledger: transfers, and the audit finding every kind of discrepancy."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from api.adapters.wallets import Entry, Transfer
from api.service import ledger
from api.service.ledger import (
    HOUSE,
    MAX_AMOUNT,
    Snapshot,
    TableSnapshot,
    WalletSnapshot,
    audit,
    table_account,
    wallet_account,
)

NOW = 1_800_000_000.0


def entry(transfer: Transfer, balance: int) -> Entry:
    return {**transfer, "balance": balance}


def clean() -> Snapshot:
    """Ann: granted 1000, bought in 100 at table t1, cashed out 40; bo: granted 1000,
    a 50 buy-in reserved and accepted by t1, not posted yet; t1 holds 110 (60 + 50)."""
    grant_a = ledger.transfer("gr_a", "grant", 1000, HOUSE, wallet_account("a"), NOW)
    grant_b = ledger.transfer("gr_b", "grant", 1000, HOUSE, wallet_account("b"), NOW)
    buy_a = ledger.transfer(
        ledger.buy_in_id("t1", "n1"), "buy_in", 100, wallet_account("a"), table_account("t1"), NOW
    )
    buy_b = ledger.transfer(
        ledger.buy_in_id("t1", "n2"), "buy_in", 50, wallet_account("b"), table_account("t1"), NOW
    )
    out_a = ledger.transfer(
        ledger.cash_out_id("t1", 9), "cash_out", 40, table_account("t1"), wallet_account("a"), NOW
    )
    ann = WalletSnapshot(
        "a", 940, 0, 1000, [entry(grant_a, 1000), entry(buy_a, 900), entry(out_a, 940)]
    )
    bo = WalletSnapshot(
        "b",
        1000,
        50,
        1000,
        [entry(grant_b, 1000)],
        {buy_b["id"]: {"amount": 50, "table": "t1", "expires": NOW + 30}},
    )
    table = TableSnapshot("t1", {t["id"]: t for t in (buy_a, buy_b, out_a)}, {}, 110, {})
    return Snapshot([ann, bo], [table], [], NOW)


def findings(snapshot: Snapshot) -> list[str]:
    return audit(snapshot, 10.0, 20.0).discrepancies


def test_a_consistent_store_is_clean_with_its_totals() -> None:
    report = audit(clean(), 10.0, 20.0)
    assert report.clean, report.discrepancies
    assert report.totals == {
        "wallets": 1890,
        "tables": 110,
        "house": -2000,
        "reserved": 0,
        "unrelayed": 0,
    }


def test_a_reservation_on_no_table_and_a_cash_out_in_the_outbox_are_in_flight() -> None:
    snapshot = clean()
    bo = snapshot.wallets[1]
    bo.pending_transfers = {"bi_t2_n3": {"amount": 50, "table": "t2", "expires": NOW + 30}}
    table = snapshot.tables[0]
    del table.transfers["bi_t1_n2"]
    table.chips = 60
    # ann's cash-out written by the table, not yet relayed
    ann = snapshot.wallets[0]
    ann.entries.pop()
    ann.posted = 900
    table.outbox = {"co_t1_9": table.transfers["co_t1_9"]}
    table.outbox_since = {"co_t1_9": NOW - 1}
    report = audit(snapshot, 10.0, 20.0)
    assert report.clean, report.discrepancies
    assert (report.totals["reserved"], report.totals["unrelayed"]) == (50, 40)


@pytest.mark.parametrize(
    ("breaks", "says"),
    [
        (lambda s: setattr(s.wallets[0], "posted", 941), "its entries sum to 940"),
        (lambda s: s.wallets[0].entries[1].update(balance=901), "says balance 901"),
        (lambda s: setattr(s.wallets[1], "pending", 60), "its reservations sum to 50"),
        (lambda s: setattr(s.wallets[0], "issued", 999), "999 issued"),
        (lambda s: setattr(s.tables[0], "chips", 111), "the table holds 111 chips"),
        (lambda s: s.tables[0].transfers.pop("bi_t1_n1"), "posted, no table holds it"),
        (lambda s: s.wallets[0].entries.append(dict(s.wallets[0].entries[0])), "also in"),
        (
            lambda s: s.wallets[1].pending_transfers["bi_t1_n2"].update(expires=NOW - 11),
            "still pending past its time",
        ),
    ],
)
def test_each_broken_invariant_is_a_discrepancy(breaks: Any, says: str) -> None:
    snapshot = copy.deepcopy(clean())
    breaks(snapshot)
    found = findings(snapshot)
    assert any(says in line for line in found), found


def test_chips_made_from_nothing_break_the_sum() -> None:
    snapshot = clean()
    snapshot.tables[0].chips = 210
    extra = ledger.transfer("x1", "buy_in", 100, wallet_account("ghost"), table_account("t1"), NOW)
    snapshot.tables[0].transfers["x1"] = extra  # a table took chips no wallet gave
    found = findings(snapshot)
    assert any("made or lost" in line for line in found), found


def test_a_closed_table_holds_nothing_and_an_old_outbox_entry_is_late() -> None:
    snapshot = clean()
    table = snapshot.tables[0]
    table.chips = None
    table.outbox_since = {"co_t1_9": NOW - 21}
    found = findings(snapshot)
    assert any("closed, but its transfers sum to 110" in line for line in found), found
    assert any("not relayed for 20 s" in line for line in found), found


def test_below_zero_is_a_discrepancy() -> None:
    snapshot = clean()
    bo = snapshot.wallets[1]
    bo.pending = 1001
    bo.pending_transfers["bi_t1_n2"]["amount"] = 1001
    assert any("below zero" in line for line in findings(snapshot))


@pytest.mark.parametrize("amount", [0, -1, MAX_AMOUNT + 1, 1.5, "5", True, None])
def test_a_transfer_moves_a_whole_positive_amount(amount: Any) -> None:
    assert not ledger.valid_amount(amount)
    with pytest.raises(ValueError, match="a transfer moves"):
        ledger.transfer("x", "deposit", amount, HOUSE, wallet_account("a"), NOW)


def test_a_transfer_has_a_known_kind_and_two_accounts() -> None:
    assert ledger.valid_amount(1)
    assert ledger.valid_amount(MAX_AMOUNT)
    with pytest.raises(ValueError, match="kind"):
        ledger.transfer("x", "gift", 5, HOUSE, wallet_account("a"), NOW)
    with pytest.raises(ValueError, match="two accounts"):
        ledger.transfer("x", "deposit", 5, HOUSE, HOUSE, NOW)


def test_ids_name_their_table() -> None:
    assert ledger.table_of(ledger.buy_in_id("abc123", "ff00")) == "abc123"
    assert ledger.table_of(ledger.cash_out_id("abc123", 7)) == "abc123"
    assert ledger.table_of(ledger.reserve_out_id("abc123", 7)) == "abc123"
    assert ledger.table_of("dp_0123") is None
    assert ledger.table_of("gr_p_1") is None
