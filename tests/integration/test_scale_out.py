"""Scale-out on real engines: a Redis Cluster, several evaluators, TLS between services."""

from __future__ import annotations

import datetime
import random
import threading
from pathlib import Path

import grpc
import pytest
import redis
import redis.cluster
from grpc_health.v1 import health_pb2, health_pb2_grpc

from api.app import create_app
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.server import TlsFiles, create_server
from tests.support.deployment import image_healthcheck, run_with
from tests.support.gateway import Gateway, gateway_settings
from tests.support.play import chips, paiute_table, play_guts_game, play_paiute_turns, seeded_decks
from tests.support.processes import free_port


def test_guts_and_paiute_games_through_a_redis_cluster(
    redis_cluster: str, evaluator_address: str
) -> None:
    app = create_app(gateway_settings(redis_cluster, evaluator_address, redis_cluster=True))
    gateway = Gateway(app, app.test_client())
    try:
        for options in (
            {},
            {"declare": "sequential", "ghost": True},
            {"cap": 3, "cap_mode": "reserve", "wimp": True},
        ):
            assert play_guts_game(gateway, options, deals=4) >= 3
        # whether a deal is won depends on the cards: deal them from a seed, not the OS
        app.extensions["cardroom.service"].changes.deck_source = seeded_decks(13)
        table_id, players = paiute_table(gateway, players=3, deal_pause_seconds=0, max_reshuffles=0)
        gateway.act(table_id, players[0], action="start")
        play_paiute_turns(gateway, table_id, players, 120, random.Random(11))
        events = gateway.events(table_id)["events"]
        outcomes = {e["data"]["outcome"] for e in events if e["type"] == "deal_ended"}
        assert "won" in outcomes
        assert chips(gateway.table(table_id)) == 150
        lobby = gateway.call("GET", "/v1/tables?limit=10").get_json()
        assert len(lobby["tables"]) == 4
        # the tables really are spread over the three masters
        client = redis.cluster.RedisCluster.from_url(redis_cluster)
        slots = {
            client.keyslot(f"table:{{{table['id']}}}")  # type: ignore[no-untyped-call]
            for table in lobby["tables"]
        }
        assert len(slots) == 4
        client.close()
    finally:
        app.extensions["cardroom.clock"].stop()


def test_showdowns_complete_while_one_of_two_evaluators_stops(redis_url: str) -> None:
    replicas = [create_server(f"127.0.0.1:{free_port()}") for _ in range(2)]
    for replica in replicas:
        replica.start()
    address = ",".join(f"127.0.0.1:{replica.port}" for replica in replicas)
    app = create_app(gateway_settings(redis_url, address, evaluator_timeout=2.0))
    gateway = Gateway(app, app.test_client())
    try:
        for _ in range(10):
            ranked = gateway.call(
                "POST", "/v1/evaluate", json={"game": "guts3", "hands": ["Ah Kh Qh"]}
            )
            assert ranked.status_code == 200
        served = [
            replica.telemetry.registry.get_sample_value(
                "cardroom_evaluator_calls_total", {"method": "Evaluate", "outcome": "ok"}
            )
            or 0
            for replica in replicas
        ]
        assert sum(served) == 10
        assert all(count > 0 for count in served), served  # round robin used both
        # stop one replica while games are being played
        stopper = threading.Timer(0.3, replicas[0].stop, kwargs={"grace": 0})
        stopper.start()
        assert play_guts_game(gateway, {"ghost": True}, deals=6) >= 3
        stopper.join()  # the second run plays entirely on the one replica left
        assert play_guts_game(gateway, {"ghost": True, "cards": 2}, deals=4) >= 3
        refusals = [
            body
            for _, body in gateway.received
            if isinstance(body, dict) and body.get("status", 200) >= 500
        ]
        assert refusals == []
    finally:
        app.extensions["cardroom.clock"].stop()
        replicas[1].stop(grace=0)


