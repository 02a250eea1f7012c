"""Share groups' partitions on their leaders (KIP-932): the in-flight records of each share
partition with their states, delivery counts and acquisition locks, and each broker's share
sessions; ShareFetch and ShareAcknowledge (in :mod:`kafkawire.testing.fake.handlers`) work on
them. Share-group membership and assignment are the group coordinator's
(:mod:`kafkawire.testing.fake.groups`), which reaches this state only through
:class:`~kafkawire.testing.fake.view.ShareStateView`.

Module map: ``records`` (one record's state and what moves it), ``partition`` (one share
partition: acknowledge, release, expire, its start offset), ``acquire`` (what a fetch acquires,
by acquire mode), ``acks`` (acknowledgement batches as Kafka checks them), ``sessions`` (share
sessions), ``store`` (every share partition, the lock timers, the sessions of each broker).
"""

from .partition import InFlightRecord, SharePartitionState
from .records import RecordState
from .store import SharePartitions

__all__ = ["InFlightRecord", "RecordState", "SharePartitionState", "SharePartitions"]
