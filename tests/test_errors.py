"""The broker error table and the named exceptions built from it."""

from __future__ import annotations

import importlib
import pickle
import re
import warnings
from typing import Any

import pytest

import kafkawire.errors
from kafkawire.error_codes import ERROR_CODES, ErrorCode, Trait
from kafkawire.errors import (
    BrokerError,
    CoordinatorNotAvailableError,
    KafkawireError,
    NotLeaderOrFollowerError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    error_for_code,
    raise_for_code,
)

# Independent oracles, copied from Apache Kafka's Java client (4.2 javadoc): the error codes
# whose exception derives from RetriableException, and from InvalidMetadataException.
KAFKA_RETRIABLE = {
    "CORRUPT_MESSAGE", "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE",
    "NOT_LEADER_OR_FOLLOWER", "REQUEST_TIMED_OUT", "REPLICA_NOT_AVAILABLE", "NETWORK_EXCEPTION",
    "COORDINATOR_LOAD_IN_PROGRESS", "COORDINATOR_NOT_AVAILABLE", "NOT_COORDINATOR",
    "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "NOT_CONTROLLER",
    "CONCURRENT_TRANSACTIONS", "KAFKA_STORAGE_ERROR", "FETCH_SESSION_ID_NOT_FOUND",
    "INVALID_FETCH_SESSION_EPOCH", "LISTENER_NOT_FOUND", "FENCED_LEADER_EPOCH",
    "UNKNOWN_LEADER_EPOCH", "OFFSET_NOT_AVAILABLE", "PREFERRED_LEADER_NOT_AVAILABLE",
    "ELIGIBLE_LEADERS_NOT_AVAILABLE", "ELECTION_NOT_NEEDED", "UNSTABLE_OFFSET_COMMIT",
    "THROTTLING_QUOTA_EXCEEDED", "UNKNOWN_TOPIC_ID", "INCONSISTENT_TOPIC_ID",
    "FETCH_SESSION_TOPIC_ID_ERROR", "SHARE_SESSION_NOT_FOUND", "INVALID_SHARE_SESSION_EPOCH",
    "SHARE_SESSION_LIMIT_REACHED",
}  # fmt: skip
KAFKA_INVALID_METADATA = {
    "UNKNOWN_TOPIC_OR_PARTITION", "LEADER_NOT_AVAILABLE", "NOT_LEADER_OR_FOLLOWER",
    "REPLICA_NOT_AVAILABLE", "NETWORK_EXCEPTION", "KAFKA_STORAGE_ERROR", "LISTENER_NOT_FOUND",
    "FENCED_LEADER_EPOCH", "PREFERRED_LEADER_NOT_AVAILABLE", "ELIGIBLE_LEADERS_NOT_AVAILABLE",
    "ELECTION_NOT_NEEDED", "UNKNOWN_TOPIC_ID", "INCONSISTENT_TOPIC_ID",
}  # fmt: skip

# kafka-python still uses a few older names for the same codes.
KAFKA_PYTHON_OLD_NAMES = {
    -1: "UNKNOWN",
    6: "NOT_LEADER_FOR_PARTITION",
    10: "MESSAGE_SIZE_TOO_LARGE",
    17: "INVALID_TOPIC",
    39: "INVALID_REPLICATION_ASSIGNMENT",
}

BY_NAME = {row.name: row for row in ERROR_CODES}


def test_table_covers_every_code_from_minus_one_to_133_once() -> None:
    codes = [row.code for row in ERROR_CODES]
    assert sorted(codes) == codes
    assert codes == [-1, *range(1, 134)]
    assert len(BY_NAME) == len(ERROR_CODES)
    for row in ERROR_CODES:
        assert re.fullmatch(r"[A-Z]+(_[A-Z]+)*", row.name), row
        assert row.description.endswith("."), row


def test_flags_match_kafkas_exception_classes() -> None:
    assert BY_NAME.keys() >= KAFKA_RETRIABLE | KAFKA_INVALID_METADATA
    assert {row.name for row in ERROR_CODES if row.retriable} == KAFKA_RETRIABLE
    assert {row.name for row in ERROR_CODES if row.invalid_metadata} == KAFKA_INVALID_METADATA
    assert {row.name for row in ERROR_CODES if row.invalid_coordinator} == {
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_COORDINATOR",
    }


def test_refreshing_metadata_or_coordinator_implies_retriable() -> None:
    for row in ERROR_CODES:
        if row.traits & (Trait.STALE_METADATA | Trait.STALE_COORDINATOR):
            assert row.retriable, row


