"""The gateway's gRPC client of the evaluator: deadlines, retries, balancing, TLS.

One channel per process. The address may name one evaluator, several
(`host1:50051,host2:50051`, balanced by the client) or a DNS name that resolves to
several (`dns:///evaluator-headless:50051`). The service config asks gRPC for
`round_robin` balancing and retries of UNAVAILABLE; gRPC errors become ApiErrors.

In a gevent worker, showdowns are batched: a grpcio call costs the worker about
300 µs of CPU whatever it carries (gRPC's machinery under gevent, not the request), so
the showdowns of other tables that arrive while one call is on the wire wait for it
and then leave together as one `ShowdownBatch` call. An idle worker's showdown leaves
at once, alone (a `Showdown` call); each showdown keeps its own deadline, its own
invalid-hand refusal and the same error as a call of its own when the evaluator cannot
answer (docs/performance.md, "A cheaper showdown").
"""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import grpc

from api.adapters.batching import Batches, Queued
from api.errors import ApiError, EvaluatorUnavailable
from api.games.common import Ranked
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc

SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{"service": "cardroom.evaluator.v1.Evaluator"}],
                "retryPolicy": {
                    "maxAttempts": 5,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
)

GAMES = {"guts2": pb.GUTS_2, "guts3": pb.GUTS_3, "paiute": pb.PAIUTE}
# How six-card Paiute hands are valued; "six_card_combinations" is the rule a table plays.
PAIUTE_VALUATIONS = {
    "six_card_combinations": pb.SIX_CARD_COMBINATIONS,
    "best_of_any": pb.BEST_OF_ANY,
}
RULE_VALUATION = "six_card_combinations"
# showdowns in one ShowdownBatch call (the evaluator takes up to 64)
BATCH_SHOWDOWNS = 32


def channel_target(address: str) -> str:
    """A gRPC target for one address, a comma-separated list, or a `dns:///` name.

    A list is resolved once, here, into gRPC's static `ipv4:` form; a set of replicas
    that changes is better named by one DNS name resolving to all of them.
    """
    addresses = [part.strip() for part in address.split(",") if part.strip()]
    if not addresses:
        raise ValueError("EVALUATOR_ADDR is empty")
    if len(addresses) == 1:
        return addresses[0]
    resolved = []
    for entry in addresses:
        host, _, port = entry.rpartition(":")
        for info in socket.getaddrinfo(host, int(port), socket.AF_INET, socket.SOCK_STREAM):
            resolved.append(f"{info[4][0]}:{port}")
    return "ipv4:" + ",".join(dict.fromkeys(resolved))


@dataclass(frozen=True)
class EvaluatorTls:
    """PEM files: the CA that signed the evaluator, and our own pair for mutual TLS."""

    ca: str
    certificate: str | None = None
    private_key: str | None = None
    server_name: str | None = None


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


