"""The data of a table's events, typed by kind: `data_of(events, "pot_won")` is a list of
`PotWonData`, so a test reads each field with its type (api.games.events)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypeAlias, overload

from api.games.events import (
    AmountData,
    AwayData,
    CardData,
    CardsData,
    CashedOutData,
    ChoicesData,
    ClaimData,
    DealEndedData,
    DealStartedData,
    DealtData,
    DealVoidData,
    DeclarationData,
    DeclaredData,
    DrewData,
    Event,
    GameEndedData,
    GameStartedData,
    LeftData,
    PaymentData,
    PhaseData,
    PotCarriedData,
    PotSplitData,
    PotWonData,
    ReboughtData,
    ReserveOpenedData,
    ReshuffledData,
    SeatCardData,
    SeatData,
    SeatedData,
    SeatNameData,
    ShowdownData,
    TableClosedData,
    TableCreatedData,
    TimeoutData,
    TurnData,
    TurnHeldData,
    WildCardData,
)

Events: TypeAlias = Iterable[Event]


@overload
def data_of(events: Events, kind: Literal["table_created"]) -> list[TableCreatedData]: ...
@overload
def data_of(events: Events, kind: Literal["table_closed"]) -> list[TableClosedData]: ...
@overload
def data_of(events: Events, kind: Literal["reserve_to_house"]) -> list[AmountData]: ...
@overload
def data_of(events: Events, kind: Literal["seated"]) -> list[SeatedData]: ...
@overload
def data_of(events: Events, kind: Literal["rebought"]) -> list[ReboughtData]: ...
@overload
def data_of(events: Events, kind: Literal["leaving", "back"]) -> list[SeatNameData]: ...
@overload
def data_of(events: Events, kind: Literal["cashed_out"]) -> list[CashedOutData]: ...
@overload
def data_of(events: Events, kind: Literal["left"]) -> list[LeftData]: ...
@overload
def data_of(events: Events, kind: Literal["away"]) -> list[AwayData]: ...
@overload
def data_of(events: Events, kind: Literal["game_started"]) -> list[GameStartedData]: ...
@overload
def data_of(events: Events, kind: Literal["game_ended"]) -> list[GameEndedData]: ...
@overload
def data_of(events: Events, kind: Literal["deal_started"]) -> list[DealStartedData]: ...
@overload
def data_of(events: Events, kind: Literal["deal_ended"]) -> list[DealEndedData]: ...
@overload
def data_of(events: Events, kind: Literal["phase"]) -> list[PhaseData]: ...
@overload
def data_of(events: Events, kind: Literal["turn"]) -> list[TurnData]: ...
@overload
def data_of(events: Events, kind: Literal["ante", "paid", "wimp_paid"]) -> list[PaymentData]: ...
@overload
def data_of(events: Events, kind: Literal["ante_skipped"]) -> list[SeatData]: ...
@overload
def data_of(events: Events, kind: Literal["reserve_opened"]) -> list[ReserveOpenedData]: ...
@overload
def data_of(events: Events, kind: Literal["pot_won"]) -> list[PotWonData]: ...
@overload
def data_of(events: Events, kind: Literal["pot_split"]) -> list[PotSplitData]: ...
@overload
def data_of(events: Events, kind: Literal["pot_carried"]) -> list[PotCarriedData]: ...
@overload
def data_of(events: Events, kind: Literal["cards_dealt"]) -> list[CardsData]: ...
@overload
def data_of(events: Events, kind: Literal["dealt"]) -> list[DealtData]: ...
@overload
def data_of(events: Events, kind: Literal["declared"]) -> list[DeclaredData]: ...
@overload
def data_of(events: Events, kind: Literal["your_declaration"]) -> list[DeclarationData]: ...
@overload
def data_of(events: Events, kind: Literal["timeout"]) -> list[TimeoutData]: ...
@overload
def data_of(events: Events, kind: Literal["declarations_revealed"]) -> list[ChoicesData]: ...
@overload
def data_of(events: Events, kind: Literal["showdown"]) -> list[ShowdownData]: ...
@overload
def data_of(events: Events, kind: Literal["wild_card"]) -> list[WildCardData]: ...
@overload
def data_of(events: Events, kind: Literal["discard_started"]) -> list[CardData]: ...
@overload
def data_of(events: Events, kind: Literal["drew"]) -> list[DrewData]: ...
@overload
def data_of(events: Events, kind: Literal["drew_card", "discarded"]) -> list[SeatCardData]: ...
@overload
def data_of(events: Events, kind: Literal["called", "laid_down"]) -> list[ClaimData]: ...
@overload
def data_of(events: Events, kind: Literal["reshuffled"]) -> list[ReshuffledData]: ...
@overload
def data_of(events: Events, kind: Literal["deal_void"]) -> list[DealVoidData]: ...
@overload
def data_of(events: Events, kind: Literal["turn_held"]) -> list[TurnHeldData]: ...
def data_of(events: Events, kind: str) -> Sequence[Mapping[str, object]]:
    """The data of every event of this kind, in order."""
    return [e["data"] for e in events if e["type"] == kind]
