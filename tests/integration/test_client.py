"""The Python SDK (`cardroom_client`) against a real gateway over real HTTP.

The gateway is served by werkzeug's threaded server on a free loopback port, with the
session's Redis and evaluator (or ones a test stops and starts). Each player is created
through the SDK and plays through a client of their own key; the `client` fixture is
anonymous. Network failures are made by a small TCP relay between the SDK and the
gateway that can lose an answer.
test_client_install.py tries the SDK's wheel alone, in fresh virtualenvs of Python 3.9 to 3.13.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from cardroom_client import (
    CardroomError,
    Client,
    Conflict,
    ConnectionFailed,
    Event,
    FairnessError,
    Forbidden,
    GutsOptions,
    LobbyFilters,
    NotFound,
    PaiuteOptions,
    PreconditionFailed,
    RateLimited,
    RetryPolicy,
    RuleConflict,
    RuleViolation,
    Seat,
    Unauthorized,
    Unprocessable,
    deck_commitment,
    error_for,
    leaf_digest,
    verify_fairness,
)
from cardroom_client.models import Fairness, HandHistory, Opening
from deploy.demo import choose_discard
from evaluator.server import EvaluatorServer, create_server
from tests.support.gateway import served
from tests.support.processes import DURABLE, RedisProcess, free_port

STREAM_SECONDS = 1.0


@contextlib.contextmanager
def serve(redis_url: str, evaluator_address: str, **overrides: Any) -> Iterator[str]:
    """A gateway with its clock on a free loopback port; its base URL."""
    yield from served(redis_url, evaluator_address, stream_max_seconds=STREAM_SECONDS, **overrides)


@pytest.fixture
def client(redis_url: str, evaluator_address: str) -> Iterator[Client]:
    """An anonymous SDK client of a fresh gateway on the session's Redis and evaluator."""
    with serve(redis_url, evaluator_address) as url, Client(url, timeout=20) as sdk:
        yield sdk


def sign_up(client: Client, name: str) -> Client:
    """A new player's client (sharing `client`'s connections), sending the player's key."""
    return client.with_credential(client.create_player(name).key)


def sit(client: Client, table_id: str, name: str, buy_in: int = 100) -> Seat:
    """A new player named `name` takes a seat (under the player's own name)."""
    return sign_up(client, name).take_seat(table_id, None, buy_in)


