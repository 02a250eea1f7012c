"""The Kafka protocol's error codes: one row per code, the only place these facts are written.

Each row gives the code, Kafka's name for it, what a client should do about it, and a short
description. ``NONE`` (0) is success, not an error, so it has no row. The rows cover every code
Apache Kafka defines from ``UNKNOWN_SERVER_ERROR`` (-1) through ``SHARE_SESSION_LIMIT_REACHED``
(133, Kafka 4.1); a newer broker may send a code missing here, which ``kafkawire.errors`` turns
into a plain ``BrokerError`` that still carries the code.

The traits follow the Java client's exception classes, so they can be checked against Kafka's
own generated protocol documentation (its "Retriable" column):

- ``RETRIABLE``: the exception derives from ``RetriableException``; the same request may succeed
  if sent again after a backoff.
- ``STALE_METADATA``: it derives from ``InvalidMetadataException``; the client's view of leaders,
  replicas or topic ids is out of date, so refresh metadata before retrying. Always retriable.
- ``STALE_COORDINATOR``: ``COORDINATOR_NOT_AVAILABLE`` and ``NOT_COORDINATOR``, the other two
  subclasses of Kafka 4.1's ``RefreshRetriableException``: look the (group, transaction or share)
  coordinator up again before retrying. ``COORDINATOR_LOAD_IN_PROGRESS`` is not among them: the
  coordinator is right, only busy, so it is merely retriable.

Deliberately not stale metadata, as in Kafka: ``NOT_CONTROLLER`` (retriable; admin requests go to
any broker since KRaft) and ``REBOOTSTRAP_REQUIRED`` (not retriable: the client must drop its
metadata and start again from the bootstrap servers; kafkawire's cluster layer does not do
that yet, so the error reaches the caller).

Data only: ``kafkawire.errors`` builds one exception class per row from this table.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

__all__ = ["ERROR_CODES", "ErrorCode", "Trait"]


class Trait(enum.Flag):
    """What a client should do about an error code (see the module docstring)."""

    FATAL = 0
    RETRIABLE = enum.auto()
    STALE_METADATA = enum.auto()
    STALE_COORDINATOR = enum.auto()


class ErrorCode(NamedTuple):
    """One row of the table."""

    code: int
    name: str
    traits: Trait
    description: str

    @property
    def retriable(self) -> bool:
        """Whether the same request may succeed if sent again after a backoff."""
        return Trait.RETRIABLE in self.traits

    @property
    def invalid_metadata(self) -> bool:
        """Whether metadata must be fetched again before the retry."""
        return Trait.STALE_METADATA in self.traits

    @property
    def invalid_coordinator(self) -> bool:
        """Whether the coordinator must be looked up again before the retry."""
        return Trait.STALE_COORDINATOR in self.traits


# Short names keep each row on one line.
_E = ErrorCode
_F = Trait.FATAL
_R = Trait.RETRIABLE
_M = Trait.RETRIABLE | Trait.STALE_METADATA
_C = Trait.RETRIABLE | Trait.STALE_COORDINATOR

ERROR_CODES: tuple[ErrorCode, ...] = (
    _E(-1, "UNKNOWN_SERVER_ERROR", _F, "The broker hit an unexpected error handling the request."),
    _E(1, "OFFSET_OUT_OF_RANGE", _F, "The offset is outside the range the partition holds."),
    _E(2, "CORRUPT_MESSAGE", _R, "A record failed its CRC, is too large, or is otherwise corrupt."),
    _E(3, "UNKNOWN_TOPIC_OR_PARTITION", _M, "This broker does not host the topic-partition."),
    _E(4, "INVALID_FETCH_SIZE", _F, "The requested fetch size is invalid."),
    _E(5, "LEADER_NOT_AVAILABLE", _M, "The partition has no leader: an election is under way."),
    _E(6, "NOT_LEADER_OR_FOLLOWER", _M, "This broker is not the partition's leader (or replica)."),
    _E(7, "REQUEST_TIMED_OUT", _R, "The request timed out on the broker."),
    _E(8, "BROKER_NOT_AVAILABLE", _F, "The broker is not available."),
    _E(9, "REPLICA_NOT_AVAILABLE", _M, "The replica is not available for the topic-partition."),
    _E(10, "MESSAGE_TOO_LARGE", _F, "A record is larger than the broker's maximum message size."),
    _E(11, "STALE_CONTROLLER_EPOCH", _F, "The controller moved to another broker."),
    _E(12, "OFFSET_METADATA_TOO_LARGE", _F, "The metadata of an offset commit is too large."),
    _E(13, "NETWORK_EXCEPTION", _M, "The broker disconnected before it sent a response."),
    _E(14, "COORDINATOR_LOAD_IN_PROGRESS", _R, "The coordinator is still loading its state."),
    _E(15, "COORDINATOR_NOT_AVAILABLE", _C, "The coordinator is not available."),
    _E(16, "NOT_COORDINATOR", _C, "This broker is not the coordinator for that key."),
    _E(17, "INVALID_TOPIC_EXCEPTION", _F, "The topic name is invalid, or the topic is internal."),
    _E(18, "RECORD_LIST_TOO_LARGE", _F, "A record batch is larger than the log segment size."),
    _E(19, "NOT_ENOUGH_REPLICAS", _R, "Fewer in-sync replicas than required: records rejected."),
    _E(20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND", _R, "Written, but to fewer in-sync replicas."),
    _E(21, "INVALID_REQUIRED_ACKS", _F, "The produce request's acks value is invalid."),
    _E(22, "ILLEGAL_GENERATION", _F, "The group generation id is not the current one."),
    _E(23, "INCONSISTENT_GROUP_PROTOCOL", _F, "The member's protocols match none of the group."),
    _E(24, "INVALID_GROUP_ID", _F, "The group id is invalid."),
    _E(25, "UNKNOWN_MEMBER_ID", _F, "The coordinator does not know this member id."),
    _E(26, "INVALID_SESSION_TIMEOUT", _F, "The session timeout is outside the allowed range."),
    _E(27, "REBALANCE_IN_PROGRESS", _F, "The group is rebalancing: the member must rejoin."),
    _E(28, "INVALID_COMMIT_OFFSET_SIZE", _F, "The committed offset data has an invalid size."),
    _E(29, "TOPIC_AUTHORIZATION_FAILED", _F, "Not authorized for the topic."),
    _E(30, "GROUP_AUTHORIZATION_FAILED", _F, "Not authorized for the group."),
    _E(31, "CLUSTER_AUTHORIZATION_FAILED", _F, "Not authorized for the cluster operation."),
    _E(32, "INVALID_TIMESTAMP", _F, "A record timestamp is outside the accepted range."),
    _E(33, "UNSUPPORTED_SASL_MECHANISM", _F, "The broker does not offer that SASL mechanism."),
    _E(34, "ILLEGAL_SASL_STATE", _F, "The request is not valid in the current SASL state."),
    _E(35, "UNSUPPORTED_VERSION", _F, "The broker does not support this API version."),
    _E(36, "TOPIC_ALREADY_EXISTS", _F, "A topic with this name already exists."),
    _E(37, "INVALID_PARTITIONS", _F, "The number of partitions is invalid."),
    _E(38, "INVALID_REPLICATION_FACTOR", _F, "The replication factor is invalid."),
    _E(39, "INVALID_REPLICA_ASSIGNMENT", _F, "The replica assignment is invalid."),
    _E(40, "INVALID_CONFIG", _F, "The configuration is invalid."),
    _E(41, "NOT_CONTROLLER", _R, "This broker is not the controller of the cluster."),
    _E(42, "INVALID_REQUEST", _F, "The broker found the request malformed or not allowed."),
    _E(43, "UNSUPPORTED_FOR_MESSAGE_FORMAT", _F, "The topic's message format cannot do this."),
    _E(44, "POLICY_VIOLATION", _F, "The request violates a policy configured on the broker."),
    _E(45, "OUT_OF_ORDER_SEQUENCE_NUMBER", _F, "The broker saw an out-of-order sequence number."),
    _E(46, "DUPLICATE_SEQUENCE_NUMBER", _F, "The broker saw a duplicate sequence number."),
    _E(47, "INVALID_PRODUCER_EPOCH", _F, "The producer epoch is older than the current one."),
    _E(48, "INVALID_TXN_STATE", _F, "The transactional operation is invalid in this state."),
    _E(49, "INVALID_PRODUCER_ID_MAPPING", _F, "The producer id is not assigned to this txn id."),
    _E(50, "INVALID_TRANSACTION_TIMEOUT", _F, "The transaction timeout exceeds the maximum."),
    _E(51, "CONCURRENT_TRANSACTIONS", _R, "Another operation on this transaction is under way."),
    _E(52, "TRANSACTION_COORDINATOR_FENCED", _F, "A newer transaction coordinator took over."),
    _E(53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED", _F, "Not authorized for the transactional id."),
    _E(54, "SECURITY_DISABLED", _F, "Security features are disabled on the broker."),
    _E(55, "OPERATION_NOT_ATTEMPTED", _F, "Not attempted: another part of the batch failed."),
    _E(56, "KAFKA_STORAGE_ERROR", _M, "The broker could not access its log on disk."),
    _E(57, "LOG_DIR_NOT_FOUND", _F, "The log directory is not in the broker's configuration."),
    _E(58, "SASL_AUTHENTICATION_FAILED", _F, "SASL authentication failed."),
    _E(59, "UNKNOWN_PRODUCER_ID", _F, "The broker has no state for this producer id."),
    _E(60, "REASSIGNMENT_IN_PROGRESS", _F, "A partition reassignment is in progress."),
    _E(61, "DELEGATION_TOKEN_AUTH_DISABLED", _F, "Delegation tokens are not enabled."),
    _E(62, "DELEGATION_TOKEN_NOT_FOUND", _F, "The broker does not know the delegation token."),
    _E(63, "DELEGATION_TOKEN_OWNER_MISMATCH", _F, "The principal is not the token's owner."),
    _E(64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED", _F, "No delegation tokens over this channel."),
    _E(65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED", _F, "Not authorized for delegation tokens."),
    _E(66, "DELEGATION_TOKEN_EXPIRED", _F, "The delegation token has expired."),
    _E(67, "INVALID_PRINCIPAL_TYPE", _F, "The principal type is not supported."),
    _E(68, "NON_EMPTY_GROUP", _F, "The group is not empty."),
    _E(69, "GROUP_ID_NOT_FOUND", _F, "The group id does not exist."),
    _E(70, "FETCH_SESSION_ID_NOT_FOUND", _R, "The broker does not know the fetch session."),
    _E(71, "INVALID_FETCH_SESSION_EPOCH", _R, "The fetch session epoch is not the expected one."),
    _E(72, "LISTENER_NOT_FOUND", _M, "The leader has no listener matching this connection's."),
    _E(73, "TOPIC_DELETION_DISABLED", _F, "Topic deletion is disabled on the broker."),
    _E(74, "FENCED_LEADER_EPOCH", _M, "The request's leader epoch is older than the broker's."),
    _E(75, "UNKNOWN_LEADER_EPOCH", _R, "The request's leader epoch is newer than the broker's."),
    _E(76, "UNSUPPORTED_COMPRESSION_TYPE", _F, "The client cannot read the topic's compression."),
    _E(77, "STALE_BROKER_EPOCH", _F, "The broker epoch has changed."),
    _E(78, "OFFSET_NOT_AVAILABLE", _R, "The new leader's high watermark has not caught up yet."),
    _E(79, "MEMBER_ID_REQUIRED", _F, "Join again with the member id the coordinator gave."),
    _E(80, "PREFERRED_LEADER_NOT_AVAILABLE", _M, "The preferred leader is not available."),
    _E(81, "GROUP_MAX_SIZE_REACHED", _F, "The group has reached its maximum size."),
    _E(82, "FENCED_INSTANCE_ID", _F, "A newer member with this group instance id fenced it."),
    _E(83, "ELIGIBLE_LEADERS_NOT_AVAILABLE", _M, "No eligible leader for the partition."),
    _E(84, "ELECTION_NOT_NEEDED", _M, "The partition needs no leader election."),
    _E(85, "NO_REASSIGNMENT_IN_PROGRESS", _F, "No partition reassignment is in progress."),
    _E(86, "GROUP_SUBSCRIBED_TO_TOPIC", _F, "The active group is subscribed to the topic."),
    _E(87, "INVALID_RECORD", _F, "The broker's validation rejected a record."),
    _E(88, "UNSTABLE_OFFSET_COMMIT", _R, "Unstable offsets for the partition must clear first."),
    _E(89, "THROTTLING_QUOTA_EXCEEDED", _R, "The request exceeded the throttling quota."),
    _E(90, "PRODUCER_FENCED", _F, "A newer producer with this transactional id fenced it."),
    _E(91, "RESOURCE_NOT_FOUND", _F, "The request referred to a resource that does not exist."),
    _E(92, "DUPLICATE_RESOURCE", _F, "The request referred to the same resource twice."),
    _E(93, "UNACCEPTABLE_CREDENTIAL", _F, "The credential does not meet the acceptance criteria."),
    _E(94, "INCONSISTENT_VOTER_SET", _F, "Sender or receiver is not in the current voter set."),
    _E(95, "INVALID_UPDATE_VERSION", _F, "The update version is invalid."),
    _E(96, "FEATURE_UPDATE_FAILED", _F, "The finalized features could not be updated."),
    _E(97, "PRINCIPAL_DESERIALIZATION_FAILURE", _F, "A forwarded principal was unreadable."),
    _E(98, "SNAPSHOT_NOT_FOUND", _F, "The requested snapshot does not exist."),
    _E(99, "POSITION_OUT_OF_RANGE", _F, "The position is outside the snapshot."),
    _E(100, "UNKNOWN_TOPIC_ID", _M, "This broker does not host a topic with this id."),
    _E(101, "DUPLICATE_BROKER_REGISTRATION", _F, "This broker id is already registered."),
    _E(102, "BROKER_ID_NOT_REGISTERED", _F, "This broker id is not registered."),
    _E(103, "INCONSISTENT_TOPIC_ID", _M, "The log's topic id differs from the request's."),
    _E(104, "INCONSISTENT_CLUSTER_ID", _F, "The cluster id differs from the broker's."),
    _E(105, "TRANSACTIONAL_ID_NOT_FOUND", _F, "The transactional id does not exist."),
    _E(106, "FETCH_SESSION_TOPIC_ID_ERROR", _R, "The fetch session used topic ids inconsistently."),
    _E(107, "INELIGIBLE_REPLICA", _F, "The new ISR contains an ineligible replica."),
    _E(108, "NEW_LEADER_ELECTED", _F, "The partition state changed, and so did its leader."),
    _E(109, "OFFSET_MOVED_TO_TIERED_STORAGE", _F, "The offset has moved to tiered storage."),
    _E(110, "FENCED_MEMBER_EPOCH", _F, "The member epoch is fenced: drop partitions, rejoin."),
    _E(111, "UNRELEASED_INSTANCE_ID", _F, "Another member still holds this group instance id."),
    _E(112, "UNSUPPORTED_ASSIGNOR", _F, "The group does not support the assignor (version)."),
    _E(113, "STALE_MEMBER_EPOCH", _F, "The member epoch is stale: heartbeat for the new one."),
    _E(114, "MISMATCHED_ENDPOINT_TYPE", _F, "The request went to the wrong type of endpoint."),
    _E(115, "UNSUPPORTED_ENDPOINT_TYPE", _F, "This endpoint type is not supported yet."),
    _E(116, "UNKNOWN_CONTROLLER_ID", _F, "The controller id is unknown."),
    _E(117, "UNKNOWN_SUBSCRIPTION_ID", _F, "The telemetry subscription id is unknown or stale."),
    _E(118, "TELEMETRY_TOO_LARGE", _F, "The telemetry push is larger than the broker accepts."),
    _E(119, "INVALID_REGISTRATION", _F, "The controller found the broker registration invalid."),
    _E(120, "TRANSACTION_ABORTABLE", _F, "The transaction failed: abort it to continue."),
    _E(121, "INVALID_RECORD_STATE", _F, "The record's state does not allow the acknowledgement."),
    _E(122, "SHARE_SESSION_NOT_FOUND", _R, "The broker does not know the share session."),
    _E(123, "INVALID_SHARE_SESSION_EPOCH", _R, "The share session epoch is not the expected one."),
    _E(124, "FENCED_STATE_EPOCH", _F, "The share-group state epoch does not match."),
    _E(125, "INVALID_VOTER_KEY", _F, "The voter key does not match the replica's."),
    _E(126, "DUPLICATE_VOTER", _F, "The voter is already in the voter set."),
    _E(127, "VOTER_NOT_FOUND", _F, "The voter is not in the voter set."),
    _E(128, "INVALID_REGULAR_EXPRESSION", _F, "The regular expression is invalid."),
    _E(129, "REBOOTSTRAP_REQUIRED", _F, "Metadata is stale: rebootstrap from the bootstrap list."),
    _E(130, "STREAMS_INVALID_TOPOLOGY", _F, "The streams topology is invalid."),
    _E(131, "STREAMS_INVALID_TOPOLOGY_EPOCH", _F, "The streams topology epoch is invalid."),
    _E(132, "STREAMS_TOPOLOGY_FENCED", _F, "The streams topology epoch is outdated."),
    _E(133, "SHARE_SESSION_LIMIT_REACHED", _R, "The broker has reached its share-session limit."),
)
"""Every error code Kafka defines but ``NONE``, in code order: one :class:`ErrorCode` each."""
