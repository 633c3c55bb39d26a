"""What a table service asks of a game: the `Game` protocol, its moves and its records.

A game is played through one object (`gateway.games.registry.GAMES`): the service
checks a move with `Game.verify` and applies it with `Game.act`, which answers with a
`Moved` record (the new state, its events, the hands a showdown waits for). Moves are
frozen dataclasses, one per verb; each game accepts those in its `moves`.

The states are `TableState` dicts (JSON kept by the store; a service may keep keys of
its own beside these), the events `GameEvent` dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NotRequired, Protocol, TypedDict, cast

from gateway.games import table
from gateway.games.cards import canonical_card
from gateway.games.common import Deck, Ranked, RuleError, Transition


class SeatRecord(TypedDict):
    """An occupied seat: its player, chips and place in the game."""

    name: str
    stack: int
    status: str  # "waiting" (plays from the next game) or "playing"
    leaving: bool
    skip_ante: bool
    player_id: int
    bought_in: int
    sat_at: float
    away: NotRequired[bool]  # skipped, not dealt in, until a move of its own (`back`)
    missed: NotRequired[int]  # decisions missed in a row (deadlines that took them)


class TableState(TypedDict):
    """A table's state as the rules keep it (see docs/rules.md for every key)."""

    game: str
    table_id: str
    version: int  # bumped by the store at each commit
    created_at: float
    options: dict[str, Any]
    phase: str
    deadline: float | None
    hand_number: int  # deals so far
    game_number: int
    game_in_progress: bool
    pot: int
    reserve: int  # Guts' capped overflow (always 0 in Paiute)
    dealer: int | None
    seats: dict[str, SeatRecord]  # by str(seat number)
    next_ante: NotRequired[str]  # Guts only: who antes at the next deal
    next_player_id: int
    # every buy-in and every cash-out: chips on the table are always their difference
    chips_bought: int
    chips_cashed: int
    deal: dict[str, Any] | None  # the current or last deal; each game has its own


class GameEvent(TypedDict):
    """Something that happened at a table; `visible_to` None means everyone may see it."""

    type: str
    data: dict[str, Any]
    visible_to: list[int] | None


# --------------------------------------------------------------------------- moves


@dataclass(frozen=True)
class Start:
    """Start a waiting table: a new game and its first deal, dealt from `deck`."""

    name: ClassVar[str] = "start"
    deck: Deck


@dataclass(frozen=True)
class Declare:
    """Guts: declare "in" or "out"."""

    name: ClassVar[str] = "declare"
    choice: str


@dataclass(frozen=True)
class Rebuy:
    """Buy `amount` more chips."""

    name: ClassVar[str] = "rebuy"
    amount: int


@dataclass(frozen=True)
class Draw:
    """Paiute: draw from the "stock" or the "discard" pile."""

    name: ClassVar[str] = "draw"
    source: str


@dataclass(frozen=True)
class Discard:
    """Paiute: discard `card`, ending the turn."""

    name: ClassVar[str] = "discard"
    card: str


@dataclass(frozen=True)
class Call:
    """Paiute: show `cards` (discarding `discard`, None when all six are shown).

    `ranked` is the evaluator's rank of `cards`; None checks everything else, so that a
    service can verify the call before it asks the evaluator.
    """

    name: ClassVar[str] = "call"
    cards: tuple[str, ...]
    discard: str | None
    ranked: Ranked | None = None


@dataclass(frozen=True)
class Back:
    """An away seat is back, to be dealt in from the next deal."""

    name: ClassVar[str] = "back"


Move = Start | Declare | Rebuy | Draw | Discard | Call | Back


def unsupported(game: str, move: Move) -> RuleError:
    """The error for a move that `game` has not."""
    return unsupported_move(game, move.name)


def unsupported_move(game: str, name: str) -> RuleError:
    """The error for a move called `name` that `game` has not."""
    return RuleError(
        "unsupported_action", "A {game} table has no {name!r} move.", "action", game=game, name=name
    )


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class HandRules:
    """How the evaluator ranks a table's hands: its game name and the deal's wild rank."""

    game: str  # "guts2", "guts3" or "paiute"
    wild_rank: int | None = None


@dataclass(frozen=True)
class Moved:
    """What a move did: the new state, its events, and the hands to rank, if any.

    `showdown` holds the hands (keyed by str(seat), and "ghost") that the evaluator must
    rank before `Game.settle` can finish the deal; None when no showdown waits.
    """

    state: TableState
    events: tuple[GameEvent, ...]
    showdown: Mapping[str, list[str]] | None = None


