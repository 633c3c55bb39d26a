"""Abuse limits: request rates per client address and per seat token, and body size.

Each limit is a GCRA (generic cell rate algorithm) bucket: `limit` requests per
`window` seconds, any of them in one burst, then one more every `window / limit`
seconds. A bucket is one Redis key holding its "theoretical arrival time" in
milliseconds of the Redis server's clock, so every gunicorn worker and every gateway
process shares it and no two clocks need to agree. One Lua script checks and updates
one bucket; the address and token buckets of a request go in one pipelined round trip
(in a gevent worker, batched with other requests' commands: `gateway.adapters.batching`; on a
Redis Cluster, one call per bucket: they live on different slots).

Keys (each its own hash tag, so a bucket lives on one Redis Cluster slot and the
buckets spread over the cluster; each expires when its bucket is full again):

    ratelimit:{addr:<address>}      per client address (an IPv6 address by its /64)
    ratelimit:{token:<sha256>}      per seat token (its digest, never the token)

Health, readiness and metrics are never limited. If Redis cannot be reached the
request goes on unlimited: the limiter must not turn an outage into a failure of its
own, and the request meets the store's 503 anyway if it needs Redis.

A request body is at most MAX_BODY_BYTES however it is sent: a longer declared
Content-Length is refused unread, and a chunked body that runs past the limit is
refused (413 body_too_large) instead of cut short, by `install_body_limit` for the
Flask routes and by `read_body` for the moves' endpoint (`gateway.http.moves`).
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import redis
import redis.cluster
from flask import Flask, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wsgi import get_content_length, get_input_stream

from gateway.adapters.batching import Command, send_now
from gateway.adapters.store import RedisClient, TableStore
from gateway.errors import ApiError, problem
from gateway.http.headers import bearer_token
from gateway.settings import Settings

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

log = logging.getLogger("cardroom.gateway")

# The largest request body the gateway reads, however it is sent (Flask's
# MAX_CONTENT_LENGTH, and the moves' endpoint's own reads).
MAX_BODY_BYTES = 256 * 1024

# Endpoints that orchestrators and scrapers poll; they stay reachable whatever a
# client does.
UNLIMITED_ENDPOINTS = frozenset({"system.healthz", "system.readyz", "system.metrics"})

_GCRA = """
-- KEYS[1] the bucket; ARGV[1] window in ms, ARGV[2] requests per window
-- returns {allowed (1/0), remaining, retry after ms, reset ms}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local interval = window / tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then
  tat = now
end
local new_tat = tat + interval
if new_tat - window > now then
  return {0, 0, math.ceil(new_tat - window - now), math.ceil(tat - now)}
end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1)
local remaining = math.floor((now + window - new_tat) / interval)
return {1, remaining, 0, math.ceil(new_tat - now)}
"""


@dataclass(frozen=True)
class Verdict:
    """One bucket's answer: allowed or not, requests left, seconds to wait and to reset."""

    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_ms: int


def client_address(remote_addr: str | None, forwarded_for: str | None, trusted_proxies: int) -> str:
    """The client's address: `remote_addr`, or the X-Forwarded-For hop the proxies vouch for."""
    address = remote_addr or "unknown"
    if trusted_proxies > 0 and forwarded_for:
        hops = [hop.strip() for hop in forwarded_for.split(",")]
        # Each trusted proxy appends the address it received from; the hop written by
        # the outermost trusted proxy is the client. Anything left of it is the
        # client's own claim and may be forged.
        if len(hops) >= trusted_proxies and hops[-trusted_proxies]:
            address = hops[-trusted_proxies]
    return bucket_address(address)


def bucket_address(address: str) -> str:
    """The normal form an address is counted under; an IPv6 client is its /64 network."""
    try:
        parsed = ipaddress.ip_address(address.strip().strip("[]"))
    except ValueError:
        # Not an address (a Unix socket peer, or a forged header): count it as sent,
        # bounded so a long header does not make a long key.
        return hashlib.sha256(address.encode("utf-8", "replace")).hexdigest()[:32]
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def address_key(address: str) -> str:
    """The Redis key of an address's bucket."""
    return f"ratelimit:{{addr:{address}}}"


def token_key(token: str) -> str:
    """The Redis key of a seat token's bucket (by the token's digest)."""
    digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()
    return f"ratelimit:{{token:{digest}}}"


class RateLimiter:
    """GCRA buckets in Redis, shared by every process of the gateway."""

    def __init__(
        self,
        client: RedisClient,
        window_seconds: float,
        send: Callable[[Sequence[Command]], list[Any]] | None = None,
    ) -> None:
        """A limiter over `client` whose limits are per `window_seconds`.

        On a single Redis the buckets' scripts go out through `send` (`TableStore.send`:
        in a gevent worker, batched with other requests' commands, `gateway.adapters.batching`);
        without it, as a pipeline of their own.
        """
        self.client = client
        self.window_ms = max(1, round(window_seconds * 1000))
        self.script = client.register_script(_GCRA)
        self._send = send if send is not None else functools.partial(send_now, client)

    def check(self, buckets: Sequence[tuple[str, int]]) -> list[Verdict]:
        """Count one request against each (key, limit) bucket (one round trip on one node)."""
        replies: list[Any]
        if isinstance(self.client, redis.cluster.RedisCluster):
            # The buckets live on different slots, which a cluster pipeline cannot script.
            replies = [
                self.script(keys=[key], args=[self.window_ms, limit]) for key, limit in buckets
            ]
        else:
            commands = [
                ("EVALSHA", self.script.sha, 1, key, self.window_ms, limit)
                for key, limit in buckets
            ]
            replies = self._send(commands)
            if any(isinstance(reply, redis.exceptions.NoScriptError) for reply in replies):
                # a restarted or flushed Redis: a refused EVALSHA counted nothing
                self.client.script_load(_GCRA)
                replies = self._send(commands)
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
        return [
            Verdict(bool(reply[0]), limit, int(reply[1]), int(reply[2]), int(reply[3]))
            for (_, limit), reply in zip(buckets, replies, strict=True)
        ]


