"""The terminal client's parts that need no gateway: where it keeps the key and with
which permissions, the locale's language, what it notes of a deal, which moves it offers
and which call it makes. tests/integration/test_cli.py plays whole deals with it."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from cardroom_client.cli.config import Account, Config, locale_language, write_private
from cardroom_client.cli.display import card_label, card_rank, game_words
from cardroom_client.cli.seen import KEPT_DEALS, SeenDeals
from cardroom_client.cli.turns import Call, Move, call_leaving_out, moves_now, suggested_call
from cardroom_client.models import Event, RankedHand, Table


def test_the_key_is_written_owner_only_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "cardroom" / "config.json"
    config = Config(path)
    config.remember("http://gateway.test:8000/", Account("crk_secret", "p_1", "ann"))
    config.gateway = "http://gateway.test:8000/"
    config.save()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    again = Config(path)
    assert again.gateway == "http://gateway.test:8000"
    assert again.account("http://gateway.test:8000") == Account("crk_secret", "p_1", "ann")
    assert again.account("http://other.test") is None
    assert again.forget("http://gateway.test:8000")
    assert not again.forget("http://gateway.test:8000")
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind


def test_a_file_others_may_read_is_narrowed_when_read(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"gateway": "http://gateway.test"}')
    path.chmod(0o644)
    assert Config(path).gateway == "http://gateway.test"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_failed_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.json"
    write_private(path, "old")

    def no_room(source: object, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("cardroom_client.cli.config.os.replace", no_room)
    with pytest.raises(OSError, match="No space"):
        write_private(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]


@pytest.mark.parametrize(
    ("environment", "language"),
    [
        ({"LANG": "hu_HU.UTF-8"}, "hu-HU"),
        ({"LANG": "en_US.UTF-8", "LC_ALL": "et_EE.UTF-8"}, "et-EE"),
        ({"LANGUAGE": "sw:en", "LANG": "en_US.UTF-8"}, "sw"),
        ({"LC_MESSAGES": "ps_AF@latin"}, "ps-AF"),
        ({"LANG": "C.UTF-8"}, None),
        ({"LC_ALL": "POSIX", "LANG": "hu_HU.UTF-8"}, None),
        ({}, None),
    ],
)
def test_the_locale_names_the_language(environment: dict[str, str], language: str | None) -> None:
    assert locale_language(environment) == language


def event(number: int, kind: str, hand: int, **data: Any) -> Event:
    """An event of deal `hand`."""
    return Event(number, kind, data, 0.0, hand)


def test_a_deal_seen_is_kept_from_its_start_to_its_end(tmp_path: Path) -> None:
    path = tmp_path / "seen.jsonl"
    seen = SeenDeals("http://gateway.test/", path)
    seen.note("t1", event(1, "deal_started", 1, commitment="c1"))
    seen.note("t1", event(2, "cards_dealt", 1, seat=2, cards=["Ah", "Kd", "Qc"]))
    assert seen.find("t1", 1) is None  # written when the deal ends
    seen.note("t1", event(3, "deal_ended", 1, outcome="won"))
    # a deal whose start this terminal did not see is not noted
    seen.note("t1", event(4, "cards_dealt", 2, seat=2, cards=["2h", "3h", "4h"]))
    seen.note("t1", event(5, "deal_ended", 2, outcome="won"))
    found = SeenDeals("http://gateway.test", path).find("t1", 1)
    assert found is not None
    assert (found.commitment, found.seat, found.dealt) == ("c1", 2, ("Ah", "Kd", "Qc"))
    assert SeenDeals("http://gateway.test", path).find("t1", 2) is None
    assert SeenDeals("http://other.test", path).find("t1", 1) is None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_only_the_latest_deals_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "seen.jsonl"
    path.write_text(
        "".join(
            f'{{"gateway": "g", "table": "t", "hand": {n}, "commitment": "c{n}"}}\n'
            for n in range(KEPT_DEALS)
        )
    )
    seen = SeenDeals("g", path)
    seen.note("t", event(1, "deal_started", KEPT_DEALS, commitment="last"))
    seen.note("t", event(2, "deal_ended", KEPT_DEALS))
    assert len(path.read_text().splitlines()) == KEPT_DEALS
    assert seen.find("t", 0) is None
    assert seen.find("t", 1) is not None
    found = seen.find("t", KEPT_DEALS)
    assert found is not None
    assert found.commitment == "last"


def table(game: str, phase: str, pending: dict[str, Any] | None, **seat: Any) -> Table:
    """A table with seats 1 and 2 as the gateway would show it."""
    seats = {
        str(n): {"seat": n, "name": f"p{n}", "stack": 100, "status": "playing", **seat}
        for n in (1, 2)
    }
    body = {"id": "t", "game": game, "version": 3, "phase": phase, "pot": 2, "seats": seats}
    return Table.from_json({**body, "pending": pending, "options": {"turn_seconds": 30}})


def test_a_key_is_offered_only_for_a_move_the_table_waits_for_from_the_seat() -> None:
    declaring = table("guts", "declaring", {"action": "declare", "seats": [2], "deadline": 1})
    assert moves_now(declaring, 2) == {Move.DECLARE}
    assert moves_now(declaring, 1) == frozenset()
    assert moves_now(declaring, None) == frozenset()  # a spectator
    assert moves_now(declaring, 3) == frozenset()  # a seat left
    drawing = table("paiute", "playing", {"action": "draw", "seats": [1], "deadline": 1})
    assert moves_now(drawing, 1) == {Move.DRAW}
    waiting = table("guts", "waiting", None)
    assert moves_now(waiting, 1) == {Move.START}
    away = table("guts", "waiting", None, away=True)
    assert moves_now(away, 1) == {Move.START, Move.BACK}
    leaving = table("guts", "waiting", None, leaving=True)
    assert moves_now(leaving, 1) == frozenset()


def test_a_call_shows_every_card_but_the_one_left_out() -> None:
    cards = ("9h", "9d", "9s", "9c", "4h", "2c")
    assert call_leaving_out(cards, 5) == Call(cards[:5], "2c")
    assert call_leaving_out(cards, 0) == Call(cards[1:], "9h")
    assert call_leaving_out(cards, None) == Call(cards, None)
    five = RankedHand(" ".join(cards), 900, "five_of_a_kind", "Five nines", "2c")
    assert suggested_call(cards, five) == Call(cards[:5], "2c")
    six = RankedHand(" ".join(cards), 500, "four_and_two", "Four nines and a pair", None)
    assert suggested_call(cards, six) == Call(cards, None)
    nothing = RankedHand(" ".join(cards), 0, "none", "No combination", None)
    assert suggested_call(cards, nothing) is None


def test_cards_and_tables_in_words() -> None:
    assert [card_label(c) for c in ("Th", "As", "2c", "qd")] == ["10♥", "A♠", "2♣", "Q♦"]
    assert [card_rank(c) for c in ("Th", "As", "2c", "Jd")] == [10, 14, 2, 11]
    defaults = {"cards": 3, "ante": 1, "declare": "simultaneous", "ghost": False, "cap": None}
    assert game_words("guts", defaults) == "guts, 3 cards, ante 1"
    chosen = {**defaults, "declare": "sequential", "ghost": True, "cap": 50}
    assert game_words("guts", chosen) == "guts, 3 cards, ante 1, declare sequential, ghost, cap 50"
    assert game_words("paiute", {"ante": 2, "max_reshuffles": 0}) == (
        "paiute, ante 2, max reshuffles 0"
    )
