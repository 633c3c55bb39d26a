"""Who sent a request: the credential of its `Authorization: Bearer` header, resolved.

A bearer is one of four kinds:

- an **operator key**, configured as a secret (`OPERATOR_KEYS_FILE`, one per line,
  re-read when the file changes), looked for first, whatever its form (a key no client
  could send is warned of when it is read); any other bearer is told apart by its form:
- a **player key** (`crk_` and 43 URL-safe characters: 256 random bits), stored only
  as its SHA-256, looked up once and then held in this process for
  `cache_seconds` (a revoked key stops working on every gateway within that time, at
  once on the gateway that revoked it);
- a **JWT** of the operator's identity provider (three dot-separated parts), verified
  here with PyJWT against the configured public key or JWKS document: the algorithm on
  the allow-list, the issuer, the audience, expiry and not-before within a bounded skew;
  its `sub` names the player, created on first sight;
- a **seat token** (64 hex digits), the narrower credential a seat grant returns: it
  acts for that one seat at that one table.

A credential that was sent but does not hold is kept as the refusal: a write raises
it, a read of public data ignores it.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jwt

from api.adapters.players import PlayerStore, digest
from api.errors import ApiError, problem
from api.jsonio import JsonObject

log = logging.getLogger("cardroom.credentials")

PLAYER_KEY_PREFIX = "crk_"
_PLAYER_KEY = re.compile(r"crk_[A-Za-z0-9_-]{43}")
_SEAT_TOKEN = re.compile(r"[0-9a-f]{64}")
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# algorithms a JWT may be signed with: asymmetric only (an HMAC secret would have to be
# shared with every gateway, and "none" signs nothing)
ASYMMETRIC_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
MAX_JWT_LEEWAY = 300.0


def new_player_key() -> str:
    """A new player key: 256 random bits."""
    return PLAYER_KEY_PREFIX + secrets.token_urlsafe(32)


def jwt_player_id(issuer: str, subject: str) -> str:
    """The player id of an identity provider's subject: the same on every gateway."""
    return "p_" + hashlib.sha256(f"{issuer}\0{subject}".encode()).hexdigest()[:24]


def invalid_credential(detail: str, claim: str | None = None) -> ApiError:
    """Return 401 invalid_token: a credential that was sent and does not hold (`claim`,
    a JWT's claim that `detail` names)."""
    headers = {"WWW-Authenticate": 'Bearer realm="cardroom", error="invalid_token"'}
    if claim is None:
        return problem("invalid_token", detail, headers=headers)
    return problem("invalid_token", detail, headers=headers, claim=claim)


def missing_credential(needs: str = "player") -> ApiError:
    """Return 401 missing_token: this request needs a credential and came without one
    (`needs`: "player", "actor" for a player's credential or a seat token, "operator")."""
    headers = {"WWW-Authenticate": 'Bearer realm="cardroom"'}
    if needs == "operator":
        return problem(
            "missing_token",
            "This request needs an operator key in an 'Authorization: Bearer <credential>' header.",
            headers=headers,
        )
    if needs == "actor":
        return problem(
            "missing_token",
            "This request needs a player's credential or a seat token in an"
            " 'Authorization: Bearer <credential>' header.",
            headers=headers,
        )
    return problem(
        "missing_token",
        "This request needs a player's credential in an 'Authorization: Bearer"
        " <credential>' header.",
        headers=headers,
    )