def wait_for(predicate: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    """Poll until `predicate` holds; fail after a generous deadline."""
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def deal_end(client: Client, table_id: str, after: int, hand_number: int) -> tuple[Event, int]:
    """Long-poll until deal `hand_number` ends; that event and the cursor after it."""
    deadline = time.monotonic() + 60
    cursor = after
    while time.monotonic() < deadline:
        page = client.events(table_id, after=cursor, wait=5)
        for item in page.events:
            if item.type == "deal_ended" and item.data["hand_number"] == hand_number:
                return item, page.next
        cursor = page.next
    raise AssertionError(f"deal {hand_number} did not end")


# ---------------------------------------------------------------- whole deals


def test_a_whole_guts_deal_through_the_sdk(client: Client) -> None:
    assert client.health()
    ready = client.readiness()
    assert (ready.ready, ready.redis, ready.evaluator) == (True, "ok", "ok")
    options = GutsOptions(cards=3, ante=2, turn_seconds=120, deal_pause_seconds=60)
    table = sign_up(client, "host").create_table(options, name="sdk guts")
    assert (table.game, table.name, table.phase, table.options["ante"]) == (
        "guts",
        "sdk guts",
        "waiting",
        2,
    )
    seats = [sit(client, table.id, name) for name in ("ann", "bo", "cy")]
    assert [seat.number for seat in seats] == [1, 2, 3]
    assert [seat.name for seat in seats] == ["ann", "bo", "cy"]
    assert seats[0].joined is not None
    assert seats[0].joined.you is not None
    assert "token" not in repr(seats[0])
    assert seats[0].token is not None
    assert seats[0].token not in repr(seats[0])
    before = client.table(table.id)
    assert client.table_if_changed(table.id, before) is None
    started = seats[0].start()
    assert any(item.type == "deal_started" for item in started.events)
    view = client.table(table.id)
    assert view.deal is not None
    assert view.pending is not None
    assert view.pending.action == "declare"
    assert set(view.pending.seats) == {1, 2, 3}
    assert view.you is None
    assert view.seats[1].in_hand
    announced = view.deal.commitment
    changed = client.table_if_changed(table.id, before.etag)
    assert changed is not None
    assert changed.version > before.version
    with pytest.raises(PreconditionFailed) as stale:
        seats[0].declare("in", if_match=before)
    assert stale.value.code == "stale_version"
    dealt: dict[int, tuple[str, ...]] = {}
    for seat in seats:
        mine = seat.table()
        assert mine.you is not None
        assert mine.you.cards is not None
        assert mine.you.seat == seat.number
        dealt[seat.number] = mine.you.cards
    odds = client.odds("guts3", " ".join(dealt[2]), 2, samples=2000, seed=7)
    assert 0 <= odds.win <= 1
    assert odds.samples > 0
    ranked = client.evaluate("guts3", [" ".join(dealt[1]), " ".join(dealt[2])])
    assert [hand.hand for hand in ranked] == [" ".join(dealt[1]), " ".join(dealt[2])]
    cursor = 0
    seats[0].declare("in", if_match=view)
    seats[1].declare("in")
    result = seats[2].declare("out")
    assert result.table.you is not None
    assert result.table.you.declaration == "out"
    ended, cursor = deal_end(client, table.id, cursor, view.hand_number)
    assert ended.data["outcome"] in ("won", "split")
    history = client.hand(table.id, view.hand_number)
    assert history.showdown is not None
    assert set(history.showdown["hands"]) == {"1", "2"}
    shown = {seat: dealt[seat] for seat in (1, 2)}
    report = verify_fairness(history, announced=announced, dealt=shown)
    assert report.commitment == announced
    assert any("announced" in check for check in report.checks)
    assert any("2 hand(s) shown" in check for check in report.checks)
    # the hand that went out is opened to its own seat only
    assert not set(dealt[3]) & set(history.fairness.cards.values())
    with pytest.raises(FairnessError, match="does not open"):
        verify_fairness(history, dealt={3: dealt[3]})
    assert verify_fairness(seats[2].hand(view.hand_number), dealt={3: dealt[3]})
    own = seats[0].hand(view.hand_number)
    assert any(item.type == "cards_dealt" and item.private for item in own.events)
    assert client.verify_hand(table.id, view.hand_number, seat=seats[0], announced=announced)
    after = client.table(table.id)
    assert sum(s.stack for s in after.seats.values()) + after.pot + after.reserve == 300
    for seat in seats:
        gone = seat.leave()
        assert gone.left
        assert gone.cashed_out is not None
    # a left seat's token no longer acts; a read with it is a spectator's
    with pytest.raises(Unauthorized) as left:
        seats[0].rebuy(10)
    assert left.value.code == "invalid_token"
    assert seats[0].table().you is None


def test_the_lobby_iterates_every_page(client: Client) -> None:
    # two hosts: a player has at most 5 open tables
    ann, bo = sign_up(client, "ann"), sign_up(client, "bo")
    made = [(ann if n < 3 else bo).create_table(name=f"lobby {n}").id for n in range(5)]
    made.append(bo.create_table(PaiuteOptions(ante=3), name="lobby paiute").id)
    # tables nobody sits at are their creators' alone
    assert list(client.lobby(filters=LobbyFilters(ante_min=3, ante_max=3))) == []
    assert [t.id for t in bo.lobby(filters=LobbyFilters(mine=True))] == made[:2:-1]
    for count, table_id in enumerate(made):
        for n in range(count % 3 + 1):
            sit(client, table_id, f"p{n}")
    listed = [summary.id for summary in client.lobby(page_size=2)]
    assert sorted(listed) == sorted(made)
    first = client.lobby_page(limit=4)
    assert len(first.tables) == 4
    assert first.next is not None
    assert first.next_cursor == first.next  # the former name, deprecated
    assert [t.seats_taken for t in first.tables] == [3, 3, 2, 2]
    paiute = client.lobby_page(filters=LobbyFilters(game="paiute", ante_min=3)).tables
    assert [(t.game, t.options["ante"]) for t in paiute] == [("paiute", 3)]
    assert [t.id for t in client.lobby(filters=LobbyFilters(game="guts", cards=2))] == []


def test_a_quick_seat_joins_the_fullest_table_or_makes_one(client: Client) -> None:
    host = sign_up(client, "host")
    fuller = host.create_table(GutsOptions(ante=2, max_players=3)).id
    emptier = host.create_table(GutsOptions(ante=2)).id
    for n in range(2):
        sit(client, fuller, f"f{n}")
    sit(client, emptier, "e0")
    ann = sign_up(client, "ann").quick_seat(GutsOptions(ante=2), 40, idempotency_key="qs-1")
    assert (ann.table_id, ann.created) == (fuller, False)
    assert ann.table().you is not None
    again = ann.client.quick_seat(GutsOptions(ante=2), 40, idempotency_key="qs-1")
    assert (again.table_id, again.number, again.token) == (ann.table_id, ann.number, ann.token)
    bo = sign_up(client, "bo").quick_seat(GutsOptions(ante=2), 40)
    assert (bo.table_id, bo.created) == (emptier, False)
    cy = sign_up(client, "cy").quick_seat(PaiuteOptions(ante=2), 40)
    assert cy.created
    assert cy.table().game == "paiute"


def cards_of(seat: Seat) -> tuple[str, ...]:
    """The seat's own cards, as it sees the table."""
    you = seat.table().you
    assert you is not None
    assert you.cards is not None
    return you.cards


def play_paiute_turn(seat: Seat, wild_rank: int) -> str:
    """Draw from the stock; call with a winning combination, else discard."""
    seat.draw("stock")
    mine = seat.table()
    assert mine.you is not None
    assert mine.you.cards is not None
    assert mine.you.drawn is not None
    cards = list(mine.you.cards)
    (best,) = seat.client.evaluate("paiute", [" ".join(cards)], wild_rank=wild_rank)
    if best.strength > 0:
        shown = [card for card in cards if card != best.leftover]
        with contextlib.suppress(RuleViolation):
            seat.call(shown, best.leftover)
            return "call"
    discard = choose_discard(cards, wild_rank)
    seat.discard(discard)
    return "discard"


def test_a_whole_paiute_deal_through_the_sdk(client: Client) -> None:
    table = sign_up(client, "host").create_table(
        PaiuteOptions(ante=1, turn_seconds=120, deal_pause_seconds=60, max_reshuffles=1)
    )
    seats = {s.number: s for s in (sit(client, table.id, n, 50) for n in ("ann", "bo"))}
    seats[1].start()
    view = client.table(table.id)
    assert view.deal is not None
    assert view.deal.wild_rank is not None
    assert view.deal.stock_size == 52 - 10 - 2
    assert view.deal.discard_top is not None
    announced, wild_rank = view.deal.commitment, view.deal.wild_rank
    dealt = {n: cards_of(seat) for n, seat in seats.items()}
    moves = []
    while True:
        now = client.table(table.id)
        if now.hand_number != view.hand_number or now.phase not in ("playing", "last_turns"):
            break
        assert now.pending is not None
        assert now.pending.action == "draw"
        moves.append(play_paiute_turn(seats[now.pending.seats[0]], wild_rank))
        assert len(moves) < 200
    ended, _ = deal_end(client, table.id, 0, view.hand_number)
    assert ended.data["outcome"] in ("won", "split", "void")
    assert ("call" in moves) == (ended.data["outcome"] != "void")
    for number, seat in seats.items():
        history = seat.hand(view.hand_number)
        report = verify_fairness(history, announced=announced, dealt={number: dealt[number]})
        assert any("wild card" in check for check in report.checks)


def test_six_paiute_cards_are_valued_as_asked(client: Client) -> None:
    # six cards with sevens wild: by the rule all six make four nines and two twos; valued
    # as the best of five or six, five nines with the 2c left over
    six = "9h 9d 9s 9c 7h 2c"
    (rule,) = client.evaluate("paiute", [six], wild_rank=7)
    (best,) = client.evaluate("paiute", [six], wild_rank=7, paiute_valuation="best_of_any")
    (named,) = client.evaluate(
        "paiute", [six], wild_rank=7, paiute_valuation="six_card_combinations"
    )
    assert named == rule
    assert (rule.category, rule.leftover) == ("FOUR_TWO", None)
    assert (best.category, best.leftover) == ("FIVE_OF_A_KIND", "2c")
    assert best.strength > rule.strength


# ---------------------------------------------------------------- server-sent events


def test_the_event_stream_reconnects_and_resumes_after_the_last_event(client: Client) -> None:
    table = sign_up(client, "host").create_table(
        GutsOptions(turn_seconds=120, deal_pause_seconds=60)
    )
    ann = sit(client, table.id, "ann")
    received: list[Event] = []
    private: list[Event] = []
    watching = client.stream(table.id, reconnect_delay=0.05)
    mine = ann.stream(reconnect_delay=0.05)

    def watch(stream: Any, into: list[Event]) -> None:
        with contextlib.suppress(CardroomError), stream:
            for item in stream:
                into.append(item)

    threads = [
        threading.Thread(target=watch, args=(watching, received), daemon=True),
        threading.Thread(target=watch, args=(mine, private), daemon=True),
    ]
    for thread in threads:
        thread.start()
    wait_for(lambda: len(received) >= 2, "the first events")
    # the gateway ends each stream after STREAM_SECONDS; the SDK must come back
    wait_for(lambda: watching.reconnects >= 1 and mine.reconnects >= 1, "a reconnect")
    bo = sit(client, table.id, "bo")
    ann.start()
    ann.declare("in")
    wait_for(lambda: any(e.type == "declared" for e in received), "the declaration")
    reconnects = watching.reconnects
    wait_for(lambda: watching.reconnects > reconnects, "a second reconnect")
    bo.declare("out")
    wait_for(lambda: any(e.type == "deal_ended" for e in received), "the end of the deal")
    wait_for(lambda: any(e.type == "deal_ended" for e in private), "ann's end of the deal")
    watching.close()
    mine.close()
    for thread in threads:
        thread.join(10)
    everything = client.events(table.id).events
    upto = received[-1].id
    assert [e.id for e in received] == [e.id for e in everything if e.id <= upto]
    assert received == [e for e in everything if e.id <= upto]
    assert not any(e.private for e in received)
    dealt = [e for e in private if e.type == "cards_dealt"]
    assert len(dealt) == 1
    assert dealt[0].data["seat"] == ann.number
    ids = [e.id for e in private]
    assert ids == sorted(set(ids))
    assert watching.last_event_id == received[-1].id
    with client.stream(table.id, until=time.monotonic() + 1) as bounded:
        replayed = list(bounded)  # ends by itself, with the whole log so far
    assert replayed == client.events(table.id).events


def test_a_ticketed_stream_receives_the_seat_s_private_events(client: Client) -> None:
    host = sign_up(client, "host")
    table = host.create_table(GutsOptions(turn_seconds=120, deal_pause_seconds=60))
    ann_player = sign_up(client, "ann")
    ann = ann_player.take_seat(table.id, None, 100)
    bo = sit(client, table.id, "bo")
    ticket = ann_player.stream_ticket(table.id)
    assert ticket.stream == f"/v1/tables/{table.id}/events/stream"
    assert ticket.ticket not in repr(ticket)
    # a program with no credential of its own, given tickets one connection at a time
    # (as a browser's EventSource is); and the seat's own client, with a seat ticket
    handed: list[str] = [ticket.ticket]

    def hand_out() -> str:
        return handed.pop() if handed else ann_player.stream_ticket(table.id).ticket

    anonymous = client.stream(table.id, ticket=hand_out, reconnect_delay=0.05)
    seat_stream = ann.client.stream(
        table.id, seat=ann, ticket=ann.stream_ticket(), reconnect_delay=0.05
    )
    received: dict[str, list[Event]] = {"anonymous": [], "seat": []}

    def watch(stream: Any, into: list[Event]) -> None:
        with contextlib.suppress(CardroomError), stream:
            for item in stream:
                into.append(item)

    threads = [
        threading.Thread(target=watch, args=(anonymous, received["anonymous"]), daemon=True),
        threading.Thread(target=watch, args=(seat_stream, received["seat"]), daemon=True),
    ]
    for thread in threads:
        thread.start()
    # each stream outlives a connection (STREAM_SECONDS), with a new ticket each time
    wait_for(lambda: anonymous.reconnects >= 1 and seat_stream.reconnects >= 1, "reconnects")
    ann.start()
    ann.declare("in")
    bo.declare("out")
    wait_for(
        lambda: all(any(e.type == "deal_ended" for e in got) for got in received.values()),
        "the end of the deal on both streams",
    )
    anonymous.close()
    seat_stream.close()
    for thread in threads:
        thread.join(10)
    mine = {e.id for e in ann.events().events}
    for events in received.values():
        dealt = [e for e in events if e.type == "cards_dealt"]
        assert [e.data["seat"] for e in dealt] == [ann.number]
        assert any(e.type == "your_declaration" for e in events)
        ids = [e.id for e in events]
        assert ids == sorted(set(ids))
        assert set(ids) <= mine
    # a ticket opens one connection: used again it is refused, and nothing is streamed
    with pytest.raises(Unauthorized) as spent:
        next(client.stream(table.id, ticket=ticket))
    assert spent.value.code == "invalid_ticket"
    with pytest.raises(error_for("invalid_ticket")):
        next(client.stream(table.id, ticket="crt_" + "x" * 43))


# ---------------------------------------------------------------- players


def test_a_second_client_with_the_same_key_carries_on_playing(client: Client) -> None:
    created = client.create_player("ann")
    assert created.name == "ann"
    assert created.key.startswith("crk_")
    assert created.key not in repr(created)
    first = Client(client.base_url, credential=created.key)
    me = first.me()
    assert (me.id, me.name, me.key_id) == (created.id, "ann", created.key_id)
    assert [key.id for key in me.keys] == [created.key_id]
    table = first.create_table(GutsOptions(turn_seconds=120, deal_pause_seconds=60))
    ann = first.take_seat(table.id, None, 100)
    assert ann.name == "ann"
    bo = sit(client, table.id, "bo")
    ann.start()
    dealt = cards_of(ann)
    first.close()  # the first program is gone, with the seat's token
    with Client(client.base_url, credential=created.key) as again:
        (held,) = again.my_seats()
        assert (held.table_id, held.seat, held.name, held.game) == (
            table.id,
            ann.number,
            "ann",
            "guts",
        )
        assert held.phase == "declaring"
        assert held.table.you is not None
        assert held.table.you.cards == dealt
        assert held.last_event == client.events(table.id).next
        seat = again.seat(held.table_id, held.seat)
        assert seat.token is None
        assert cards_of(seat) == dealt
        declared = seat.declare("in")
        assert declared.table.you is not None
        assert declared.table.you.declaration == "in"
        # the player's key sees the seat's private events, as its token did
        private = [e for e in seat.events().events if e.private]
        assert {e.type for e in private} >= {"cards_dealt", "your_declaration"}
        bo.declare("out")  # bo's seat token works as before
        ended, _ = deal_end(client, table.id, 0, 1)
        assert ended.data["outcome"] == "uncontested"
        # the player's history of the deal opens the cards they were dealt
        assert verify_fairness(seat.hand(1), dealt={seat.number: dealt})
        gone = seat.leave()
        assert gone.left
        assert again.my_seats() == []


def test_the_wallet_pays_for_a_seat_and_its_ledger_pages(client: Client) -> None:
    created = client.create_player("ann")
    with Client(client.base_url, credential=created.key) as ann:
        start = ann.me()
        assert (start.balance, start.pending) == (10_000, 0)
        table = ann.create_table(GutsOptions(turn_seconds=120, deal_pause_seconds=60))
        seat = ann.take_seat(table.id, None, 120)
        assert ann.me().balance == 10_000 - 120
        page = ann.my_ledger(limit=1)
        assert [(e.kind, e.amount, e.balance) for e in page.entries] == [
            ("buy_in", 120, 10_000 - 120)
        ]
        assert page.entries[0].credit == f"table:{table.id}"
        assert page.next is not None
        seat.leave()
        kinds = [entry.kind for entry in ann.ledger_entries(page_size=1)]
        assert kinds == ["cash_out", "buy_in", "grant"]
        assert ann.me().balance == 10_000


def test_revoking_a_key_makes_the_client_s_next_write_fail(client: Client) -> None:
    ann = sign_up(client, "ann")
    table = ann.create_table(GutsOptions(turn_seconds=120, deal_pause_seconds=60))
    seat = ann.take_seat(table.id, None, 100)
    sit(client, table.id, "bo")
    added = ann.add_key()
    assert added.key != ann.credential
    me = ann.me()
    assert me.key_id is not None
    assert {key.id for key in me.keys} == {me.key_id, added.key_id}
    ann.revoke_key(me.key_id)  # the key in use
    with pytest.raises(Unauthorized) as revoked:
        ann.create_table()
    assert revoked.value.code == "invalid_token"
    with pytest.raises(Unauthorized) as acting:
        ann.seat(table.id, seat.number).start()
    assert acting.value.code == "invalid_token"
    # a read with it is a spectator's
    assert ann.table(table.id).you is None
    # the other key goes on, and the old one is no longer among the player's keys
    ann.credential = added.key
    assert [key.id for key in ann.me().keys] == [added.key_id]
    started = ann.seat(table.id, seat.number).start()
    assert started.table.you is not None
    with pytest.raises(NotFound) as again:
        ann.revoke_key(me.key_id)
    assert again.value.code == "key_not_found"


# ---------------------------------------------------------------- fairness


def test_moves_answered_without_the_table(client: Client) -> None:
    table = sign_up(client, "host").create_table(
        GutsOptions(turn_seconds=120, deal_pause_seconds=60)
    )
    ann, bo = (sit(client, table.id, name) for name in ("ann", "bo"))
    started = ann.act_minimal({"action": "start"})
    assert not started.replayed
    view = ann.table()
    assert started.etag == view.etag
    declared = ann.act_minimal({"action": "declare", "choice": "in"}, if_match=started.etag)
    assert declared.version == started.version + 1
    you = ann.table().you
    assert you is not None
    assert you.declaration == "in"
    # a stale If-Match is refused as for any move
    with pytest.raises(PreconditionFailed):
        bo.act_minimal({"action": "declare", "choice": "in"}, if_match=started.etag)
    # refusals by the rules raise as for any move
    with pytest.raises(RuleConflict) as again:
        ann.act_minimal({"action": "declare", "choice": "out"})
    assert again.value.code == "already_declared"
    # the same key twice: one move, and the replay says so
    first = bo.act_minimal({"action": "declare", "choice": "out"}, idempotency_key="bo-out")
    replay = bo.act_minimal({"action": "declare", "choice": "out"}, idempotency_key="bo-out")
    assert replay.replayed
    assert replay.version == first.version
    # the same key through `act`: the replay holds no table, the table is read
    through_act = bo.act({"action": "declare", "choice": "out"}, idempotency_key="bo-out")
    assert through_act.replayed
    assert through_act.events == []
    assert through_act.table.version >= first.version
    types = [event.type for event in client.events(table.id).events]
    assert types.count("declared") == 2


def test_a_tampered_history_fails_the_fairness_check(client: Client) -> None:
    table = sign_up(client, "host").create_table(
        GutsOptions(deal_pause_seconds=60, turn_seconds=120)
    )
    ann, bo = sit(client, table.id, "ann"), sit(client, table.id, "bo")
    ann.start()
    deal = client.table(table.id).deal
    assert deal is not None
    announced = deal.commitment
    dealt = {ann.number: cards_of(ann)}
    ann.declare("in")
    bo.declare("out")
    deal_end(client, table.id, 0, 1)
    history = ann.hand(1)
    verify_fairness(history, announced=announced, dealt=dealt)
    proof = history.fairness
    leaves = list(proof.leaves)
    first = proof.opened[0]

    def tampered(**changes: Any) -> HandHistory:
        return replace(history, fairness=replace(proof, **changes))

    with pytest.raises(FairnessError, match="history says"):
        verify_fairness(tampered(leaves=(leaves[1], leaves[0], *leaves[2:])))
    with pytest.raises(FairnessError, match="52 sha256"):
        verify_fairness(tampered(leaves=tuple(leaves[:-1])))
    with pytest.raises(FairnessError, match="announced"):
        verify_fairness(history, announced="0" * 64)
    with pytest.raises(FairnessError, match="is not its leaf"):
        verify_fairness(tampered(opened=(replace(first, salt=first.salt + "0"), *proof.opened[1:])))
    # another card opened at a place: its leaf must be forged, and the commitment with it
    cards = (rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
    other = next(card for card in cards if card not in proof.cards.values())
    forged_leaves = list(leaves)
    forged_leaves[first.position] = leaf_digest(first.position, other, first.salt)
    forged = tampered(
        leaves=tuple(forged_leaves),
        opened=(replace(first, card=other), *proof.opened[1:]),
        commitment=deck_commitment(forged_leaves),
    )
    with pytest.raises(FairnessError, match="deal_started"):
        verify_fairness(forged)
    # one card at two places: caught even with the leaves and commitment forged to fit
    second = proof.opened[1]
    duplicated = list(leaves)
    duplicated[second.position] = leaf_digest(second.position, first.card, second.salt)
    twice = tampered(
        leaves=tuple(duplicated),
        commitment=deck_commitment(duplicated),
        opened=(first, replace(second, card=first.card)),
    )
    with pytest.raises(FairnessError, match="opened at two places"):
        verify_fairness(replace(twice, events=[]))
    wrong = {ann.number: (other, *dealt[ann.number][1:])}
    with pytest.raises(FairnessError, match="deck dealt it"):
        verify_fairness(history, dealt=wrong)
    # bo went out: ann's history does not open bo's hand, and says so
    with pytest.raises(FairnessError, match="does not open"):
        verify_fairness(history, dealt={bo.number: cards_of(bo)})


def synthetic_history(events: list[Event], opened: range) -> HandHistory:
    """A Paiute history over the unshuffled deck, with the places `opened` opened."""
    deck = tuple(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
    salts = [f"{i:032x}" for i in range(52)]
    leaves = [leaf_digest(i, card, salts[i]) for i, card in enumerate(deck)]
    commitment = deck_commitment(leaves)
    started = Event(1, "deal_started", {"commitment": commitment, "players": [2, 1]}, 0.0, 1)
    proof = Fairness(
        commitment, tuple(leaves), tuple(Opening(i, deck[i], salts[i]) for i in opened), ""
    )
    return HandHistory("t", 1, 1, 1, "void", [started, *events], None, [], proof, None, {})


def test_a_paiute_wild_card_that_is_not_the_decks_next_card_fails() -> None:
    deck = tuple(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
    wild = Event(2, "wild_card", {"card": deck[10], "rank": 4}, 0.0, 1)
    history = synthetic_history([wild], range(12))
    report = verify_fairness(history, dealt={2: deck[0:10:2], 1: deck[1:10:2]})
    assert report.commitment == history.fairness.commitment
    with pytest.raises(FairnessError, match="wild"):
        verify_fairness(replace(history, wild_card=deck[11]))
    with pytest.raises(FairnessError, match="deck dealt it"):
        verify_fairness(history, dealt={2: deck[1:10:2]})


def test_paiute_draws_from_the_stock_come_from_it_in_order() -> None:
    deck = tuple(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")

    def draw(seat: int, card: str | None) -> list[Event]:
        drew = [Event(3, "drew", {"seat": seat, "source": "stock"}, 0.0, 1)]
        return drew + (
            [Event(4, "drew_card", {"seat": seat, "card": card}, 0.0, 1)] if card else []
        )

    # seat 2 drew places 12 and 14; seat 1's draw (place 13) was not shown to this reader
    fair = synthetic_history([*draw(2, deck[12]), *draw(1, None), *draw(2, deck[14])], range(15))
    report = verify_fairness(fair)
    assert any("2 card(s) drawn from the stock" in check for check in report.checks)
    unfair = synthetic_history([*draw(2, deck[12]), *draw(2, deck[14])], range(15))
    with pytest.raises(FairnessError, match="the stock's card was"):
        verify_fairness(unfair)
    # after a reshuffle the draws are checked against that reshuffle's own proof, which
    # a history must give (tests/integration/test_paiute_tables.py plays one through)
    reshuffled = Event(5, "reshuffled", {"number": 1, "stock": 3}, 0.0, 1)
    with pytest.raises(FairnessError, match="have no proof"):
        verify_fairness(synthetic_history([reshuffled, *draw(2, deck[30])], range(12)))


# ---------------------------------------------------------------- errors


def test_errors_are_exceptions_with_their_problem_codes(client: Client) -> None:
    with pytest.raises(NotFound) as missing:
        client.table("nosuchtable")
    assert (missing.value.status, missing.value.code) == (404, "table_not_found")
    assert isinstance(missing.value, error_for("table_not_found"))
    assert "table_not_found" in str(missing.value)
    host = sign_up(client, "host")
    with pytest.raises(error_for("invalid_option")) as bad:
        host.create_table(GutsOptions(min_players=5, max_players=3))
    assert isinstance(bad.value, Unprocessable)
    assert bad.value.status == 422
    with pytest.raises(Unprocessable) as field:
        host.create_table(GutsOptions(ante=0))
    assert field.value.field == "ante"
    assert field.value.title
    table = host.create_table()
    ann = sit(client, table.id, "ann")
    with pytest.raises(RuleConflict) as lonely:
        ann.start()
    assert lonely.value.code == "not_enough_players"
    assert isinstance(lonely.value, RuleViolation)
    assert isinstance(lonely.value, Conflict)
    bo = sign_up(client, "bo")
    with pytest.raises(error_for("name_taken")):
        bo.take_seat(table.id, "ANN", 100)
    with pytest.raises(Unprocessable) as buy_in:
        bo.take_seat(table.id, None, 5)
    assert buy_in.value.code == "invalid_buy_in"
    impostor = client.seat(table.id, ann.number, "00" * 32)
    with pytest.raises(Unauthorized) as token:
        impostor.start()
    assert token.value.code == "invalid_token"
    with pytest.raises(Unprocessable) as move:
        ann.draw("stock")
    assert move.value.code == "unsupported_action"
    assert move.value.field == "action"
    bo.take_seat(table.id, None, 100, idempotency_key="same-key")
    with pytest.raises(Conflict) as reused:
        bo.take_seat(table.id, "bob", 100, idempotency_key="same-key")
    assert reused.value.code == "idempotency_key_reused"
    with pytest.raises(error_for("hand_not_found")):
        client.hand(table.id, 1)


def test_the_credentials_refusals_are_exceptions_with_their_codes(client: Client) -> None:
    # tables and seats need a player; a seat token acts for its seat only
    with pytest.raises(Unauthorized) as anonymous:
        client.create_table()
    assert anonymous.value.code == "missing_token"
    assert anonymous.value.title == "Missing credential"
    with pytest.raises(Unauthorized) as unknown:
        client.with_credential("crk_" + "A" * 43).create_table()
    assert (unknown.value.code, unknown.value.title) == ("invalid_token", "Invalid credential")
    host = sign_up(client, "host")
    table = host.create_table(GutsOptions(turn_seconds=120, deal_pause_seconds=60))
    ann = host.take_seat(table.id, "ann", 100)
    with pytest.raises(Forbidden) as narrow:
        client.with_credential(ann.token).create_table()
    assert narrow.value.code == "player_required"
    with pytest.raises(error_for("player_required")):
        client.with_credential(ann.token).take_seat(table.id, "again", 100)
    # one seat per player at a table
    with pytest.raises(Conflict) as twice:
        host.take_seat(table.id, "ann again", 100)
    assert twice.value.code == "already_seated"
    # a player acts only for their own seat
    bo = sit(client, table.id, "bo")
    stranger = sign_up(client, "stranger")
    with pytest.raises(Forbidden) as not_seated:
        stranger.seat(table.id, ann.number).start()
    assert not_seated.value.code == "not_seated"
    with pytest.raises(Forbidden) as wrong:
        host.seat(table.id, bo.number).leave()
    assert wrong.value.code == "wrong_seat"
    # keys: at most 10, and only one's own can be revoked
    with pytest.raises(NotFound) as no_key:
        host.revoke_key("k_000000000000")
    assert no_key.value.code == "key_not_found"
    for _ in range(len(host.me().keys), 10):
        host.add_key()
    with pytest.raises(Conflict) as many:
        host.add_key()
    assert many.value.code == "too_many_keys"
    # a quota is not waited for: refused at once, with its name and limit
    log = KeyLog()
    host.transport.http.event_hooks["request"].append(log)
    for _ in range(4):
        host.create_table()
    with pytest.raises(RateLimited) as quota:
        host.create_table()
    assert quota.value.code == "quota_exceeded"
    assert (quota.value.problem["quota"], quota.value.problem["limit"]) == ("open_tables", 5)
    assert len(log.keys("POST", "/v1/tables")) == 5
    # a stream ticket needs a credential
    with pytest.raises(Unauthorized) as ticketless:
        client.stream_ticket(table.id)
    assert ticketless.value.code == "missing_token"


# ---------------------------------------------------------------- retries


class Evaluator:
    """An evaluator on a fixed loopback port that a test stops and starts."""

    def __init__(self) -> None:
        self.port = free_port()
        self.server: EvaluatorServer | None = None

    def start(self) -> None:
        self.server = create_server(f"127.0.0.1:{self.port}")
        self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=0)
            self.server = None


class KeyLog:
    """The Idempotency-Key of every request sent, by path (an httpx event hook)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str | None]] = []

    def __call__(self, request: httpx.Request) -> None:
        key = request.headers.get("Idempotency-Key")
        self.sent.append((request.method, request.url.path, key))

    def keys(self, method: str, suffix: str) -> list[str | None]:
        return [key for m, path, key in self.sent if m == method and path.endswith(suffix)]


def test_a_showdown_waits_for_the_evaluator_and_the_move_is_sent_once(redis_url: str) -> None:
    """The evaluator away: the last declaration is accepted at once (no retry), the table
    waits in its showdown phase, and the clock settles it when the evaluator is back."""
    evaluator = Evaluator()
    evaluator.start()
    log = KeyLog()
    try:
        with (
            serve(redis_url, f"127.0.0.1:{evaluator.port}", evaluator_timeout=0.5) as url,
            Client(url, event_hooks={"request": [log]}) as sdk,
        ):
            table = sign_up(sdk, "host").create_table(
                GutsOptions(deal_pause_seconds=60, turn_seconds=120)
            )
            ann, bo = sit(sdk, table.id, "ann"), sit(sdk, table.id, "bo")
            ann.start()
            ann.declare("in")
            evaluator.stop()
            done = bo.declare("in")  # leads to a showdown, which needs the evaluator
            assert done.table.phase == "showdown"
            assert len(log.keys("POST", "/actions")) == 3
            evaluator.start()
            wait_for(lambda: sdk.table(table.id).phase == "between_deals", "the showdown")
            events = sdk.events(table.id).events
            declared = [e for e in events if e.type == "declared" and e.data["seat"] == bo.number]
            assert len(declared) == 1
            assert sum(1 for e in events if e.type == "deal_ended") == 1
    finally:
        evaluator.stop()


def test_a_store_outage_is_retried_until_redis_is_back(
    tmp_path: Any, evaluator_address: str
) -> None:
    # durable: the player created before the outage is still there after it
    redis = RedisProcess(str(tmp_path), flags=DURABLE)
    redis.start()
    log = KeyLog()
    codes: list[str] = []

    def restart(attempt: int, error: CardroomError, pause: float) -> None:
        codes.append(error.code)
        if attempt == 1:
            redis.start()

    try:
        with (
            serve(redis.url, evaluator_address, clock=False) as url,
            Client(url, retry=RetryPolicy(deadline=60, on_retry=restart)) as sdk,
        ):
            sdk.transport.http.event_hooks["request"].append(log)
            sdk.credential = sdk.create_player("host").key
            redis.stop()
            down = sdk.readiness()
            assert (down.ready, down.redis) == (False, "unavailable")
            table = sdk.create_table(name="after the outage")
            assert codes == ["store_unavailable"]
            keys = log.keys("POST", "/v1/tables")
            assert len(keys) == 2
            assert keys[0] == keys[1]
            assert keys[0]
            assert [t.id for t in sdk.lobby(filters=LobbyFilters(mine=True))] == [table.id]
    finally:
        redis.stop()


class Relay:
    """A TCP relay to the gateway that can lose the next answer or refuse connections."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.lose_next_answer = threading.Event()
        self.lost = 0
        self.listener: socket.socket | None = None
        self.open()

    def open(self) -> None:
        listener = socket.create_server(("127.0.0.1", self.port))
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def shut(self) -> None:
        if self.listener is not None:
            # shutdown wakes the thread blocked in accept(); close alone would not
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self.listener = None

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                downstream, _ = listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target))
            for source, sink, answers in (
                (downstream, upstream, False),
                (upstream, downstream, True),
            ):
                threading.Thread(
                    target=self._pump,
                    args=(source, sink, answers, (downstream, upstream)),
                    daemon=True,
                ).start()

    def _pump(
        self,
        source: socket.socket,
        sink: socket.socket,
        answers: bool,
        both: tuple[socket.socket, ...],
    ) -> None:
        try:
            while data := source.recv(65536):
                if answers and self.lose_next_answer.is_set():
                    self.lose_next_answer.clear()
                    self.lost += 1
                    break
                sink.sendall(data)
        except OSError:
            pass
        for end in both:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()


def test_a_lost_answer_is_retried_and_replayed_not_repeated(
    redis_url: str, evaluator_address: str
) -> None:
    log = KeyLog()
    with serve(redis_url, evaluator_address) as url:
        relay = Relay(int(url.rpartition(":")[2]))
        try:
            with Client(
                f"http://127.0.0.1:{relay.port}",
                retry=RetryPolicy(backoff=0.05),
                event_hooks={"request": [log]},
            ) as sdk:
                table = sign_up(sdk, "host").create_table(
                    GutsOptions(deal_pause_seconds=60, turn_seconds=120)
                )
                ann = sit(sdk, table.id, "ann")
                bo_player = sign_up(sdk, "bo")
                relay.lose_next_answer.set()
                bo = bo_player.take_seat(table.id, None, 100)  # the first answer never arrives
                assert relay.lost == 1
                assert bo.table().you is not None  # the replayed grant holds the same token
                ann.start()
                relay.lose_next_answer.set()
                declared = ann.declare("in")
                assert relay.lost == 2
                assert declared.replayed
                keys = log.keys("POST", "/actions")[-2:]
                assert keys[0] == keys[1]
                events = sdk.events(table.id).events
                assert sum(1 for e in events if e.type == "seated") == 2
                assert sum(1 for e in events if e.type == "declared") == 1
                relay.shut()
                reopened: list[int] = []

                def reopen(attempt: int, error: CardroomError, pause: float) -> None:
                    assert isinstance(error, ConnectionFailed)
                    assert error.status is None
                    reopened.append(attempt)
                    if attempt == 2:
                        relay.open()

                sdk.transport.http.close()
            with Client(
                f"http://127.0.0.1:{relay.port}", retry=RetryPolicy(backoff=0.05, on_retry=reopen)
            ) as fresh:
                assert fresh.table(table.id).id == table.id
                assert reopened == [1, 2]
        finally:
            relay.shut()
    with Client(f"http://127.0.0.1:{free_port()}", retry=RetryPolicy(attempts=2)) as nowhere:
        with pytest.raises(ConnectionFailed) as refused:
            nowhere.health()
        assert refused.value.code == "connection_failed"
        assert refused.value.status is None


def test_the_sdk_imports_nothing_of_the_gateway() -> None:
    probe = (
        "import sys, cardroom_client; "
        "print(sorted(m for m in ('flask', 'redis', 'grpc', 'werkzeug', 'gevent', 'numpy', "
        "'gateway', 'evaluator', 'cardroom') if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert found.stdout.strip() == "[]"


def test_the_sdk_seats_and_removes_a_computer_player(client: Client) -> None:
    host = sign_up(client, "host")
    table_id = host.create_table(PaiuteOptions()).id
    seat, table = host.seat_bot(table_id, "strong", 100)
    assert table.seats[seat].computer == "strong"
    assert table.seats[seat].name == "Strong bot"
    (summary,) = [t for t in client.lobby() if t.id == table_id]
    assert summary.computer_players == 1
    left = host.remove_bot(table_id, seat)
    assert left.left
    assert left.cashed_out == 100
    with pytest.raises(Forbidden) as refused:
        sign_up(client, "other").seat_bot(table_id, "strong", 100)
    assert refused.value.code == "not_table_owner"
