"""What a table service asks of a game: the `Game` protocol, its moves and its records.

A game is played through one object (`api.games.registry.GAMES`): the service checks a
move with `Game.verify` and applies it with `Game.act`, which answers with a `Moved`
record (the new state, its events, the hands a showdown waits for). Moves are frozen
dataclasses, one per verb; each game accepts those in its `moves`.

The states are `TableState`s (`api.games.state`: JSON kept by the store, typed), the
events `Event`s (`api.games.events`). `TableGame` is what both games share: it narrows
a state to its game's own table and hands it to the game's functions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import ClassVar, Generic, NotRequired, Protocol, TypedDict, get_args

from api.games import table
from api.games.cards import canonical_card
from api.games.common import Deck, Ranked, RuleError
from api.games.events import Event
from api.games.state import GutsDeal, GutsOptions, PaiuteDeal, PaiuteOptions, TableState, TableView
from api.games.table import T, Transition

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


# every move's name, in the order a refusal lists a game's moves
MOVE_ORDER: tuple[str, ...] = tuple(kind.name for kind in get_args(Move))


def unsupported(game: str, moves: Iterable[str], move: Move) -> RuleError:
    """The error for a move that `game` (whose moves are `moves`) has not."""
    return unsupported_move(game, moves, move.name)


def unsupported_move(game: str, moves: Iterable[str], name: str) -> RuleError:
    """The error for a move called `name` that `game` (whose moves are `moves`) has not:
    it names the game's own moves, never another game's."""
    own = set(moves)
    return RuleError(
        "unsupported_action",
        "A {game} table has no {name!r} move; its moves are {moves}.",
        "action",
        game=game,
        name=name,
        moves=", ".join(f'"{kind}"' for kind in MOVE_ORDER if kind in own),
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
    events: list[Event]
    showdown: Mapping[str, list[str]] | None = None


def moved(transition: tuple[TableState, list[Event]]) -> Moved:
    """The record of a move from what a rule returned."""
    state, events = transition
    return Moved(state, events, table.ranking_request(state))


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

    def validate_options(self, raw: Mapping[str, object]) -> GutsOptions | PaiuteOptions:
        """The table options with defaults filled in, or RuleError invalid_option."""
        ...

    def new_table(self, options: Mapping[str, object], table_id: str, now: float) -> TableState:
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

    def on_deadline(
        self, state: TableState, now: float, deck: Deck, in_place: bool = False
    ) -> Moved:
        """Apply what a passed deadline decides (nothing before it); `in_place`: in
        `state` itself, which the caller owns (a state a transition just returned), not
        in a copy."""
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

    def settle(
        self, state: TableState, ranks: Mapping[str, Ranked], now: float, in_place: bool = False
    ) -> Moved:
        """Finish the pending showdown with the evaluator's ranks (`in_place`: as
        `on_deadline`)."""
        ...

    def next_deadline(self, state: TableState) -> float | None:
        """When `on_deadline` next has work to do, or None."""
        ...

    def view(self, state: TableState, seat: int | None = None) -> TableView:
        """The table as `seat` (None: a spectator) may see it."""
        ...

    def finished_deal(self, state: TableState) -> GutsDeal | PaiuteDeal | None:
        """The record of the last deal, deck and salt included, once it has ended."""
        ...

    def chips_on_table(self, state: TableState) -> int:
        """Every chip at the table: stacks, pot and reserve."""
        ...


@dataclass(frozen=True)
class Rules(Generic[T]):
    """A game's own functions over its own table, which `TableGame` calls."""

    validate_options: Callable[[Mapping[str, object]], GutsOptions | PaiuteOptions]
    new_table: Callable[[Mapping[str, object], str, float], T]
    leave: Callable[[T, int, float], Transition[T]]
    verify_start: Callable[[T, int, float, Deck], None]
    start: Callable[[T, int, float, Deck], Transition[T]]
    verify_rebuy: Callable[[T, int, int, float], None]
    rebuy: Callable[[T, int, int, float], Transition[T]]
    on_deadline: Callable[[T, float, Deck, bool], Transition[T]]
    settle: Callable[[T, Mapping[str, Ranked], float, bool], Transition[T]]
    view: Callable[[T, int | None], TableView]


