"""The `cardroom` command: its subcommands, the gateway they talk to and the player's key.

The gateway is `--gateway`, else `$CARDROOM_GATEWAY`, else the configuration's (the one
last signed up or logged in at, or set by `cardroom gateway URL`), else
http://127.0.0.1:8000. The player's key is `$CARDROOM_KEY`, else the one kept for that
gateway. Answers come in the language of `--lang`, `$CARDROOM_LANG`, the configuration
or the user's locale, where the gateway speaks it. A refusal of the gateway is printed
as its title and detail and the command exits with status 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console

from cardroom_client.cli.config import (
    DEFAULT_GATEWAY,
    GATEWAY_VARIABLE,
    KEY_VARIABLE,
    LANGUAGE_VARIABLE,
    Account,
    Config,
    locale_language,
    normal_gateway,
)
from cardroom_client.cli.display import (
    fairness_view,
    game_words,
    history_view,
    ledger_grid,
    lobby_grid,
    problem_text,
)
from cardroom_client.cli.seen import SeenDeals
from cardroom_client.client import Client
from cardroom_client.errors import CardroomError, FairnessError
from cardroom_client.fairness import FairnessReport
from cardroom_client.models import (
    GutsOptions,
    HeldSeat,
    LobbyFilters,
    PaiuteOptions,
    TableOptions,
)
from cardroom_client.transport import VERSION

if TYPE_CHECKING:
    # Textual is imported only by the commands that show the screen: the others start faster
    from cardroom_client.cli.screen import TableScreen

Command = TypeVar("Command", bound=Callable[..., Any])


class Refusal(click.ClickException):
    """A failure of the gateway, shown as its title and detail (in the language asked)."""

    def __init__(self, error: CardroomError) -> None:
        """Wrap `error`."""
        super().__init__(error.detail)
        self.error = error

    def show(self, file: Any = None) -> None:
        """Print the problem's title and detail to standard error."""
        Console(stderr=True, highlight=False).print(problem_text(self.error))


class CardroomGroup(click.Group):
    """A group whose commands' gateway failures end as `Refusal`s, not tracebacks."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a `CardroomError` becomes a `Refusal`."""
        try:
            return super().invoke(ctx)
        except CardroomError as error:
            raise Refusal(error) from error


@dataclass
class Session:
    """What every command needs: the configuration, the gateway, the language, a client."""

    config: Config
    gateway: str
    language: str
    clients: list[Client] = field(default_factory=list)

    def client(self, credential: str | None = None) -> Client:
        """A client of the gateway sending `credential` (None: anonymous)."""
        if not self.clients:
            self.clients.append(
                Client(self.gateway, timeout=15.0, headers={"Accept-Language": self.language})
            )
        return self.clients[0].with_credential(credential)

    def key(self) -> str:
        """The player's key for this gateway, or a usage error saying how to get one."""
        key = os.environ.get(KEY_VARIABLE)
        if key:
            return key
        account = self.config.account(self.gateway)
        if account is None:
            raise click.UsageError(
                f"no key for {self.gateway}: `cardroom signup NAME` makes a player, "
                "`cardroom login` keeps the key of an existing one"
            )
        return account.key

    def player(self) -> Client:
        """A client sending the player's key."""
        return self.client(self.key())

    def close(self) -> None:
        """Close the connections."""
        for client in self.clients:
            client.close()


def out() -> Console:
    """The console commands print to (standard output, as it is now)."""
    return Console(highlight=False)


@click.group(cls=CardroomGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--gateway",
    metavar="URL",
    envvar=GATEWAY_VARIABLE,
    help=f"The gateway (${GATEWAY_VARIABLE}; default: the configuration's, or {DEFAULT_GATEWAY}).",
)
@click.option(
    "--lang",
    metavar="TAG",
    envvar=LANGUAGE_VARIABLE,
    help="The language of answers: en, sw, ps, hu, et (default: the locale's).",
)
@click.version_option(VERSION, prog_name="cardroom")
@click.pass_context
def cardroom(ctx: click.Context, gateway: str | None, lang: str | None) -> None:
    """Play Guts and Paiute at a cardroom gateway from the terminal."""
    config = Config()
    language = lang or config.language or locale_language(os.environ) or "en"
    session = Session(
        config, normal_gateway(gateway or config.gateway or DEFAULT_GATEWAY), language
    )
    ctx.obj = session
    ctx.call_on_close(session.close)


