"""Who is calling: a verified token's tenant and rights, never a tool's arguments.

Over HTTP the server is an OAuth 2.1 resource server (the MCP authorization spec): a
bearer JWT is checked for its signature, ``iss``, ``aud``, ``exp`` and ``nbf``, and its
claims ``memora_org``, ``memora_user`` and ``memora_agent`` name the tenant, ``scope``
its rights. For self-hosting without an identity provider, API keys: a file of one line
per key (its SHA-256, tenant and scopes), read again whenever it changes.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import jwt
from mcp.server.auth.provider import AccessToken

from memora_ogm.mcp import SCOPES as SCOPES  # re-exported: the rights tokens carry

#: Every right (a stdio server's one tenant has all).
READ, WRITE, DELETE, FORGET = SCOPES
#: The claims that name the tenant.
ORG_CLAIM, USER_CLAIM, AGENT_CLAIM = "memora_org", "memora_user", "memora_agent"
#: Signature algorithms accepted (never ``none``, never a shared secret: the server holds
#: only public keys).
ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"]
#: Clock skew allowed on ``exp`` and ``nbf``, in seconds.
LEEWAY = 5


@dataclass(frozen=True)
class Tenant:
    """The organisation, user and agent a caller acts as, and the scopes it holds."""

    org_id: str
    user_id: str
    agent_id: str
    scopes: frozenset[str] = frozenset(SCOPES)


class TenantToken(AccessToken):
    """A verified token with the tenant it names (what a tool reads back)."""

    org_id: str
    user_id: str
    agent_id: str

    def tenant(self) -> Tenant:
        return Tenant(self.org_id, self.user_id, self.agent_id, frozenset(self.scopes))


def _tenant_claims(claims: Mapping[str, Any]) -> tuple[str, str, str] | None:
    values = [claims.get(name) for name in (ORG_CLAIM, USER_CLAIM, AGENT_CLAIM)]
    if not all(isinstance(value, str) and value.strip() for value in values):
        return None
    org_id, user_id, agent_id = values
    return org_id, user_id, agent_id  # type: ignore[return-value]


class JwtVerifier:
    """Bearer JWTs signed by an identity provider: keys from its JWKS URL or a PEM file."""

    def __init__(
        self,
        issuer: str,
        audience: str,
        *,
        jwks_url: str | None = None,
        public_key: str | None = None,
    ) -> None:
        if (jwks_url is None) == (public_key is None):
            raise ValueError("give the token keys as one of a JWKS URL and a public key file")
        self.issuer = issuer
        self.audience = audience
        self._jwks = jwt.PyJWKClient(jwks_url, cache_keys=True) if jwks_url else None
        self._key = public_key

    def _key_of(self, token: str) -> Any:
        """The key that verifies ``token`` (from the JWKS, fetched and cached, by its
        ``kid``; else the one public key)."""
        if self._jwks is not None:
            return self._jwks.get_signing_key_from_jwt(token).key
        return self._key

    async def check(self, token: str) -> TenantToken | str:
        """The token's tenant and scopes, or why it is refused: forged, expired, not yet
        valid, foreign (issuer, audience) or tenant-less."""
        try:
            key: Any = (
                await anyio.to_thread.run_sync(self._key_of, token)
                if self._jwks is not None
                else self._key
            )
            claims = jwt.decode(
                token,
                key,
                algorithms=ALGORITHMS,
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError) as error:
            return _refusal(error)
        tenant = _tenant_claims(claims)
        if tenant is None:
            return f"the token names no tenant ({ORG_CLAIM}, {USER_CLAIM}, {AGENT_CLAIM})"
        scope = claims.get("scope", "")
        return TenantToken(
            token=token,
            client_id=str(claims.get("azp") or claims.get("client_id") or claims.get("sub", "")),
            scopes=scope.split() if isinstance(scope, str) else [],
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=claims.get("sub"),
            org_id=tenant[0],
            user_id=tenant[1],
            agent_id=tenant[2],
        )


#: Why a JWT is refused, by PyJWT's error (the first that matches), for the 401 and the log.
_REFUSALS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "the token expired"),
    (jwt.ImmatureSignatureError, "the token is not valid yet"),
    (jwt.InvalidIssuerError, "the token is from another issuer"),
    (jwt.InvalidAudienceError, "the token is for another audience"),
    (jwt.InvalidSignatureError, "the token's signature does not verify"),
    (jwt.PyJWKClientError, "the token's signing key is not in the JWKS"),
    (jwt.InvalidAlgorithmError, "the token's algorithm is not accepted"),
    (jwt.DecodeError, "the token is not a well-formed JWT"),
)


def _refusal(error: Exception) -> str:
    if isinstance(error, jwt.MissingRequiredClaimError):
        return f"the token lacks its {error.claim!r} claim"
    return next(
        (said for kind, said in _REFUSALS if isinstance(error, kind)), "the token is invalid"
    )


def key_hash(key: str) -> str:
    """How a key is kept in the keys file: its SHA-256 (keys are random, 256 bits)."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_api_key(tenant: Tenant) -> tuple[str, str]:
    """A new random key, and its line for the keys file (the key itself is not in it)."""
    key = "mok_" + secrets.token_urlsafe(32)
    scopes = ",".join(scope for scope in SCOPES if scope in tenant.scopes)
    return key, f"{key_hash(key)} {tenant.org_id} {tenant.user_id} {tenant.agent_id} {scopes}"


