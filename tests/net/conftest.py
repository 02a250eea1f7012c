"""Fixtures for the connection tests.

The brokers come from ``kafkawire.testing`` (``tansu_broker``, ``mock_cluster``,
``kafka_broker``); ``tansu`` is the Tansu broker's address. ``certificate`` makes a self-signed
certificate for 127.0.0.1 and localhost with ``openssl`` (``pki``, in ``tests/conftest.py``, a
CA and certificates it signed).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkawire.testing.pytest_plugin import Broker
from kafkawire.testing.raw import Address, parse_bootstrap


@pytest.fixture
def tansu(tansu_broker: Broker) -> Address:
    """The address of the session's Tansu broker (kafkawire.testing's ``tansu_broker``)."""
    return parse_bootstrap(tansu_broker.bootstrap)[0]


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    """A self-signed EC P-256 certificate for DNS:localhost and IP:127.0.0.1."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("needs the openssl command")
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [
            openssl,
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    return Certificate(cert, key)
