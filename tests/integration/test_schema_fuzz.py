"""Schema fuzzing: schemathesis against the served OpenAPI document of a gunicorn gateway.

Every operation of `/openapi.json` gets at least `SCHEMA_FUZZ_CASES` (500) generated
cases, valid and invalid ones, sent over real HTTP to gunicorn (two workers, real
Redis, real evaluator). Each response must be no 5xx, have a documented status, content
type, headers and body, reject invalid data with a 4xx, and be problem+json when it is
an error. To reach past the 404s, about half of the cases that name a table are pointed
at real tables (Guts and Paiute, waiting and mid-deal, with a finished hand) with real
seat tokens (and tokens of seats that have left), so real seats are taken and left and
real moves played. The operations a table refuses mostly for its state (taking a seat,
leaving one, the event stream) go further: most of their cases are pointed at a table in
the state each needs (a free seat and a new player; a seat and its own token; a real
table, with a real stream ticket or none), and a floor of their cases must be accepted.

Beside them, the stateful phase: `SCHEMA_FUZZ_SCENARIOS` (500) scenarios of
schemathesis's state machine, which start from a new player (or a table made with a
made-up key) and go on only where the document's links lead, with the credentials,
tables and seats the links carry; the same checks hold, and some moves and leaves must
be accepted. The run's figures go to var/reports/schema_fuzz.json, with each operation's
share of accepted cases.
"""

from __future__ import annotations

import collections
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.engine.link_calibration import LinkCalibrationState
from schemathesis.generation.feedback import NO_FEEDBACK
from schemathesis.generation.stateful.state_machine import normalize_name
from schemathesis.specs.openapi import checks as openapi_checks

from tests.support.processes import Gunicorn, RedisProcess, emptied

CASES = int(os.environ.get("SCHEMA_FUZZ_CASES", "500"))
WORKERS = 3
GUNICORN_REQUEST_LINE = 4094  # gunicorn's limit_request_line (bytes), its default
REPORT = Path(__file__).resolve().parents[2] / "var" / "reports" / "schema_fuzz.json"
OPERATIONS = 21  # at least: every operation the served document lists is fuzzed
METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
PROBLEM = "application/problem+json"
CHECKS = [
    not_a_server_error,
    openapi_checks.status_code_conformance,
    openapi_checks.content_type_conformance,
    openapi_checks.response_headers_conformance,
    openapi_checks.response_schema_conformance,
    openapi_checks.negative_data_rejection,
]
# Invalid data must be refused with a 4xx; an invalid body may also be too large (413).
CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "negative_data_rejection": {
                "expected-statuses": [
                    "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428",
                    "429", "5xx",
                ]
            }
        },
        # the stateful phase follows the document's own links, none inferred
        "phases": {"stateful": {"inference": {"algorithms": []}}},
    }
)  # fmt: skip
# The stateful phase: scenarios of up to STATEFUL_STEPS calls, each from one of the
# entries on (every later call is a link's).
STATEFUL_SCENARIOS = int(os.environ.get("SCHEMA_FUZZ_SCENARIOS", "500"))
STATEFUL_STEPS = 50
STATEFUL_ENTRIES = ("POST /v1/players", "POST /v1/tables")
STATEFUL = "stateful"  # the stateful worker's argument, where operation ids go otherwise
# Share of the cases naming a table that are pointed at a real one, in percent; the
# event stream holds its request open for STREAM_MAX_SECONDS, so it gets fewer.
REAL_SHARE = {"streamEvents": 10}
REAL_SHARE_DEFAULT = 55
# Operations most of whose cases a table refuses for its state rather than their shape:
# at these shares (in percent) their cases go to a table in the state each needs (a free
# seat for a new player, a seat with its own token, a real table for the stream), and at
# least ACCEPTED_FLOOR percent of CASES must be accepted (2xx). Half the cases are
# generated invalid, which no state lets through.
STATE_DEPENDENT = {"takeSeat": 80, "leaveSeat": 80, "streamEvents": 50}
ACCEPTED_FLOOR = 20


# ----------------------------------------------------------------- real tables


