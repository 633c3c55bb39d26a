"""The gateway's settings, read once from the environment and frozen."""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass

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
    evaluator_addr: str = "127.0.0.1:50051"
    evaluator_timeout: float = 2.0
    evaluator_tls_ca: str | None = None
    evaluator_tls_cert: str | None = None
    evaluator_tls_key: str | None = None
    evaluator_tls_server_name: str | None = None
    clock: bool = True
    clock_interval: float = 0.2
    # `python -m gateway.runtime.clock` touches this file after every tick (runtime.heartbeat;
    # None: off).
    clock_heartbeat_file: str | None = None
    long_poll_max: float = 30.0
    stream_max_seconds: float = 300.0
    idempotency_ttl: int = 24 * 3600
    log_level: str = "info"
    # Retention (gateway.service.tables): hand histories and events of the last history_deals deals;
    # a table without a player's move for table_idle_seconds is closed (0: never).
    history_deals: int = 1000
    table_idle_seconds: float = 86_400.0
    closed_record_seconds: int = 30 * 86_400
    # Moves on the last warm_tables tables a process changed skip the read (gateway.adapters.warm).
    warm_tables: int = 1000
    # A gevent worker sends the Redis commands its requests make meanwhile as one batch
    # while another batch is on the wire (gateway.adapters.batching).
    redis_batch: bool = True
    # Abuse limits (gateway.http.limits), each per rate_limit_window seconds; 0 turns one off.
    # An address may be a NAT or an office, so it gets ten seats' worth of requests.
    rate_limit_per_address: int = 12_000
    rate_limit_per_token: int = 1_200
    rate_limit_window: float = 60.0
    # Proxy hops in front of the gateway whose X-Forwarded-For is believed (0: none).
    trusted_proxies: int = 0
    # Allocations between a worker's young garbage collections (gateway.runtime.gc_policy; 0: off).
    gc_threshold: int = DEFAULT_YOUNG_THRESHOLD
    # Answers of at least this many bytes are compressed as the client asks (0: none are;
    # gateway.http.compression), at brotli's quality and zlib's level below.
    compression_min_bytes: int = 1024
    compression_brotli_quality: int = 4
    compression_gzip_level: int = 6
    # Players (gateway.service.players, docs/players.md): "open" (anyone may create one) or
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
    quota_streams: int = 20
    streams_per_address: int = 100
    # A request body must arrive whole within this many seconds (0: no limit; gevent
    # workers only, gateway.http.steps.body_deadline).
    body_read_timeout: float = 10.0
    players_per_address: int = 20
    # Wallets (gateway.service.wallets, docs/ledger.md): chips granted to a new player and
    # the floor a wallet is topped up to once a UTC day; None: 10,000 each in open mode,
    # 0 (chips come only from an operator's deposits) in operator mode.
    play_money_grant: int | None = None
    play_money_daily: int | None = None
    # A buy-in's reservation lasts this long before a sweeper may resolve it.
    pending_transfer_seconds: float = 30.0
    # Origins whose pages may call the API from a browser (gateway.http.cors; docs/api.md#cors):
    # exact origins, or ("*",) for any; the gateway's own origin is always allowed.
    cors_origins: tuple[str, ...] = ()
    # Turn notifications POSTed to the operator's push service (gateway.service.webhooks,
    # docs/webhooks.md): none without a URL; every secret signs, the first first.
    webhook_url: str | None = None
    webhook_secrets: tuple[str, ...] = ()
    webhook_turn_warning: float = 10.0
    webhook_timeout: float = 5.0
    webhook_max_attempts: int = 12
    webhook_retry_base: float = 1.0
    webhook_retry_max: float = 300.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the settings; a malformed value raises ValueError naming the variable."""
        env = os.environ if env is None else env
        redis_url = env.get("REDIS_URL") or cls.redis_url
        return cls(
            redis_url=redis_url,
            redis_cluster=_flag(env, "REDIS_CLUSTER", redis_url.startswith("redis+cluster")),
            evaluator_addr=env.get("EVALUATOR_ADDR") or cls.evaluator_addr,
            evaluator_timeout=_number(env, "EVALUATOR_TIMEOUT", cls.evaluator_timeout, 0.05, 60),
            evaluator_tls_ca=env.get("EVALUATOR_TLS_CA") or None,
            evaluator_tls_cert=env.get("EVALUATOR_TLS_CERT") or None,
            evaluator_tls_key=env.get("EVALUATOR_TLS_KEY") or None,
            evaluator_tls_server_name=env.get("EVALUATOR_TLS_SERVER_NAME") or None,
            clock=_flag(env, "CLOCK", cls.clock),
            clock_interval=_number(env, "CLOCK_INTERVAL", cls.clock_interval, 0.01, 5),
            clock_heartbeat_file=env.get("CLOCK_HEARTBEAT_FILE") or None,
            long_poll_max=_number(env, "LONG_POLL_MAX_SECONDS", cls.long_poll_max, 0, 300),
            stream_max_seconds=_number(
                env, "STREAM_MAX_SECONDS", cls.stream_max_seconds, 0.1, 86_400
            ),
            idempotency_ttl=int(
                _number(env, "IDEMPOTENCY_TTL_SECONDS", cls.idempotency_ttl, 60, 7 * 86_400)
            ),
            log_level=env.get("LOG_LEVEL") or cls.log_level,
            history_deals=int(_number(env, "HISTORY_DEALS", cls.history_deals, 1, 10**6)),
            table_idle_seconds=_number(
                env, "TABLE_IDLE_SECONDS", cls.table_idle_seconds, 0, 365 * 86_400
            ),
            closed_record_seconds=int(
                _number(env, "CLOSED_RECORD_SECONDS", cls.closed_record_seconds, 60, 365 * 86_400)
            ),
            warm_tables=int(_number(env, "WARM_TABLES", cls.warm_tables, 0, 10**6)),
            redis_batch=_flag(env, "REDIS_BATCH", cls.redis_batch),
            rate_limit_per_address=int(
                _number(env, "RATE_LIMIT_PER_ADDRESS", cls.rate_limit_per_address, 0, 10**9)
            ),
            rate_limit_per_token=int(
                _number(env, "RATE_LIMIT_PER_TOKEN", cls.rate_limit_per_token, 0, 10**9)
            ),
            rate_limit_window=_number(
                env, "RATE_LIMIT_WINDOW_SECONDS", cls.rate_limit_window, 1, 86_400
            ),
            trusted_proxies=int(_number(env, "TRUSTED_PROXIES", cls.trusted_proxies, 0, 16)),
            compression_min_bytes=int(
                _number(env, "COMPRESSION_MIN_BYTES", cls.compression_min_bytes, 0, 10**9)
            ),
            compression_brotli_quality=int(
                _number(env, "COMPRESSION_BROTLI_QUALITY", cls.compression_brotli_quality, 0, 11)
            ),
            compression_gzip_level=int(
                _number(env, "COMPRESSION_GZIP_LEVEL", cls.compression_gzip_level, 1, 9)
            ),
            gc_threshold=int(_number(env, "GATEWAY_GC_THRESHOLD", cls.gc_threshold, 0, 10**7)),
            players_mode=_choice(env, "PLAYERS_MODE", cls.players_mode, ("open", "operator")),
            operator_keys_file=env.get("OPERATOR_KEYS_FILE") or None,
            operator_keys=_words(env.get("OPERATOR_KEYS", "")),
            jwt_issuer=env.get("JWT_ISSUER") or None,
            jwt_audience=env.get("JWT_AUDIENCE") or None,
            jwt_algorithms=_words(env.get("JWT_ALGORITHMS", "")) or cls.jwt_algorithms,
            jwt_public_key=env.get("JWT_PUBLIC_KEY") or None,
            jwt_jwks=env.get("JWT_JWKS") or None,
            jwt_leeway=_number(env, "JWT_LEEWAY_SECONDS", cls.jwt_leeway, 0, 300),
            credential_cache_seconds=_number(
                env, "CREDENTIAL_CACHE_SECONDS", cls.credential_cache_seconds, 0, 300
            ),
            quota_open_tables=int(
                _number(env, "QUOTA_OPEN_TABLES", cls.quota_open_tables, 0, 10**6)
            ),
            quota_streams=int(_number(env, "QUOTA_STREAMS", cls.quota_streams, 0, 10**6)),
            streams_per_address=int(
                _number(env, "STREAMS_PER_ADDRESS", cls.streams_per_address, 0, 10**6)
            ),
            body_read_timeout=_number(
                env, "BODY_READ_TIMEOUT_SECONDS", cls.body_read_timeout, 0, 300
            ),
            players_per_address=int(
                _number(env, "PLAYERS_PER_ADDRESS", cls.players_per_address, 0, 10**6)
            ),
            cors_origins=_origins(env, "CORS_ORIGINS"),
            play_money_grant=_optional_int(env, "PLAY_MONEY_GRANT"),
            play_money_daily=_optional_int(env, "PLAY_MONEY_DAILY"),
            pending_transfer_seconds=_number(
                env, "PENDING_TRANSFER_SECONDS", cls.pending_transfer_seconds, 1, 3600
            ),
            webhook_url=_webhook_url(env, "WEBHOOK_URL"),
            webhook_secrets=_webhook_secrets(env),
            webhook_turn_warning=_number(
                env, "WEBHOOK_TURN_WARNING_SECONDS", cls.webhook_turn_warning, 0, 3600
            ),
            webhook_timeout=_number(env, "WEBHOOK_TIMEOUT_SECONDS", cls.webhook_timeout, 0.1, 60),
            webhook_max_attempts=int(
                _number(env, "WEBHOOK_MAX_ATTEMPTS", cls.webhook_max_attempts, 1, 100)
            ),
            webhook_retry_base=_number(
                env, "WEBHOOK_RETRY_BASE_SECONDS", cls.webhook_retry_base, 0.01, 3600
            ),
            webhook_retry_max=_number(
                env, "WEBHOOK_RETRY_MAX_SECONDS", cls.webhook_retry_max, 0.01, 86_400
            ),
        )

    def wallet_amounts(self) -> tuple[int, int]:
        """The play-money grant and daily floor, their defaults filled in by mode."""
        default = PLAY_MONEY if self.players_mode == "open" else 0
        grant = default if self.play_money_grant is None else self.play_money_grant
        daily = default if self.play_money_daily is None else self.play_money_daily
        return grant, daily
