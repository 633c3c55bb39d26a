"""Players' deposit, buy-in and loss limits, on a real Redis (and a Redis Cluster).

Over HTTP: a player sets and confirms limits, an operator sets theirs, the lowest
applies, and a deposit, buy-in or rebuy past one is refused 409 limit_reached naming
it. Concurrently: however many requests race, the chips moved never pass a limit,
because the wallet's script checks the limit in the same atomic step as the transfer.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.adapters.store import connect
from api.adapters.wallets import WalletStore
from api.errors import ApiError
from api.service.player_limits import PlayerLimits
from api.service.wallets import WalletService
from cardroom_client import CardroomError, Client
from tests.integration.test_client import serve
from tests.support.gateway import Gateway
from tests.support.ledger import audited_gateway
from tests.support.play import wait_for
from tests.support.problems import assert_problem
from tests.support.tables_api import Account

OPERATOR_KEY = "op-limits-test-key-0123456789abcdef"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
GRANT = 10_000


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway with an operator key and no cooling period; the audit is clean after."""
    with audited_gateway(
        redis_url, evaluator_address, operator_keys=(OPERATOR_KEY,), limit_cooling_seconds=0
    ) as gateway:
        yield gateway


def set_limit(gateway: Gateway, who: Account | None, body: dict[str, Any]) -> Any:
    if who is None:
        path = "/v1/operator/players/{}/limits".format(body.pop("player"))
        return gateway.call("POST", path, headers=OPERATOR, json=body)
    return gateway.call("POST", "/v1/players/me/limits", who, json=body)


def slot(view: dict[str, Any], kind: str, window: str) -> dict[str, Any]:
    return next(x for x in view["limits"] if (x["kind"], x["window"]) == (kind, window))


def deposit(gateway: Gateway, player: Account, amount: int) -> Any:
    path = f"/v1/operator/players/{player.id}/deposits"
    return gateway.call("POST", path, headers=OPERATOR, json={"amount": amount})


def test_a_deposit_past_the_player_s_limit_is_refused_naming_it(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    body = {"kind": "deposit", "window": "24h", "amount": 500}
    answer = set_limit(gateway, ann, body)
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["applied"] is True
    assert answer.headers["Cache-Control"] == "no-store"
    assert deposit(gateway, ann, 400).status_code == 201
    refused = assert_problem(deposit(gateway, ann, 200), 409, "limit_reached")
    assert refused["limit"] == {"kind": "deposit", "window": "24h", "amount": 500}
    assert refused["left"] == 100
    assert refused["resets_at"] > 0
    assert "500" in refused["detail"]
    assert deposit(gateway, ann, 100).status_code == 201
    view = gateway.call("GET", "/v1/players/me/limits", ann).get_json()
    assert (slot(view, "deposit", "24h")["used"], slot(view, "deposit", "24h")["left"]) == (500, 0)
    # in the player's language
    hungarian = deposit(gateway, ann, 1)
    assert hungarian.status_code == 409
    said = gateway.call(
        "POST",
        f"/v1/operator/players/{ann.id}/deposits",
        headers={**OPERATOR, "Accept-Language": "hu"},
        json={"amount": 1},
    ).get_json()
    assert said["title"] == "Limit elérve"


def test_an_increase_waits_for_its_confirmation(gateway: Gateway) -> None:
    bo = gateway.sign_up("bo")
    set_limit(gateway, bo, {"kind": "buy_in", "window": "7d", "amount": 100})
    raised = set_limit(gateway, bo, {"kind": "buy_in", "window": "7d", "amount": 300})
    assert raised.get_json()["applied"] is False
    waiting = slot(raised.get_json(), "buy_in", "7d")
    assert (waiting["amount"], waiting["pending"]["amount"]) == (100, 300)
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    seat = {"name": "bo", "buy_in": 200}
    refused = gateway.json_call("POST", f"/v1/tables/{table_id}/seats", bo, seat)
    assert_problem(refused, 409, "limit_reached")
    confirm = {"kind": "buy_in", "window": "7d"}
    confirmed = gateway.call("POST", "/v1/players/me/limits/confirmations", bo, json=confirm)
    assert confirmed.status_code == 200, confirmed.get_json()
    assert slot(confirmed.get_json(), "buy_in", "7d")["amount"] == 300
    again = gateway.call("POST", "/v1/players/me/limits/confirmations", bo, json=confirm)
    assert_problem(again, 409, "nothing_to_confirm")
    taken = gateway.json_call("POST", f"/v1/tables/{table_id}/seats", bo, seat)
    assert taken.status_code == 201, taken.get_json()


def test_the_operator_s_lower_limit_applies_and_losses_count_cash_outs(gateway: Gateway) -> None:
    cy = gateway.sign_up("cy")
    set_limit(gateway, cy, {"kind": "loss", "window": "24h", "amount": 1_000})
    operator = set_limit(
        gateway, None, {"player": cy.id, "kind": "loss", "window": "24h", "amount": 150}
    )
    assert operator.status_code == 200, operator.get_json()
    limit = slot(operator.get_json(), "loss", "24h")
    assert (limit["amount"], limit["player"], limit["operator"]) == (150, 1_000, 150)
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    seated = gateway.sit(table_id, "cy", 100, cy)
    # leaving with the 100 cashes it out: nothing lost, the whole limit is there again
    assert (
        gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seated.seat}", cy).status_code == 200
    )
    again = gateway.sit(table_id, "cy", 150, cy)
    body = {"action": "rebuy", "amount": 10}
    assert_problem(gateway.act(table_id, again, **body), 409, "limit_reached")
    seen = gateway.call("GET", f"/v1/operator/players/{cy.id}/limits", headers=OPERATOR)
    assert slot(seen.get_json(), "loss", "24h")["used"] == 150


