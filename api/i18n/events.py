"""A readable line for each event, in the players' languages: the sentences the table
page shows in its log (api/web/table.js), for API clients that ask for a language.

Seats are named as "Seat 3" (an event names a player only when one sits down), cards by
the labels printed on them ("10♥"). An event with nothing to say (an ante of nothing)
or of a type this module does not know has the line None.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from api.i18n import hands
from api.i18n.catalogs import say, say_plural

Data = Mapping[str, Any]
SUITS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}


def card_label(code: object) -> str:
    """A card's label as printed on it: "Th" -> "10♥"."""
    text = str(code)
    rank = text[:-1].upper()
    return ("10" if rank == "T" else rank) + SUITS.get(text[-1:].lower(), "?")


@functools.lru_cache(maxsize=1024)
def seat_name(language: str, seat: object) -> str:
    """How a line names a seat: "Seat 3", or the ghost hand."""
    if str(seat) == "ghost":
        return say(language, "The ghost")
    return say(language, "Seat {seat}", {"seat": seat})


def names_list(language: str, names: list[str]) -> str:
    """ "A, B and C" in `language`."""
    if len(names) <= 1:
        return "".join(names)
    rest = say(language, ", ").join(names[:-1])
    return say(language, "{names} and {last}", {"names": rest, "last": names[-1]})


def _chips(language: str, singular: str, plural: str, amount: object, **params: Any) -> str:
    count = amount if isinstance(amount, int) else 0
    return say_plural(language, singular, plural, count, params)


def _description(language: str, text: object) -> str:
    if language == "en" or not isinstance(text, str):
        return str(text)
    return hands.translated(language).get(text, text)


def _revealed(language: str, data: Data) -> str:
    choices = data.get("choices") or {}
    ins = [seat_name(language, seat) for seat, choice in choices.items() if choice == "in"]
    if not ins:
        return say(language, "Nobody went in")
    return say(language, "In: {names}", {"names": names_list(language, ins)})


def _wild(language: str, data: Data) -> str:
    rank = data.get("rank")
    if language == "en":
        # the page's words: a face card's name, a number's figure ("7s are wild")
        words = {11: "jacks", 12: "queens", 13: "kings", 14: "aces"}
        ranks = words.get(rank, f"{rank}s") if isinstance(rank, int) else f"{rank}s"
    elif isinstance(rank, int) and rank in hands.NAMED:
        ranks = hands.rank_name(language, hands.NAMED, rank)
    else:
        ranks = str(rank)
    params = {"card": card_label(data.get("card")), "ranks": ranks}
    return say(language, "Wild card: {card} ({ranks} are wild)", params)


def _split(language: str, data: Data) -> str:
    seats = [seat_name(language, share.get("seat")) for share in data.get("shares") or []]
    return say(language, "{names} split the pot", {"names": names_list(language, seats)})


def _drew(language: str, data: Data, who: str) -> str:
    if data.get("card"):
        params = {"who": who, "card": card_label(data["card"])}
        return say(language, "{who} took {card} from the pile", params)
    return say(language, "{who} drew from the stock", {"who": who})


