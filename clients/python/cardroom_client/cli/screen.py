"""The table's screen (Textual): a deal played, or watched, in the terminal.

The screen follows the table's server-sent event stream (the SDK's `EventStream`, which
reconnects with ``Last-Event-ID`` and so misses nothing), writes each event's line (in
the language asked for) to the table's log, and reads the table again after events,
since the table as the gateway shows it says whose move it is, until when, and what the
seat holds. Two threads do the waiting: one on the stream, one on the table's reads,
which coalesce (a burst of events costs one read). Moves go out on worker threads, one
at a time; a refusal is shown as the gateway worded it. Ctrl-C or q quits, the seat
kept; l leaves the table.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Footer, Header, RichLog, Static

from cardroom_client.cli.display import (
    board_view,
    cards_inline,
    game_words,
    problem_text,
    seat_name,
    seats_grid,
)
from cardroom_client.cli.seen import SeenDeals
from cardroom_client.cli.turns import (
    Call,
    Move,
    call_leaving_out,
    clock,
    moves_now,
    prompt,
    suggested_call,
)
from cardroom_client.client import Client, Seat
from cardroom_client.errors import CardroomError
from cardroom_client.models import Event, Table
from cardroom_client.sse import EventStream

# after the stream gave up (its retries spent), the wait before following again
FOLLOW_PAUSE = 2.0
# statuses after which trying again cannot help: the key no longer holds, the table is gone
FINAL_STATUSES = frozenset({401, 403, 404, 410})

# the move each key's action needs the table to wait for
NEEDED: Mapping[str, Move] = {
    "start": Move.START,
    "declare": Move.DECLARE,
    "draw": Move.DRAW,
    "card": Move.DISCARD_OR_CALL,
    "call": Move.DISCARD_OR_CALL,
    "show_all": Move.DISCARD_OR_CALL,
    "suggested": Move.DISCARD_OR_CALL,
    "return": Move.BACK,
}
# actions that only mean something while choosing a call's cards
CALLING_ACTIONS = frozenset({"show_all", "suggested", "cancel"})


class TableScreen(App[None]):
    """A table in the terminal: its seats, the deal, the clock, the prompt, the log."""

    TITLE = "cardroom"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #top { height: auto; max-height: 60%; }
    #seats { width: 46; height: auto; border: round $primary; padding: 0 1; }
    #board { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #clock { height: 1; padding: 0 1; }
    #prompt { height: auto; padding: 0 1; }
    #log { height: 1fr; border: round $secondary; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # Ctrl-C quits as q does (Textual's default only says how to quit)
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("q", "quit", "Quit"),
        Binding("s", "start", "Start"),
        Binding("i", "declare('in')", "In"),
        Binding("o", "declare('out')", "Out"),
        Binding("d", "draw('stock')", "Stock"),
        Binding("p", "draw('discard')", "Pile"),
        Binding("c", "call", "Call"),
        Binding("a", "show_all", "All six"),
        Binding("enter", "suggested", "Suggested call"),
        Binding("escape", "cancel", "Cancel"),
        *(Binding(str(place), f"card({place})", show=False) for place in range(1, 7)),
        Binding("b", "return", "Back"),
        Binding("l", "leave", "Leave"),
    ]

    def __init__(
        self,
        client: Client,
        table_id: str,
        *,
        seat: int | None,
        after: int,
        seen: SeenDeals | None = None,
    ) -> None:
        """Show `table_id` as `seat` (None: a spectator), following events after `after`."""
        super().__init__()
        self.client = client
        self.table_id = table_id
        self.seat: Seat | None = None if seat is None else client.seat(table_id, seat)
        self.after = after
        self.seen = seen
        self.table: Table | None = None
        self.lines: list[str] = []
        self.calling = False
        self.moving = False
        self.left = False
        self.suggestion: tuple[Call, str] | None = None
        self.suggested_for: tuple[str, ...] | None = None
        self.closing = threading.Event()
        self.stale = threading.Event()
        self.stream_lock = threading.Lock()
        self.streams: list[EventStream] = []

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        """The header, seats beside the deal, the clock, the prompt, the log, the keys."""
        yield Header(show_clock=False, icon="♠")
        with Horizontal(id="top"):
            yield Static(id="seats")
            yield Static(id="board")
        yield Static(id="clock")
        yield Static(id="prompt")
        yield RichLog(id="log", wrap=True, markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Start following the table and reading it; tick the clock."""
        self.sub_title = f"table {self.table_id} at {self.client.base_url}"
        self.query_one("#log", RichLog).border_title = "table log"
        self.query_one("#seats", Static).border_title = "seats"
        self.set_interval(0.25, self.tick)
        self.stale.set()
        for target, name in ((self.follow, "follow"), (self.read, "read")):
            threading.Thread(target=target, name=f"cardroom-{name}", daemon=True).start()
        self.show()

    def on_unmount(self) -> None:
        """Stop both threads: the stream's connection is dropped, the reader woken."""
        self.closing.set()
        self.stale.set()
        with self.stream_lock:
            for stream in self.streams:
                stream.close()

    # ------------------------------------------------------------------ threads

    def post(self, callback: Callable[..., None], *arguments: Any) -> bool:
        """Run `callback` on the screen's loop from a thread; False once it is closing."""
        if self.closing.is_set():
            return False
        try:
            self.call_from_thread(callback, *arguments)
        except RuntimeError:  # the loop has ended under us
            return False
        return True

    def follow(self) -> None:
        """The stream's thread: every event after `after`, across reconnections."""
        after = self.after
        while not self.closing.is_set():
            stream = self.client.stream(self.table_id, seat=self.seat, after=after)
            with self.stream_lock:
                if self.closing.is_set():
                    return
                self.streams.append(stream)
            try:
                for event in stream:
                    if not self.post(self.receive, event):
                        return
            except CardroomError as error:
                if not self.post(self.complain, error) or error.status in FINAL_STATUSES:
                    return
                self.closing.wait(FOLLOW_PAUSE)
            after = stream.last_event_id

    def read(self) -> None:
        """The reader's thread: the table again whenever events made it stale."""
        failing: str | None = None
        while True:
            self.stale.wait()
            if self.closing.is_set():
                return
            self.stale.clear()
            try:
                table = self.client.table(self.table_id, seat=self.seat)
            except CardroomError as error:
                # said once while it lasts, and tried again until it passes
                if error.code != failing and not self.post(self.complain, error):
                    return
                failing = error.code
                if error.status not in FINAL_STATUSES and not self.closing.wait(FOLLOW_PAUSE):
                    self.stale.set()
                continue
            failing = None
            if not self.post(self.show_table, table):
                return

    # ------------------------------------------------------------------ what arrives

    def receive(self, event: Event) -> None:
        """An event: its line in the log, a note of what it shows, the table read again."""
        if self.seen is not None:
            self.seen.note(self.table_id, event)
        line = self.event_line(event)
        if line is not None:
            self.write(line)
        if (
            self.seat is not None
            and event.type in ("left", "cashed_out")
            and event.data.get("seat") == self.seat.number
        ):
            self.left = self.left or event.type == "left"
        self.stale.set()

    def event_line(self, event: Event) -> Text | None:
        """What the log says of an event: the gateway's line, or the seat's own news."""
        data = event.data
        if event.type == "cards_dealt":
            return Text("You were dealt ").append_text(cards_inline(data.get("cards") or ()))
        if event.type == "drew_card":
            return Text("You drew ").append_text(cards_inline([str(data.get("card"))]))
        if event.type == "your_declaration":
            return Text(f"You declared {data.get('choice')}")
        if event.line is None:
            return None
        text = Text(event.line)
        if event.type == "showdown":
            for key, hand in (data.get("hands") or {}).items():
                text.append(f"\n   {seat_name(self.table, str(key))}: ")
                text.append_text(cards_inline(hand.get("cards") or ()))
                text.append(f"  {hand.get('description', '')}")
        return text

    def show_table(self, table: Table) -> None:
        """The table as just read: every panel drawn again, the keys that apply now."""
        self.table = table
        if self.seat is not None and self.seat.number not in table.seats:
            self.left = True
        if Move.DISCARD_OR_CALL not in moves_now(table, self.number):
            self.calling = False
        self.suggest()
        self.show()

    def complain(self, error: CardroomError) -> None:
        """A refusal or a failure, as the gateway worded it, in the log and a notice."""
        text = problem_text(error)
        self.write(text)
        self.notify(error.detail or error.code, title=error.title, severity="error")

    def write(self, text: Text) -> None:
        """A line in the table's log, stamped with the local time."""
        stamped = Text(time.strftime("%H:%M:%S "), style="dim").append_text(text)
        self.lines.append(stamped.plain)
        self.query_one("#log", RichLog).write(stamped)

    # ------------------------------------------------------------------ drawing

    @property
    def reconnects(self) -> int:
        """How often the event stream was opened again (after the first time)."""
        with self.stream_lock:
            return sum(stream.reconnects for stream in self.streams) + max(0, len(self.streams) - 1)

    @property
    def number(self) -> int | None:
        """The seat's number while it is at the table, else None."""
        return None if self.seat is None or self.left else self.seat.number

    def show(self) -> None:
        """Draw every panel from the table as last read."""
        table = self.table
        if table is not None:
            self.title = f"{table.name or table.id}: {game_words(table.game, table.options)}"
            seats = self.query_one("#seats", Static)
            seats.update(seats_grid(table, self.number))
            seats.border_subtitle = f"pot {table.pot}" + (
                f", reserve {table.reserve}" if table.reserve else ""
            )
            board = self.query_one("#board", Static)
            board.update(board_view(table, self.number))
            board.border_title = f"deal {table.hand_number}" if table.hand_number else "no deal"
            board.border_subtitle = table.phase.replace("_", " ")
        self.query_one("#prompt", Static).update(
            prompt(
                table, self.number if self.seat is not None else None, self.calling, self.suggestion
            )
        )
        self.tick()
        self.refresh_bindings()

    def tick(self) -> None:
        """The clock counts down."""
        self.query_one("#clock", Static).update(clock(self.table, self.number))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer a key only while its move is one the table waits for from this seat."""
        if action in ("quit",):
            return True
        if action == "leave":
            return self.number is not None
        if action in CALLING_ACTIONS and not self.calling:
            return False
        if action == "suggested" and self.suggestion is None:
            return False
        needed = NEEDED.get(action)
        if needed is None:
            return action != "cancel" or self.calling
        if self.moving or needed not in moves_now(self.table, self.number):
            return False
        if action == "draw" and parameters == ("discard",):
            deal = self.table.deal if self.table is not None else None
            return deal is not None and deal.discard_top is not None
        return True

    # ------------------------------------------------------------------ Paiute's call

    def suggest(self) -> None:
        """Ask the evaluator, once for each six cards held, for the best call they make."""
        table = self.table
        you = table.you if table is not None else None
        if table is None or you is None or you.cards is None or len(you.cards) != 6:
            self.suggestion, self.suggested_for = None, None
            return
        if table.deal is None or table.deal.wild_rank is None or you.cards == self.suggested_for:
            return
        self.suggested_for = you.cards
        self.suggestion = None
        self.evaluate(you.cards, table.deal.wild_rank)

    @work(thread=True, group="evaluate")
    def evaluate(self, cards: tuple[str, ...], wild_rank: int) -> None:
        """The evaluator's best combination of `cards`, as a call to suggest."""
        try:
            (ranked,) = self.client.evaluate("paiute", [" ".join(cards)], wild_rank=wild_rank)
        except CardroomError:
            return  # a suggestion is a courtesy: the call keys work without one
        call = suggested_call(cards, ranked)
        if call is not None:
            self.post(self.suggested, cards, call, ranked.description)

    def suggested(self, cards: tuple[str, ...], call: Call, description: str) -> None:
        """The suggestion arrived: shown while those cards are still the hand."""
        if cards == self.suggested_for:
            self.suggestion = (call, description)
            self.show()

    # ------------------------------------------------------------------ moves

    @work(thread=True, group="moves")
    def send(self, body: dict[str, Any]) -> None:
        """One move on a worker thread; the table it answers is drawn."""
        seat = self.seat
        if seat is None:
            return
        try:
            result = seat.act(body)
        except CardroomError as error:
            self.post(self.moved, None, error)
        else:
            self.post(self.moved, result.table, None)

    def move(self, body: dict[str, Any]) -> None:
        """Send `body` unless a move is on its way already."""
        if self.moving or self.seat is None:
            return
        self.moving = True
        self.calling = False
        self.refresh_bindings()
        self.send(body)

    def moved(self, table: Table | None, error: CardroomError | None) -> None:
        """A move's answer: the table after it, or the refusal."""
        self.moving = False
        if error is not None:
            self.complain(error)
        if table is not None:
            self.show_table(table)
        else:
            self.stale.set()
            self.show()

    def action_start(self) -> None:
        """Start the game."""
        self.move({"action": "start"})

    def action_declare(self, choice: str) -> None:
        """Guts: declare in or out."""
        self.move({"action": "declare", "choice": choice})

    def action_draw(self, source: str) -> None:
        """Paiute: draw from the stock or take the pile's top card."""
        self.move({"action": "draw", "source": source})

    def action_card(self, place: int) -> None:
        """Paiute: discard the card at `place` (1-6), or, choosing a call, leave it out."""
        you = self.table.you if self.table is not None else None
        if you is None or you.cards is None or not 1 <= place <= len(you.cards):
            return
        if self.calling:
            self.call(call_leaving_out(you.cards, place - 1))
        else:
            self.move({"action": "discard", "card": you.cards[place - 1]})

    def action_call(self) -> None:
        """Paiute: choose the cards of a call (the prompt says how)."""
        self.calling = True
        self.show()

    def action_show_all(self) -> None:
        """Paiute: call showing all six cards."""
        you = self.table.you if self.table is not None else None
        if you is not None and you.cards is not None:
            self.call(call_leaving_out(you.cards, None))

    def action_suggested(self) -> None:
        """Paiute: make the call the evaluator suggested."""
        if self.suggestion is not None:
            self.call(self.suggestion[0])

    def action_cancel(self) -> None:
        """Back from choosing a call's cards."""
        self.calling = False
        self.show()

    def call(self, call: Call) -> None:
        """Send a Paiute call."""
        self.move({"action": "call", "cards": list(call.cards), "discard": call.discard})

    def action_return(self) -> None:
        """Back after being away (`back`, a name Textual's App keeps for its own action)."""
        self.move({"action": "back"})

    @work(thread=True, group="moves")
    def action_leave(self) -> None:
        """Leave the table: now, or when the seat's deal is settled."""
        seat = self.seat
        if seat is None:
            return
        try:
            result = seat.leave()
        except CardroomError as error:
            self.post(self.complain, error)
            return
        if result.left:
            words = f"You left the table: {result.cashed_out or 0} chips back in your wallet"
        else:
            words = "You leave when this deal is settled; your chips then go to your wallet"
        self.post(self.write, Text(words, style="bold"))
        self.stale.set()
