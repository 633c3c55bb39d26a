"""What a table is in both games: its state, seats, chips moving, phases, the start
and end of a deal or a game, and the view around the deal.

Pure functions over a table's state (`api.games.state`): Guts (`api.games.guts`) and
Paiute (`api.games.paiute`) deal and play differently, but seat players (sit, leave,
rebuy), start games, move chips between stacks and the pot, record each deal's chip flow,
end deals and games and show the table the same way, with these. A function that
changes a table in place takes either game's `TableState`; one that returns a changed
copy returns it typed as the game's own table it was given (`Transition`). The rules as
played: docs/rules.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final, TypeAlias, TypeVar, overload

from api.games.common import (
    Deck,
    Ranked,
    RuleError,
    copy_state,
    display_name,
    name_key,
    verify_deck,
)
from api.games.events import AwayData, Event, PotSplitData, SeatedData, Share
from api.games.state import (
    DealView,
    GutsDeal,
    GutsTable,
    PaiuteDeal,
    PaiuteTable,
    Pending,
    Seat,
    SeatStatus,
    SeatView,
    Table,
    TableState,
    TableView,
)

# a table of either game, given and returned as that game's
T = TypeVar("T", GutsTable, PaiuteTable)
# what a move returns: the new state (a copy; the state given itself where a caller that
# owns it asks for the change in place, as `settle` and `on_deadline` allow) and its events
Transition: TypeAlias = tuple[T, list[Event]]

# The phases both games have; each game adds the phases of its deals.
WAITING: Final = "waiting"
SHOWDOWN: Final = "showdown"
BETWEEN_DEALS: Final = "between_deals"

MAX_NAME_LENGTH = 32


def new_table(table_id: str, now: float) -> Table:
    """What an empty table of either game holds, waiting for players (its game adds its
    name, its options and the deal)."""
    return {
        "table_id": table_id,
        "version": 0,
        "created_at": now,
        "phase": WAITING,
        "deadline": None,
        "hand_number": 0,
        "game_number": 0,
        "game_in_progress": False,
        "pot": 0,
        "reserve": 0,
        "dealer": None,
        "seats": {},
        "next_player_id": 1,
        "chips_bought": 0,
        "chips_cashed": 0,
        # a closed table's reserve, gone to the house (`api.service.retention`)
        "chips_to_house": 0,
    }


def chips_on_table(state: TableState) -> int:
    """Return the sum of all stacks, the pot and the reserve."""
    stacks = sum(seat["stack"] for seat in state["seats"].values())
    return stacks + state["pot"] + state["reserve"]


def next_deadline(state: TableState) -> float | None:
    """Return the time at which the game's `on_deadline` has work to do, or None."""
    return state["deadline"]


def ranking_request(state: TableState) -> dict[str, list[str]] | None:
    """Return the hands a pending showdown needs ranked, keyed by str(seat) (and "ghost")."""
    deal = state["deal"]
    if state["phase"] != SHOWDOWN or deal is None or deal["ranking_needed"] is None:
        return None
    return {key: list(cards) for key, cards in deal["ranking_needed"].items()}


@overload
def deal_of(state: GutsTable) -> GutsDeal: ...
@overload
def deal_of(state: PaiuteTable) -> PaiuteDeal: ...
@overload
def deal_of(state: TableState) -> GutsDeal | PaiuteDeal: ...
def deal_of(state: TableState) -> GutsDeal | PaiuteDeal:
    """The deal being played (or the last one): only asked for where there is one."""
    deal = state["deal"]
    if deal is None:
        raise RuleError("no_hand_in_progress", "No deal is being played right now.")
    return deal


def finished_deal(state: TableState) -> GutsDeal | PaiuteDeal | None:
    """Return the record of the last deal, deck and salt included, once it has ended.

    Its values are the state's own, not copies: the hand history encodes it at once.
    """
    deal = state["deal"]
    if deal is None or not deal["ended"]:
        return None
    return deal.copy()


def is_seat_number(seat: object) -> bool:
    """Whether `seat` is an int seat number (a bool is not one)."""
    return isinstance(seat, int) and not isinstance(seat, bool)


