"""One table played to the end in process: the games' own rules, the evaluator's own
ranking code, and a strategy in every seat, each given only its seat's view.

Nothing here is a server: the rules (`api.games`) deal, check and settle every move, as
the gateway's change loop does, and the hands are ranked by the evaluator's pure code
(`evaluator.guts`, `evaluator.paiute`), with the exact odds its `Odds` gives a Guts hand
against one random hand. Each game starts from fresh stacks; a seat's result is what
its stack won or lost over the game.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from api.games.common import FULL_DECK, Deck, Ranked
from api.games.game import Call, Game, Start, move_of
from api.games.registry import GAMES
from api.games.state import TableState
from api.games.strategies import Facts, Strategy
from evaluator.cards import parse_cards
from evaluator.guts import rank_guts2, rank_guts3
from evaluator.odds import exact_odds
from evaluator.paiute import Valuation, rank_paiute

START_STACK = 1_000_000


@dataclass
class Ledger:
    """What a table's seats won, game by game, and the CPU each strategy spent a move."""

    games: list[tuple[int, list[int]]] = field(default_factory=list)  # (deals, net by seat)
    cpu: dict[str, list[int]] = field(default_factory=dict)  # ns a decision, by strategy


def _deck(rng: random.Random) -> Deck:
    cards = list(FULL_DECK)
    rng.shuffle(cards)
    return Deck(tuple(cards), f"{rng.getrandbits(64):016x}")


_ODDS: dict[tuple[str, ...], float] = {}


def _suit_pattern(cards: Sequence[str]) -> tuple[str, ...]:
    """The hand with its suits renamed in order of appearance: hands alike but for a
    permutation of suits have the same odds."""
    names: dict[str, str] = {}
    ordered = sorted(cards, key=lambda c: ("23456789TJQKA".index(c[0]), c[1]))
    return tuple(c[0] + names.setdefault(c[1], "cdhs"[len(names)]) for c in ordered)


def guts_odds(cards: Sequence[str]) -> float:
    """The evaluator's exact odds of a Guts hand against one random hand (wins and half
    the ties), kept for each pattern of ranks and suits."""
    key = _suit_pattern(cards)
    if key not in _ODDS:
        counted = exact_odds(parse_cards(list(key)))
        _ODDS[key] = (counted.wins + counted.ties / 2) / counted.samples
    return _ODDS[key]


def rank_hands(state: TableState, hands: Mapping[str, list[str]]) -> dict[str, Ranked]:
    """The evaluator's ranks of a showdown's hands."""
    ranks: dict[str, Ranked] = {}
    deal = state["deal"]
    assert deal is not None
    for key, cards in hands.items():
        packed = parse_cards(cards)
        if state["game"] == "guts":
            value = (rank_guts2 if len(cards) == 2 else rank_guts3)(packed)
            ranks[key] = Ranked(value.strength, value.category.name.lower(), value.description)
        else:
            ranked = _rank_call(cards, state)
            ranks[key] = ranked
    return ranks


def _rank_call(cards: Sequence[str], state: TableState) -> Ranked:
    assert state["game"] == "paiute"
    deal = state["deal"]
    assert deal is not None
    value = rank_paiute(
        parse_cards(list(cards)), deal["wild_rank"], Valuation.SIX_CARD_COMBINATIONS
    )
    return Ranked(value.strength, value.category.name.lower(), value.description)


@dataclass
class Table:
    """A table of strategies, played in process."""

    game: Game
    strategies: list[Strategy]
    options: Mapping[str, object]
    rng: random.Random
    ledger: Ledger = field(default_factory=Ledger)
    now: float = 0.0

    def seated(self) -> TableState:
        """A table with a seat for each strategy, its first deal dealt."""
        state = self.game.new_table(self.options, "bench", self.now)
        for number, strategy in enumerate(self.strategies, start=1):
            name = f"{number}-{strategy.name}"
            state = self.game.sit(state, name, START_STACK, self.now).state
        return self.game.act(state, 1, Start(_deck(self.rng)), self.now).state

    def play(self, deals: int) -> Ledger:
        """Play until `deals` deals are over, game after game from fresh stacks."""
        state = self.seated()
        game_start = 0
        while True:
            state = self.step(state)
            ended = state["phase"] == "between_deals" and not state["game_in_progress"]
            if ended or state["hand_number"] > deals:
                finished = state["hand_number"] - game_start - (0 if ended else 1)
                if finished:
                    self.ledger.games.append((finished, self.settle_stacks(state)))
                game_start = state["hand_number"] - (0 if ended else 1)
                if state["hand_number"] > deals or game_start >= deals:
                    return self.ledger

    def settle_stacks(self, state: TableState) -> list[int]:
        """Each seat's result in the game just over; its stack back to the start."""
        net = []
        for number in range(1, len(self.strategies) + 1):
            seat = state["seats"][str(number)]
            net.append(seat["stack"] - START_STACK)
            if seat["stack"] < START_STACK:
                state["chips_bought"] += START_STACK - seat["stack"]
            else:
                state["chips_cashed"] += seat["stack"] - START_STACK
            seat["stack"] = START_STACK
        return net

    def step(self, state: TableState) -> TableState:
        """One move, ranking or deadline."""
        pending = self.game.ranking_request(state)
        if pending is not None:
            return self.game.settle(state, rank_hands(state, pending), self.now).state
        for seat in self.waiting_for(state):
            moved = self.decide(state, seat)
            if moved is not None:
                return moved
        deadline = state["deadline"]
        assert deadline is not None, f"a table waiting for nothing: {state['phase']}"
        self.now = max(self.now, deadline)
        return self.game.on_deadline(state, self.now, _deck(self.rng)).state

    def waiting_for(self, state: TableState) -> list[int]:
        """The seats whose move the table waits for."""
        pending = self.game.view(state, None)["pending"]
        return [] if pending is None else list(pending["seats"])

    def decide(self, state: TableState, seat: int) -> TableState | None:
        """The move `seat`'s strategy makes from its own view, applied; None for none."""
        strategy = self.strategies[seat - 1]
        view = self.game.view(state, seat)
        you = view["you"]
        facts = Facts()
        if strategy.wants_odds(view) and you is not None and you["cards"]:
            facts = Facts(odds=guts_odds(you["cards"]))
        started = time.thread_time_ns()
        action = strategy.decide(view, facts, self.rng)
        self.ledger.cpu.setdefault(strategy.name, []).append(time.thread_time_ns() - started)
        if action is None:
            return None
        move = move_of(action, lambda: _deck(self.rng))
        if isinstance(move, Call):
            move = replace(move, ranked=_rank_call(move.cards, state))
        return self.game.act(state, seat, move, self.now).state


def play(
    game: str,
    strategies: list[Strategy],
    options: Mapping[str, object],
    deals: int,
    seed: int,
) -> Ledger:
    """`deals` deals of `game` among `strategies`, seat 1 first, from `seed`."""
    return Table(GAMES[game], strategies, options, random.Random(seed)).play(deals)