def test_limits_are_checked_and_refused_as_such(gateway: Gateway) -> None:
    dee = gateway.sign_up("dee")
    for body, field in (
        ({"kind": "stake", "window": "24h", "amount": 1}, "kind"),
        ({"kind": "loss", "window": "1h", "amount": 1}, "window"),
        ({"kind": "loss", "window": "24h", "amount": -1}, "amount"),
    ):
        assert_problem(set_limit(gateway, dee, body), 422, None, field)
    assert_problem(gateway.call("GET", "/v1/players/me/limits"), 401, "missing_token")
    path = "/v1/operator/players/p_000000000000000000000000/limits"
    assert_problem(gateway.call("GET", path, headers=OPERATOR), 404, "player_not_found")
    assert_problem(gateway.call("GET", f"/v1/operator/players/{dee.id}/limits", dee), 403)


# ------------------------------------------------------------------ concurrent requests


def _race(url: str, cluster: bool, limit: int, amounts: list[int], deposits: bool) -> None:
    """Fire every amount at once at one player's wallet with `limit` set; what was taken
    never passes it, and every refusal is a limit's (there are chips enough)."""
    client = connect(url, cluster)
    try:
        store = WalletStore(client)
        wallets = WalletService(store)
        player = "p_" + secrets.token_hex(12)
        if not deposits:  # chips enough for every buy-in (a deposit limit would count them)
            wallets.move(player, "deposit", 10**9, "seed", None, None)
        kind = "deposit" if deposits else "buy_in"
        PlayerLimits(store).set(player, {"kind": kind, "window": "24h", "amount": limit}, False)
        barrier = threading.Barrier(len(amounts))

        def one(amount: int) -> tuple[int, Any, str | None]:
            barrier.wait()
            try:
                if deposits:
                    wallets.move(player, "deposit", amount, "op", None, None)
                    return amount, None, None
                return amount, wallets.reserve(player, "t_race", "buy_in", amount), None
            except ApiError as error:
                return 0, None, error.code

        with ThreadPoolExecutor(len(amounts)) as pool:
            done = list(pool.map(one, amounts))
        assert {code for _, _, code in done} <= {None, "limit_reached"}
        taken = sum(amount for amount, _, _ in done)
        assert taken <= limit
        # a refused request would have passed the limit had it come after the others
        refused = [a for a, (took, _, _) in zip(amounts, done, strict=True) if took == 0]
        assert all(taken + amount > limit for amount in refused)
        for _, reservation, _ in done:
            if reservation is not None:
                wallets.void(reservation)
        used = PlayerLimits(store).view(player)["limits"]
        counted = next(x for x in used if (x["kind"], x["window"]) == (kind, "24h"))["used"]
        assert counted == (taken if deposits else 0)  # a voided buy-in spent nothing
    finally:
        client.close()


RACES = st.tuples(
    st.integers(1, 500),
    st.lists(st.integers(1, 200), min_size=2, max_size=12),
    st.booleans(),
)


