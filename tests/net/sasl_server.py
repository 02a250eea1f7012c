"""The broker's side of SASL for tests: PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER, apart from
the client code.

A :class:`SaslSession` is one connection's exchange: ``handshake`` takes the mechanism a
SaslHandshake names, ``step`` each SaslAuthenticate's bytes, returning the answer or raising
:class:`Refused` with the message a Kafka broker would send. SCRAM is :mod:`.scram_server`;
OAUTHBEARER hands the token and the SASL extensions to a check (default: one token is good),
which returns what is wrong with them, or ``None``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from kafkawire.net.sasl.tokens import jwt_claims

from .fakebroker import messages
from .scram_server import ScramServer, ScramServerError

USERS = {"alice": "wonderland"}
GOOD_TOKEN = "good.token"
ENABLED = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
KAFKA_FAILURE = "Authentication failed: Invalid username or password"

TokenCheck = Callable[[str, dict[str, str]], str | None]


class Refused(Exception):
    """The exchange fails; the text is the broker's error message."""


def good_token_only(token: str, extensions: dict[str, str]) -> str | None:
    return None if token == GOOD_TOKEN else "invalid token"


def unexpired_jwt(token: str, extensions: dict[str, str]) -> str | None:
    """What Kafka's unsecured validator checks: a JWT with a subject that has not expired."""
    claims = jwt_claims(token)
    if claims is None or not isinstance(claims.get("sub"), str):
        return "not a JWT with a sub claim"
    if not isinstance(claims.get("exp"), int | float) or claims["exp"] <= time.time():
        return "the token expired"
    return None


class SaslSession:
    def __init__(
        self,
        users: Mapping[str, str] = USERS,
        *,
        token_check: TokenCheck = good_token_only,
        enabled: tuple[str, ...] = ENABLED,
        **scram_options: Any,
    ) -> None:
        self.users = dict(users)
        self.token_check = token_check
        self.enabled = enabled
        self.scram_options = scram_options
        self.mechanism: str | None = None
        self.authenticated = False
        self.principal: str | None = None
        self.extensions: dict[str, str] = {}
        self._scram: ScramServer | None = None
        self._oauth_error_sent = False

    def handshake(self, mechanism: str) -> bool:
        """Start an exchange (again, to re-authenticate); whether the mechanism is enabled."""
        if mechanism not in self.enabled:
            return False
        self.mechanism = mechanism
        self._oauth_error_sent = False
        self._scram = None
        if mechanism.startswith("SCRAM"):
            hash_name = "sha" + mechanism.rsplit("-", 1)[1]
            self._scram = ScramServer(hash_name, self.users, **self.scram_options)
        return True

    def step(self, message: bytes) -> bytes:
        if self.mechanism == "PLAIN":
            return self._plain(message)
        if self.mechanism == "OAUTHBEARER":
            return self._oauth(message)
        return self._scram_step(message)

    def _done(self, principal: str) -> bytes:
        self.authenticated = True
        self.principal = principal
        return b""

    def _plain(self, message: bytes) -> bytes:
        _, user, password = message.decode().split("\0")
        if self.users.get(user) != password:
            raise Refused(KAFKA_FAILURE)
        return self._done(user)

    def _oauth(self, message: bytes) -> bytes:
        if self._oauth_error_sent:
            assert message == b"\x01"
            raise Refused(f"Authentication failed: {self._oauth_problem}")
        gs2, auth, *pairs = message.decode().split("\x01")
        assert gs2 == "n,,"
        assert pairs[-2:] == ["", ""]
        self.extensions = dict(pair.split("=", 1) for pair in pairs[:-2])
        token = auth.removeprefix("auth=Bearer ")
        problem = self.token_check(token, self.extensions)
        if problem is not None:
            self._oauth_error_sent = True
            self._oauth_problem = problem
            return b'{"status":"invalid_token"}'
        claims = jwt_claims(token) or {}
        return self._done(str(claims.get("sub", token)))

    def _scram_step(self, message: bytes) -> bytes:
        assert self._scram is not None
        try:
            if self._scram.user is None:
                return self._scram.first(message)
            reply = self._scram.final(message)
        except ScramServerError as exc:
            raise Refused(f"Authentication failed during authentication: {exc}") from None
        self._done(self._scram.user)
        return reply


SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def sasl_answer(
    session: SaslSession, header: Any, body: Any, *, session_lifetime_ms: int = 0
) -> Any:
    """The answer to a SaslHandshake or SaslAuthenticate request, as a broker's."""
    version = header.request_api_version
    if header.request_api_key == SASL_HANDSHAKE:
        response = messages(SASL_HANDSHAKE, version).SaslHandshakeResponse
        if not session.handshake(body.mechanism):
            return response(error_code=33, mechanisms=session.enabled)
        return response(mechanisms=session.enabled)
    response = messages(SASL_AUTHENTICATE, version).SaslAuthenticateResponse
    try:
        reply = session.step(body.auth_bytes)
    except Refused as exc:
        return response(error_code=58, error_message=str(exc))
    if session.authenticated and version >= 1:
        return response(auth_bytes=reply, session_lifetime_ms=session_lifetime_ms)
    return response(auth_bytes=reply)
