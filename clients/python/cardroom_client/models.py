"""Typed results of the gateway's answers, and typed table options for creating tables.

Each result is a frozen dataclass built from the JSON body by its `from_json`; `raw`
keeps the body as received, so members a newer gateway adds are never lost. Cards are
strings such as ``"Ah"`` or ``"Td"``; seat numbers are ints (the JSON's string keys are
turned into ints).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Union

# Results and options keep no per-instance dict where dataclasses can say so: `slots`
# came in Python 3.10, and on 3.9 they are plain frozen dataclasses.
SLOTS: dict[str, bool] = {"slots": True} if sys.version_info >= (3, 10) else {}

Json = dict[str, Any]
GameName = Literal["guts", "paiute"]
EvaluatorGame = Literal["guts2", "guts3", "paiute"]
# how a six-card Paiute hand is valued (`Client.evaluate`)
PaiuteValuation = Literal["six_card_combinations", "best_of_any"]


def _seat_keys(mapping: Mapping[str, Any] | None) -> dict[int, Any]:
    return {int(key): value for key, value in (mapping or {}).items() if key.isdigit()}


def _cards(value: Sequence[str] | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


# ---------------------------------------------------------------------- options


@dataclass(frozen=True, **SLOTS)
class _Options:
    """Options left as None take the gateway's defaults."""

    def to_json(self) -> Json:
        """The request body's options: only those that were set."""
        return {
            item.name: getattr(self, item.name)
            for item in fields(self)
            if getattr(self, item.name) is not None
        }


@dataclass(frozen=True, **SLOTS)
class GutsOptions(_Options):
    """A Guts table's options (README, "Guts table options"); None: the default."""

    cards: Literal[2, 3] | None = None
    ante: int | None = None
    ante_mode: Literal["empty_pot", "every_deal"] | None = None
    declare: Literal["simultaneous", "sequential"] | None = None
    all_out_ante: bool | None = None
    wimp: bool | None = None
    losers_pay: Literal["all", "worst"] | None = None
    ghost: bool | None = None
    cap: int | None = None
    cap_mode: Literal["per_deal", "reserve"] | None = None
    turn_seconds: int | None = None
    deal_pause_seconds: float | None = None
    rebuy: bool | None = None
    min_players: int | None = None
    max_players: int | None = None
    min_buy_in: int | None = None
    max_buy_in: int | None = None
    away_after: int | None = None

    game: Literal["guts"] = field(default="guts", init=False)


@dataclass(frozen=True, **SLOTS)
class PaiuteOptions(_Options):
    """A Paiute table's options (README, "Paiute tables"); None: the default."""

    ante: int | None = None
    turn_seconds: int | None = None
    max_reshuffles: int | None = None
    deal_pause_seconds: float | None = None
    rebuy: bool | None = None
    min_players: int | None = None
    max_players: int | None = None
    min_buy_in: int | None = None
    max_buy_in: int | None = None
    away_after: int | None = None

    game: Literal["paiute"] = field(default="paiute", init=False)


# Union, not `|`: this alias is evaluated at run time, where Python 3.9 has no `|` of types
TableOptions = Union[GutsOptions, PaiuteOptions]


# ---------------------------------------------------------------------- tables


@dataclass(frozen=True, **SLOTS)
class SeatState:
    """A taken seat as everyone sees it."""

    seat: int
    name: str
    stack: int
    status: str
    leaving: bool
    out_of_chips: bool
    in_hand: bool
    # missed the table's `away_after` decisions in a row: not dealt in until it is back
    away: bool = False
    # a computer player's strategy (docs/bots.md); None for a person
    computer: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> SeatState:
        """Build from the JSON member."""
        computer = body.get("computer")
        return cls(
            int(body["seat"]),
            str(body["name"]),
            int(body["stack"]),
            str(body["status"]),
            bool(body.get("leaving", False)),
            bool(body.get("out_of_chips", False)),
            bool(body.get("in_hand", False)),
            bool(body.get("away", False)),
            None if computer is None else str(computer),
        )


