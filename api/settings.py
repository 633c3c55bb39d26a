"""The gateway's settings, read once from the environment and frozen."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


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


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={raw!r} is not a boolean (true/false)")


@dataclass(frozen=True)
class Settings:
    """Everything the gateway reads from its environment (see the README's table)."""

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
    long_poll_max: float = 30.0
    stream_max_seconds: float = 300.0
    idempotency_ttl: int = 24 * 3600
    log_level: str = "info"

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
            long_poll_max=_number(env, "LONG_POLL_MAX_SECONDS", cls.long_poll_max, 0, 300),
            stream_max_seconds=_number(
                env, "STREAM_MAX_SECONDS", cls.stream_max_seconds, 1, 86_400
            ),
            idempotency_ttl=int(
                _number(env, "IDEMPOTENCY_TTL_SECONDS", cls.idempotency_ttl, 60, 7 * 86_400)
            ),
            log_level=env.get("LOG_LEVEL") or cls.log_level,
        )