def make_certificates(directory: Path) -> dict[str, Path]:
    """A CA, a server certificate for localhost and a client certificate, all signed by it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def write(path: Path, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate) -> None:
        path.with_suffix(".key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        path.with_suffix(".pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(name("cardroom test CA"))
        .issuer_name(name("cardroom test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    write(directory / "ca", ca_key, ca)
    for role in ("server", "client"):
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(f"cardroom {role}"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1))
        )
        if role == "server":
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False
            )
        write(directory / role, key, builder.sign(ca_key, hashes.SHA256()))
    return {name: directory / name for name in ("ca", "server", "client")}


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mutual-tls"])
def test_gateway_to_evaluator_over_tls(redis_url: str, tmp_path: Path, mutual: bool) -> None:
    files = make_certificates(tmp_path)
    tls = TlsFiles(
        str(files["server"].with_suffix(".pem")),
        str(files["server"].with_suffix(".key")),
        str(files["ca"].with_suffix(".pem")) if mutual else None,
    )
    server = create_server(f"127.0.0.1:{free_port()}", tls=tls)
    server.start()
    settings = {
        "evaluator_tls_ca": str(files["ca"].with_suffix(".pem")),
        "evaluator_tls_server_name": "localhost",
        "evaluator_timeout": 2.0,
    }
    if mutual:
        settings["evaluator_tls_cert"] = str(files["client"].with_suffix(".pem"))
        settings["evaluator_tls_key"] = str(files["client"].with_suffix(".key"))
    app = create_app(gateway_settings(redis_url, f"127.0.0.1:{server.port}", **settings))
    gateway = Gateway(app, app.test_client())
    try:
        assert gateway.call("GET", "/readyz").status_code == 200
        assert play_guts_game(gateway, {}, deals=3) >= 3
        # a gateway without the CA (or, for mTLS, without a client certificate) is refused
        bare = dict(settings)
        if mutual:
            bare.pop("evaluator_tls_cert")
            bare.pop("evaluator_tls_key")
        else:
            bare["evaluator_tls_ca"] = str(files["client"].with_suffix(".pem"))
        stranger = create_app(
            gateway_settings(
                redis_url,
                f"127.0.0.1:{server.port}",
                clock=False,
                **{**bare, "evaluator_timeout": 0.5},
            )
        )
        assert stranger.test_client().get("/readyz").status_code == 503
    finally:
        app.extensions["cardroom.clock"].stop()
        server.stop(grace=0)


def test_a_tls_evaluator_answers_probes_in_plaintext_on_its_health_port(tmp_path: Path) -> None:
    files = make_certificates(tmp_path)
    tls = TlsFiles(
        str(files["server"].with_suffix(".pem")),
        str(files["server"].with_suffix(".key")),
        str(files["ca"].with_suffix(".pem")),  # client certificates required
    )
    server = create_server(f"127.0.0.1:{free_port()}", tls=tls, health_address="127.0.0.1:0")
    server.start()
    assert server.health_port is not None
    health_address = f"127.0.0.1:{server.health_port}"
    try:
        with grpc.insecure_channel(health_address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "cardroom.evaluator.v1.Evaluator"):
                reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=30)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            # the health port serves nothing else: the evaluator stays behind mutual TLS
            with pytest.raises(grpc.RpcError) as refused:
                pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), timeout=30)
            assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            with pytest.raises(grpc.RpcError) as plaintext:
                health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=30
                )
            assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
        # the image's HEALTHCHECK finds the health port through EVALUATOR_HEALTH_LISTEN
        command = image_healthcheck("Dockerfile.evaluator")
        listen = f"[::]:{server.port}"
        probes = {"EVALUATOR_LISTEN": listen, "EVALUATOR_HEALTH_LISTEN": health_address}
        assert run_with(command, **probes) == 0
        assert run_with(command, EVALUATOR_LISTEN=listen) != 0  # plaintext to the TLS port
    finally:
        server.stop(grace=0)
    with grpc.insecure_channel(health_address) as channel:
        with pytest.raises(grpc.RpcError) as gone:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=30)
        assert gone.value.code() == grpc.StatusCode.UNAVAILABLE
