"""Each wire operation once, below the producer, the consumer, the admin client and
``KafkaClient``, which are independent of each other and share these instead of building
the same request each its own way:

- :mod:`.fanout`: a request about partitions of several leaders, split into one request per
  leader, sent at once, merged, and asked again for the partitions whose leader moved;
- :mod:`.list_offsets`: ListOffsets (earliest, latest, max timestamp, by time) and end
  offsets confirmed by a Fetch's high watermark, with one result type, :class:`ListedOffset`;
- :mod:`.group_offsets`: a group's committed offsets (OffsetCommit, OffsetFetch in either
  shape, OffsetDelete), with one result type, :class:`OffsetAndMetadata`;
- :mod:`.fetch_request` and :mod:`.produce_request`: Fetch and Produce built at the version
  a broker takes, naming topics by name or by id;
- :mod:`.member_data`: the consumer protocol's subscription and assignment bytes.

Each generated module of these APIs is imported by one module here and nowhere else
(``tests/operations/test_one_home.py`` keeps it so).
"""

from .group_offsets import Generation, OffsetAndMetadata
from .list_offsets import EARLIEST, LATEST, MAX_TIMESTAMP, ListedOffset

__all__ = ["EARLIEST", "LATEST", "MAX_TIMESTAMP", "Generation", "ListedOffset", "OffsetAndMetadata"]
