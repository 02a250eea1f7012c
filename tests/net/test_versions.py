"""ApiVersions negotiation, sans-IO: which request goes out, how answers are read."""

from __future__ import annotations

import pytest

import kafkawire
from kafkawire.errors import DecodeError, UnknownMessageError, UnsupportedVersionError
from kafkawire.messages import APIS
from kafkawire.messages.api_versions import v0, v4
from kafkawire.net import NoCommonVersionError
from kafkawire.net.versions import (
    ApiVersionsNegotiation,
    BrokerVersions,
    decode_api_versions_response,
)
from kafkawire.protocol import decode_response, encode_response

NEWEST = APIS[18].versions.stop - 1


def _payload(response: object) -> bytes:
    return encode_response(response, correlation_id=7)[4:]


def test_first_request_is_the_newest_version_naming_the_client() -> None:
    request = ApiVersionsNegotiation("b:1").request()
    assert type(request).__version__ == NEWEST >= 3
    assert request.client_software_name == "kafkawire"
    assert request.client_software_version == kafkawire.__version__


def test_success_yields_the_table() -> None:
    response = v4.ApiVersionsResponse(
        api_keys=(
            v4.ApiVersion(api_key=3, min_version=0, max_version=12),
            v4.ApiVersion(api_key=18, min_version=0, max_version=4),
        )
    )
    versions = ApiVersionsNegotiation("b:1").receive(response)
    assert versions == BrokerVersions("b:1", {3: range(13), 18: range(5)})


def test_kip511_fallback_retries_at_the_listed_version() -> None:
    answer = v0.ApiVersionsResponse(
        error_code=35, api_keys=(v0.ApiVersion(api_key=18, min_version=0, max_version=2),)
    )
    # A v0 body cannot be read at the version sent; the decoder reads it as v0.
    with pytest.raises(DecodeError):
        decode_response(_payload(answer), 18, NEWEST)
    decoded = decode_api_versions_response(_payload(answer), NEWEST)
    assert decoded == answer
    negotiation = ApiVersionsNegotiation("b:1")
    assert negotiation.receive(decoded) is None
    assert negotiation.version == 2
    assert type(negotiation.request()).__version__ == 2


def test_undecodable_unsupported_version_answer_retries_at_v0() -> None:
    # What librdkafka's mock cluster sends to ApiVersions v3+: error 35, then bytes that are
    # valid at no version.
    payload = bytes.fromhex("0000000700230100120000000200000000")
    decoded = decode_api_versions_response(payload, NEWEST)
    assert decoded == v0.ApiVersionsResponse(error_code=35)
    negotiation = ApiVersionsNegotiation("b:1")
    assert negotiation.receive(decoded) is None
    assert negotiation.version == 0


def test_unsupported_version_at_v0_and_other_errors_raise() -> None:
    negotiation = ApiVersionsNegotiation("b:1")
    negotiation.version = 0
    with pytest.raises(UnsupportedVersionError, match="ApiVersions v0 failed at b:1"):
        negotiation.receive(v0.ApiVersionsResponse(error_code=35))
    with pytest.raises(kafkawire.errors.BrokerError) as info:
        ApiVersionsNegotiation("b:1").receive(v4.ApiVersionsResponse(error_code=-1))
    assert info.value.code == -1


def test_retry_version_always_decreases() -> None:
    # A broker listing a higher ApiVersions range than the version it refused cannot loop us.
    negotiation = ApiVersionsNegotiation("b:1")
    listed = v0.ApiVersionsResponse(
        error_code=35, api_keys=(v0.ApiVersion(api_key=18, min_version=0, max_version=99),)
    )
    seen = []
    while negotiation.version > 0:
        negotiation.receive(listed)
        seen.append(negotiation.version)
    assert seen == list(range(NEWEST - 1, -1, -1))


VERSIONS = BrokerVersions("b:1", {3: range(13), 37: range(2, 1), 0: range(50, 60)})


def test_version_for_is_the_highest_common_version() -> None:
    assert VERSIONS.version_for(3) == min(12, APIS[3].versions.stop - 1)


@pytest.mark.parametrize(
    ("api_key", "message"),
    [
        (37, "the broker at b:1 does not support CreatePartitions \\(API key 37\\)"),
        (1, "the broker at b:1 does not support Fetch \\(API key 1\\)"),
        (0, "supports Produce \\(API key 0\\) versions 50-59 and kafkawire knows 0-\\d+"),
    ],
)
def test_version_for_names_the_missing_api(api_key: int, message: str) -> None:
    with pytest.raises(NoCommonVersionError, match=message) as info:
        VERSIONS.version_for(api_key)
    assert info.value.api_key == api_key
    assert not info.value.retriable


def test_version_for_unknown_api_key() -> None:
    with pytest.raises(UnknownMessageError):
        VERSIONS.version_for(9999)


def test_check() -> None:
    VERSIONS.check(3, 12)
    with pytest.raises(NoCommonVersionError, match="versions 0-12, not version 13") as info:
        VERSIONS.check(3, 13)
    assert info.value.broker_versions == range(13)