@dataclass(frozen=True, **SLOTS)
class Pending:
    """What the table waits for: `action` from `seats` before `deadline` (epoch seconds).

    Guts: ``declare``; Paiute: ``draw`` or ``discard_or_call``; both: ``rank_hands``
    (the evaluator) and ``next_deal`` (the pause between deals).
    """

    action: str
    seats: tuple[int, ...]
    deadline: float | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Pending:
        """Build from the JSON member."""
        return cls(str(body["action"]), tuple(body.get("seats") or ()), body.get("deadline"))


@dataclass(frozen=True, **SLOTS)
class Drawn:
    """The card a Paiute seat just drew and where from (`card` None: hidden from you)."""

    source: str
    card: str | None
    seat: int | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any] | None) -> Drawn | None:
        """Build from the JSON member (None stays None)."""
        if body is None:
            return None
        seat = body.get("seat")
        return cls(str(body["source"]), body.get("card"), None if seat is None else int(seat))


@dataclass(frozen=True, **SLOTS)
class You:
    """Your own seat, present when the table was read with your seat token."""

    seat: int
    cards: tuple[str, ...] | None
    declaration: str | None = None
    drawn: Drawn | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> You:
        """Build from the JSON member."""
        return cls(
            int(body["seat"]),
            _cards(body.get("cards")),
            body.get("declaration"),
            Drawn.from_json(body.get("drawn")),
        )


@dataclass(frozen=True, **SLOTS)
class Deal:
    """The current or last deal as everyone sees it.

    Both games: number, game_number, dealer, commitment (published when the deal
    starts), players (dealing order), names, shown, ranks, timeouts, outcome, ended.
    Guts only: cards_per_hand, ghost, declared, declarations, turn. Paiute only:
    wild_card, wild_rank, discard_top, discard_size, stock_size, hand_sizes, caller,
    last_turns, claims, drawn, reshuffles (and turn). Other games' fields are None.
    """

    number: int
    game_number: int
    dealer: int
    commitment: str
    players: tuple[int, ...]
    names: dict[int, str]
    shown: dict[str, tuple[str, ...]]
    ranks: dict[str, Any]
    timeouts: list[Any]
    pot_at_start: int
    flow: list[Json]
    outcome: str | None
    ended: bool
    showdown: str | None
    turn: int | None
    cards_per_hand: int | None = None
    ghost: bool = False
    declared: tuple[int, ...] = ()
    declarations: dict[int, str] = field(default_factory=dict)
    wild_card: str | None = None
    wild_rank: int | None = None
    discard_top: str | None = None
    discard_size: int | None = None
    stock_size: int | None = None
    hand_sizes: dict[int, int] = field(default_factory=dict)
    caller: int | None = None
    last_turns: tuple[int, ...] = ()
    claims: dict[int, Json] = field(default_factory=dict)
    drawn: Drawn | None = None
    reshuffles: int | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Deal:
        """Build from the JSON member."""
        return cls(
            number=int(body["number"]),
            game_number=int(body["game_number"]),
            dealer=int(body["dealer"]),
            commitment=str(body["commitment"]),
            players=tuple(body.get("players") or ()),
            names={int(k): str(v) for k, v in (body.get("names") or {}).items()},
            shown={str(k): tuple(v) for k, v in (body.get("shown") or {}).items()},
            ranks=dict(body.get("ranks") or {}),
            timeouts=list(body.get("timeouts") or ()),
            pot_at_start=int(body.get("pot_at_start") or 0),
            flow=list(body.get("flow") or ()),
            outcome=body.get("outcome"),
            ended=bool(body.get("ended", False)),
            showdown=body.get("showdown"),
            turn=body.get("turn"),
            cards_per_hand=body.get("cards_per_hand"),
            ghost=bool(body.get("ghost", False)),
            declared=tuple(body.get("declared") or ()),
            declarations={int(k): str(v) for k, v in (body.get("declarations") or {}).items()},
            wild_card=body.get("wild_card"),
            wild_rank=body.get("wild_rank"),
            discard_top=body.get("discard_top"),
            discard_size=body.get("discard_size"),
            stock_size=body.get("stock_size"),
            hand_sizes=_seat_keys(body.get("hand_sizes")),
            caller=body.get("caller"),
            last_turns=tuple(body.get("last_turns") or ()),
            claims=_seat_keys(body.get("claims")),
            drawn=Drawn.from_json(body.get("drawn")),
            reshuffles=body.get("reshuffles"),
        )


