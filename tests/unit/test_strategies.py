"""Computer players' strategies: legal moves from a seat's own view, and the calls and
discards a Paiute hand allows."""

from __future__ import annotations

import random

import pytest

from api.games.game import move_of
from api.games.registry import GAMES
from api.games.strategies import STRATEGIES, Facts, names_for, strategy_for
from api.games.strategies.combinations import best_call, calls, completes, count, outs
from api.games.strategies.guts import Situation, value_of_going_in
from bench.bots.table import play
from tests.support.games import make_deck


def test_each_game_has_a_random_an_easy_and_a_strong_strategy() -> None:
    for game in ("guts", "paiute"):
        assert names_for(game) == ["random", "easy", "strong"]
        for name in names_for(game):
            strategy = strategy_for(game, name)
            assert strategy is not None
            assert strategy.game == game
            assert strategy.name == name
    assert strategy_for("guts", "perfect") is None
    assert names_for("poker") == []


@pytest.mark.parametrize("game", ["guts", "paiute"])
def test_every_strategy_plays_only_legal_moves_for_many_deals(game: str) -> None:
    # the rules refuse an illegal move with RuleError, which would end the game here
    strategies = [STRATEGIES[game][name] for name in ("strong", "easy", "random")]
    options = {"min_buy_in": 1, "max_buy_in": 1_000_000_000}
    ledger = play(game, strategies, options, deals=60, seed=5)
    assert sum(deals for deals, _ in ledger.games) == 60
    for _, net in ledger.games:
        assert sum(net) == 0  # chips only change hands


def test_a_strategy_moves_only_when_the_table_waits_for_its_seat() -> None:
    game = GAMES["guts"]
    state = game.new_table({"declare": "sequential"}, "t1", 0.0)
    for name in ("ann", "bo"):
        state = game.sit(state, name, 100, 0.0).state
    state = game.act(state, 1, move_of({"action": "start"}, lambda: make_deck(3)), 0.0).state
    pending = game.view(state, None)["pending"]
    assert pending is not None
    first = pending["seats"][0]
    other = 2 if first == 1 else 1
    for strategy in STRATEGIES["guts"].values():
        assert strategy.decide(game.view(state, other), Facts(0.9), random.Random(1)) is None
        action = strategy.decide(game.view(state, first), Facts(0.9), random.Random(1))
        assert action is not None
        assert action["action"] == "declare"
        game.verify(state, first, move_of(action, lambda: make_deck(4)), 0.0)
    # a spectator's view holds no seat to move for
    assert (
        STRATEGIES["guts"]["strong"].decide(game.view(state, None), Facts(0.9), random.Random(1))
        is None
    )


def test_strong_guts_goes_in_with_a_good_hand_and_out_with_a_poor_one() -> None:
    def at(odds: float, **changes: object) -> float:
        base = {
            "odds": odds,
            "unknown": 2,
            "known_in": 0,
            "win": 10,
            "loss": 10,
            "worst_pays": False,
            "ghost": False,
            "wimp_cost": 0,
            "share": 1 / 3,
        }
        return value_of_going_in(Situation(**{**base, **changes}))  # type: ignore[arg-type]

    assert at(0.95) > 0 > at(0.3)
    # alone to act after everyone declared out, any hand takes the pot
    assert at(0.1, unknown=0) > 0
    # a ghost to beat makes the same hand worth less; the wimp rule makes staying out cost
    assert at(0.7, ghost=True) < at(0.7)
    assert at(0.9, wimp_cost=4) > at(0.9)
    # under Survivor only the worst hand pays, so a middling hand is worth more
    assert at(0.6, worst_pays=True) > at(0.6)


def test_paiute_calls_show_the_best_combination_the_six_cards_form() -> None:
    wild = 7  # sevens are wild
    assert best_call(["7h", "Ac", "Ad", "As", "Kd", "Ks"], wild, None).value == (3, 14, 13)  # type: ignore[union-attr]
    flush = best_call(["2h", "3h", "4h", "5h", "Ah", "Ks"], wild, None)
    assert flush is not None
    assert flush.discard == "Ks"
    assert flush.value == (4, 5)
    royal = best_call(["Th", "Jh", "Qh", "7s", "Ah", "Ks"], wild, None)
    assert royal is not None
    assert royal.value[0] == 5
    assert royal.discard == "Ks"
    # the card just taken from the pile may not be the one left out
    assert best_call(["Th", "Jh", "Qh", "7s", "Ah", "Ks"], wild, "Ks") is None
    assert best_call(["Th", "Tc", "Qh", "Qs", "2h", "2s"], wild, None).value == (1, 12, 10, 2)  # type: ignore[union-attr]
    assert best_call(["Th", "Td", "8c", "9s", "Qh", "3d"], wild, None) is None
    assert calls(["Th", "Td", "8c", "9s", "Qh", "3d"], wild, None) == []


def test_paiute_outs_count_the_cards_that_complete_five_kept() -> None:
    wild = 7
    kept = ["Th", "Td", "8c", "8s", "Qh"]
    deck = make_deck(1).cards
    counted = outs(kept, [c for c in deck if c not in kept], wild)
    # a third pair (three queens left) or a wild card (four sevens) completes two + two + two
    assert counted == 7
    assert completes(count([*kept, "Qd"], wild))
    assert not completes(count([*kept, "2d"], wild))
