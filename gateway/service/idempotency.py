"""Requests made safe to retry: Idempotency-Keys, their outcomes, sealed seat tokens, If-Match."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from gateway import jsonio
from gateway.adapters.store import TableStore
from gateway.errors import ApiError, idempotency_in_progress


@dataclass(frozen=True)
class Idempotency:
    """An Idempotency-Key and the fingerprint of the request it came with."""

    key: str
    fingerprint: str


@dataclass
class Outcome:
    """What a move answered: HTTP status and body, plus headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str]


@dataclass(frozen=True)
class IfMatch:
    """An If-Match precondition: any version ("*", `tags` None) or one of these strong tags."""

    tags: frozenset[str] | None

    def matches(self, version: int) -> bool:
        """Whether the table's `version` satisfies the precondition."""
        return self.tags is None or str(version) in self.tags


def seal_token(token: str, idempotency: str) -> str:
    """The seat token, encrypted under the Idempotency-Key the client holds.

    A replayed seat grant must return the first token, but tokens are stored only as
    digests: the replay record keeps the token XOR-ed with a key stream derived from
    the Idempotency-Key, which is itself stored only as a digest.
    """
    raw = bytes.fromhex(token)
    stream = hashlib.sha256(b"cardroom seat token\0" + idempotency.encode()).digest()
    return bytes(a ^ b for a, b in zip(raw, stream, strict=True)).hex()


def open_token(sealed: str, idempotency: str) -> str:
    """The seat token `seal_token` sealed under `idempotency`."""
    return seal_token(sealed, idempotency)


def error_outcome(error: ApiError) -> Outcome:
    """A refusal as it is kept for replays."""
    return Outcome(
        error.status,
        {
            "code": error.code,
            "title": error.title,
            "detail": error.detail,
            "field": error.field,
        },
        {},
    )


class Replays:
    """The answers to requests sent with an Idempotency-Key, kept for `ttl` seconds."""

    def __init__(self, store: TableStore, ttl: int) -> None:
        """Keep answers in `store` for `ttl` seconds."""
        self.store = store
        self.ttl = ttl

    def replay(self, key: str, idempotency: Idempotency) -> Outcome | None:
        """The answer kept under `key` for this request, None if there is none."""
        return self.replay_record(self.store.get_json(key), idempotency)

    def replay_record(
        self, stored: dict[str, Any] | None, idempotency: Idempotency
    ) -> Outcome | None:
        """The answer `stored` holds for this request: 409 if it was another request's."""
        if stored is None:
            return None
        if stored.get("fingerprint") != idempotency.fingerprint:
            raise ApiError(
                409,
                "idempotency_key_reused",
                "Idempotency-Key reused",
                "This Idempotency-Key was used with a different request.",
                field="Idempotency-Key",
            )
        if stored.get("pending"):
            return self.in_progress()
        body = stored["body"]
        if "sealed_token" in stored:
            body["token"] = open_token(stored["sealed_token"], idempotency.key)
        if stored["status"] >= 400:
            raise ApiError(
                stored["status"],
                body["code"],
                body["title"],
                body["detail"],
                field=body.get("field"),
                headers={"Idempotent-Replayed": "true"},
            )
        return Outcome(stored["status"], body, {**stored["headers"], "Idempotent-Replayed": "true"})

    def in_progress(self) -> Outcome:
        """409 idempotency_in_progress: the first request with the key still runs."""
        raise idempotency_in_progress()

    def record_value(self, idempotency: Idempotency, outcome: Outcome, seal: str | None) -> str:
        """What is kept of `outcome`: its seat token, if any, sealed under the key."""
        body = dict(outcome.body)
        value: dict[str, Any] = {
            "fingerprint": idempotency.fingerprint,
            "status": outcome.status,
            "headers": outcome.headers,
        }
        if seal is not None and "token" in body:
            value["sealed_token"] = seal_token(body.pop("token"), idempotency.key)
        value["body"] = body
        return jsonio.dumps(value)

    def remember(self, key: str, idempotency: Idempotency | None, outcome: Outcome) -> None:
        """Keep `outcome` as the answer to replays of `idempotency` under `key`."""
        if idempotency is not None:
            self.store.client.set(key, self.record_value(idempotency, outcome, None), ex=self.ttl)
