"""100,000 deals per game from the production deck source: no card twice, all uniform.

The deals start a five-seat 3-card Guts table and a five-seat Paiute table, each through
the game module's own `start`, so the test covers the shuffle and the dealing order
together. A position is where a card lands: (seat in dealing order, card number)
for the hands, plus Paiute's wild card and first discard. Two families of chi-square
tests, with a Bonferroni correction over all of them for a family-wise false alarm
rate of 1 in 1,000: each position holds each of the 52 cards equally often, and each
card lands in each position equally often (against the remaining "not dealt" share).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from api.games import guts, paiute
from api.games.common import FULL_DECK
from api.service.decks import shuffled_deck

DEALS_PER_GAME = 100_000
SEATS = 5
FAMILY_ALPHA = 1e-3
REPORT = Path(__file__).resolve().parents[2] / "var" / "reports" / "uniformity.json"
CARD_INDEX = {card: index for index, card in enumerate(FULL_DECK)}


def seated_table(module: Any, options: dict[str, Any]) -> dict[str, Any]:
    """A waiting table with five seated players."""
    state: dict[str, Any] = module.new_table(options, "uniformity", 0.0)
    for number in range(SEATS):
        state, _ = module.sit(state, f"player{number}", 100, 0.0)
    return state


def dealt_positions(state: dict[str, Any]) -> list[str]:
    """The cards of a fresh deal, position by position."""
    deal = state["deal"]
    hands = [deal["hands"][str(seat)] for seat in deal["players"]]
    cards = [card for hand in hands for card in hand]
    if "wild_card" in deal:
        cards += [deal["wild_card"], deal["discard_pile"][0]]
    return cards


def deal_counts(module: Any, options: dict[str, Any], deals: int) -> np.ndarray[Any, Any]:
    """Counts[card, position] over `deals` deals; asserts no card is dealt twice in one."""
    table = seated_table(module, options)
    counts: np.ndarray[Any, Any] | None = None
    for _ in range(deals):
        started, _events = module.start(table, 1, 0.0, shuffled_deck())
        cards = dealt_positions(started)
        assert len(set(cards)) == len(cards), cards
        if counts is None:
            counts = np.zeros((len(FULL_DECK), len(cards)), dtype=np.int64)
        counts[[CARD_INDEX[card] for card in cards], np.arange(len(cards))] += 1
    assert counts is not None
    return counts


def chi_square_tests(counts: np.ndarray[Any, Any], deals: int) -> dict[str, Any]:
    """Per-position and per-card chi-square tests of a card x position count table."""
    cards, positions = counts.shape
    by_position = [stats.chisquare(counts[:, p]) for p in range(positions)]
    # A card lands in one position per deal or in none: the last cell is "not dealt".
    share = np.full(positions + 1, deals / cards)
    share[-1] = deals - positions * deals / cards
    by_card = [
        stats.chisquare(np.append(counts[c], deals - counts[c].sum()), share) for c in range(cards)
    ]
    results = by_position + by_card
    return {
        "positions": positions,
        "tests": len(results),
        "max_statistic_per_position": max(float(r.statistic) for r in by_position),
        "max_statistic_per_card": max(float(r.statistic) for r in by_card),
        "global_statistic": float(sum(r.statistic for r in by_position)),
        "global_degrees_of_freedom": positions * (cards - 1),
        "min_p": min(float(r.pvalue) for r in results),
        "p_values": [float(r.pvalue) for r in results],
    }


def test_production_deals_are_uniform_and_never_repeat_a_card() -> None:
    started = time.perf_counter()
    games = {
        "guts3": chi_square_tests(deal_counts(guts, {"cards": 3}, DEALS_PER_GAME), DEALS_PER_GAME),
        "paiute": chi_square_tests(deal_counts(paiute, {}, DEALS_PER_GAME), DEALS_PER_GAME),
    }
    tests = sum(game["tests"] for game in games.values())
    threshold = FAMILY_ALPHA / tests
    for game in games.values():
        game["global_p"] = float(
            stats.chi2.sf(game["global_statistic"], game["global_degrees_of_freedom"])
        )
    report = {
        "deals_per_game": DEALS_PER_GAME,
        "seats": SEATS,
        "deck_source": "api.service.decks.shuffled_deck",
        "family_alpha": FAMILY_ALPHA,
        "bonferroni_threshold": threshold,
        "seconds": round(time.perf_counter() - started, 2),
        "games": {
            name: {key: value for key, value in game.items() if key != "p_values"}
            for name, game in games.items()
        },
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n")
    for name, game in games.items():
        assert game["min_p"] > threshold, (name, game["min_p"], threshold)
