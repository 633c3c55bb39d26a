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

    `categories` and `descriptions` are None when they were omitted; `descriptions`
    else holds each hand's description, taken from the reply's table of distinct ones.
    """

    strengths: npt.NDArray[np.uint32] | npt.NDArray[np.uint16]
    categories: npt.NDArray[np.uint8] | None
    leftovers: npt.NDArray[np.uint8] | None
    descriptions: list[str] | None


def packed_request(
    game: pb.Game.ValueType,
    hands: npt.NDArray[np.integer[Any]],
    wild_rank: int | None = None,
    describe: bool = False,
    valuation: pb.PaiuteValuation.ValueType = pb.PAIUTE_VALUATION_UNSPECIFIED,
    strength_bytes: int = 4,
    categories: bool = True,
) -> pb.EvaluateRequest:
    """An EvaluateRequest of (N, cards) card indexes that asks for a packed reply, its
    strengths `strength_bytes` wide (2 for Guts only), with or without the categories."""
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
        strength_bytes=0 if strength_bytes == 4 else strength_bytes,
        omit_categories=not categories,
    )


def read_packed_reply(reply: pb.EvaluateResponse, strength_bytes: int = 4) -> PackedReply:
    """The arrays of a packed reply whose strengths are `strength_bytes` wide (what the
    request asked for); the strengths and categories are views of its bytes."""
    width = {4: "<u4", 2: "<u2"}[strength_bytes]
    strengths = np.frombuffer(reply.packed_strengths, dtype=width)
    categories = (
        np.frombuffer(reply.packed_categories, dtype=np.uint8) if reply.packed_categories else None
    )
    if categories is not None and len(categories) != len(strengths):
        raise ValueError(
            f"{len(categories)} categories for {len(strengths)} strengths of"
            f" {strength_bytes} bytes: read the reply with the request's strength_bytes"
        )
    leftovers = np.frombuffer(reply.leftovers, dtype=np.uint8) if reply.leftovers else None
    descriptions = None
    if reply.description_table:
        table = list(reply.description_table)
        indexes = np.frombuffer(reply.description_indexes, dtype="<u2")
        descriptions = [table[index] for index in indexes.tolist()]
    return PackedReply(strengths, categories, leftovers, descriptions)