@dataclass(frozen=True)
class Principal:
    """Who a request comes from.

    `kind` is "anonymous", "player" (with the player's id), "seat" (with the seat token)
    or "operator"; `refused` is the refusal of a credential that was sent and does not
    hold (the request is then anonymous for what is public).
    """

    kind: str = "anonymous"
    player: str | None = None
    token: str | None = None
    key_id: str | None = None
    operator: str | None = None
    refused: ApiError | None = None
    # a seat stream ticket's seat and player id at its table (instead of a token)
    seat: tuple[int, int] | None = None

    @functools.cached_property
    def scope(self) -> str:
        """What an Idempotency-Key belongs to: the player, the seat token or the operator."""
        if self.kind == "player":
            return f"player:{self.player}"
        if self.kind == "seat":
            return "seat:" + digest(self.token or "")
        if self.kind == "operator":
            return f"operator:{self.operator}"
        return "anonymous"

    def require_player(self) -> str:
        """The player's id; 401 for any other credential, or none."""
        if self.kind == "player" and self.player is not None:
            return self.player
        if self.refused is not None:
            raise self.refused
        if self.kind in ("seat", "operator"):
            held = {"seat": "A seat token acts only for its seat"}.get(
                self.kind, "An operator key creates players"
            )
            raise problem(
                "player_required",
                "{held}; this request needs the player's key (or the identity provider's token).",
                headers={"WWW-Authenticate": 'Bearer realm="cardroom", error="insufficient_scope"'},
                held=held,
            )
        raise missing_credential()

    def require_actor(self) -> None:
        """Accept a player or a seat token; 401 without one, 403 for an operator key."""
        if self.kind in ("player", "seat"):
            return
        if self.refused is not None:
            raise self.refused
        if self.kind == "operator":
            raise problem(
                "player_required",
                "An operator key creates players; a seat is played by its player or its"
                " seat token.",
                headers={"WWW-Authenticate": 'Bearer realm="cardroom", error="insufficient_scope"'},
            )
        raise missing_credential("actor")

    def require_operator(self) -> str:
        """The operator key's name; 401 without one, 403 for another credential."""
        if self.kind == "operator" and self.operator is not None:
            return self.operator
        if self.refused is not None:
            raise self.refused
        if self.kind == "anonymous":
            raise missing_credential("operator")
        raise problem("operator_required", "This request needs an operator key.")


ANONYMOUS = Principal()

# What an `Authorization: Bearer` header can carry (RFC 6750's b64token): a key with any
# other character (a space inside, a non-ASCII letter) could never be sent.
_BEARER = re.compile(r"[A-Za-z0-9._~+/-]+=*")


def unusable_warned(keys: list[str] | tuple[str, ...], source: str) -> list[str]:
    """`keys`, after a warning for each that no client could send as a bearer (named by
    its digest's first 8 hex digits, never by itself)."""
    for key in keys:
        if not _BEARER.fullmatch(key):
            log.warning(
                "an operator key can never be used: a bearer credential holds only"
                " letters, digits and -._~+/ (then = at its end)",
                extra={"operator_key": digest(key)[:8], "source": source},
            )
    return list(keys)


class OperatorKeys:
    """The operator keys: from a file (one per line, `#` comments), re-read when it changes.

    Keys are compared by their digests in constant time; a key is named in logs and
    metrics by the first 8 hex digits of its digest, never by itself.
    """

    def __init__(self, path: str | None, keys: tuple[str, ...] = ()) -> None:
        """Keys from `path` (if set) and `keys`."""
        self.path = path
        self.fixed = {digest(key) for key in unusable_warned(keys, "OPERATOR_KEYS") if key}
        self._digests: set[str] = set()
        self._mtime: float | None = None
        self._checked = 0.0
        self._lock = threading.Lock()
        self._current()  # read now: a key no client could send is warned of at once

    def _current(self) -> set[str]:
        if self.path is None:
            return self.fixed
        now = time.monotonic()
        if now - self._checked < 1.0:
            return self._digests | self.fixed
        with self._lock:
            self._checked = now
            try:
                mtime = os.stat(self.path).st_mtime
                if mtime != self._mtime:
                    lines = Path(self.path).read_text(encoding="utf-8").splitlines()
                    keys = [
                        line.strip()
                        for line in lines
                        if line.strip() and not line.strip().startswith("#")
                    ]
                    self._digests = {digest(key) for key in unusable_warned(keys, self.path)}
                    self._mtime = mtime
            except OSError as error:
                log.warning("operator keys unreadable", extra={"error": type(error).__name__})
        return self._digests | self.fixed

    def name_of(self, key: str) -> str | None:
        """The key's name (its digest's first 8 hex digits) if it is an operator key."""
        wanted = digest(key)
        for known in self._current():
            if hmac.compare_digest(known, wanted):
                return wanted[:8]
        return None

    @property
    def configured(self) -> bool:
        """Whether any operator key can be configured (a file, or fixed keys)."""
        return self.path is not None or bool(self.fixed)