class ApiKeys:
    """The keys of a file, read again when it changes (so a removed line revokes its key
    on the next call)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None
        self._keys: dict[str, Tenant] = {}
        self._load()

    def _load(self) -> None:
        stat = self.path.stat()
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen == self._seen:
            return
        keys = {}
        for number, line in enumerate(self.path.read_text().splitlines(), start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 5 or len(fields[0]) != 64:
                raise ValueError(
                    f"{self.path}:{number}: expected 'SHA256 ORG USER AGENT SCOPE,SCOPE'"
                )
            digest, org_id, user_id, agent_id, scopes = fields
            keys[digest] = Tenant(org_id, user_id, agent_id, frozenset(scopes.split(",")))
        self._keys, self._seen = keys, seen

    async def check(self, token: str) -> TenantToken | str:
        """The key's tenant, or why it is refused."""
        with self._lock:
            try:
                self._load()
            except (OSError, ValueError):
                self._keys, self._seen = {}, None  # a file gone or broken admits nobody
        digest = key_hash(token)
        tenant = next((t for d, t in self._keys.items() if hmac.compare_digest(d, digest)), None)
        if tenant is None:
            return "unknown API key"
        return TenantToken(
            token=token,
            client_id=f"api-key:{digest[:12]}",
            scopes=sorted(tenant.scopes),
            org_id=tenant.org_id,
            user_id=tenant.user_id,
            agent_id=tenant.agent_id,
        )


class TokenVerifier:
    """Who calls: a JWT (three dot-separated parts) goes to the JWT verifier, anything
    else to the API keys."""

    def __init__(self, jwts: JwtVerifier | None = None, api_keys: ApiKeys | None = None) -> None:
        if jwts is None and api_keys is None:
            raise ValueError("an HTTP server needs tokens: --jwks-url/--public-key or --api-keys")
        self.jwts, self.api_keys = jwts, api_keys

    async def check(self, token: str) -> TenantToken | str:
        """The token's tenant, or why it is refused (a 401's reason)."""
        if token.count(".") == 2 and self.jwts is not None:
            return await self.jwts.check(token)
        if self.api_keys is not None:
            return await self.api_keys.check(token)
        return "the server takes JWTs only, and this is none"


class RateLimit:
    """At most ``rate`` tool calls a second per token (a bucket of ``rate`` calls, at
    least one, refilled continuously). Each worker process counts its own calls."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._buckets: dict[str, tuple[float, float]] = {}  # token hash: (calls left, when)
        self._lock = threading.Lock()

    def take(self, token: str, calls: int = 1) -> bool:
        """Whether ``token`` may make ``calls`` calls now (they are counted if so)."""
        key, now, size = key_hash(token), time.monotonic(), max(self.rate, 1.0)
        with self._lock:
            left, then = self._buckets.get(key, (size, now))
            left = min(size, left + (now - then) * self.rate)
            if left < calls:
                self._buckets[key] = (left, now)
                return False
            self._buckets[key] = (left - calls, now)
            if len(self._buckets) > 100_000:  # forget idle tokens
                self._buckets = {key: self._buckets[key]}
            return True


def mint_token(
    private_key: str,
    tenant: Tenant,
    *,
    issuer: str,
    audience: str,
    lifetime: float = 3600,
    algorithm: str = "RS256",
    key_id: str | None = None,
    **claims: Any,
) -> str:
    """A signed JWT for ``tenant``, naming its key ``key_id`` if given (development and
    tests: production tokens come from an identity provider)."""
    now = int(time.time())
    payload = {
        "iss": issuer,
        "aud": audience,
        "iat": now,
        "nbf": now,
        "exp": now + int(lifetime),
        "sub": tenant.user_id,
        ORG_CLAIM: tenant.org_id,
        USER_CLAIM: tenant.user_id,
        AGENT_CLAIM: tenant.agent_id,
        "scope": " ".join(scope for scope in SCOPES if scope in tenant.scopes),
        **claims,
    }
    headers = None if key_id is None else {"kid": key_id}
    return jwt.encode(payload, private_key, algorithm=algorithm, headers=headers)
