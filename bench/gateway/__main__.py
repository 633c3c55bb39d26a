"""`make bench-gateway`: the gateway's speed, measured against its own trivial endpoint.

Starts a private redis-server, the evaluator and gunicorn (clock on, rate limits off)
on free loopback ports, and measures in one run, each figure the median of `--rounds`
rounds with the range:

- requests/s, p50 and p99 of `GET /healthz` (the baseline), of reading a table as a
  seat, of a `declare` that does not end the deal and of the `declare` that settles
  it (a showdown through the evaluator), from 32 keep-alive clients;
- whole 5-player Guts deals/s with 32 tables played at once by 32 clients, each deal
  from `deal_started` through five declarations to the settled pot (`deal_ended`),
  the next deal started by the clock; with the p50/p99 of those moves and of the time
  from sending a move to its event reaching a server-sent-events watcher;
- buy-ins and cash-outs: p50/p99 of taking a fresh seat (a new player each) and of
  leaving it, cashed out into the player's wallet, checked by reading the balance
  right after (bench/gateway/seats.py);
- Redis commands per kind of move (MONITOR, in process, on a Redis of its own);
- Redis memory per table and per deal of history, and moves/s with 10, 1,000 and
  10,000 live tables;
- the CPU each process used, the load generator's included.

`--scaling` adds the same measurements with 1, 2 and 4 workers of each worker class that
suits long-lived streams (gthread, gevent); `--gc` compares a worker's CPU per request
with its garbage-collection policy on and off (bench/gateway/gc_policy.py); `--steps`
splits a warm declare's CPU into its steps, in process (bench/gateway/steps.py);
`--sections` splits a gevent worker's CPU by kind of request (plain and settling
declares) and by section, under gunicorn, in the request rounds (bench/gateway/sections.py);
`--batch` compares the request rounds with the Redis commands of a gevent worker's
requests batched (`REDIS_BATCH`, api.adapters.batching) and not, in alternating runs
(bench/gateway/batch.py); `--against REV` compares this tree's gateway with revision
REV's in alternating runs: the request rounds, whole deals' moves/s and the buy-ins and
cash-outs (bench/gateway/versions.py), and with `--steps` a warm declare's CPU in
process with each tree's gateway too; `--pairs N` sets the alternating runs of each
setting (--batch, --against); `--seats` measures, of the default parts, only the buy-ins
and cash-outs (the parts other options ask for still run); `--compression` measures only
the bytes and the CPU of compressed answers against identity ones, in process
(bench/gateway/compression.py); `--profile` profiles a move and a showdown in process
with pyinstrument; `--accept-language LANG` sends every request with that
Accept-Language (answers said in that language, docs/languages.md); `--quick` is a short
run. Results are written as JSON to bench/results/gateway.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.gateway.batch import compare as compare_batching
from bench.gateway.batch import report as batch_report
from bench.gateway.client import ACCEPT_LANGUAGE_VARIABLE, Connection
from bench.gateway.compression import compression_costs
from bench.gateway.compression import report as compression_report
from bench.gateway.gc_policy import compare as compare_collection
from bench.gateway.gc_policy import report as gc_report
from bench.gateway.inprocess import count_commands, profile_moves
from bench.gateway.load import Load
from bench.gateway.memory import grow, memory_costs
from bench.gateway.plan import CLIENTS, FULL, QUICK, SMOKE, TARGETS, Plan
from bench.gateway.replication import compare as compare_replication
from bench.gateway.replication import report as replication_report
from bench.gateway.rounds import deal_rounds, request_rounds, scaling
from bench.gateway.seats import report as seats_report
from bench.gateway.seats import seat_rounds
from bench.gateway.sections import report as sections_report
from bench.gateway.sections import section_rounds
from bench.gateway.service import GatewayConfig, Service
from bench.gateway.steps import report as steps_report
from bench.gateway.steps import step_costs
from bench.gateway.tables import MOVES_WITH
from bench.gateway.versions import compare as compare_versions
from bench.gateway.versions import report as versions_report
from bench.measure import RESULTS, format_spread


def sdk_overhead(url: str, calls: int = 300) -> dict[str, float]:
    """Client CPU microseconds per sequential GET /healthz: raw http.client and the SDK."""
    from cardroom_client import Client

    conn = Connection(url)
    conn.call("GET", "/healthz")
    started = time.process_time()
    for _ in range(calls):
        conn.call("GET", "/healthz")
    raw = (time.process_time() - started) / calls
    conn.close()
    with Client(url) as client:
        client.health()
        started = time.process_time()
        for _ in range(calls):
            client.health()
        sdk = (time.process_time() - started) / calls
    return {"raw_http_us": raw * 1e6, "sdk_us": sdk * 1e6}


# --------------------------------------------------------------------- report


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _report_moves(results: dict[str, Any]) -> None:
    """The request rounds, whole deals, Redis commands per move and memory."""
    basic = results["requests"]
    base = basic["healthz"]["requests_per_second"]["median"]
    print(f"\n{CLIENTS} keep-alive clients, closed loop")
    print(f"{'request':34} {'requests/s':>24} {'x healthz':>9} {'p50 ms':>18} {'p99 ms':>20}")
    labels = {
        "healthz": "GET /healthz (baseline)",
        "read_table": "GET /v1/tables/{id} as a seat",
        "declare": "declare (not the last)",
        "declare_minimal": "the same, Prefer: return=minimal",
        "declare_settles": "declare that settles (showdown)",
    }
    for kind, label in labels.items():
        row = basic[kind]
        rate = row["requests_per_second"]
        print(
            f"{label:34} {format_spread(rate):>24} {rate['median'] / base:9.2f} "
            f"{format_spread(row['p50_ms'], 1):>18} {format_spread(row['p99_ms'], 1):>20}"
        )
    for kind, what in (("declare", "answered with the table"),
                       ("declare_minimal", "answered without it")):  # fmt: skip
        ratio = basic[kind]["requests_per_second"]["median"] / base
        print(f"target: a move >= {TARGETS['move_vs_trivial']}x healthz, {what}: {ratio:.2f}, "
              f"{_verdict(ratio >= TARGETS['move_vs_trivial'])}")  # fmt: skip
    print("\nCPU per request, us (medians; all processes of the machine that took part)")
    roles = ("gateway", "redis", "evaluator", "load generator", "all")
    print(f"{'request':34} " + " ".join(f"{role:>14}" for role in roles) + f" {'healthz/this':>13}")
    base_cpu = basic["healthz"]["cpu_us_per_request"]["all"]
    for kind, label in labels.items():
        spent = basic[kind]["cpu_us_per_request"]
        print(f"{label:34} " + " ".join(f"{spent[role]:14.0f}" for role in roles)
              + f" {base_cpu / spent['all']:13.2f}")  # fmt: skip
    deals = results["deals"]
    print(f"\nwhole 5-player Guts deals, {deals['tables']} tables played at once by 32 clients")
    print(f"  deals/s            {format_spread(deals['deals_per_second'], 1)}")
    print(f"  moves/s            {format_spread(deals['moves_per_second'])}")
    print(
        f"  move p50 / p99     {format_spread(deals['move_p50_ms'], 1)}"
        f" / {format_spread(deals['move_p99_ms'], 1)} ms"
    )
    print(
        f"  event delivery     p50 {format_spread(deals['delivery_p50_ms'], 1)} / "
        f"p99 {format_spread(deals['delivery_p99_ms'], 1)} ms"
        " (move sent -> event at an SSE watcher)"
    )
    print(
        f"  after the reply    p50 {format_spread(deals['delivery_after_reply_p50_ms'], 1)} / "
        f"p99 {format_spread(deals['delivery_after_reply_p99_ms'], 1)} ms "
        "(move's reply back -> event at the watcher)"
    )
    print("  cores used: " + ", ".join(f"{r} {v:.2f}" for r, v in deals["cores_used"].items()))
    for name, key, target, higher in (
        ("deals/s", "deals_per_second", TARGETS["deals_per_second"], True),
        ("move p99 ms", "move_p99_ms", TARGETS["move_p99_ms"], False),
        ("delivery p99 ms", "delivery_p99_ms", TARGETS["delivery_p99_ms"], False),
    ):
        value = deals[key]["median"]
        ok = value >= target if higher else value <= target
        sign = ">=" if higher else "<="
        print(f"  target {name} {sign} {target:g}: {value:,.1f}, {_verdict(ok)}")
    errors = {**basic["errors"], **deals["errors"]}
    print(f"  unexpected answers: {errors or 'none'}")
    print("\nRedis commands per move (MONITOR; commands the gateway sent, and run inside scripts)")
    print(f"{'move':44} {'sent':>6} {'in scripts':>10}  commands sent")
    for kind, row in results["redis_commands"].items():
        names = ", ".join(f"{n} {v:g}" for n, v in row["by_command"].items())
        print(f"{kind:44} {row['round_trips']:6.2f} {row['script_commands']:10.2f}  {names}")
    memory = results["memory"]
    print(
        f"\nRedis memory: {memory['bytes_per_table']:,.0f} bytes per fresh 5-seat table, "
        f"{memory['bytes_per_deal']:,.0f} bytes per deal of history "
        f"({memory['hand_record_bytes_per_deal']:,.0f} of it the hand record)"
    )


def report(results: dict[str, Any]) -> None:
    """Print the tables of medians, ranges, ratios and targets."""
    print(f"\nmedians [min-max] of {results['rounds']} rounds; {results['machine']}")
    print(f"redis: {results['redis']}")
    print(f"gateway: {results['gateway']}, clock every {results['clock_interval']} s")
    if "requests" in results:
        _report_moves(results)
    if "seats" in results:
        seats_report(results["seats"])
    if "growth" in results:
        print("\nmoves on 10 busy tables with more live tables stored")
        print(f"{'live tables':>12} {'moves/s':>22} {'move p99 ms':>22} {'used_memory':>14}")
        for row in results["growth"].values():
            print(
                f"{row['live_tables']:>12,} {format_spread(row['moves_per_second']):>22} "
                f"{format_spread(row['move_p99_ms'], 1):>22} {row['used_memory']:>14,}"
            )
    if "sdk_overhead" in results:
        sdk = results["sdk_overhead"]
        print(
            f"\nclient CPU per call: raw http.client {sdk['raw_http_us']:.0f} us, "
            f"Python SDK {sdk['sdk_us']:.0f} us (the hot loops use raw HTTP)"
        )
    if results.get("scaling"):
        print("\nscaling (medians)")
        print(f"{'configuration':36} {'healthz/s':>10} {'declare/s':>10} {'deals/s':>8} "
              f"{'move p99':>9} {'deliv p99':>10} {'errors':>7}")  # fmt: skip
        for row in results["scaling"]:
            r, d = row["requests"], row["deals"]
            print(
                f"{row['config']:36} {r['healthz']['requests_per_second']['median']:10,.0f} "
                f"{r['declare']['requests_per_second']['median']:10,.0f} "
                f"{d['deals_per_second']['median']:8.1f} {d['move_p99_ms']['median']:9.1f} "
                f"{d['delivery_p99_ms']['median']:10.1f} "
                f"{sum(r['errors'].values()) + sum(d['errors'].values()):7}"
            )
    if "steps" in results:
        steps_report(results["steps"])
    if "sections" in results:
        sections_report(results["sections"])
    if "gc" in results:
        gc_report(results["gc"])
    if "against" in results:
        versions_report(results["against"])
    if "batch" in results:
        batch_report(results["batch"])
    for name, text in results.get("profiles", {}).items():
        print(f"\nprofile: {name}\n{text}")


def main() -> None:
    """Run every measurement, print the tables and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short rounds, fewer tables")
    parser.add_argument(
        "--smoke", action="store_true", help="every part once, briefly (the tests run this)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds per figure (>= 5)")
    parser.add_argument("--scaling", action="store_true", help="1/2/4 workers, gthread and gevent")
    parser.add_argument("--profile", action="store_true", help="profile a move and a showdown")
    parser.add_argument(
        "--gc",
        action="store_true",
        help="worker CPU per request with the garbage-collection policy on and off",
    )
    parser.add_argument(
        "--steps",
        action="store_true",
        help="a warm declare's CPU step by step, in process, against /healthz",
    )
    parser.add_argument(
        "--sections",
        action="store_true",
        help="a gevent worker's CPU by kind of request and section, in the request rounds",
    )
    parser.add_argument(
        "--compression",
        action="store_true",
        help="only the bytes and CPU of answers in br and gzip against identity, in process",
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="requests with the Redis commands batched (REDIS_BATCH) and not, alternating runs",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="this tree's gateway against revision REV's, alternating runs (a git worktree)",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=None,
        help="alternating runs of each setting for --batch and --against",
    )
    parser.add_argument(
        "--seats",
        action="store_true",
        help="of the default parts only the buy-ins and cash-outs (other options still run)",
    )
    parser.add_argument(
        "--moves-with",
        choices=("token", "key"),
        default="token",
        help="send the request rounds' moves and reads with the seat token or the player's key",
    )
    parser.add_argument(
        "--accept-language", default=None, help="send every request with this Accept-Language"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--worker-class", choices=("gthread", "gevent"), default="gevent")
    parser.add_argument(
        "--replicas",
        action="store_true",
        help="only a declare's cost with REDIS_ACK_REPLICAS 0 and 1 (a replica either way)",
    )
    parser.add_argument(
        "--durable",
        action="store_true",
        help="Redis as deployed: appendonly yes, appendfsync always",
    )
    parser.add_argument(
        "--clock-interval", type=float, default=0.05, help="CLOCK_INTERVAL: the next deal's delay"
    )
    arguments = parser.parse_args()
    if arguments.sections and arguments.worker_class != "gevent":
        parser.error("--sections meters gevent workers (--worker-class gevent)")
    if arguments.accept_language:
        os.environ[ACCEPT_LANGUAGE_VARIABLE] = arguments.accept_language
    MOVES_WITH["credential"] = arguments.moves_with
    plan = SMOKE if arguments.smoke else QUICK if arguments.quick else FULL
    if arguments.rounds is not None:
        plan = dataclasses.replace(plan, rounds=max(1, arguments.rounds))
    if arguments.pairs is not None:
        plan = dataclasses.replace(plan, batch_pairs=max(1, arguments.pairs))
    config = GatewayConfig(
        arguments.workers, arguments.threads, arguments.worker_class, arguments.clock_interval
    )

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_before": os.getloadavg(),
        },
        "rounds": plan.rounds,
        "gateway": config.label,
        "clock_interval": config.clock_interval,
        "clients": CLIENTS,
        "redis": "appendfsync always" if arguments.durable else "no persistence",
        "accept_language": arguments.accept_language,
    }
    if arguments.replicas:
        replication_only(plan, results, log)
        return
    log(f"starting Redis, the evaluator and gunicorn ({config.label})")
    service = Service(config, durable=arguments.durable)
    if arguments.compression:
        compression_only(service, plan.rounds, results, log)
        return
    load = Load()
    try:
        default_parts(service, load, plan, arguments.seats, results, log)
        if arguments.profile:
            log("profiling a move and a showdown in process")
            results["profiles"] = profile_moves(
                service.redis.url, service.evaluator.address, plan.profile_deals
            )
        if arguments.sections:
            log("the request rounds again, each worker's CPU by request and section")
            results["sections"] = section_rounds(service, load, plan, log)
        if arguments.steps:
            log("a warm declare's CPU step by step, in process")
            results["steps"] = step_costs(
                service.redis.url, service.evaluator.address, plan.step_tables, plan.rounds
            )
        if not arguments.seats:
            log("live tables: " + ", ".join(f"{n:,}" for n in plan.growth_levels))
            results["growth"] = grow(service, load, plan, log)
        if arguments.scaling:
            results["scaling"] = scaling(service, load, plan, log)
        if arguments.gc:
            log("garbage-collection policy on and off, one worker, alternating runs")
            results["gc"] = compare_collection(load, plan.gc_pairs, plan.gc_tables_per_client,
                                    plan.gc_deals, plan.seconds, log)  # fmt: skip
        if arguments.batch:
            log("Redis commands batched and not (REDIS_BATCH), alternating runs")
            results["batch"] = compare_batching(load, plan, log)
        if arguments.against:
            log(f"this tree's gateway against {arguments.against}'s, alternating runs")
            in_process = (service.redis.url, service.evaluator.address)
            results["against"] = compare_versions(
                load, plan, arguments.against, log, in_process if arguments.steps else None
            )
    finally:
        load.close()
        service.stop()
    results["machine"]["load_average_after"] = os.getloadavg()
    report(results)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / ("gateway_smoke.json" if arguments.smoke else "gateway.json")
    path.write_text(json.dumps(results, indent=2))
    for name, text in results.get("profiles", {}).items():
        slug = "".join(c if c.isalnum() else "_" for c in name).strip("_")
        (RESULTS / f"gateway_profile_{slug}.txt").write_text(text)
    print(f"\nresults written to {path}")


