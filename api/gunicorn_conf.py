"""gunicorn settings for the gateway, each overridable by an environment variable.

Threaded workers (`gthread`): long polls and event streams hold a thread each while
they wait, so each worker runs `GATEWAY_THREADS` of them. SIGTERM lets requests in
flight finish for up to `GATEWAY_GRACEFUL_TIMEOUT` seconds (a move is one Redis
script, so it is never cut in half).
"""

from __future__ import annotations

import os

bind = os.environ.get("GATEWAY_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GATEWAY_WORKERS", "2"))
worker_class = "gthread"
threads = int(os.environ.get("GATEWAY_THREADS", "32"))
timeout = int(os.environ.get("GATEWAY_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("GATEWAY_GRACEFUL_TIMEOUT", "20"))
keepalive = 5
# no control socket: it would live under $HOME, which a read-only container lacks
control_socket_disable = True
accesslog = "-" if os.environ.get("GATEWAY_ACCESS_LOG", "") in ("1", "true") else None
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info")
certfile = os.environ.get("GATEWAY_TLS_CERT") or None
keyfile = os.environ.get("GATEWAY_TLS_KEY") or None