@dataclass
class Seat:
    """A seat granted by the gateway, and the key of the player who holds it."""

    number: int
    token: str
    key: str = ""


@dataclass
class Table:
    """A real table and the seats the fuzzer holds at it."""

    id: str
    game: str
    seats: list[Seat]
    capacity: int
    finished_hands: int = 0
    uses: int = 0


@dataclass
class Pool:
    """Real tables for the fuzzer, replaced as its cases fill, leave and play them."""

    base: str
    session: requests.Session
    tables: list[Table] = field(default_factory=list)
    left_tokens: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def sign_up(self, name: str | None = None) -> str:
        """A new player's key (also lent to cases that need a player); a name of its own by
        default, as a seat taken without one is named after its player, once a table."""
        name = name or f"fuzz{len(self.keys)}"
        key = str(self.post("/v1/players", {"name": name})["key"])
        self.keys.append(key)
        return key

    def post(self, path: str, body: dict[str, Any], token: str | None = None) -> Any:
        """POST JSON; the decoded answer (the fixture's own requests must succeed)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = self.session.post(self.base + path, json=body, headers=headers, timeout=60)
        assert response.status_code < 300, (path, response.status_code, response.text)
        return response.json()

    def guts(self, players: int, *, play: bool) -> Table:
        """A Guts table with seated players; with `play`, one deal played to the end."""
        created = self.post(
            "/v1/tables",
            {"game": "guts", "turn_seconds": 3600, "deal_pause_seconds": 60, "max_players": 6},
            self.sign_up(),
        )
        table = Table(created["table"]["id"], "guts", [], capacity=6)
        for index in range(players):
            key = self.sign_up(f"g{index}")
            granted = self.post(f"/v1/tables/{table.id}/seats", {"buy_in": 100}, key)
            table.seats.append(Seat(granted["seat"], granted["token"], key))
        if play:
            self.post(f"/v1/tables/{table.id}/actions", {"action": "start"}, table.seats[0].token)
            for seat in table.seats:
                self.post(
                    f"/v1/tables/{table.id}/actions",
                    {"action": "declare", "choice": "in"},
                    seat.token,
                )
            table.finished_hands = 1
        return table

    def paiute(self) -> Table:
        """A Paiute table with a deal under way."""
        created = self.post("/v1/tables", {"game": "paiute", "turn_seconds": 3600}, self.sign_up())
        table = Table(created["table"]["id"], "paiute", [], capacity=5)
        for index in range(3):
            key = self.sign_up(f"p{index}")
            granted = self.post(f"/v1/tables/{table.id}/seats", {"buy_in": 100}, key)
            table.seats.append(Seat(granted["seat"], granted["token"], key))
        self.post(f"/v1/tables/{table.id}/actions", {"action": "start"}, table.seats[0].token)
        return table

    def refill(self) -> None:
        """Replace worn tables: every kind is present, none used more than 40 times."""
        self.tables = [t for t in self.tables if t.uses < 40 and t.seats]
        kinds = collections.Counter((t.game, t.finished_hands > 0) for t in self.tables)
        if kinds[("guts", False)] < 1:
            self.tables.append(self.guts(2, play=False))
        if kinds[("guts", True)] < 1:
            self.tables.append(self.guts(3, play=True))
        if kinds[("paiute", False)] < 1:
            self.tables.append(self.paiute())

    def ticket(self, table: Table, seat: Seat) -> str:
        """A stream ticket for a seat's private events at its table."""
        return str(self.post(f"/v1/tables/{table.id}/stream-tickets", {}, seat.token)["ticket"])

    def with_a_free_seat(self, choice: int) -> Table:
        """A table with a seat free, by a drawn number; a new Guts table when none has one."""
        self.refill()
        free = [table for table in self.tables if len(table.seats) < table.capacity]
        if not free:
            free = [self.guts(1, play=False)]
            self.tables += free
        table = free[choice % len(free)]
        table.uses += 1
        return table

    def pick(self, choice: int) -> tuple[Table, Table]:
        """One of the tables by a drawn number, and another one.

        A kind first (an unplayed Guts table, a played one, a Paiute deal), then a table
        of it: the tables opened for seats to take (`with_a_free_seat`) would otherwise
        crowd out the one with a finished deal to read."""
        self.refill()
        kinds = sorted({(t.game, t.finished_hands > 0) for t in self.tables})
        kind = kinds[choice % len(kinds)]
        alike = [t for t in self.tables if (t.game, t.finished_hands > 0) == kind]
        table = alike[(choice // len(kinds)) % len(alike)]
        table.uses += 1
        return table, self.tables[(self.tables.index(table) + 1) % len(self.tables)]


# ----------------------------------------------------------------- the gateway


@pytest.fixture(scope="module")
def served(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Gunicorn, schemathesis.BaseSchema]]:
    """gunicorn on the session's Redis (limits off) and the document it serves."""
    server = Gunicorn(
        emptied(redis_process),
        evaluator_address,
        tmp_path_factory.mktemp("schema-fuzz") / "gunicorn.log",
        RATE_LIMIT_PER_ADDRESS="0",
        RATE_LIMIT_PER_TOKEN="0",
        STREAM_MAX_SECONDS="0.2",
        LONG_POLL_MAX_SECONDS="30",
        CLOCK="true",
        GATEWAY_THREADS="16",
        # On a busy machine a large odds request may take seconds; that is not a fault.
        EVALUATOR_TIMEOUT="30",
    )
    try:
        # Loaded from the served bytes (from_url would leave out /openapi.json itself).
        document = requests.get(server.url + "/openapi.json", timeout=60).json()
        yield server, schemathesis.openapi.from_dict(document, config=CONFIG)
    finally:
        server.stop()


# ----------------------------------------------------------------- pointing cases at real tables


def negated_components(case: Any) -> frozenset[str]:
    """The components (path, query, header, body) schemathesis generated invalid.

    Read before the case is changed: once a component is changed, schemathesis judges it
    again, and a header made invalid only through its `Authorization` (a security scheme,
    not one of the header parameters) would then read as valid."""
    return frozenset(
        str(getattr(where, "value", where))
        for where, info in case.meta.components.items()
        if info.mode != GenerationMode.POSITIVE
    )


def not_negated(case: Any, location: str) -> bool:
    """Whether the case's `location` component (path, query, header, body) is valid data."""
    return location not in negated_components(case)


# operations a player makes with their key; the others (moves, leaving) a seat makes
# with its token or its player's key
PLAYER_OPERATIONS = {"createTable", "takeSeat"}


def lend_a_key(case: Any, negated: frozenset[str], pool: Pool, rolls: random.Random) -> None:
    """Most cases that name no table go with a player's key (the rest anonymous)."""
    if rolls.randrange(100) < 70 and "header" not in negated:
        if not pool.keys:
            pool.refill()
        headers = case.headers if case.headers is not None else {}
        # a fresh player now and then: one seat per player per table
        key = pool.sign_up() if rolls.randrange(4) == 0 else rolls.choice(pool.keys)
        headers["Authorization"] = f"Bearer {key}"
        case.headers = headers


def point_at_real_tables(
    case: Any, negated: frozenset[str], pool: Pool, rolls: random.Random, share: int
) -> bool:
    """Point the case at a real table, seat and token (when its data allows, `negated`
    being the components generated invalid); whether it was."""
    roll, choice, seat_roll, token_roll = (rolls.randrange(100) for _ in range(4))
    params = case.path_parameters or {}
    operation = case.operation.definition.raw.get("operationId")
    if "table_id" in params and "path" not in negated and operation in STATE_DEPENDENT:
        share = STATE_DEPENDENT[operation]
        if roll < share:
            ready_for(operation, case, negated, pool, rolls)
            return True
    if "table_id" not in params or roll >= share or "path" in negated:
        if (
            "table_id" not in params
            or case.operation.definition.raw.get("operationId") in PLAYER_OPERATIONS
        ):
            lend_a_key(case, negated, pool, rolls)
        return False
    table, other_table = pool.pick(choice)
    params["table_id"] = table.id
    seat = table.seats[seat_roll % len(table.seats)] if table.seats else Seat(1, "no-such-token")
    other = other_table.seats[0] if other_table.seats else seat
    left = pool.left_tokens[choice % len(pool.left_tokens)] if pool.left_tokens else None
    if "seat" in params and seat_roll % 4:
        params["seat"] = seat.number
    if "hand_number" in params and table.finished_hands and seat_roll % 3:
        params["hand_number"] = 1 + seat_roll % table.finished_hands
    if "header" not in negated:
        headers = case.headers if case.headers is not None else {}
        if case.operation.definition.raw.get("operationId") in PLAYER_OPERATIONS:
            if token_roll < 70:
                headers["Authorization"] = f"Bearer {pool.sign_up()}"
        elif token_roll < 40:
            headers["Authorization"] = f"Bearer {seat.token}"
        elif token_roll < 60:
            headers["Authorization"] = f"Bearer {seat.key or seat.token}"
        elif token_roll < 70 and left is not None:
            headers["Authorization"] = f"Bearer {left}"
        elif token_roll < 80:
            headers["Authorization"] = f"Bearer {other.token}"
        case.headers = headers
    return True


def ready_for(
    operation: str, case: Any, negated: frozenset[str], pool: Pool, rolls: random.Random
) -> None:
    """Point a case of a state-dependent operation at a table in the state it needs: a
    free seat and a new player (takeSeat), a seat and its own token or player's key
    (leaveSeat), a real table (streamEvents). Only valid components are changed, and
    most of the time: the rest go as generated, or with another credential."""
    params = case.path_parameters
    choice, roll = rolls.randrange(2**16), rolls.randrange(100)
    headers = case.headers if case.headers is not None else {}
    if operation == "takeSeat":
        table = pool.with_a_free_seat(choice)
        credential = pool.sign_up() if roll < 90 else None
        body = case.body
        if "body" not in negated and isinstance(body, dict):
            if isinstance(body.get("name"), str) and roll % 2:
                body["name"] = f"seat{choice}"  # a generated one may hold what no name may
            fold_into_limits(body)
            buy_in = body.get("buy_in")
            if isinstance(buy_in, int) and not isinstance(buy_in, bool) and roll % 3:
                body["buy_in"] = max(20, buy_in)  # drawn small, nearly all below the minimum
    elif operation == "leaveSeat":
        table, _ = pool.pick(choice)
        seat = table.seats[choice % len(table.seats)]
        params["seat"] = seat.number
        credential = None  # a tenth go as generated
        if roll < 45:
            credential = seat.token
        elif roll < 90:
            credential = seat.key or seat.token
        if roll % 4:
            headers.pop("If-Match", None)  # a drawn version is (nearly) never the table's
    else:
        table, _ = pool.pick(choice)
        credential = None
        query = case.query
        if "query" not in negated and isinstance(query, dict) and "ticket" in query:
            # a drawn ticket is none the gateway issued: a real one, or none (the public
            # stream), most of the time
            if roll < 30 and table.seats:
                query["ticket"] = pool.ticket(table, table.seats[choice % len(table.seats)])
            elif roll < 90:
                del query["ticket"]
    params["table_id"] = table.id
    if "header" not in negated:
        if credential is not None:
            headers["Authorization"] = f"Bearer {credential}"
        case.headers = headers


def after_call(case: Any, response: Any, pool: Pool) -> None:
    """Keep the pool true to the tables: a seat that left, a table that filled."""
    operation = case.operation.definition.raw.get("operationId")
    if operation == "leaveSeat" and response.status_code == 200:
        token = str((case.headers or {}).get("Authorization", "")).removeprefix("Bearer ")
        table_id = (case.path_parameters or {}).get("table_id")
        for table in pool.tables:
            if table.id != table_id:
                continue
            kept = [seat for seat in table.seats if token not in (seat.token, seat.key)]
            if len(kept) != len(table.seats):
                pool.left_tokens.append(token)
                table.seats = kept
    if operation == "takeSeat" and response.status_code == 201:
        table_id = (case.path_parameters or {}).get("table_id")
        for table in pool.tables:
            if table.id == table_id:
                body = json.loads(response.content)
                key = str((case.headers or {}).get("Authorization", "")).removeprefix("Bearer ")
                table.seats.append(Seat(body["seat"], body["token"], key))


def tame(case: Any) -> None:
    """Keep a long poll short: a valid `wait` on a real table would hold its full time."""
    query = case.query or {}
    wait = query.get("wait")
    if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > 0.05:
        query["wait"] = 0.05


def refused_by_gunicorn(response: Any) -> bool:
    """A refusal gunicorn sends itself, before the gateway runs: a 414 for an over-long
    request line, a 501 for a Transfer-Encoding it cannot frame a body with."""
    request = response.request
    line = len(f"{request.method} {request.path_url} HTTP/1.1")
    if response.status_code == 414:
        return line > GUNICORN_REQUEST_LINE
    coding = request.headers.get("Transfer-Encoding")
    return bool(
        response.status_code == 501
        and coding is not None
        and coding.strip().lower() not in ("chunked", "identity")
    )


def problem_json(response: Any) -> str | None:
    """Why an error response is not a proper problem+json, or None."""
    if response.status_code < 400:
        return None
    content_type = (response.headers.get("content-type") or [""])[0]
    if content_type.split(";")[0] != PROBLEM:
        return f"an error sent as {content_type!r}"
    body = json.loads(response.content)
    if body.get("status") != response.status_code or not body.get("code"):
        return f"a problem without its status or code: {body}"
    return None


# Extra inputs on every valid query and header: unknown query parameters are ignored and
# stray headers are harmless; they also make operations without parameters worth 1000
# cases.
extra_query = st.dictionaries(
    st.from_regex(r"\Ax[a-z]{1,6}\Z"),
    st.text(st.characters(codec="utf-8"), max_size=12),
    max_size=2,
)
extra_headers = st.dictionaries(
    st.sampled_from(["X-Request-Id", "Accept-Language", "X-Forwarded-For", "Cache-Control"]),
    st.from_regex(r"\A[!-~]([ -~]{0,18}[!-~])?\Z"),
    max_size=2,
)
# Which cases go to real tables is rolled uniformly (hypothesis favours small numbers).
seeds = st.integers(0, 2**32 - 1)


@dataclass
class Tally:
    """Figures of one operation's run."""

    cases: int = 0
    real: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    failed: int = 0
    refused_by_server: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def fuzz_operation(operation: Any, base: str, pool: Pool, tally: Tally) -> None:
    """Run CASES generated cases of one operation, recording (not raising) failures."""
    session = requests.Session()
    name = operation.definition.raw.get("operationId")
    share = REAL_SHARE.get(name, REAL_SHARE_DEFAULT)
    cases = st.one_of(
        operation.as_strategy(GenerationMode.POSITIVE),
        operation.as_strategy(GenerationMode.NEGATIVE),
    )

    @settings(
        max_examples=CASES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases, seed=seeds, query=extra_query, headers=extra_headers)
    def run(case: Any, seed: int, query: dict[str, str], headers: dict[str, str]) -> None:
        # Extras go only beside valid data: schemathesis tells an invalid value that never
        # reached the server (a list in a query parameter, sent as nothing) by reading the
        # component as sent, and an unknown parameter of ours would make it read invalid.
        negated = negated_components(case)
        if "query" not in negated and (isinstance(case.query, dict) or case.query is None):
            case.query = {**query, **(case.query or {})}
        if "header" not in negated:
            case.headers = {**headers, **(case.headers or {})}
        if point_at_real_tables(case, negated, pool, random.Random(seed), share):
            tally.real += 1
        tame(case)
        response = case.call(base_url=base, session=session, timeout=60)
        tally.cases += 1
        tally.statuses[response.status_code] += 1
        if refused_by_gunicorn(response):
            # The documented limit of the HTTP server, below the gateway and its document.
            tally.refused_by_server += 1
            return
        after_call(case, response, pool)
        complaint = problem_json(response)
        try:
            case.validate_response(response, checks=CHECKS)
        except (AssertionError, BaseExceptionGroup) as failure:  # recorded, reported at the end
            complaint = str(failure)
        if complaint is not None:
            tally.failed += 1
            if len(tally.failures) < 5:
                tally.failures.append(f"{case.as_curl_command()[:2000]}\n{complaint[:6000]}")

    started = time.monotonic()
    run()
    tally.seconds = time.monotonic() - started


def fuzz_operations(base: str, operation_ids: list[str]) -> dict[str, Any]:
    """Fuzz some operations of the served document one after another; their figures."""
    document = requests.get(base + "/openapi.json", timeout=60).json()
    schema = schemathesis.openapi.from_dict(document, config=CONFIG)
    pool = Pool(base, requests.Session())
    figures: dict[str, Any] = {}
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        if operation.definition.raw["operationId"] not in operation_ids:
            continue
        tally = Tally()
        fuzz_operation(operation, base, pool, tally)
        accepted = sum(n for status, n in tally.statuses.items() if 200 <= status < 300)
        figures[f"{operation.method.upper()} {operation.path}"] = {
            "operation_id": operation.definition.raw["operationId"],
            "cases": tally.cases,
            "on_real_tables": tally.real,
            "accepted": accepted,
            "accepted_share": round(accepted / max(1, tally.cases), 3),
            "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
            "failures": tally.failed,
            "refused_by_gunicorn": tally.refused_by_server,
            "seconds": round(tally.seconds, 1),
            "first_failures": tally.failures,
        }
    return figures


# ----------------------------------------------------------------- the stateful phase


def fold_chips(case: Any) -> None:
    """Fold a valid buy-in over 500 into the default limits (20 to 500), and a rebuy over
    100 into 1 to 100: drawn from 1 to 10^9, nearly every one would be refused before
    the seat or the move is tried."""
    body = case.body
    if isinstance(body, dict) and not_negated(case, "body"):
        fold_into_limits(body)


def fold_into_limits(body: dict[str, Any]) -> None:
    """Fold a valid body's buy-in into 20 to 500 and its rebuy into 1 to 100 (`fold_chips`)."""
    for name, low, high in (("buy_in", 20, 500), ("amount", 1, 100)):
        value = body.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > high:
            body[name] = low + value % (high - low + 1)


def fuzz_statefully(base: str, scenarios: int) -> dict[str, Any]:
    """Scenarios of schemathesis's state machine, led by the document's links alone; figures."""
    document = requests.get(base + "/openapi.json", timeout=60).json()
    schema = schemathesis.openapi.from_dict(document, config=CONFIG)
    session = requests.Session()
    tally = Tally()
    started_scenarios = [0]
    # Links are followed more often as they prove right (schemathesis's link calibration).
    calibration = LinkCalibrationState()
    machine = schema.build_state_machine(feedback=NO_FEEDBACK, link_calibration=calibration)
    # Scenarios start where a client starts, from nothing: a new player, or a table made
    # with a made-up key; every credential, table and seat after that comes from a link.
    entries = {normalize_name(f"RANDOM -> {label}") for label in STATEFUL_ENTRIES}
    assert entries <= machine.root_rules, sorted(machine.root_rules)
    by_id: collections.defaultdict[str, collections.Counter[int]] = collections.defaultdict(
        collections.Counter
    )

    class Workflow(machine):  # type: ignore[misc, valid-type]
        root_rules = frozenset(entries)

        def setup(self) -> None:
            started_scenarios[0] += 1
            calibration.begin_iteration()

        def step(self, input: Any) -> Any:
            self.current = input
            return super().step(input)

        def before_call(self, case: Any) -> None:
            tame(case)
            fold_chips(case)

        def get_call_kwargs(self, case: Any) -> dict[str, Any]:
            return {"base_url": base, "session": session, "timeout": 60}

        def validate_response(self, response: Any, case: Any, *_: Any, **__: Any) -> None:
            transition = self.current.transition
            if transition is not None and not_negated(case, "body"):
                # A link is right when the call it led with all its values is not refused
                # for its credential, table or seat (a refused body is the fuzzer's doing).
                wanted = sum(len(values) for values in transition.parameters.values())
                if len(self.current.applied_parameters) == wanted:
                    calibration.record(
                        transition.id, success=response.status_code not in (401, 403, 404)
                    )
            tally.cases += 1
            tally.statuses[response.status_code] += 1
            by_id[case.operation.definition.raw["operationId"]][response.status_code] += 1
            if refused_by_gunicorn(response):
                tally.refused_by_server += 1
                return
            complaint = problem_json(response)
            try:
                case.validate_response(response, checks=CHECKS)
            except (AssertionError, BaseExceptionGroup) as failure:
                complaint = str(failure)
            if complaint is not None:
                tally.failed += 1
                if len(tally.failures) < 5:
                    tally.failures.append(f"{case.as_curl_command()[:2000]}\n{complaint[:6000]}")

    for name in machine.root_rules - entries:
        setattr(Workflow, name, None)  # no longer a rule
    began = time.monotonic()
    runs = 0
    while started_scenarios[0] < scenarios:
        # Answers differ between two runs of one scenario (new ids, a table that filled),
        # which Hypothesis reports as flaky; like schemathesis's runner, start over with
        # a fresh seed, the scenarios played so far counted.
        runs += 1
        seed = random.randrange(2**32)
        seeded: Any = hypothesis_seed(seed)(type("Seeded", (Workflow,), {"rule_order_seed": seed}))
        try:
            seeded.run(
                settings=settings(
                    max_examples=scenarios - started_scenarios[0],
                    stateful_step_count=STATEFUL_STEPS,
                    deadline=None,
                    database=None,
                    phases=[Phase.generate],
                    suppress_health_check=list(HealthCheck),
                )
            )
        except Flaky:
            continue
    statuses = {name: {str(k): v for k, v in sorted(c.items())} for name, c in by_id.items()}
    return {
        "scenarios": started_scenarios[0],
        "restarts": runs - 1,
        "cases": tally.cases,
        "moves_accepted": sum(n for s, n in by_id["performAction"].items() if 200 <= s < 300),
        "leaves_accepted": sum(n for s, n in by_id["leaveSeat"].items() if 200 <= s < 300),
        "seats_taken": by_id["takeSeat"].get(201, 0),
        "tables_created": by_id["createTable"].get(201, 0),
        "failures": tally.failed,
        "refused_by_gunicorn": tally.refused_by_server,
        "seconds": round(time.monotonic() - began, 1),
        "by_operation": dict(sorted(statuses.items())),
        "first_failures": tally.failures,
    }


def run_workers(
    base: str, groups: list[list[str]], folder: Path
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fuzz each group of operations in a process of its own, and run the stateful phase
    in one more; the figures of the operations, and those of the stateful phase."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "protos")])}
    workers = []
    for index, group in enumerate([[STATEFUL], *groups]):
        out = folder / f"worker{index}.json"
        command = [sys.executable, "-m", "tests.integration.test_schema_fuzz", base, str(out)]
        workers.append((subprocess.Popen([*command, *group], cwd=root, env=env), out))
    figures: list[dict[str, Any]] = []
    for process, out in workers:
        assert process.wait(timeout=1100) == 0, f"a fuzzing worker failed ({process.returncode})"
        figures.append(json.loads(out.read_text(encoding="utf-8")))
    return {k: v for f in figures[1:] for k, v in f.items()}, figures[0]


@pytest.mark.timeout(1200)
def test_every_operation_holds_to_its_document(
    served: tuple[Gunicorn, Any], tmp_path: Path
) -> None:
    server, schema = served
    names = [result.ok().definition.raw["operationId"] for result in schema.get_all_operations()]
    documented = [
        operation["operationId"]
        for item in schema.raw_schema["paths"].values()
        for method, operation in item.items()
        if method in METHODS
    ]
    assert sorted(names) == sorted(documented)
    assert len(names) >= OPERATIONS, names
    # Separate processes, not threads: hypothesis keeps caches that threads would share,
    # and each process brings a core of its own to generating cases.
    groups = [names[index::WORKERS] for index in range(WORKERS)]
    started = time.monotonic()
    figures, stateful = run_workers(server.url, groups, tmp_path)
    seconds = time.monotonic() - started
    report = {
        "schemathesis": schemathesis.__version__,
        "cases_per_operation_target": CASES,
        "operations": len(figures),
        "cases": sum(f["cases"] for f in figures.values()),
        "cases_on_real_tables": sum(f["on_real_tables"] for f in figures.values()),
        "failures": sum(f["failures"] for f in figures.values()),
        "refused_by_gunicorn": sum(f["refused_by_gunicorn"] for f in figures.values()),
        "seconds": round(seconds, 1),
        # the share of each operation's cases accepted (2xx); the state-dependent ones are
        # held to a floor below
        "accepted_shares": {f["operation_id"]: f["accepted_share"] for f in figures.values()},
        "by_operation": figures,
        "stateful": stateful,
    }
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    failures = [text for f in [*figures.values(), stateful] for text in f["first_failures"]]
    assert not failures, "\n\n".join(failures[:8])
    assert len(figures) == len(names)
    for label, f in figures.items():
        assert f["cases"] >= CASES, (label, f["cases"])
    # Pointed at tables in the state they need, the state-dependent operations are
    # accepted often enough to be fuzzed past their refusals (a count, not a timing).
    for label, f in figures.items():
        if f["operation_id"] in STATE_DEPENDENT:
            assert f["accepted"] >= CASES * ACCEPTED_FLOOR // 100, (label, f["statuses"])
    # The real tables were reached: seats granted and left, moves made, hands read.
    if CASES >= 500:  # a light run (SCHEMA_FUZZ_CASES=50) may not get this far
        by_id = {f["operation_id"]: f["statuses"] for f in figures.values()}
        assert by_id["getTable"].get("200", 0) > 0
        assert by_id["takeSeat"].get("201", 0) > 0
        assert by_id["leaveSeat"].get("200", 0) > 0
        assert by_id["performAction"].get("200", 0) > 0
        assert by_id["getHand"].get("200", 0) > 0
        assert by_id["listEvents"].get("200", 0) > 0
        assert by_id["streamEvents"].get("200", 0) > 0
    # The links alone lead a stateful client from a new player to a table, a seat, its
    # moves and its leaving: some of them are accepted.
    if STATEFUL_SCENARIOS >= 500:  # a lighter run may reach none
        assert stateful["moves_accepted"] > 0, stateful["by_operation"]
        assert stateful["leaves_accepted"] > 0, stateful["by_operation"]


def test_the_checks_catch_a_lying_response(served: tuple[Gunicorn, Any]) -> None:
    """The checks have teeth: an undocumented status, a wrong body, a 5xx are caught."""
    server, schema = served
    operation = schema["/v1/tables"]["GET"]
    case = operation.Case(query={"limit": 5})
    session = requests.Session()

    def faked(status: int, body: Any, content_type: str) -> Any:
        response = case.call(base_url=server.url, session=session)
        assert response.status_code == 200
        response.status_code = status
        response.content = json.dumps(body).encode()
        response.headers["content-type"] = [content_type]
        return response

    lies: list[Callable[[], Any]] = [
        lambda: faked(200, {"tables": "not a list"}, "application/json"),
        lambda: faked(418, {"code": "teapot"}, PROBLEM),
        lambda: faked(500, {"code": "internal_error"}, PROBLEM),
        lambda: faked(200, {"tables": [], "next": None}, "text/html"),
    ]
    for lie in lies:
        with pytest.raises((AssertionError, BaseExceptionGroup)):
            case.validate_response(lie(), checks=CHECKS)
    assert problem_json(faked(400, {"code": "x"}, "application/json")) is not None


if __name__ == "__main__":
    # A fuzzing worker: python -m tests.integration.test_schema_fuzz BASE OUT OPERATION_ID...
    # or, for the stateful phase, BASE OUT stateful
    if sys.argv[3:] == [STATEFUL]:
        worked = fuzz_statefully(sys.argv[1], STATEFUL_SCENARIOS)
    else:
        worked = fuzz_operations(sys.argv[1], sys.argv[3:])
    Path(sys.argv[2]).write_text(json.dumps(worked), encoding="utf-8")
