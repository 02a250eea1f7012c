"""kafkawire.testing's address rules: host:port lists, loopback only."""

from __future__ import annotations

import pytest

from kafkawire.testing.raw import Address, parse_bootstrap


def test_loopback_addresses_are_accepted() -> None:
    assert parse_bootstrap("127.0.0.1:9092, localhost:1,[::1]:2") == [
        Address("127.0.0.1", 9092),
        Address("localhost", 1),
        Address("::1", 2),
    ]


@pytest.mark.parametrize(
    "bootstrap", ["10.0.0.1:9092", "example.com:9092", "127.0.0.1:1,8.8.8.8:1"]
)
def test_other_addresses_are_refused(bootstrap: str) -> None:
    with pytest.raises(ValueError, match="only talk to loopback"):
        parse_bootstrap(bootstrap)


def test_malformed_addresses_are_refused() -> None:
    with pytest.raises(ValueError, match="not host:port"):
        parse_bootstrap("127.0.0.1")
