"""The server side of SCRAM (RFC 5802), written from the RFC for tests, apart from the client.

It shares no code with ``kafkawire.net.sasl.scram``: it stores only what a server stores
(salt, iteration count, StoredKey, ServerKey), recovers the ClientKey from the proof and checks
it against StoredKey, as RFC 5802 section 3 describes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os


class ScramServerError(Exception):
    """The client's message is malformed or its proof is wrong (the text is the e= value)."""


class ScramServer:
    def __init__(
        self,
        hash_name: str,
        users: dict[str, str],
        *,
        iterations: int = 4096,
        server_nonce: str = "srvNONCE",
        tamper_signature: bool = False,
    ) -> None:
        self.hash_name = hash_name
        self.iterations = iterations
        self.server_nonce = server_nonce
        self.tamper_signature = tamper_signature
        self.credentials: dict[str, tuple[bytes, bytes, bytes]] = {}
        for user, password in users.items():
            salt = os.urandom(16)
            salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
            client_key = hmac.new(salted, b"Client Key", hash_name).digest()
            stored_key = hashlib.new(hash_name, client_key).digest()
            server_key = hmac.new(salted, b"Server Key", hash_name).digest()
            self.credentials[user] = (salt, stored_key, server_key)
        self.user: str | None = None

    def first(self, client_first: bytes) -> bytes:
        text = client_first.decode()
        if not text.startswith("n,,"):
            raise ScramServerError("channel-binding-not-supported")
        self.client_first_bare = text[3:]
        fields = dict(part.split("=", 1) for part in self.client_first_bare.split(","))
        user = fields["n"].replace("=2C", ",").replace("=3D", "=")
        if user not in self.credentials:
            raise ScramServerError("unknown-user")
        self.user = user
        self.nonce = fields["r"] + self.server_nonce
        salt = self.credentials[user][0]
        self.server_first = (
            f"r={self.nonce},s={base64.b64encode(salt).decode()},i={self.iterations}"
        )
        return self.server_first.encode()

    def final(self, client_final: bytes) -> bytes:
        assert self.user is not None
        text = client_final.decode()
        without_proof, _, proof_b64 = text.rpartition(",p=")
        fields = dict(part.split("=", 1) for part in without_proof.split(","))
        if fields["c"] != "biws" or fields["r"] != self.nonce:
            raise ScramServerError("channel-bindings-dont-match")
        _, stored_key, server_key = self.credentials[self.user]
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode()
        client_signature = hmac.new(stored_key, auth_message, self.hash_name).digest()
        proof = base64.b64decode(proof_b64)
        client_key = bytes(p ^ s for p, s in zip(proof, client_signature, strict=True))
        if hashlib.new(self.hash_name, client_key).digest() != stored_key:
            raise ScramServerError("invalid-proof")
        signature = hmac.new(server_key, auth_message, self.hash_name).digest()
        if self.tamper_signature:
            signature = bytes(b ^ 1 for b in signature)
        return f"v={base64.b64encode(signature).decode()}".encode()
