"""Players: accounts with a display name and keys, their seats, quotas and stream tickets.

Two modes (`PLAYERS_MODE`): `open`, where anyone may create a player, and `operator`,
where players are created with an operator key, or come from the operator's identity
provider (a JWT's `sub`, created on first sight). A player's keys are shown once, at
creation, and stored as digests (`api.adapters.players`).
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from api.adapters.players import (
    PlayerRecord,
    PlayerStore,
    Ticket,
    address_streams_key,
    digest,
    waiting_key,
)
from api.adapters.store import TableStore
from api.errors import from_rule_error, problem
from api.service.credentials import Credentials, Principal, new_player_key
from api.service.names import display_name
from api.service.visibility import Viewer
from api.service.wallets import WalletService

log = logging.getLogger("cardroom.players")

# a display name: as a seat's (`api.service.names.display_name`)
MAX_PLAYER_NAME = 32
MAX_KEYS = 10
TICKET_SECONDS = 30
KNOWN_PLAYERS = 100_000


@dataclass(frozen=True)
class Quotas:
    """What one player may hold at once (docs/players.md); 0 turns a quota off."""

    open_tables: int = 5
    # waiting requests (long polls and event streams) one credential holds at once
    waiting: int = 20
    # waiting requests one client address holds at once, players and spectators alike
    waiting_per_address: int = 100


def quota_exceeded(quota: str, limit: int, detail: str) -> Exception:
    """Return 429 quota_exceeded naming the quota and its limit (`detail` a template of `limit`)."""
    return problem(
        "quota_exceeded",
        detail,
        extra={"quota": quota, "limit": limit},
        headers={"Retry-After": "60"},
        limit=limit,
    )


def new_player_id() -> str:
    """A new player's id."""
    return "p_" + secrets.token_hex(12)


