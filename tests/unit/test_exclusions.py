"""The pure rules of time-outs and self-exclusion: what may be asked, and never shortened."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from api.service import exclusions
from api.service.exclusions import DAY, ExclusionError

NOW = datetime(2026, 8, 31, 12, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("kind", "days", "months", "permanent", "until"),
    [
        ("time_out", 1, None, None, NOW + DAY),
        ("time_out", 30, None, False, NOW + 30 * DAY),
        ("self_exclusion", None, 6, None, datetime(2027, 2, 28, 12, tzinfo=UTC).timestamp()),
        ("self_exclusion", None, 60, None, datetime(2031, 8, 31, 12, tzinfo=UTC).timestamp()),
        ("self_exclusion", None, None, True, None),
    ],
)
def test_what_may_be_asked(
    kind: str, days: object, months: object, permanent: object, until: float | None
) -> None:
    asked = exclusions.asked(kind, days, months, permanent, NOW)
    assert asked == {"kind": kind, "since": NOW, "until": until}


@pytest.mark.parametrize(
    ("kind", "days", "months", "permanent"),
    [
        ("time_out", 0, None, None),
        ("time_out", 31, None, None),
        ("time_out", True, None, None),
        ("time_out", 3, 6, None),
        ("self_exclusion", None, 5, None),
        ("self_exclusion", None, 61, None),
        ("self_exclusion", None, 6, True),
        ("self_exclusion", 7, None, True),
        ("break", 7, None, None),
    ],
)
def test_what_may_not(kind: str, days: object, months: object, permanent: object) -> None:
    with pytest.raises(ExclusionError) as refused:
        exclusions.asked(kind, days, months, permanent, NOW)
    assert refused.value.code == "invalid_exclusion"


def test_an_exclusion_is_never_shortened_and_a_longer_one_replaces_it() -> None:
    week = exclusions.asked("time_out", 7, None, None, NOW)
    assert exclusions.extended(None, week, NOW) == week
    assert exclusions.is_active(week, NOW + 6 * DAY)
    assert not exclusions.is_active(week, NOW + 7 * DAY)
    with pytest.raises(ExclusionError) as shorter:
        exclusions.extended(week, exclusions.asked("time_out", 2, None, None, NOW + DAY), NOW + DAY)
    assert shorter.value.code == "exclusion_shorter"
    longer = exclusions.asked("self_exclusion", None, 6, None, NOW + DAY)
    taken = exclusions.extended(week, longer, NOW + DAY)
    assert taken == {"kind": "self_exclusion", "since": NOW, "until": longer["until"]}
    forever = exclusions.extended(
        taken, exclusions.asked("self_exclusion", None, None, True, NOW), NOW
    )
    assert forever["until"] is None
    with pytest.raises(ExclusionError):
        exclusions.extended(forever, longer, NOW + 2 * DAY)
    # once one has ended, anything may be taken again
    assert exclusions.extended(week, week, NOW + 8 * DAY) == week
