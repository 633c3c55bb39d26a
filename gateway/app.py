"""The cardroom gateway: `create_app(settings)` is the one place that builds clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the pure game modules under gateway.games must import without Flask or Redis
    from flask import Flask

    from gateway.adapters.store import TableStore
    from gateway.service.players import PlayerService
    from gateway.service.tables import TableService
    from gateway.service.wallets import WalletPolicy
    from gateway.service.webhooks import WebhookPolicy
    from gateway.settings import Settings


def build_service(settings: Settings, players: bool = True) -> TableService:
    """The table service with its Redis and evaluator clients, and (with `players`) its
    players' service; the clock, which authenticates nobody, goes without."""
    from gateway.adapters.batching import batcher_for
    from gateway.adapters.evaluator import EvaluatorClient, EvaluatorTls
    from gateway.adapters.store import WAITING_CONNECTIONS, TableStore, connect
    from gateway.service.tables import TableService
    from gateway.telemetry import REDIS_BATCHES

    tls = None
    if settings.evaluator_tls_ca:
        tls = EvaluatorTls(
            settings.evaluator_tls_ca,
            settings.evaluator_tls_cert,
            settings.evaluator_tls_key,
            settings.evaluator_tls_server_name,
        )
    evaluator = EvaluatorClient(settings.evaluator_addr, settings.evaluator_timeout, tls)
    client = connect(settings.redis_url, settings.redis_cluster)
    store = TableStore(
        client,
        connect(settings.redis_url, settings.redis_cluster, WAITING_CONNECTIONS),
        batcher_for(client, settings.redis_batch, REDIS_BATCHES.observe),
    )
    service = TableService(
        store,
        evaluator,
        idempotency_ttl=settings.idempotency_ttl,
        history_deals=settings.history_deals,
        idle_seconds=settings.table_idle_seconds,
        closed_record_seconds=settings.closed_record_seconds,
        warm_tables=settings.warm_tables,
    )
    service.wallets.policy = wallet_policy(settings)
    service.webhooks.policy = webhook_policy(settings)
    if players:
        service.players = build_players(settings, store)
        service.players.wallets = service.wallets
    return service


def wallet_policy(settings: Settings) -> WalletPolicy:
    """The wallets' amounts and times, as `settings` say."""
    from gateway.service.wallets import WalletPolicy

    grant, daily = settings.wallet_amounts()
    return WalletPolicy(grant, daily, settings.pending_transfer_seconds)


def webhook_policy(settings: Settings) -> WebhookPolicy:
    """Where turn notifications go and how, as `settings` say (none without a URL)."""
    from gateway.service.webhooks import WebhookPolicy

    return WebhookPolicy(
        settings.webhook_url,
        settings.webhook_secrets,
        settings.webhook_turn_warning,
        settings.webhook_timeout,
        settings.webhook_max_attempts,
        settings.webhook_retry_base,
        settings.webhook_retry_max,
    )


def build_players(settings: Settings, store: TableStore) -> PlayerService:
    """The players' service: their store, credentials and quotas, as `settings` say."""
    from gateway.adapters.players import PlayerStore
    from gateway.service.credentials import Credentials, JwtSettings, JwtVerifier, OperatorKeys
    from gateway.service.players import PlayerService, Quotas

    players = PlayerStore(store.client)
    verifier = None
    if settings.jwt_issuer is not None:
        if settings.jwt_audience is None:
            raise ValueError("JWT_ISSUER needs JWT_AUDIENCE")
        verifier = JwtVerifier(
            JwtSettings(
                issuer=settings.jwt_issuer,
                audience=settings.jwt_audience,
                algorithms=settings.jwt_algorithms,
                public_key=settings.jwt_public_key,
                jwks=settings.jwt_jwks,
                leeway=settings.jwt_leeway,
            )
        )
    credentials = Credentials(
        players,
        OperatorKeys(settings.operator_keys_file, settings.operator_keys),
        verifier,
        cache_seconds=settings.credential_cache_seconds,
    )
    service = PlayerService(
        players,
        store,
        credentials,
        settings.players_mode,
        Quotas(settings.quota_open_tables, settings.quota_streams, settings.streams_per_address),
    )
    service.stream_lease_seconds = settings.stream_max_seconds + 30.0
    credentials.on_jwt_player = service.ensure_jwt_player
    return service


def create_app(settings: Settings | None = None, service: TableService | None = None) -> Flask:
    """The Flask application; with `settings.clock`, a clock thread runs in this process."""
    from flask import Flask

    from gateway.http import flask_json
    from gateway.http.auth import AuthStep
    from gateway.http.cors import CorsStep
    from gateway.http.docs import docs_blueprint
    from gateway.http.language import LanguageStep
    from gateway.http.limits import request_limits
    from gateway.http.moves import MovesEndpoint
    from gateway.http.pipeline import Step, install_pipeline
    from gateway.http.routes.operator import operator_blueprint
    from gateway.http.routes.pages import pages_blueprint
    from gateway.http.routes.players import players_blueprint
    from gateway.http.routes.system import system_blueprint
    from gateway.http.routes.tables import NumberConverter, tables_blueprint
    from gateway.http.steps import BodyStep, RateLimitStep
    from gateway.settings import Settings

    settings = settings or Settings.from_env()
    service = service or build_service(settings)
    app = Flask(__name__)
    app.url_map.converters["number"] = NumberConverter
    flask_json.install(app)
    app.extensions["cardroom.settings"] = settings
    app.extensions["cardroom.service"] = service
    if service.players is None:  # a service built by the caller
        service.players = build_players(settings, service.store)
        service.wallets.policy = wallet_policy(settings)
    players = service.players
    players.wallets = service.wallets
    app.extensions["cardroom.players"] = players
    app.register_blueprint(system_blueprint)
    app.register_blueprint(tables_blueprint)
    app.register_blueprint(players_blueprint)
    app.register_blueprint(operator_blueprint)
    app.register_blueprint(docs_blueprint)
    app.register_blueprint(pages_blueprint)
    # every request, moves and Flask's routes alike, passes these steps in this order
    # CORS first: a preflight needs no credential, and a refusal is readable by an allowed page;
    # then who sent the request: the rate limits count a player, not a key
    # the language before the others: a refusal of theirs is said in it too
    steps: list[Step] = [
        CorsStep(settings.cors_origins),
        LanguageStep(),
        AuthStep(players.credentials),
    ]
    limits = request_limits(settings, service.store)
    if limits is not None:
        steps.append(RateLimitStep(limits))
    steps.append(BodyStep(settings.body_read_timeout))
    if settings.compression_min_bytes:
        from gateway.http.compression import CompressionStep

        steps.append(
            CompressionStep(
                settings.compression_min_bytes,
                settings.compression_brotli_quality,
                settings.compression_gzip_level,
            )
        )
    # the moves, the requests the gateway answers most, are answered below Flask
    install_pipeline(app, steps, [MovesEndpoint(service)])
    if settings.clock:
        from gateway.runtime.clock import Clock

        clock = Clock(service, settings.clock_interval)
        clock.start()
        app.extensions["cardroom.clock"] = clock
    return app
