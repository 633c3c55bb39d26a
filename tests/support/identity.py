"""An identity provider for the tests: RSA and EC signing keys, a JWKS document, tokens.

`IdentityProvider` signs tokens with PyJWT as an operator's provider would, and writes
the JWKS document a gateway is configured with (`JWT_JWKS`). The forgeries a gateway
must refuse are made here too: a token with `alg: none`, and one signed with HS256
using the provider's public key (its PEM text) as the HMAC secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

from api.service.credentials import jwt_player_id


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _segment(value: dict[str, Any]) -> str:
    return _b64(json.dumps(value, separators=(",", ":")).encode())


@dataclass
class IdentityProvider:
    """A provider with an RSA key (kid `rsa-1`) and an EC P-256 key (kid `ec-1`)."""

    issuer: str = "https://id.cardroom.test/"
    audience: str = "cardroom"
    rsa_key: rsa.RSAPrivateKey = field(
        default_factory=lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    ec_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )

    def jwks(self) -> dict[str, Any]:
        """The provider's public keys as a JWKS document."""
        rsa_jwk = RSAAlgorithm.to_jwk(self.rsa_key.public_key(), as_dict=True)
        ec_jwk = ECAlgorithm.to_jwk(self.ec_key.public_key(), as_dict=True)
        return {
            "keys": [
                {**rsa_jwk, "kid": "rsa-1", "use": "sig", "alg": "RS256"},
                {**ec_jwk, "kid": "ec-1", "use": "sig", "alg": "ES256"},
            ]
        }

    def write_jwks(self, path: Path) -> Path:
        """Write the JWKS document to `path`; the path."""
        path.write_text(json.dumps(self.jwks()), encoding="utf-8")
        return path

    def public_pem(self) -> str:
        """The RSA public key as PEM text (what `JWT_PUBLIC_KEY` may hold)."""
        return (
            self.rsa_key.public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )

    def claims(self, subject: str, lifetime: float = 300.0, **overrides: Any) -> dict[str, Any]:
        """The claims of a token for `subject`, valid `lifetime` seconds from now."""
        now = int(time.time())
        return {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": subject,
            "iat": now,
            "exp": now + int(lifetime),
            **overrides,
        }

    def token(
        self, subject: str, algorithm: str = "RS256", kid: str | None = None, **claims: Any
    ) -> str:
        """A token for `subject` signed with the RSA (RS256) or EC (ES256) key."""
        key: Any = self.rsa_key if algorithm.startswith(("RS", "PS")) else self.ec_key
        kid = kid or ("rsa-1" if key is self.rsa_key else "ec-1")
        return jwt.encode(
            self.claims(subject, **claims), key, algorithm=algorithm, headers={"kid": kid}
        )

    def unsigned(self, subject: str) -> str:
        """A forgery: the claims of `subject` with `alg: none` and no signature."""
        header = {"alg": "none", "typ": "JWT", "kid": "rsa-1"}
        return f"{_segment(header)}.{_segment(self.claims(subject))}."

    def hmac_with_public_key(self, subject: str) -> str:
        """A forgery: HS256 with the provider's public key (PEM) as the shared secret."""
        header = {"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}
        signing_input = f"{_segment(header)}.{_segment(self.claims(subject))}"
        mac = hmac.new(self.public_pem().encode(), signing_input.encode(), hashlib.sha256)
        return f"{signing_input}.{_b64(mac.digest())}"

    def player_id(self, subject: str) -> str:
        """The gateway's player id for `subject` of this provider."""
        return jwt_player_id(self.issuer, subject)


def new_subject() -> str:
    """A subject nobody has used yet."""
    return "user-" + secrets.token_hex(6)


def bearer(credential: str) -> dict[str, str]:
    """The Authorization header carrying `credential`."""
    return {"Authorization": f"Bearer {credential}"}
