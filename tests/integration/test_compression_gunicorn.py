"""Compression through gunicorn, over real HTTP: the bytes on the wire, decoded by hand."""

from __future__ import annotations

import gzip
import json
import socket
from pathlib import Path

import brotli

from tests.support.processes import GunicornGateway, Reply


def body_of(reply: Reply) -> bytes:
    """The body as the server meant it, decoded from its Content-Encoding."""
    assert reply.headers["content-length"] == str(len(reply.data))
    coding = reply.headers.get("content-encoding")
    if coding == "br":
        return bytes(brotli.decompress(reply.data))
    if coding == "gzip":
        return gzip.decompress(reply.data)
    assert coding is None
    return reply.data


def test_answers_on_the_wire_in_br_gzip_and_identity(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    gateway = GunicornGateway(redis_url, evaluator_address, tmp_path / "gunicorn.log")
    gateway.start()
    http = gateway.http
    try:
        table_id = http.create(deal_pause_seconds=60)
        ann = http.sit(table_id, "ann")
        bo = http.sit(table_id, "bo")
        assert http.act(table_id, ann, action="start").status_code == 200
        path = f"/v1/tables/{table_id}"
        replies = {
            accept: http.call("GET", path, ann, headers={"Accept-Encoding": accept})
            for accept in ("br;q=1, gzip;q=0.5", "gzip", "identity", "br;q=0, gzip;q=0")
        }
        codings = [reply.headers.get("content-encoding") for reply in replies.values()]
        assert codings == ["br", "gzip", None, None]
        bodies = [json.loads(body_of(reply)) for reply in replies.values()]
        assert all(body == bodies[0] for body in bodies)
        for reply in replies.values():
            assert "accept-encoding" in reply.headers["vary"].lower()

        tag = replies["gzip"].headers["etag"]
        unchanged = http.call(
            "GET", path, ann, headers={"Accept-Encoding": "gzip", "If-None-Match": tag}
        )
        assert unchanged.status_code == 304
        assert unchanged.headers["etag"] == tag
        moved = http.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            ann,
            json_body={"action": "declare", "choice": "in"},
            headers={"If-Match": tag, "Accept-Encoding": "gzip, br"},
        )
        assert moved.status_code == 200, body_of(moved)

        small = http.call("GET", "/healthz", headers={"Accept-Encoding": "gzip, br"})
        assert "content-encoding" not in small.headers

        # the event stream: plain text, its first events there while the stream stays open
        with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as link:
            link.sendall(
                f"GET /v1/tables/{table_id}/events/stream HTTP/1.1\r\n"
                "Host: 127.0.0.1\r\nAccept-Encoding: gzip, br\r\n\r\n".encode()
            )
            received = b""
            while b"event: seated" not in received:
                chunk = link.recv(65536)
                assert chunk, received
                received += chunk
        head = received.split(b"\r\n\r\n", 1)[0].lower()
        assert b"content-type: text/event-stream" in head
        assert b"content-encoding" not in head

        # and a move with the tag of a compressed read goes on matching
        read = http.call("GET", path, bo, headers={"Accept-Encoding": "br"})
        played = http.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            bo,
            json_body={"action": "declare", "choice": "in"},
            headers={"If-Match": read.headers["etag"], "Accept-Encoding": "br"},
        )
        assert played.status_code == 200, body_of(played)
        assert played.headers.get("content-encoding") == "br"
        assert json.loads(body_of(played))["table"]["phase"] == "between_deals"
    finally:
        assert gateway.stop() == 0