def verify_seated(state: TableState, seat: int) -> Seat:
    """The seat's record; RuleError not_seated unless `seat` is occupied."""
    if not is_seat_number(seat) or str(seat) not in state["seats"]:
        raise RuleError(
            "not_seated", "Seat {seat!r} is not occupied at this table.", "seat", seat=seat
        )
    return state["seats"][str(seat)]


def from_left_of(dealer: int | None, seats: Iterable[int]) -> list[int]:
    """`seats` in playing order: first the seats after `dealer`, then the rest."""
    ordered = sorted(seats)
    if dealer is None:
        return ordered
    return [s for s in ordered if s > dealer] + [s for s in ordered if s <= dealer]


def seat_numbers(
    state: TableState,
    status: SeatStatus | None = None,
    funded: bool = False,
    present: bool = False,
) -> list[int]:
    """Occupied seats, in order; only those with `status`, with chips if `funded`, and
    not away if `present`."""
    return sorted(
        int(key)
        for key, seat in state["seats"].items()
        if (status is None or seat["status"] == status)
        and (not funded or seat["stack"] > 0)
        and (not present or not seat.get("away", False))
    )


def split_evenly(amount: int, ways: int) -> list[int]:
    """`amount` in `ways` whole shares, the odd chips to the first shares."""
    base, odd = divmod(amount, ways)
    return [base + (1 if i < odd else 0) for i in range(ways)]


def record_flow(
    state: TableState, kind: str, seat: int | None, amount: int, source: str, target: str
) -> None:
    """Note a chip movement in the current deal's flow (for its hand record)."""
    deal = state["deal"]
    if deal is not None and not deal["ended"] and amount > 0:
        deal["flow"].append(
            {"kind": kind, "seat": seat, "amount": amount, "source": source, "target": target}
        )


def pay_out(state: TableState, seat: int, amount: int, kind: str) -> None:
    """Move `amount` chips from the pot to a seat's stack."""
    state["pot"] -= amount
    state["seats"][str(seat)]["stack"] += amount
    record_flow(state, kind, seat, amount, "pot", "seat")


def set_phase(state: TableState, phase: str, deadline: float | None, events: list[Event]) -> None:
    """Enter `phase` with its `deadline`, and say so in a phase event."""
    state["phase"] = phase
    state["deadline"] = deadline
    events.append(
        {"type": "phase", "data": {"phase": phase, "deadline": deadline}, "visible_to": None}
    )


def end_game(state: TableState, reason: str, events: list[Event]) -> None:
    """The game is over (the pot is empty or abandoned); seats stay."""
    state["game_in_progress"] = False
    events.append(
        {
            "type": "game_ended",
            "data": {"game_number": state["game_number"], "reason": reason},
            "visible_to": None,
        }
    )


def share_pot(state: TableState, seats: list[int], reason: str, events: list[Event]) -> None:
    """Share the pot among `seats` (in order, the odd chips first) and say so."""
    shares = split_evenly(state["pot"], len(seats))
    for seat, amount in zip(seats, shares, strict=True):
        pay_out(state, seat, amount, "share")
    tell_split(state, seats, shares, reason, events)


def tell_split(
    state: TableState, seats: list[int], shares: list[int], reason: str, events: list[Event]
) -> None:
    """Say that the pot was split among `seats`, in these `shares`, for `reason`."""
    paid: list[Share] = [{"seat": s, "amount": a} for s, a in zip(seats, shares, strict=True)]
    split: PotSplitData = {"shares": paid, "reason": reason, "pot": state["pot"]}
    events.append({"type": "pot_split", "data": split, "visible_to": None})


def pending_between(state: TableState) -> Pending | None:
    """What a table waits for outside its deals' turns: a ranking, or the next deal."""
    if state["phase"] == SHOWDOWN:
        return {"action": "rank_hands", "seats": [], "deadline": None}
    if state["phase"] == BETWEEN_DEALS:
        return {"action": "next_deal", "seats": [], "deadline": state["deadline"]}
    return None


