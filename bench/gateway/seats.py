"""Buy-ins and cash-outs: what taking a seat and leaving it, cashed out, take.

Part of the default `make bench-gateway` run (`--seats`: of the default parts, this one
alone). Each round gives every one of the 32 clients `seat_tables` fresh Guts tables
of its own, each created by a player of its own who does not sit, and a fresh player
for every seat of them (setup, not timed; each player's balance read then). Then, one
batch after the other, from the 32 keep-alive clients in a closed loop:

- **buy-ins**: each client fills its tables, seat after seat, each seat a new player
  (`POST /v1/tables/{id}/seats` with the player's key, 100,000 chips). With wallets
  that is a pointer's `ZADD`, the wallet's reservation (Lua), the table's commit and
  the post (Lua);
- **cash-outs**: each client leaves every seat it took (`DELETE
  /v1/tables/{id}/seats/{n}` with the player's key). No deal was started, so each seat
  is cashed out at once: the table's commit writes the cash-out and the gateway
  relays it to the wallet (Lua and an `HDEL`) before it answers, so the leave's
  answer is when the chips are back in the wallet. Right after each answer the client
  reads `GET /v1/players/me` and checks that the balance is what it was before the
  buy-in, nothing pending (not timed in the leave's latency; timed from the leave's
  sending to that read's answer as "seen back"). A gateway without wallets (a
  revision older than them, `--against REV`) has no balance to check.

The same two batches follow from one client alone (`ALONE_TABLES` times as many tables
as each of the 32 had, one request at a time): the latency of a buy-in's and a
cash-out's chain of round trips with no queue in front of it. Each batch gives the p50
and p99 of its answers while every client was busy (`busy_window`), its rate and the
CPU each process spent per request (a cash-out's includes its check read); the
figures are medians over the rounds with the range.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.gateway.client import Connection, create_table, in_threads, sign_up
from bench.gateway.load import (
    JobResult,
    Load,
    Request,
    busy_window,
    in_client_threads,
    sleep_until,
)
from bench.gateway.plan import BUY_IN, CLIENTS, GUTS_OPTIONS, Plan
from bench.gateway.service import Service
from bench.measure import CpuMeter, format_spread, percentile, spread

KINDS = ("buy_in", "cash_out")


class NoPlayersError(RuntimeError):
    """The gateway has no players (a revision older than them): nobody can buy in."""


@dataclass(frozen=True)
class SeatPlan:
    """A seat one client buys into and then leaves, as one fresh player."""

    table_id: str
    number: int  # the seat the buy-in takes: a fresh table's seats fill from 1 in order
    key: str
    balance: int | None  # the wallet's balance before the buy-in (None: no wallets)


def _balance(answer: Any) -> int | None:
    """The balance in a `GET /v1/players/me` answer (None: a gateway without wallets)."""
    if isinstance(answer, dict) and isinstance(answer.get("balance"), int):
        return int(answer["balance"])
    return None


def seat_plans(
    url: str, clients: int, tables_per_client: int, options: dict[str, Any]
) -> list[list[SeatPlan]]:
    """For each client, fresh tables of its own and a fresh player for each of their
    `max_players` seats (setup, not measured)."""
    seats = int(options["max_players"])

    def one(conn: Connection, client: int) -> list[SeatPlan]:
        mine = []
        for _ in range(tables_per_client):
            # a host of its own for each table: a player's open tables are counted
            host = sign_up(conn, f"host{client}")
            if host is None:
                raise NoPlayersError("the gateway has no players: a buy-in needs a player's key")
            table_id = create_table(conn, "guts", host, **options)
            for number in range(1, seats + 1):
                key = sign_up(conn, f"s{number}")
                assert key is not None
                before = _balance(conn.expect("GET", "/v1/players/me", token=key))
                mine.append(SeatPlan(table_id, number, key, before))
        return mine

    return in_threads(url, clients, one)


def buy_in_requests(plans: list[list[SeatPlan]], buy_in: int) -> list[list[Request]]:
    """Each client's buy-ins, in its seats' order."""
    return [
        [
            Request(
                "POST",
                f"/v1/tables/{seat.table_id}/seats",
                {"name": f"s{seat.number}", "buy_in": buy_in},
                seat.key,
                expect=201,
            )
            for seat in mine
        ]
        for mine in plans
    ]


def cash_outs(
    base_url: str, plans: list[list[SeatPlan]], start_at: float, buy_in: int
) -> JobResult:
    """One thread per plan: leave each seat, then read the player to check the balance.

    `latencies` are the leaves' (sent -> answered); `reads` the check reads'; `deliveries`
    the time from sending a leave to the answer of the read that saw the balance back
    (only where there is a balance). A leave not cashed out at once, or a balance not
    back, is an error.
    """

    def worker(plan: list[SeatPlan]) -> JobResult:
        conn = Connection(base_url)
        mine: list[tuple[float, float]] = []
        seen: list[tuple[float, float]] = []
        reads: list[tuple[float, float]] = []
        errors: Counter[str] = Counter()
        prepared = [
            (
                seat,
                Connection.encode(None, seat.key),
                Connection.encode(None, seat.key),
            )
            for seat in plan
        ]
        conn.call("GET", "/healthz")  # open the connection before the clock starts
        sleep_until(start_at)
        for seat, (_, leave_headers), (_, me_headers) in prepared:
            path = f"/v1/tables/{seat.table_id}/seats/{seat.number}"
            sent = time.monotonic()
            try:
                status, data = conn.send("DELETE", path, None, leave_headers)
            except OSError as error:
                errors[type(error).__name__] += 1
                continue
            done = time.monotonic()
            mine.append((done, done - sent))
            answer = Connection.decode(data)
            if status != 200:
                code = answer.get("code") if isinstance(answer, dict) else None
                errors[f"{status} {code}"] += 1
                continue
            if not answer.get("left") or answer.get("cashed_out") != buy_in:
                errors["not cashed out at once"] += 1
            asked = time.monotonic()
            try:
                status, data = conn.send("GET", "/v1/players/me", None, me_headers)
            except OSError as error:
                errors[f"check: {type(error).__name__}"] += 1
                continue
            checked = time.monotonic()
            reads.append((checked, checked - asked))
            me = Connection.decode(data)
            if status != 200:
                errors[f"check: {status}"] += 1
            elif seat.balance is not None:
                if _balance(me) != seat.balance or me.get("pending") != 0:
                    errors["balance not back after the leave"] += 1
                else:
                    seen.append((checked, checked - sent))
        conn.close()
        return JobResult(
            latencies=mine,
            errors=errors,
            last_end=time.monotonic(),
            client_ends=[mine[-1][0] if mine else start_at],
            deliveries=seen,
            reads=reads,
        )

    return in_client_threads(worker, plans, start_at)


def seat_rounds(
    service: Service, load: Load, plan: Plan, log: Callable[[str], None]
) -> dict[str, Any]:
    """`plan.rounds` rounds of buy-ins and then cash-outs on fresh tables and players:
    from the 32 clients at once, then from one client alone."""
    groups = {
        "concurrent": (CLIENTS, plan.seat_tables),
        "alone": (1, ALONE_TABLES * plan.seat_tables),
    }
    measured: dict[str, dict[str, list[Any]]] = {group: {} for group in groups}
    errors: Counter[str] = Counter()
    checked = 0
    seats = dict.fromkeys(groups, 0)
    meter = CpuMeter(service)
    for round_number in range(plan.rounds):
        for group, (clients, tables) in groups.items():
            plans = seat_plans(service.url, clients, tables, GUTS_OPTIONS)
            seats[group] += sum(len(mine) for mine in plans)
            checked += sum(seat.balance is not None for mine in plans for seat in mine)
            figures = _batches(service.url, load, meter, plans, BUY_IN)
            for name, value in figures.items():
                if name == "errors":
                    errors.update({f"{group}: {k}": v for k, v in value.items()})
                else:
                    measured[group].setdefault(name, []).append(value)
        log(
            f"  round {round_number + 1}: "
            + "; ".join(
                f"{group} "
                + ", ".join(
                    f"{kind} p50 {measured[group][f'{kind}_p50_ms'][-1]:.1f}"
                    f" / p99 {measured[group][f'{kind}_p99_ms'][-1]:.1f} ms"
                    for kind in KINDS
                )
                for group in groups
            )
        )
    return {
        group: _summary(measured[group], seats[group] // max(1, plan.rounds), clients)
        for group, (clients, _) in groups.items()
    } | {"balances_checked": checked, "errors": dict(errors)}


# the one client's tables a round per table of each of the 32 clients' (each of
# PLAYERS seats), one seat after the other
ALONE_TABLES = 6


def _batches(
    url: str, load: Load, meter: CpuMeter, plans: list[list[SeatPlan]], buy_in: int
) -> dict[str, Any]:
    """The buy-ins of `plans`, then their cash-outs; each batch's figures."""
    figures: dict[str, Any] = {"errors": Counter()}
    for kind in KINDS:
        meter.start()
        if kind == "buy_in":
            result = load.requests(url, buy_in_requests(plans, buy_in), None)
        else:
            result = load.run(cash_outs, url, plans, buy_in)
            for name, timed in (("cash_out_seen", result.deliveries), ("check", result.reads)):
                seconds = [elapsed for _, elapsed in timed]
                figures[f"{name}_p50_ms"] = percentile(seconds, 0.5) * 1000
                figures[f"{name}_p99_ms"] = percentile(seconds, 0.99) * 1000
        meter.stop(result.cpu_seconds)
        spent = meter.per_request(len(result.latencies))
        latencies, window = busy_window(result, None)
        figures[f"{kind}_per_second"] = len(latencies) / window
        figures[f"{kind}_p50_ms"] = percentile(latencies, 0.5) * 1000
        figures[f"{kind}_p99_ms"] = percentile(latencies, 0.99) * 1000
        figures[f"{kind}_cpu_us"] = spent
        figures["errors"].update({f"{kind}: {k}": v for k, v in result.errors.items()})
    return figures


