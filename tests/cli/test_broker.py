"""``kafkawire broker``: runs until Ctrl-C, after printing an address others can use."""

from __future__ import annotations

import signal
import subprocess

import pytest

from .conftest import Run

pytestmark = pytest.mark.integration


def test_broker_serves_until_interrupted(kafkawire_script: str, run: Run) -> None:
    with subprocess.Popen(
        [kafkawire_script, "broker"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
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
