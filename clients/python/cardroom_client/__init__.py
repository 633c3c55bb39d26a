"""The Python SDK of the cardroom gateway: tables, seats, moves, events, proofs.

    from cardroom_client import Client, GutsOptions

    with Client("http://127.0.0.1:8000") as cardroom:
        ann = cardroom.with_credential(cardroom.create_player("ann").key)
        bo = cardroom.with_credential(cardroom.create_player("bo").key)
        table = ann.create_table(GutsOptions(cards=3, ante=1))
        ann_seat = ann.take_seat(table.id, None, 100)
        bo_seat = bo.take_seat(table.id, None, 100)
        ann_seat.start()
        print(ann_seat.table().you.cards)
        ann_seat.declare("in")
        bo_seat.declare("out")

It needs only httpx: it imports nothing of the gateway (no Flask, Redis or gRPC).
"""

from cardroom_client.client import Client, Seat
from cardroom_client.errors import (
    RULE_CODES,
    BadRequest,
    CardroomError,
    Conflict,
    ConnectionFailed,
    FairnessError,
    Forbidden,
    NotFound,
    PreconditionFailed,
    RateLimited,
    RuleConflict,
    RuleForbidden,
    RuleUnprocessable,
    RuleViolation,
    ServerError,
    Unauthorized,
    Unavailable,
    Unprocessable,
    error_for,
)
from cardroom_client.fairness import (
    FairnessReport,
    dealt_places,
    deck_commitment,
    leaf_digest,
    reshuffle_leaf,
    verify_fairness,
)
from cardroom_client.models import (
    ActionResult,
    Deal,
    DealPage,
    Drawn,
    Event,
    EventPage,
    Exclusion,
    Fairness,
    GutsOptions,
    HandHistory,
    HeldSeat,
    LeaveResult,
    LedgerEntry,
    LedgerPage,
    Limit,
    Limits,
    LobbyFilters,
    LobbyPage,
    MoveAccepted,
    NewKey,
    NewPlayer,
    Odds,
    Opening,
    PaiuteOptions,
    PaiuteValuation,
    Pending,
    Player,
    PlayerKey,
    RankedHand,
    Readiness,
    ReshuffleProof,
    SeatState,
    StreamTicket,
    Table,
    TableClosing,
    TableOptions,
    TableSummary,
    You,
)
from cardroom_client.sse import EventStream
from cardroom_client.transport import VERSION, RetryPolicy, new_idempotency_key

__version__ = VERSION

__all__ = [
    "RULE_CODES",
    "ActionResult",
    "BadRequest",
    "CardroomError",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Deal",
    "DealPage",
    "Drawn",
    "Event",
    "EventPage",
    "EventStream",
    "Exclusion",
    "Fairness",
    "FairnessError",
    "FairnessReport",
    "Forbidden",
    "GutsOptions",
    "HandHistory",
    "HeldSeat",
    "LeaveResult",
    "LedgerEntry",
    "LedgerPage",
    "Limit",
    "Limits",
    "LobbyFilters",
    "LobbyPage",
    "MoveAccepted",
    "NewKey",
    "NewPlayer",
    "NotFound",
    "Odds",
    "Opening",
    "PaiuteOptions",
    "PaiuteValuation",
    "Pending",
    "Player",
    "PlayerKey",
    "PreconditionFailed",
    "RankedHand",
    "RateLimited",
    "Readiness",
    "ReshuffleProof",
    "RetryPolicy",
    "RuleConflict",
    "RuleForbidden",
    "RuleUnprocessable",
    "RuleViolation",
    "Seat",
    "SeatState",
    "ServerError",
    "StreamTicket",
    "Table",
    "TableClosing",
    "TableOptions",
    "TableSummary",
    "Unauthorized",
    "Unavailable",
    "Unprocessable",
    "You",
    "__version__",
    "dealt_places",
    "deck_commitment",
    "error_for",
    "leaf_digest",
    "new_idempotency_key",
    "reshuffle_leaf",
    "verify_fairness",
]
