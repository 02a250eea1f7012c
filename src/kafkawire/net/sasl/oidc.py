"""OAUTHBEARER tokens from an OIDC provider: the client credentials grant (KIP-768), or a file.

What Kafka's Java client does with ``sasl.oauthbearer.token.endpoint.url`` (its
``HttpAccessTokenRetriever`` and ``FileTokenRetriever``):

- ``https://...``: a POST of ``grant_type=client_credentials`` (and ``scope`` if given) with
  the client id and secret as HTTP Basic credentials; the answer's ``access_token`` is the
  token, and its lifetime is the JWT's ``exp`` claim, else the answer's ``expires_in``.
  Plain ``http://`` is refused: the secret would cross the network in clear.
- ``file://...``: the file holds a JWT (a Kubernetes projected token, say), read again at
  each refresh.

The request runs in a thread (``urllib``, no HTTP dependency) and is bounded by ``timeout``.
A refusal (HTTP 4xx) is an :class:`~kafkawire.net.errors.AuthenticationError`; an endpoint that
cannot be reached or fails (5xx) is a retriable :class:`~kafkawire.net.errors.ConnectError`, so
a client tries again as it would a broker. Errors name the endpoint by scheme, host and path,
never its query, and never the secret.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafkawire.net.errors import AuthenticationError, ConnectError

from .tokens import RefreshingTokens, Token, jwt_claims

__all__ = ["client_credentials", "token_endpoint_problem"]

_MAX_ANSWER = 1 << 20  # bytes of a token endpoint's answer read at most


def token_endpoint_problem(url: str) -> str | None:
    """Why ``url`` cannot be a token endpoint, or ``None`` when it can."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "file" and parts.path:
        return None
    if parts.scheme == "http":
        return (
            "it must be https:// (over http:// the client secret would cross the network in clear)"
        )
    return "it must be an https:// or a file:// URL"


def _shown(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(
        (parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", "")
    )


def client_credentials(
    url: str,
    *,
    client_id: str | None = None,
    client_secret: str | None = None,
    scope: str | None = None,
    ssl_context: ssl.SSLContext | None = None,
    timeout: float = 10.0,
    clock: Callable[[], float] = time.time,
) -> RefreshingTokens:
    """A token provider for the token endpoint (or token file) at ``url``.

    ``ssl_context`` checks the endpoint's certificate (default: the system's trust store).
    Raises ``ValueError`` for a URL that cannot be used, or an https URL without a client id
    and secret.
    """
    problem = token_endpoint_problem(url)
    if problem is not None:
        raise ValueError(f"the token endpoint URL {_shown(url)} cannot be used: {problem}")
    source = f"the token endpoint {_shown(url)}"
    if url.startswith("file:"):
        path = Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))

        async def read_file() -> Token:
            text = await asyncio.to_thread(_read_token_file, path)
            return _token(text, None, clock(), source)

        return RefreshingTokens(read_file, source=source, clock=clock)
    if not client_id or not client_secret:
        raise ValueError("a token endpoint needs a client id and a client secret")
    form = {"grant_type": "client_credentials", **({"scope": scope} if scope else {})}
    credentials = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(form).encode(),
        headers={
            "Authorization": f"Basic {credentials}",
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        method="POST",
    )
    context = ssl_context or ssl.create_default_context()

    async def post() -> Token:
        answer = await asyncio.to_thread(_post, request, context, timeout, source)
        access_token = answer.get("access_token")
        if not isinstance(access_token, str) or not access_token:
            raise AuthenticationError(f"{source} answered without an access_token")
        expires_in = answer.get("expires_in")
        return _token(access_token, expires_in, clock(), source)

    return RefreshingTokens(post, source=source, clock=clock)


def _read_token_file(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise AuthenticationError(f"cannot read the token file {path}: {exc.strerror}") from None


def _post(
    request: urllib.request.Request, context: ssl.SSLContext, timeout: float, source: str
) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(request, timeout=timeout, context=context) as response:
            body = response.read(_MAX_ANSWER)
    except urllib.error.HTTPError as exc:
        detail = _error_detail(exc)
        if 400 <= exc.code < 500:
            raise AuthenticationError(
                f"{source} refused the client credentials: HTTP {exc.code}{detail}"
            ) from None
        raise ConnectError(f"{source} failed: HTTP {exc.code}{detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, ssl.SSLCertVerificationError):
            raise AuthenticationError(
                f"{source} has a certificate that is not trusted ({reason.verify_message})"
            ) from None
        raise ConnectError(f"{source} cannot be reached: {reason}") from None
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise AuthenticationError(f"{source} answered with something other than a JSON object")
    return answer


def _error_detail(error: urllib.error.HTTPError) -> str:
    """``: invalid_client (description)`` from an RFC 6749 error answer, if it has one."""
    try:
        answer = json.loads(error.read(_MAX_ANSWER))
    except (ValueError, OSError):
        return ""
    if not isinstance(answer, dict) or not isinstance(answer.get("error"), str):
        return ""
    description = answer.get("error_description")
    return f": {answer['error']}" + (f" ({description})" if isinstance(description, str) else "")


def _token(value: str, expires_in: object, now: float, source: str) -> Token:
    """The token's lifetime: its JWT ``exp`` claim, else ``expires_in`` seconds from now."""
    claims = jwt_claims(value) or {}
    exp = claims.get("exp")
    if isinstance(exp, int | float) and not isinstance(exp, bool):
        iat = claims.get("iat")
        issued = float(iat) if isinstance(iat, int | float) and iat <= now else now
        return Token(value, issued, float(exp))
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool):
        return Token(value, now, now + float(expires_in))
    raise AuthenticationError(
        f"{source} gave a token without a lifetime (no exp claim, no expires_in)"
    )