@dataclass(frozen=True, **SLOTS)
class Table:
    """A table as the caller may see it; `version` is its ETag (see `etag`)."""

    id: str
    name: str | None
    game: str
    version: int
    options: dict[str, Any]
    phase: str
    deadline: float | None
    hand_number: int
    game_number: int
    game_in_progress: bool
    pot: int
    reserve: int
    dealer: int | None
    seats: dict[int, SeatState]
    deal: Deal | None
    pending: Pending | None
    you: You | None
    raw: Json = field(repr=False, compare=False)

    @property
    def etag(self) -> str:
        """The table's version as the strong entity tag the gateway sends (`"4"`)."""
        return f'"{self.version}"'

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Table:
        """Build from the JSON body."""
        deal, pending, you = body.get("deal"), body.get("pending"), body.get("you")
        return cls(
            id=str(body["id"]),
            name=body.get("name"),
            game=str(body["game"]),
            version=int(body["version"]),
            options=dict(body.get("options") or {}),
            phase=str(body["phase"]),
            deadline=body.get("deadline"),
            hand_number=int(body.get("hand_number") or 0),
            game_number=int(body.get("game_number") or 0),
            game_in_progress=bool(body.get("game_in_progress", False)),
            pot=int(body["pot"]),
            reserve=int(body.get("reserve") or 0),
            dealer=body.get("dealer"),
            seats={int(k): SeatState.from_json(v) for k, v in (body.get("seats") or {}).items()},
            deal=None if deal is None else Deal.from_json(deal),
            pending=None if pending is None else Pending.from_json(pending),
            you=None if you is None else You.from_json(you),
            raw=dict(body),
        )


@dataclass(frozen=True, **SLOTS)
class TableSummary:
    """A table as the lobby lists it."""

    id: str
    name: str | None
    game: str
    options: dict[str, Any]
    seats_taken: int
    seats_free: int
    max_players: int
    phase: str
    created_at: float
    # how many of the seats taken computer players hold
    computer_players: int = 0

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> TableSummary:
        """Build from the JSON member."""
        return cls(
            str(body["id"]),
            body.get("name"),
            str(body["game"]),
            dict(body.get("options") or {}),
            int(body["seats_taken"]),
            int(body["seats_free"]),
            int(body["max_players"]),
            str(body["phase"]),
            float(body["created_at"]),
            int(body.get("computer_players") or 0),
        )


@dataclass(frozen=True, **SLOTS)
class LobbyFilters:
    """What a lobby page is filtered on (None: anything): the game, a Guts table's
    cards, an ante range, the fewest free seats; `mine`, the player's own open tables
    (empty ones too: a player's credential)."""

    game: Literal["guts", "paiute"] | None = None
    cards: Literal[2, 3] | None = None
    ante_min: int | None = None
    ante_max: int | None = None
    free_seats: int | None = None
    mine: bool = False

    def to_params(self) -> dict[str, Any]:
        """The query parameters of these filters."""
        params: dict[str, Any] = {
            name: value
            for name, value in (
                ("game", self.game),
                ("cards", self.cards),
                ("ante_min", self.ante_min),
                ("ante_max", self.ante_max),
                ("free_seats", self.free_seats),
            )
            if value is not None
        }
        if self.mine:
            params["mine"] = "true"
        return params


@dataclass(frozen=True, **SLOTS)
class LobbyPage:
    """One page of the lobby; `next` is None on the last page."""

    tables: list[TableSummary]
    next: str | None

    @property
    def next_cursor(self) -> str | None:
        """The former name of `next` (deprecated)."""
        return self.next


@dataclass(frozen=True, **SLOTS)
class LeaveResult:
    """A leave: gone now (`left`, with `cashed_out` chips) or when the deal is settled;
    the table after it (as everyone sees it once the seat is gone) and its events."""

    seat: int
    left: bool
    leaving: bool
    cashed_out: int | None
    table: Table | None = field(default=None, repr=False, compare=False)
    events: list[Event] = field(default_factory=list, repr=False, compare=False)


@dataclass(frozen=True, **SLOTS)
class TableClosing:
    """A table's close: closed now, or once the current deal is settled (`closed`
    False); the table after it and its events (cash-outs, leaves, `table_closed`)."""

    closed: bool
    table: Table | None = field(default=None, repr=False, compare=False)
    events: list[Event] = field(default_factory=list, repr=False, compare=False)


