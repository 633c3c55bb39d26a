"""Wallets and the ledger over HTTP, on a real Redis and the real evaluator.

Chips come from the house (the play-money grant, an operator's deposits) and go back to
it; buy-ins, rebuys and cash-outs move them between a wallet and a table in two steps,
and a failure injected between the steps is finished by the sweeper. After every test
the audit over the whole store (a database of its own) is clean.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.support.gateway import Gateway, close_app, make_app
from tests.support.ledger import assert_ledger_clean, audited_gateway
from tests.support.play import wait_for
from tests.support.problems import assert_problem
from tests.support.tables_api import Account

OPERATOR_KEY = "op-ledger-test-key-0123456789abcdef"
GRANT = 10_000


@pytest.fixture
def ledger_url(redis_url: str) -> str:
    """A database of the session's Redis for this module alone, emptied first."""
    url = redis_url.rsplit("/", 1)[0] + "/7"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


@pytest.fixture
def gateway(ledger_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway in open mode with an operator key; the audit is clean after the test."""
    with audited_gateway(ledger_url, evaluator_address, operator_keys=(OPERATOR_KEY,)) as gateway:
        yield gateway


OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}


def me(gateway: Gateway, account: Account) -> dict[str, Any]:
    response = gateway.call("GET", "/v1/players/me", account)
    assert response.status_code == 200, response.get_json()
    return dict(response.get_json())


def ledger(gateway: Gateway, account: Account) -> dict[str, Any]:
    response = gateway.call("GET", "/v1/players/me/ledger", account)
    assert response.status_code == 200, response.get_json()
    assert response.headers["Cache-Control"] == "no-store"
    return dict(response.get_json())


def test_a_new_player_has_the_grant_and_a_seat_is_paid_from_the_wallet(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann = gateway.sign_up("ann")
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT, 0)
    seated = gateway.sit(table_id, "ann", 120, ann)
    assert me(gateway, ann)["balance"] == GRANT - 120
    entries = ledger(gateway, ann)["entries"]
    assert [(e["kind"], e["amount"], e["balance"]) for e in entries] == [
        ("buy_in", 120, GRANT - 120),
        ("grant", GRANT, GRANT),
    ]
    buy_in = entries[0]
    assert (buy_in["debit"], buy_in["credit"]) == (f"wallet:{ann.id}", f"table:{table_id}")
    # leaving pays the stack back
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seated.seat}", seated)
    assert left.status_code == 200, left.get_json()
    assert me(gateway, ann)["balance"] == GRANT
    cash_out = ledger(gateway, ann)["entries"][0]
    assert (cash_out["kind"], cash_out["amount"], cash_out["balance"]) == ("cash_out", 120, GRANT)
    assert cash_out["cause"]["table"] == table_id


def test_a_buy_in_the_wallet_cannot_cover_is_refused_and_changes_nothing(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=10**6)
    ann = gateway.sign_up("ann")
    version = gateway.table(table_id)["version"]
    refused = gateway.call(
        "POST", f"/v1/tables/{table_id}/seats", ann, json={"name": "ann", "buy_in": GRANT + 1}
    )
    assert_problem(refused, 409, "insufficient_funds")
    assert refused.get_json()["balance"] == GRANT
    assert gateway.table(table_id)["version"] == version
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT, 0)
    assert [e["kind"] for e in ledger(gateway, ann)["entries"]] == ["grant"]


def test_a_refused_seat_releases_its_reservation(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=100)
    ann = gateway.sign_up("ann")
    refused = gateway.call(
        "POST", f"/v1/tables/{table_id}/seats", ann, json={"name": "ann", "buy_in": 101}
    )
    assert_problem(refused, 422, "invalid_buy_in")
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT, 0)


def deposit(gateway: Gateway, player: str, body: Any, key: str | None = None) -> Any:
    headers = dict(OPERATOR)
    if key is not None:
        headers["Idempotency-Key"] = key
    return gateway.call(
        "POST", f"/v1/operator/players/{player}/deposits", None, json=body, headers=headers
    )


def test_operator_deposits_and_withdrawals_have_one_effect_each(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    first = deposit(gateway, ann.id, {"amount": 500, "reference": "order-1"}, key="dep-1")
    assert first.status_code == 201, first.get_json()
    assert (first.get_json()["kind"], first.get_json()["balance"]) == ("deposit", GRANT + 500)
    again = deposit(gateway, ann.id, {"amount": 500, "reference": "order-1"}, key="dep-1")
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert_problem(
        deposit(gateway, ann.id, {"amount": 501}, key="dep-1"), 409, "idempotency_key_reused"
    )
    assert me(gateway, ann)["balance"] == GRANT + 500
    path = f"/v1/operator/players/{ann.id}/withdrawals"
    over = gateway.call("POST", path, None, json={"amount": GRANT + 501}, headers=OPERATOR)
    assert_problem(over, 409, "insufficient_funds")
    out = gateway.call("POST", path, None, json={"amount": GRANT + 500}, headers=OPERATOR)
    assert out.status_code == 201, out.get_json()
    assert me(gateway, ann)["balance"] == 0
    page = gateway.call("GET", f"/v1/operator/players/{ann.id}/ledger", None, headers=OPERATOR)
    assert [e["kind"] for e in page.get_json()["entries"]] == ["withdrawal", "deposit", "grant"]


@pytest.mark.parametrize(
    ("amount", "code"),
    [
        (0, "invalid_amount"),
        (-5, "invalid_amount"),
        (10**13, "invalid_amount"),
        (10**40, "invalid_amount"),
        (1.5, "invalid_type"),
        ("5", "invalid_type"),
        (True, "invalid_type"),
        (None, "invalid_type"),
    ],
)
def test_bad_amounts_are_refused_and_change_nothing(
    gateway: Gateway, amount: Any, code: str
) -> None:
    ann = gateway.sign_up("ann")
    assert_problem(deposit(gateway, ann.id, {"amount": amount}), 422, code)
    assert me(gateway, ann)["balance"] == GRANT


def test_the_operator_api_wants_an_operator_and_a_known_player(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    as_player = gateway.call(
        "POST", f"/v1/operator/players/{ann.id}/deposits", ann, json={"amount": 5}
    )
    assert_problem(as_player, 403, "operator_required")
    assert_problem(deposit(gateway, "p_nobody", {"amount": 5}), 404, "player_not_found")
    assert me(gateway, ann)["balance"] == GRANT


def test_a_crash_between_the_seat_and_the_post_is_finished_by_the_sweeper(
    gateway: Gateway,
) -> None:
    service = gateway.app.extensions["cardroom.service"]
    wallets = service.wallets
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann = gateway.sign_up("ann")
    posted = wallets.post
    wallets.post = lambda reservation: None  # the gateway dies after the table's commit
    try:
        gateway.sit(table_id, "ann", 200, ann)
    finally:
        wallets.post = posted
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT - 200, 200)
    assert wallets.audit().clean  # in flight, within its time
    clock = wallets.clock
    wallets.clock = lambda: time.time() + 3600
    try:
        # the sweeper an hour later; the wallet read after it at the time it is (an hour
        # later might be the next day, with a day's grant of its own)
        assert wallets.sweep()["posted"] == 1
    finally:
        wallets.clock = clock
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT - 200, 0)
    assert [e["kind"] for e in ledger(gateway, ann)["entries"]] == ["buy_in", "grant"]


def test_a_reservation_no_table_took_is_voided_by_the_sweeper(gateway: Gateway) -> None:
    wallets = gateway.app.extensions["cardroom.service"].wallets
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann = gateway.sign_up("ann")
    wallets.reserve(ann.id, table_id, "buy_in", 300)  # the gateway dies before the seat
    assert me(gateway, ann)["balance"] == GRANT - 300
    wallets.clock = lambda: time.time() + 3600
    assert wallets.sweep()["voided"] == 1
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT, 0)


def test_a_cash_out_not_relayed_is_relayed_by_the_sweeper(gateway: Gateway) -> None:
    wallets = gateway.app.extensions["cardroom.service"].wallets
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann = gateway.sign_up("ann")
    seated = gateway.sit(table_id, "ann", 50, ann)
    relay = wallets.relay_quietly
    wallets.relay_quietly = lambda table: None  # the gateway dies after the leave's commit
    try:
        left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seated.seat}", seated)
        assert left.status_code == 200
    finally:
        wallets.relay_quietly = relay
    assert me(gateway, ann)["balance"] == GRANT - 50
    report = wallets.audit()
    assert report.clean, report.discrepancies
    assert report.totals["unrelayed"] == 50
    wallets.clock = lambda: time.time() + 3600
    assert wallets.sweep()["relayed"] == 1
    assert wallets.sweep()["relayed"] == 0  # once
    assert me(gateway, ann)["balance"] == GRANT


def test_a_keyed_buy_in_retried_after_the_wallet_was_spent_gets_its_first_answer(
    gateway: Gateway,
) -> None:
    """The replay is answered before any chip is reserved, even when this process holds
    the table, where the seat is free again, and the wallet could not pay again."""
    table_id = gateway.create(min_buy_in=10, max_buy_in=GRANT)
    other = gateway.create(min_buy_in=10, max_buy_in=GRANT)
    ann = gateway.sign_up("ann")
    headers = {"Idempotency-Key": "ann-sits", **ann.auth}
    body = {"name": "ann", "buy_in": 600}
    first = gateway.client.post(f"/v1/tables/{table_id}/seats", json=body, headers=headers)
    assert first.status_code == 201, first.get_json()
    seat = first.get_json()["seat"]
    # ann leaves (this process keeps the table's copy, her seat free again) and the
    # whole wallet goes to another table
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seat}", ann)
    assert left.status_code == 200, left.get_json()
    assert gateway.sit(other, "ann", GRANT, ann).seat
    assert me(gateway, ann)["balance"] == 0
    again = gateway.client.post(f"/v1/tables/{table_id}/seats", json=body, headers=headers)
    assert again.status_code == 201, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json()["seat"] == seat
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (0, 0)


@pytest.mark.parametrize("keyed", [True, False])
def test_racing_copies_of_one_buy_in_have_one_effect(gateway: Gateway, keyed: bool) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann = gateway.sign_up("ann")
    headers = {"Idempotency-Key": "one-seat"} if keyed else {}
    statuses: list[int] = []
    lock = threading.Lock()

    def sit() -> None:
        client = gateway.app.test_client()
        response = client.post(
            f"/v1/tables/{table_id}/seats",
            json={"name": "ann", "buy_in": 100},
            headers={**headers, **ann.auth},
        )
        with lock:
            statuses.append(response.status_code)

    threads = [threading.Thread(target=sit) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(gateway.table(table_id)["seats"]) == 1
    if keyed:
        assert set(statuses) <= {201, 409}
    else:
        assert statuses.count(201) == 1
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT - 100, 0)
    assert [e["kind"] for e in ledger(gateway, ann)["entries"]] == ["buy_in", "grant"]


def test_the_ledger_pages_newest_first(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    for n in range(5):
        assert deposit(gateway, ann.id, {"amount": n + 1}).status_code == 201
    first = gateway.call("GET", "/v1/players/me/ledger?limit=4", ann).get_json()
    assert [e["amount"] for e in first["entries"]] == [5, 4, 3, 2]
    rest = gateway.call("GET", f"/v1/players/me/ledger?limit=4&cursor={first['next']}", ann)
    assert [e["amount"] for e in rest.get_json()["entries"]] == [1, GRANT]
    assert rest.get_json()["next"] is None
    assert_problem(
        gateway.call("GET", "/v1/players/me/ledger?cursor=x", ann), 400, "invalid_cursor"
    )


def test_the_export_walks_every_wallet_and_the_audit_command_agrees(
    gateway: Gateway, ledger_url: str, evaluator_address: str
) -> None:
    players = [gateway.sign_up(name) for name in ("ann", "bo", "cy")]
    seen: list[dict[str, Any]] = []
    cursor = None
    while True:
        query = "?limit=2" + ("" if cursor is None else f"&cursor={cursor}")
        page = gateway.call("GET", f"/v1/operator/ledger{query}", None, headers=OPERATOR)
        assert page.status_code == 200
        assert page.mimetype == "application/jsonl"
        seen += [json.loads(line) for line in page.get_data(as_text=True).splitlines()]
        cursor = page.headers.get("Next-Cursor")
        if cursor is None:
            break
    assert sorted(e["credit"] for e in seen) == sorted(f"wallet:{p.id}" for p in players)
    audit = gateway.call("GET", "/v1/operator/audit", None, headers=OPERATOR).get_json()
    assert audit["clean"], audit
    assert audit["totals"]["house"] == -3 * GRANT
    run = subprocess.run(
        [sys.executable, "-m", "api.runtime.audit"],
        env={"REDIS_URL": ledger_url, "EVALUATOR_ADDR": evaluator_address, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert '"clean": true' in run.stdout


def test_a_rebuy_is_paid_from_the_wallet_with_the_key_or_the_seat_token(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=500, rebuy=True)
    ann = gateway.sign_up("ann")
    seated = gateway.sit(table_id, "ann", 100, ann)
    by_key = gateway.act(table_id, ann, action="rebuy", amount=30)
    assert by_key.status_code == 200, by_key.get_json()
    by_token = gateway.act(table_id, seated, action="rebuy", amount=20)
    assert by_token.status_code == 200, by_token.get_json()
    assert gateway.table(table_id)["seats"][str(seated.seat)]["stack"] == 150
    assert me(gateway, ann)["balance"] == GRANT - 150
    kinds = [(e["kind"], e["amount"]) for e in ledger(gateway, ann)["entries"]]
    assert kinds == [("rebuy", 20), ("rebuy", 30), ("buy_in", 100), ("grant", GRANT)]
    # a rebuy the wallet cannot cover changes nothing
    version = gateway.table(table_id)["version"]
    short = gateway.act(table_id, ann, action="rebuy", amount=GRANT)
    assert short.status_code in (409, 422), short.get_json()
    assert gateway.table(table_id)["version"] == version
    assert (me(gateway, ann)["balance"], me(gateway, ann)["pending"]) == (GRANT - 150, 0)


def test_a_rebuy_past_the_balance_is_insufficient_funds(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=10**6, rebuy=True)
    ann = gateway.sign_up("ann")
    gateway.sit(table_id, "ann", 100, ann)
    short = gateway.act(table_id, ann, action="rebuy", amount=GRANT)
    assert_problem(short, 409, "insufficient_funds")
    assert short.get_json()["balance"] == GRANT - 100


def test_a_play_money_wallet_is_topped_up_once_a_day(gateway: Gateway) -> None:
    wallets = gateway.app.extensions["cardroom.service"].wallets
    table_id = gateway.create(min_buy_in=10, max_buy_in=10**6)
    ann = gateway.sign_up("ann")
    gateway.sit(table_id, "ann", 9_000, ann)
    assert me(gateway, ann)["balance"] == GRANT - 9_000  # the grant was the day's top-up
    wallets.clock = lambda: time.time() + 86_400  # the next day
    assert me(gateway, ann)["balance"] == GRANT
    assert me(gateway, ann)["balance"] == GRANT  # once
    top_up = ledger(gateway, ann)["entries"][0]
    assert (top_up["kind"], top_up["amount"], top_up["balance"]) == ("top_up", 9_000, GRANT)
    assert (top_up["debit"], top_up["credit"]) == ("house", f"wallet:{ann.id}")
    # a wallet at or over the floor gets nothing
    wallets.clock = lambda: time.time() + 2 * 86_400
    assert me(gateway, ann)["balance"] == GRANT
    assert [e["kind"] for e in ledger(gateway, ann)["entries"]][:2] == ["top_up", "buy_in"]


def test_a_table_closed_for_idleness_pays_every_seat_back(
    ledger_url: str, evaluator_address: str
) -> None:
    app = make_app(ledger_url, evaluator_address, table_idle_seconds=1)
    gateway = Gateway(app, app.test_client())
    try:
        table_id = gateway.create(min_buy_in=10, max_buy_in=500)
        ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
        gateway.sit(table_id, "ann", 300, ann)
        gateway.sit(table_id, "bo", 200, bo)
        assert me(gateway, ann)["balance"] == GRANT - 300
        # the clock closes the table, cashing every seat out to its wallet
        wait_for(lambda: gateway.call("GET", f"/v1/tables/{table_id}").status_code == 410)
        wait_for(
            lambda: me(gateway, ann)["balance"] == GRANT and me(gateway, bo)["balance"] == GRANT
        )
        kinds = [(e["kind"], e["amount"]) for e in ledger(gateway, bo)["entries"]]
        assert kinds == [("cash_out", 200), ("buy_in", 200), ("grant", GRANT)]
    finally:
        close_app(app)
    assert_ledger_clean(ledger_url)


def test_a_closed_table_s_reserve_goes_to_the_house(
    ledger_url: str, evaluator_address: str
) -> None:
    app = make_app(ledger_url, evaluator_address, table_idle_seconds=2)
    gateway = Gateway(app, app.test_client())
    try:
        # three antes of 1 against a cap of 2: one chip goes to the reserve
        table_id = gateway.create(
            ante=1, cap=2, cap_mode="reserve", turn_seconds=1, deal_pause_seconds=0.2
        )
        seats = [gateway.sit(table_id, name, 50, gateway.sign_up(name)) for name in "abc"]
        assert gateway.act(table_id, seats[0], action="start").status_code == 200
        reserve = gateway.table(table_id)["reserve"]
        assert reserve > 0
        wait_for(lambda: gateway.call("GET", f"/v1/tables/{table_id}").status_code == 410)
        report = wait_for(
            lambda: (
                (r := app.extensions["cardroom.service"].wallets.audit()).totals["unrelayed"] == 0
                and r
            )
        )
        assert report.clean, report.discrepancies
        assert report.totals["tables"] == 0
        # the house took the reserve back, in its own ledger
        wallets = app.extensions["cardroom.service"].wallets
        (entry,) = wallets.store.entries("house", 0, wallets.store.entry_count("house") - 1)
        assert (entry["kind"], entry["debit"]) == ("reserve_to_house", f"table:{table_id}")
        assert entry["amount"] >= reserve  # the deal may have added to it before the close
    finally:
        close_app(app)
    assert_ledger_clean(ledger_url)
