"""Abuse limits: request rates per client address and per credential (player or seat token).

Each limit is a GCRA bucket in Redis (`api.adapters.ratelimit`): `limit` requests
per `window` seconds, any of them in one burst. Keys (each its own hash tag, so a bucket
lives on one Redis Cluster slot and the buckets spread over the cluster; each expires
when its bucket is full again):

    ratelimit:{addr:<address>}      per client address (an IPv6 address by its /64)
    ratelimit:{player:<id>}         per player, whichever of their credentials is sent
    ratelimit:{seat:<sha256>}       per seat token (its digest, never the token)
    ratelimit:{players:<address>}   players created per address per hour (open mode)

Health, readiness and metrics are never limited. If Redis cannot be reached the
request goes on unlimited: the limiter must not turn an outage into a failure of its
own, and the request meets the store's 503 anyway if it needs Redis.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import math

from api.adapters.ratelimit import RateLimiter, Verdict
from api.adapters.store import STORE_ERRORS, TableStore
from api.errors import ApiError, problem
from api.settings import Settings

log = logging.getLogger("cardroom.gateway")


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


def credential_key(scope: str) -> str:
    """The Redis key of a credential's bucket: a player's, or a seat token's (its digest)."""
    return f"ratelimit:{{{scope}}}"


PLAYER_CREATION_WINDOW = 3600.0


def rate_limited(verdict: Verdict, subject: str) -> ApiError:
    """Return 429 rate_limited, with Retry-After and the RateLimit headers of `verdict`."""
    retry = max(1, math.ceil(verdict.retry_after_ms / 1000))
    return problem(
        "rate_limited",
        "Too many requests for this {subject}; retry in {retry} s.",
        headers={
            "Retry-After": str(retry),
            "RateLimit-Limit": str(verdict.limit),
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": str(max(1, math.ceil(verdict.reset_ms / 1000))),
        },
        extra={"limit": verdict.limit, "subject": subject},
        subject=subject,
        retry=retry,
    )


class RequestLimits:
    """The per-address and per-token limits of the gateway's requests."""

    def __init__(
        self, settings: Settings, limiter: RateLimiter, creations: RateLimiter | None = None
    ) -> None:
        """The limits of `settings`, counted by `limiter` (players created by `creations`)."""
        self.settings = settings
        self.limiter = limiter
        self.creations = creations

    def check_creation(self, remote_addr: str | None, forwarded_for: str | None) -> None:
        """Count a player's creation against its address; 429 rate_limited past the limit."""
        settings = self.settings
        if self.creations is None or settings.players_per_address <= 0:
            return
        address = client_address(remote_addr, forwarded_for, settings.trusted_proxies)
        try:
            (verdict,) = self.creations.check(
                [(f"ratelimit:{{players:{address}}}", settings.players_per_address)]
            )
        except STORE_ERRORS as error:
            log.warning("rate limiter unavailable", extra={"error": type(error).__name__})
            return
        if not verdict.allowed:
            raise rate_limited(verdict, "client address's new players")

    def check(self, remote_addr: str | None, forwarded_for: str | None, scope: str | None) -> None:
        """Count a request; 429 rate_limited if a bucket it counts against is empty.

        `remote_addr` is the peer's address, `forwarded_for` the X-Forwarded-For header
        as the request came, and `scope` the credential's (a player or a seat token's:
        `Principal.scope`), None for a request without one that holds.
        """
        settings = self.settings
        buckets: list[tuple[str, int]] = []
        subjects: list[str] = []
        if settings.rate_limit_per_address > 0:
            address = client_address(remote_addr, forwarded_for, settings.trusted_proxies)
            buckets.append((address_key(address), settings.rate_limit_per_address))
            subjects.append("client address")
        if scope is not None and settings.rate_limit_per_token > 0:
            buckets.append((credential_key(scope), settings.rate_limit_per_token))
            subjects.append("player" if scope.startswith("player:") else "seat token")
        if not buckets:
            return
        try:
            verdicts = self.limiter.check(buckets)
        except STORE_ERRORS as error:
            log.warning("rate limiter unavailable", extra={"error": type(error).__name__})
            return
        refused = [(v, s) for v, s in zip(verdicts, subjects, strict=True) if not v.allowed]
        if refused:
            verdict, subject = max(refused, key=lambda pair: pair[0].retry_after_ms)
            raise rate_limited(verdict, subject)


def request_limits(settings: Settings, store: TableStore) -> RequestLimits | None:
    """The rate limits `settings` ask for, counted in the store's Redis; None if none."""
    if (
        settings.rate_limit_per_address <= 0
        and settings.rate_limit_per_token <= 0
        and settings.players_per_address <= 0
    ):
        return None
    return RequestLimits(
        settings,
        RateLimiter(store.client, settings.rate_limit_window, store.send),
        RateLimiter(store.client, PLAYER_CREATION_WINDOW, store.send),
    )