@pytest.mark.parametrize("cluster", [False, True], ids=["redis", "cluster"])
@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(race=RACES)
def test_concurrent_requests_never_pass_a_limit(
    request: pytest.FixtureRequest, cluster: bool, race: Any
) -> None:
    url = request.getfixturevalue("redis_cluster" if cluster else "redis_url")
    limit, amounts, deposits = race
    _race(url, cluster, limit, amounts, deposits)


def test_the_sdk_sets_confirms_and_reads_limits(redis_url: str, evaluator_address: str) -> None:
    with (
        serve(
            redis_url, evaluator_address, operator_keys=(OPERATOR_KEY,), limit_cooling_seconds=0
        ) as url,
        Client(url, timeout=20) as anonymous,
    ):
        created = anonymous.create_player("eve")
        eve = anonymous.with_credential(created.key)
        operator = anonymous.with_credential(OPERATOR_KEY)
        assert eve.set_my_limit("deposit", "7d", 300).applied
        raised = eve.set_my_limit("deposit", "7d", 600)
        assert raised.applied is False
        assert raised.of("deposit", "7d").pending is not None
        assert eve.confirm_my_limit("deposit", "7d").of("deposit", "7d").amount == 600
        operator.set_player_limit(created.id, "deposit", "7d", 250)
        operator.deposit(created.id, 200)
        with pytest.raises(CardroomError) as refused:
            operator.deposit(created.id, 100)
        assert (refused.value.status, refused.value.code) == (409, "limit_reached")
        seen = operator.player_limits(created.id).of("deposit", "7d")
        assert (seen.amount, seen.used, seen.left) == (250, 200, 50)
        assert eve.my_limits().of("deposit", "7d") == seen


# ------------------------------------------------------------------ exclusions


def test_a_time_out_leaves_every_seat_and_refuses_seats_and_deposits(gateway: Gateway) -> None:
    fay, gus, hal = gateway.sign_up("fay"), gateway.sign_up("gus"), gateway.sign_up("hal")
    quiet = gateway.create(min_buy_in=10, max_buy_in=500)
    busy = gateway.create(turn_seconds=1, deal_pause_seconds=60)
    gateway.sit(quiet, "fay", 100, fay)
    seats = [gateway.sit(busy, a.name, 100, a) for a in (fay, gus, hal)]
    assert gateway.act(busy, seats[1], action="start").status_code == 200

    taken = gateway.call(
        "POST", "/v1/players/me/exclusions", fay, json={"kind": "time_out", "days": 7}
    )
    assert taken.status_code == 201, taken.get_json()
    body = taken.get_json()
    assert (body["exclusion"]["kind"], body["active"]) == ("time_out", True)
    by_table = {seat["table_id"]: seat for seat in body["seats"]}
    assert (by_table[quiet]["left"], by_table[quiet]["cashed_out"]) == (True, 100)
    assert (by_table[busy]["left"], by_table[busy]["leaving"]) == (False, True)

    refused = gateway.json_call("POST", f"/v1/tables/{quiet}/seats", fay, {"buy_in": 50})
    assert assert_problem(refused, 409, "player_excluded")["until"] > 0
    assert_problem(deposit(gateway, fay, 10), 409, "player_excluded")
    shorter = {"kind": "time_out", "days": 2}
    assert_problem(
        gateway.call("POST", "/v1/players/me/exclusions", fay, json=shorter),
        409,
        "exclusion_shorter",
    )
    bad = {"kind": "time_out", "days": 31}
    assert_problem(gateway.call("POST", "/v1/players/me/exclusions", fay, json=bad), 422)
    seen = gateway.call("GET", "/v1/players/me/exclusions", fay).get_json()
    assert seen["active"] is True
    listed = gateway.call("GET", "/v1/operator/exclusions", headers=OPERATOR).get_json()["players"]
    assert [entry["player"] for entry in listed] == [fay.id]

    # the deal plays out by its deadlines; then the seat is gone, its chips in the wallet
    def gone() -> bool:
        return all(s["name"] != "fay" for s in gateway.table(busy)["seats"].values())

    wait_for(gone, seconds=60)
    held = gateway.call("GET", "/v1/players/me/seats", fay).get_json()["seats"]
    assert held == []


