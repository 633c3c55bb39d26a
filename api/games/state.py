"""What a table is, typed: its options, seats, deal and the views of it, for each game.

A table's state is JSON kept by the store, so each part is a TypedDict: the dict the
store decodes is the typed state, with nothing to convert on the hot path. Each game
has its family (`GutsTable` with its `GutsOptions` and `GutsDeal`, `PaiuteTable` with
its own); `TableState` is either, told apart by ``game``. The functions both games
share take a `TableState`, a game's own functions its own table. Every key is described
in docs/rules.md; the views are what docs/api.md calls a table.

The keys marked "kept by the service" are not the rules': the table service keeps them
beside the rules' keys (the table's name, who holds which seat, its idle clock), and a
move carries them over unchanged, since it copies the whole state.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, final

Choice = Literal["in", "out"]
SeatStatus = Literal["waiting", "playing"]
Source = Literal["stock", "discard"]


# --------------------------------------------------------------------------- options


class CommonOptions(TypedDict):
    """The options both games have (docs/rules.md, "Options")."""

    ante: int
    turn_seconds: int
    rebuy: bool
    deal_pause_seconds: float
    min_players: int
    max_players: int
    min_buy_in: int
    max_buy_in: int
    away_after: NotRequired[int]  # a table stored before away existed has none


class GutsOptions(CommonOptions):
    """A Guts table's options."""

    cards: int
    ante_mode: str
    declare: str
    all_out_ante: bool
    wimp: bool
    losers_pay: str
    ghost: bool
    cap: int | None
    cap_mode: str


class PaiuteOptions(CommonOptions):
    """A Paiute table's options."""

    max_reshuffles: int


# --------------------------------------------------------------------------- seats


class Seat(TypedDict):
    """An occupied seat: its player, chips and place in the game."""

    name: str
    stack: int
    status: SeatStatus  # "waiting" plays from the next game
    leaving: bool
    skip_ante: bool
    player_id: int  # the table's own number for whoever sits here, never reused
    bought_in: int
    sat_at: float
    away: NotRequired[bool]  # skipped, not dealt in, until a move of its own
    missed: NotRequired[int]  # decisions missed in a row (deadlines that took them)
    computer: NotRequired[str]  # a computer player's strategy (kept by the service)


# --------------------------------------------------------------------------- deals


class Flow(TypedDict):
    """Chips that moved in a deal, for its hand record."""

    kind: str
    seat: int | None
    amount: int
    source: str
    target: str


class Rank(TypedDict):
    """A hand's rank as the evaluator gave it: higher strength wins, equal ties."""

    strength: int
    category: str
    description: str


class Deal(TypedDict):
    """What every deal records, in both games."""

    number: int
    game_number: int
    dealer: int
    commitment: str
    deck: list[str]  # secret until the deal is over (the hand history opens it)
    salt: str
    players: list[int]  # in playing order, from the dealer's left to the dealer
    player_ids: dict[str, int]  # by str(seat): who was dealt in
    names: dict[str, str]
    hands: dict[str, list[str]]  # by str(seat), and "ghost" in Guts
    turn: int | None
    ranking_needed: dict[str, list[str]] | None  # the hands a pending showdown ranks
    showdown_reason: str | None
    ranks: dict[str, Rank]
    shown: dict[str, list[str]]
    flow: list[Flow]
    pot_at_start: int
    outcome: str | None
    ended: bool


@final  # so that a key only one game's deal has tells the two apart
class GutsDeal(Deal):
    """A Guts deal: hands, declarations, and the ghost's hand if it plays."""

    cards_per_hand: int
    ghost: bool
    declarations: dict[str, Choice]
    revealed: bool
    timeouts: list[int]  # the seats whose deadline declared them out


class Drawn(TypedDict):
    """The card a Paiute seat drew this turn, and from where."""

    card: str
    source: Source


class Claim(TypedDict):
    """A Paiute call or laying down: the cards shown, the discard and their rank's words."""

    cards: list[str]
    discard: str | None
    category: str
    description: str


class TimedOut(TypedDict):
    """A Paiute turn the timer (or a departure) played for its seat."""

    seat: int
    reason: str


@final  # so that a key only one game's deal has tells the two apart
class PaiuteDeal(Deal):
    """A Paiute deal: the wild card, the stock and the discard pile, calls and turns."""

    wild_card: str
    wild_rank: int
    discard_pile: list[str]  # top last
    stock: list[str]  # drawn from the front
    reshuffles: int
    reshuffle_orders: NotRequired[list[list[str]]]  # each new stock, for the history only
    drawn: Drawn | None
    caller: int | None
    last_turns: list[int]  # the seats still to play a last turn after the current one
    claims: dict[str, Claim]
    timeouts: list[TimedOut]


# --------------------------------------------------------------------------- tables


class SessionClock(TypedDict):
    """A signed-in player's session as their table keeps it: when it began, when its time
    limit is up (None: no limit), the seconds between reality checks and the next one."""

    started: float
    until: float | None
    every: float | None
    next_check: float | None


