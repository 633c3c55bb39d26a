"""CORS_ORIGINS (`api.settings`): exact origins as a browser writes them, checked at start."""

from __future__ import annotations

import pytest

from api.settings import Settings


@pytest.mark.parametrize(
    ("raw", "origins"),
    [
        ("", ()),
        ("http://127.0.0.1:8001", ("http://127.0.0.1:8001",)),
        (
            "https://App.Example:443, http://[::1]:8080 http://localhost:80",
            ("https://app.example", "http://[::1]:8080", "http://localhost"),
        ),
        ("*", ("*",)),
    ],
)
def test_origins_are_read_as_a_browser_writes_them(raw: str, origins: tuple[str, ...]) -> None:
    assert Settings.from_env({"CORS_ORIGINS": raw}).cors_origins == origins


@pytest.mark.parametrize(
    "raw",
    [
        "app.example",
        "https://app.example/",
        "https://app.example/path",
        "ftp://app.example",
        "https://app.example:port",
        "https://app.example:70000",
        "https://user@app.example",
        "https://",
        "*, https://app.example",
    ],
)
def test_a_malformed_origin_stops_the_start_naming_the_variable(raw: str) -> None:
    with pytest.raises(ValueError, match="CORS_ORIGINS"):
        Settings.from_env({"CORS_ORIGINS": raw})