def replication_only(plan: Plan, results: dict[str, Any], log: Callable[[str], None]) -> None:
    """`--replicas`: a declare acknowledged after a replica and not, alternating runs."""
    load = Load()
    try:
        log("a Redis with a replica; REDIS_ACK_REPLICAS 0 and 1, alternating runs")
        results["replicas"] = compare_replication(load, plan, log)
    finally:
        load.close()
    replication_report(results["replicas"])
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "gateway_replicas.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\nresults written to {path}")


def default_parts(
    service: Service,
    load: Load,
    plan: Plan,
    seats_only: bool,
    results: dict[str, Any],
    log: Callable[[str], None],
) -> None:
    """The default run's parts before the live tables (only the buy-ins and cash-outs
    with `seats_only`)."""
    if not seats_only:
        log("requests: /healthz, table reads, declares, settling declares")
        results["requests"] = request_rounds(service, load, plan, log)
        log("whole deals, 32 tables at once, with SSE watchers")
        deals = deal_rounds(service, load, CLIENTS, plan.rounds, plan.deal_window)
        played = deals.pop("table_ids")
        results["deals"] = deals
    log("buy-ins and cash-outs, a fresh player for each seat")
    results["seats"] = seat_rounds(service, load, plan, log)
    if seats_only:
        return
    log("Redis memory per table and per deal")
    results["memory"] = memory_costs(service, played)
    results["sdk_overhead"] = sdk_overhead(service.url)
    log("Redis commands per move")
    results["redis_commands"] = count_commands(service.evaluator.address)


def compression_only(
    service: Service, rounds: int, results: dict[str, Any], log: Callable[[str], None]
) -> None:
    """`--compression`: that measurement alone (bench/results/gateway_compression.json)."""
    try:
        log("answers in identity, gzip and br, in process")
        results["compression"] = compression_costs(
            service.redis.url, service.evaluator.address, rounds
        )
    finally:
        service.stop()
    compression_report(results["compression"])
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "gateway_compression.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\nresults written to {path}")


if __name__ == "__main__":
    main()
