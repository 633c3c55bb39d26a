"""A webhook receiver that answers every POST after a fixed delay, for the notices'
benchmark (`bench.gateway.notices`): `python -m bench.gateway.receiver --delay 0.05`
listens on a free loopback port, prints it, and counts what it answered
(`GET /stats`: {"received": n})."""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Receiver(ThreadingHTTPServer):
    """A threading HTTP server that counts the POSTs it answered."""

    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, delay: float) -> None:
        """Listen on a free loopback port; answer each POST `delay` s after reading it."""
        super().__init__(("127.0.0.1", 0), Handler)
        self.delay = delay
        self.received = 0
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that goes away is no error of the receiver's."""


class Handler(BaseHTTPRequestHandler):
    """POST: 200 after the delay; GET /stats: the count."""

    protocol_version = "HTTP/1.1"
    server: Receiver

    def do_POST(self) -> None:
        """Read the notice, wait, answer 200 (keep-alive)."""
        self.rfile.read(int(self.headers.get("content-length") or 0))
        time.sleep(self.server.delay)
        with self.server.lock:
            self.server.received += 1
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        """The count answered so far."""
        body = json.dumps({"received": self.server.received}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        """Nothing is logged."""


def main() -> None:
    """Listen until killed; the first line printed is the port."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--delay", type=float, default=0.05, help="seconds before each answer")
    args = parser.parse_args()
    server = Receiver(args.delay)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
