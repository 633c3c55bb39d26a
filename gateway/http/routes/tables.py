"""HTTP <-> table service: the /v1/tables resources."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from werkzeug.routing import IntegerConverter

from gateway import jsonio
from gateway.errors import ApiError, invalid_token, problem
from gateway.http.auth import IGNORED_KEY, principal_of
from gateway.http.etags import entity_tags, if_match
from gateway.http.headers import idempotency
from gateway.http.language import LANGUAGE_KEY, problem_body, request_language
from gateway.http.limits import client_address
from gateway.http.schemas import parse_json_body
from gateway.i18n import LANGUAGES
from gateway.i18n.bodies import localise_item
from gateway.service.credentials import Principal
from gateway.service.idempotency import Idempotency, Outcome
from gateway.service.players import PlayerService
from gateway.service.tables import TableService
from gateway.service.visibility import Viewer
from gateway.settings import Settings

tables_blueprint = Blueprint("tables", __name__)


class NumberConverter(IntegerConverter):
    """A seat or deal number in a path: digits without a leading zero ("03" is no seat)."""

    regex = r"[1-9][0-9]{0,15}"


_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# seconds a client or a shared cache may reuse the lobby, and a viewer a finished deal
LOBBY_MAX_AGE = 2
HISTORY_MAX_AGE = 3600


def _service() -> TableService:
    service: TableService = current_app.extensions["cardroom.service"]
    return service


def _settings() -> Settings:
    settings: Settings = current_app.extensions["cardroom.settings"]
    return settings


def _principal() -> Principal:
    return principal_of(request.environ)


def _players() -> PlayerService:
    players: PlayerService = current_app.extensions["cardroom.players"]
    return players


def _idempotency() -> Idempotency | None:
    return idempotency(
        request.headers.get("Idempotency-Key"),
        request.method,
        request.path,
        request.get_data(),
        _principal().scope,
    )


def _respond(outcome: Outcome) -> Response:
    response = jsonify(outcome.body)
    response.status_code = outcome.status
    for name, value in outcome.headers.items():
        response.headers[name] = value
    return response


def _viewer(table_id: str) -> tuple[Viewer, Any]:
    principal = _principal()
    viewer, record = _service().look(table_id, principal)
    if principal.kind == "seat" and viewer.seat is None:
        request.environ[IGNORED_KEY] = True  # a left seat's token: read as a spectator
    return viewer, record


def query_arg(name: str) -> str | None:
    """A query parameter's one value; None when absent or empty (`?after=`: the default).

    Given twice (`?after=1&after=9`) it is ambiguous: 400 invalid_parameter, never a guess.
    """
    values = request.args.getlist(name)
    if len(values) > 1:
        raise ApiError(
            400,
            "invalid_parameter",
            "Invalid parameter",
            "Query parameter '{name}' is given more than once.",
            field=name,
            name=name,
        )
    return values[0] if values and values[0] else None


def _number_arg(name: str, default: float, low: float, high: float, whole: bool) -> float:
    """A numeric query parameter within [low, high]; 400 invalid_parameter otherwise."""
    raw = query_arg(name)
    if raw is None:
        return default
    kind = "a whole number" if whole else "a number"
    # ASCII digits only: int() and float() would also take "+3", " 3", "1_0", "1e3",
    # "nan" and other scripts' digits
    digits = raw.isascii() and (raw.isdigit() if whole else _DECIMAL.fullmatch(raw) is not None)
    try:
        if not digits:
            raise ValueError(raw)
        value = int(raw) if whole else float(raw)
    except ValueError:
        raise ApiError(
            400,
            "invalid_parameter",
            "Invalid parameter",
            "Query parameter '{name}' must be {kind}.",
            field=name,
            name=name,
            kind=kind,
        ) from None
    if not low <= value <= high:
        raise ApiError(
            400,
            "invalid_parameter",
            "Invalid parameter",
            "Query parameter '{name}' must be between {low} and {high}.",
            field=name,
            name=name,
            low=low,
            high=high,
        )
    return value


def _int_arg(name: str, default: int, low: int, high: int) -> int:
    return int(_number_arg(name, default, low, high, whole=True))


@tables_blueprint.post("/v1/tables")
def create_table() -> Response:
    """Create a table with its options (a player's; counted against their quota)."""
    owner = _principal().require_player()
    body = parse_json_body(request.get_data(), request.content_type, "CreateTable")
    return _respond(_service().create_table(body, _idempotency(), owner))


@tables_blueprint.get("/v1/tables")
def lobby() -> Response:
    """The lobby, newest tables first."""
    limit = _int_arg("limit", 20, 1, 100)
    response = jsonify(_service().lobby(limit, query_arg("cursor")))
    # the same for everyone, and a lobby two seconds old is still a fair lobby
    response.headers["Cache-Control"] = f"public, max-age={LOBBY_MAX_AGE}"
    digest = hashlib.blake2b(response.get_data(), digest_size=12).hexdigest()
    response.headers["ETag"] = f'"{digest}"'
    if _none_match(request.headers.get("If-None-Match"), digest):
        response.set_data(b"")
        response.status_code = 304
        del response.headers["Content-Type"]
    return response


@tables_blueprint.get("/v1/tables/<table_id>")
def get_table(table_id: str) -> Response:
    """The table as the caller may see it, with its version as the ETag."""
    viewer, record = _viewer(table_id)
    etag = f'"{record.version}"'
    if _none_match(request.headers.get("If-None-Match"), str(record.version)):
        response = Response(status=304)
    else:
        response = jsonify(_service().present(record, viewer))
    response.headers["ETag"] = etag
    response.headers["Cache-Control"] = "private, no-cache"
    response.headers["Vary"] = "Authorization"
    return response


def _none_match(header: str | None, version: str) -> bool:
    """Whether If-None-Match holds the table's ETag (weak comparison, RFC 9110, 13.1.2):
    "*" or a listed tag, weak or strong. A malformed list is no match."""
    tags = None if header is None else entity_tags(header)
    return tags is not None and (not tags or any(tag == version for _, tag in tags))


@tables_blueprint.post("/v1/tables/<table_id>/seats")
def take_seat(table_id: str) -> Response:
    """Take a seat for the player, with a buy-in (and a name other than theirs, if given)."""
    player = _principal().require_player()
    body = parse_json_body(request.get_data(), request.content_type, "TakeSeat")
    outcome = _service().take_seat(
        table_id, body.get("name"), body["buy_in"], _idempotency(), player
    )
    response = _respond(outcome)
    response.headers["Cache-Control"] = "no-store"
    return response


@tables_blueprint.delete("/v1/tables/<table_id>/seats/<number:seat>")
def leave(table_id: str, seat: int) -> Response:
    """Leave the table (cashed out once any hand the seat is in is settled)."""
    idempotency = _idempotency()
    return _respond(
        _service().leave(
            table_id, seat, _principal(), if_match(request.headers.get("If-Match")), idempotency
        )
    )


# A move, `POST /v1/tables/<table_id>/actions`, is answered in plain WSGI before Flask
# by `gateway.http.moves`; the rule is here so that routing knows the path (405 with
# Allow for other methods, OPTIONS), and it has no view.
tables_blueprint.add_url_rule("/v1/tables/<table_id>/actions", "act", methods=["POST"])


@tables_blueprint.get("/v1/tables/<table_id>/events")
def events(table_id: str) -> Response:
    """Events after a cursor, as the caller may see them; long-polls with `wait`."""
    after = _int_arg("after", 0, 0, 2**53)
    wait = _number_arg("wait", 0.0, 0.0, _settings().long_poll_max, whole=False)
    viewer, record = _viewer(table_id)
    _check_not_ahead(after, record.seq, "after")
    items, cursor = _service().events(table_id, viewer, after, wait)
    return jsonify({"events": items, "next": cursor})


def _check_not_ahead(after: int, last: int, field: str) -> None:
    """400 invalid_cursor for a cursor past the table's last event: the events up to it
    would never be delivered (a cursor the gateway gave out is never past it)."""
    if after > last:
        raise problem(
            "invalid_cursor",
            "The cursor {after} is past the table's last event ({last}); resume after an"
            " event id you have received, or read the table.",
            field=field,
            extra={"last_event": last},
            after=after,
            last=last,
        )


def _stream_cursor() -> int:
    """Where a stream resumes: after Last-Event-ID (an event id) if sent, else `after`."""
    after = _int_arg("after", 0, 0, 2**53)  # checked even when Last-Event-ID overrides it
    last = request.headers.get("Last-Event-ID")
    if last is None:
        return after
    # Only ASCII digits: int() would also take "-1", " 7", "1_0" and other scripts' digits.
    if not (last.isascii() and last.isdigit() and len(last) <= 16) or int(last) > 2**53:
        raise problem(
            "invalid_parameter",
            "Last-Event-ID must be an event id: a whole number from 0 to 2^53.",
            field="Last-Event-ID",
        )
    return int(last)


@tables_blueprint.get("/v1/tables/<table_id>/events/stream")
def event_stream(table_id: str) -> Response:
    """The event log as server-sent events, resuming after Last-Event-ID.

    A browser's EventSource cannot send Authorization: it opens the seat's private
    stream with `?ticket=`, a single-use ticket from `POST .../stream-tickets`.
    """
    after = _stream_cursor()
    principal = _principal()
    ticket = query_arg("ticket")
    players = _players()
    if ticket is not None:
        principal = players.redeem_ticket(table_id, ticket)
    viewer, record = _service().look(table_id, principal, _ticket_seat(principal))
    field = "Last-Event-ID" if "Last-Event-ID" in request.headers else "after"
    _check_not_ahead(after, record.seq, field)
    service = _service()
    service.check_cursor(table_id, after, field)
    lifetime = _settings().stream_max_seconds
    instance = request.path
    language = _stream_language()
    holder = principal.player if principal.kind == "player" else None
    address = client_address(
        request.environ.get("REMOTE_ADDR"),
        request.environ.get("HTTP_X_FORWARDED_FOR"),
        _settings().trusted_proxies,
    )
    held = players.lease_address_stream(address)
    try:
        lease = None if holder is None else players.lease_stream(holder)
    except ApiError:
        players.end_address_stream(address, held)
        raise

    def generate() -> Iterator[str]:
        cursor = after
        ends = time.monotonic() + lifetime
        yield "retry: 1000\n\n"
        while time.monotonic() < ends:
            try:
                items, cursor = service.events(table_id, viewer, cursor, min(15.0, lifetime))
            except ApiError as error:
                if error.code != "history_trimmed":
                    raise
                # the stream has begun: the problem goes to the client as its last event
                data = jsonio.dumps(problem_body(error, instance, language))
                yield f"event: history_trimmed\ndata: {data}\n\n"
                return
            if not items:
                yield ": keep-alive\n\n"
                continue
            # the events of one wake-up go out as one chunk: one write to the socket
            frames = []
            for item in items:
                data = jsonio.dumps(item if language is None else localise_item(language, item))
                frames.append(f"id: {item['id']}\nevent: {item['type']}\ndata: {data}\n\n")
                if item["type"] == "table_closed":
                    yield "".join(frames)
                    return
            yield "".join(frames)

    response = Response(stream_with_context(generate()), mimetype="text/event-stream")
    # the server closes every answer, even one whose stream was never read
    response.call_on_close(lambda: players.end_address_stream(address, held))
    if holder is not None:
        response.call_on_close(lambda: players.end_stream(holder, lease))
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _stream_language() -> str | None:
    """The language of a stream's lines: `?lang=`, since an EventSource sends only the
    browser's own Accept-Language; else what Accept-Language asks; None for neither."""
    chosen = query_arg("lang")
    if chosen is None:
        return request_language(request.environ)
    if chosen not in LANGUAGES:
        raise ApiError(
            400,
            "invalid_parameter",
            "Invalid parameter",
            "Query parameter 'lang' is {value}; expected one of {choices}.",
            field="lang",
            value=repr(chosen),
            choices=", ".join(LANGUAGES),
        )
    request.environ[LANGUAGE_KEY] = chosen
    return chosen


def _ticket_seat(principal: Principal) -> dict[str, Any] | None:
    """A seat ticket's seat: {"seat", "player"}, checked against the table as a token is."""
    if principal.kind == "seat" and principal.token is None and principal.seat is not None:
        return {"seat": principal.seat[0], "player": principal.seat[1]}
    return None


@tables_blueprint.post("/v1/tables/<table_id>/stream-tickets")
def stream_ticket(table_id: str) -> Response:
    """A single-use ticket, valid for 30 s, that opens this table's event stream as the
    caller (`?ticket=` on the stream): how a browser's EventSource gets private events."""
    principal = _principal()
    principal.require_actor()
    viewer, _ = _service().look(table_id, principal)
    if principal.kind == "seat" and viewer.seat is None:
        raise invalid_token()
    response = jsonify(_players().issue_ticket(principal, table_id, viewer))
    response.status_code = 201
    response.headers["Cache-Control"] = "no-store"
    return response


@tables_blueprint.get("/v1/tables/<table_id>/hands/<number:hand_number>")
def hand_history(table_id: str, hand_number: int) -> Response:
    """One finished deal: events, showdown, pot flow and fairness proof, as the caller
    may see them (a seat's own cards only with its token): kept by the viewer's own cache
    for an hour, never by a shared one."""
    viewer, _ = _viewer(table_id)
    response = jsonify(_service().hand_history(table_id, hand_number, viewer))
    # a finished deal's history never changes, but each viewer sees their own
    response.headers["Cache-Control"] = f"private, max-age={HISTORY_MAX_AGE}"
    response.headers["Vary"] = "Authorization"
    return response