def abandon_game(state: TableState, seats: list[int], reason: str, events: list[Event]) -> None:
    """End the game, sharing a pot left behind among `seats` from the dealer's left."""
    if state["pot"] > 0 and seats:
        share_pot(state, from_left_of(state["dealer"], seats), "abandoned", events)
    end_game(state, reason, events)


def abandon_short_game(state: TableState, events: list[Event]) -> None:
    """End a game that too few seats with chips can go on with.

    The pot goes to the game's seats that still hold chips, shared equally (to all of
    its seats if none does), and the seats left without chips leave (docs/rules.md, A deal,
    7: a player out of chips leaves at the end of the game).
    """
    funded = seat_numbers(state, "playing", True)
    abandon_game(state, funded or seat_numbers(state, "playing"), "not_enough_players", events)
    remove_broke(state, events)


def remove_seat(state: TableState, seat: int, reason: str, events: list[Event]) -> None:
    """Cash a seat out and free it; if it was the last one playing, the pot goes to it."""
    record = state["seats"][str(seat)]
    if state["game_in_progress"] and record["status"] == "playing":
        others = [s for s in seat_numbers(state, "playing") if s != seat]
        if not others:
            # The pot must not be stranded with nobody left to play for it.
            abandon_game(state, [seat], "abandoned", events)
    amount = record["stack"]
    state["chips_cashed"] += amount
    del state["seats"][str(seat)]
    events.append(
        {
            "type": "cashed_out",
            "data": {"seat": seat, "name": record["name"], "amount": amount},
            "visible_to": None,
        }
    )
    events.append(
        {
            "type": "left",
            "data": {"seat": seat, "name": record["name"], "reason": reason},
            "visible_to": None,
        }
    )


def remove_broke(state: TableState, events: list[Event]) -> None:
    """Cash out (with nothing) every playing seat left without chips."""
    for seat in seat_numbers(state, "playing"):
        if state["seats"][str(seat)]["stack"] == 0:
            remove_seat(state, seat, "out_of_chips", events)


def end_deal(state: TableState, now: float, outcome: str, events: list[Event]) -> None:
    """Close the deal: its outcome, the end of the game, leavers and broke seats out, a pause."""
    deal = deal_of(state)
    deal["outcome"] = outcome
    deal["turn"] = None
    events.append(
        {
            "type": "deal_ended",
            "data": {
                "hand_number": deal["number"],
                "outcome": outcome,
                "pot": state["pot"],
                "reserve": state["reserve"],
            },
            "visible_to": None,
        }
    )
    if state["pot"] == 0:
        end_game(state, "won", events)
    else:
        playing = seat_numbers(state, "playing")
        if playing and all(state["seats"][str(s)]["leaving"] for s in playing):
            abandon_game(state, playing, "abandoned", events)
    for seat in seat_numbers(state):
        if state["seats"][str(seat)]["leaving"]:
            remove_seat(state, seat, "left", events)
    if not state["game_in_progress"]:
        remove_broke(state, events)
    # Marked last, so that a pot shared out because everyone left is in this deal's flow.
    deal["ended"] = True
    set_phase(state, BETWEEN_DEALS, now + state["options"]["deal_pause_seconds"], events)


def is_current_player(state: TableState, seat: int) -> bool:
    """Whether the seat's present occupant is the player dealt into this deal."""
    deal = state["deal"]
    record = state["seats"].get(str(seat))
    return (
        deal is not None
        and record is not None
        and deal["player_ids"].get(str(seat)) == record["player_id"]
    )


# --------------------------------------------------------------------------- away and back

# decisions missed in a row before a seat is away, when a table's options do not say
AWAY_AFTER = 2


def is_away(record: Seat) -> bool:
    """Whether a seat is away (a seat stored before away existed never is)."""
    return record.get("away", False)


def miss(state: TableState, seat: int, events: list[Event]) -> None:
    """A decision the seat let its deadline take: after `away_after` in a row, it is away."""
    record = state["seats"].get(str(seat))
    if record is None:
        return
    record["missed"] = record.get("missed", 0) + 1
    limit = state["options"].get("away_after", AWAY_AFTER)
    if limit and not is_away(record) and record["missed"] >= limit:
        record["away"] = True
        data: AwayData = {"seat": seat, "name": record["name"], "missed": record["missed"]}
        events.append({"type": "away", "data": data, "visible_to": None})


