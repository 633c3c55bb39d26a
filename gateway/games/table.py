"""What a table is in both games: its options, seats, chips moving, phases and the end
of a deal or a game.

Pure functions over a table's state (a JSON-ready dict): Guts (`gateway.games.guts`) and
Paiute (`gateway.games.paiute`) deal and play differently, but seat players, move chips
between stacks and the pot, record each deal's chip flow and end deals and games the
same way, with these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.games.common import Event, RuleError, event

State = dict[str, Any]

BETWEEN_DEALS = "between_deals"


def option(state: State, name: str) -> Any:
    """The table's value of option `name`."""
    return state["options"][name]


def is_seat_number(seat: object) -> bool:
    """Whether `seat` is an int seat number (a bool is not one)."""
    return isinstance(seat, int) and not isinstance(seat, bool)


def verify_seated(state: State, seat: int) -> dict[str, Any]:
    """The seat's record; RuleError not_seated unless `seat` is occupied."""
    if not is_seat_number(seat) or str(seat) not in state["seats"]:
        raise RuleError("not_seated", f"Seat {seat!r} is not occupied at this table.", "seat")
    record: dict[str, Any] = state["seats"][str(seat)]
    return record


def from_left_of(dealer: int | None, seats: Iterable[int]) -> list[int]:
    """`seats` in playing order: first the seats after `dealer`, then the rest."""
    ordered = sorted(seats)
    if dealer is None:
        return ordered
    return [s for s in ordered if s > dealer] + [s for s in ordered if s <= dealer]


def seat_numbers(state: State, status: str | None = None, funded: bool = False) -> list[int]:
    """Occupied seats, in order; only those with `status`, and with chips if `funded`."""
    return sorted(
        int(key)
        for key, seat in state["seats"].items()
        if (status is None or seat["status"] == status) and (not funded or seat["stack"] > 0)
    )


def split_evenly(amount: int, ways: int) -> list[int]:
    """`amount` in `ways` whole shares, the odd chips to the first shares."""
    base, odd = divmod(amount, ways)
    return [base + (1 if i < odd else 0) for i in range(ways)]


def record_flow(
    state: State, kind: str, seat: int | None, amount: int, source: str, target: str
) -> None:
    """Note a chip movement in the current deal's flow (for its hand record)."""
    deal = state["deal"]
    if deal is not None and not deal["ended"] and amount > 0:
        deal["flow"].append(
            {"kind": kind, "seat": seat, "amount": amount, "source": source, "target": target}
        )


def pay_out(state: State, seat: int, amount: int, kind: str) -> None:
    """Move `amount` chips from the pot to a seat's stack."""
    state["pot"] -= amount
    state["seats"][str(seat)]["stack"] += amount
    record_flow(state, kind, seat, amount, "pot", "seat")


def set_phase(state: State, phase: str, deadline: float | None, events: list[Event]) -> None:
    """Enter `phase` with its `deadline`, and say so in a phase event."""
    state["phase"] = phase
    state["deadline"] = deadline
    events.append(event("phase", {"phase": phase, "deadline": deadline}))


def end_game(state: State, reason: str, events: list[Event]) -> None:
    """The game is over (the pot is empty or abandoned); seats stay."""
    state["game_in_progress"] = False
    events.append(event("game_ended", {"game_number": state["game_number"], "reason": reason}))


def share_pot(state: State, seats: list[int], reason: str, events: list[Event]) -> None:
    """Share the pot among `seats` (in order, the odd chips first) and say so."""
    shares = split_evenly(state["pot"], len(seats))
    for seat, amount in zip(seats, shares, strict=True):
        pay_out(state, seat, amount, "share")
    events.append(
        event(
            "pot_split",
            {
                "shares": [{"seat": s, "amount": a} for s, a in zip(seats, shares, strict=True)],
                "reason": reason,
                "pot": state["pot"],
            },
        )
    )


def abandon_game(state: State, seats: list[int], reason: str, events: list[Event]) -> None:
    """End the game, sharing a pot left behind among `seats` from the dealer's left."""
    if state["pot"] > 0 and seats:
        share_pot(state, from_left_of(state["dealer"], seats), "abandoned", events)
    end_game(state, reason, events)


def abandon_short_game(state: State, events: list[Event]) -> None:
    """End a game that too few seats with chips can go on with.

    The pot goes to the game's seats that still hold chips, shared equally (to all of
    its seats if none does), and the seats left without chips leave (RULES.md, A deal,
    7: a player out of chips leaves at the end of the game).
    """
    funded = seat_numbers(state, "playing", True)
    abandon_game(state, funded or seat_numbers(state, "playing"), "not_enough_players", events)
    remove_broke(state, events)


def remove_seat(state: State, seat: int, reason: str, events: list[Event]) -> None:
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
    events.append(event("cashed_out", {"seat": seat, "name": record["name"], "amount": amount}))
    events.append(event("left", {"seat": seat, "name": record["name"], "reason": reason}))


def remove_broke(state: State, events: list[Event]) -> None:
    """Cash out (with nothing) every playing seat left without chips."""
    for seat in seat_numbers(state, "playing"):
        if state["seats"][str(seat)]["stack"] == 0:
            remove_seat(state, seat, "out_of_chips", events)


def end_deal(state: State, now: float, outcome: str, events: list[Event]) -> None:
    """Close the deal: its outcome, the end of the game, leavers and broke seats out, a pause."""
    deal = state["deal"]
    deal["outcome"] = outcome
    deal["turn"] = None
    events.append(
        event(
            "deal_ended",
            {
                "hand_number": deal["number"],
                "outcome": outcome,
                "pot": state["pot"],
                "reserve": state["reserve"],
            },
        )
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
    set_phase(state, BETWEEN_DEALS, now + option(state, "deal_pause_seconds"), events)


def is_current_player(state: State, seat: int) -> bool:
    """Whether the seat's present occupant is the player dealt into this deal."""
    deal = state["deal"]
    record = state["seats"].get(str(seat))
    return (
        deal is not None
        and record is not None
        and deal["player_ids"].get(str(seat)) == record["player_id"]
    )