# ---------------------------------------------------------------------- events


@dataclass(frozen=True, **SLOTS)
class Event:
    """One entry of a table's event log; `private` ones reach only their seat.

    `line` is the event as a sentence in the language the client asked for with
    `Accept-Language` (None without the header, or when the event has nothing to say).
    """

    id: int
    type: str
    data: dict[str, Any]
    at: float
    hand_number: int
    private: bool = False
    line: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Event:
        """Build from the JSON member."""
        line = body.get("line")
        return cls(
            int(body["id"]),
            str(body["type"]),
            dict(body.get("data") or {}),
            float(body.get("at") or 0.0),
            int(body.get("hand_number") or 0),
            bool(body.get("private", False)),
            None if line is None else str(line),
        )


@dataclass(frozen=True, **SLOTS)
class EventPage:
    """Events after a cursor; pass `next` as the next `after`."""

    events: list[Event]
    next: int


@dataclass(frozen=True, **SLOTS)
class ActionResult:
    """A move's answer: the table after it and the events it produced (as you see them)."""

    table: Table
    events: list[Event]
    replayed: bool = False


@dataclass(frozen=True, **SLOTS)
class MoveAccepted:
    """A move made with `Prefer: return=minimal`: no table, only the version it made.

    `etag` ('"5"') can be sent as `if_match` of the next move; the move's events are in
    the table's log (`Client.events`, `Client.stream`).
    """

    version: int
    replayed: bool = False

    @property
    def etag(self) -> str:
        """The table's ETag after the move."""
        return f'"{self.version}"'


# ---------------------------------------------------------------------- hand histories


@dataclass(frozen=True, **SLOTS)
class Opening:
    """One opened place of the deck: its card and the salt that hid it."""

    position: int
    card: str
    salt: str


@dataclass(frozen=True, **SLOTS)
class ReshuffleProof:
    """A Paiute reshuffle's proof: its stock's leaves, those places the reader drew opened."""

    number: int
    commitment: str
    leaves: tuple[str, ...]
    opened: tuple[Opening, ...]


@dataclass(frozen=True, **SLOTS)
class Fairness:
    """The proof: the 52 `leaves` hash to `commitment`; each opening hashes to its leaf.

    `opened` holds the places whose cards the reader saw come off the deck (see
    `cardroom_client.fairness`); Paiute histories also give a proof per reshuffle.
    """

    commitment: str
    leaves: tuple[str, ...]
    opened: tuple[Opening, ...]
    formula: str
    reshuffles: tuple[ReshuffleProof, ...] = ()

    @property
    def cards(self) -> dict[int, str]:
        """The opened cards by their place in the deck (0 is the top)."""
        return {item.position: item.card for item in self.opened}


def _openings(items: Any) -> tuple[Opening, ...]:
    return tuple(
        Opening(int(item["position"]), str(item["card"]), str(item["salt"])) for item in items or ()
    )


@dataclass(frozen=True, **SLOTS)
class HandHistory:
    """A finished deal: its events (as the caller may see them), showdown, chips, proof."""

    table_id: str
    hand_number: int
    game_number: int
    dealer: int | None
    outcome: str | None
    events: list[Event]
    showdown: Json | None
    pot_flow: list[Json]
    fairness: Fairness
    wild_card: str | None
    raw: Json = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> HandHistory:
        """Build from the JSON body."""
        proof = body["fairness"]
        return cls(
            table_id=str(body["table_id"]),
            hand_number=int(body["hand_number"]),
            game_number=int(body["game_number"]),
            dealer=body.get("dealer"),
            outcome=body.get("outcome"),
            events=[Event.from_json(item) for item in body.get("events") or ()],
            showdown=body.get("showdown"),
            pot_flow=list(body.get("pot_flow") or ()),
            fairness=Fairness(
                str(proof["commitment"]),
                # a proof of another formula (a deal played before this one) has neither:
                # verify_fairness names its formula as unknown
                tuple(str(item) for item in proof.get("leaves") or ()),
                _openings(proof.get("opened")),
                str(proof.get("formula", "")),
                tuple(
                    ReshuffleProof(
                        int(item["number"]),
                        str(item["commitment"]),
                        tuple(str(leaf) for leaf in item["leaves"]),
                        _openings(item["opened"]),
                    )
                    for item in proof.get("reshuffles") or ()
                ),
            ),
            wild_card=body.get("wild_card"),
            raw=dict(body),
        )


