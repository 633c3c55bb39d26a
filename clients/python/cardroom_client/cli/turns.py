"""What a seat may do at a table right now, what the screen asks of it, and the clock.

Everything here is read from the table as the gateway last answered it (its `pending`:
which move from which seats before which deadline), so the screen never guesses the
rules: a move the prompt offers is one the gateway waits for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum

from rich.text import Text

from cardroom_client.cli.display import card_label, cards_inline
from cardroom_client.models import RankedHand, Table


class Move(Enum):
    """The moves the screen offers, each one key or more."""

    START = "start"
    DECLARE = "declare"
    DRAW = "draw"
    DISCARD_OR_CALL = "discard_or_call"
    BACK = "back"


@dataclass(frozen=True)
class Call:
    """A Paiute call: the cards shown and the sixth discarded (None: all six shown)."""

    cards: tuple[str, ...]
    discard: str | None


def moves_now(table: Table | None, seat: int | None) -> frozenset[Move]:
    """The moves `seat` may make at `table` as last read (none for a spectator)."""
    if table is None or seat is None or seat not in table.seats:
        return frozenset()
    moves: set[Move] = set()
    state = table.seats[seat]
    if state.away:
        moves.add(Move.BACK)
    if table.phase == "waiting" and not state.leaving:
        moves.add(Move.START)
    pending = table.pending
    if pending is not None and seat in pending.seats:
        for move in (Move.DECLARE, Move.DRAW, Move.DISCARD_OR_CALL):
            if pending.action == move.value:
                moves.add(move)
    return frozenset(moves)


def call_leaving_out(cards: tuple[str, ...], place: int | None) -> Call:
    """The call that shows every card but the one at `place` (None: shows all six)."""
    if place is None:
        return Call(cards, None)
    return Call(cards[:place] + cards[place + 1 :], cards[place])


def suggested_call(cards: tuple[str, ...], ranked: RankedHand) -> Call | None:
    """The call the evaluator's best combination of the six cards makes, if any wins."""
    if ranked.strength <= 0:
        return None
    if ranked.leftover is None:
        return Call(cards, None)
    return call_leaving_out(cards, cards.index(ranked.leftover))


def prompt(
    table: Table | None,
    seat: int | None,
    calling: bool,
    suggestion: tuple[Call, str] | None,
) -> Text:
    """What the screen asks of the seat now, with the keys that answer."""
    if seat is None:
        return Text("Watching as a spectator. q: quit", style="italic")
    if table is None or seat not in table.seats:
        return Text("You have left this table. q: quit", style="italic")
    moves = moves_now(table, seat)
    you = table.you
    if Move.DECLARE in moves:
        return Text("Your move: i: in   o: out", style="bold green")
    if Move.DRAW in moves:
        text = Text("Your turn: d: draw from the stock", style="bold green")
        top = table.deal.discard_top if table.deal is not None else None
        if top is not None:
            text.append(f"   p: take {card_label(top)} from the pile")
        return text
    if Move.DISCARD_OR_CALL in moves and you is not None and you.cards is not None:
        if calling:
            text = Text("Call: 1-6: leave that card out   a: show all six", style="bold green")
            if suggestion is not None:
                text.append("   enter: ")
                text.append_text(cards_inline(suggestion[0].cards))
                text.append(f" ({suggestion[1]})")
            return text.append("   esc: back")
        text = Text("Your turn: 1-6: discard that card   c: call", style="bold green")
        if suggestion is not None:
            text.append(f" (you hold {suggestion[1]})")
        return text
    if Move.START in moves:
        return Text("The table waits: s: start the game   l: leave   q: quit", style="bold")
    if Move.BACK in moves:
        return Text("You are away: b: back   l: leave   q: quit", style="bold")
    return Text("l: leave the table   q: quit (you keep your seat)", style="dim")


def clock(table: Table | None, you: int | None, now: float | None = None) -> Text:
    """The countdown of what the table waits for, and whose it is: a bar and seconds."""
    pending = table.pending if table is not None else None
    if table is None or pending is None or pending.deadline is None:
        return Text("")
    left = max(0.0, pending.deadline - (time.time() if now is None else now))
    if pending.action == "next_deal":
        whole = float(table.options.get("deal_pause_seconds") or 1)
        words = "Next deal"
    else:
        whole = float(table.options.get("turn_seconds") or 30)
        names = [table.seats[s].name for s in pending.seats if s in table.seats]
        words = "Your turn" if you in pending.seats else "Waiting for " + ", ".join(names)
    width = 30
    filled = round(width * min(1.0, left / whole)) if whole > 0 else 0
    colour = "green" if left > whole / 3 else "yellow" if left > 5 else "bold red"
    text = Text(f"{words}  ")
    text.append("█" * filled, style=colour)
    text.append("░" * (width - filled), style="grey35")
    text.append(f" {left:4.0f} s", style=colour)
    return text