class Account(TypedDict):
    """A signed-in player at a table: every player id it sat under, and when it left."""

    players: list[int]
    left: int | None  # the deal it left at, None while seated
    session: NotRequired[SessionClock]


class CashedOut(TypedDict):
    """Who left a closing table with how much."""

    seat: int
    name: str
    amount: int


class Closing(TypedDict):
    """An idle table being closed: since when, and its cash-outs so far."""

    since: float
    cashed_out: list[CashedOut]


class CloseRequest(TypedDict):
    """A table its creator or an operator closed: when, and by whom ("creator" or
    "operator"); every seat is cashed out after the current deal, then it closes."""

    at: float
    by: str


class HeldTurn(TypedDict):
    """A turn held open while its call could not be ranked: whose, and the version before."""

    seat: int
    version: int


class Table(TypedDict):
    """What every table holds, in both games."""

    table_id: str
    version: int  # bumped by the store at each commit
    created_at: float
    phase: str
    deadline: float | None
    hand_number: int  # deals so far
    game_number: int
    game_in_progress: bool
    pot: int
    reserve: int  # Guts' capped overflow (always 0 in Paiute)
    dealer: int | None
    seats: dict[str, Seat]  # by str(seat number)
    next_player_id: int
    # every buy-in and every cash-out: chips on the table are always their difference
    chips_bought: int
    chips_cashed: int
    chips_to_house: NotRequired[int]  # a closed table's reserve (none before closing existed)
    # kept by the service
    name: NotRequired[str]
    owner: NotRequired[str]  # the player who created the table
    accounts: NotRequired[dict[str, Account]]
    active_at: NotRequired[float]
    closing: NotRequired[Closing]
    closed_at: NotRequired[float]
    close_requested: NotRequired[CloseRequest]
    turn_held_from: NotRequired[HeldTurn]
    deal_first_event: NotRequired[int]


class GutsTable(Table):
    """A Guts table."""

    game: Literal["guts"]
    options: GutsOptions
    deal: GutsDeal | None
    next_ante: str  # who antes at the next deal: "auto", "all" or "none"


class PaiuteTable(Table):
    """A Paiute table."""

    game: Literal["paiute"]
    options: PaiuteOptions
    deal: PaiuteDeal | None


TableState = GutsTable | PaiuteTable


# --------------------------------------------------------------------------- views


class SeatView(TypedDict):
    """A seat as everyone sees it."""

    seat: int
    name: str
    stack: int
    status: SeatStatus
    leaving: bool
    away: bool
    out_of_chips: bool
    in_hand: bool
    computer: NotRequired[str]  # a computer player, and the strategy it plays


class Pending(TypedDict):
    """What the table waits for: a move of some seats, a ranking, the next deal."""

    action: str
    seats: list[int]
    deadline: float | None


class DealView(TypedDict):
    """What everyone sees of a deal in both games (each game's view adds its own)."""

    number: int
    game_number: int
    dealer: int
    commitment: str
    players: list[int]
    names: dict[str, str]
    pot_at_start: int
    flow: list[Flow]
    outcome: str | None
    ended: bool


class GutsDealView(DealView):
    """A Guts deal as everyone sees it: hands only once shown, choices once revealed."""

    cards_per_hand: int
    ghost: bool
    declared: list[int]
    declarations: dict[str, Choice]
    turn: int | None
    timeouts: list[int]
    showdown: str | None
    shown: dict[str, list[str]]
    ranks: dict[str, Rank]


class DrawnView(TypedDict):
    """A Paiute draw as everyone sees it: the card only if it lay face up."""

    seat: int | None
    source: Source
    card: str | None


class PaiuteDealView(DealView):
    """A Paiute deal as everyone sees it: the piles' sizes, the pile's top, calls."""

    wild_card: str
    wild_rank: int
    reshuffles: int
    turn: int | None
    caller: int | None
    last_turns: list[int]
    claims: dict[str, Claim]
    shown: dict[str, list[str]]
    timeouts: list[TimedOut]
    ranks: dict[str, Rank]
    discard_top: str | None
    discard_size: int
    stock_size: int
    hand_sizes: dict[str, int]
    showdown: str | None
    drawn: DrawnView | None


class GutsYou(TypedDict):
    """A Guts seat's own view: its cards and its declaration in the deal it plays."""

    seat: int
    cards: list[str] | None
    declaration: Choice | None


class PaiuteYou(TypedDict):
    """A Paiute seat's own view: its cards and, on its turn, its draw."""

    seat: int
    cards: list[str] | None
    drawn: Drawn | None


class TableView(TypedDict):
    """A table as one seat (or a spectator) may see it."""

    game: str
    table_id: str
    version: int
    options: GutsOptions | PaiuteOptions
    phase: str
    deadline: float | None
    hand_number: int
    game_number: int
    game_in_progress: bool
    pot: int
    reserve: int
    dealer: int | None
    seats: dict[str, SeatView]
    deal: GutsDealView | PaiuteDealView | None
    pending: Pending | None
    you: GutsYou | PaiuteYou | None
