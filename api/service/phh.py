"""A finished deal as text, modeled on the Poker Hand History (PHH) standard: TOML with
PHH's fields and action notation, and variant codes of its own for Guts and Paiute
(docs/hand-histories.md). Pure: it writes what a reader's view of a deal holds.

Players are numbered p1, p2, ... in the order the deal dealt them (the `players` of its
`deal_started` event); `seats` gives each one's seat. A card the reader did not see is
`??`, as in PHH.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

GUTS_VARIANTS = {2: "GU2", 3: "GU3"}
PAIUTE_VARIANT = "PAI"


def variant_of(game: str, cards: int | None) -> str:
    """The variant code of a game: GU2 or GU3 (Guts with two or three cards), PAI."""
    if game == "guts":
        return GUTS_VARIANTS.get(cards or 3, "GU3")
    return PAIUTE_VARIANT


def _quoted(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


class _Writer:
    """The actions of one deal, from the events its reader sees."""

    def __init__(self, players: Sequence[int]) -> None:
        self.number = {seat: index + 1 for index, seat in enumerate(players)}
        self.actions: list[str] = []
        self.dealt: dict[int, list[str]] = {}
        self.declared: set[int] = set()

    def actor(self, seat: int) -> str:
        return f"p{self.number.get(seat, 0)}"

    def note(self, item: Mapping[str, Any]) -> None:
        kind, data = item["type"], item["data"]
        if kind == "cards_dealt":
            self.dealt[data["seat"]] = list(data["cards"])
        elif kind == "dealt":
            for seat in data["players"]:
                hole = self.dealt.get(seat) or ["??"] * int(data["cards"])
                self.actions.append(f"d dh {self.actor(seat)} {''.join(hole)}")
        elif kind == "wild_card":
            self.actions.append(f"d db {data['card']} # the wild card")
        elif kind == "declared" and "choice" in data:
            self._declare(data["seat"], data["choice"])
        elif kind == "declarations_revealed":
            for seat, choice in sorted(data["choices"].items(), key=lambda pair: int(pair[0])):
                self._declare(int(seat), choice)
        elif kind == "showdown":
            for seat, hand in sorted(data["hands"].items(), key=lambda pair: int(pair[0])):
                shown = "".join(hand["cards"] or ()) or "-"
                self.actions.append(f"{self.actor(int(seat))} sm {shown} # {hand['description']}")
        elif kind == "drew":
            card = data.get("card") or "??"
            where = "the discard pile" if data["source"] == "discard" else "the stock"
            self.actions.append(f"d dh {self.actor(data['seat'])} {card} # from {where}")
        elif kind == "drew_card" and self.actions and self.actions[-1].endswith("# from the stock"):
            # the drawer's own view of the card the stock gave them
            self.actions[-1] = f"d dh {self.actor(data['seat'])} {data['card']} # from the stock"
        elif kind == "discarded":
            self.actions.append(f"{self.actor(data['seat'])} sd {data['card']}")
        elif kind in ("called", "laid_down"):
            cards = "".join(data["cards"])
            verb = "calls" if kind == "called" else "lays down"
            self.actions.append(
                f"{self.actor(data['seat'])} sm {cards} # {verb}: {data['description']}"
            )
        elif kind in ("paid", "wimp_paid"):
            self.actions.append(f"# {self.actor(data['seat'])} pays {data['amount']}")
        elif kind == "pot_won":
            self.actions.append(f"# {self.actor(data['seat'])} wins {data['amount']}")
        elif kind == "deal_void":
            self.actions.append(f"# the deal is void: {data['reason']}")

    def _declare(self, seat: int, choice: str) -> None:
        if seat in self.declared:
            return
        self.declared.add(seat)
        # in: PHH's check/call; out: its fold
        self.actions.append(f"{self.actor(seat)} {'cc' if choice == 'in' else 'f'} # {choice}")


def deal_text(
    history: Mapping[str, Any], game: str, cards: int | None, table_name: str | None
) -> str:
    """One finished deal (a hand history as its reader sees it) as a PHH-style document."""
    events: list[Mapping[str, Any]] = list(history.get("events") or ())
    started = next((e for e in events if e["type"] == "deal_started"), None)
    players: list[int] = list(started["data"]["players"]) if started else []
    writer = _Writer(players)
    antes = dict.fromkeys(players, 0)
    winnings = dict.fromkeys(players, 0)
    for item in events:
        data = item["data"]
        if item["type"] == "ante":
            antes[data["seat"]] = antes.get(data["seat"], 0) + data["amount"]
        elif item["type"] == "pot_won":
            winnings[data["seat"]] = winnings.get(data["seat"], 0) + data["amount"]
        elif item["type"] == "pot_split":
            for share in data["shares"]:
                winnings[share["seat"]] = winnings.get(share["seat"], 0) + share["amount"]
        writer.note(item)
    at = events[0]["at"] if events else None
    lines = [
        f"# cardroom: table {history.get('table_id')}, deal {history.get('hand_number')}",
        f"variant = {_quoted(variant_of(game, cards))}",
        f"antes = {_numbers(antes[s] for s in players)}",
        f"starting_stacks = [{', '.join('inf' for _ in players)}]",
        "actions = [",
        *(f"  {_quoted(action)}," for action in writer.actions),
        "]",
        f"table = {_quoted(table_name or str(history.get('table_id')))}",
        f"hand = {int(history.get('hand_number') or 0)}",
        f"seats = {_numbers(players)}",
        f"seat_count = {len(players)}",
        f"winnings = {_numbers(winnings[s] for s in players)}",
    ]
    if at is not None:
        moment = datetime.fromtimestamp(float(at), UTC)
        lines += [
            f"time = {moment.strftime('%H:%M:%S')}",
            'time_zone = "UTC"',
            f"day = {moment.day}",
            f"month = {moment.month}",
            f"year = {moment.year}",
        ]
    return "\n".join(lines) + "\n"


def deals_text(documents: Sequence[str]) -> str:
    """Several deals as one TOML file: each document under a table of its own, `[1]`,
    `[2]`, ... newest first."""
    parts = []
    for index, document in enumerate(documents, start=1):
        body = [line for line in document.splitlines() if not line.startswith("#")]
        header = next((line for line in document.splitlines() if line.startswith("#")), "")
        parts.append("\n".join([header, f"[{index}]", *body]).strip("\n") + "\n")
    return "\n".join(parts)


def _numbers(values: Any) -> str:
    return "[" + ", ".join(str(int(value)) for value in values) + "]"
