"""The terminal client, `cardroom`, against the real gateway: gunicorn, Redis, the evaluator.

Each test has its own configuration and state directories (XDG_CONFIG_HOME and
XDG_STATE_HOME in a temporary folder). Commands run in process through Click's
CliRunner; the table's screen is driven a key at a time through Textual's pilot
(`App.run_test`) while the other seat is played with the SDK, so a whole Guts deal and
a whole Paiute deal are played from the terminal. One test runs the installed console
script in a pseudo-terminal and quits it with Ctrl-C. The gateway ends every event
stream after 1 s, so the screens reconnect (with Last-Event-ID) during their deals.
Set CARDROOM_SCREENSHOTS to a folder to save the screens that docs/cli.md shows (Textual's
SVG, drawn as a PNG by Debian's Chromium); `make screenshots` does.
"""

from __future__ import annotations

import asyncio
import fcntl
import io
import json
import os
import pty
import re
import select
import signal
import stat
import struct
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from api.i18n.catalogs import say
from cardroom_client import Client, GutsOptions, Seat
from cardroom_client.cli.config import Config
from cardroom_client.cli.display import card_label
from cardroom_client.cli.main import Session, cardroom, play_screen, watch_screen
from cardroom_client.cli.screen import TableScreen
from cardroom_client.cli.turns import Move, moves_now
from deploy.demo import choose_discard, paiute_turn
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.processes import GunicornGateway, RedisProcess, gateway_on

TABLE = re.compile(r"Table ([0-9a-f]{16})")
SIZE = (110, 34)
SHOTS = os.environ.get("CARDROOM_SCREENSHOTS")
LONG = ["--turn-seconds", "120", "--deal-pause-seconds", "60"]


@pytest.fixture(scope="module")
def gateway(
    redis_process: RedisProcess, evaluator_address: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GunicornGateway]:
    """gunicorn with its clock on the session's Redis and evaluator; streams end after 1 s."""
    with gateway_on(
        redis_process,
        evaluator_address,
        tmp_path_factory.mktemp("gateway") / "gunicorn.log",
        workers=1,
        STREAM_MAX_SECONDS="1",
        CLOCK_INTERVAL="0.1",
        LOG_LEVEL="warning",
    ) as server:
        yield server


@pytest.fixture
def home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gateway: GunicornGateway, redis_url: str
) -> Path:
    """A user's own configuration and state directories, the gateway named by the
    environment, a locale with no language; the store emptied before and audited after."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CARDROOM_GATEWAY", gateway.url)
    monkeypatch.setenv("LANG", "C.UTF-8")
    for name in ("CARDROOM_KEY", "CARDROOM_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def cli(*arguments: str, stdin: str | None = None, status: int = 0) -> Result:
    """`cardroom ARGUMENTS` in process; its result, after checking its exit status."""
    result = CliRunner().invoke(cardroom, list(arguments), input=stdin)
    assert result.exit_code == status, f"{arguments}: {result.output}{result.exception!r}"
    return result


def created_table(*arguments: str) -> str:
    """`cardroom create ARGUMENTS`: the new table's id."""
    found = TABLE.search(cli("create", *arguments).output)
    assert found is not None
    return found.group(1)


def session(gateway: GunicornGateway, language: str = "en") -> Session:
    """What a command of the client works with, from this test's configuration."""
    return Session(Config(), gateway.url, language)


def sdk_seat(gateway: GunicornGateway, name: str, table_id: str) -> Seat:
    """Another player, through the SDK, seated at `table_id` with 100 chips."""
    anonymous = Client(gateway.url, timeout=20)
    player = anonymous.with_credential(anonymous.create_player(name).key)
    return player.take_seat(table_id, None, 100)


async def until(pilot: Pilot[None], predicate: Callable[[], bool], what: str) -> None:
    """Let the screen run until `predicate` holds; fail after a generous minute."""
    deadline = time.monotonic() + 60
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def may(screen: TableScreen, move: Move) -> bool:
    """True when the screen offers `move` to its seat."""
    return move in moves_now(screen.table, screen.number)


