"""``make demo``'s program: its totals stand out from Spark's logs, and Ctrl-C ends it quietly
(status 130, no traceback), each on an embedded broker of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.spark

DEMO = [sys.executable, "-m", "kafkawire.spark.demo"]


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "KAFKAWIRE_BOOTSTRAP"}


def test_the_totals_are_printed_clearly() -> None:
    done = subprocess.run(
        DEMO, capture_output=True, text=True, timeout=600, env=environment(), check=False
    )
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("Totals per user and 10 s window, as read back from demo-totals:")
    assert len(table) == 2
    rows = [line.split() for line in table[1].splitlines()[2:] if line.startswith("  ")]
    assert len(rows) == 9  # three users, three windows
    assert sum(int(row[2]) for row in rows) == 300  # every event, counted once
    # Spark logs only errors: none of its warnings.
    assert " WARN " not in done.stderr
    assert "Traceback" not in done.stderr


def test_ctrl_c_stops_everything_quietly() -> None:
    with subprocess.Popen(
        DEMO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
        start_new_session=True,  # a process group of its own, as a terminal gives it
    ) as demo:
        assert demo.stdout is not None
        for line in demo.stdout:
            if line.startswith("producer: wrote"):  # the query has batches left to run
                break
        os.killpg(demo.pid, signal.SIGINT)  # what Ctrl-C sends: to the whole group
        out, err = demo.communicate(timeout=120)
    assert demo.returncode == 130, err
    assert "Traceback" not in err
    assert err.rstrip().endswith("interrupted")
    assert "stopped Spark's JVM" in out
    assert "stopped the broker" in out
