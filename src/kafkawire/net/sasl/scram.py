"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677): a sans-IO client state machine.

The exchange, with ``H`` the hash and ``HMAC`` keyed by its first argument::

    client-first  n,,n=<user>,r=<client nonce>
    server-first  r=<client nonce + server nonce>,s=<base64 salt>,i=<iterations>
    client-final  c=biws,r=<nonce>,p=<base64 ClientKey XOR HMAC(H(ClientKey), AuthMessage)>
    server-final  v=<base64 HMAC(ServerKey, AuthMessage)>   or   e=<error>

    SaltedPassword = PBKDF2(HMAC-H, Normalize(password), salt, iterations)
    ClientKey = HMAC(SaltedPassword, "Client Key"); ServerKey = HMAC(SaltedPassword, "Server Key")
    AuthMessage = client-first-bare + "," + server-first + "," + client-final-without-proof

Invariants the client enforces: the server's nonce must extend the client's; the iteration
count must lie in [4096, 65536] (4096 is RFC 7677's minimum and Kafka's; the ceiling stops a
hostile server from stalling the event loop in PBKDF2, which runs inline: Kafka brokers store at
most 16384 iterations); the server signature is verified in constant time, and the exchange
fails if it does not match, so a server that does not know the password cannot pass as one.
No channel binding (``n,,``), no authorization identity.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets

from kafkawire.net.errors import AuthenticationError

from .saslprep import saslprep

__all__ = ["MAX_ITERATIONS", "MIN_ITERATIONS", "Scram", "ScramClient"]

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 65536

_MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
_GS2_HEADER = "n,,"


class Scram:
    """SCRAM credentials for ``mechanism`` "SCRAM-SHA-256" or "SCRAM-SHA-512".

    The user name and password are prepared with SASLprep here, so a prohibited character
    raises ``ValueError`` at once rather than at connect time.
    """

    def __init__(self, mechanism: str, username: str, password: str) -> None:
        hash_name = _MECHANISMS.get(mechanism)
        if hash_name is None:
            raise ValueError(
                f"unknown SCRAM mechanism {mechanism!r}; use one of {list(_MECHANISMS)}"
            )
        self._mechanism = mechanism
        self._hash_name = hash_name
        self._username = saslprep(username)
        self._password = saslprep(password)

    @property
    def name(self) -> str:
        """``"SCRAM-SHA-256"`` or ``"SCRAM-SHA-512"``."""
        return self._mechanism

    async def start(self) -> ScramClient:
        """A new exchange for one connection (a fresh client nonce)."""
        return ScramClient(self._hash_name, self._username, self._password)


def _escape(username: str) -> str:
    """RFC 5802 saslname: "=" and "," are written as "=3D" and "=2C"."""
    return username.replace("=", "=3D").replace(",", "=2C")


def _attributes(message: bytes, what: str) -> list[tuple[str, str]]:
    try:
        text = message.decode()
    except UnicodeDecodeError:
        raise AuthenticationError(f"SCRAM {what} message is not UTF-8") from None
    pairs = []
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if len(key) != 1 or not sep:
            raise AuthenticationError(f"malformed SCRAM {what} message: {text!r}")
        pairs.append((key, value))
    return pairs


def _b64decode(value: str, what: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except binascii.Error:
        raise AuthenticationError(f"SCRAM {what} is not valid base64") from None


class ScramClient:
    """One SCRAM exchange, driven by :meth:`initial_response` and :meth:`receive`.

    ``hash_name`` is a :mod:`hashlib` name ("sha256", "sha512"; tests also use "sha1" for the
    RFC 5802 vector); ``username`` and ``password`` must already be SASLprep'd; ``nonce`` is
    for test vectors only (by default 32 random bytes from :mod:`secrets`, URL-safe base64,
    which contains no ",").
    """

    def __init__(
        self, hash_name: str, username: str, password: str, *, nonce: str | None = None
    ) -> None:
        self._hash_name = hash_name
        self._password = password.encode()
        self._nonce = nonce if nonce is not None else secrets.token_urlsafe(32)
        self._client_first_bare = f"n={_escape(username)},r={self._nonce}"
        self._server_signature: bytes | None = None
        self._step = 0

    def _hmac(self, key: bytes, message: bytes) -> bytes:
        return hmac.new(key, message, self._hash_name).digest()

    def initial_response(self) -> bytes:
        """The client-first message."""
        if self._step != 0:
            raise AuthenticationError("SCRAM exchange already started")
        self._step = 1
        return (_GS2_HEADER + self._client_first_bare).encode()

    def receive(self, challenge: bytes) -> bytes | None:
        """server-first in, client-final out; then server-final in, ``None`` out once verified."""
        if self._step == 1:
            self._step = 2
            return self._client_final(challenge)
        if self._step == 2:
            self._step = 3
            self._verify(challenge)
            return None
        raise AuthenticationError("unexpected SCRAM message outside the exchange")

    def _client_final(self, server_first: bytes) -> bytes:
        attributes = _attributes(server_first, "server-first")
        keys = [key for key, _ in attributes]
        if keys[:3] != ["r", "s", "i"]:
            raise AuthenticationError(
                f"SCRAM server-first message has attributes {keys}; expected r, s, i"
            )
        values = dict(attributes[:3])
        nonce = values["r"]
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise AuthenticationError("SCRAM server nonce does not extend the client nonce")
        salt = _b64decode(values["s"], "salt")
        # isascii: str.isdigit also takes digits int() refuses, such as "²".
        digits = values["i"].isascii() and values["i"].isdigit()
        if not digits or not MIN_ITERATIONS <= int(values["i"]) <= MAX_ITERATIONS:
            raise AuthenticationError(
                f"SCRAM iteration count {values['i']!r} is outside "
                f"[{MIN_ITERATIONS}, {MAX_ITERATIONS}]"
            )
        salted = hashlib.pbkdf2_hmac(self._hash_name, self._password, salt, int(values["i"]))
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self._hash_name, client_key).digest()
        channel_binding = base64.b64encode(_GS2_HEADER.encode()).decode()
        without_proof = f"c={channel_binding},r={nonce}"
        auth_message = ",".join(
            [self._client_first_bare, server_first.decode(), without_proof]
        ).encode()
        signature = self._hmac(stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def _verify(self, server_final: bytes) -> None:
        attributes = _attributes(server_final, "server-final")
        key, value = attributes[0]
        if key == "e":
            raise AuthenticationError(f"SCRAM server error: {value}")
        if key != "v":
            raise AuthenticationError("SCRAM server-final message has no verifier")
        assert self._server_signature is not None  # set by _client_final, step 1 -> 2
        if not hmac.compare_digest(_b64decode(value, "server signature"), self._server_signature):
            raise AuthenticationError(
                "SCRAM server signature does not verify: the server does not know the password"
            )