def can_deal(state: TableState) -> bool:
    """Whether enough present seats with chips are there for the next deal: of the running
    game's seats while a game runs, of every seat otherwise."""
    minimum = state["options"]["min_players"]
    status: SeatStatus | None = "playing" if state["game_in_progress"] else None
    return len(seat_numbers(state, status, funded=True, present=True)) >= minimum


def as_present(state: T, seat: int) -> T:
    """The state with an away seat present again, for its own move: a move of theirs
    brings them back (`returned` says so after the move)."""
    record = state["seats"].get(str(seat)) if is_seat_number(seat) else None
    if record is None or not is_away(record):
        return state
    new = copy_state(state)
    new["seats"][str(seat)]["away"] = False
    return new


def returned(
    state: TableState, seat: int, now: float, was_away: bool, events: list[Event]
) -> list[Event]:
    """After a move of the seat's own: its missed decisions count from none again, and a
    seat that was away is back (its `back` event first). A table that waited for its
    players deals again after the pause once enough of them are back."""
    record = state["seats"].get(str(seat))
    if record is None:
        return events
    record["missed"] = 0
    if not was_away:
        return events
    record["away"] = False
    events = [
        {"type": "back", "data": {"seat": seat, "name": record["name"]}, "visible_to": None},
        *events,
    ]
    if state["phase"] == WAITING and state["hand_number"] > 0 and can_deal(state):
        set_phase(state, BETWEEN_DEALS, now + state["options"]["deal_pause_seconds"], events)
    return events


def verify_back(state: TableState, seat: int, now: float) -> None:
    """Raise RuleError unless this seat is away, so that it may say it is back."""
    record = verify_seated(state, seat)
    if not is_away(record):
        raise RuleError("not_away", "Seat {seat} is not away.", "seat", seat=seat)


def back(state: T, seat: int, now: float) -> Transition[T]:
    """An away seat is back: dealt in again from the next deal."""
    verify_back(state, seat, now)
    new = copy_state(state)
    return new, returned(new, seat, now, True, [])


# --------------------------------------------------------------------------- seats


def verify_sit(state: TableState, name: str, buy_in: int, now: float) -> None:
    """Raise RuleError unless a new player may sit down with this name and buy-in."""
    shown = display_name(name, MAX_NAME_LENGTH)
    if shown is None:
        raise RuleError(
            "invalid_name",
            "A name must be 1 to {max_name_length} characters long, not counting spaces"
            " at either end, with no control or invisible formatting character.",
            "name",
            max_name_length=MAX_NAME_LENGTH,
        )
    low, high = state["options"]["min_buy_in"], state["options"]["max_buy_in"]
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or not low <= buy_in <= high:
        raise RuleError(
            "invalid_buy_in",
            "The buy-in must be a whole number of chips from {low} to {high}.",
            "buy_in",
            low=low,
            high=high,
        )
    wanted = name_key(shown)
    if any(name_key(seat["name"]) == wanted for seat in state["seats"].values()):
        raise RuleError(
            "name_taken", "Someone at this table already goes by {shown!r}.", "name", shown=shown
        )
    if len(state["seats"]) >= state["options"]["max_players"]:
        raise RuleError("table_full", "Every seat at this table is taken.")


def sit(state: T, name: str, buy_in: int, now: float) -> Transition[T]:
    """Seat a new player in the lowest free seat; they join at the start of the next game."""
    verify_sit(state, name, buy_in, now)
    shown = display_name(name, MAX_NAME_LENGTH)
    assert shown is not None  # verified
    new = copy_state(state)
    seat = next(
        n for n in range(1, new["options"]["max_players"] + 1) if str(n) not in new["seats"]
    )
    new["seats"][str(seat)] = {
        "name": shown,
        "stack": buy_in,
        "status": "waiting",
        "leaving": False,
        "skip_ante": False,
        "player_id": new["next_player_id"],
        "bought_in": buy_in,
        "sat_at": now,
        "away": False,
        "missed": 0,
    }
    new["next_player_id"] += 1
    new["chips_bought"] += buy_in
    data: SeatedData = {"seat": seat, "name": name.strip(), "stack": buy_in, "status": "waiting"}
    return new, [{"type": "seated", "data": data, "visible_to": None}]


