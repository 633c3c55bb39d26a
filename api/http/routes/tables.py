"""HTTP <-> table service: the /v1/tables resources."""

from __future__ import annotations

import functools
import hashlib
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, stream_with_context
from werkzeug.routing import IntegerConverter

from api import jsonio
from api.adapters.store import TokenEntry
from api.errors import ApiError, invalid_token, problem
from api.games.options import MAX_ANTE
from api.http.auth import IGNORED_KEY, principal_of
from api.http.etags import entity_tags, if_match
from api.http.headers import idempotency
from api.http.limits import client_address
from api.http.pipeline import LANGUAGE_KEY, request_language
from api.http.problems import problem_body
from api.http.schemas import parse_json_body
from api.http.steps import CLOSE_KEY
from api.http.waiting import ClientGone, until_client_leaves
from api.i18n import LANGUAGES, N_
from api.i18n.bodies import localise_item
from api.i18n.catalogs import Phrase
from api.service.credentials import Principal
from api.service.dispatch import GAMES
from api.service.idempotency import Idempotency, Outcome
from api.service.lobby import MAX_PLAYERS, Filters
from api.service.players import PlayerService
from api.service.tables import TableService
from api.service.visibility import Viewer
from api.settings import Settings

tables_blueprint = Blueprint("tables", __name__)


class NumberConverter(IntegerConverter):
    """A seat or deal number in a path: digits without a leading zero ("03" is no seat)."""

    regex = r"[1-9][0-9]{0,15}"


_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# a waiting request's place is held a little past its longest wait, should the process
# holding it die without giving it back
LEASE_MARGIN = 30.0
# the status a request whose client went away is counted under (nginx's, for the same)
CLIENT_GONE = 499
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
    kind = Phrase(N_("a whole number")) if whole else Phrase(N_("a number"))
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
    """The lobby: tables to join first, filtered by game, cards, ante and free seats;
    with `mine`, the caller's own tables, empty ones too."""
    limit = _int_arg("limit", 20, 1, 100)
    filters = _lobby_filters()
    mine = _choice_arg("mine", ("true", "false")) == "true"
    owner = _principal().require_player() if mine else None
    response = jsonify(_service().lobby(filters, limit, query_arg("cursor"), owner))
    # the same for everyone, and a lobby two seconds old is still a fair lobby (one's
    # own tables are one's own)
    shared = "private" if mine else "public"
    response.headers["Cache-Control"] = f"{shared}, max-age={LOBBY_MAX_AGE}"
    if mine:
        response.headers["Vary"] = "Authorization"
    digest = hashlib.blake2b(response.get_data(), digest_size=12).hexdigest()
    response.headers["ETag"] = f'"{digest}"'
    if _none_match(request.headers.get("If-None-Match"), digest):
        response.set_data(b"")
        response.status_code = 304
        del response.headers["Content-Type"]
    return response


def _choice_arg(name: str, choices: tuple[str, ...]) -> str | None:
    """A query parameter that is one of `choices`; 400 invalid_parameter otherwise."""
    raw = query_arg(name)
    if raw is not None and raw not in choices:
        raise ApiError(
            400,
            "invalid_parameter",
            "Invalid parameter",
            "Query parameter '{name}' must be one of: {choices}.",
            field=name,
            name=name,
            choices=", ".join(choices),
        )
    return raw


def _lobby_filters() -> Filters:
    """The lobby's filters from the query: game, cards, ante_min, ante_max, free_seats."""
    cards = _choice_arg("cards", ("2", "3"))
    return Filters(
        game=_choice_arg("game", tuple(GAMES)),
        cards=None if cards is None else int(cards),
        ante_min=_int_arg("ante_min", 1, 1, MAX_ANTE),
        ante_max=_int_arg("ante_max", MAX_ANTE, 1, MAX_ANTE),
        free_seats=_int_arg("free_seats", 0, 0, MAX_PLAYERS),
    )


@tables_blueprint.post("/v1/tables/quick-seat")
def quick_seat() -> Response:
    """Seat the player at a table like the one described, with a free seat, or a new one."""
    player = _principal().require_player()
    body = parse_json_body(request.get_data(), request.content_type, "QuickSeat")
    response = _respond(_service().quick_seat(body, _idempotency(), player))
    response.headers["Cache-Control"] = "no-store"
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


@tables_blueprint.delete("/v1/tables/<table_id>")
def close_table(table_id: str) -> Response:
    """Close the table (its creator before it dealt, an operator always)."""
    idempotency = _idempotency()
    return _respond(
        _service().close_table(
            table_id, _principal(), if_match(request.headers.get("If-Match")), idempotency
        )
    )


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
    """Leave the table, or an operator removes the seat (cashed out once any hand the
    seat is in is settled)."""
    idempotency = _idempotency()
    return _respond(
        _service().leave(
            table_id, seat, _principal(), if_match(request.headers.get("If-Match")), idempotency
        )
    )


