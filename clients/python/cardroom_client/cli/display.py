"""How the terminal client draws what the gateway answers: cards, the lobby, a table's
seats, a hand history, the wallet's ledger and a refusal, as Rich renderables that the
commands print and the table's screen shows."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from rich.console import Group, RenderableType
from rich.table import Table as Grid
from rich.text import Text

from cardroom_client.errors import CardroomError
from cardroom_client.fairness import FairnessReport
from cardroom_client.models import HandHistory, LedgerPage, Table, TableSummary

# the columns that hold counts of chips, and those never cut, with their widths: an id
# to copy into the next command, a time
NUMBERS = frozenset({"chips", "balance"})
WHOLE = {"table": 16, "when": 19}
SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
RED_SUITS = frozenset("dh")
RANKS = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}
# the options that tell one table from another, with their defaults (docs/rules.md): the
# lobby names them only when a table departs from the default
NOTABLE_OPTIONS: dict[str, object] = {
    "declare": "simultaneous",
    "losers_pay": "all",
    "ghost": False,
    "wimp": False,
    "cap": None,
    "max_reshuffles": 2,
}


def card_label(card: str) -> str:
    """A card as printed on it: "Th" -> "10♥"."""
    rank = card[:-1].upper()
    return ("10" if rank == "T" else rank) + SUITS.get(card[-1:].lower(), "?")


def card_rank(card: str) -> int:
    """A card's rank as a number, 2 to 14 (ace)."""
    rank = card[:-1].upper()
    return RANKS.get(rank, int(rank) if rank.isdigit() else 0)


def card_style(card: str, wild_rank: int | None = None) -> str:
    """The colours of a card: its suit's, on gold when it is wild."""
    colour = "bold red" if card[-1:].lower() in RED_SUITS else "bold bright_white"
    if wild_rank is not None and card_rank(card) == wild_rank:
        return f"{colour} on dark_goldenrod"
    return colour


def cards_inline(cards: Iterable[str], wild_rank: int | None = None) -> Text:
    """Cards on one line, each in its colours: "A♥ 7♣ 10♦"."""
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        text.append(card_label(card), style=card_style(card, wild_rank))
    return text


def card_faces(
    cards: Sequence[str | None],
    *,
    wild_rank: int | None = None,
    labels: Sequence[str] | None = None,
) -> Text:
    """Cards drawn as small faces side by side (None: face down), `labels` under them."""
    top, middle, bottom, under = Text(), Text(), Text(), Text()
    for index, card in enumerate(cards):
        top.append("╭────╮ ", style="grey70")
        middle.append("│", style="grey70")
        if card is None:
            middle.append(" ░░ ", style="blue")
        else:
            middle.append(f"{card_label(card):^4}", style=card_style(card, wild_rank))
        middle.append("│ ", style="grey70")
        bottom.append("╰────╯ ", style="grey70")
        if labels is not None:
            under.append(f"{labels[index]:^6} ", style="bold cyan")
    lines = [top, middle, bottom] + ([under] if labels is not None else [])
    return Text("\n").join(lines)


def problem_text(error: CardroomError) -> Text:
    """A refusal as the gateway worded it: its title and detail (in the language asked)."""
    text = Text(error.title or error.code, style="bold red")
    if error.detail:
        text.append(": ")
        text.append(error.detail)
    return text


def game_words(game: str, options: Mapping[str, object]) -> str:
    """A table's game and what sets it apart: "guts, 3 cards, ante 1, ghost"."""
    words = [game]
    if "cards" in options:
        words.append(f"{options['cards']} cards")
    words.append(f"ante {options.get('ante', 1)}")
    for name, default in NOTABLE_OPTIONS.items():
        value = options.get(name, default)
        if value == default:
            continue
        words.append(name if value is True else f"{name.replace('_', ' ')} {value}")
    return ", ".join(words)