def test_codes_and_names_agree_with_kafka_python() -> None:
    with warnings.catch_warnings():
        # kafka-python's package import uses importlib.resources APIs deprecated in 3.11.
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs_module = importlib.import_module("kafka.errors")
    base = theirs_module.BrokerResponseError
    found = vars(theirs_module).values()
    classes: list[Any] = [c for c in found if isinstance(c, type) and issubclass(c, base)]
    theirs = {cls.errno: cls.message for cls in classes if cls.errno not in (None, 0)}
    assert len(theirs) > 120
    ours = {row.code: row.name for row in ERROR_CODES}
    for code, name in theirs.items():
        assert KAFKA_PYTHON_OLD_NAMES.get(code, ours[code]) == name


def _expected_class_name(row: ErrorCode) -> str:
    stem = row.name.removesuffix("_ERROR").removesuffix("_EXCEPTION")
    return "".join(word.title() for word in stem.split("_")) + "Error"


@pytest.mark.parametrize("row", ERROR_CODES, ids=lambda row: row.name)
def test_every_row_has_its_named_class(row: ErrorCode) -> None:
    cls = getattr(kafkawire.errors, _expected_class_name(row))
    assert cls.__name__ in kafkawire.errors.__all__
    assert issubclass(cls, BrokerError)
    assert issubclass(cls, KafkawireError)
    assert (cls.code, cls.error_name, cls.description) == (row.code, row.name, row.description)
    assert (cls.retriable, cls.invalid_metadata, cls.invalid_coordinator) == (
        row.retriable,
        row.invalid_metadata,
        row.invalid_coordinator,
    )
    error = error_for_code(row.code)
    assert type(error) is cls
    assert str(error) == f"{row.name} ({row.code}): {row.description}"


def test_named_classes_carry_their_flags() -> None:
    assert NotLeaderOrFollowerError.code == 6
    assert NotLeaderOrFollowerError.retriable
    assert NotLeaderOrFollowerError.invalid_metadata
    assert not NotLeaderOrFollowerError.invalid_coordinator
    assert UnknownTopicOrPartitionError.invalid_metadata
    assert CoordinatorNotAvailableError.invalid_coordinator
    assert not CoordinatorNotAvailableError.invalid_metadata
    assert not UnsupportedVersionError.retriable
    assert UnknownServerError.code == -1
    assert kafkawire.errors.KafkaStorageError.code == 56  # no "ErrorError"
    assert kafkawire.errors.InvalidTopicError.code == 17  # no "ExceptionError"


def test_zero_is_success() -> None:
    assert error_for_code(0) is None
    assert error_for_code(0, "ignored") is None
    raise_for_code(0)


def test_the_brokers_message_is_kept() -> None:
    error = error_for_code(3, "topic t has no partition 7")
    assert isinstance(error, UnknownTopicOrPartitionError)
    assert error.message == "topic t has no partition 7"
    assert str(error) == "UNKNOWN_TOPIC_OR_PARTITION (3): topic t has no partition 7"
    with pytest.raises(NotLeaderOrFollowerError, match=r"NOT_LEADER_OR_FOLLOWER \(6\): moved"):
        raise_for_code(6, "moved")


@pytest.mark.parametrize("code", [-2, 134, 999, 32767])
def test_unknown_codes_give_a_plain_broker_error_with_the_code(code: int) -> None:
    error = error_for_code(code, "from the future")
    assert type(error) is BrokerError
    assert error.code == code
    assert not error.retriable
    assert not error.invalid_metadata
    assert not error.invalid_coordinator
    assert str(error) == f"UNLISTED ({code}): from the future"
    with pytest.raises(BrokerError) as raised:
        raise_for_code(code)
    assert raised.value.code == code


@pytest.mark.parametrize("code", [6, 999])
def test_errors_survive_pickling(code: int) -> None:
    error = error_for_code(code, "why")
    assert error is not None
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (copy.code, copy.message, str(copy)) == (error.code, error.message, str(error))


def test_constructor_checks_the_code() -> None:
    assert NotLeaderOrFollowerError("x", code=6).code == 6
    with pytest.raises(ValueError, match="is error code 6, not 5"):
        NotLeaderOrFollowerError("x", code=5)
    with pytest.raises(TypeError, match="needs code=N"):
        BrokerError("no code")


def test_a_refinement_of_a_named_error_keeps_its_code() -> None:
    class MovedLeader(NotLeaderOrFollowerError):
        pass

    error = MovedLeader()
    assert error.code == 6
    assert isinstance(error, NotLeaderOrFollowerError)
    assert type(error_for_code(6)) is NotLeaderOrFollowerError


def test_declarations_that_disagree_with_the_table_are_refused() -> None:
    with pytest.raises(TypeError, match="is NotLeaderOrFollowerError"):

        class NotLeaderError(BrokerError, code=6):
            pass

    with pytest.raises(TypeError, match=r"not in kafkawire\.error_codes"):

        class FutureError(BrokerError, code=999):
            pass

    with pytest.raises(TypeError, match="already has NotLeaderOrFollowerError"):

        class NotLeaderOrFollowerError(BrokerError, code=6):
            pass

    with pytest.raises(TypeError, match="declare it as"):

        class LooseError(BrokerError):
            pass
