"""The bulk caller's side of Evaluate: numpy hands in a request, a packed reply as arrays.

A packed request carries the hands as one byte per card and asks for a packed reply,
whose strengths and categories are fixed-width bytes: reading them is
`numpy.frombuffer`, which copies nothing. Only the protobuf message and numpy are
needed, so a caller may copy this module as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cardroom.evaluator.v1 import evaluator_pb2 as pb


@dataclass(frozen=True)
class PackedReply:
    """A packed EvaluateResponse read as arrays, one entry per hand, in request order.

    `descriptions` is None when they were omitted; else it holds each hand's
    description, taken from the reply's table of distinct ones.
    """

    strengths: npt.NDArray[np.uint32]
    categories: npt.NDArray[np.uint8]
    leftovers: npt.NDArray[np.uint8] | None
    descriptions: list[str] | None


def packed_request(
    game: pb.Game.ValueType,
    hands: npt.NDArray[np.integer[Any]],
    wild_rank: int | None = None,
    describe: bool = False,
    valuation: pb.PaiuteValuation.ValueType = pb.PAIUTE_VALUATION_UNSPECIFIED,
) -> pb.EvaluateRequest:
    """An EvaluateRequest of (N, cards) card indexes that asks for a packed reply."""
    cards = np.ascontiguousarray(hands, dtype=np.uint8)
    if cards.ndim != 2:
        raise ValueError(f"hands must be a 2-D array of card indexes, got shape {cards.shape}")
    return pb.EvaluateRequest(
        game=game,
        wild_rank=wild_rank,
        packed_hands=cards.tobytes(),
        cards_per_hand=cards.shape[1],
        omit_descriptions=not describe,
        paiute_valuation=valuation,
        packed_reply=True,
    )


def read_packed_reply(reply: pb.EvaluateResponse) -> PackedReply:
    """The arrays of a packed reply; the strengths and categories are views of its bytes."""
    strengths = np.frombuffer(reply.packed_strengths, dtype="<u4")
    categories = np.frombuffer(reply.packed_categories, dtype=np.uint8)
    leftovers = np.frombuffer(reply.leftovers, dtype=np.uint8) if reply.leftovers else None
    descriptions = None
    if reply.description_table:
        table = list(reply.description_table)
        indexes = np.frombuffer(reply.description_indexes, dtype="<u2")
        descriptions = [table[index] for index in indexes.tolist()]
    return PackedReply(strengths, categories, leftovers, descriptions)