class EvaluatorClient:
    """Calls the evaluator; each call has a deadline and is retried when UNAVAILABLE."""

    def __init__(self, address: str, timeout: float, tls: EvaluatorTls | None = None) -> None:
        """Open a channel (lazily connected) to `address`."""
        options: list[tuple[str, str | int]] = [
            ("grpc.service_config", SERVICE_CONFIG),
            ("grpc.enable_retries", 1),
            ("grpc.keepalive_time_ms", 30_000),
            # reconnect quickly once an evaluator is back, so a stalled showdown resumes
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 1_000),
        ]
        target = channel_target(address)
        if tls is None:
            self._channel = grpc.insecure_channel(target, options=options)
        else:
            if tls.server_name:
                options.append(("grpc.ssl_target_name_override", tls.server_name))
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read(tls.ca),
                private_key=_read(tls.private_key) if tls.private_key else None,
                certificate_chain=_read(tls.certificate) if tls.certificate else None,
            )
            self._channel = grpc.secure_channel(target, credentials, options=options)
        self._stub = pb_grpc.EvaluatorStub(self._channel)
        self._timeout = timeout
        self._batcher = _ShowdownBatcher(self) if _gevent_worker() else None
        self._batches_answered = True  # False once the evaluator has no ShowdownBatch

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    def _fail(self, error: grpc.RpcError, fields: Mapping[str, str] | None = None) -> ApiError:
        """The gateway's error for a failed call. An invalid argument blames the request
        field that `fields` maps the evaluator's named field to (``hands[2]: ...`` ->
        ``hands[2]``)."""
        code = error.code()
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return _invalid(str(error.details() or ""), fields)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return EvaluatorUnavailable(
                "The hand evaluator did not answer within {timeout:g} s; retry shortly.",
                timeout=self._timeout,
            )
        return EvaluatorUnavailable(
            "The hand evaluator did not answer ({grpc_status}).", grpc_status=code.name
        )

    def ping(self) -> None:
        """Raise unless an evaluator answers."""
        try:
            self._stub.Ping(pb.PingRequest(), timeout=self._timeout)
        except grpc.RpcError as error:
            raise self._fail(error) from None

    def showdown(
        self,
        game: str,
        hands: Mapping[str, Sequence[str]],
        wild_rank: int | None = None,
    ) -> dict[str, Ranked]:
        """Rank hands keyed by seat (and "ghost"); each key's Ranked.

        Paiute hands are valued as the rules value a laid-down hand: six cards only as a
        six-card combination.
        """
        request = pb.ShowdownRequest(game=GAMES[game])
        if wild_rank is not None:
            request.wild_rank = wild_rank
        if game == "paiute":
            request.paiute_valuation = PAIUTE_VALUATIONS[RULE_VALUATION]
        order = []
        for key, cards in hands.items():
            if key == "ghost":
                request.ghost.cards = " ".join(cards)
            else:
                request.hands.add(seat=int(key), cards=" ".join(cards))
                order.append(key)
        if self._batcher is None:
            reply = self._showdown_alone(request, self._timeout)
        else:
            reply = self._batcher.send(request, time.monotonic() + self._timeout)
        ranks = {
            key: Ranked(hand.strength, pb.Category.Name(hand.category), hand.description)
            for key, hand in zip(order, reply.hands, strict=True)
        }
        if reply.HasField("ghost"):
            ghost = reply.ghost
            ranks["ghost"] = Ranked(
                ghost.strength, pb.Category.Name(ghost.category), ghost.description
            )
        return ranks

    def _showdown_alone(self, request: pb.ShowdownRequest, timeout: float) -> pb.ShowdownResponse:
        try:
            reply: pb.ShowdownResponse = self._stub.Showdown(request, timeout=timeout)
            return reply
        except grpc.RpcError as error:
            raise self._fail(error) from None

    def _showdowns(
        self, requests: Sequence[pb.ShowdownRequest], timeout: float
    ) -> list[pb.ShowdownResponse | ApiError]:
        """Each showdown's reply or error, from one ShowdownBatch call (from a Showdown
        call each when the evaluator has no ShowdownBatch yet, as during an upgrade)."""
        if len(requests) == 1 or not self._batches_answered:
            return [self._alone_or_error(request, timeout) for request in requests]
        batch = pb.ShowdownBatchRequest(showdowns=requests)
        try:
            reply = self._stub.ShowdownBatch(batch, timeout=timeout)
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self._batches_answered = False
                return [self._alone_or_error(request, timeout) for request in requests]
            return [self._fail(error) for _ in requests]
        return [
            outcome.ranked if outcome.HasField("ranked") else _invalid(outcome.fault, None)
            for outcome in reply.outcomes
        ]

    def _alone_or_error(
        self, request: pb.ShowdownRequest, timeout: float
    ) -> pb.ShowdownResponse | ApiError:
        try:
            return self._showdown_alone(request, timeout)
        except ApiError as error:
            return error

    def evaluate(
        self,
        game: str,
        hands: Sequence[str],
        wild_rank: int | None = None,
        paiute_valuation: str | None = None,
    ) -> list[dict[str, object]]:
        """Rank readable hands: strength, category, description and leftover of each.

        `paiute_valuation` (Paiute only) is a key of PAIUTE_VALUATIONS; None is the rule's.
        """
        request = pb.EvaluateRequest(game=GAMES[game], hands=hands)
        if wild_rank is not None:
            request.wild_rank = wild_rank
        if game == "paiute":
            request.paiute_valuation = PAIUTE_VALUATIONS[paiute_valuation or RULE_VALUATION]
        try:
            reply = self._stub.Evaluate(request, timeout=self._timeout)
        except grpc.RpcError as error:
            raise self._fail(error, {"hands": "hands"}) from None
        leftovers = reply.leftovers or bytes([255] * len(hands))
        return [
            {
                "hand": hand,
                "strength": strength,
                "category": pb.Category.Name(category),
                "description": description,
                "leftover": None if left == 255 else _card_text(left),
            }
            for hand, strength, category, description, left in zip(
                hands,
                reply.strengths,
                reply.categories,
                reply.descriptions,
                leftovers,
                strict=True,
            )
        ]

    def rank(self, game: str, cards: Sequence[str], wild_rank: int | None = None) -> Ranked:
        """Rank one hand; a Paiute hand as the rules value the cards a call shows."""
        result = self.evaluate(game, [" ".join(cards)], wild_rank)[0]
        return Ranked(
            int(str(result["strength"])), str(result["category"]), str(result["description"])
        )

    def odds(
        self, game: str, hand: str, opponents: int, samples: int, seed: int | None
    ) -> dict[str, object]:
        """A Guts hand's chances against random opponents."""
        request = pb.OddsRequest(
            game=GAMES[game], cards=hand, opponents=opponents, samples=samples, seed=seed or 0
        )
        try:
            reply = self._stub.Odds(request, timeout=max(self._timeout, 30.0))
        except grpc.RpcError as error:
            raise self._fail(error, {"cards": "odds.hand"}) from None
        return {
            "win": reply.win,
            "tie": reply.tie,
            "lose": reply.lose,
            "exact": reply.exact,
            "samples": reply.samples,
            "wins": reply.wins,
            "ties": reply.ties,
            "losses": reply.losses,
        }


