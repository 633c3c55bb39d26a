"""decide_showdown: winners, worst and the ghost, from strengths alone."""

from evaluator.showdown import decide_showdown


def test_single_best_and_single_worst() -> None:
    outcome = decide_showdown([(1, 50), (2, 70), (3, 10)], None)
    assert outcome.winners == (2,)
    assert outcome.worst == (3,)
    assert not outcome.ghost_wins


def test_ties_for_best_and_worst_list_every_tied_seat() -> None:
    outcome = decide_showdown([(1, 70), (2, 70), (3, 10), (4, 10)], None)
    assert outcome.winners == (1, 2)
    assert outcome.worst == (3, 4)


def test_everyone_tied_means_no_loser() -> None:
    outcome = decide_showdown([(1, 30), (2, 30)], None)
    assert outcome.winners == (1, 2)
    assert outcome.worst == ()


def test_seat_must_beat_the_ghost_strictly() -> None:
    outcome = decide_showdown([(1, 40), (2, 20)], 40)
    assert outcome.winners == ()
    assert outcome.ghost_wins
    assert outcome.tied_with_ghost == (1,)
    assert outcome.beaten_by_ghost == (2,)
    assert outcome.worst == (2,)


def test_ghost_beaten_by_the_best_seat() -> None:
    outcome = decide_showdown([(1, 60), (2, 20), (3, 30)], 25)
    assert outcome.winners == (1,)
    assert not outcome.ghost_wins
    assert outcome.beaten_by_ghost == (2,)
    assert outcome.worst == (2,)


def test_all_seats_tied_below_the_ghost_all_lose() -> None:
    outcome = decide_showdown([(1, 20), (2, 20)], 25)
    assert outcome.winners == ()
    assert outcome.worst == (1, 2)
    assert outcome.beaten_by_ghost == (1, 2)


def test_lone_seat_against_the_ghost() -> None:
    assert decide_showdown([(5, 90)], 10).winners == (5,)
    assert decide_showdown([(5, 9)], 10).winners == ()


def test_seats_tied_with_a_winning_ghost_are_not_the_worst() -> None:
    """They neither win nor pay (RULES.md, Ghost hand): nobody loses."""
    outcome = decide_showdown([(1, 40), (2, 40)], 40)
    assert outcome.ghost_wins
    assert outcome.tied_with_ghost == (1, 2)
    assert outcome.worst == ()
    assert decide_showdown([(3, 40)], 40).worst == ()
    # one tied with the ghost, one beaten by it: the beaten one is the worst
    mixed = decide_showdown([(1, 40), (2, 30)], 40)
    assert (mixed.worst, mixed.tied_with_ghost, mixed.beaten_by_ghost) == ((2,), (1,), (2,))
