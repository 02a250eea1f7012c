"""Fetching: what the consumer reads, where it stands in each partition, and the records.

- :mod:`.subscription`: the assignment and where each partition stands (one owner: the
  fetcher, the group and the application write through it), in a fetch state of
  :mod:`.fetch_state`.
- :mod:`.fetcher`: long-polling Fetch requests to every leader at once, and the buffer.
- :mod:`.fetch_session`: fetch sessions (KIP-227), what each broker remembers of our fetches.
- :mod:`.leader_epochs`: checking a position against the leader's log (KIP-320).
- :mod:`.completed_fetch`: one partition's part of a Fetch response, read as it is handed out.
- :mod:`.record`: what the consumer hands out, :class:`~.record.ConsumerRecord`.
"""