def rate_limited(verdict: Verdict, subject: str) -> ApiError:
    """Return 429 rate_limited, with Retry-After and the RateLimit headers of `verdict`."""
    retry = max(1, math.ceil(verdict.retry_after_ms / 1000))
    return problem(
        "rate_limited",
        f"Too many requests for this {subject}; retry in {retry} s.",
        headers={
            "Retry-After": str(retry),
            "RateLimit-Limit": str(verdict.limit),
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": str(max(1, math.ceil(verdict.reset_ms / 1000))),
        },
        extra={"limit": verdict.limit, "subject": subject},
    )


def body_too_large() -> ApiError:
    """Return 413 body_too_large."""
    return problem("body_too_large", "The request body is larger than this server accepts.")


def install_body_limit(app: Flask) -> None:
    """Refuse a streamed (chunked) body longer than MAX_BODY_BYTES with 413, not cut it."""
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    @app.before_request
    def _limit_streamed_body() -> None:
        if request.content_length is not None:
            return  # a declared length over the limit is refused by werkzeug unread
        if "chunked" not in request.headers.get("Transfer-Encoding", "").lower():
            return
        # werkzeug stops a streamed body at the limit without saying whether more was
        # sent, and the route would see a truncated body; read it here and look past it.
        if _past_limit(request.get_data(), request.environ):
            raise body_too_large()


def _past_limit(data: bytes, environ: WSGIEnvironment) -> bool:
    """Whether a streamed body read up to the limit (`data`) had more to it."""
    return len(data) >= MAX_BODY_BYTES and bool(environ["wsgi.input"].read(1))


def read_body(environ: WSGIEnvironment) -> bytes:
    """A request's body, read as Flask reads it for a route, with the same limit.

    At most MAX_BODY_BYTES: a longer declared Content-Length is refused unread, and a
    streamed body that runs past the limit is refused too (413 body_too_large).
    """
    try:
        data: bytes = get_input_stream(environ, max_content_length=MAX_BODY_BYTES).read()
    except RequestEntityTooLarge:
        raise body_too_large() from None
    if get_content_length(environ) is None and _past_limit(data, environ):
        raise body_too_large()
    return data


class RequestLimits:
    """The per-address and per-token limits of the gateway's requests."""

    def __init__(self, settings: Settings, limiter: RateLimiter) -> None:
        """The limits of `settings`, counted by `limiter`."""
        self.settings = settings
        self.limiter = limiter

    def check(
        self, remote_addr: str | None, forwarded_for: str | None, authorization: str | None
    ) -> None:
        """Count a request; 429 rate_limited if a bucket it counts against is empty.

        `remote_addr` is the peer's address, `forwarded_for` the X-Forwarded-For header
        and `authorization` the Authorization header, as the request came.
        """
        settings = self.settings
        buckets: list[tuple[str, int]] = []
        subjects: list[str] = []
        if settings.rate_limit_per_address > 0:
            address = client_address(remote_addr, forwarded_for, settings.trusted_proxies)
            buckets.append((address_key(address), settings.rate_limit_per_address))
            subjects.append("client address")
        token = bearer_token(authorization)
        if token is not None and settings.rate_limit_per_token > 0:
            buckets.append((token_key(token), settings.rate_limit_per_token))
            subjects.append("seat token")
        if not buckets:
            return
        try:
            verdicts = self.limiter.check(buckets)
        except redis.RedisError as error:
            log.warning("rate limiter unavailable", extra={"error": type(error).__name__})
            return
        refused = [(v, s) for v, s in zip(verdicts, subjects, strict=True) if not v.allowed]
        if refused:
            verdict, subject = max(refused, key=lambda pair: pair[0].retry_after_ms)
            raise rate_limited(verdict, subject)


def request_limits(settings: Settings, store: TableStore) -> RequestLimits | None:
    """The rate limits `settings` ask for, counted in the store's Redis; None if none."""
    if settings.rate_limit_per_address <= 0 and settings.rate_limit_per_token <= 0:
        return None
    return RequestLimits(
        settings, RateLimiter(store.client, settings.rate_limit_window, store.send)
    )


def install_rate_limits(app: Flask, limits: RequestLimits | None) -> None:
    """Refuse requests over the address or token limit with 429 before they do anything."""
    if limits is None:
        return

    @app.before_request
    def _limit() -> None:
        if request.endpoint in UNLIMITED_ENDPOINTS:
            return
        limits.check(
            request.remote_addr,
            request.headers.get("X-Forwarded-For"),
            request.headers.get("Authorization"),
        )
