"""gunicorn settings for the gateway, each overridable by an environment variable.

Each worker is one gevent loop (`GATEWAY_WORKER_CLASS=gevent`, the default): a waiting
event stream or long poll costs a greenlet, not a thread, and a worker holds up to
`GATEWAY_WORKER_CONNECTIONS` of them. gRPC is made cooperative right after the worker
patches the standard library and before the app opens its evaluator channel. It was
chosen by `make bench-gateway`: on two cores it played 155 whole deals/s against 111
for threaded workers, with moves at 1,094/s against 837 (docs/performance.md).

Each worker listens on a socket of its own (`SO_REUSEPORT`, `GATEWAY_REUSE_PORT`, on by
default) and the kernel spreads new connections over them by their addresses: with one
shared socket, a burst of keep-alive connections could all be taken by the worker that
woke first (seen: 32 of 32), leaving the other idle for as long as they lasted. The cost:
connections still waiting in a worker's queue when that worker dies are reset.

`GATEWAY_WORKER_CLASS=gthread` runs threaded workers instead: long polls and event
streams hold a thread each while they wait, so each worker runs `GATEWAY_THREADS` of
them. SIGTERM lets requests in flight finish for up to `GATEWAY_GRACEFUL_TIMEOUT`
seconds (a move is one Redis script, so it is never cut in half).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import Any

bind = os.environ.get("GATEWAY_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GATEWAY_WORKERS", "2"))
WORKER_CLASSES = ("gthread", "gevent")
worker_class = os.environ.get("GATEWAY_WORKER_CLASS", "gevent").strip() or "gevent"
if worker_class not in WORKER_CLASSES:
    raise ValueError(f"GATEWAY_WORKER_CLASS={worker_class!r} is not one of {WORKER_CLASSES}")
worker_connections = int(os.environ.get("GATEWAY_WORKER_CONNECTIONS", "1000"))
threads = int(os.environ.get("GATEWAY_THREADS", "32"))
timeout = int(os.environ.get("GATEWAY_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("GATEWAY_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
reuse_port = os.environ.get("GATEWAY_REUSE_PORT", "true").strip().lower() in ("1", "true", "yes")
# no control socket: it would live under $HOME, which a read-only container lacks
control_socket_disable = True
accesslog = "-" if os.environ.get("GATEWAY_ACCESS_LOG", "") in ("1", "true") else None
# gunicorn's default format logs the request line, query string included: an event
# stream's `?ticket=` would be written down; the path alone is (%(U)s, not %(r)s)
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
certfile = os.environ.get("GATEWAY_TLS_CERT") or None
keyfile = os.environ.get("GATEWAY_TLS_KEY") or None


def post_fork(server: object, worker: object) -> None:
    """Answer gunicorn's own refusals as problem+json; in a gevent worker, patch the
    standard library and make gRPC cooperative."""
    if worker_class == "gevent":
        # gunicorn patches later, in the worker's init; grpc must be set up after the
        # patch and before any channel exists, and the app builds its channel on load.
        # The patch comes before any of the gateway's own imports: a module that took
        # `ssl.SSLContext` before it (redis.asyncio, PyJWT's JWKS client) would keep the
        # blocking one, and gevent would warn at every worker's start.
        from gevent import monkey

        monkey.patch_all()
        import grpc.experimental.gevent

        grpc.experimental.gevent.init_gevent()
    from api.runtime.answers import answer_problems

    answer_problems()


def on_starting(server: Any) -> None:
    """Make the memory the workers share (each table's last commit and a copy of it, for
    their warm copies: api.adapters.host_commits) before they are forked; a bad
    HOST_COPIES stops it in one line. Stop at once, in one line,
    when the address is taken: each worker would bind it beside another server
    (`reuse_port`) or fail and be started again every 5 s, without end."""
    from api.adapters import host_commits  # the standard library only: safe before the patch
    from api.settings import host_copies

    try:
        copies = host_copies(os.environ)
    except ValueError as error:
        server.log.error("the gateway cannot start: %s", error)
        sys.exit(1)
    host_commits.SHARED = host_commits.HostCommits.create(copies=copies)
    # a master re-executed by USR2, or given its sockets by systemd, binds nothing itself
    inherited = server.master_pid or os.environ.get("LISTEN_FDS")
    addresses = [] if inherited else server.cfg.address
    for host, port in (address for address in addresses if isinstance(address, tuple)):
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
            # no SO_REUSEPORT here: the bind fails whenever another socket listens there
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                reason = error.strerror
                server.log.error("the gateway cannot listen on %s:%d: %s", host, port, reason)
                sys.exit(1)
    if reuse_port:
        # the master holds no socket: gunicorn's own line would name none (when_ready says it)
        server.log.error_log.addFilter(lambda record: record.msg != "Listening at: %s (%s)")


def when_ready(server: Any) -> None:
    """Say where the gateway listens: with `reuse_port` the master holds no socket, so
    gunicorn's own "Listening at" line names none."""
    scheme = "https" if certfile else "http"
    sockets = "one SO_REUSEPORT socket per worker" if reuse_port else "one shared socket"
    server.log.info("Listening at: %s://%s (%s, %d workers)", scheme, bind, sockets, workers)


def post_worker_init(worker: object) -> None:
    """The app is loaded: freeze its objects out of garbage collection (runtime.gc_policy)."""
    from api.runtime.gc_policy import PAUSES, settle_after_load
    from api.settings import Settings

    PAUSES.install()  # the collection of what loading left is the first one timed
    settle_after_load(Settings.from_env().gc_threshold)
