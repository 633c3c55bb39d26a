"""Deals as PHH-style text: the variant codes, the action notation, valid TOML."""

from __future__ import annotations

import tomllib
from typing import Any

from api.service import phh


def _event(kind: str, **data: Any) -> dict[str, Any]:
    return {"id": 1, "type": kind, "data": data, "at": 1_767_225_600.0, "hand_number": 7}


def test_a_paiute_deal_reads_as_phh_with_its_own_variant_code() -> None:
    events = [
        _event(
            "deal_started", hand_number=7, game_number=1, dealer=3, commitment="c", players=[1, 3]
        ),
        _event("ante", seat=1, owed=1, amount=1, to_pot=1, to_reserve=0, stack=99),
        _event("ante", seat=3, owed=1, amount=1, to_pot=1, to_reserve=0, stack=49),
        _event("cards_dealt", seat=1, cards=["Ah", "Kh", "Qh", "Jh", "9c"]),
        _event("dealt", players=[1, 3], cards=5),
        _event("wild_card", card="7d", rank=7),
        _event("drew", seat=1, source="stock"),
        _event("drew_card", seat=1, card="Th"),
        _event("discarded", seat=1, card="9c"),
        _event("drew", seat=3, source="discard", card="9c"),
        _event("discarded", seat=3, card="2s"),
        _event(
            "called",
            seat=1,
            cards=["Ah", "Kh", "Qh", "Jh", "Th"],
            discard=None,
            category="royal_flush",
            description="royal flush",
        ),
        _event("pot_won", seat=1, amount=2, pot=0),
    ]
    history = {"table_id": "t1", "hand_number": 7, "events": events}
    text = phh.deal_text(history, "paiute", None, 'Friday "night"')
    deal = tomllib.loads(text)
    assert deal["variant"] == "PAI"
    assert deal["antes"] == [1, 1]
    assert deal["seats"] == [1, 3]
    assert deal["winnings"] == [2, 0]
    assert deal["table"] == 'Friday "night"'
    assert deal["actions"] == [
        "d dh p1 AhKhQhJh9c",
        "d dh p2 ??????????",
        "d db 7d # the wild card",
        "d dh p1 Th # from the stock",
        "p1 sd 9c",
        "d dh p2 9c # from the discard pile",
        "p2 sd 2s",
        "p1 sm AhKhQhJhTh # calls: royal flush",
        "# p1 wins 2",
    ]
    assert phh.variant_of("guts", 2) == "GU2"
    assert phh.variant_of("guts", 3) == "GU3"
