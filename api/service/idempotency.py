"""Requests made safe to retry: Idempotency-Keys, their outcomes, sealed seat tokens, If-Match."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from api import jsonio
from api.adapters.store import ReplayRecord, TableStore
from api.errors import ApiError, idempotency_in_progress
from api.jsonio import JsonObject

# A claimed key whose request died unanswered may be used again this much later.
PENDING_SECONDS = 60


@dataclass(frozen=True)
class Idempotency:
    """An Idempotency-Key and the fingerprint of the request it came with."""

    key: str
    fingerprint: str


@dataclass
class Outcome:
    """What a move answered: HTTP status and body, plus headers."""

    status: int
    body: Mapping[str, object]  # JSON, as the HTTP layer sends it
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
        return self.replay_record(self.store.replay_record(key), idempotency, key)

    def replay_record(
        self, stored: ReplayRecord | None, idempotency: Idempotency, key: str
    ) -> Outcome | None:
        """The answer `stored` (kept under `key`) holds for this request: 409 if it was
        another request's; a change's answer only once a replica has the change, when
        writes wait for replicas (`TableStore.confirm`)."""
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
        body: JsonObject = stored.get("body", {})
        if "sealed_token" in stored:
            body["token"] = open_token(stored["sealed_token"], idempotency.key)
        status = stored.get("status", 500)
        if status >= 400:
            field = body.get("field")
            raise ApiError(
                status,
                str(body["code"]),
                str(body["title"]),
                str(body["detail"]),
                field=None if field is None else str(field),
                headers={"Idempotent-Replayed": "true"},
            )
        self.store.confirm(key, self.ttl)
        headers = stored.get("headers", {})
        return Outcome(status, body, {**headers, "Idempotent-Replayed": "true"})

    def claim(self, key: str, idempotency: Idempotency) -> Outcome | None:
        """Hold `key` for this request while it runs (a record kept apart from the
        table's commit): None once held; the answer kept for it, if any (a replay);
        409 idempotency_in_progress while the first request with the key still runs."""
        replay = self.replay(key, idempotency)
        if replay is not None:
            return replay
        pending: ReplayRecord = {"pending": True, "fingerprint": idempotency.fingerprint}
        if self.store.claim(key, pending, PENDING_SECONDS):
            return None
        return self.replay(key, idempotency) or self.in_progress()

    def release(self, key: str) -> None:
        """Give up a claimed key unanswered: a retry may try again at once."""
        self.store.delete([key])

    def in_progress(self) -> Outcome:
        """409 idempotency_in_progress: the first request with the key still runs."""
        raise idempotency_in_progress()

    def record_value(self, idempotency: Idempotency, outcome: Outcome, seal: str | None) -> str:
        """What is kept of `outcome`: its seat token, if any, sealed under the key."""
        body = dict(outcome.body)
        value: dict[str, object] = {
            "fingerprint": idempotency.fingerprint,
            "status": outcome.status,
            "headers": outcome.headers,
        }
        token = body.pop("token", None) if seal is not None else None
        if isinstance(token, str):
            value["sealed_token"] = seal_token(token, idempotency.key)
        value["body"] = body
        return jsonio.dumps(value)

    def remember(
        self,
        key: str,
        idempotency: Idempotency | None,
        outcome: Outcome,
        seal: str | None = None,
    ) -> None:
        """Keep `outcome` as the answer to replays of `idempotency` under `key` (the seat
        token `seal` it holds, if any, sealed under the key)."""
        if idempotency is not None:
            self.store.client.set(key, self.record_value(idempotency, outcome, seal), ex=self.ttl)
