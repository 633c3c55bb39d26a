"""`make loadtest`: Guts and Paiute players against a running gateway, with locust.

Each simulated user opens a table of its own, takes its seats and plays every seat's
moves, so whatever the table does next is known to it: a move it sends is either
legal or refused with a code it expects. Every seat is a player of its own, created
with `POST /v1/players`; the first one's key creates the table, each player's key takes
its seat, and the seat's token plays it. Besides the moves, users read their table
(as a seat, as a player and as a spectator), long-poll its events, browse the lobby and
now and then send a request that is refused (a second start, a taken name, a full
table, a second seat for one player, a table created with a seat token, a second
declaration, a discard before drawing, a call without a combination, a bad token).
Half of the Guts declarations ask for no table in the answer (`Prefer:
return=minimal`, answered 204). An expected refusal counts as a success; anything else
is a failure.

    locust -f bench/gateway/locustfile.py --headless --host http://127.0.0.1:8000 -u 20 -r 5 -t 60s

Run the gateway with RATE_LIMIT_PER_ADDRESS=0 and PLAYERS_PER_ADDRESS=0 (or high): every
user comes from one address, and the limits' 429s would be counted as failures.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from locust import HttpUser, between, task

# long turns (a slow user is never timed out), a short pause between deals
GUTS_OPTIONS: dict[str, Any] = {
    "game": "guts",
    "ante": 1,
    "cap": 20,
    "turn_seconds": 120,
    "deal_pause_seconds": 0.2,
    "max_players": 5,
    "min_buy_in": 20,
    "max_buy_in": 100_000,
}
PAIUTE_OPTIONS: dict[str, Any] = {
    "game": "paiute",
    "ante": 1,
    "turn_seconds": 120,
    "deal_pause_seconds": 0.2,
    "max_players": 4,
    "min_buy_in": 20,
    "max_buy_in": 100_000,
}
# within a new player's play-money grant (10,000 in open mode)
BUY_IN = 5_000


class TableUser(HttpUser):
    """A user who runs one table and plays all of its seats."""

    abstract = True
    wait_time = between(0.01, 0.1)
    options: ClassVar[dict[str, Any]] = {}
    players = 3

    def on_start(self) -> None:
        """Sign up the first player, open a table, take the seats, start the first deal."""
        self.rng = random.Random()
        self.tokens: dict[int, str] = {}
        self.keys: dict[int, str] = {}
        self.names: list[str] = []
        self.cursor = 0
        self.table_id = ""
        # a player who never sits: their joins are the refused ones (taken name, full table)
        self.outsider = self.sign_up("outsider")
        host = self.sign_up("u0")
        if host is None or self.outsider is None:
            self.stop()
            return
        with self.client.post(
            "/v1/tables",
            json=self.options,
            headers={"Authorization": f"Bearer {host}"},
            name="create table",
            catch_response=True,
        ) as response:
            if response.status_code != 201:
                response.failure(f"create table: {response.status_code} {response.text[:200]}")
                self.stop()
                return
            self.table_id = response.json()["table"]["id"]
        self.sit(host)
        for _ in range(self.players - 1):
            self.sit()
        self.post("start", {"action": "start"}, self.token(min(self.tokens)), {200})

    # -------------------------------------------------------------- requests

    @property
    def path(self) -> str:
        """The table's URL path."""
        return f"/v1/tables/{self.table_id}"

    def game(self) -> str:
        """ "guts" or "paiute", for the names of requests."""
        return str(self.options["game"])

    def token(self, seat: int) -> str:
        """The Authorization header value of a seat (its seat token)."""
        return f"Bearer {self.tokens[seat]}"

    def key(self, seat: int) -> str:
        """The Authorization header value of the player at a seat (their key)."""
        return f"Bearer {self.keys[seat]}"

    def post(
        self,
        what: str,
        body: dict[str, Any],
        auth: str | None,
        ok: set[int],
        refusals: tuple[str, ...] = (),
        path: str | None = None,
        minimal: bool = False,
    ) -> Any:
        """A POST answered with a status in `ok` or refused with one of `refusals`;
        with `minimal`, it asks for no table in the answer (Prefer: return=minimal)."""
        headers = {"Authorization": auth} if auth else {}
        if minimal:
            headers["Prefer"] = "return=minimal"
        with self.client.post(
            path or f"{self.path}/actions",
            json=body,
            headers=headers,
            name=f"{self.game()}: {what}",
            catch_response=True,
        ) as response:
            return self._judge(response, ok, refusals)

    def get(self, what: str, path: str, auth: str | None = None) -> Any:
        """A GET that must answer 200; its body (None on failure)."""
        headers = {"Authorization": auth} if auth else {}
        with self.client.get(
            path, headers=headers, name=f"{self.game()}: {what}", catch_response=True
        ) as response:
            return self._judge(response, {200}, ())

    @staticmethod
    def _judge(response: Any, ok: set[int], refusals: tuple[str, ...]) -> Any:
        code = None
        if response.headers.get("Content-Type", "").startswith("application/problem+json"):
            code = response.json().get("code")
        if response.status_code in ok:
            response.success()
            return response.json() if response.content else None
        if code in refusals:
            response.success()
            return None
        response.failure(f"HTTP {response.status_code} {code or response.text[:200]}")
        return None

    def sign_up(self, name: str) -> str | None:
        """A new player (POST /v1/players): their key, or None on failure."""
        body = self.post("sign up", {"name": name}, None, {201}, path="/v1/players")
        return None if body is None else str(body["key"])

    def sit(self, key: str | None = None) -> None:
        """Take the next seat as a new player (or as the player whose key is `key`)."""
        name = f"u{len(self.names)}"
        key = key or self.sign_up(name)
        if key is None:
            return
        body = self.post(
            "sit",
            {"name": name, "buy_in": BUY_IN},
            f"Bearer {key}",
            {201},
            path=f"{self.path}/seats",
        )
        if body is not None:
            seat = int(body["seat"])
            self.tokens[seat] = str(body["token"])
            self.keys[seat] = key
            self.names.append(name)

    # -------------------------------------------------------------- tasks shared

    @task(3)
    def read_as_seat(self) -> None:
        """Read the table as one of its seats."""
        if self.tokens:
            self.get(
                "read table as a seat", self.path, self.token(self.rng.choice(list(self.tokens)))
            )

    @task(1)
    def read_as_player(self) -> None:
        """Read the table as one of its players (their key shows their seat's cards)."""
        if self.keys:
            self.get(
                "read table as a player", self.path, self.key(self.rng.choice(list(self.keys)))
            )

    @task(1)
    def read_as_spectator(self) -> None:
        """Read the table as a spectator."""
        self.get("read table", self.path)

    @task(2)
    def follow_events(self) -> None:
        """Long-poll the table's events for up to half a second."""
        body = self.get("events (long poll)", f"{self.path}/events?after={self.cursor}&wait=0.5")
        if body is not None:
            self.cursor = int(body["next"])

    @task(1)
    def lobby(self) -> None:
        """Browse the lobby."""
        self.get("lobby", "/v1/tables?limit=20")

    @task(1)
    def refused_seat_moves(self) -> None:
        """A request that is refused: a second start, a taken name, a second seat for one
        player, a table created with a seat token, a bad token."""
        choice = self.rng.randrange(5)
        if choice == 0 and self.tokens:
            self.post(
                "start again (refused)",
                {"action": "start"},
                self.token(min(self.tokens)),
                set(),
                ("already_started", "showdown_pending"),
            )
        elif choice == 1 and self.names:
            self.post(
                "sit with a taken name (refused)",
                {"name": self.names[0], "buy_in": BUY_IN},
                f"Bearer {self.outsider}",
                set(),
                ("name_taken",),
                path=f"{self.path}/seats",
            )
        elif choice == 2 and self.keys:
            self.post(
                "sit twice (refused)",
                {"name": f"x{self.rng.randrange(10**6)}", "buy_in": BUY_IN},
                self.key(self.rng.choice(list(self.keys))),
                set(),
                ("already_seated",),
                path=f"{self.path}/seats",
            )
        elif choice == 3 and self.tokens:
            self.post(
                "create a table with a seat token (refused)",
                self.options,
                self.token(self.rng.choice(list(self.tokens))),
                set(),
                ("player_required",),
                path="/v1/tables",
            )
        else:
            self.post(
                "move with a bad token (refused)",
                {"action": "start"},
                "Bearer " + "0" * 64,
                set(),
                ("invalid_token",),
            )

    @task(1)
    def join_or_full(self) -> None:
        """Seat one more player; once the table is full that is refused (table_full)."""
        if len(self.tokens) < int(self.options["max_players"]):
            self.sit()
        else:
            self.post(
                "sit at a full table (refused)",
                {"name": f"x{self.rng.randrange(10**6)}", "buy_in": BUY_IN},
                f"Bearer {self.outsider}",
                set(),
                ("table_full",),
                path=f"{self.path}/seats",
            )