# A move, `POST /v1/tables/<table_id>/actions`, is answered in plain WSGI before Flask
# by `api.http.moves`; the rule is here so that routing knows the path (405 with
# Allow for other methods, OPTIONS), and it has no view.
tables_blueprint.add_url_rule("/v1/tables/<table_id>/actions", "act", methods=["POST"])


@tables_blueprint.get("/v1/tables/<table_id>/events")
def events(table_id: str) -> Response:
    """Events after a cursor, as the caller may see them; long-polls with `wait`."""
    after = _int_arg("after", 0, 0, 2**53)
    wait = _number_arg("wait", 0.0, 0.0, _settings().long_poll_max, whole=False)
    viewer, record = _viewer(table_id)
    _check_not_ahead(after, record.seq, "after")
    service = _service()
    if wait <= 0:
        items, cursor = service.events(table_id, viewer, after, wait)
        return jsonify({"events": items, "next": cursor})
    release = _lease_waiting(_principal(), table_id, wait + LEASE_MARGIN)
    try:
        items, cursor = until_client_leaves(
            request.environ, lambda: service.events(table_id, viewer, after, wait)
        )
    except ClientGone:
        return Response(status=CLIENT_GONE)  # written to nobody; counted as such
    finally:
        release()
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
    frames = _event_frames(
        service,
        table_id,
        viewer,
        after,
        lifetime=lifetime,
        instance=request.path,
        language=_stream_language(),
    )
    release = _lease_waiting(principal, table_id, lifetime + LEASE_MARGIN)
    response = Response(stream_with_context(frames), mimetype="text/event-stream")
    # the server closes every answer, even one whose stream was never read
    response.call_on_close(release)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _lease_waiting(principal: Principal, table_id: str, seconds: float) -> Callable[[], None]:
    """Hold one of the waiting requests of the client's address and of its credential
    (429 quota_exceeded past either cap), for at most `seconds`; what gives both back."""
    address = client_address(
        request.environ.get("REMOTE_ADDR"),
        request.environ.get("HTTP_X_FORWARDED_FOR"),
        _settings().trusted_proxies,
    )
    try:
        return _players().lease_waiting(address, _holder(principal, table_id), seconds)
    except ApiError:
        # a refused waiting request keeps no connection open: a flood of them costs nothing
        request.environ[CLOSE_KEY] = True
        raise


def _holder(principal: Principal, table_id: str) -> str | None:
    """Whose waiting requests a request counts among: its player's, its seat token's or
    its ticket's seat's; None without a credential that holds."""
    if principal.kind == "player":
        return f"player:{principal.player}"
    if principal.kind == "seat" and principal.token is not None:
        return principal.scope
    if principal.kind == "seat" and principal.seat is not None:
        return f"seat:{table_id}:{principal.seat[0]}:{principal.seat[1]}"
    return None


def _event_frames(
    service: TableService,
    table_id: str,
    viewer: Viewer,
    after: int,
    *,
    lifetime: float,
    instance: str,
    language: str | None,
) -> Iterator[str]:
    """The stream's frames: the events after `after` as they come, a keep-alive comment
    for each quiet wait, until `lifetime` seconds are up or the table closes."""
    cursor = after
    ends = time.monotonic() + lifetime
    environ = request.environ
    yield "retry: 1000\n\n"
    while time.monotonic() < ends:
        try:
            wait = functools.partial(service.events, table_id, viewer, cursor, min(15.0, lifetime))
            items, cursor = until_client_leaves(environ, wait)
        except ClientGone:
            return  # nobody reads on: the stream ends, and its place is given back
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


def _ticket_seat(principal: Principal) -> TokenEntry | None:
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


def deal_as_seen(table_id: str, hand_number: int) -> dict[str, object]:
    """A finished deal's history as the caller may see it (a table closed on request
    keeps its deals readable, each player's as their own)."""
    try:
        viewer, _ = _viewer(table_id)
    except ApiError as error:
        closed = _service().closed_viewer(table_id, _principal())
        if error.code != "table_closed" or closed is None:
            raise
        viewer = closed
    return _service().hand_history(table_id, hand_number, viewer)


@tables_blueprint.get("/v1/tables/<table_id>/hands/<number:hand_number>")
def hand_history(table_id: str, hand_number: int) -> Response:
    """One finished deal: events, showdown, pot flow and fairness proof, as the caller
    may see them (a seat's own cards only with its token): kept by the viewer's own cache
    for an hour, never by a shared one."""
    response = jsonify(deal_as_seen(table_id, hand_number))
    # a finished deal's history never changes, but each viewer sees their own
    response.headers["Cache-Control"] = f"private, max-age={HISTORY_MAX_AGE}"
    response.headers["Vary"] = "Authorization"
    return response
