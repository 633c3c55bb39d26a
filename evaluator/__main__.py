"""`python -m evaluator`: serve the hand evaluator until SIGTERM or SIGINT.

Every setting comes from a flag or, failing that, from the environment:

| flag              | variable                   | default      |
|-------------------|----------------------------|--------------|
| --listen          | EVALUATOR_LISTEN           | [::]:50051   |
| --workers         | EVALUATOR_WORKERS          | 8            |
| --metrics-port    | EVALUATOR_METRICS_PORT     | 9100 (0: off)|
| --grace           | EVALUATOR_GRACE_SECONDS    | 10           |
| --tls-cert        | EVALUATOR_TLS_CERT         | (plaintext)  |
| --tls-key         | EVALUATOR_TLS_KEY          |              |
| --tls-client-ca   | EVALUATOR_TLS_CLIENT_CA    | (no mTLS)    |
| --health-listen   | EVALUATOR_HEALTH_LISTEN    | (none)       |
| --log-level       | LOG_LEVEL                  | info         |
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import signal
import threading
from collections.abc import Sequence
from types import FrameType

import numpy as np
from prometheus_client import start_http_server

from evaluator.batch import rank_guts_batch, rank_paiute_batch
from evaluator.paiute import Valuation
from evaluator.server import TlsFiles, create_server
from evaluator.telemetry import configure_logging

log = logging.getLogger("evaluator")


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Flags, with defaults taken from the environment."""
    env = os.environ.get
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__.split("\n")[0])
    parser.add_argument("--listen", default=env("EVALUATOR_LISTEN", "[::]:50051"))
    parser.add_argument("--workers", type=int, default=int(env("EVALUATOR_WORKERS", "8")))
    parser.add_argument(
        "--metrics-port", type=int, default=int(env("EVALUATOR_METRICS_PORT", "9100"))
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
    return arguments


def warm_up() -> None:
    """Build the lookup tables before reporting SERVING, so no caller waits for them."""
    rank_guts_batch(np.array([[0, 4]], dtype=np.uint8), 2)
    rank_guts_batch(np.array([[0, 4, 8]], dtype=np.uint8), 3)
    for size, valuation in itertools.product((5, 6), Valuation):
        rank_paiute_batch(np.arange(size, dtype=np.uint8).reshape(1, size), 2, valuation)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until a signal asks to stop, then stop gracefully."""
    arguments = parse_arguments(argv)
    configure_logging(arguments.log_level)
    tls = None
    if arguments.tls_cert:
        tls = TlsFiles(arguments.tls_cert, arguments.tls_key, arguments.tls_client_ca)
    warm_up()
    evaluator = create_server(
        arguments.listen, arguments.workers, tls, health_address=arguments.health_listen or None
    )
    if arguments.metrics_port:
        start_http_server(arguments.metrics_port, registry=evaluator.telemetry.registry)
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
        },
    )
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    stopping.wait()
    log.info("evaluator stopping", extra={"grace_seconds": arguments.grace})
    evaluator.stop(arguments.grace)
    log.info("evaluator stopped")


if __name__ == "__main__":
    main()