class PlayerService:
    """Create players and their keys; a player's seats, quotas and stream tickets."""

    def __init__(
        self,
        store: PlayerStore,
        tables: TableStore,
        credentials: Credentials,
        mode: str = "open",
        quotas: Quotas | None = None,
        wallets: WalletService | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Players in `store`; `tables` is read to prune what a player holds; a new
        player's wallet is opened in `wallets`."""
        if mode not in ("open", "operator"):
            raise ValueError(f"PLAYERS_MODE={mode!r} is neither 'open' nor 'operator'")
        self.store = store
        self.tables = tables
        self.credentials = credentials
        self.mode = mode
        self.quotas = quotas or Quotas()
        self.wallets = wallets
        self.clock = clock

    # -- players and keys ----------------------------------------------------------

    def create(
        self, principal: Principal, name: object, admit: Callable[[], None] | None = None
    ) -> dict[str, object]:
        """A new player and their first key (shown only in this answer); `admit` counts
        the sign-up against its allowance (raising past it) once the request is found fit."""
        if self.mode == "operator":
            principal.require_operator()
            origin = "operator"
        else:
            origin = "open"
        shown = _player_name(name)
        if admit is not None:
            admit()
        now = self.clock()
        player = new_player_id()
        while not self.store.create(
            player, {"name": shown, "created_at": repr(now), "origin": origin}
        ):
            player = new_player_id()
        key_id, key = self._new_key(player, now)
        if self.wallets is not None:
            self.wallets.open(player)
        return {"id": player, "name": shown, "created_at": now, "key": key, "key_id": key_id}

    def _new_key(self, player: str, now: float) -> tuple[str, str]:
        key = new_player_key()
        key_id = "k_" + secrets.token_hex(6)
        self.store.add_key(player, key_id, digest(key), now)
        return key_id, key

    def record(self, player: str) -> PlayerRecord:
        """The player's record; 401 if the player is gone (a key outlived its player)."""
        found = self.store.record(player)
        if found is None:
            raise problem("player_not_found", "There is no such player.")
        return found

    def me(self, principal: Principal) -> dict[str, object]:
        """The player, with their keys (ids and creation times, never the keys)."""
        player = principal.require_player()
        found = self.record(player)
        keys = self.store.keys(player)
        wallet = {"balance": 0, "pending": 0}
        if self.wallets is not None:
            self.wallets.top_up(player)
            wallet = self.wallets.balance(player)
        return {
            "id": player,
            "name": found["name"],
            "created_at": float(found["created_at"]),
            "origin": found.get("origin", "open"),
            **wallet,
            "key_id": principal.key_id,
            "keys": [
                {"id": key_id, "created_at": entry["created_at"]}
                for key_id, entry in sorted(
                    keys.items(), key=lambda item: (item[1]["created_at"], item[0])
                )
            ],
        }

    def name_of(self, player: str) -> str:
        """The player's display name."""
        return self.record(player)["name"]

    def add_key(self, principal: Principal) -> dict[str, object]:
        """A new key for the player (rotation: add one, then revoke the old)."""
        player = principal.require_player()
        self.record(player)
        if len(self.store.keys(player)) >= MAX_KEYS:
            raise problem(
                "too_many_keys",
                "A player holds at most {max_keys} keys; revoke one first.",
                max_keys=MAX_KEYS,
            )
        now = self.clock()
        key_id, key = self._new_key(player, now)
        return {"key_id": key_id, "key": key, "created_at": now}

    def revoke_key(self, principal: Principal, key_id: str) -> None:
        """Revoke one of the player's keys (the one in use too); 404 for an unknown one."""
        player = principal.require_player()
        if not self.store.revoke_key(player, key_id):
            raise problem(
                "key_not_found", "The player has no key {key_id!r}.", field="key_id", key_id=key_id
            )
        self.credentials.forget_player(player)

    def note_seat(self, player: str, table_id: str) -> bool:
        """List the table among the player's seats (before the seat is committed: the
        list is pruned of tables where the player holds none when it is read); False if
        it was listed already."""
        return self.store.note_seat(player, table_id)

    def unnote_seat(self, player: str, table_id: str) -> None:
        """Unlist a table `note_seat` listed for a seat that was refused."""
        self.store.forget_seats(player, [table_id])

    # -- quotas ----------------------------------------------------------------------

    def reserve_table(self, player: str, table_id: str) -> None:
        """Count a new table against the player's open tables; 429 quota_exceeded if full."""
        limit = self.quotas.open_tables
        if limit <= 0:
            return
        if self.store.reserve_table(player, table_id, limit):
            return
        # the quota counts open tables: forget the ones closed since they were counted
        held = self.store.created_tables(player)
        records = self.tables.load_many(held)
        closed = [
            t for t, record in zip(held, records, strict=True) if record is None or record.closed
        ]
        self.store.release_tables(player, closed)
        if closed and self.store.reserve_table(player, table_id, limit):
            return
        raise quota_exceeded(
            "open_tables",
            limit,
            "A player may have {limit} open tables at once; close or leave one to idleness first.",
        )

    def release_table(self, player: str, table_id: str) -> None:
        """A table that was counted but not created."""
        self.store.release_tables(player, [table_id])

    def lease_waiting(self, address: str, holder: str | None, seconds: float) -> Callable[[], None]:
        """Hold one of the waiting requests (a long poll or an event stream) of the client
        `address` and one of the credential `holder`'s, for at most `seconds`; 429
        quota_exceeded when either holds all it may. What gives both back."""
        held: list[tuple[str, str]] = []
        quotas = self.quotas
        if not self._lease(address_streams_key(address), quotas.waiting_per_address, seconds, held):
            raise quota_exceeded(
                "waiting_per_address",
                quotas.waiting_per_address,
                "One address may hold {limit} waiting requests (long polls and event streams)"
                " at once.",
            )
        if holder is not None and not self._lease(
            waiting_key(holder), quotas.waiting, seconds, held
        ):
            self._end_leases(held)
            raise quota_exceeded(
                "waiting",
                quotas.waiting,
                "One credential may hold {limit} waiting requests (long polls and event"
                " streams) at once.",
            )
        return lambda: self._end_leases(held)

    def _lease(self, key: str, limit: int, seconds: float, held: list[tuple[str, str]]) -> bool:
        """Hold one of `limit` places counted in `key` (noted in `held`); False when all are."""
        if limit <= 0:
            return True
        lease = secrets.token_hex(8)
        if not self.store.lease(key, lease, limit, seconds):
            return False
        held.append((key, lease))
        return True

    def _end_leases(self, held: list[tuple[str, str]]) -> None:
        for key, lease in held:
            try:
                self.store.end_lease(key, lease)
            except Exception:  # the lease ends by itself
                log.warning("waiting request's lease not given back", exc_info=True)

    # -- stream tickets ----------------------------------------------------------------

    def issue_ticket(
        self, principal: Principal, table_id: str, viewer: Viewer
    ) -> dict[str, object]:
        """A single-use ticket that opens one event stream of the table as `principal`
        (`viewer` at the table). It holds no credential: a player's id, or a seat."""
        principal.require_actor()
        ticket = "crt_" + secrets.token_urlsafe(32)
        value: Ticket
        if principal.kind == "player":
            assert principal.player is not None  # a player's principal names the player
            value = {"kind": "player", "player": principal.player}
        else:
            # a seat token's viewer is its seat (the route refuses one the table lost)
            assert viewer.seat is not None
            assert viewer.player is not None
            value = {"kind": "seat", "seat": [viewer.seat, viewer.player]}
        self.store.put_ticket(table_id, digest(ticket), value, TICKET_SECONDS)
        expires = self.clock() + TICKET_SECONDS
        return {
            "ticket": ticket,
            "expires_at": expires,
            "stream": f"/v1/tables/{table_id}/events/stream",
        }

    def redeem_ticket(self, table_id: str, ticket: str) -> Principal:
        """The principal a ticket was issued to; 401 invalid_ticket if it does not hold."""
        value = self.store.take_ticket(table_id, digest(ticket))
        if value is None:
            raise problem(
                "invalid_ticket",
                "The stream ticket is unknown, used, expired, or for another table; ask for"
                " a new one.",
                field="ticket",
            )
        if value["kind"] == "player":
            return Principal("player", player=value["player"])
        seat, player = value["seat"]
        return Principal("seat", seat=(int(seat), int(player)))


class JwtPlayers:
    """Players an identity provider's tokens name, created with their wallet on first sight
    (`api.service.credentials` calls `ensure` for each token it verifies)."""

    def __init__(
        self,
        store: PlayerStore,
        wallets: WalletService | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Players in `store`, their wallets opened in `wallets`."""
        self.store = store
        self.wallets = wallets
        self.clock = clock
        # identity-provider players this process knows exist (bounded, oldest out)
        self._known: OrderedDict[str, None] = OrderedDict()

    def ensure(self, player: str, claims: Mapping[str, object]) -> None:
        """Make the player an identity provider's token names exist (first sight)."""
        if player in self._known:
            return
        raw_name = claims.get("name") or claims.get("preferred_username")
        shown = display_name(raw_name, MAX_PLAYER_NAME) if isinstance(raw_name, str) else None
        shown = shown or "player " + player[2:8]
        created = self.store.create(
            player,
            {
                "name": shown,
                "created_at": repr(self.clock()),
                "origin": "jwt",
                "subject": digest(f"{claims.get('iss')}\0{claims['sub']}")[:16],
            },
        )
        if created and self.wallets is not None:
            self.wallets.open(player)
        self._known[player] = None
        while len(self._known) > KNOWN_PLAYERS:
            self._known.popitem(last=False)


def _player_name(name: object) -> str:
    shown = display_name(name, MAX_PLAYER_NAME) if isinstance(name, str) else None
    if shown is None:
        raise from_rule_error(
            "invalid_name",
            "A player's name is 1 to {max_player_name} characters, not counting spaces at"
            " either end, with no control or invisible formatting character.",
            "name",
            max_player_name=MAX_PLAYER_NAME,
        )
    return shown
