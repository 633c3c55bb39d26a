"""`python -m evaluator`: serve the hand evaluator until SIGTERM or SIGINT.

Every setting comes from a flag or, failing that, from the environment:

| flag              | variable                   | default      |
|-------------------|----------------------------|--------------|
| --listen          | EVALUATOR_LISTEN           | [::]:50051   |
| --processes       | EVALUATOR_PROCESSES        | 0: the cores |
| --workers         | EVALUATOR_WORKERS          | 8            |
| --metrics-port    | EVALUATOR_METRICS_PORT     | 9100 (0: off)|
| --metrics-address | EVALUATOR_METRICS_ADDRESS  | 0.0.0.0      |
| --grace           | EVALUATOR_GRACE_SECONDS    | 10           |
| --tls-cert        | EVALUATOR_TLS_CERT         | (plaintext)  |
| --tls-key         | EVALUATOR_TLS_KEY          |              |
| --tls-client-ca   | EVALUATOR_TLS_CLIENT_CA    | (no mTLS)    |
| --health-listen   | EVALUATOR_HEALTH_LISTEN    | (none)       |
| --log-level       | LOG_LEVEL                  | info         |
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, multiprocess, start_http_server

from evaluator.processes import (
    Supervisor,
    WorkerSettings,
    available_cores,
    metrics_directory,
    stop_on_signals,
)
from evaluator.server import TlsFiles, create_server, warm_up
from evaluator.telemetry import configure_logging

log = logging.getLogger("evaluator")


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags, with defaults taken from the environment."""
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", default=env("EVALUATOR_LISTEN", "[::]:50051"))
    parser.add_argument(
        "--processes",
        type=int,
        default=int(env("EVALUATOR_PROCESSES", "0")),
        help="processes serving the one port (0: one a core this process may use)",
    )
    parser.add_argument("--workers", type=int, default=int(env("EVALUATOR_WORKERS", "8")))
    parser.add_argument(
        "--metrics-port", type=int, default=int(env("EVALUATOR_METRICS_PORT", "9100"))
    )
    parser.add_argument(
        "--metrics-address",
        default=env("EVALUATOR_METRICS_ADDRESS", "0.0.0.0"),
        help="the address the metrics listen on (`make run`: 127.0.0.1)",
    )
    parser.add_argument("--grace", type=float, default=float(env("EVALUATOR_GRACE_SECONDS", "10")))
    parser.add_argument("--tls-cert", default=env("EVALUATOR_TLS_CERT"))
    parser.add_argument("--tls-key", default=env("EVALUATOR_TLS_KEY"))
    parser.add_argument("--tls-client-ca", default=env("EVALUATOR_TLS_CLIENT_CA"))
    parser.add_argument(
        "--health-listen",
        default=env("EVALUATOR_HEALTH_LISTEN"),
        help="also answer the gRPC health service alone, in plaintext, here (for probes)",
    )
    parser.add_argument("--log-level", default=env("LOG_LEVEL", "info"))
    arguments = parser.parse_args(argv)
    if bool(arguments.tls_cert) != bool(arguments.tls_key):
        parser.error("--tls-cert and --tls-key go together")
    if arguments.tls_client_ca and not arguments.tls_cert:
        parser.error("--tls-client-ca needs --tls-cert and --tls-key")
    if arguments.processes < 0:
        parser.error("--processes must be 0 (the cores) or more")
    arguments.processes = arguments.processes or available_cores()
    return arguments


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until a signal asks to stop, then stop gracefully."""
    arguments = parse_arguments(argv)
    configure_logging(arguments.log_level)
    stopping = stop_on_signals()
    if arguments.processes > 1:
        raise SystemExit(serve_processes(arguments, stopping))
    tls = None
    if arguments.tls_cert:
        tls = TlsFiles(arguments.tls_cert, arguments.tls_key, arguments.tls_client_ca)
    warm_up()
    evaluator = create_server(
        arguments.listen, arguments.workers, tls, health_address=arguments.health_listen or None
    )
    if arguments.metrics_port:
        start_http_server(
            arguments.metrics_port,
            addr=arguments.metrics_address,
            registry=evaluator.telemetry.registry,
        )
    evaluator.start()
    log.info(
        "evaluator listening",
        extra={
            "address": arguments.listen,
            "port": evaluator.port,
            "tls": tls is not None,
            "mutual_tls": bool(tls and tls.client_ca),
            "metrics_port": arguments.metrics_port,
            "health_port": evaluator.health_port,
            "processes": 1,
        },
    )
    stopping.wait()
    log.info("evaluator stopping", extra={"grace_seconds": arguments.grace})
    evaluator.stop(arguments.grace)
    log.info("evaluator stopped")


def serve_processes(arguments: argparse.Namespace, stopping: threading.Event) -> int:
    """Serve from `arguments.processes` workers until `stopping`; the exit code."""
    directory, clean_up = metrics_directory()
    tls = None
    if arguments.tls_cert:
        tls = (arguments.tls_cert, arguments.tls_key, arguments.tls_client_ca or None)
    settings = WorkerSettings(
        arguments.listen,
        arguments.workers,
        arguments.grace,
        arguments.log_level,
        tls,
        arguments.health_listen or None,
    )
    try:
        supervisor = Supervisor(settings, arguments.processes)
        if arguments.metrics_port:
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
            start_http_server(
                arguments.metrics_port, addr=arguments.metrics_address, registry=registry
            )
        supervisor.start()
    except OSError as error:
        log.error("evaluator did not start", extra={"reason": str(error)})
        clean_up()
        return 1
    log.info(
        "evaluator listening",
        extra={
            "address": arguments.listen,
            "port": supervisor.port,
            "tls": tls is not None,
            "mutual_tls": bool(tls and tls[2]),
            "metrics_port": arguments.metrics_port,
            "health_listen": supervisor.settings.health_listen,
            "processes": arguments.processes,
            "pids": supervisor.pids(),
        },
    )
    healthy = False
    try:
        healthy = supervisor.watch(stopping)
    finally:
        log.info("evaluator stopping", extra={"grace_seconds": arguments.grace})
        supervisor.stop(arguments.grace)
        clean_up()
    if not healthy:
        log.error("evaluator stopped: its processes died too often")
        return 1
    log.info("evaluator stopped")
    return 0


if __name__ == "__main__":
    main()
