"""The pure rules of players' limits: which applies, when a change applies, what is used."""

from __future__ import annotations

import pytest

from api.service import limits
from api.service.limits import LimitError

DAY = 86_400.0


def test_a_decrease_applies_at_once_and_an_increase_waits_for_a_confirmation() -> None:
    held = limits.new_limits()
    slot = limits.slot_of("deposit", "24h")
    first = limits.set_by_player(held, slot, 500, 0.0, DAY)
    assert first.applied
    assert limits.effective(first.limits) == {slot: 500}
    lower = limits.set_by_player(first.limits, slot, 300, 10.0, DAY)
    assert lower.applied
    assert limits.effective(lower.limits) == {slot: 300}

    higher = limits.set_by_player(lower.limits, slot, 900, 20.0, DAY)
    assert not higher.applied
    assert limits.effective(higher.limits) == {slot: 300}  # until it is confirmed
    assert higher.limits["pending"][slot] == {"amount": 900, "asked_at": 20.0, "from_at": DAY + 20}
    with pytest.raises(LimitError) as early:
        limits.confirm(higher.limits, slot, DAY)
    assert (early.value.code, early.value.at) == ("limit_cooling", DAY + 20)
    confirmed = limits.confirm(higher.limits, slot, DAY + 20)
    assert limits.effective(confirmed.limits) == {slot: 900}
    assert confirmed.limits["pending"] == {}
    with pytest.raises(LimitError) as none:
        limits.confirm(confirmed.limits, slot, DAY + 30)
    assert none.value.code == "nothing_to_confirm"
    # every change is a new version
    assert [c.limits["version"] for c in (first, lower, higher, confirmed)] == [1, 2, 3, 4]


def test_a_removal_waits_and_a_decrease_cancels_a_waiting_increase() -> None:
    slot = limits.slot_of("loss", "7d")
    held = limits.set_by_player(limits.new_limits(), slot, 100, 0.0, DAY).limits
    removal = limits.set_by_player(held, slot, None, 1.0, DAY)
    assert not removal.applied
    assert limits.effective(removal.limits) == {slot: 100}
    cancelled = limits.set_by_player(removal.limits, slot, 80, 2.0, DAY)
    assert cancelled.applied
    assert cancelled.limits["pending"] == {}
    removed = limits.confirm(limits.set_by_player(held, slot, None, 1.0, DAY).limits, slot, DAY + 1)
    assert limits.effective(removed.limits) == {}


def test_the_lowest_of_the_player_s_and_the_operator_s_applies() -> None:
    slot = limits.slot_of("buy_in", "30d")
    held = limits.set_by_player(limits.new_limits(), slot, 1_000, 0.0, DAY).limits
    operator = limits.set_by_operator(held, slot, 400)
    assert operator.applied
    assert limits.effective(operator.limits) == {slot: 400}
    # the operator raises theirs at once; the player's own still holds
    raised = limits.set_by_operator(operator.limits, slot, 5_000).limits
    assert limits.effective(raised) == {slot: 1_000}
    assert limits.effective(limits.set_by_operator(raised, slot, None).limits) == {slot: 1_000}


@pytest.mark.parametrize(("kind", "window"), [("stake", "24h"), ("deposit", "1h"), (None, None)])
def test_an_unknown_kind_or_window_is_refused(kind: object, window: object) -> None:
    with pytest.raises(LimitError) as refused:
        limits.slot_of(kind, window)
    assert refused.value.code == "invalid_limit"


def test_usage_counts_rolling_windows_and_losses_net_of_cash_outs() -> None:
    now = 40 * DAY
    flows: list[limits.Flow] = [
        {"tag": "d", "amount": 500, "at": now - 20 * DAY},
        {"tag": "b", "amount": 300, "at": now - 3 * DAY},
        {"tag": "c", "amount": 100, "at": now - 2 * DAY},
        {"tag": "b", "amount": 50, "at": now - 3600},
        {"tag": "c", "amount": 400, "at": now - 60},
    ]
    usage = limits.usage(flows, now)
    assert usage["deposit:24h"].used == 0
    assert usage["deposit:30d"] == limits.Usage(500, now - 20 * DAY + 30 * DAY)
    assert usage["buy_in:24h"] == limits.Usage(50, now - 3600 + DAY)
    assert usage["buy_in:7d"].used == 350
    assert usage["loss:7d"].used == 0  # more cashed out than bought in: no loss
    assert usage["loss:24h"].used == 0
    assert limits.valid_limit(0)
    assert not limits.valid_limit(-1)
    assert not limits.valid_limit(True)
    assert not limits.valid_limit(10**12 + 1)
