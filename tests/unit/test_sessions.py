"""A player's session clock: when it began, its limit, its reality checks."""

from __future__ import annotations

import pytest

from api.service.limits import LimitError
from api.service.sessions import DAY, change_settings, confirm_setting, session_clock, stricter

NONE: dict[str, int | None] = {"limit_minutes": None, "reality_check_minutes": None}


def test_a_session_runs_a_day_from_its_first_buy_in() -> None:
    assert session_clock(None, None, 100.0, 200.0) is None
    clock = session_clock(60, 20, 1_000.0, 1_000.0 + 50 * 60)
    assert clock == {
        "started": 1_000.0,
        "until": 1_000.0 + 3600,
        "every": 1200.0,
        "next_check": 1_000.0 + 3 * 1200,
    }
    # a day after it began, a new one begins with this seat
    fresh = session_clock(None, 15, 1_000.0, 1_000.0 + DAY)
    assert fresh == {
        "started": 1_000.0 + DAY,
        "until": None,
        "every": 900.0,
        "next_check": 1_000.0 + DAY + 900,
    }
    assert session_clock(30, None, None, 5.0) == {
        "started": 5.0,
        "until": 5.0 + 1800,
        "every": None,
        "next_check": None,
    }


def test_a_stricter_setting_applies_at_once_a_looser_one_waits() -> None:
    assert stricter(None, 60)  # a new limit
    assert stricter(60, 30)  # a shorter one
    assert stricter(60, 60)  # the same
    assert not stricter(60, 90)  # a longer one
    assert not stricter(60, None)  # its removal
    assert stricter(None, None)
    first = change_settings(NONE, {}, {"limit_minutes": 60, "reality_check_minutes": 20}, 10, DAY)
    assert (first.settings, first.pending, first.applied) == (
        {"limit_minutes": 60, "reality_check_minutes": 20},
        {},
        True,
    )
    # longer and off: both wait a day, the settings stay as they were
    looser = change_settings(
        first.settings, {}, {"limit_minutes": 90, "reality_check_minutes": None}, 100, DAY
    )
    assert looser.settings == first.settings
    assert not looser.applied
    assert looser.pending == {
        "limit_minutes": {"value": 90, "asked_at": 100, "from_at": 100 + DAY},
        "reality_check_minutes": {"value": None, "asked_at": 100, "from_at": 100 + DAY},
    }
    # a member left out stays; a stricter one cancels the change of it waiting
    stricter_now = change_settings(looser.settings, looser.pending, {"limit_minutes": 45}, 200, DAY)
    assert stricter_now.settings == {"limit_minutes": 45, "reality_check_minutes": 20}
    assert set(stricter_now.pending) == {"reality_check_minutes"}
    assert stricter_now.applied


def test_a_looser_setting_is_confirmed_once_cooled() -> None:
    settings = {"limit_minutes": 60, "reality_check_minutes": 20}
    waiting = change_settings(settings, {}, {"reality_check_minutes": None}, 100, DAY)
    with pytest.raises(LimitError) as early:
        confirm_setting(waiting.settings, waiting.pending, "reality_check_minutes", 100 + DAY - 1)
    assert (early.value.code, early.value.at) == ("limit_cooling", 100 + DAY)
    with pytest.raises(LimitError) as none:
        confirm_setting(waiting.settings, waiting.pending, "limit_minutes", 100 + DAY)
    assert none.value.code == "nothing_to_confirm"
    done = confirm_setting(waiting.settings, waiting.pending, "reality_check_minutes", 100 + DAY)
    assert (done.settings, done.pending, done.applied) == (
        {"limit_minutes": 60, "reality_check_minutes": None},
        {},
        True,
    )