class GutsPlayer(TableUser):
    """Plays a Guts table: simultaneous declarations, in or out at random."""

    options: ClassVar[dict[str, Any]] = GUTS_OPTIONS
    players = 3

    @task(10)
    def declare(self) -> None:
        """Declare for a seat still to declare; sometimes first a second declaration."""
        table = self.get("read table", self.path)
        if table is None or table["phase"] != "declaring" or not table.get("pending"):
            return
        pending = [seat for seat in table["pending"]["seats"] if seat in self.tokens]
        if not pending:
            return
        dealt = [seat for seat in table["deal"]["players"] if seat in self.tokens]
        declared = [seat for seat in dealt if seat not in table["pending"]["seats"]]
        if declared and len(pending) > 1 and self.rng.random() < 0.2:
            # the deal cannot end meanwhile: other seats are still to declare
            self.post(
                "declare twice (refused)",
                {"action": "declare", "choice": "in"},
                self.token(self.rng.choice(declared)),
                set(),
                ("already_declared",),
            )
        seat = self.rng.choice(pending)
        body = {"action": "declare", "choice": self.rng.choice(("in", "out"))}
        if self.rng.random() < 0.5:
            self.post("declare", body, self.token(seat), {200})
        else:  # as a program following the table's events would: no table in the answer
            self.post("declare, return=minimal", body, self.token(seat), {204}, minimal=True)