# ---------------------------------------------------------------------- evaluator


@dataclass(frozen=True, **SLOTS)
class RankedHand:
    """One hand's rank: higher `strength` wins, equal ties; Paiute's `leftover` card."""

    hand: str
    strength: int
    category: str
    description: str
    leftover: str | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> RankedHand:
        """Build from the JSON member."""
        return cls(
            str(body["hand"]),
            int(body["strength"]),
            str(body["category"]),
            str(body["description"]),
            body.get("leftover"),
        )


@dataclass(frozen=True, **SLOTS)
class Odds:
    """A Guts hand's chances against random hands (`exact` when every deal was counted)."""

    win: float
    tie: float
    lose: float
    exact: bool
    samples: int
    wins: int
    ties: int
    losses: int

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Odds:
        """Build from the JSON body."""
        return cls(
            float(body["win"]),
            float(body["tie"]),
            float(body["lose"]),
            bool(body["exact"]),
            int(body["samples"]),
            int(body["wins"]),
            int(body["ties"]),
            int(body["losses"]),
        )


@dataclass(frozen=True, **SLOTS)
class Readiness:
    """`/readyz`: whether Redis and the evaluator answer ("ok", "unavailable", "unknown")."""

    ready: bool
    redis: str
    evaluator: str
    detail: str | None = None


# ---------------------------------------------------------------------- players


@dataclass(frozen=True, **SLOTS)
class NewPlayer:
    """A player just created, with their first key: `key` is shown only in this answer."""

    id: str
    name: str
    created_at: float
    key: str = field(repr=False)
    key_id: str = ""

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> NewPlayer:
        """Build from the JSON body."""
        return cls(
            str(body["id"]),
            str(body["name"]),
            float(body["created_at"]),
            str(body["key"]),
            str(body["key_id"]),
        )


@dataclass(frozen=True, **SLOTS)
class PlayerKey:
    """One of a player's keys, by its id (the key itself is never shown again)."""

    id: str
    created_at: float


@dataclass(frozen=True, **SLOTS)
class Player:
    """The player a credential belongs to: `key_id` is the key in use (None for a JWT)."""

    id: str
    name: str
    created_at: float
    origin: str
    key_id: str | None
    keys: tuple[PlayerKey, ...]
    # the wallet: chips free to spend, and reserved for buy-ins not posted yet
    balance: int = 0
    pending: int = 0

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Player:
        """Build from the JSON body."""
        key_id = body.get("key_id")
        return cls(
            str(body["id"]),
            str(body["name"]),
            float(body["created_at"]),
            str(body.get("origin") or "open"),
            None if key_id is None else str(key_id),
            tuple(
                PlayerKey(str(item["id"]), float(item["created_at"]))
                for item in body.get("keys") or ()
            ),
            int(body.get("balance") or 0),
            int(body.get("pending") or 0),
        )


@dataclass(frozen=True, **SLOTS)
class LedgerEntry:
    """One transfer in a wallet's ledger, with the wallet's balance after it.

    `debit` and `credit` are accounts: ``"wallet:<player id>"``, ``"table:<table id>"``
    or ``"house"``; `kind` is grant, top_up, deposit, withdrawal, buy_in, rebuy,
    cash_out or reserve_to_house; `cause` says what moved the chips (a table, seat and
    deal; an operator and their reference).
    """

    id: str
    kind: str
    amount: int
    debit: str
    credit: str
    at: float
    balance: int
    cause: Json = field(default_factory=dict)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> LedgerEntry:
        """Build from the JSON body."""
        return cls(
            str(body["id"]),
            str(body["kind"]),
            int(body["amount"]),
            str(body["debit"]),
            str(body["credit"]),
            float(body["at"]),
            int(body["balance"]),
            dict(body.get("cause") or {}),
        )


@dataclass(frozen=True, **SLOTS)
class LedgerPage:
    """A page of a wallet's ledger, newest first; `next` is the cursor of the page after."""

    balance: int
    pending: int
    entries: tuple[LedgerEntry, ...]
    next: str | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> LedgerPage:
        """Build from the JSON body."""
        following = body.get("next")
        return cls(
            int(body["balance"]),
            int(body["pending"]),
            tuple(LedgerEntry.from_json(item) for item in body.get("entries") or ()),
            None if following is None else str(following),
        )