Line = Callable[[str, Data, str], str | None]
LINES: dict[str, Line] = {
    "table_created": lambda lang, d, who: say(lang, "The table opened"),
    "seated": lambda lang, d, who: _chips(
        lang,
        "{name} sat down with {n} chip",
        "{name} sat down with {n} chips",
        d.get("stack"),
        name=d.get("name"),
    ),
    "leaving": lambda lang, d, who: say(lang, "{who} leaves after this deal", {"who": who}),
    "away": lambda lang, d, who: say(lang, "{who} is away: not dealt in until back", {"who": who}),
    "back": lambda lang, d, who: say(lang, "{who} is back", {"who": who}),
    "left": lambda lang, d, who: say(lang, "{who} left the table", {"who": who}),
    "cashed_out": lambda lang, d, who: _chips(
        lang, "{who} cashed out {n} chip", "{who} cashed out {n} chips", d.get("amount"), who=who
    ),
    "rebought": lambda lang, d, who: _chips(
        lang, "{who} bought {n} chip more", "{who} bought {n} chips more", d.get("amount"), who=who
    ),
    "game_started": lambda lang, d, who: say(
        lang, "Game {number} starts", {"number": d.get("game_number")}
    ),
    "game_ended": lambda lang, d, who: say(
        lang, "Game {number} is over", {"number": d.get("game_number")}
    ),
    "deal_started": lambda lang, d, who: say(
        lang,
        "Deal {number}: {dealer} deals",
        {"number": d.get("hand_number"), "dealer": seat_name(lang, d.get("dealer"))},
    ),
    "ante": lambda lang, d, who: (
        _chips(lang, "{who} antes {n} chip", "{who} antes {n} chips", d.get("amount"), who=who)
        if d.get("amount")
        else None
    ),
    "ante_skipped": lambda lang, d, who: say(lang, "{who} skips the ante", {"who": who}),
    "declared": lambda lang, d, who: say(lang, "{who} has decided", {"who": who}),
    "declarations_revealed": lambda lang, d, who: _revealed(lang, d),
    "showdown": lambda lang, d, who: say(lang, "Showdown"),
    "pot_won": lambda lang, d, who: _chips(
        lang, "{who} wins {n} chip", "{who} wins {n} chips", d.get("amount"), who=who
    ),
    "pot_split": lambda lang, d, who: _split(lang, d),
    "paid": lambda lang, d, who: _chips(
        lang, "{who} pays {n} chip", "{who} pays {n} chips", d.get("amount"), who=who
    ),
    "wimp_paid": lambda lang, d, who: _chips(
        lang,
        "{who} had the best hand and pays {n} chip (wimp)",
        "{who} had the best hand and pays {n} chips (wimp)",
        d.get("amount"),
        who=who,
    ),
    "timeout": lambda lang, d, who: say(lang, "{who} ran out of time", {"who": who}),
    "turn_held": lambda lang, d, who: say(
        lang, "{who}'s call waits for the hand evaluator: the turn is held open", {"who": who}
    ),
    "wild_card": lambda lang, d, who: _wild(lang, d),
    "drew": lambda lang, d, who: _drew(lang, d, who),
    "discarded": lambda lang, d, who: say(
        lang, "{who} discarded {card}", {"who": who, "card": card_label(d.get("card"))}
    ),
    "called": lambda lang, d, who: say(
        lang,
        "{who} calls with {hand}",
        {"who": who, "hand": _description(lang, d.get("description"))},
    ),
    "laid_down": lambda lang, d, who: say(
        lang,
        "{who} lays down {hand}",
        {"who": who, "hand": _description(lang, d.get("description"))},
    ),
    "reshuffled": lambda lang, d, who: say(lang, "The discards were shuffled into a new stock"),
    "reality_check": lambda lang, d, who: say(
        lang,
        "Reality check: {minutes} minutes played this session; {net} chips won or lost at"
        " this table",
        {"minutes": int(float(d.get("played_seconds") or 0) // 60), "net": d.get("net", 0)},
    ),
    "session_limit": lambda lang, d, who: say(
        lang, "{who} reached the session time limit and leaves after this deal", {"who": who}
    ),
    "deal_void": lambda lang, d, who: say(lang, "No call: the deal is void"),
    "pot_carried": lambda lang, d, who: _chips(
        lang, "The pot of {n} chip carries over", "The pot of {n} chips carries over", d.get("pot")
    ),
}


def event_line(language: str, item: Mapping[str, Any]) -> str | None:
    """The line of an event item ({"id", "type", "data", ...}) in `language`."""
    line = LINES.get(str(item.get("type")))
    if line is None:
        return None
    data = item.get("data")
    data = data if isinstance(data, Mapping) else {}
    return line(language, data, seat_name(language, data.get("seat")))