pass_session = click.make_pass_decorator(Session)


# ---------------------------------------------------------------------- the player


@cardroom.command()
@click.argument("name")
@pass_session
def signup(session: Session, name: str) -> None:
    """Make a new player NAME and keep their key (printed this once)."""
    created = session.client().create_player(name)
    keep(session, Account(created.key, created.id, created.name))
    player = session.client(created.key).me()
    console = out()
    console.print(f"Signed up as [bold]{created.name}[/] ({created.id}) at {session.gateway}.")
    console.print(f"Your wallet holds {player.balance} chips. Your key, shown this once:")
    console.print(created.key, markup=False)
    console.print(
        f"It is kept, readable by you alone, in {session.config.path};"
        " `cardroom key` prints it again."
    )


@cardroom.command()
@pass_session
def login(session: Session) -> None:
    """Keep the key of an existing player (asked for, never echoed)."""
    if sys.stdin.isatty():
        key = click.prompt("Player key", hide_input=True).strip()
    else:
        key = sys.stdin.readline().strip()
    player = session.client(key).me()
    keep(session, Account(key, player.id, player.name))
    out().print(f"Logged in as [bold]{player.name}[/] ({player.id}) at {session.gateway}.")


def keep(session: Session, account: Account) -> None:
    """Keep `account` for the session's gateway, which becomes the default one."""
    session.config.remember(session.gateway, account)
    session.config.gateway = session.gateway
    session.config.save()


@cardroom.command()
@pass_session
def logout(session: Session) -> None:
    """Forget the key kept for this gateway (the player and the key stay valid)."""
    if session.config.forget(session.gateway):
        session.config.save()
        out().print(f"The key for {session.gateway} is forgotten.")
    else:
        out().print(f"No key was kept for {session.gateway}.")


@cardroom.command()
@pass_session
def key(session: Session) -> None:
    """Print the player's key (keep it secret: it acts for the player everywhere)."""
    click.echo(session.key())


@cardroom.command()
@click.argument("url", required=False)
@pass_session
def gateway(session: Session, url: str | None) -> None:
    """Show the gateway in use, or make URL the default one."""
    if url is not None:
        session.config.gateway = url
        session.config.save()
        session.gateway = normal_gateway(url)
    out().print(session.gateway, markup=False)


@cardroom.command()
@pass_session
def whoami(session: Session) -> None:
    """The player the key belongs to, and their wallet."""
    player = session.player().me()
    console = out()
    console.print(f"[bold]{player.name}[/] ({player.id}) at {session.gateway}")
    console.print(
        f"wallet: {player.balance} chips"
        + (f", {player.pending} reserved for a buy-in" if player.pending else "")
    )


@cardroom.command()
@click.option("--limit", default=20, show_default=True, help="How many entries.")
@pass_session
def ledger(session: Session, limit: int) -> None:
    """The wallet's balance and its transfers, newest first."""
    player = session.player()
    me = player.me()
    out().print(ledger_grid(player.my_ledger(limit), me.id))


# ---------------------------------------------------------------------- tables