def test_the_sdk_takes_a_time_out_and_an_operator_lists_it(
    redis_url: str, evaluator_address: str
) -> None:
    with (
        serve(redis_url, evaluator_address, operator_keys=(OPERATOR_KEY,)) as url,
        Client(url, timeout=20) as anonymous,
    ):
        created = anonymous.create_player("ivy")
        ivy = anonymous.with_credential(created.key)
        assert ivy.my_exclusion() is None
        taken = ivy.take_time_out(3)
        assert (taken.kind, taken.until) == ("time_out", taken.since + 3 * 86_400)
        forever = ivy.exclude_myself()
        assert (forever.kind, forever.until) == ("self_exclusion", None)
        assert ivy.my_exclusion() == forever
        listed = anonymous.with_credential(OPERATOR_KEY).excluded_players()
        assert [(e.player, e.until) for e in listed] == [(created.id, None)]


# ------------------------------------------------------------------ the operator's view


def test_the_operator_sees_a_player_s_limits_exclusion_and_activity(gateway: Gateway) -> None:
    jo = gateway.sign_up("jo")
    set_limit(gateway, jo, {"kind": "loss", "window": "30d", "amount": 800})
    assert deposit(gateway, jo, 300).status_code == 201
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    seated = gateway.sit(table_id, "jo", 120, jo)
    path = f"/v1/tables/{table_id}/seats/{seated.seat}"
    assert gateway.call("DELETE", path, jo).status_code == 200

    seen = gateway.call("GET", f"/v1/operator/players/{jo.id}?days=7", headers=OPERATOR)
    assert seen.status_code == 200, seen.get_json()
    assert seen.headers["Cache-Control"] == "no-store"
    body = seen.get_json()
    assert (body["player"], body["name"], body["excluded"]) == (jo.id, "jo", False)
    assert body["balance"] == GRANT + 300
    assert slot(body, "loss", "30d")["amount"] == 800
    days = body["activity"]
    assert len(days) == 7
    today = days[0]
    assert (today["deposits"], today["buy_ins"], today["cash_outs"], today["net"]) == (
        300,
        120,
        120,
        0,
    )
    assert today["seconds_played"] >= 0
    assert_problem(gateway.call("GET", f"/v1/operator/players/{jo.id}", jo), 403)
    bad = gateway.call("GET", f"/v1/operator/players/{jo.id}?days=91", headers=OPERATOR)
    assert_problem(bad, 400, "invalid_parameter")


def test_the_sdk_reads_the_operator_s_view(redis_url: str, evaluator_address: str) -> None:
    with (
        serve(redis_url, evaluator_address, operator_keys=(OPERATOR_KEY,)) as url,
        Client(url, timeout=20) as anonymous,
    ):
        created = anonymous.create_player("kit")
        operator = anonymous.with_credential(OPERATOR_KEY)
        operator.deposit(created.id, 40)
        seen = operator.player_overview(created.id, days=2)
        assert [day["deposits"] for day in seen["activity"]] == [40, 0]


# ------------------------------------------------------------------ sessions