def _summary(measured: dict[str, list[Any]], seats: int, clients: int) -> dict[str, Any]:
    """Medians and ranges over the rounds of one group."""
    summary: dict[str, Any] = {"clients": clients, "seats_per_round": seats}
    for kind in KINDS:
        summary[kind] = {
            "per_second": spread(measured[f"{kind}_per_second"]),
            "p50_ms": spread(measured[f"{kind}_p50_ms"]),
            "p99_ms": spread(measured[f"{kind}_p99_ms"]),
            "cpu_us_per_request": {
                role: statistics.median(sample[role] for sample in measured[f"{kind}_cpu_us"])
                for role in measured[f"{kind}_cpu_us"][0]
            },
        }
    for name in ("cash_out_seen", "check"):
        summary[name] = {
            "p50_ms": spread(measured[f"{name}_p50_ms"]),
            "p99_ms": spread(measured[f"{name}_p99_ms"]),
        }
    return summary


def seat_figures(seated: dict[str, Any]) -> dict[str, float]:
    """The figures of an alternating run (`--against`): medians over its rounds."""
    figures = {}
    for group, suffix in (("concurrent", ""), ("alone", "_alone")):
        for kind in KINDS:
            row = seated[group][kind]
            figures[f"{kind}{suffix}_p50_ms"] = row["p50_ms"]["median"]
            figures[f"{kind}{suffix}_p99_ms"] = row["p99_ms"]["median"]
            figures[f"{kind}{suffix}_gateway_cpu_us"] = row["cpu_us_per_request"]["gateway"]
        figures[f"check{suffix}_p50_ms"] = seated[group]["check"]["p50_ms"]["median"]
    figures["seat_errors"] = float(sum(seated["errors"].values()))
    return figures


