"""A Guts hand's chance to win, tie and lose against random opponent hands (pure numpy)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from evaluator.batch import rank_guts_batch

MAX_OPPONENTS = 9
DEFAULT_SAMPLES = 100_000
MAX_SAMPLES = 1_000_000
_CHUNK = 50_000


@dataclass(frozen=True, slots=True)
class Odds:
    """Counts of wins, ties and losses over the deals considered."""

    wins: int
    ties: int
    losses: int
    exact: bool

    @property
    def samples(self) -> int:
        """How many opponent hands (exact) or deals (Monte Carlo) were counted."""
        return self.wins + self.ties + self.losses


def _remaining(hand: Sequence[int]) -> np.ndarray:
    return np.array([c for c in range(52) if c not in set(hand)], dtype=np.uint8)


def exact_odds(hand: Sequence[int]) -> Odds:
    """Against one opponent: every hand of the remaining cards, counted once."""
    size = len(hand)
    rest = _remaining(hand)
    index = np.array(list(combinations(range(len(rest)), size)), dtype=np.intp)
    opponents = rest[index]
    mine = int(rank_guts_batch(np.array([hand], dtype=np.uint8), size)[0])
    theirs = rank_guts_batch(opponents, size).astype(np.int64)
    wins = int((theirs < mine).sum())
    ties = int((theirs == mine).sum())
    return Odds(wins, ties, len(theirs) - wins - ties, exact=True)


def sampled_odds(hand: Sequence[int], opponents: int, samples: int, seed: int | None) -> Odds:
    """Against several opponents: `samples` random deals from the remaining cards."""
    if not 1 <= opponents <= MAX_OPPONENTS:
        raise ValueError(f"opponents: {opponents} is out of range 1..{MAX_OPPONENTS}")
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples: {samples} is out of range 1..{MAX_SAMPLES}")
    size = len(hand)
    rest = _remaining(hand)
    rng = np.random.default_rng(seed)
    mine = int(rank_guts_batch(np.array([hand], dtype=np.uint8), size)[0])
    wins = ties = 0
    done = 0
    while done < samples:
        count = min(_CHUNK, samples - done)
        # a uniform shuffle of the remaining cards per deal; opponents take the first cards
        shuffled = rng.permuted(np.broadcast_to(rest, (count, len(rest))), axis=1)
        dealt = np.ascontiguousarray(shuffled[:, : opponents * size]).reshape(-1, size)
        best = rank_guts_batch(dealt, size).astype(np.int64).reshape(count, opponents).max(axis=1)
        wins += int((best < mine).sum())
        ties += int((best == mine).sum())
        done += count
    return Odds(wins, ties, samples - wins - ties, exact=False)


def guts_odds(hand: Sequence[int], opponents: int, samples: int, seed: int | None) -> Odds:
    """Exact odds against one opponent, Monte Carlo against two or more."""
    if opponents == 1:
        return exact_odds(hand)
    return sampled_odds(hand, opponents, samples, seed)
