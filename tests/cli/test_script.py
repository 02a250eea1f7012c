"""The installed ``kafkawire`` script, as a user's shell runs it: its entry point, what it
writes, and its exit codes. The other tests of the commands run them in-process (conftest.py)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import uuid

from kafkawire.testing.fake import FakeCluster
from kafkawire.testing.pytest_plugin import Broker

from .conftest import Run


def test_produce_then_consume_through_the_script(
    kafkawire_script: str, run: Run, fake_broker: Broker
) -> None:
    topic = f"script-{uuid.uuid4().hex[:8]}"
    bootstrap = ["-b", fake_broker.bootstrap]
    assert run("topics", "create", topic, "--partitions", "1", *bootstrap).returncode == 0
    produced = subprocess.run(
        [kafkawire_script, "produce", topic, *bootstrap],
        input="one\ntwo\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert produced.returncode == 0, produced.stderr
    assert produced.stderr.startswith(f"Produced 2 records to {topic} (partition 0) in ")
    consumed = subprocess.run(
        [kafkawire_script, "consume", topic, "--from-beginning", "--exit-at-end", *bootstrap],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (consumed.returncode, consumed.stdout) == (0, "one\ntwo\n"), consumed.stderr


def test_a_usage_error_exits_2_with_one_line(kafkawire_script: str) -> None:
    result = subprocess.run(
        [kafkawire_script, "topics", "create", "t", "--partitions", "x", "-b", "127.0.0.1:9"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "Invalid value for '--partitions'" in result.stderr


async def test_ctrl_c_in_produce_says_what_was_written_and_what_was_not(
    interruptible_script: list[str], fake_cluster: FakeCluster
) -> None:
    fake_cluster.create_topic("t", 1)
    process = await asyncio.create_subprocess_exec(
        *interruptible_script, "produce", "t", "-b", fake_cluster.bootstrap,
        stdin=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None
    assert process.stderr is not None
    process.stdin.write(b"one\ntwo\nthr")  # a person typing: the input stays open
    await process.stdin.drain()
    while len(fake_cluster.records("t", 0)) < 2:
        await asyncio.sleep(0.01)
    process.send_signal(signal.SIGINT)
    # Before, the read waiting for the next line kept the command until the input ended.
    code = await asyncio.wait_for(process.wait(), 60)
    stderr = await process.stderr.read()
    process.stdin.close()
    assert code == 130
    assert stderr == (
        b"Error: interrupted after line 2: 3 bytes read after it were not sent;"
        b" 2 records written to t (partition 0) before it\n"
    )


async def test_ctrl_c_ends_consume_with_its_summary_and_130(
    interruptible_script: list[str], fake_cluster: FakeCluster
) -> None:
    fake_cluster.create_topic("t", 1)
    fake_cluster.produce("t", 0, [b"one"])
    process = await asyncio.create_subprocess_exec(
        *interruptible_script, "consume", "t", "--from-beginning", "-b", fake_cluster.bootstrap,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None
    assert await asyncio.wait_for(process.stdout.readline(), 60) == b"one\n"
    process.send_signal(signal.SIGINT)
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    # 130 as every other command interrupted (128 + SIGINT; Kafka's console consumer too):
    # before, 0, so a script could not tell Ctrl-C from the end of --max-messages.
    assert process.returncode == 130
    assert stderr == b"Consumed 1 record\n"
