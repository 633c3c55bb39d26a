"""Game recall on a real Redis: each player's deals, newest first, their own copies kept
whatever the table's retention, and deals as PHH-style text."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator

import pytest

from cardroom_client import Client, GutsOptions
from tests.integration.test_client import serve
from tests.integration.test_retention import _close, _gateway, _play_deals
from tests.support.gateway import Gateway
from tests.support.problems import assert_problem

# what a kept copy says besides the deal's history as its player saw it
RECALL_FIELDS = ("game", "table_name", "cards", "recall_of")


@pytest.fixture
def keeping_one(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway whose tables keep the history of their last deal only."""
    gateway = _gateway(redis_url, evaluator_address, history_deals=1)
    yield gateway
    _close(gateway)


def test_a_player_lists_and_reads_their_deals_past_the_table_s_retention(
    keeping_one: Gateway,
) -> None:
    gateway = keeping_one
    ann, bob = gateway.sign_up("ann"), gateway.sign_up("bob")
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=60)
    players = [gateway.sit(table_id, "ann", 100, ann), gateway.sit(table_id, "bob", 100, bob)]
    gateway.act(table_id, players[0], action="start")
    _play_deals(gateway, table_id, players, 3)

    page = gateway.call("GET", "/v1/players/me/deals", ann)
    assert page.status_code == 200, page.get_json()
    assert page.headers["Cache-Control"] == "no-store"
    listed = page.get_json()["deals"]
    assert [(d["table_id"], d["hand_number"]) for d in listed] == [
        (table_id, 3),
        (table_id, 2),
        (table_id, 1),
    ]
    two = gateway.call("GET", "/v1/players/me/deals?limit=2", ann).get_json()
    rest = gateway.call("GET", f"/v1/players/me/deals?cursor={two['next']}", ann).get_json()
    assert [d["hand_number"] for d in two["deals"] + rest["deals"]] == [3, 2, 1]

    # the table keeps deal 3 alone; the player's own copy of deal 1 is still theirs
    assert_problem(gateway.call("GET", f"/v1/tables/{table_id}/hands/1"), 410, "history_trimmed")
    mine = gateway.call("GET", f"/v1/players/me/deals/{table_id}/1", ann)
    assert mine.status_code == 200, mine.get_json()
    own = [e for e in mine.get_json()["events"] if e["type"] == "cards_dealt"]
    assert [e["data"]["seat"] for e in own] == [players[0].seat]
    theirs = gateway.call("GET", f"/v1/players/me/deals/{table_id}/1", bob).get_json()
    assert [e["data"]["seat"] for e in theirs["events"] if e["type"] == "cards_dealt"] == [
        players[1].seat
    ]
    assert_problem(gateway.call("GET", "/v1/players/me/deals"), 401, "missing_token")

    # a kept copy is the deal as the table's history shows it to that player, no more
    for account in (ann, bob):
        kept = gateway.call("GET", f"/v1/players/me/deals/{table_id}/3", account).get_json()
        shown = gateway.call("GET", f"/v1/tables/{table_id}/hands/3", account).get_json()
        assert kept["recall_of"] == f"{table_id}:3"
        assert {k: v for k, v in kept.items() if k not in RECALL_FIELDS} == shown
        assert "sealed" not in kept
        assert "history" not in kept
        opened = {item["card"] for item in kept["fairness"]["opened"]}
        dealt = [e for e in kept["events"] if e["type"] == "cards_dealt"]
        assert opened >= set(dealt[0]["data"]["cards"])

    # one deal, and the player's last ones, as PHH-style TOML
    text = gateway.call("GET", f"/v1/tables/{table_id}/hands/3/phh", ann)
    assert text.status_code == 200
    assert text.mimetype == "application/toml"
    deal = tomllib.loads(text.get_data(as_text=True))
    assert deal["variant"] == "GU3"
    assert deal["hand"] == 3
    assert len(deal["seats"]) == len(deal["antes"]) == len(deal["starting_stacks"]) == 2
    dealt = [a for a in deal["actions"] if a.startswith("d dh")]
    assert len(dealt) == 2
    assert sum("??" in a for a in dealt) == 1  # bob's cards are not ann's to see
    assert sum(a.endswith(" f # out") for a in deal["actions"]) == 2  # both declared out
    last = gateway.call("GET", "/v1/players/me/deals/phh?last=2", ann)
    assert last.status_code == 200
    several = tomllib.loads(last.get_data(as_text=True))
    assert [several[key]["hand"] for key in ("1", "2")] == [3, 2]
    bad = gateway.call("GET", "/v1/players/me/deals/phh?last=11", ann)
    assert_problem(bad, 400, "invalid_parameter")
    for cursor in ("NaN", "inf", "-inf", "x"):  # not a cursor a page gave
        bad = gateway.call("GET", f"/v1/players/me/deals?cursor={cursor}", ann)
        assert_problem(bad, 400, "invalid_cursor")


def test_only_the_newest_copies_are_kept(keeping_one: Gateway) -> None:
    gateway = keeping_one
    recall = gateway.app.extensions["cardroom.service"].changes.recall
    player = "p_" + "0" * 24
    for hand in range(1, 14):
        note = {
            "player": player,
            "member": f"t:{hand}",
            "at": float(hand),
            "copy": f'{{"recall_of": "t:{hand}"}}',
            "due": 0.0,
        }
        recall.store.deliver("t", {f"{player} t:{hand}": note}, 10)
    kept = [hand for hand in range(1, 14) if recall.kept(player, "t", hand)]
    assert kept == list(range(4, 14))
    assert len(recall.store.page(player, None, 100)) == 13


def test_the_sdk_lists_reads_and_exports_the_player_s_deals(
    redis_url: str, evaluator_address: str
) -> None:
    with serve(redis_url, evaluator_address) as url, Client(url, timeout=20) as anonymous:
        ann = anonymous.with_credential(anonymous.create_player("ann").key)
        bob = anonymous.with_credential(anonymous.create_player("bob").key)
        table = ann.create_table(GutsOptions(turn_seconds=60, deal_pause_seconds=60))
        seats = [ann.take_seat(table.id, None, 100), bob.take_seat(table.id, None, 100)]
        seats[0].start()
        for seat in seats:
            seat.declare("out")
        # the deal ends with the last declaration, whose commit notes it for its players
        page = ann.my_deals()
        assert [(t, n) for t, n, _ in page.deals] == [(table.id, 1)]
        deal = ann.my_deal(table.id, 1)
        assert deal.hand_number == 1
        assert [e.data["seat"] for e in deal.events if e.type == "cards_dealt"] == [seats[0].number]
        assert tomllib.loads(ann.my_deals_text(1))["1"]["variant"] == "GU3"
        assert tomllib.loads(bob.hand_text(table.id, 1))["hand"] == 1
