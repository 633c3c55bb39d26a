"""The events a table tells, typed by kind: each kind's data, and `Event`, any of them.

A move returns the events it made as plain dicts, ``{"type", "data", "visible_to"}``;
each kind is a TypedDict whose ``type`` is its name, so that code which checks
``item["type"] == "seated"`` reads a `Seated` in ``item["data"]``. ``visible_to`` None
means everyone may see the event, a list of seats that only those seats may. The
table's log stamps the events it keeps with ``id``, ``at``, ``hand_number`` and
``audience`` (the players who may see it) in place of ``visible_to``, and clients get
it with ``private`` in place of the audience: the same kinds, one type. docs/api.md
describes every kind and its fields.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from api.games.state import Choice, GutsOptions, PaiuteOptions, Source


class Stamped(TypedDict):
    """What an event carries besides its kind and data: the seats a rule's event is for,
    or the stamps of the table's log."""

    visible_to: NotRequired[list[int] | None]
    id: NotRequired[int]
    at: NotRequired[float]
    hand_number: NotRequired[int]
    audience: NotRequired[list[int] | None]
    private: NotRequired[bool]  # as clients see an event only some may see
    line: NotRequired[str]  # the event in words, for a client that asked for a language


# --------------------------------------------------------------------------- the data


class TableCreatedData(TypedDict):
    """A new table: its options and name."""

    options: GutsOptions | PaiuteOptions
    name: str


class TableClosedData(TypedDict):
    """An idle table closed."""

    reason: str
    idle_seconds: float


class AmountData(TypedDict):
    """A sum of chips (a closed table's reserve, gone to the house)."""

    amount: int


class SeatedData(TypedDict):
    """A player sat down."""

    seat: int
    name: str
    stack: int
    status: str
    computer: NotRequired[str]  # a computer player, and the strategy it plays


class ReboughtData(TypedDict):
    """A seat bought more chips."""

    seat: int
    amount: int
    stack: int


class SeatNameData(TypedDict):
    """A seat and its player's name (leaving, back)."""

    seat: int
    name: str


class CashedOutData(TypedDict):
    """A seat's chips went back to its player."""

    seat: int
    name: str
    amount: int


class LeftData(TypedDict):
    """A seat was freed, and why."""

    seat: int
    name: str
    reason: str


class AwayData(TypedDict):
    """A seat missed `away_after` decisions in a row."""

    seat: int
    name: str
    missed: int


class GameStartedData(TypedDict):
    """A game began with these seats."""

    game_number: int
    players: list[int]


class GameEndedData(TypedDict):
    """A game ended, and why."""

    game_number: int
    reason: str


class DealStartedData(TypedDict):
    """A deal began; Guts also says its cards and whether the ghost plays."""

    hand_number: int
    game_number: int
    dealer: int
    commitment: str
    players: list[int]
    cards: NotRequired[int]
    ghost: NotRequired[bool]


class DealEndedData(TypedDict):
    """A deal ended, with its outcome and the chips left in the middle."""

    hand_number: int
    outcome: str
    pot: int
    reserve: int


class PhaseData(TypedDict):
    """The table entered a phase, with its deadline."""

    phase: str
    deadline: float | None


class TurnData(TypedDict):
    """A seat's turn, until its deadline."""

    seat: int
    deadline: float | None


class PaymentData(TypedDict):
    """Chips a seat paid in: an ante, a loser's payment or the wimp's."""

    seat: int
    owed: int
    amount: int
    to_pot: int
    to_reserve: int
    stack: int


class SeatData(TypedDict):
    """Something about one seat alone (an ante skipped)."""

    seat: int


class ReserveOpenedData(TypedDict):
    """Guts' reserve opened a new game's pot."""

    amount: int
    pot: int
    reserve: int


class Share(TypedDict):
    """A seat's share of a split pot."""

    seat: int
    amount: int


class PotSplitData(TypedDict):
    """The pot shared among seats, and why."""

    shares: list[Share]
    reason: str
    pot: int


class PotWonData(TypedDict):
    """A seat took the pot (or, capped, part of it)."""

    seat: int
    amount: int
    pot: int


class PotCarriedData(TypedDict):
    """The pot stays for the next deal, and why."""

    pot: int
    reason: str


class CardsData(TypedDict):
    """A seat's cards, dealt to it."""

    seat: int
    cards: list[str]


class DealtData(TypedDict):
    """Everyone got their cards; Guts also says whether the ghost did."""

    players: list[int]
    cards: int
    ghost: NotRequired[bool]


class DeclaredData(TypedDict):
    """A seat declared (its choice shown only when declaring goes in turn)."""

    seat: int
    choice: NotRequired[Choice]


class DeclarationData(TypedDict):
    """A seat's own declaration, to that seat alone."""

    seat: int
    choice: Choice


class TimeoutData(TypedDict):
    """A deadline (or a departure) decided for a seat: Guts' result, Paiute's reason."""

    seat: int
    result: NotRequired[Choice]
    reason: NotRequired[str]


class ChoicesData(TypedDict):
    """Every declaration of the deal, revealed."""

    choices: dict[str, Choice]


class ShownHand(TypedDict):
    """A hand shown at a showdown, with its rank."""

    cards: list[str]
    strength: int
    category: str
    description: str


class ShowdownData(TypedDict):
    """The hands shown at a showdown, and why it came."""

    reason: str
    hands: dict[str, ShownHand]


class WildCardData(TypedDict):
    """Paiute's wild card and its rank."""

    card: str
    rank: int


class CardData(TypedDict):
    """One card, face up (the discard pile's first)."""

    card: str


