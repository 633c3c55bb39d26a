"""The gateway's settings, read once from the environment and frozen."""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# allocations (less deallocations) between young collections; Python's default is 700
DEFAULT_YOUNG_THRESHOLD = 10_000


def _number(env: Mapping[str, str], name: str, default: float, low: float, high: float) -> float:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
    if not low <= value <= high:
        raise ValueError(f"{name}={raw!r} is out of range {low}..{high}")
    return value


def host_copies(env: Mapping[str, str]) -> int:
    """`HOST_COPIES`: how many tables' last commits a gunicorn master keeps for its
    workers to share, 0 to 65,536 (16 KiB each)."""
    return int(_number(env, "HOST_COPIES", Settings.host_copies, 0, 65_536))


def _renamed(env: Mapping[str, str], name: str, former: str, default: float) -> float:
    """A count from 0 to 10^6 read from `name`, or from its former name when only that is set."""
    chosen = name if env.get(name) or not env.get(former) else former
    return _number(env, chosen, default, 0, 10**6)


def _optional_int(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    return int(_number(env, name, 0, 0, 10**12))


# The play money of open mode: granted to a new player, and a wallet's daily floor.
PLAY_MONEY = 10_000


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (true/false)")


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower() or default
    if raw not in choices:
        raise ValueError(f"{name}={raw!r} is not one of {', '.join(choices)}")
    return raw


def _words(raw: str) -> tuple[str, ...]:
    """A comma- or space-separated list."""
    return tuple(word for word in raw.replace(",", " ").split() if word)


def _origins(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    """A comma-separated list of exact origins (scheme://host[:port]), or `*` alone."""
    words = _words(env.get(name, ""))
    if "*" in words:
        if len(words) > 1:
            raise ValueError(f"{name}: `*` stands alone, not beside other origins")
        return ("*",)
    return tuple(_origin(name, word) for word in words)


def _origin(name: str, raw: str) -> str:
    """`raw` as a browser writes it in `Origin` (lower case, no default port), or ValueError."""
    scheme, separator, authority = raw.partition("://")
    scheme = scheme.lower()
    authority = authority.lower()
    host, port = authority, ""
    if authority.rfind(":") > authority.rfind("]"):  # a port (an IPv6 address is bracketed)
        host, _, port = authority.rpartition(":")
    malformed = (
        not separator
        or scheme not in ("http", "https")
        or any(mark in authority for mark in "/?#@ ")
        or (host != authority and not port.isdigit())
        or not host.strip("[]")
    )
    if malformed:
        raise ValueError(f"{name}: {raw!r} is not an origin (scheme://host[:port], http or https)")
    if port and int(port) > 65535:
        raise ValueError(f"{name}: {raw!r} has a port out of range")
    default = {"http": "80", "https": "443"}[scheme]
    if port and port != default:
        return f"{scheme}://{host}:{int(port)}"
    return f"{scheme}://{host}"


def _webhook_url(env: Mapping[str, str], name: str) -> str | None:
    """An http:// or https:// URL with a host, or None when unset."""
    raw = env.get(name, "").strip()
    if not raw:
        return None
    scheme, separator, rest = raw.partition("://")
    if not separator or scheme.lower() not in ("http", "https") or not rest.split("/")[0]:
        raise ValueError(f"{name}={raw!r} is not an http:// or https:// URL")
    return raw


def _webhook_secrets(env: Mapping[str, str]) -> tuple[str, ...]:
    """WEBHOOK_SECRET's comma-separated secrets; required when WEBHOOK_URL is set."""
    found = tuple(word.strip() for word in env.get("WEBHOOK_SECRET", "").split(",") if word.strip())
    if env.get("WEBHOOK_URL", "").strip() and not found:
        raise ValueError("WEBHOOK_SECRET is required when WEBHOOK_URL is set")
    for secret in found:
        if secret.startswith("whsec_"):
            try:
                base64.b64decode(secret[len("whsec_") :], validate=True)
            except ValueError:
                raise ValueError(
                    "WEBHOOK_SECRET: a whsec_ secret is base64 after its prefix"
                ) from None
        elif len(secret) < 16:
            raise ValueError("WEBHOOK_SECRET: each secret is at least 16 characters")
    return found


@dataclass(frozen=True)
class Settings:
    """Everything the gateway reads from its environment (docs/configuration.md)."""

    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_cluster: bool = False
    # A write is acknowledged once this many replicas confirm it (WAIT), within the timeout;
    # 0: once the primary has it (api.adapters.replication).
    redis_ack_replicas: int = 0
    redis_ack_timeout: float = 1.0
    evaluator_addr: str = "127.0.0.1:50051"
    evaluator_timeout: float = 2.0
    evaluator_tls_ca: str | None = None
    evaluator_tls_cert: str | None = None
    evaluator_tls_key: str | None = None
    evaluator_tls_server_name: str | None = None
    clock: bool = True
    clock_interval: float = 0.2
    # `python -m api.runtime.clock` touches this file after every tick (runtime.heartbeat;
    # None: off).
    clock_heartbeat_file: str | None = None
    long_poll_max: float = 30.0
    stream_max_seconds: float = 300.0
    idempotency_ttl: int = 24 * 3600
    log_level: str = "info"
    # Retention (api.service.retention): hand histories and events of the last history_deals deals;
    # a table without a player's move for table_idle_seconds is closed (0: never).
    history_deals: int = 1000
    table_idle_seconds: float = 86_400.0
    closed_record_seconds: int = 30 * 86_400
    # Moves on the last warm_tables tables a process changed skip the read (api.adapters.warm).
    warm_tables: int = 1000
    # Copies of the last commits, in memory a host's gunicorn workers share: a move on a
    # table another worker committed last skips the read (api.adapters.host_commits).
    # Off by default: with two gateways on one Redis a game can stall (docs/configuration.md).
    host_copies: int = 0
    # A gevent worker sends the Redis commands its requests make meanwhile as one batch
    # while another batch is on the wire (api.adapters.batching).
    redis_batch: bool = True
    # Abuse limits (api.http.limits), each per rate_limit_window seconds; 0 turns one off.
    # An address may be a NAT or an office, so it gets ten seats' worth of requests.
    rate_limit_per_address: int = 12_000
    rate_limit_per_token: int = 1_200
    rate_limit_window: float = 60.0
    # Proxy hops in front of the gateway whose X-Forwarded-For is believed (0: none).
    trusted_proxies: int = 0
    # Allocations between a worker's young garbage collections (api.runtime.gc_policy; 0: off).
    gc_threshold: int = DEFAULT_YOUNG_THRESHOLD
    # Answers of at least this many bytes are compressed as the client asks (0: none are;
    # api.http.compression), at brotli's quality and zlib's level below.
    compression_min_bytes: int = 1024
    compression_brotli_quality: int = 4
    compression_gzip_level: int = 6
    # Players (api.service.players, docs/players.md): "open" (anyone may create one) or
    # "operator" (created with an operator key, or from the operator's identity provider).
    players_mode: str = "open"
    operator_keys_file: str | None = None
    operator_keys: tuple[str, ...] = ()
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_algorithms: tuple[str, ...] = ("RS256", "ES256", "EdDSA")
    jwt_public_key: str | None = None
    jwt_jwks: str | None = None
    jwt_leeway: float = 30.0
    # A player key found in Redis is trusted this long in a process (a revocation's reach).
    credential_cache_seconds: float = 5.0
    # Quotas per player (0: off) and players created per address per hour in open mode.
    quota_open_tables: int = 5
    # Waiting requests (long polls and event streams) held at once by one credential and
    # by one client address (api.http.waiting).
    waiting_per_credential: int = 20
    waiting_per_address: int = 100
    # A request body must arrive whole within this many seconds (0: no limit; gevent
    # workers only, api.http.steps.body_deadline).
    body_read_timeout: float = 10.0
    players_per_address: int = 20
    # Wallets (api.service.wallets, docs/ledger.md): chips granted to a new player and
    # the floor a wallet is topped up to once a UTC day; None: 10,000 each in open mode,
    # 0 (chips come only from an operator's deposits) in operator mode.
    play_money_grant: int | None = None
    play_money_daily: int | None = None
    # A buy-in's reservation lasts this long before a sweeper may resolve it.
    pending_transfer_seconds: float = 30.0
    # A player's raised or removed limit, or looser session setting, waits this long
    # before it may be confirmed.
    limit_cooling_seconds: float = 86_400.0
    # Each player's newest deals kept as they saw them, whatever the tables' retention.
    recall_deals: int = 10
    # Origins whose pages may call the API from a browser (api.http.cors; docs/api.md#cors):
    # exact origins, or ("*",) for any; the gateway's own origin is always allowed.
    cors_origins: tuple[str, ...] = ()
    # Turn notifications POSTed to the operator's push service (api.service.webhooks,
    # docs/webhooks.md): none without a URL; every secret signs, the first first.
    webhook_url: str | None = None
    webhook_secrets: tuple[str, ...] = ()
    webhook_turn_warning: float = 10.0
    webhook_timeout: float = 5.0
    webhook_max_attempts: int = 12
    webhook_retry_base: float = 1.0
    webhook_retry_max: float = 300.0
    webhook_concurrency: int = 32
    # Computer players (api.service.bots, docs/bots.md): where they may sit ("never",
    # "play_money": only while the wallets hold play money, "everywhere"), and how their
    # runner (`python -m api.bots`) plays them: a move's delay, drawn between the two, and
    # the lease a runner holds on each bot it plays.
    bots_allowed: str = "play_money"
    bot_delay_min: float = 1.0
    bot_delay_max: float = 3.0
    bot_lease_seconds: float = 10.0
    bot_heartbeat_file: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the settings; a malformed value raises ValueError naming the variable."""
        env = os.environ if env is None else env
        return cls(
            **_connections(env),
            **_process(env),
            **_tables(env),
            **_requests(env),
            **_players(env),
            **_clients(env),
            **_money_and_webhooks(env),
            **_bots(env),
        )

    def plays_money(self) -> bool:
        """Whether the wallets hold play money: granted to new players or topped up."""
        return any(amount > 0 for amount in self.wallet_amounts())

    def wallet_amounts(self) -> tuple[int, int]:
        """The play-money grant and daily floor, their defaults filled in by mode."""
        default = PLAY_MONEY if self.players_mode == "open" else 0
        grant = default if self.play_money_grant is None else self.play_money_grant
        daily = default if self.play_money_daily is None else self.play_money_daily
        return grant, daily


def _connections(env: Mapping[str, str]) -> dict[str, Any]:
    """Where Redis and the evaluator are, and how to reach them."""
    redis_url = env.get("REDIS_URL") or Settings.redis_url
    return {
        "redis_url": redis_url,
        "redis_cluster": _flag(env, "REDIS_CLUSTER", redis_url.startswith("redis+cluster")),
        "redis_ack_replicas": int(
            _number(env, "REDIS_ACK_REPLICAS", Settings.redis_ack_replicas, 0, 16)
        ),
        "redis_ack_timeout": _number(
            env, "REDIS_ACK_TIMEOUT", Settings.redis_ack_timeout, 0.01, 60
        ),
        "evaluator_addr": env.get("EVALUATOR_ADDR") or Settings.evaluator_addr,
        "evaluator_timeout": _number(
            env, "EVALUATOR_TIMEOUT", Settings.evaluator_timeout, 0.05, 60
        ),
        "evaluator_tls_ca": env.get("EVALUATOR_TLS_CA") or None,
        "evaluator_tls_cert": env.get("EVALUATOR_TLS_CERT") or None,
        "evaluator_tls_key": env.get("EVALUATOR_TLS_KEY") or None,
        "evaluator_tls_server_name": env.get("EVALUATOR_TLS_SERVER_NAME") or None,
    }


def _process(env: Mapping[str, str]) -> dict[str, Any]:
    """The clock, the longest waits, replays' lifetime and the logs."""
    return {
        "clock": _flag(env, "CLOCK", Settings.clock),
        "clock_interval": _number(env, "CLOCK_INTERVAL", Settings.clock_interval, 0.01, 5),
        "clock_heartbeat_file": env.get("CLOCK_HEARTBEAT_FILE") or None,
        "long_poll_max": _number(env, "LONG_POLL_MAX_SECONDS", Settings.long_poll_max, 0, 300),
        "stream_max_seconds": _number(
            env, "STREAM_MAX_SECONDS", Settings.stream_max_seconds, 0.1, 86_400
        ),
        "idempotency_ttl": int(
            _number(env, "IDEMPOTENCY_TTL_SECONDS", Settings.idempotency_ttl, 60, 7 * 86_400)
        ),
        "log_level": env.get("LOG_LEVEL") or Settings.log_level,
    }


def _tables(env: Mapping[str, str]) -> dict[str, Any]:
    """What a table keeps, when it closes, and how its changes reach Redis."""
    return {
        "history_deals": int(_number(env, "HISTORY_DEALS", Settings.history_deals, 1, 10**6)),
        "table_idle_seconds": _number(
            env, "TABLE_IDLE_SECONDS", Settings.table_idle_seconds, 0, 365 * 86_400
        ),
        "closed_record_seconds": int(
            _number(env, "CLOSED_RECORD_SECONDS", Settings.closed_record_seconds, 60, 365 * 86_400)
        ),
        "warm_tables": int(_number(env, "WARM_TABLES", Settings.warm_tables, 0, 10**6)),
        "host_copies": host_copies(env),
        "redis_batch": _flag(env, "REDIS_BATCH", Settings.redis_batch),
    }


def _requests(env: Mapping[str, str]) -> dict[str, Any]:
    """The abuse limits, the proxies believed, compression and the workers' GC."""
    return {
        "rate_limit_per_address": int(
            _number(env, "RATE_LIMIT_PER_ADDRESS", Settings.rate_limit_per_address, 0, 10**9)
        ),
        "rate_limit_per_token": int(
            _number(env, "RATE_LIMIT_PER_TOKEN", Settings.rate_limit_per_token, 0, 10**9)
        ),
        "rate_limit_window": _number(
            env, "RATE_LIMIT_WINDOW_SECONDS", Settings.rate_limit_window, 1, 86_400
        ),
        "trusted_proxies": int(_number(env, "TRUSTED_PROXIES", Settings.trusted_proxies, 0, 16)),
        "compression_min_bytes": int(
            _number(env, "COMPRESSION_MIN_BYTES", Settings.compression_min_bytes, 0, 10**9)
        ),
        "compression_brotli_quality": int(
            _number(env, "COMPRESSION_BROTLI_QUALITY", Settings.compression_brotli_quality, 0, 11)
        ),
        "compression_gzip_level": int(
            _number(env, "COMPRESSION_GZIP_LEVEL", Settings.compression_gzip_level, 1, 9)
        ),
        "gc_threshold": int(_number(env, "GATEWAY_GC_THRESHOLD", Settings.gc_threshold, 0, 10**7)),
    }


def _players(env: Mapping[str, str]) -> dict[str, Any]:
    """Players, their credentials (operator keys, the identity provider's JWTs) and quotas."""
    return {
        "players_mode": _choice(env, "PLAYERS_MODE", Settings.players_mode, ("open", "operator")),
        "operator_keys_file": env.get("OPERATOR_KEYS_FILE") or None,
        "operator_keys": _words(env.get("OPERATOR_KEYS", "")),
        "jwt_issuer": env.get("JWT_ISSUER") or None,
        "jwt_audience": env.get("JWT_AUDIENCE") or None,
        "jwt_algorithms": _words(env.get("JWT_ALGORITHMS", "")) or Settings.jwt_algorithms,
        "jwt_public_key": env.get("JWT_PUBLIC_KEY") or None,
        "jwt_jwks": env.get("JWT_JWKS") or None,
        "jwt_leeway": _number(env, "JWT_LEEWAY_SECONDS", Settings.jwt_leeway, 0, 300),
        "credential_cache_seconds": _number(
            env, "CREDENTIAL_CACHE_SECONDS", Settings.credential_cache_seconds, 0, 300
        ),
        "quota_open_tables": int(
            _number(env, "QUOTA_OPEN_TABLES", Settings.quota_open_tables, 0, 10**6)
        ),
        # QUOTA_STREAMS and STREAMS_PER_ADDRESS are the names these had when they counted
        # event streams alone
        "waiting_per_credential": int(
            _renamed(
                env, "WAITING_PER_CREDENTIAL", "QUOTA_STREAMS", Settings.waiting_per_credential
            )
        ),
        "waiting_per_address": int(
            _renamed(
                env, "WAITING_PER_ADDRESS", "STREAMS_PER_ADDRESS", Settings.waiting_per_address
            )
        ),
    }


def _clients(env: Mapping[str, str]) -> dict[str, Any]:
    """How long a body may take, sign-ups per address and the origins of browser pages."""
    return {
        "body_read_timeout": _number(
            env, "BODY_READ_TIMEOUT_SECONDS", Settings.body_read_timeout, 0, 300
        ),
        "players_per_address": int(
            _number(env, "PLAYERS_PER_ADDRESS", Settings.players_per_address, 0, 10**6)
        ),
        "cors_origins": _origins(env, "CORS_ORIGINS"),
    }


def _money_and_webhooks(env: Mapping[str, str]) -> dict[str, Any]:
    """The wallets' play money and reservations, and the turn notifications."""
    return {
        "play_money_grant": _optional_int(env, "PLAY_MONEY_GRANT"),
        "play_money_daily": _optional_int(env, "PLAY_MONEY_DAILY"),
        "pending_transfer_seconds": _number(
            env, "PENDING_TRANSFER_SECONDS", Settings.pending_transfer_seconds, 1, 3600
        ),
        "limit_cooling_seconds": _number(
            env, "LIMIT_COOLING_SECONDS", Settings.limit_cooling_seconds, 0, 30 * 86_400
        ),
        "recall_deals": int(_number(env, "RECALL_DEALS", Settings.recall_deals, 10, 1000)),
        "webhook_url": _webhook_url(env, "WEBHOOK_URL"),
        "webhook_secrets": _webhook_secrets(env),
        "webhook_turn_warning": _number(
            env, "WEBHOOK_TURN_WARNING_SECONDS", Settings.webhook_turn_warning, 0, 3600
        ),
        "webhook_timeout": _number(
            env, "WEBHOOK_TIMEOUT_SECONDS", Settings.webhook_timeout, 0.1, 60
        ),
        "webhook_max_attempts": int(
            _number(env, "WEBHOOK_MAX_ATTEMPTS", Settings.webhook_max_attempts, 1, 100)
        ),
        "webhook_retry_base": _number(
            env, "WEBHOOK_RETRY_BASE_SECONDS", Settings.webhook_retry_base, 0.01, 3600
        ),
        "webhook_retry_max": _number(
            env, "WEBHOOK_RETRY_MAX_SECONDS", Settings.webhook_retry_max, 0.01, 86_400
        ),
        "webhook_concurrency": int(
            _number(env, "WEBHOOK_CONCURRENCY", Settings.webhook_concurrency, 1, 1024)
        ),
    }


def _bots(env: Mapping[str, str]) -> dict[str, Any]:
    """Where computer players may sit, their moves' delays, their runners' leases and
    heartbeat file."""
    low = _number(env, "BOT_DELAY_MIN_SECONDS", Settings.bot_delay_min, 0, 60)
    high = _number(env, "BOT_DELAY_MAX_SECONDS", max(Settings.bot_delay_max, low), low, 60)
    return {
        "bots_allowed": _choice(
            env, "BOTS_ALLOWED", Settings.bots_allowed, ("never", "play_money", "everywhere")
        ),
        "bot_delay_min": low,
        "bot_delay_max": high,
        "bot_lease_seconds": _number(env, "BOT_LEASE_SECONDS", Settings.bot_lease_seconds, 1, 600),
        "bot_heartbeat_file": env.get("BOT_HEARTBEAT_FILE") or None,
    }
