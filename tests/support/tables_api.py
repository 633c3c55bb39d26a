"""The table calls the integration tests make, over any transport.

`TableCalls` builds create, sit, act and table on one method, `json_call`, which the
in-process gateway (Flask's test client, tests/integration/conftest.py) and the HTTP one
(tests/support/processes.py) each implement; both answer with a response that has
`status_code`, `get_json()` and `get_data(as_text=True)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Account:
    """A player's account: id, display name and key."""

    id: str
    name: str
    key: str

    @property
    def auth(self) -> dict[str, str]:
        """The Authorization header of this player."""
        return {"Authorization": f"Bearer {self.key}"}


@dataclass
class Player:
    """A seated player: name, seat number and seat token, and the account that sat."""

    name: str
    seat: int
    token: str
    account: Account | None = None

    @property
    def auth(self) -> dict[str, str]:
        """The Authorization header of this seat."""
        return {"Authorization": f"Bearer {self.token}"}


class TableCalls:
    """Shortcuts for the table API on top of `json_call`."""

    def json_call(self, method: str, path: str, player: Player | Account | None, body: Any) -> Any:
        """One request, with `body` as JSON unless it is None; the response."""
        raise NotImplementedError

    def sign_up(self, name: str = "host") -> Account:
        """A new player (the gateway in open mode), named `name` if that is a fit name."""
        response = self.json_call("POST", "/v1/players", None, {"name": name})
        if response.status_code == 422:
            response = self.json_call("POST", "/v1/players", None, {"name": "player"})
        assert response.status_code == 201, response.get_data(as_text=True)
        created = response.get_json()
        return Account(created["id"], created["name"], created["key"])

    def create(self, owner: Account | None = None, **options: Any) -> str:
        """Create a table (Guts unless `game` says otherwise) for `owner` (a new player by
        default); its id."""
        owner = owner or self.sign_up()
        response = self.json_call("POST", "/v1/tables", owner, {"game": "guts", **options})
        assert response.status_code == 201, response.get_data(as_text=True)
        return str(response.get_json()["table"]["id"])

    def sit(
        self, table_id: str, name: str, buy_in: int = 100, account: Account | None = None
    ) -> Player:
        """Take a seat, as `account` (a new player of this name by default)."""
        account = account or self.sign_up(name)
        body = {"name": name, "buy_in": buy_in}
        response = self.json_call("POST", f"/v1/tables/{table_id}/seats", account, body)
        assert response.status_code == 201, response.get_data(as_text=True)
        seated = response.get_json()
        return Player(name, seated["seat"], seated["token"], account)

    def act(self, table_id: str, player: Player | Account, **action: Any) -> Any:
        """A move; the response."""
        return self.json_call("POST", f"/v1/tables/{table_id}/actions", player, action)

    def table(self, table_id: str, player: Player | Account | None = None) -> dict[str, Any]:
        """The table as `player` (or a spectator) sees it."""
        response = self.json_call("GET", f"/v1/tables/{table_id}", player, None)
        assert response.status_code == 200, response.get_data(as_text=True)
        return dict(response.get_json())