class Game(Protocol):
    """The moves and queries of one game, as a table service drives them."""

    @property
    def name(self) -> str:
        """The game's name, as in a table's ``game``."""
        ...

    @property
    def moves(self) -> frozenset[str]:
        """The names of the moves `act` accepts (`Move.name`)."""
        ...

    def validate_options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The table options with defaults filled in, or RuleError invalid_option."""
        ...

    def new_table(self, options: Mapping[str, Any], table_id: str, now: float) -> TableState:
        """An empty table with these options, waiting for players."""
        ...

    def verify_sit(self, state: TableState, name: str, buy_in: int, now: float) -> None:
        """Raise RuleError unless a new player may sit down with this name and buy-in."""
        ...

    def sit(self, state: TableState, name: str, buy_in: int, now: float) -> Moved:
        """Seat a new player in the lowest free seat."""
        ...

    def verify_leave(self, state: TableState, seat: int, now: float) -> None:
        """Raise RuleError unless this seat may ask to leave."""
        ...

    def leave(self, state: TableState, seat: int, now: float) -> Moved:
        """Cash a seat out now, or when the deal it plays in ends."""
        ...

    def verify(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make `move` now."""
        ...

    def act(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """Apply `move` by `seat` (verified first)."""
        ...

    def hold_turn(
        self, state: TableState, seat: int, call: Call, now: float, seconds: float
    ) -> Moved:
        """Keep the seat's turn open `seconds` more: its call could not be ranked."""
        ...

    def on_deadline(self, state: TableState, now: float, deck: Deck) -> Moved:
        """Apply what a passed deadline decides (nothing before it)."""
        ...

    def hand_rules(self, state: TableState) -> HandRules:
        """How the evaluator ranks this table's hands in its current or last deal."""
        ...

    def ranking_request(self, state: TableState) -> dict[str, list[str]] | None:
        """The hands a pending showdown needs ranked, or None."""
        ...

    def verify_settle(self, state: TableState, ranks: Mapping[str, Ranked], now: float) -> None:
        """Raise RuleError unless a showdown is pending and `ranks` covers its hands."""
        ...

    def settle(self, state: TableState, ranks: Mapping[str, Ranked], now: float) -> Moved:
        """Finish the pending showdown with the evaluator's ranks."""
        ...

    def next_deadline(self, state: TableState) -> float | None:
        """When `on_deadline` next has work to do, or None."""
        ...

    def view(self, state: TableState, seat: int | None = None) -> dict[str, Any]:
        """The table as `seat` (None: a spectator) may see it."""
        ...

    def finished_deal(self, state: TableState) -> dict[str, Any] | None:
        """The record of the last deal, deck and salt included, once it has ended."""
        ...

    def chips_on_table(self, state: TableState) -> int:
        """Every chip at the table: stacks, pot and reserve."""
        ...


@dataclass(frozen=True)
class Rules:
    """A game's own functions over plain (JSON-shaped) dicts, that `TableGame` wraps."""

    validate_options: Callable[[Mapping[str, Any]], dict[str, Any]]
    new_table: Callable[[Mapping[str, Any], str, float], dict[str, Any]]
    leave: Callable[[dict[str, Any], int, float], Transition]
    on_deadline: Callable[[dict[str, Any], float, Deck | None], Transition]
    settle: Callable[[dict[str, Any], Mapping[str, Ranked], float], Transition]
    view: Callable[[dict[str, Any], int | None], dict[str, Any]]
    verify_start: Callable[[dict[str, Any], int, float, Deck], None]
    start: Callable[[dict[str, Any], int, float, Deck], Transition]
    verify_rebuy: Callable[[dict[str, Any], int, int, float], None]
    rebuy: Callable[[dict[str, Any], int, int, float], Transition]


class TableGame:
    """A `Game` over the rules' plain functions: what both games share, and the records.

    A game subclasses it with its own moves (`verify_own`, `act_own`, `hold_turn`) and
    its hands' rules, and gives it the rest of its functions as `Rules`; the rules work
    on JSON-shaped dicts, which the types of this module describe.
    """

    name: ClassVar[str]
    moves: ClassVar[frozenset[str]]

    def __init__(self, rules: Rules) -> None:
        self._rules = rules

    def validate_options(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """The table options with defaults filled in, or RuleError invalid_option."""
        return self._rules.validate_options(raw)

    def new_table(self, options: Mapping[str, Any], table_id: str, now: float) -> TableState:
        """An empty table with these options, waiting for players."""
        return cast(TableState, self._rules.new_table(options, table_id, now))

    def leave(self, state: TableState, seat: int, now: float) -> Moved:
        """Cash a seat out now, or when the deal it plays in ends."""
        return as_moved(self._rules.leave(plain(state), seat, now))

    def on_deadline(self, state: TableState, now: float, deck: Deck) -> Moved:
        """Apply what a passed deadline decides (nothing before it)."""
        return as_moved(self._rules.on_deadline(plain(state), now, deck))

    def settle(self, state: TableState, ranks: Mapping[str, Ranked], now: float) -> Moved:
        """Finish the pending showdown with the evaluator's ranks."""
        return as_moved(self._rules.settle(plain(state), ranks, now))

    def view(self, state: TableState, seat: int | None = None) -> dict[str, Any]:
        """The table as `seat` (None: a spectator) may see it."""
        return self._rules.view(plain(state), seat)

    def verify(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make `move` now (an away seat's move is
        judged as if it were back: the move brings it back)."""
        if isinstance(move, Back):
            table.verify_back(plain(state), seat, now)
            return
        present = cast(TableState, table.as_present(plain(state), seat))
        match move:
            case Start(deck=deck):
                self._rules.verify_start(plain(present), seat, now, deck)
            case Rebuy(amount=amount):
                self._rules.verify_rebuy(plain(present), seat, amount, now)
            case _:
                self.verify_own(present, seat, move, now)

    def act(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """Apply `move` by `seat` (verified first); a move of the seat's own resets its
        missed decisions and brings it back if it was away (`table.returned`)."""
        if isinstance(move, Back):
            return as_moved(table.back(plain(state), seat, now))
        was_away = self._away(state, seat)
        present = cast(TableState, table.as_present(plain(state), seat))
        match move:
            case Start(deck=deck):
                moved = as_moved(self._rules.start(plain(present), seat, now, deck))
            case Rebuy(amount=amount):
                moved = as_moved(self._rules.rebuy(plain(present), seat, amount, now))
            case _:
                moved = self.act_own(present, seat, move, now)
        events = cast(list[dict[str, Any]], list(moved.events))
        after = table.returned(plain(moved.state), seat, now, was_away, events)
        return as_moved((plain(moved.state), after))

    @staticmethod
    def _away(state: TableState, seat: int) -> bool:
        record = state["seats"].get(str(seat)) if table.is_seat_number(seat) else None
        return record is not None and table.is_away(cast(dict[str, Any], record))

    def verify_own(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """`verify` for the moves of the game's deals."""
        raise unsupported(self.name, move)

    def act_own(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """`act` for the moves of the game's deals."""
        raise unsupported(self.name, move)

    def verify_sit(self, state: TableState, name: str, buy_in: int, now: float) -> None:
        """Raise RuleError unless a new player may sit down with this name and buy-in."""
        table.verify_sit(plain(state), name, buy_in, now)

    def sit(self, state: TableState, name: str, buy_in: int, now: float) -> Moved:
        """Seat a new player in the lowest free seat."""
        return as_moved(table.sit(plain(state), name, buy_in, now))

    def verify_leave(self, state: TableState, seat: int, now: float) -> None:
        """Raise RuleError unless this seat may ask to leave."""
        table.verify_leave(plain(state), seat, now)

    def ranking_request(self, state: TableState) -> dict[str, list[str]] | None:
        """The hands a pending showdown needs ranked, or None."""
        return table.ranking_request(plain(state))

    def verify_settle(self, state: TableState, ranks: Mapping[str, Ranked], now: float) -> None:
        """Raise RuleError unless a showdown is pending and `ranks` covers its hands."""
        table.verify_settle(plain(state), ranks, now)

    def next_deadline(self, state: TableState) -> float | None:
        """When `on_deadline` next has work to do, or None."""
        return table.next_deadline(plain(state))

    def finished_deal(self, state: TableState) -> dict[str, Any] | None:
        """The record of the last deal, deck and salt included, once it has ended."""
        return table.finished_deal(plain(state))

    def chips_on_table(self, state: TableState) -> int:
        """Every chip at the table: stacks, pot and reserve."""
        return table.chips_on_table(plain(state))


def plain(state: TableState) -> dict[str, Any]:
    """A table state as the rules' functions take it (the same dict)."""
    return cast(dict[str, Any], state)


def as_moved(transition: Transition) -> Moved:
    """The record of a move from what the rules' function returned."""
    state, events = transition
    return Moved(
        cast(TableState, state),
        tuple(cast(list[GameEvent], events)),
        table.ranking_request(state),
    )


def move_of(action: Mapping[str, Any], deck: Callable[[], Deck]) -> Move:
    """The move an action body names, its cards in canonical form (`deck` deals a start).

    RuleError unsupported_action for a name no game has, invalid_card for card text
    that names no card.
    """
    kind = action["action"]
    if kind == Start.name:
        return Start(deck())
    if kind == Declare.name:
        return Declare(action["choice"])
    if kind == Rebuy.name:
        return Rebuy(action["amount"])
    if kind == Back.name:
        return Back()
    if kind == Draw.name:
        return Draw(action["source"])
    if kind == Discard.name:
        return Discard(canonical_card(action["card"], "card"))
    if kind == Call.name:
        spare = action.get("discard")
        return Call(
            tuple(canonical_card(card, "cards") for card in action["cards"]),
            None if spare is None else canonical_card(spare, "discard"),
        )
    raise RuleError("unsupported_action", "There is no {kind!r} move.", "action", kind=kind)