@cardroom.command()
@click.option("--limit", default=20, show_default=True, help="How many tables.")
@click.option("--game", type=click.Choice(["guts", "paiute"]), help="Only this game's tables.")
@click.option("--cards", type=click.Choice(["2", "3"]), help="Only Guts with this many cards.")
@click.option("--ante-min", type=int, help="Only tables whose ante is at least this.")
@click.option("--ante-max", type=int, help="Only tables whose ante is at most this.")
@click.option("--free-seats", type=int, help="Only tables with this many seats free.")
@click.option("--mine", is_flag=True, help="Your own open tables, empty ones too.")
@pass_session
def lobby(
    session: Session,
    limit: int,
    game: Any,
    cards: str | None,
    ante_min: int | None,
    ante_max: int | None,
    free_seats: int | None,
    mine: bool,
) -> None:
    """The tables to join first (the fullest with a free seat), then the full ones."""
    filters = LobbyFilters(
        game, 2 if cards == "2" else 3 if cards else None, ante_min, ante_max, free_seats, mine
    )
    client = session.player() if mine else session.client()
    tables = list(islice(client.lobby(page_size=min(limit, 100), filters=filters), limit))
    if not tables:
        out().print("No table to join: `cardroom quick-seat guts CHIPS` seats you at a new one.")
        return
    out().print(lobby_grid(tables))


@cardroom.command(name="quick-seat")
@click.argument("game", type=click.Choice(["guts", "paiute"]))
@click.argument("buy_in", type=int)
@click.option("--cards", type=click.Choice(["2", "3"]), help="Guts: cards per hand.")
@click.option("--ante", type=int, help="The table's ante.")
@click.option("--max-players", type=int, help="The table's seats.")
@click.option("--name", help="The seat's name (by default the player's).")
@pass_session
def quick_seat(
    session: Session,
    /,
    game: str,
    buy_in: int,
    cards: str | None,
    name: str | None,
    **options: Any,
) -> None:
    """A seat with BUY_IN chips at a GAME table with a free seat (the fullest first), or
    at a new one; the options left out match any table."""
    chosen = {key: value for key, value in options.items() if value is not None}
    table: TableOptions = PaiuteOptions(**chosen)
    if game == "guts":
        table = GutsOptions(cards=2 if cards == "2" else 3 if cards else None, **chosen)
    seat = session.player().quick_seat(table, buy_in, name=name)
    made = " (a new table)" if seat.created else ""
    waits = " (you play from the next game)" if seat.waiting else ""
    out().print(
        f"Seat {seat.number} at table {seat.table_id}{made} is yours{waits}."
        f" `cardroom play {seat.table_id}` plays."
    )


@cardroom.group(cls=CardroomGroup)
def create() -> None:
    """Open a table of Guts or Paiute (every option left out takes the gateway's default)."""


