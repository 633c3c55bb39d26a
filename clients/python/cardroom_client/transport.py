"""HTTP for the SDK: one pooled httpx client, problem+json -> exceptions, safe retries.

httpx is the HTTP library: it pools and reuses connections (one `Client` serves any
number of threads), has separate connect/read/write/pool timeouts, and streams
response bodies line by line, which server-sent events need. The standard library's
urllib has no pooling and no streaming timeouts of that kind.

Retries are safe because every write to a table carries an ``Idempotency-Key``: one
fresh random key per logical call, sent again unchanged with each retry of that call, so
the gateway applies the write at most once and replays its first answer to a retry.
Reads need no key; the players' calls send none (the gateway keeps no record of them: a
retried creation may leave a player or a key nobody holds). A call is retried after a
network error, on 429 (but not ``quota_exceeded``: what a player holds does not shrink
by waiting), 502, 503 and 504, and on the 409 codes that mean nothing happened yet
(``idempotency_in_progress``, ``conflict`` from contention); it waits at least the
``Retry-After`` the gateway sent, otherwise an exponential backoff with full jitter,
within `RetryPolicy.attempts` and `RetryPolicy.deadline`.
"""

from __future__ import annotations

import email.utils
import json
import random
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from cardroom_client.errors import CardroomError, ConnectionFailed, from_problem
from cardroom_client.models import SLOTS

# the package's version (pyproject.toml reads it from here)
VERSION = "0.1.0"
USER_AGENT = f"cardroom-client/{VERSION}"
RETRYABLE_STATUSES: frozenset[int] = frozenset({429, 502, 503, 504})
RETRYABLE_CODES: frozenset[str] = frozenset({"idempotency_in_progress", "conflict"})
# codes of a retryable status that waiting does not cure
FINAL_CODES: frozenset[str] = frozenset({"quota_exceeded"})
# Failures where the request may not have reached the server, or its answer was lost.
NETWORK_ERRORS: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)


@dataclass(frozen=True, **SLOTS)
class RetryPolicy:
    """How a call is retried: at most `attempts` tries within `deadline` seconds in all.

    Between tries it waits the gateway's ``Retry-After`` (plus up to `backoff` of
    jitter) when there is one, else a random time up to ``backoff * 2**n`` capped at
    `max_backoff`. `attempts=1` turns retrying off. A failure is retried when its
    status is one of `statuses` (and its code none of `final_codes`), or it is a 409
    with one of `codes`, or no answer came.
    """

    attempts: int = 5
    deadline: float = 30.0
    backoff: float = 0.1
    max_backoff: float = 5.0
    statuses: frozenset[int] = RETRYABLE_STATUSES
    codes: frozenset[str] = RETRYABLE_CODES
    on_retry: Callable[[int, CardroomError, float], None] | None = field(
        default=None, compare=False
    )
    final_codes: frozenset[str] = FINAL_CODES

    @classmethod
    def never(cls) -> RetryPolicy:
        """One try, no retry."""
        return cls(attempts=1)

    def retryable(self, error: CardroomError) -> bool:
        """True if a failure of this kind may be retried safely."""
        if error.status is None:
            return True
        if error.status in self.statuses:
            return error.code not in self.final_codes
        return error.status == 409 and error.code in self.codes

    def delay(self, retry: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number `retry` (1 for the first retry)."""
        if retry_after is not None:
            return retry_after + random.uniform(0, self.backoff)
        return random.uniform(0, min(self.max_backoff, self.backoff * 2 ** (retry - 1)))


def new_idempotency_key() -> str:
    """A fresh random Idempotency-Key (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def parse_retry_after(value: str | None) -> float | None:
    """Retry-After as seconds: a number of seconds or an HTTP date; None if absent or bad."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_from_response(response: httpx.Response, method: str) -> CardroomError:
    """The exception for an error response, from its problem+json body when it has one."""
    body: Mapping[str, Any] | None = None
    fallback = ""
    content = response.content
    if "json" in response.headers.get("content-type", ""):
        try:
            parsed = json.loads(content)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            body = parsed
    if body is None:
        fallback = content[:200].decode("utf-8", "replace").strip()
    return from_problem(
        response.status_code,
        body,
        retry_after=parse_retry_after(response.headers.get("retry-after")),
        method=method,
        url=str(response.request.url),
        fallback=fallback,
    )


def connection_failed(error: Exception, method: str, url: str) -> ConnectionFailed:
    """The exception for a request that got no answer."""
    kind = type(error).__name__
    return ConnectionFailed(
        None,
        "connection_failed",
        "No answer",
        f"No answer from the gateway ({kind}: {error or 'no detail'}).",
        method=method,
        url=url,
    )


class Transport:
    """One pooled HTTP client for a gateway, with the retry loop around each call."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float,
        connect_timeout: float,
        retry: RetryPolicy,
        headers: Mapping[str, str] | None = None,
        event_hooks: Mapping[str, list[Callable[..., Any]]] | None = None,
        limits: httpx.Limits | None = None,
        verify: bool | str = True,
    ) -> None:
        """Talk to `base_url`; `timeout` is the default read timeout of a request."""
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.retry = retry
        self.http = httpx.Client(
            base_url=self.base_url,
            headers={"User-Agent": USER_AGENT, "Accept": "application/json", **(headers or {})},
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            event_hooks=dict(event_hooks or {}),
            limits=limits or httpx.Limits(max_connections=100, max_keepalive_connections=20),
            verify=verify,
        )

    def close(self) -> None:
        """Close every pooled connection."""
        self.http.close()

    def timeout_for(self, read: float) -> httpx.Timeout:
        """A request timeout whose read part is `read` seconds."""
        return httpx.Timeout(read, connect=self.connect_timeout)

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        write: bool = False,
        idempotency_key: str | None = None,
        read_timeout: float | None = None,
        retry: RetryPolicy | None = None,
        ok: frozenset[int] = frozenset({200, 201}),
    ) -> httpx.Response:
        """One logical call: retried by `retry`; the response, or the call's exception."""
        policy = retry or self.retry
        sent: dict[str, str] = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if write:
            sent["Idempotency-Key"] = idempotency_key or new_idempotency_key()
        content = None
        if body is not None:
            content = json.dumps(body, separators=(",", ":")).encode()
            sent["Content-Type"] = "application/json"
        timeout = self.timeout_for(read_timeout) if read_timeout is not None else None
        ends = time.monotonic() + policy.deadline
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self.http.request(
                    method,
                    path,
                    params=params,
                    content=content,
                    headers=sent,
                    timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
                )
            except NETWORK_ERRORS as failure:
                error: CardroomError = connection_failed(failure, method, self.base_url + path)
                error.__cause__ = failure
            else:
                if response.status_code in ok or response.status_code == 304:
                    return response
                error = error_from_response(response, method)
            if attempt >= policy.attempts or not policy.retryable(error):
                raise error
            pause = policy.delay(attempt, error.retry_after)
            if time.monotonic() + pause > ends:
                raise error
            if policy.on_retry is not None:
                policy.on_retry(attempt, error, pause)
            time.sleep(pause)