def verify_leave(state: TableState, seat: int, now: float) -> None:
    """Raise RuleError unless this seat may ask to leave."""
    record = verify_seated(state, seat)
    if record["leaving"]:
        raise RuleError(
            "already_left", "Seat {seat} already leaves at the end of this deal.", "seat", seat=seat
        )


def mark_leaving(state: TableState, seat: int, events: list[Event]) -> None:
    """Mark a seat dealt into the current deal to leave when the deal ends."""
    record = state["seats"][str(seat)]
    record["leaving"] = True
    events.append(
        {"type": "leaving", "data": {"seat": seat, "name": record["name"]}, "visible_to": None}
    )


def leave(state: T, seat: int, now: float, in_hand: bool) -> Transition[T]:
    """Cash a seat out now, or at the end of the deal if it is `in_hand` (dealt into it)."""
    verify_leave(state, seat, now)
    new = copy_state(state)
    events: list[Event] = []
    if in_hand:
        mark_leaving(new, seat, events)
    else:
        remove_seat(new, seat, "left", events)
    return new, events


def refuse_rebuy_in_hand(seat: int) -> RuleError:
    """The error for a rebuy by a seat dealt into the deal being played."""
    return RuleError(
        "game_in_progress",
        "Seat {seat} is in the current deal; rebuy once it has been settled.",
        "seat",
        seat=seat,
    )


def verify_rebuy(state: TableState, seat: int, amount: int, in_hand: bool) -> None:
    """Raise RuleError unless this seat, `in_hand` or not, may buy `amount` more chips."""
    if not state["options"]["rebuy"]:
        raise RuleError("rebuy_not_allowed", "This table does not allow rebuys.")
    record = verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if record["leaving"]:
        raise RuleError(
            "already_left", "Seat {seat} is leaving and cannot rebuy.", "seat", seat=seat
        )
    if in_hand:
        raise refuse_rebuy_in_hand(seat)
    low, high = state["options"]["min_buy_in"], state["options"]["max_buy_in"]
    if isinstance(amount, bool) or not isinstance(amount, int) or amount < 1:
        raise RuleError(
            "invalid_buy_in", "A rebuy must be a positive whole number of chips.", "amount"
        )
    if not low <= record["stack"] + amount <= high:
        raise RuleError(
            "invalid_buy_in",
            "After a rebuy the stack must hold from {low} to {high} chips;"
            " seat {seat} holds {stack}.",
            "amount",
            low=low,
            high=high,
            seat=seat,
            stack=record["stack"],
        )


def buy_chips(state: T, seat: int, amount: int) -> Transition[T]:
    """Add a verified rebuy's chips to a seat's stack."""
    new = copy_state(state)
    record = new["seats"][str(seat)]
    record["stack"] += amount
    record["bought_in"] += amount
    new["chips_bought"] += amount
    return new, [
        {
            "type": "rebought",
            "data": {"seat": seat, "amount": amount, "stack": record["stack"]},
            "visible_to": None,
        }
    ]


# --------------------------------------------------------------------------- games


def verify_start(state: TableState, seat: int, now: float, deck: Deck) -> None:
    """Raise RuleError unless this seat may start the waiting table."""
    verify_seated(state, seat)
    if state["phase"] == SHOWDOWN:
        raise RuleError("showdown_pending", "Wait until the showdown has been settled.")
    if state["phase"] != WAITING:
        raise RuleError("already_started", "The table is already playing.")
    needed = state["options"]["min_players"]
    # as the deal would open: a running game short of players ends first
    if open_deal(copy_state(state), []) is None:
        raise RuleError(
            "not_enough_players",
            "At least {needed} seated players with chips, not away, are needed.",
            needed=needed,
        )
    verify_deck(deck)


