"""``kafkawire broker``: runs until Ctrl-C, after printing an address others can use."""

from __future__ import annotations

import os
import signal
import socket
import subprocess

import pytest

from .conftest import Run

pytestmark = pytest.mark.integration


def test_broker_serves_until_interrupted(interruptible_script: list[str], run: Run) -> None:
    with subprocess.Popen(
        [*interruptible_script, "broker"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as broker:
        try:
            assert broker.stdout is not None
            address = broker.stdout.readline().strip()
            assert address.startswith("127.0.0.1:")
            listed = run("topics", "list", "-b", address)
            assert listed.returncode == 0, listed.stderr
        finally:
            broker.send_signal(signal.SIGINT)  # what Ctrl-C sends
            code = broker.wait(timeout=30)
    assert code == 0


def test_broker_stops_cleanly_on_sigterm(kafkawire_script: str) -> None:
    # What `kill`, systemd and `docker stop` send; SIGINT is ignored by background jobs.
    with subprocess.Popen(
        [kafkawire_script, "broker"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as broker:
        assert broker.stdout is not None
        assert broker.stdout.readline().startswith("127.0.0.1:")
        broker.send_signal(signal.SIGTERM)
        code = broker.wait(timeout=30)
        assert broker.stderr is not None
        assert "Stopped." in broker.stderr.read()
    assert code == 0


def test_broker_on_the_port_asked_for(interruptible_script: list[str], run: Run) -> None:
    port = free_port()
    with subprocess.Popen(
        [*interruptible_script, "broker", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as broker:
        try:
            assert broker.stdout is not None
            assert broker.stdout.readline().strip() == f"127.0.0.1:{port}"
            # A second broker cannot have that port: a usage error naming the option.
            taken = run("broker", "--port", str(port))
            assert taken.returncode == 2
            assert f"Invalid value for '--port': 127.0.0.1:{port} is in use" in taken.stderr
        finally:
            broker.send_signal(signal.SIGINT)
            code = broker.wait(timeout=30)
    assert code == 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_broker_that_dies_ends_the_command_saying_so(kafkawire_script: str) -> None:
    # Was: the command kept running, printing nothing, its address refusing every client.
    with subprocess.Popen(
        [kafkawire_script, "broker"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as broker:
        assert broker.stdout is not None
        assert broker.stderr is not None
        assert broker.stdout.readline().startswith("127.0.0.1:")
        (tansu,) = _children(broker.pid)
        os.kill(tansu, signal.SIGKILL)
        try:
            code = broker.wait(timeout=30)
        finally:
            if broker.poll() is None:  # still serving nothing: end it, not the test run
                broker.kill()
        said = broker.stderr.read()
    assert code == 1
    assert f"Error: Tansu {_version(said)} pid {tansu} exited with status -9" in said


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as children:
        return [int(child) for child in children.read().split()]


def _version(said: str) -> str:
    return said.split("Tansu ", 1)[1].split(maxsplit=1)[0]