@dataclass(frozen=True, **SLOTS)
class Limit:
    """One of a player's limits: its kind (deposit, buy_in, loss) and window (24h, 7d,
    30d), the amount that applies (None: none), each side's own, an increase or removal
    waiting (`pending`, with `from_at`), and what the rolling window holds."""

    kind: str
    window: str
    amount: int | None
    player: int | None
    operator: int | None
    pending: dict[str, Any] | None
    used: int
    left: int | None
    resets_at: float | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Limit:
        """Build from the JSON body."""
        return cls(
            str(body["kind"]),
            str(body["window"]),
            body.get("amount"),
            body.get("player"),
            body.get("operator"),
            body.get("pending"),
            int(body["used"]),
            body.get("left"),
            body.get("resets_at"),
        )


@dataclass(frozen=True, **SLOTS)
class Limits:
    """A player's limits, how long a raised one waits, and (after a change) whether it
    applied now."""

    limits: tuple[Limit, ...]
    cooling_seconds: float
    applied: bool | None = None

    def of(self, kind: str, window: str) -> Limit:
        """The limit of this kind and window."""
        return next(item for item in self.limits if (item.kind, item.window) == (kind, window))

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Limits:
        """Build from the JSON body."""
        return cls(
            tuple(Limit.from_json(item) for item in body["limits"]),
            float(body["cooling_seconds"]),
            body.get("applied"),
        )


@dataclass(frozen=True, **SLOTS)
class DealPage:
    """A page of a player's deals, newest first: (table id, deal number, when it ended);
    `next` is the cursor of the page after."""

    deals: tuple[tuple[str, int, float], ...]
    next: str | None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> DealPage:
        """Build from the JSON body."""
        deals = tuple(
            (str(item["table_id"]), int(item["hand_number"]), float(item["ended_at"]))
            for item in body["deals"]
        )
        following = body.get("next")
        return cls(deals, None if following is None else str(following))


@dataclass(frozen=True, **SLOTS)
class Exclusion:
    """A time-out or self-exclusion: its kind (time_out, self_exclusion), since when, until
    when (None: for good), and for whom (an operator's list names the player)."""

    kind: str
    since: float
    until: float | None
    player: str | None = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> Exclusion:
        """Build from the JSON body."""
        until = body.get("until")
        return cls(
            str(body["kind"]),
            float(body["since"]),
            None if until is None else float(until),
            body.get("player"),
        )


@dataclass(frozen=True, **SLOTS)
class NewKey:
    """A key just added to a player: `key` is shown only in this answer."""

    key_id: str
    key: str = field(repr=False)
    created_at: float = 0.0

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> NewKey:
        """Build from the JSON body."""
        return cls(str(body["key_id"]), str(body["key"]), float(body["created_at"]))


@dataclass(frozen=True, **SLOTS)
class HeldSeat:
    """A seat the player holds, as `GET /v1/players/me/seats` lists it.

    `table` is the table as that seat sees it (its own cards under `you`);
    `last_event` is the table's last event id, to follow its log from there.
    """

    table_id: str
    table_name: str | None
    game: str
    seat: int
    name: str
    stack: int
    status: str
    phase: str
    version: int
    last_event: int
    table: Table = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> HeldSeat:
        """Build from the JSON member."""
        return cls(
            str(body["table_id"]),
            body.get("table_name"),
            str(body["game"]),
            int(body["seat"]),
            str(body["name"]),
            int(body["stack"]),
            str(body["status"]),
            str(body["phase"]),
            int(body["version"]),
            int(body["last_event"]),
            Table.from_json(body["table"]),
        )


@dataclass(frozen=True, **SLOTS)
class StreamTicket:
    """A single-use ticket that opens one event stream of a table as its holder.

    Valid until `expires_at` (epoch seconds, 30 s after it was issued); `stream` is the
    stream's path, to open with ``?ticket=`` (what a browser's EventSource needs).
    """

    ticket: str = field(repr=False)
    expires_at: float
    stream: str

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> StreamTicket:
        """Build from the JSON body."""
        return cls(str(body["ticket"]), float(body["expires_at"]), str(body["stream"]))