def open_deal(state: TableState, events: list[Event]) -> bool | None:
    """Before a deal: end a game too few seats with chips can go on with, and start one.

    True when a new game starts with this deal (every seat with chips plays in it, an
    away one from its return), False when the running game goes on, None when no deal
    starts: too few seats hold chips, or too few of them are present (not away); the
    table waits, a running game and its pot with it, until they are back.
    """
    minimum = state["options"]["min_players"]
    if state["game_in_progress"] and len(seat_numbers(state, "playing", funded=True)) < minimum:
        abandon_short_game(state, events)
    if state["game_in_progress"]:
        if can_deal(state):
            return False
        set_phase(state, WAITING, None, events)
        return None
    funded = seat_numbers(state, funded=True)
    if not can_deal(state):
        for record in state["seats"].values():
            record["status"] = WAITING
        set_phase(state, WAITING, None, events)
        return None
    state["game_number"] += 1
    state["game_in_progress"] = True
    for seat in funded:
        state["seats"][str(seat)]["status"] = "playing"
    events.append(
        {
            "type": "game_started",
            "data": {"game_number": state["game_number"], "players": funded},
            "visible_to": None,
        }
    )
    return True


def verify_settle(state: TableState, ranks: Mapping[str, Ranked], now: float) -> None:
    """Raise RuleError unless a showdown is pending and `ranks` covers every hand in it."""
    if state["phase"] != SHOWDOWN:
        raise RuleError("not_in_showdown", "No showdown is waiting to be settled.")
    for key in deal_of(state)["ranking_needed"] or ():
        rank = ranks.get(key) if isinstance(ranks, Mapping) else None
        if not isinstance(rank, Ranked):
            raise RuleError(
                "invalid_ranking", "The ranking has no rank for hand {key!r}.", "ranks", key=key
            )
        if isinstance(rank.strength, bool) or not isinstance(rank.strength, int):
            raise RuleError(
                "invalid_ranking",
                "The strength of hand {key!r} is not a whole number.",
                "ranks",
                key=key,
            )


# --------------------------------------------------------------------------- views


def deal_view(deal: GutsDeal | PaiuteDeal) -> DealView:
    """What everyone sees of a deal in both games (each game adds its own part)."""
    return {
        "number": deal["number"],
        "game_number": deal["game_number"],
        "dealer": deal["dealer"],
        "commitment": deal["commitment"],
        "players": list(deal["players"]),
        "names": dict(deal["names"]),
        "pot_at_start": deal["pot_at_start"],
        "flow": copy_state(deal["flow"]),
        "outcome": deal["outcome"],
        "ended": deal["ended"],
    }


def view(state: TableState, seat: int | None) -> tuple[TableView, bool]:
    """The table around its deal as `seat` may see it, and whether `seat` is seated.

    The game fills in ``deal``, ``pending`` and ``you`` (None here).
    """
    deal = state["deal"]
    playing = deal is not None and not deal["ended"]
    seats: dict[str, SeatView] = {}
    for key in sorted(state["seats"], key=int):
        record = state["seats"][key]
        seats[key] = {
            "seat": int(key),
            "name": record["name"],
            "stack": record["stack"],
            "status": record["status"],
            "leaving": record["leaving"],
            "away": is_away(record),
            "out_of_chips": record["stack"] == 0,
            "in_hand": playing and is_current_player(state, int(key)),
        }
        if "computer" in record:
            seats[key]["computer"] = record["computer"]
    result: TableView = {
        "game": state["game"],
        "table_id": state["table_id"],
        "version": state["version"],
        "options": state["options"].copy(),
        "phase": state["phase"],
        "deadline": state["deadline"],
        "hand_number": state["hand_number"],
        "game_number": state["game_number"],
        "game_in_progress": state["game_in_progress"],
        "pot": state["pot"],
        "reserve": state["reserve"],
        "dealer": state["dealer"],
        "seats": seats,
        "deal": None,
        "pending": None,
        "you": None,
    }
    seated = seat is not None and is_seat_number(seat) and str(seat) in state["seats"]
    return result, seated
