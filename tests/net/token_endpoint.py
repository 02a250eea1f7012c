"""An OIDC token endpoint on loopback for the OAUTHBEARER tests: ``http.server`` over TLS.

It answers the client credentials grant (RFC 6749 section 4.4) of one client with an unsigned
JWT (``"alg": "none"``) whose ``sub`` is the client id and which expires ``lifetime`` seconds
after it is issued (a negative lifetime issues expired tokens); other credentials get 401
``invalid_client``. ``requests`` records each grant's form and whether its credentials were
right. It runs in a thread of its own, so a test blocked on Spark or a subprocess is answered.
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kafkawire.net.sasl.tokens import unsecured_jwt

CLIENT_ID = "kafkawire-client"
CLIENT_SECRET = "client-secret-5e1d"


class TokenEndpoint:
    def __init__(self, context: ssl.SSLContext, *, lifetime: float = 3600.0) -> None:
        self.context = context
        self.lifetime = lifetime
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"https://127.0.0.1:{self._server.server_address[1]}/oauth2/token"

    def __enter__(self) -> TokenEndpoint:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                good = self.headers.get("Authorization") == f"Basic {expected}"
                endpoint.requests.append({**form, "credentials_ok": good})
                if not good or form.get("grant_type") != "client_credentials":
                    self._answer(401, {"error": "invalid_client", "error_description": "bad"})
                    return
                now = int(time.time())
                claims = {"sub": CLIENT_ID, "iat": now, "exp": now + int(endpoint.lifetime)}
                if "scope" in form:
                    claims["scope"] = form["scope"]
                token = unsecured_jwt(claims)
                answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
                self._answer(200, answer)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # http.server prints every request to stderr otherwise

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.socket = self.context.wrap_socket(self._server.socket, server_side=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self._server is not None
        assert self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
