"""ApiVersions negotiation (KIP-35, KIP-511), sans-IO: what to send, how to read the answer.

The first request on every connection is ApiVersions, sent at the newest version kafkawire
knows. A broker that does not know that version answers with error UNSUPPORTED_VERSION (35) and,
per KIP-511, a *version 0* body that lists at least its own ApiVersions range, so the response
cannot be decoded at the version that was sent. :func:`decode_api_versions_response` handles
that: whenever the error code (the first field of the body at every version, right after the
header, which is v0 for every ApiVersions version) is 35, it reads the body as v0.
:class:`ApiVersionsNegotiation` then retries at the highest version both sides know, or at v0
when the broker listed nothing usable (librdkafka's mock cluster answers v3+ with error 35 and
a body that is valid at no version). The version strictly decreases on every retry, so the
negotiation ends after at most one request per version.

:class:`BrokerVersions` is the outcome: the broker's range per API key, and the highest version
both sides support for each.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import kafkawire
from kafkawire.errors import (
    DecodeError,
    UnknownMessageError,
    UnsupportedVersionError,
    error_for_code,
)
from kafkawire.messages import APIS, request_type
from kafkawire.messages.api_versions import v0 as api_versions_v0
from kafkawire.protocol import decode_response

from .errors import NoCommonVersionError

__all__ = [
    "API_VERSIONS",
    "ApiVersionsNegotiation",
    "BrokerVersions",
    "decode_api_versions_response",
]

_log = logging.getLogger(__name__)

API_VERSIONS = api_versions_v0.ApiVersionsRequest.__api_key__
_UNSUPPORTED_VERSION = UnsupportedVersionError.code
_CLIENT_SOFTWARE_NAME = "kafkawire"


def _describe(api_key: int) -> str:
    info = APIS.get(api_key)
    name = info.name if info is not None else "an API unknown to kafkawire"
    return f"{name} (API key {api_key})"


def _span(versions: range) -> str:
    return f"{versions.start}-{versions.stop - 1}"


@dataclass(frozen=True, slots=True)
class BrokerVersions:
    """The API versions one broker announced, and the choice of version per API.

    ``ranges`` maps each API key the broker listed to the versions it serves (an API it lists
    with min > max counts as not served). ``peer`` is only for error messages.
    """

    peer: str
    ranges: dict[int, range]

    @classmethod
    def from_response(cls, peer: str, response: Any) -> BrokerVersions:
        """The versions an ApiVersionsResponse of any version lists."""
        ranges = {
            entry.api_key: range(entry.min_version, entry.max_version + 1)
            for entry in response.api_keys
        }
        return cls(peer, ranges)

    def version_for(self, api_key: int) -> int:
        """The highest version of ``api_key`` that both the broker and kafkawire support.

        Raises :class:`NoCommonVersionError` if the broker lacks the API or the two ranges do
        not overlap, and :class:`~kafkawire.errors.UnknownMessageError` for an API key
        kafkawire has no messages for.
        """
        info = APIS.get(api_key)
        if info is None:
            raise UnknownMessageError(f"no Kafka API with key {api_key} is known to kafkawire")
        broker = self._broker_range(api_key)
        common = range(max(broker.start, info.versions.start), min(broker.stop, info.versions.stop))
        if not common:
            raise NoCommonVersionError(
                f"the broker at {self.peer} supports {_describe(api_key)} versions "
                f"{_span(broker)} and kafkawire knows {_span(info.versions)}: "
                "no version in common",
                api_key=api_key,
                broker_versions=broker,
            )
        return common.stop - 1

    def check(self, api_key: int, version: int) -> None:
        """Raise :class:`NoCommonVersionError` unless the broker serves this API version."""
        broker = self._broker_range(api_key)
        if version not in broker:
            raise NoCommonVersionError(
                f"the broker at {self.peer} supports {_describe(api_key)} versions "
                f"{_span(broker)}, not version {version}",
                api_key=api_key,
                broker_versions=broker,
            )

    def _broker_range(self, api_key: int) -> range:
        broker = self.ranges.get(api_key)
        if not broker:
            raise NoCommonVersionError(
                f"the broker at {self.peer} does not support {_describe(api_key)}",
                api_key=api_key,
                broker_versions=None,
            )
        return broker


def decode_api_versions_response(payload: bytes, version: int) -> Any:
    """The body of an ApiVersions response to a request sent at ``version`` (see the module doc).

    With error UNSUPPORTED_VERSION the body is read as v0; if even that fails, the result is a
    v0 response with that error and no API list, which makes the negotiation retry at v0.
    """
    error_code = int.from_bytes(payload[4:6], "big", signed=True) if len(payload) >= 6 else 0
    if error_code != _UNSUPPORTED_VERSION or version == 0:
        return decode_response(payload, API_VERSIONS, version)[1]
    try:
        return decode_response(payload, API_VERSIONS, 0)[1]
    except DecodeError as exc:
        _log.debug(
            "UNSUPPORTED_VERSION answer to ApiVersions v%d is not a v0 body: %s", version, exc
        )
        return api_versions_v0.ApiVersionsResponse(error_code=_UNSUPPORTED_VERSION)


class ApiVersionsNegotiation:
    """Which ApiVersions request to send next, until a response yields :class:`BrokerVersions`.

    Usage: send :meth:`request`, pass the decoded response to :meth:`receive`; ``None`` means
    send :meth:`request` again (at a lower version).
    """

    def __init__(self, peer: str) -> None:
        self._peer = peer
        self.version = APIS[API_VERSIONS].versions.stop - 1

    def request(self) -> Any:
        """The ApiVersions request at the current version (v3+ name the client software)."""
        cls = request_type(API_VERSIONS, self.version)
        if self.version >= 3:
            return cls(
                client_software_name=_CLIENT_SOFTWARE_NAME,
                client_software_version=kafkawire.__version__,
            )
        return cls()

    def receive(self, response: Any) -> BrokerVersions | None:
        """The outcome, or ``None`` to retry at the (lowered) :attr:`version`."""
        error = error_for_code(
            response.error_code, f"ApiVersions v{self.version} failed at {self._peer}"
        )
        if error is None:
            versions = BrokerVersions.from_response(self._peer, response)
            _log.debug(
                "broker at %s: ApiVersions v%d, %d APIs",
                self._peer,
                self.version,
                len(versions.ranges),
            )
            return versions
        if not isinstance(error, UnsupportedVersionError) or self.version == 0:
            raise error
        listed = next((e for e in response.api_keys if e.api_key == API_VERSIONS), None)
        retry = 0 if listed is None else max(0, min(listed.max_version, self.version - 1))
        _log.debug(
            "broker at %s does not serve ApiVersions v%d; retrying at v%d",
            self._peer,
            self.version,
            retry,
        )
        self.version = retry
        return None
