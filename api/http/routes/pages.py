"""HTTP <-> the table page for people: the lobby at /, a table at /tables/<id>, their assets.

The pages are static files (``api/web``) that play through the public HTTP API like any
other client; nothing here reads a table. The one thing a page is told is how players sign
up here (``PLAYERS_MODE``): its ``<meta name="cardroom-players-mode">`` is filled in when it
is served. Every response carries a Content-Security-Policy that lets the page load and
fetch only from this gateway, with no inline script or style. The pages' words in each
language come as JSON from their gettext catalogue (``/web/i18n/<lang>.json``).
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint, Response, current_app, request, send_from_directory
from werkzeug.wrappers import Response as WerkzeugResponse

from api.errors import problem
from api.i18n import LANGUAGES
from api.i18n.page import page_catalog
from api.jsonio import dumps_bytes
from api.settings import Settings

WEB_DIR = Path(__file__).resolve().parents[2] / "web"
ASSET_MAX_AGE_SECONDS = 300
ASSET_SUFFIXES = frozenset({".js", ".css", ".svg"})
# What a page's HTML holds where the players mode goes.
PLAYERS_MODE_MARK = 'name="cardroom-players-mode" content="open"'

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "manifest-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)

pages_blueprint = Blueprint("pages", __name__)


def _harden(response: WerkzeugResponse) -> WerkzeugResponse:
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Frame-Options"] = "DENY"
    return response


def _page(filename: str) -> WerkzeugResponse:
    settings: Settings = current_app.extensions["cardroom.settings"]
    html = (WEB_DIR / filename).read_text(encoding="utf-8")
    mode = f'name="cardroom-players-mode" content="{settings.players_mode}"'
    response = Response(html.replace(PLAYERS_MODE_MARK, mode), mimetype="text/html")
    # A page names its assets, which change with a release: always revalidate it.
    response.headers["Cache-Control"] = "no-cache"
    response.add_etag()
    return _harden(response.make_conditional(request))


@pages_blueprint.get("/")
def lobby_page() -> WerkzeugResponse:
    """Serve the lobby: the list of tables and the form that creates one."""
    return _page("index.html")


@pages_blueprint.get("/tables/<table_id>")
def table_page(table_id: str) -> WerkzeugResponse:
    """Serve the page of one table; the page itself asks the API whether the table exists."""
    return _page("table.html")


@pages_blueprint.get("/web/<filename>")
def asset(filename: str) -> WerkzeugResponse:
    """Serve one of the pages' scripts or style sheets."""
    if Path(filename).suffix not in ASSET_SUFFIXES or not (WEB_DIR / filename).is_file():
        raise problem("route_not_found", "No page asset named {filename!r}.", filename=filename)
    return _harden(send_from_directory(WEB_DIR, filename, max_age=ASSET_MAX_AGE_SECONDS))


@pages_blueprint.get("/web/i18n/<language>.json")
def page_words(language: str) -> WerkzeugResponse:
    """Serve the pages' words in one language: its page catalogue as JSON."""
    if language not in LANGUAGES:
        raise problem("route_not_found", "The pages speak no such language.")
    response = Response(dumps_bytes(page_catalog(language)), mimetype="application/json")
    # The catalogue changes with a release, as the scripts do.
    response.headers["Cache-Control"] = f"public, max-age={ASSET_MAX_AGE_SECONDS}"
    response.add_etag()
    return _harden(response.make_conditional(request))