class TableGame(Generic[T]):
    """A `Game` over a game's own functions (its `Rules`): what both games share.

    A game subclasses it with `own` (its table, from either game's state), its deals'
    moves (`verify_own`, `act_own`, `hold_turn`) and `hand_rules`, and gives it the rest
    of its functions as `Rules`.
    """

    name: ClassVar[str]
    moves: ClassVar[frozenset[str]]

    def __init__(self, rules: Rules[T]) -> None:
        self.rules: Rules[T] = rules

    def own(self, state: TableState) -> T:
        """The state as this game's table (TypeError for another game's)."""
        raise NotImplementedError

    def validate_options(self, raw: Mapping[str, object]) -> GutsOptions | PaiuteOptions:
        """The table options with defaults filled in, or RuleError invalid_option."""
        return self.rules.validate_options(raw)

    def new_table(self, options: Mapping[str, object], table_id: str, now: float) -> T:
        """An empty table with these options, waiting for players."""
        return self.rules.new_table(options, table_id, now)

    def verify_own(self, state: T, seat: int, move: Move, now: float) -> None:
        """`verify` for the moves of the game's deals."""
        raise unsupported(self.name, self.moves, move)

    def act_own(self, state: T, seat: int, move: Move, now: float) -> Transition[T]:
        """`act` for the moves of the game's deals."""
        raise unsupported(self.name, self.moves, move)

    def hold_turn(
        self, state: TableState, seat: int, call: Call, now: float, seconds: float
    ) -> Moved:
        """Keep the seat's turn open `seconds` more: its call could not be ranked."""
        raise unsupported(self.name, self.moves, call)

    def hand_rules(self, state: TableState) -> HandRules:
        """How the evaluator ranks this table's hands in its current or last deal."""
        raise NotImplementedError

    def leave(self, state: TableState, seat: int, now: float) -> Moved:
        """Cash a seat out now, or when the deal it plays in ends."""
        return moved(self.rules.leave(self.own(state), seat, now))

    def on_deadline(
        self, state: TableState, now: float, deck: Deck, in_place: bool = False
    ) -> Moved:
        """Apply what a passed deadline decides (nothing before it); `in_place`: in
        `state` itself, which the caller owns, not in a copy."""
        return moved(self.rules.on_deadline(self.own(state), now, deck, in_place))

    def settle(
        self, state: TableState, ranks: Mapping[str, Ranked], now: float, in_place: bool = False
    ) -> Moved:
        """Finish the pending showdown with the evaluator's ranks (`in_place`: as
        `on_deadline`)."""
        return moved(self.rules.settle(self.own(state), ranks, now, in_place))

    def view(self, state: TableState, seat: int | None = None) -> TableView:
        """The table as `seat` (None: a spectator) may see it."""
        return self.rules.view(self.own(state), seat)

    def verify(self, state: TableState, seat: int, move: Move, now: float) -> None:
        """Raise RuleError unless `seat` may make `move` now (an away seat's move is
        judged as if it were back: the move brings it back)."""
        if isinstance(move, Back):
            table.verify_back(state, seat, now)
            return
        present = table.as_present(self.own(state), seat)
        match move:
            case Start(deck=deck):
                self.rules.verify_start(present, seat, now, deck)
            case Rebuy(amount=amount):
                self.rules.verify_rebuy(present, seat, amount, now)
            case _:
                self.verify_own(present, seat, move, now)

    def act(self, state: TableState, seat: int, move: Move, now: float) -> Moved:
        """Apply `move` by `seat` (verified first); a move of the seat's own resets its
        missed decisions and brings it back if it was away (`table.returned`)."""
        mine = self.own(state)
        if isinstance(move, Back):
            return moved(table.back(mine, seat, now))
        record = mine["seats"].get(str(seat)) if table.is_seat_number(seat) else None
        was_away = record is not None and table.is_away(record)
        present = table.as_present(mine, seat)
        match move:
            case Start(deck=deck):
                after, events = self.rules.start(present, seat, now, deck)
            case Rebuy(amount=amount):
                after, events = self.rules.rebuy(present, seat, amount, now)
            case _:
                after, events = self.act_own(present, seat, move, now)
        return moved((after, table.returned(after, seat, now, was_away, events)))

    def verify_sit(self, state: TableState, name: str, buy_in: int, now: float) -> None:
        """Raise RuleError unless a new player may sit down with this name and buy-in."""
        table.verify_sit(state, name, buy_in, now)

    def sit(self, state: TableState, name: str, buy_in: int, now: float) -> Moved:
        """Seat a new player in the lowest free seat."""
        return moved(table.sit(self.own(state), name, buy_in, now))

    def verify_leave(self, state: TableState, seat: int, now: float) -> None:
        """Raise RuleError unless this seat may ask to leave."""
        table.verify_leave(state, seat, now)

    def ranking_request(self, state: TableState) -> dict[str, list[str]] | None:
        """The hands a pending showdown needs ranked, or None."""
        return table.ranking_request(state)

    def verify_settle(self, state: TableState, ranks: Mapping[str, Ranked], now: float) -> None:
        """Raise RuleError unless a showdown is pending and `ranks` covers its hands."""
        table.verify_settle(state, ranks, now)

    def next_deadline(self, state: TableState) -> float | None:
        """When `on_deadline` next has work to do, or None."""
        return table.next_deadline(state)

    def finished_deal(self, state: TableState) -> GutsDeal | PaiuteDeal | None:
        """The record of the last deal, deck and salt included, once it has ended."""
        return table.finished_deal(state)

    def chips_on_table(self, state: TableState) -> int:
        """Every chip at the table: stacks, pot and reserve."""
        return table.chips_on_table(state)


def other_game(game: str, state: TableState) -> TypeError:
    """The error for a state of another game than `game`: the caller's bug, since each
    state reaches its game through `api.games.registry`."""
    return TypeError(f"a {game} game was given a {state['game']} table's state")


class ActionBody(TypedDict):
    """A move as a client sends it (its shape checked by the API's schema first)."""

    action: str
    choice: NotRequired[str]
    amount: NotRequired[int]
    source: NotRequired[str]
    card: NotRequired[str]
    cards: NotRequired[list[str]]
    discard: NotRequired[str | None]


def move_of(action: ActionBody, deck: Callable[[], Deck]) -> Move:
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
