"""The fetch session's bookkeeping (KIP-227), without a broker."""

from __future__ import annotations

import uuid

import pytest

from kafkawire.cluster import TopicPartition
from kafkawire.consumer.fetching.fetch_session import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    NO_SESSION,
    FetchSession,
    PartitionFetch,
    is_session_error,
    next_epoch,
)
from kafkawire.errors import (
    FetchSessionIdNotFoundError,
    InvalidFetchSessionEpochError,
    NotLeaderOrFollowerError,
)
from kafkawire.net.errors import RequestTimeoutError

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))
IDS = {"t": None}
V = 12  # topics by name


def at(offset: int, leader_epoch: int = -1) -> PartitionFetch:
    return PartitionFetch(offset, leader_epoch, 1024)


def opened(session_id: int = 7) -> FetchSession:
    """A session the broker opened for T0, T1 and T2 at offset 0."""
    session = FetchSession(1)
    request = session.build({T0: at(0), T1: at(0), T2: at(0)}, IDS, V)
    assert session.answered(request, session_id, [T0, T1, T2]) is None
    return session


def test_the_first_fetch_is_full_and_asks_for_a_session() -> None:
    session = FetchSession(1)
    request = session.build({T0: at(5), T1: at(9)}, IDS, V)
    assert (request.session_id, request.epoch, request.full) == (NO_SESSION, INITIAL_EPOCH, True)
    assert request.to_send == {T0: at(5), T1: at(9)}
    assert request.to_forget == []


def test_an_incremental_fetch_names_only_what_changed() -> None:
    session = opened(session_id=7)
    request = session.build({T0: at(3), T1: at(0), T2: at(0, leader_epoch=2)}, IDS, V)
    assert (request.session_id, request.epoch, request.full) == (7, 1, False)
    assert request.to_send == {T0: at(3), T2: at(0, leader_epoch=2)}
    assert request.partitions == {T0: at(3), T1: at(0), T2: at(0, leader_epoch=2)}
    assert session.answered(request, 7, [T0]) is None  # T1 and T2 left out: no news, no error
    request = session.build({T0: at(3), T1: at(0), T2: at(0, leader_epoch=2)}, IDS, V)
    assert (request.epoch, request.to_send, request.to_forget) == (2, {}, [])


def test_partitions_no_longer_wanted_are_forgotten_and_come_back_as_added() -> None:
    session = opened()
    request = session.build({T0: at(0)}, IDS, V)
    assert (request.to_send, request.to_forget) == ({}, [T1, T2])
    session.answered(request, 7, [])
    request = session.build({T0: at(0), T2: at(0)}, IDS, V)
    assert (request.to_send, request.to_forget) == ({T2: at(0)}, [])


def test_forgotten_topics_keep_their_ids_for_the_request() -> None:
    one, other = uuid.uuid4(), uuid.uuid4()
    session = FetchSession(1)
    a, b = TopicPartition("a", 0), TopicPartition("b", 0)
    request = session.build({a: at(0), b: at(0)}, {"a": one, "b": other}, 13)
    session.answered(request, 3, [a, b])
    request = session.build({a: at(0)}, {"a": one}, 13)
    assert request.to_forget == [b]
    assert request.names == {one: "a", other: "b"}


@pytest.mark.parametrize(
    ("epoch", "after"), [(1, 2), (2**31 - 2, 2**31 - 1), (2**31 - 1, 1), (FINAL_EPOCH, -1)]
)
def test_the_epoch_wraps_to_1(epoch: int, after: int) -> None:
    assert next_epoch(epoch) == after


def test_epochs_go_on_past_the_largest_int32() -> None:
    session = opened()
    session.epoch = 2**31 - 1
    request = session.build({T0: at(0), T1: at(0), T2: at(0)}, IDS, V)
    session.answered(request, 7, [])
    assert session.epoch == 1


def test_a_broker_that_answers_no_session_gets_full_fetches() -> None:
    session = FetchSession(1)
    for offset in range(3):
        request = session.build({T0: at(offset), T1: at(0)}, IDS, V)
        assert (request.session_id, request.epoch) == (NO_SESSION, INITIAL_EPOCH)
        assert request.to_send == {T0: at(offset), T1: at(0)}
        assert session.answered(request, NO_SESSION, [T0, T1]) is None


def test_a_broker_older_than_v7_gets_sessionless_fetches() -> None:
    session = FetchSession(1)
    request = session.build({T0: at(0)}, IDS, 6)
    assert (request.session_id, request.epoch) == (NO_SESSION, FINAL_EPOCH)
    session.answered(request, NO_SESSION, [T0])
    assert session.build({T0: at(1)}, IDS, 12).epoch == INITIAL_EPOCH  # upgraded: ask again


@pytest.mark.parametrize(
    ("error", "session_id"),
    [
        (FetchSessionIdNotFoundError(), NO_SESSION),  # the broker has none: do not name it
        (InvalidFetchSessionEpochError(), 7),  # the broker drops it and may open a new one
        (RequestTimeoutError("no answer"), 7),
        (None, 7),  # cancelled
    ],
)
def test_a_failed_request_makes_the_next_one_full(
    error: BaseException | None, session_id: int
) -> None:
    session = opened(session_id=7)
    session.build({T0: at(4), T1: at(0), T2: at(0)}, IDS, V)
    session.failed(error)
    request = session.build({T0: at(4), T1: at(0)}, IDS, V)
    assert (request.session_id, request.epoch, request.full) == (session_id, INITIAL_EPOCH, True)
    assert (request.to_send, request.to_forget) == ({T0: at(4), T1: at(0)}, [])


def test_an_answer_naming_a_partition_outside_the_session_is_refused() -> None:
    session = opened(session_id=7)
    request = session.build({T0: at(1), T1: at(0)}, IDS, V)  # T2 forgotten
    problem = session.answered(request, 7, [T0, T2])
    assert problem is not None
    assert "t/2" in problem
    assert session.build({T0: at(1), T1: at(0)}, IDS, V).epoch == INITIAL_EPOCH


def test_a_session_the_broker_closes_starts_again() -> None:
    session = opened(session_id=7)
    request = session.build({T0: at(1), T1: at(0), T2: at(0)}, IDS, V)
    session.answered(request, NO_SESSION, [T0])
    request = session.build({T0: at(2), T1: at(0), T2: at(0)}, IDS, V)
    assert (request.session_id, request.epoch) == (NO_SESSION, INITIAL_EPOCH)


def test_switching_between_topic_names_and_ids_starts_again() -> None:
    session = opened()
    request = session.build({T0: at(0), T1: at(0), T2: at(0)}, {"t": uuid.uuid4()}, 13)
    assert request.full
    session.answered(request, 8, [])
    renamed = session.build({T0: at(0), T1: at(0), T2: at(0)}, {"t": uuid.uuid4()}, 13)
    assert renamed.full  # the topic was made again under a new id


def test_session_errors_are_told_apart() -> None:
    assert is_session_error(FetchSessionIdNotFoundError())
    assert is_session_error(InvalidFetchSessionEpochError())
    assert not is_session_error(NotLeaderOrFollowerError())