@dataclass(frozen=True)
class JwtSettings:
    """How identity-provider tokens are verified (docs/players.md)."""

    issuer: str
    audience: str
    algorithms: tuple[str, ...]
    public_key: str | None = None
    jwks: str | None = None  # a JWKS document's path or https URL
    leeway: float = 30.0


class JwtVerifier:
    """Identity-provider tokens verified with PyJWT; `sub` names the player."""

    def __init__(self, config: JwtSettings) -> None:
        """Verify against `config`'s public key, or the keys of its JWKS document."""
        unknown = set(config.algorithms) - ASYMMETRIC_ALGORITHMS
        if unknown or not config.algorithms:
            raise ValueError(
                f"JWT_ALGORITHMS may name only asymmetric algorithms, not {sorted(unknown)}"
            )
        if not 0 <= config.leeway <= MAX_JWT_LEEWAY:
            raise ValueError(f"JWT_LEEWAY_SECONDS is at most {MAX_JWT_LEEWAY:.0f}")
        self.config = config
        self._jwks_client: jwt.PyJWKClient | None = None
        self._file_keys: dict[str, jwt.PyJWK] | None = None
        self._public_key: str | None = None
        if config.public_key is not None:
            text = config.public_key
            if not text.lstrip().startswith("-----"):
                text = Path(text).read_text(encoding="utf-8")
            self._public_key = text
        elif config.jwks is not None:
            if config.jwks.startswith(("https://", "http://")):
                self._jwks_client = jwt.PyJWKClient(config.jwks, cache_keys=True, lifespan=300)
            else:
                document = jwt.PyJWKSet.from_json(Path(config.jwks).read_text(encoding="utf-8"))
                self._file_keys = {str(key.key_id): key for key in document.keys}
        else:
            raise ValueError("a JWT issuer needs JWT_PUBLIC_KEY or JWT_JWKS")

    def _key(self, token: str) -> str | jwt.PyJWK:
        if self._public_key is not None:
            return self._public_key
        header = jwt.get_unverified_header(token)
        kid = header.get("kid")
        if self._file_keys is not None:
            if kid not in self._file_keys:
                raise invalid_credential("The token's key id is not among the issuer's keys.")
            return self._file_keys[kid]
        assert self._jwks_client is not None
        try:
            return self._jwks_client.get_signing_key_from_jwt(token)
        except jwt.PyJWKClientConnectionError:
            raise problem(
                "identity_provider_unavailable",
                "The identity provider's keys cannot be fetched; retry shortly.",
                headers={"Retry-After": "5"},
            ) from None
        except jwt.PyJWKClientError:
            raise invalid_credential("The token's key id is not among the issuer's keys.") from None

    def verify(self, token: str) -> JsonObject:
        """The token's claims; 401 invalid_token saying what does not hold."""
        config = self.config
        try:
            claims: JsonObject = jwt.decode(
                token,
                key=self._key(token),
                algorithms=list(config.algorithms),
                audience=config.audience,
                issuer=config.issuer,
                leeway=config.leeway,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise invalid_credential("The token has expired.") from None
        except jwt.ImmatureSignatureError:
            raise invalid_credential("The token is not valid yet (nbf or iat).") from None
        except jwt.InvalidAudienceError:
            raise invalid_credential("The token is for another audience.") from None
        except jwt.InvalidIssuerError:
            raise invalid_credential("The token is from another issuer.") from None
        except jwt.InvalidAlgorithmError:
            raise invalid_credential("The token's algorithm is not accepted.") from None
        except jwt.MissingRequiredClaimError as error:
            raise invalid_credential(
                "The token has no {claim!r} claim.", claim=error.claim
            ) from None
        except jwt.InvalidTokenError:
            raise invalid_credential("The token's signature or form is not valid.") from None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not 1 <= len(subject) <= 255:
            raise invalid_credential("The token's 'sub' claim is not a string of 1 to 255.")
        return claims


class Credentials:
    """Bearers resolved to principals, player keys held for `cache_seconds` in this process."""

    def __init__(
        self,
        players: PlayerStore,
        operators: OperatorKeys,
        jwt_verifier: JwtVerifier | None = None,
        on_jwt_player: Callable[[str, JsonObject], None] | None = None,
        cache_seconds: float = 5.0,
        cache_size: int = 10_000,
    ) -> None:
        """Look player keys up in `players`; `on_jwt_player` makes a JWT's player exist."""
        self.players = players
        self.operators = operators
        self.jwt_verifier = jwt_verifier
        self.on_jwt_player = on_jwt_player
        self.cache_seconds = cache_seconds
        self.cache_size = cache_size
        self._cache: OrderedDict[str, tuple[float, Principal]] = OrderedDict()
        self._lock = threading.Lock()

    def _cached(self, key: str) -> Principal | None:
        with self._lock:
            held = self._cache.get(key)
            if held is None:
                return None
            if held[0] <= time.monotonic():
                del self._cache[key]
                return None
            self._cache.move_to_end(key)
            return held[1]

    def _hold(self, key: str, principal: Principal, until: float) -> None:
        with self._lock:
            self._cache[key] = (until, principal)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def forget_player(self, player: str) -> None:
        """Drop every credential of `player` held here (a key was revoked)."""
        with self._lock:
            for key in [k for k, (_, p) in self._cache.items() if p.player == player]:
                del self._cache[key]

    def resolve(self, authorization: str | None) -> Principal:
        """The principal of an Authorization header (None: anonymous)."""
        if authorization is None:
            return ANONYMOUS
        scheme, _, bearer = authorization.partition(" ")
        bearer = bearer.strip()
        if scheme.lower() != "bearer" or not bearer:
            return Principal(
                refused=invalid_credential(
                    "Send the credential as 'Authorization: Bearer <credential>'."
                )
            )
        try:
            return self._resolve(bearer)
        except ApiError as error:
            if error.status >= 500:
                raise
            return Principal(refused=error)

    def _resolve(self, bearer: str) -> Principal:
        # the operator's list first: an operator key may have any shape (`openssl rand
        # -hex 32` makes one shaped like a seat token), and is never read as another kind
        name = self.operators.name_of(bearer)
        if name is not None:
            return Principal("operator", operator=name)
        if _SEAT_TOKEN.fullmatch(bearer):
            return Principal("seat", token=bearer)
        if _PLAYER_KEY.fullmatch(bearer):
            return self._player_key(bearer)
        if _JWT.fullmatch(bearer) and self.jwt_verifier is not None:
            return self._jwt(bearer)
        raise invalid_credential("The credential is not one this service issued or accepts.")

    def _player_key(self, key: str) -> Principal:
        key_digest = digest(key)
        held = self._cached(key_digest)
        if held is not None:
            return held
        owner = self.players.key_owner(key_digest)
        if owner is None:
            raise invalid_credential("The player key is unknown or was revoked.")
        principal = Principal("player", player=owner["player"], key_id=owner["key_id"])
        self._hold(key_digest, principal, time.monotonic() + self.cache_seconds)
        return principal

    def _jwt(self, token: str) -> Principal:
        assert self.jwt_verifier is not None
        token_digest = "jwt:" + digest(token)
        held = self._cached(token_digest)
        if held is not None:
            return held
        claims = self.jwt_verifier.verify(token)
        player = jwt_player_id(str(claims["iss"]), str(claims["sub"]))
        if self.on_jwt_player is not None:
            self.on_jwt_player(player, claims)
        principal = Principal("player", player=player)
        expires = claims["exp"]
        assert isinstance(expires, int | float | str)  # PyJWT checked that int() reads it
        # held no longer than the token itself is valid
        until = min(
            time.monotonic() + self.cache_seconds,
            time.monotonic() + float(expires) - time.time(),
        )
        if until > time.monotonic():
            self._hold(token_digest, principal, until)
        return principal