def ago(moment: float, now: float | None = None) -> str:
    """How long ago `moment` (epoch seconds) was, in its largest unit: "5 min"."""
    seconds = max(0.0, (time.time() if now is None else now) - moment)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{int(seconds // size)} {unit}"
    return f"{int(seconds)} s"


def with_columns(grid: Grid, *headings: str) -> Grid:
    """`grid` with a column for each heading, counts of chips aligned to the right."""
    for heading in headings:
        width = WHOLE.get(heading)
        grid.add_column(
            heading,
            justify="right" if heading in NUMBERS else "left",
            min_width=width,
            no_wrap=width is not None,
        )
    return grid


def lobby_grid(tables: Iterable[TableSummary]) -> Grid:
    """The lobby: one row a table, in the lobby's order."""
    grid = Grid(title="Lobby", title_justify="left", expand=False)
    with_columns(grid, "table", "name", "game", "seats", "phase", "opened")
    for summary in tables:
        grid.add_row(
            Text(summary.id, style="bold"),
            summary.name or "",
            game_words(summary.game, summary.options),
            f"{summary.seats_taken}/{summary.max_players}",
            summary.phase,
            ago(summary.created_at) + " ago",
        )
    return grid


def seats_grid(table: Table, you: int | None) -> Grid:
    """A table's seats: who sits where with how many chips, who deals, who must act."""
    grid = with_columns(Grid(expand=True, box=None, pad_edge=False), "", "seat", "chips", "")
    deal = table.deal
    acting = set(table.pending.seats) if table.pending is not None else set()
    for number, seat in sorted(table.seats.items()):
        marks = []
        if number == table.dealer:
            marks.append("dealer")
        if deal is not None and number in deal.declared and not deal.declarations:
            marks.append("decided")
        if deal is not None and number in deal.declarations:
            marks.append(deal.declarations[number])
        for flag, word in ((seat.away, "away"), (seat.leaving, "leaving")):
            if flag:
                marks.append(word)
        if seat.status == "waiting" and table.game_in_progress:
            marks.append("waits for the next game")
        pointer = "▶" if number in acting else ""
        style = "bold yellow" if number == you else ""
        grid.add_row(
            Text(pointer, style="bold green"),
            Text(f"{number} {seat.name}" + (" (you)" if number == you else ""), style=style),
            str(seat.stack),
            ", ".join(marks),
        )
    return grid


def flow_words(flow: Mapping[str, object], names: Mapping[int, str]) -> str:
    """One chip movement of a deal's pot flow: "ann: ante 1 (stack to pot)"."""
    seat = flow.get("seat")
    who = names.get(seat, f"seat {seat}") if isinstance(seat, int) else str(seat or "table")
    amount = flow.get("amount")
    return f"{who}: {flow.get('kind')} {amount} ({flow.get('source')} to {flow.get('target')})"


def history_view(history: HandHistory, names: Mapping[int, str]) -> RenderableType:
    """A finished deal: its outcome, the hands shown, its chips and its events' lines."""
    heading = Text(f"Deal {history.hand_number}", style="bold")
    heading.append(f" of game {history.game_number} at table {history.table_id}")
    outcome = (history.outcome or "").replace("_", " ")
    parts: list[RenderableType] = [heading, Text(f"outcome: {outcome}")]
    if history.wild_card is not None:
        parts.append(Text("wild card: ").append_text(cards_inline([history.wild_card])))
    hands = (history.showdown or {}).get("hands") or {}
    for seat, hand in hands.items():
        who = "the ghost" if seat == "ghost" else names.get(int(seat), f"seat {seat}")
        line = Text(f"  {who}: ")
        line.append_text(cards_inline(hand.get("cards") or ()))
        line.append(f"  {hand.get('description', '')}")
        parts.append(line)
    if history.pot_flow:
        parts.append(Text("chips:", style="bold"))
        parts.extend(Text("  " + flow_words(flow, names)) for flow in history.pot_flow)
    lines = [event.line for event in history.events if event.line]
    if lines:
        parts.append(Text("events:", style="bold"))
        parts.extend(Text("  " + line) for line in lines)
    return Group(*parts)


def fairness_view(report: FairnessReport | None, failure: str | None) -> Text:
    """The verdict of a fairness check, and each check made."""
    if report is None:
        return Text(f"Fairness proof: FAILED: {failure}", style="bold red")
    text = Text("Fairness proof: verified", style="bold green")
    for check in report.checks:
        text.append(f"\n  ✓ {check}")
    return text


def ledger_grid(page: LedgerPage, player_id: str) -> RenderableType:
    """The wallet's balance and its transfers, newest first, signed from the wallet's side."""
    wallet = f"wallet:{player_id}"
    grid = Grid(title="Ledger", title_justify="left")
    with_columns(grid, "when", "kind", "chips", "balance", "with")
    for entry in page.entries:
        incoming = entry.credit == wallet
        other = entry.debit if incoming else entry.credit
        cause = ", ".join(
            f"{name}: {value}" for name, value in entry.cause.items() if str(value) not in other
        )
        grid.add_row(
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.at)),
            entry.kind,
            Text(f"{'+' if incoming else '-'}{entry.amount}", style="green" if incoming else "red"),
            str(entry.balance),
            f"{other} ({cause})" if cause else other,
        )
    summary = Text(f"balance {page.balance}", style="bold")
    if page.pending:
        summary.append(f", {page.pending} reserved for a buy-in")
    return Group(summary, grid)