class PaiutePlayer(TableUser):
    """Plays a Paiute table: draws, discards, and calls when the evaluator finds a combination."""

    options: ClassVar[dict[str, Any]] = PAIUTE_OPTIONS
    players = 2

    @task(10)
    def play_turn(self) -> None:
        """Play the seat whose turn it is: draw, or call/discard; sometimes a refused move."""
        table = self.get("read table", self.path)
        pending = table.get("pending") if table else None
        if table is None or pending is None or not pending["seats"]:
            return
        seat = pending["seats"][0]
        if seat not in self.tokens:
            return
        auth = self.token(seat)
        if pending["action"] == "draw":
            if self.rng.random() < 0.1:
                self.post(
                    "discard before drawing (refused)",
                    {"action": "discard", "card": "Ah"},
                    auth,
                    set(),
                    ("must_draw_first",),
                )
            others = [other for other in self.tokens if other != seat]
            if others and self.rng.random() < 0.1:
                self.post(
                    "draw out of turn (refused)",
                    {"action": "draw", "source": "stock"},
                    self.token(self.rng.choice(others)),
                    set(),
                    ("not_your_turn",),
                )
            source = (
                "discard" if self.rng.random() < 0.3 and table["deal"]["discard_top"] else "stock"
            )
            self.post(f"draw from {source}", {"action": "draw", "source": source}, auth, {200})
            return
        mine = self.get("read table as a seat", self.path, auth)
        if mine is None or mine.get("you") is None or not mine["you"].get("cards"):
            return
        cards = list(mine["you"]["cards"])
        drawn = mine["you"].get("drawn") or {}
        wild = str(table["deal"]["wild_card"])
        ranked = self.post(
            "evaluate own hand",
            {"game": "paiute", "hands": [" ".join(cards)], "wild_rank": _rank(wild)},
            None,
            {200},
            path="/v1/evaluate",
        )
        best = ranked["results"][0] if ranked is not None else {"strength": 0}
        keep = drawn.get("card") if drawn.get("source") == "discard" else None
        # a five-card combination discards the sixth card, unless it was just taken
        spare = best.get("leftover")
        if best["strength"] > 0 and (spare is None or spare != keep):
            shown = [card for card in cards if card != spare]
            body = {"action": "call", "cards": shown, "discard": spare}
            self.post("call", body, auth, {200})
            return
        card = self.rng.choice([card for card in cards if card != keep])
        if self.rng.random() < 0.2:
            shown = [other for other in cards if other != card]
            self.post(
                "call without a combination (refused)",
                {"action": "call", "cards": shown, "discard": card},
                auth,
                set(),
                ("no_combination",),
            )
        self.post("discard", {"action": "discard", "card": card}, auth, {200})


def _rank(card: str) -> int:
    """A card's rank as a number, 2..14 (ace 14)."""
    return "23456789TJQKA".index(card[0].upper()) + 2