def test_reality_checks_and_the_session_limit_reach_the_player_s_seat(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    body = {"limit_minutes": 30, "reality_check_minutes": 20}
    set_to = gateway.call("POST", "/v1/players/me/session", ann, json=body)
    assert set_to.status_code == 200, set_to.get_json()
    assert (set_to.get_json()["limit_minutes"], set_to.get_json()["started"]) == (30, None)
    bad = gateway.call("POST", "/v1/players/me/session", ann, json={"limit_minutes": 0})
    assert_problem(bad, 422, "invalid_session", "limit_minutes")
    # the player's session began an hour ago: its checks and its limit are due at once
    services = gateway.app.extensions["cardroom.services"]
    services.limits.clock = lambda: time.time() - 3600
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    seat = gateway.sit(table_id, "ann", 100, ann)
    gateway.sit(table_id, "bo", 100)

    def told() -> list[dict[str, Any]] | None:
        # the player's key reads their seat's private events, also once it has left
        events = gateway.call("GET", f"/v1/tables/{table_id}/events", ann).get_json()["events"]
        mine = [e for e in events if e["type"] in ("reality_check", "session_limit")]
        return mine if len(mine) == 2 else None

    kinds = wait_for(told, seconds=60)
    check, limit = kinds
    assert check["type"] == "reality_check"
    assert (check["data"]["seat"], check["data"]["net"]) == (seat.seat, 0)
    assert check["data"]["played_seconds"] >= 3600
    assert limit["type"] == "session_limit"
    public = gateway.events(table_id)["events"]
    assert not [e for e in public if e["type"] in ("reality_check", "session_limit")]
    # the seat left (no deal running) and its chips went back to the wallet
    assert all(s["name"] != "ann" for s in gateway.table(table_id)["seats"].values())

    # the wallet refuses a new seat once the session's time is up, until a day after
    services.limits.clock = time.time
    client = services.store.client
    client.hset(f"player:{{{ann.id}}}:limits", "session_started", repr(time.time() - 3600))
    refused = gateway.json_call("POST", f"/v1/tables/{table_id}/seats", ann, {"buy_in": 50})
    assert assert_problem(refused, 409, "session_limit_reached")["until"] > time.time()
    seen = gateway.call("GET", "/v1/players/me/session", ann).get_json()
    assert seen["blocked_until"] is not None


def test_a_looser_session_setting_waits_and_is_confirmed(gateway: Gateway) -> None:
    cy = gateway.sign_up("cy")
    path = "/v1/players/me/session"

    def ask(body: dict[str, Any]) -> dict[str, Any]:
        answer = gateway.call("POST", path, cy, json=body)
        assert answer.status_code == 200, answer.get_json()
        assert answer.headers["Cache-Control"] == "no-store"
        return dict(answer.get_json())

    def confirm(setting: str) -> Any:
        return gateway.call("POST", f"{path}/confirmations", cy, json={"setting": setting})

    first = ask({"limit_minutes": 60, "reality_check_minutes": 20})
    assert (first["applied"], first["pending"]) == (True, {})
    # a longer limit waits; the limit stays as it was, and the wallet's with it
    services = gateway.app.extensions["cardroom.services"]
    services.limits.cooling = 3600.0
    longer = ask({"limit_minutes": 120})
    assert (longer["applied"], longer["limit_minutes"], longer["reality_check_minutes"]) == (
        False,
        60,
        20,
    )
    waiting = longer["pending"]["limit_minutes"]
    assert waiting["value"] == 120
    assert waiting["from_at"] == pytest.approx(waiting["asked_at"] + 3600)
    client = services.store.client
    assert client.hget(f"player:{{{cy.id}}}:limits", "session_limit") == "3600"
    early = confirm("limit_minutes")
    assert assert_problem(early, 409, "limit_cooling")["from_at"] == waiting["from_at"]
    assert_problem(confirm("reality_check_minutes"), 409, "nothing_to_confirm")
    assert_problem(confirm("turns"), 422, "invalid_session", "setting")
    # a stricter limit asked meanwhile applies at once and cancels the longer one
    shorter = ask({"limit_minutes": 45})
    assert (shorter["applied"], shorter["limit_minutes"], shorter["pending"]) == (True, 45, {})
    assert client.hget(f"player:{{{cy.id}}}:limits", "session_limit") == "2700"
    # turning the checks off waits too; once cooled (no cooling here), confirmed
    services.limits.cooling = 0.0
    off = ask({"reality_check_minutes": None})
    assert (off["applied"], off["reality_check_minutes"]) == (False, 20)
    assert off["pending"]["reality_check_minutes"]["value"] is None
    confirmed = confirm("reality_check_minutes")
    assert confirmed.status_code == 200, confirmed.get_json()
    body = confirmed.get_json()
    assert (body["reality_check_minutes"], body["limit_minutes"], body["pending"]) == (None, 45, {})
    assert gateway.call("GET", path, cy).get_json()["reality_check_minutes"] is None


def test_the_sdk_sets_the_session(redis_url: str, evaluator_address: str) -> None:
    with serve(redis_url, evaluator_address) as url, Client(url, timeout=20) as anonymous:
        mia = anonymous.with_credential(anonymous.create_player("mia").key)
        assert mia.my_session()["limit_minutes"] is None
        assert mia.set_my_session(90, None)["limit_minutes"] == 90
        assert mia.my_session()["reality_check_minutes"] is None
        # a longer limit waits a day (the default cooling), then is confirmed
        longer = mia.set_my_session(120, None)
        assert (longer["applied"], longer["limit_minutes"]) == (False, 90)
        assert longer["pending"]["limit_minutes"]["value"] == 120
        with pytest.raises(CardroomError) as early:
            mia.confirm_my_session("limit_minutes")
        assert (early.value.status, early.value.code) == (409, "limit_cooling")