def logged(screen: TableScreen, text: str) -> bool:
    """True when a line of the screen's log holds `text`."""
    return any(text in line for line in screen.lines)


def shown(screen: TableScreen, widget: str) -> str:
    """The text a panel of the screen shows."""
    console = Console(width=SIZE[0], file=io.StringIO(), record=True)
    console.print(screen.query_one(widget, Static).content)
    return console.export_text()


def deal_over(screen: TableScreen, number: int = 1) -> bool:
    """True once deal `number` has ended, as the screen last read the table."""
    table = screen.table
    deal = table.deal if table is not None else None
    return deal is not None and (deal.number > number or (deal.number == number and deal.ended))


async def save_screen(screen: TableScreen, name: str) -> None:
    """Save the screen as docs/cli.md shows it, when CARDROOM_SCREENSHOTS names a folder."""
    if not SHOTS:
        return
    await asyncio.sleep(0.3)  # the footer lists the keys of the moves offered
    svg = screen.export_screenshot(title="cardroom")
    picture = Path(SHOTS) / f"{name}.png"
    picture.parent.mkdir(parents=True, exist_ok=True)
    # Playwright's synchronous API runs outside the screen's event loop
    await asyncio.to_thread(png_of, svg, picture)


def png_of(svg: str, picture: Path) -> None:
    """The SVG drawn by Debian's Chromium, saved as the PNG `picture`."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(device_scale_factor=1)
        page.set_content(f"<body style='margin:0'>{svg}</body>")
        page.locator("svg").screenshot(path=str(picture))
        browser.close()


# ---------------------------------------------------------------- the player's key


def test_signing_up_keeps_the_key_owner_only_and_prints_it_once(home: Path) -> None:
    signed = cli("signup", "ann")
    config = home / "config" / "cardroom" / "config.json"
    kept = json.loads(config.read_text())
    (account,) = kept["accounts"].values()
    assert account["name"] == "ann"
    assert account["key"].startswith("crk_")
    assert account["key"] in signed.output  # shown this once
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700
    for command in (("whoami",), ("ledger",), ("lobby",), ("seats",), ("gateway",)):
        assert account["key"] not in cli(*command).output, command
    assert "ann" in cli("whoami").output
    assert cli("key").output.strip() == account["key"]  # asked for

    # a file or a directory that others may read is made owner-only again
    config.chmod(0o644)
    config.parent.chmod(0o755)
    cli("gateway", os.environ["CARDROOM_GATEWAY"])
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(config.parent.stat().st_mode) == 0o700

    cli("logout")
    refused = cli("whoami", status=2)
    assert "cardroom signup" in refused.output
    logged_in = cli("login", stdin=account["key"] + "\n")
    assert "Logged in as ann" in logged_in.output
    assert account["key"] not in logged_in.output
    assert "ann" in cli("whoami").output
    wrong = cli("login", stdin="crk_" + "x" * 43 + "\n", status=1)
    assert "invalid" in wrong.stderr.lower()


def test_refusals_are_shown_in_the_users_language(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("signup", "ann")
    english = cli("sit", "0000000000000000", "100", status=1)
    assert english.stderr.startswith("Table not found: ")
    assert "Traceback" not in english.output
    # the language of the locale, of --lang, of $CARDROOM_LANG
    monkeypatch.setenv("LANG", "hu_HU.UTF-8")
    hungarian = cli("sit", "0000000000000000", "100", status=1)
    assert hungarian.stderr.startswith(say("hu", "Table not found") + ": ")
    estonian = cli("--lang", "et", "sit", "0000000000000000", "100", status=1)
    assert estonian.stderr.startswith(say("et", "Table not found") + ": ")
    monkeypatch.setenv("CARDROOM_LANG", "sw")
    swahili = cli("create", "guts", "--cards", "3", "--ante", "0", status=1)
    assert swahili.stderr.startswith(say("sw", "Invalid field value") + ": ")


# ---------------------------------------------------------------- whole deals


def test_the_lobby_filters_and_a_quick_seat_from_the_terminal(
    home: Path, gateway: GunicornGateway
) -> None:
    cli("signup", "ann")
    empty = created_table("guts", "--ante", "3", "--name", "nobody yet")
    assert "No table to join" in cli("lobby", "--ante-min", "3", "--ante-max", "3").output
    assert empty in cli("lobby", "--mine").output
    seated = cli("quick-seat", "guts", "60", "--ante", "3", "--cards", "2")
    assert "(a new table)" in seated.output
    found = re.search(r"at table ([0-9a-f]{16})", seated.output)
    assert found is not None
    table_id = found.group(1)
    assert table_id != empty
    listed = cli("lobby", "--game", "guts", "--cards", "2", "--ante-min", "3").output
    assert table_id in listed
    assert "1/10" in listed
    assert "No table to join" in cli("lobby", "--game", "paiute", "--ante-min", "3").output
    # another player asking for the same is seated at that table
    anonymous = Client(gateway.url, timeout=20)
    bo = anonymous.with_credential(anonymous.create_player("bo").key).quick_seat(
        GutsOptions(ante=3, cards=2), 60
    )
    assert (bo.table_id, bo.created) == (table_id, False)


def test_a_whole_guts_deal_played_from_the_terminal(home: Path, gateway: GunicornGateway) -> None:
    cli("signup", "ann")
    table_id = created_table("guts", "--ante", "2", *LONG, "--sit", "100", "--name", "ann's")
    bo = sdk_seat(gateway, "bo", table_id)
    screen = play_screen(session(gateway), table_id, None)

    async def play() -> None:
        async with screen.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: may(screen, Move.START), "the start key")
            assert "s: start" in shown(screen, "#prompt")
            await pilot.press("s")
            await until(pilot, lambda: may(screen, Move.DECLARE), "ann's turn to declare")
            assert screen.table is not None
            assert screen.table.you is not None
            cards = screen.table.you.cards
            assert cards is not None
            assert len(cards) == 3
            await until(pilot, lambda: logged(screen, "You were dealt"), "the cards dealt")
            assert "i: in" in shown(screen, "#prompt")
            # the clock counts down
            first = shown(screen, "#clock")
            await pilot.pause(1.3)
            assert first.startswith("Your turn")
            assert shown(screen, "#clock") != first
            await save_screen(screen, "cli-guts")
            await pilot.press("i")
            await until(
                pilot,
                lambda: (
                    screen.table is not None
                    and screen.table.you is not None
                    and screen.table.you.declaration == "in"
                ),
                "ann's declaration",
            )
            # the gateway ends the stream (after 1 s); the screen follows on from the last
            # event it saw, and bo's move, made elsewhere, appears as it happens
            await until(pilot, lambda: screen.reconnects >= 1, "a reconnection")
            await asyncio.to_thread(bo.declare, "in")
            await until(pilot, lambda: deal_over(screen), "the showdown")
            await until(pilot, lambda: logged(screen, "wins"), "the pot won")
            assert logged(screen, "Seat 2 has decided")
            assert logged(screen, "Showdown")
            assert "Deal 1 is over" in shown(screen, "#board")
            await pilot.press("l")
            await until(pilot, lambda: screen.left, "ann's leave")
            assert logged(screen, "You left the table")
            await pilot.press("ctrl+c")
            await until(pilot, lambda: not screen.is_running, "the screen to close")

    asyncio.run(play())
    ledger = cli("ledger").output
    assert "buy_in" in ledger
    assert "cash_out" in ledger
    verified = cli("verify", table_id, "1").output
    assert "verified" in verified
    # checked against what the screen saw: the commitment announced, the cards dealt
    assert "announced" in verified
    assert "dealt" in verified
    history = cli("history", table_id).output
    assert "Deal 1" in history
    assert "Showdown" in history
    assert "verified" in history


def ann_paiute_turn(screen: TableScreen, took_pile: bool) -> tuple[str, str]:
    """The key ann presses now, and what it does: the pile on her first turn, else the
    stock; then the call the evaluator finds, else the card that fits her hand least."""
    table = screen.table
    assert table is not None
    assert table.deal is not None
    assert table.pending is not None
    if table.pending.action == "draw":
        if not took_pile and table.deal.discard_top is not None:
            return "p", "pile"
        return "d", "stock"
    you = table.you
    assert you is not None
    assert you.cards is not None
    assert table.deal.wild_rank is not None
    if screen.suggestion is not None:
        return "c", "call"
    drawn = you.drawn.card if you.drawn is not None and you.drawn.source == "discard" else None
    allowed = [card for card in you.cards if card != drawn]
    return str(you.cards.index(choose_discard(allowed, table.deal.wild_rank)) + 1), "discard"


def test_a_whole_paiute_deal_played_from_the_terminal(home: Path, gateway: GunicornGateway) -> None:
    cli("signup", "ann")
    table_id = created_table("paiute", *LONG, "--sit", "100")
    bo = sdk_seat(gateway, "bo", table_id)
    screen = play_screen(session(gateway), table_id, None)
    done: list[str] = []

    async def play() -> None:
        async with screen.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: may(screen, Move.START), "the start key")
            await pilot.press("s")
            await until(
                pilot,
                lambda: screen.table is not None and screen.table.deal is not None,
                "the deal",
            )
            while not deal_over(screen):
                table = screen.table
                assert table is not None
                pending = table.pending
                if screen.moving or pending is None or not pending.seats:
                    await pilot.pause(0.05)
                    continue
                version, mover = table.version, "bo" if bo.number in pending.seats else "ann"

                def answered(version: int = version, mover: str = mover) -> bool:
                    """The screen shows ann's move made, or bo's whole turn played."""
                    table = screen.table
                    if table is None or screen.moving or table.version <= version:
                        return False
                    waits = table.pending.seats if table.pending is not None else ()
                    return mover == "ann" or bo.number not in waits or deal_over(screen)

                if bo.number in pending.seats:
                    wild_rank = table.deal.wild_rank if table.deal is not None else None
                    assert wild_rank is not None
                    await asyncio.to_thread(paiute_turn, bo.client, bo, wild_rank, print)
                    done.append("bo")
                else:
                    if may(screen, Move.DISCARD_OR_CALL):
                        # the evaluator's word on the six cards comes first
                        await pilot.pause(0.5)
                    key, move = ann_paiute_turn(screen, "pile" in done)
                    if move == "pile" and "refused" not in done:
                        await pilot.press(key)
                        await until(pilot, lambda: may(screen, Move.DISCARD_OR_CALL), "6 cards")
                        # the card just taken from the pile cannot go back: refused, shown
                        you = screen.table.you if screen.table is not None else None
                        assert you is not None
                        assert you.cards is not None
                        await pilot.press(str(len(you.cards)))
                        await until(pilot, lambda: logged(screen, "Cannot discard"), "refusal")
                        done.extend(["pile", "refused"])
                        continue
                    if move in ("discard", "call") and not any(
                        m in done for m in ("discard", "call")
                    ):
                        await save_screen(screen, "cli-paiute")
                    if move == "call":
                        await pilot.press("c")
                        assert "enter:" in shown(screen, "#prompt")
                        key = "enter"
                    await pilot.press(key)
                    done.append(move)
                await until(
                    pilot,
                    answered,
                    "the move's answer",
                )
            await until(
                pilot,
                lambda: (
                    logged(screen, "Deal 2")
                    or logged(screen, "void")
                    or logged(screen, "wins")
                    or logged(screen, "split")
                ),
                "the deal's end",
            )
            await pilot.press("q")

    asyncio.run(play())
    assert {"bo", "pile", "refused"} <= set(done)
    assert logged(screen, "Seat 2 drew") or logged(screen, "Seat 2 took")
    assert logged(screen, "You drew") or logged(screen, "discarded")
    assert screen.table is not None
    assert screen.table.deal is not None
    assert screen.table.deal.outcome in ("won", "split", "void")
    assert "verified" in cli("verify", table_id, "1").output
    cli("leave", table_id)


def test_a_spectator_sees_every_move_as_it_happens(home: Path, gateway: GunicornGateway) -> None:
    cli("signup", "host")
    table_id = created_table("guts", *LONG)
    ann = sdk_seat(gateway, "ann", table_id)
    bo = sdk_seat(gateway, "bo", table_id)
    screen = watch_screen(session(gateway, "hu"), table_id)
    held: list[str] = []

    def declaring() -> bool:
        table = screen.table
        return table is not None and table.pending is not None and table.pending.action == "declare"

    async def watch() -> None:
        async with screen.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: screen.table is not None, "the table")
            assert "spectator" in shown(screen, "#prompt")
            await asyncio.to_thread(ann.start)
            await until(pilot, declaring, "the deal")
            held.extend(ann.table().you.cards or ())  # type: ignore[union-attr]
            await asyncio.to_thread(ann.declare, "in")
            await asyncio.to_thread(bo.declare, "out")
            await until(pilot, lambda: deal_over(screen), "the deal's end")
            await until(pilot, lambda: screen.reconnects >= 1, "a reconnection")
            assert not screen.check_action("declare", ("in",))
            held.append(shown(screen, "#board"))
            await pilot.press("ctrl+c")

    asyncio.run(watch())
    # the lines come in the language asked for, from the first event after the screen opened
    hungarian = [
        say("hu", "Game {number} starts", {"number": 1}),
        say("hu", "{who} has decided", {"who": say("hu", "Seat {seat}", {"seat": ann.number})}),
        say("hu", "{who} has decided", {"who": say("hu", "Seat {seat}", {"seat": bo.number})}),
    ]
    for line in hungarian:
        assert logged(screen, line), (line, screen.lines)
    assert not logged(screen, say("hu", "The table opened"))
    # ann won alone, without showing: a spectator never sees her cards
    assert screen.table is not None
    assert screen.table.you is None
    *cards, board = held
    seen = "\n".join(screen.lines) + board
    assert len(cards) == 3
    assert not any(card_label(card) in seen for card in cards)
    assert not logged(screen, "You were dealt")


# ---------------------------------------------------------------- a real terminal


def test_ctrl_c_in_a_terminal_leaves_cleanly(home: Path, gateway: GunicornGateway) -> None:
    script = Path(sys.executable).parent / "cardroom"
    assert script.exists(), "the console script is missing: `make install` installs it"
    cli("signup", "ann")
    table_id = created_table("guts", *LONG, "--sit", "100")
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the console script, in a 100x30 terminal
        os.execve(str(script), [str(script), "play", table_id], dict(os.environ, TERM="xterm"))
    exits: list[int] = []

    def exited(_: str) -> bool:
        ended, status = os.waitpid(pid, os.WNOHANG)
        exits.extend([status] if ended else [])
        return bool(exits)

    try:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        drawn = read_terminal(terminal, lambda text: "table log" in text and "start" in text)
        os.write(terminal, b"\x03")
        rest = read_terminal(terminal, exited, seconds=20)
        rest += read_terminal(terminal, lambda text: True)
    finally:
        if not exits:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(exits[0]) == 0, (drawn + rest)[-2000:]
    assert "Traceback" not in drawn + rest
    assert "\x1b[?1049l" in rest  # the alternate screen is left
    assert f"You keep seat 1 at table {table_id}" in re.sub(r"\s+", " ", rest)
    modes = termios.tcgetattr(terminal)[3]
    assert modes & termios.ECHO  # the terminal is given back cooked: echoing, by lines
    assert modes & termios.ICANON
    os.close(terminal)


def read_terminal(terminal: int, done: Callable[[str], bool], seconds: float = 60) -> str:
    """What the program writes to `terminal` until `done` says it is enough, and then
    whatever is there already."""
    text = ""
    deadline = time.monotonic() + seconds
    while True:
        finished = done(text)
        assert finished or time.monotonic() < deadline, f"nothing came:\n{text[-2000:]}"
        if not select.select([terminal], [], [], 0 if finished else 0.1)[0]:
            if finished:
                return text
            continue
        try:
            chunk = os.read(terminal, 65536)
        except OSError:  # the program ended: its terminal is closed
            chunk = b""
        text += chunk.decode("utf-8", "replace")
        if finished and not chunk:
            return text
