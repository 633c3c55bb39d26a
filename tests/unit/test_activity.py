"""A player's activity per day, from their wallet's entries and their deals."""

from __future__ import annotations

from datetime import UTC, datetime

from api.service.activity import activity


def _at(day: int, hour: float) -> float:
    return datetime(2026, 3, day, tzinfo=UTC).timestamp() + hour * 3600


def test_money_net_result_time_played_and_deals_per_day() -> None:
    entries = [
        {"kind": "deposit", "amount": 500, "at": _at(1, 9)},
        {"kind": "buy_in", "amount": 200, "at": _at(1, 22), "cause": {"table": "t1"}},
        {"kind": "rebuy", "amount": 50, "at": _at(1, 23), "cause": {"table": "t1"}},
        # the seat runs over midnight: two hours on the 1st, one on the 2nd
        {"kind": "cash_out", "amount": 400, "at": _at(2, 1), "cause": {"table": "t1"}},
        {"kind": "withdrawal", "amount": 100, "at": _at(2, 2)},
        # a seat gone broke: no cash-out, its time runs to its last deal
        {"kind": "buy_in", "amount": 100, "at": _at(3, 10), "cause": {"table": "t2"}},
    ]
    deals = [("t1", _at(1, 22.5)), ("t1", _at(2, 0.5)), ("t2", _at(3, 10.5))]
    days = activity(entries, deals, _at(1, 0), _at(3, 12))
    assert [d["day"] for d in days] == ["2026-03-03", "2026-03-02", "2026-03-01"]
    third, second, first = days
    assert (first["deposits"], first["buy_ins"], first["net"]) == (500, 250, -250)
    assert (second["cash_outs"], second["net"], second["withdrawals"]) == (400, 400, 100)
    assert (first["seconds_played"], second["seconds_played"]) == (7200.0, 3600.0)
    assert third["seconds_played"] == 1800.0
    assert [d["deals"] for d in days] == [1, 1, 1]


def test_days_without_activity_are_listed_empty() -> None:
    days = activity([], [], _at(1, 0), _at(2, 5))
    assert [(d["day"], d["net"], d["seconds_played"]) for d in days] == [
        ("2026-03-02", 0, 0.0),
        ("2026-03-01", 0, 0.0),
    ]