def report(seated: dict[str, Any]) -> None:
    """Print the buy-ins' and cash-outs' table."""
    print("\nbuy-ins and cash-outs, each seat a fresh player at a table of its client's own")
    print(f"{'request':40} {'requests/s':>20} {'p50 ms':>20} {'p99 ms':>20} {'gateway us':>11}")
    labels = {
        "buy_in": "buy-in: POST /v1/tables/{id}/seats",
        "cash_out": "cash-out: DELETE .../seats/{n}",
    }
    for group in ("concurrent", "alone"):
        rows = seated[group]
        print(
            f"{rows['clients']} client(s) at once, {rows['seats_per_round']} seats a round"
            + (" (the cash-outs' CPU includes their check reads)" if group == "concurrent" else "")
        )
        for kind, label in labels.items():
            row = rows[kind]
            print(
                f"  {label:38} {format_spread(row['per_second']):>20}"
                f" {format_spread(row['p50_ms'], 1):>20} {format_spread(row['p99_ms'], 1):>20}"
                f" {row['cpu_us_per_request']['gateway']:11,.0f}"
            )
        for name, label in (
            ("check", "its check: GET /v1/players/me"),
            ("cash_out_seen", "leave sent -> balance read back"),
        ):
            row = rows[name]
            print(
                f"  {label:38} {'':>20} {format_spread(row['p50_ms'], 1):>20}"
                f" {format_spread(row['p99_ms'], 1):>20}"
            )
    checked = seated["balances_checked"]
    print(
        f"balances back right after each leave: {checked} checked"
        if checked
        else "balances: this gateway has no wallets, nothing to check"
    )
    print(f"unexpected answers: {seated['errors'] or 'none'}")