def seat_name(table: Table | None, key: str) -> str:
    """Who a seat number (as a string key) or "ghost" is at `table`."""
    if key == "ghost":
        return "the ghost"
    if table is None or not key.isdigit():
        return f"seat {key}"
    seat = table.seats.get(int(key))
    if seat is not None:
        return seat.name
    names = table.deal.names if table.deal is not None else {}
    return names.get(int(key), f"seat {key}")


def board_view(table: Table, you: int | None) -> RenderableType:
    """The deal in play as the seat (or a spectator) sees it: the cards, the pile, the
    wild card, and every hand shown or laid down."""
    deal = table.deal
    parts: list[RenderableType] = []
    if deal is None:
        return Text("No deal yet: the table waits for its first game.", style="italic")
    wild = deal.wild_rank
    if deal.wild_card is not None:
        line = Text("wild ").append_text(cards_inline([deal.wild_card], wild))
        line.append(f"   pile {deal.discard_size or 0} ")
        if deal.discard_top is not None:
            line.append_text(cards_inline([deal.discard_top], wild))
        line.append(f"   stock {deal.stock_size}")
        parts.append(line)
    mine = table.you.cards if table.you is not None and you is not None else None
    if mine:
        drawn = table.you.drawn if table.you is not None else None
        labels = [str(place + 1) for place in range(len(mine))]
        if drawn is not None and drawn.card in mine:
            # a card taken from the pile may not be discarded in the same turn
            labels[mine.index(drawn.card)] += " pile" if drawn.source == "discard" else " new"
        faces = card_faces(mine, wild_rank=wild, labels=labels if table.game == "paiute" else None)
        parts.extend([Text("Your cards", style="bold"), faces])
        if table.you is not None and table.you.declaration is not None:
            parts.append(Text(f"You declared {table.you.declaration}", style="bold"))
    elif you is not None and deal.ended is False and you in deal.players:
        size = deal.hand_sizes.get(you) or deal.cards_per_hand or 0
        parts.append(card_faces([None] * size))
    for key, cards in deal.shown.items():
        line = Text(f"{seat_name(table, key)}: ", style="bold")
        line.append_text(cards_inline(cards, wild))
        rank = deal.ranks.get(key)
        if isinstance(rank, dict) and rank.get("description"):
            line.append(f"  {rank['description']}")
        parts.append(line)
    if deal.ended and deal.outcome is not None:
        outcome = deal.outcome.replace("_", " ")
        parts.append(Text(f"Deal {deal.number} is over: {outcome}", style="italic"))
    return Group(*parts)