class DrewData(TypedDict):
    """A seat drew; the card is said when it came off the discard pile."""

    seat: int
    source: Source
    card: NotRequired[str]


class SeatCardData(TypedDict):
    """A seat and one card: the one it drew from the stock, or discarded."""

    seat: int
    card: str


class ClaimData(TypedDict):
    """A Paiute call or laying down."""

    seat: int
    cards: list[str]
    discard: str | None
    category: str
    description: str


class ReshuffledData(TypedDict):
    """The discards became the stock again: how many, committed to."""

    number: int
    stock: int
    commitment: str


class DealVoidData(TypedDict):
    """A Paiute deal ended with nobody winning, and why."""

    reason: str
    reshuffles: int


class TurnHeldData(TypedDict):
    """A seat's turn held open, until when, and why."""

    seat: int
    deadline: float
    reason: str


# --------------------------------------------------------------------------- the kinds


class TableCreated(Stamped):
    type: Literal["table_created"]
    data: TableCreatedData


class TableClosed(Stamped):
    type: Literal["table_closed"]
    data: TableClosedData


class ReserveToHouse(Stamped):
    type: Literal["reserve_to_house"]
    data: AmountData


class Seated(Stamped):
    type: Literal["seated"]
    data: SeatedData


class Rebought(Stamped):
    type: Literal["rebought"]
    data: ReboughtData


class Leaving(Stamped):
    type: Literal["leaving"]
    data: SeatNameData


class CashedOut(Stamped):
    type: Literal["cashed_out"]
    data: CashedOutData


class Left(Stamped):
    type: Literal["left"]
    data: LeftData


class Away(Stamped):
    type: Literal["away"]
    data: AwayData


class Back(Stamped):
    type: Literal["back"]
    data: SeatNameData


class GameStarted(Stamped):
    type: Literal["game_started"]
    data: GameStartedData


class GameEnded(Stamped):
    type: Literal["game_ended"]
    data: GameEndedData


class DealStarted(Stamped):
    type: Literal["deal_started"]
    data: DealStartedData


class DealEnded(Stamped):
    type: Literal["deal_ended"]
    data: DealEndedData


class Phase(Stamped):
    type: Literal["phase"]
    data: PhaseData


class Turn(Stamped):
    type: Literal["turn"]
    data: TurnData


class Ante(Stamped):
    type: Literal["ante"]
    data: PaymentData


class AnteSkipped(Stamped):
    type: Literal["ante_skipped"]
    data: SeatData


class ReserveOpened(Stamped):
    type: Literal["reserve_opened"]
    data: ReserveOpenedData


class Paid(Stamped):
    type: Literal["paid", "wimp_paid"]
    data: PaymentData


class PotWon(Stamped):
    type: Literal["pot_won"]
    data: PotWonData


class PotSplit(Stamped):
    type: Literal["pot_split"]
    data: PotSplitData


class PotCarried(Stamped):
    type: Literal["pot_carried"]
    data: PotCarriedData


class CardsDealt(Stamped):
    type: Literal["cards_dealt"]
    data: CardsData


class Dealt(Stamped):
    type: Literal["dealt"]
    data: DealtData


class Declared(Stamped):
    type: Literal["declared"]
    data: DeclaredData


class YourDeclaration(Stamped):
    type: Literal["your_declaration"]
    data: DeclarationData


class Timeout(Stamped):
    type: Literal["timeout"]
    data: TimeoutData


class DeclarationsRevealed(Stamped):
    type: Literal["declarations_revealed"]
    data: ChoicesData


class Showdown(Stamped):
    type: Literal["showdown"]
    data: ShowdownData


class WildCard(Stamped):
    type: Literal["wild_card"]
    data: WildCardData


class DiscardStarted(Stamped):
    type: Literal["discard_started"]
    data: CardData


class Drew(Stamped):
    type: Literal["drew"]
    data: DrewData


class DrewCard(Stamped):
    type: Literal["drew_card"]
    data: SeatCardData


class Discarded(Stamped):
    type: Literal["discarded"]
    data: SeatCardData


class Called(Stamped):
    type: Literal["called", "laid_down"]
    data: ClaimData


class Reshuffled(Stamped):
    type: Literal["reshuffled"]
    data: ReshuffledData


class DealVoid(Stamped):
    type: Literal["deal_void"]
    data: DealVoidData


class TurnHeld(Stamped):
    type: Literal["turn_held"]
    data: TurnHeldData


class RealityCheckData(TypedDict):
    """A reality check for one seat's player: time played this session, and the seat's
    result at this table since it sat down."""

    seat: int
    played_seconds: float
    net: int


class SessionLimitData(TypedDict):
    """A seat's player reached their session's time limit: it leaves after the deal."""

    seat: int
    played_seconds: float


class RealityCheck(Stamped):
    type: Literal["reality_check"]
    data: RealityCheckData


class SessionLimit(Stamped):
    type: Literal["session_limit"]
    data: SessionLimitData


Event = (
    TableCreated
    | TableClosed
    | ReserveToHouse
    | Seated
    | Rebought
    | Leaving
    | CashedOut
    | Left
    | Away
    | Back
    | GameStarted
    | GameEnded
    | DealStarted
    | DealEnded
    | Phase
    | Turn
    | Ante
    | AnteSkipped
    | ReserveOpened
    | Paid
    | PotWon
    | PotSplit
    | PotCarried
    | CardsDealt
    | Dealt
    | Declared
    | YourDeclaration
    | Timeout
    | DeclarationsRevealed
    | Showdown
    | WildCard
    | DiscardStarted
    | Drew
    | DrewCard
    | Discarded
    | Called
    | Reshuffled
    | DealVoid
    | TurnHeld
    | RealityCheck
    | SessionLimit
)
