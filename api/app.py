"""The cardroom gateway: `create_app(settings, services)` serves what `api.bootstrap` built."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the pure game modules under api.games must import without Flask or Redis
    from flask import Flask

    from api.adapters.store import TableStore
    from api.bootstrap import Services
    from api.http.pipeline import Step
    from api.service.credentials import Credentials
    from api.settings import Settings


def create_app(settings: Settings | None = None, services: Services | None = None) -> Flask:
    """The Flask application serving `services` (by default, what `api.bootstrap.bootstrap`
    builds from `settings`); with `settings.clock`, a clock thread runs in this process."""
    from flask import Flask

    from api.bootstrap import bootstrap
    from api.http import flask_json
    from api.http.moves import MovesEndpoint
    from api.http.pipeline import install_pipeline
    from api.http.routes.tables import NumberConverter
    from api.settings import Settings

    settings = settings or Settings.from_env()
    services = services or bootstrap(settings)
    players = services.players
    if players is None:
        raise ValueError("the gateway serves players: bootstrap its services with players")
    app = Flask(__name__)
    app.url_map.converters["number"] = NumberConverter
    flask_json.install(app)
    app.extensions["cardroom.settings"] = settings
    app.extensions["cardroom.services"] = services
    app.extensions["cardroom.service"] = services.tables
    app.extensions["cardroom.players"] = players
    _register_routes(app)
    steps = _steps(settings, services.store, players.credentials)
    # the moves, the requests the gateway answers most, are answered below Flask
    install_pipeline(app, steps, [MovesEndpoint(services.tables)])
    if settings.clock:
        from api.runtime.clock import Clock

        clock = Clock(services.deadlines, settings.clock_interval)
        clock.start()
        app.extensions["cardroom.clock"] = clock
    return app


def _register_routes(app: Flask) -> None:
    """Flask's routes: every request but a move's."""
    from api.http.docs import docs_blueprint
    from api.http.routes.bots import bots_blueprint
    from api.http.routes.limits import limits_blueprint
    from api.http.routes.operator import operator_blueprint
    from api.http.routes.pages import pages_blueprint
    from api.http.routes.players import players_blueprint
    from api.http.routes.recall import recall_blueprint
    from api.http.routes.system import system_blueprint
    from api.http.routes.tables import tables_blueprint

    app.register_blueprint(system_blueprint)
    app.register_blueprint(tables_blueprint)
    app.register_blueprint(players_blueprint)
    app.register_blueprint(operator_blueprint)
    app.register_blueprint(bots_blueprint)
    app.register_blueprint(limits_blueprint)
    app.register_blueprint(recall_blueprint)
    app.register_blueprint(docs_blueprint)
    app.register_blueprint(pages_blueprint)


def _steps(settings: Settings, store: TableStore, credentials: Credentials) -> list[Step]:
    """The steps every request passes, moves and Flask's routes alike, in this order."""
    from api.http.auth import AuthStep
    from api.http.cors import CorsStep
    from api.http.language import LanguageStep
    from api.http.limits import request_limits
    from api.http.steps import BodyStep, RateLimitStep

    # CORS first: a preflight needs no credential, and a refusal is readable by an allowed page;
    # then who sent the request: the rate limits count a player, not a key
    # the language before the others: a refusal of theirs is said in it too
    steps: list[Step] = [
        CorsStep(settings.cors_origins),
        LanguageStep(),
        AuthStep(credentials),
    ]
    limits = request_limits(settings, store)
    if limits is not None:
        steps.append(RateLimitStep(limits))
    steps.append(BodyStep(settings.body_read_timeout))
    if settings.compression_min_bytes:
        from api.http.compression import CompressionStep

        steps.append(
            CompressionStep(
                settings.compression_min_bytes,
                settings.compression_brotli_quality,
                settings.compression_gzip_level,
            )
        )
    return steps
