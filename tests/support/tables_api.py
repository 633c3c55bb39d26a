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
class Player:
    """A seated player: name, seat number and token."""

    name: str
    seat: int
    token: str

    @property
    def auth(self) -> dict[str, str]:
        """The Authorization header of this seat."""
        return {"Authorization": f"Bearer {self.token}"}


class TableCalls:
    """Shortcuts for the table API on top of `json_call`."""

    def json_call(self, method: str, path: str, player: Player | None, body: Any) -> Any:
        """One request, with `body` as JSON unless it is None; the response."""
        raise NotImplementedError

    def create(self, **options: Any) -> str:
        """Create a table (Guts unless `game` says otherwise); its id."""
        response = self.json_call("POST", "/v1/tables", None, {"game": "guts", **options})
        assert response.status_code == 201, response.get_data(as_text=True)
        return str(response.get_json()["id"])

    def sit(self, table_id: str, name: str, buy_in: int = 100) -> Player:
        """Take a seat."""
        body = {"name": name, "buy_in": buy_in}
        response = self.json_call("POST", f"/v1/tables/{table_id}/seats", None, body)
        assert response.status_code == 201, response.get_data(as_text=True)
        seated = response.get_json()
        return Player(name, seated["seat"], seated["token"])

    def act(self, table_id: str, player: Player, **action: Any) -> Any:
        """A move; the response."""
        return self.json_call("POST", f"/v1/tables/{table_id}/actions", player, action)

    def table(self, table_id: str, player: Player | None = None) -> dict[str, Any]:
        """The table as `player` (or a spectator) sees it."""
        response = self.json_call("GET", f"/v1/tables/{table_id}", player, None)
        assert response.status_code == 200, response.get_data(as_text=True)
        return dict(response.get_json())
