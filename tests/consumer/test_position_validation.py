"""How a position takes the leader's answer to its validation (KIP-320), without a broker."""

from __future__ import annotations

from kafkawire.cluster import TopicPartition
from kafkawire.consumer import LogTruncationError
from kafkawire.consumer.fetching.leader_epochs import EpochEnd
from kafkawire.consumer.fetching.subscription import SubscriptionState

T0 = TopicPartition("t", 0)


def waiting(policy: str, offset: int = 10, leader_epoch: int = 3) -> SubscriptionState:
    """T0 at ``offset`` (after a record of ``leader_epoch``), whose leader just changed."""
    subscriptions = SubscriptionState(policy, lambda: None)
    subscriptions.assign([T0])
    subscriptions.seek(T0, offset, leader_epoch)
    assert subscriptions.leader_seen(T0, subscriptions.state(T0).epoch, (1, 4), True)
    assert T0 not in subscriptions.fetchable()
    return subscriptions


def test_a_position_within_the_log_is_fetched_again() -> None:
    subscriptions = waiting("earliest")
    epoch = subscriptions.state(T0).epoch
    assert subscriptions.complete_validation(T0, epoch, EpochEnd(3, 12)) is None
    assert subscriptions.fetchable() == [T0]
    assert subscriptions.state(T0).position == 10


def test_a_leader_that_knows_no_such_epoch_resets_by_the_policy() -> None:
    subscriptions = waiting("earliest")
    epoch = subscriptions.state(T0).epoch
    assert subscriptions.complete_validation(T0, epoch, EpochEnd(-1, -1)) is None
    assert subscriptions.needing_reset() == {T0: "earliest"}


def test_without_a_policy_it_is_an_error_naming_no_offset() -> None:
    subscriptions = waiting("none")
    epoch = subscriptions.state(T0).epoch
    error = subscriptions.complete_validation(T0, epoch, EpochEnd(-1, -1))
    assert isinstance(error, LogTruncationError)
    assert error.divergent_offset is None
    assert "no longer holds" in str(error)


def test_an_answer_to_an_older_position_is_ignored() -> None:
    subscriptions = waiting("earliest")
    epoch = subscriptions.state(T0).epoch
    subscriptions.seek(T0, 20)
    assert subscriptions.complete_validation(T0, epoch, EpochEnd(3, 5)) is None
    assert subscriptions.state(T0).position == 20


def test_no_validation_without_a_known_epoch_or_where_the_broker_cannot() -> None:
    subscriptions = SubscriptionState("earliest", lambda: None)
    subscriptions.assign([T0])
    subscriptions.seek(T0, 5)  # a seek by hand: no epoch
    assert not subscriptions.leader_seen(T0, subscriptions.state(T0).epoch, (1, 4), True)
    subscriptions.seek(T0, 5, leader_epoch=3)
    assert not subscriptions.leader_seen(T0, subscriptions.state(T0).epoch, (1, 4), False)
    assert subscriptions.fetchable() == [T0]