def shared_options(command: Command) -> Command:
    """The options both games' tables have."""
    options = [
        click.option("--name", help="The table's name (1 to 64 characters)."),
        click.option("--ante", type=int, help="Chips each player antes."),
        click.option("--turn-seconds", type=int, help="Seconds for each decision."),
        click.option("--deal-pause-seconds", type=float, help="Seconds between deals."),
        click.option("--rebuy/--no-rebuy", default=None, help="May players buy more chips."),
        click.option("--min-players", type=int),
        click.option("--max-players", type=int),
        click.option("--min-buy-in", type=int),
        click.option("--max-buy-in", type=int),
        click.option("--away-after", type=int, help="Missed decisions before a seat is away."),
        click.option("--sit", "buy_in", type=int, metavar="CHIPS", help="Take a seat too."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@create.command(name="guts")
@shared_options
@click.option("--cards", type=click.Choice(["2", "3"]), help="Cards per hand.")
@click.option("--ante-mode", type=click.Choice(["empty_pot", "every_deal"]))
@click.option("--declare", type=click.Choice(["simultaneous", "sequential"]))
@click.option("--all-out-ante/--no-all-out-ante", default=None)
@click.option("--wimp/--no-wimp", default=None)
@click.option("--losers-pay", type=click.Choice(["all", "worst"]))
@click.option("--ghost/--no-ghost", default=None)
@click.option("--cap", type=int)
@click.option("--cap-mode", type=click.Choice(["per_deal", "reserve"]))
@pass_session
def create_guts(
    session: Session, /, name: str | None, buy_in: int | None, cards: str | None, **options: Any
) -> None:
    """A Guts table (docs/rules.md has every option)."""
    if cards is not None:
        options["cards"] = int(cards)
    open_table(session, GutsOptions(**options), name, buy_in)


@create.command(name="paiute")
@shared_options
@click.option("--max-reshuffles", type=int, help="Reshuffles before a deal with no call is void.")
@pass_session
def create_paiute(
    session: Session, /, name: str | None, buy_in: int | None, **options: Any
) -> None:
    """A Paiute table (docs/rules.md has every option)."""
    open_table(session, PaiuteOptions(**options), name, buy_in)


def open_table(
    session: Session, options: TableOptions, name: str | None, buy_in: int | None
) -> None:
    """Create the table, and take a seat at it with `buy_in` chips if given."""
    player = session.player()
    table = player.create_table(options, name=name)
    console = out()
    console.print(
        f"Table [bold]{table.id}[/] ({table.name}): {game_words(table.game, table.options)}"
    )
    if buy_in is None:
        console.print(f"`cardroom sit {table.id} CHIPS` takes a seat.")
        return
    seat = player.take_seat(table.id, None, buy_in)
    console.print(f"Seat {seat.number} is yours. `cardroom play {table.id}` plays.")


@cardroom.command()
@click.argument("table_id")
@click.argument("buy_in", type=int)
@click.option("--name", help="The seat's name (by default the player's).")
@pass_session
def sit(session: Session, table_id: str, buy_in: int, name: str | None) -> None:
    """Take a seat at TABLE_ID with BUY_IN chips from the wallet."""
    seat = session.player().take_seat(table_id, name, buy_in)
    waits = " (you play from the next game)" if seat.waiting else ""
    out().print(
        f"Seat {seat.number} at table {table_id} is yours{waits}. `cardroom play {table_id}` plays."
    )


def held_seat(player: Client, table_id: str) -> HeldSeat | None:
    """The player's seat at `table_id`, if they hold one."""
    return next((held for held in player.my_seats() if held.table_id == table_id), None)


@cardroom.command()
@click.argument("table_id")
@pass_session
def leave(session: Session, table_id: str) -> None:
    """Leave TABLE_ID: the chips go back to the wallet (after the deal, if in one)."""
    player = session.player()
    held = held_seat(player, table_id)
    if held is None:
        raise click.UsageError(f"you hold no seat at table {table_id}")
    result = player.seat(table_id, held.seat).leave()
    if result.left:
        out().print(f"You left table {table_id}: {result.cashed_out or 0} chips to your wallet.")
    else:
        out().print("You leave when this deal is settled; your chips then go to your wallet.")


@cardroom.command()
@pass_session
def seats(session: Session) -> None:
    """The seats the player holds."""
    held = session.player().my_seats()
    console = out()
    if not held:
        console.print("You hold no seat.")
    for seat in held:
        console.print(
            f"table [bold]{seat.table_id}[/] ({seat.table_name}, {seat.game}): seat {seat.seat}"
            f" {seat.name}, {seat.stack} chips, {seat.status}, {seat.phase.replace('_', ' ')}"
        )


# ---------------------------------------------------------------------- the screen


def play_screen(session: Session, table_id: str, buy_in: int | None) -> TableScreen:
    """The screen of the player's seat at `table_id`, taken first with `buy_in` if given."""
    from cardroom_client.cli.screen import TableScreen

    player = session.player()
    held = held_seat(player, table_id)
    if held is None and buy_in is not None:
        player.take_seat(table_id, None, buy_in)
        held = held_seat(player, table_id)
    if held is None:
        raise click.UsageError(
            f"you hold no seat at table {table_id}: `cardroom play {table_id} --buy-in CHIPS`"
            f" sits down first, `cardroom watch {table_id}` watches"
        )
    seen = SeenDeals(session.gateway)
    return TableScreen(player, table_id, seat=held.seat, after=held.last_event, seen=seen)


def watch_screen(session: Session, table_id: str) -> TableScreen:
    """A spectator's screen of `table_id`, from its last event on."""
    from cardroom_client.cli.screen import TableScreen

    client = session.client()
    after = last_event(client, table_id)
    return TableScreen(client, table_id, seat=None, after=after, seen=SeenDeals(session.gateway))


@cardroom.command()
@click.argument("table_id")
@click.option("--buy-in", type=int, metavar="CHIPS", help="Take a seat first, with CHIPS.")
@pass_session
def play(session: Session, table_id: str, buy_in: int | None) -> None:
    """Play at TABLE_ID in the terminal (a seat held there, or taken with --buy-in)."""
    screen = play_screen(session, table_id, buy_in)
    screen.run()
    if screen.seat is not None and not screen.left:
        out().print(
            f"You keep seat {screen.seat.number} at table {table_id}: `cardroom play"
            f" {table_id}` comes back, `cardroom leave {table_id}` cashes out."
        )


@cardroom.command()
@click.argument("table_id")
@pass_session
def watch(session: Session, table_id: str) -> None:
    """Watch TABLE_ID as a spectator."""
    watch_screen(session, table_id).run()


def last_event(client: Client, table_id: str) -> int:
    """The id of the table's last event, where a spectator starts following."""
    client.table(table_id)  # a table that is not there is refused here, as itself
    try:
        client.events(table_id, after=2**53)
    except CardroomError as error:
        # the one answer that names the last event to a spectator: a cursor past it
        if error.code == "invalid_cursor" and error.problem is not None:
            return int(error.problem["last_event"])
        raise
    return 2**53


# ---------------------------------------------------------------------- histories


def finished_deal(client: Client, table_id: str, hand_number: int | None) -> int:
    """`hand_number`, or the table's last finished deal."""
    if hand_number is not None:
        return hand_number
    table = client.table(table_id)
    ended = table.deal is None or table.deal.ended
    number = table.hand_number if ended else table.hand_number - 1
    if number < 1:
        raise click.UsageError(f"table {table_id} has no finished deal yet")
    return number


def reader(session: Session) -> Client:
    """The player's client when a key is kept (it opens their own cards), else anonymous."""
    if os.environ.get(KEY_VARIABLE) or session.config.account(session.gateway):
        return session.player()
    return session.client()


@cardroom.command()
@click.argument("table_id")
@click.argument("hand_number", type=int, required=False)
@pass_session
def history(session: Session, table_id: str, hand_number: int | None) -> None:
    """A finished deal of TABLE_ID (by default the last one) and its fairness check."""
    client = reader(session)
    number = finished_deal(client, table_id, hand_number)
    names = {n: seat.name for n, seat in client.table(table_id).seats.items()}
    out().print(history_view(client.hand(table_id, number), names))
    report, failure = check_fairness(session, client, table_id, number)
    verdict = fairness_view(report, failure)
    out().print(verdict.split("\n")[0])


@cardroom.command()
@click.argument("table_id")
@click.argument("hand_number", type=int, required=False)
@pass_session
def verify(session: Session, table_id: str, hand_number: int | None) -> None:
    """Check the fairness proof of a deal of TABLE_ID, every check listed; status 1 if
    it fails."""
    client = reader(session)
    number = finished_deal(client, table_id, hand_number)
    report, failure = check_fairness(session, client, table_id, number)
    out().print(fairness_view(report, failure))
    if report is None:
        sys.exit(1)


def check_fairness(
    session: Session, client: Client, table_id: str, hand_number: int
) -> tuple[FairnessReport | None, str | None]:
    """The proof checked against what this terminal saw of the deal, when it saw it."""
    seen = SeenDeals(session.gateway).find(table_id, hand_number)
    announced = seen.commitment if seen is not None else None
    dealt = None
    if seen is not None and seen.seat is not None and seen.dealt is not None:
        dealt = {seen.seat: seen.dealt}
    try:
        report = client.verify_hand(table_id, hand_number, announced=announced, dealt=dealt)
    except FairnessError as error:
        return None, str(error)
    return report, None


def main() -> None:
    """The `cardroom` console script."""
    cardroom(prog_name="cardroom")
