"""What the terminal client keeps between runs, readable and writable by its owner alone.

``config.json`` in the user's configuration directory (platformdirs' rule: on Linux
``$XDG_CONFIG_HOME/cardroom``, by default ``~/.config/cardroom``) holds the default
gateway, the language asked for and, for each gateway, the player's key, id and name.
The directory is made 0700 and the file 0600: a key acts for its player everywhere, so
it is shown only when the player signs up or asks (``cardroom key``), and never
written anywhere another user may read it. Files are replaced whole (a temporary file,
then a rename), so an interrupted write never leaves half a key.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

APPLICATION = "cardroom"
DEFAULT_GATEWAY = "http://127.0.0.1:8000"
# the environment's word over the configuration's; a key only from here or the file,
# never from a flag, which other users could read in the process list
GATEWAY_VARIABLE = "CARDROOM_GATEWAY"
KEY_VARIABLE = "CARDROOM_KEY"
LANGUAGE_VARIABLE = "CARDROOM_LANG"
PRIVATE_DIRECTORY = 0o700
PRIVATE_FILE = 0o600


def config_directory() -> Path:
    """Where `config.json` lives."""
    return Path(platformdirs.user_config_dir(APPLICATION, appauthor=False))


def state_directory() -> Path:
    """Where what this terminal saw of past deals is kept (`seen.SeenDeals`)."""
    return Path(platformdirs.user_state_dir(APPLICATION, appauthor=False))


def write_private(path: Path, text: str) -> None:
    """Replace `path` with `text`, the file 0600 in a directory 0700."""
    directory = path.parent
    directory.mkdir(mode=PRIVATE_DIRECTORY, parents=True, exist_ok=True)
    # a directory made earlier, by something else, may let others in
    os.chmod(directory, PRIVATE_DIRECTORY)
    temporary = directory / f".{path.name}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def read_private(path: Path) -> str | None:
    """The text of `path`, made owner-only if it was not; None if there is no file."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    if stat.S_IMODE(mode) & ~PRIVATE_FILE:
        os.chmod(path, PRIVATE_FILE)
    return path.read_text(encoding="utf-8")


def normal_gateway(url: str) -> str:
    """The gateway's URL as the configuration files it: no trailing slash."""
    return url.strip().rstrip("/")


def locale_language(environment: Mapping[str, str]) -> str | None:
    """The language of the user's locale as a language tag ("hu_HU.UTF-8" -> "hu-HU")."""
    # GNU gettext's order: LANGUAGE (a list) first, then the locale's own variables
    candidates = [
        environment.get("LANGUAGE", "").split(":")[0],
        environment.get("LC_ALL", ""),
        environment.get("LC_MESSAGES", ""),
        environment.get("LANG", ""),
    ]
    for value in candidates:
        tag = value.split(".")[0].split("@")[0]
        if tag in ("C", "POSIX"):
            return None
        if tag:
            return tag.replace("_", "-")
    return None


@dataclass(frozen=True)
class Account:
    """A player's key at one gateway, with who it is."""

    key: str
    player_id: str
    name: str


class Config:
    """The configuration file: read when made, written by `save`."""

    def __init__(self, path: Path | None = None) -> None:
        """Read `path` (by default `config.json` in the configuration directory)."""
        self.path = path or config_directory() / "config.json"
        text = read_private(self.path)
        self.data: dict[str, Any] = json.loads(text) if text else {}

    @property
    def gateway(self) -> str | None:
        """The default gateway, if one was chosen."""
        value = self.data.get("gateway")
        return None if value is None else str(value)

    @gateway.setter
    def gateway(self, url: str) -> None:
        self.data["gateway"] = normal_gateway(url)

    @property
    def language(self) -> str | None:
        """The language chosen for this client, if one was."""
        value = self.data.get("language")
        return None if value is None else str(value)

    @language.setter
    def language(self, tag: str | None) -> None:
        if tag is None:
            self.data.pop("language", None)
        else:
            self.data["language"] = tag

    def account(self, gateway: str) -> Account | None:
        """The key kept for `gateway`, if any."""
        found = self.data.get("accounts", {}).get(normal_gateway(gateway))
        if found is None:
            return None
        return Account(str(found["key"]), str(found["player_id"]), str(found["name"]))

    def remember(self, gateway: str, account: Account) -> None:
        """Keep `account` as the player at `gateway` (written by `save`)."""
        accounts = self.data.setdefault("accounts", {})
        accounts[normal_gateway(gateway)] = {
            "key": account.key,
            "player_id": account.player_id,
            "name": account.name,
        }

    def forget(self, gateway: str) -> bool:
        """Drop the key kept for `gateway`; False if there was none."""
        return self.data.get("accounts", {}).pop(normal_gateway(gateway), None) is not None

    def save(self) -> None:
        """Write the file, owner-only."""
        write_private(self.path, json.dumps(self.data, indent=2, sort_keys=True) + "\n")
