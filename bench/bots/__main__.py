"""`make bench-bots`: each game's strategies at one table, 10,000 deals in process.

Seat 1 plays the strong strategy, seat 2 the easy one, seat 3 the random legal player;
the dealer moves round, so each sits in every position. Every game starts from fresh
stacks and its result is what each seat won or lost over it; the figures are chips won
per 100 deals (ante 1), each with its 95% confidence interval over the games (a ratio
estimator: deals within a game share a pot, games are independent), and the CPU a
decision costs each strategy, its median against the random player's measured in the
same run. `--deals N` (default 10,000), `--seed S`, `--games guts,paiute`.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

from api.games.strategies import STRATEGIES
from bench.bots.table import Ledger, play
from bench.measure import RESULTS

Z95 = 1.959964
ORDER = ("strong", "easy", "random")
# deep stacks and buy-in limits that take them; Guts capped per deal at 50 antes, so
# that a few runaway Monte Carlo pots do not decide the whole measurement
OPTIONS: dict[str, dict[str, object]] = {
    "guts": {"cards": 3, "cap": 50, "min_buy_in": 1, "max_buy_in": 1_000_000_000},
    "paiute": {"min_buy_in": 1, "max_buy_in": 1_000_000_000},
}


def per_100_deals(games: list[tuple[int, int]]) -> tuple[float, float]:
    """Chips won per 100 deals over games of (deals, net), and its 95% half-width."""
    deals = sum(d for d, _ in games)
    rate = sum(x for _, x in games) / deals
    n = len(games)
    residuals = sum((x - rate * d) ** 2 for d, x in games)
    spread = math.sqrt(n / max(n - 1, 1) * residuals) / deals
    return 100 * rate, 100 * Z95 * spread


def summary(game: str, ledger: Ledger, seconds: float) -> dict[str, object]:
    """A game's figures: each strategy's winnings, each pair's difference, the CPU."""
    seats = {name: i for i, name in enumerate(ORDER)}
    won = {
        name: per_100_deals([(d, net[i]) for d, net in ledger.games]) for name, i in seats.items()
    }
    pairs = {
        f"{a} - {b}": per_100_deals([(d, net[seats[a]] - net[seats[b]]) for d, net in ledger.games])
        for a, b in (("strong", "easy"), ("strong", "random"), ("easy", "random"))
    }
    baseline = statistics.median(ledger.cpu["random"])
    cpu = {
        name: {
            "decisions": len(ledger.cpu[name]),
            "median_us": statistics.median(ledger.cpu[name]) / 1000,
            "ratio_to_random": statistics.median(ledger.cpu[name]) / baseline,
        }
        for name in ORDER
    }
    return {
        "game": game,
        "options": OPTIONS[game],
        "deals": sum(d for d, _ in ledger.games),
        "games": len(ledger.games),
        "seconds": seconds,
        "won_per_100_deals": {k: {"mean": m, "ci95": h} for k, (m, h) in won.items()},
        "differences_per_100_deals": {k: {"mean": m, "ci95": h} for k, (m, h) in pairs.items()},
        "cpu_per_decision": cpu,
    }


def show(result: dict[str, object]) -> None:
    """Print a game's figures as the tables of docs/bots.md."""
    print(
        f"\n{result['game']}: {result['deals']} deals, {result['games']} games,"
        f" {result['seconds']:.0f} s"
    )
    print("| | chips won per 100 deals | 95% CI |\n|---|---:|---:|")
    for table in ("won_per_100_deals", "differences_per_100_deals"):
        rows = result[table]
        assert isinstance(rows, dict)
        for name, row in rows.items():
            low, high = row["mean"] - row["ci95"], row["mean"] + row["ci95"]
            print(f"| {name} | {row['mean']:+.1f} | {low:+.1f} .. {high:+.1f} |")
    print(
        "| strategy | decisions | CPU a decision (median) | against random |\n|---|---:|---:|---:|"
    )
    cpu = result["cpu_per_decision"]
    assert isinstance(cpu, dict)
    for name, row in cpu.items():
        print(
            f"| {name} | {row['decisions']} | {row['median_us']:.0f} µs"
            f" | {row['ratio_to_random']:.1f}x |"
        )


def main() -> None:
    """Play each game's table and print and keep the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--games", default="guts,paiute")
    args = parser.parse_args()
    results = []
    for game in args.games.split(","):
        strategies = [STRATEGIES[game][name] for name in ORDER]
        started = time.monotonic()
        ledger = play(game, strategies, OPTIONS[game], args.deals, args.seed)
        result = summary(game, ledger, time.monotonic() - started)
        show(result)
        results.append(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bots.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nkept in {RESULTS / 'bots.json'}")


if __name__ == "__main__":
    main()