_NAMED_FIELD = re.compile(r"([a-z_]+)(\[\d+\])?:")


def _invalid(detail: str, fields: Mapping[str, str] | None) -> ApiError:
    """422 invalid_hand for the evaluator's refusal `detail`, blaming the request field
    that `fields` maps its named field to."""
    named = _NAMED_FIELD.match(detail)
    blamed = None
    if named and fields and named.group(1) in fields:
        blamed = fields[named.group(1)] + (named.group(2) or "")
    return ApiError(422, "invalid_hand", "Invalid hand", detail, field=blamed)


def _gevent_worker() -> bool:
    """Whether this process runs greenlets on a patched standard library."""
    try:
        from gevent import monkey
    except ImportError:
        return False
    return bool(monkey.is_module_patched("socket"))


class _Waiting(Queued):
    """A showdown in the queue and, once its batch is back, its reply or error."""

    __slots__ = ("deadline", "error", "reply", "request")

    def __init__(self, request: pb.ShowdownRequest, deadline: float) -> None:
        super().__init__()
        self.request = request
        self.deadline = deadline
        self.reply: pb.ShowdownResponse | None = None
        self.error: ApiError | None = None


class _ShowdownBatcher(Batches[_Waiting]):
    """At most one showdown call in flight per worker; the showdowns that queue
    meanwhile leave together once it is back (api.adapters.batching)."""

    limit = BATCH_SHOWDOWNS

    def __init__(self, client: EvaluatorClient) -> None:
        super().__init__()
        self._client = client

    def send(self, request: pb.ShowdownRequest, deadline: float) -> pb.ShowdownResponse:
        """The showdown's reply; raises its ApiError."""
        slot = _Waiting(request, deadline)
        self._take_turn(slot)
        if slot.error is not None:
            raise slot.error
        assert slot.reply is not None
        return slot.reply

    def _send(self, batch: list[_Waiting]) -> None:
        # the call has the time the most pressed showdown has left (and fails as a call
        # of its own would when that has run out)
        timeout = max(min(slot.deadline for slot in batch) - time.monotonic(), 0.001)
        try:
            answers = self._client._showdowns([slot.request for slot in batch], timeout)
        except BaseException:  # the leader was interrupted (killed) mid-call
            for slot in batch:
                slot.error = EvaluatorUnavailable()
            raise
        for slot, answer in zip(batch, answers, strict=True):
            if isinstance(answer, ApiError):
                slot.error = answer
            else:
                slot.reply = answer


def _card_text(index: int) -> str:
    # the wire mapping of the proto: index = (rank - 2) * 4 + suit
    return "23456789TJQKA"[index // 4] + "cdhs"[index % 4]
