"""``kafkawire consume --share-group``: a member of a share group that acknowledges what it
printed, on librdkafka's mock cluster (a cluster of its own: its share groups start at the
earliest offset)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from kafkawire.producer import Producer
from kafkawire.testing import MockCluster

from .conftest import Run


@pytest.mark.integration  # starts a mock cluster of its own
async def test_a_share_group_member_acknowledges_what_it_printed(run: Run) -> None:
    topic, group = f"cli-share-{uuid.uuid4().hex[:8]}", f"cli-workers-{uuid.uuid4().hex[:8]}"
    async with MockCluster(share_auto_offset_reset="earliest") as cluster:
        async with Producer(cluster.bootstrap, linger_ms=0) as producer:
            for value in (b"a", b"b", b"c"):
                await producer.send_and_wait(topic, value, partition=0)
        args = ("consume", topic, "--share-group", group, "-b", cluster.bootstrap)
        first = await asyncio.to_thread(run, *args, "--max-messages", "2")
        assert (first.returncode, first.stdout) == (0, "a\nb\n"), first.stderr
        assert "Consumed 2 records" in first.stderr
        # What it printed was accepted, what it did not was released: a new member gets c.
        second = await asyncio.to_thread(run, *args, "--max-messages", "1", "--format", "json")
    assert second.returncode == 0, second.stderr
    assert '"value": "c"' in second.stdout


@pytest.mark.parametrize(
    "other", [["--group", "g"], ["--from-beginning"], ["--partition", "0"], ["--exit-at-end"]]
)
def test_a_share_group_takes_no_positions_of_its_own(run: Run, other: list[str]) -> None:
    result = run("consume", "t", "--share-group", "g", *other, "-b", "127.0.0.1:9")
    assert result.returncode == 2
    assert "--share-group reads what the share group hands out" in result.stderr
