"""The gateway's services, built in one place: `bootstrap(settings)`.

Everything a gateway or clock process uses is made here, once, each part given what it
uses through its constructor: the Redis clients and the store over them, the
evaluator's client, the wallets, the webhooks, the change loop and its use cases, the
deadlines the clock applies, the players and their credentials. `api.app.create_app`
serves what it built, `python -m api.runtime.clock` runs its deadlines, and a test or a
benchmark builds its own here, with its own Redis client, evaluator, clock or decks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from api.adapters import host_commits
from api.adapters.batching import batcher_for
from api.adapters.bots import BotStore
from api.adapters.evaluator import EvaluatorClient, EvaluatorTls
from api.adapters.players import PlayerStore
from api.adapters.recall import RecallStore
from api.adapters.replication import Replication
from api.adapters.store import WAITING_CONNECTIONS, RedisClient, TableStore, connect
from api.adapters.wallets import WalletStore
from api.adapters.warm import TableReader, WarmTables
from api.adapters.webhooks import WebhookStore
from api.games.common import Deck
from api.service.bots import BotPolicy, BotService
from api.service.changes import TableChanges
from api.service.credentials import Credentials, JwtSettings, JwtVerifier, OperatorKeys
from api.service.deadlines import Deadlines
from api.service.decks import shuffled_deck
from api.service.idempotency import Replays
from api.service.player_limits import PlayerLimits
from api.service.players import JwtPlayers, PlayerService, Quotas
from api.service.recall import Recall
from api.service.retention import Retention
from api.service.schedule import Schedule
from api.service.tables import TableService
from api.service.wallets import WalletPolicy, WalletService
from api.service.webhooks import WebhookPolicy, WebhookService
from api.settings import Settings
from api.telemetry import REDIS_BATCHES


@dataclass(frozen=True)
class Services:
    """What `bootstrap` built: the tables' service, the clock's deadlines, the players
    (None in a process that authenticates nobody) and what they share."""

    store: TableStore
    evaluator: EvaluatorClient
    wallets: WalletService
    webhooks: WebhookService
    changes: TableChanges
    tables: TableService
    deadlines: Deadlines
    players: PlayerService | None
    bots: BotService
    limits: PlayerLimits

    def close(self) -> None:
        """Release the evaluator's channel and the webhooks' connections."""
        self.evaluator.close()
        self.webhooks.close()


def bootstrap(
    settings: Settings,
    *,
    players: bool = True,
    client: RedisClient | None = None,
    evaluator: EvaluatorClient | None = None,
    clock: Callable[[], float] = time.time,
    deck_source: Callable[[], Deck] = shuffled_deck,
) -> Services:
    """The services `settings` describe; with `players`, the players' too (the clock,
    which authenticates nobody, goes without).

    `client` is the Redis client every store uses (by default one for
    `settings.redis_url`, with a pool of its own for the reads that wait), `evaluator`
    the evaluator's client; `clock` gives the tables their time (the wallets keep the
    real one: their deadlines are checked against Redis's own) and `deck_source` their
    decks.
    """
    store = _store(settings, client)
    evaluator = evaluator or _evaluator(settings)
    wallets = WalletService(WalletStore(store.client), wallet_policy(settings))
    webhooks = WebhookService(WebhookStore(store.client), store, webhook_policy(settings))
    retention = Retention(
        settings.history_deals, settings.table_idle_seconds, settings.closed_record_seconds
    )
    changes = TableChanges(
        store,
        TableReader(store, WarmTables(settings.warm_tables), host_commits.SHARED),
        evaluator,
        Replays(store, settings.idempotency_ttl),
        Schedule(retention, clock),
        wallets,
        webhooks,
        clock,
        deck_source,
        Recall(store, RecallStore(store.client), settings.recall_deals),
    )
    player_service = build_players(settings, store, wallets) if players else None
    limits = PlayerLimits(wallets.store, settings.limit_cooling_seconds)
    tables = TableService(changes, player_service, limits)
    return Services(
        store,
        evaluator,
        wallets,
        webhooks,
        changes,
        tables,
        Deadlines(changes),
        player_service,
        BotService(
            tables,
            BotStore(store.client),
            BotPolicy(settings.bots_allowed, settings.plays_money()),
        ),
        limits,
    )


def _store(settings: Settings, client: RedisClient | None) -> TableStore:
    """The tables' store over `client`, or over clients of its own for `settings.redis_url`
    (the reads that wait for events with a pool of their own)."""
    waiting = None
    replication = Replication(settings.redis_ack_replicas, settings.redis_ack_timeout)
    if client is None:
        client = connect(settings.redis_url, settings.redis_cluster, replication=replication)
        waiting = connect(
            settings.redis_url, settings.redis_cluster, WAITING_CONNECTIONS, replication
        )
    batcher = batcher_for(client, settings.redis_batch, REDIS_BATCHES.observe)
    return TableStore(client, waiting, batcher, replication)


def _evaluator(settings: Settings) -> EvaluatorClient:
    """The evaluator's client, over TLS when `settings` name a CA."""
    tls = None
    if settings.evaluator_tls_ca:
        tls = EvaluatorTls(
            settings.evaluator_tls_ca,
            settings.evaluator_tls_cert,
            settings.evaluator_tls_key,
            settings.evaluator_tls_server_name,
        )
    return EvaluatorClient(settings.evaluator_addr, settings.evaluator_timeout, tls)


def wallet_policy(settings: Settings) -> WalletPolicy:
    """The wallets' amounts and times, as `settings` say."""
    grant, daily = settings.wallet_amounts()
    return WalletPolicy(grant, daily, settings.pending_transfer_seconds)


def webhook_policy(settings: Settings) -> WebhookPolicy:
    """Where turn notifications go and how, as `settings` say (none without a URL)."""
    return WebhookPolicy(
        settings.webhook_url,
        settings.webhook_secrets,
        settings.webhook_turn_warning,
        settings.webhook_timeout,
        settings.webhook_max_attempts,
        settings.webhook_retry_base,
        settings.webhook_retry_max,
        concurrency=settings.webhook_concurrency,
    )


def build_players(settings: Settings, store: TableStore, wallets: WalletService) -> PlayerService:
    """The players' service: their store, credentials, quotas and wallets, as `settings` say."""
    records = PlayerStore(store.client)
    credentials = Credentials(
        records,
        OperatorKeys(settings.operator_keys_file, settings.operator_keys),
        _jwt_verifier(settings),
        on_jwt_player=JwtPlayers(records, wallets).ensure,
        cache_seconds=settings.credential_cache_seconds,
    )
    return PlayerService(
        records,
        store,
        credentials,
        settings.players_mode,
        Quotas(
            settings.quota_open_tables,
            settings.waiting_per_credential,
            settings.waiting_per_address,
        ),
        wallets=wallets,
    )


def _jwt_verifier(settings: Settings) -> JwtVerifier | None:
    """The identity provider's tokens' verifier, when `settings` name an issuer."""
    if settings.jwt_issuer is None:
        return None
    if settings.jwt_audience is None:
        raise ValueError("JWT_ISSUER needs JWT_AUDIENCE")
    return JwtVerifier(
        JwtSettings(
            issuer=settings.jwt_issuer,
            audience=settings.jwt_audience,
            algorithms=settings.jwt_algorithms,
            public_key=settings.jwt_public_key,
            jwks=settings.jwt_jwks,
            leeway=settings.jwt_leeway,
        )
    )
