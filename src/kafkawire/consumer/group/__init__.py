"""Group membership: the consumer's side of its consumer group, with either protocol.

- :mod:`.membership`: what both protocols share (the base :class:`~.membership.GroupMembership`).
- :mod:`.member_state`: the member's state, an enum with a transition table per protocol.
- :mod:`.classic_member`: the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup),
  with the assignors the leader runs (:mod:`.assignors`).
- :mod:`.kip848_member`: the consumer group protocol of KIP-848 (``group_protocol="consumer"``:
  ConsumerGroupHeartbeat; the broker assigns), with what each heartbeat carries
  (:mod:`.heartbeat_request`).
- :mod:`.poll_turns`, :mod:`.listener`, :mod:`.auto_commit`: what runs in the application's
  poll.

The rule every part keeps: **rebalances act in the poll.** The membership runs in background
tasks, but what a rebalance changes in the assignment (partitions revoked, lost or taken up,
the rebalance listener told, the commit before a revocation) runs in the application's next
poll (``getmany``, or a step of an iteration) before it hands out records, as Kafka's Java
client does it inside ``poll()`` (classic) and in its application-thread callbacks (KIP-848).
An application that got records, processed them and then commits still owns their partitions
when it commits; were they revoked behind its back, the commit would quietly leave them out
and their next owner would read them again. The background task queues such work
(:class:`~.poll_turns.PollTurns`) and waits for it; a classic member heartbeats meanwhile, a
KIP-848 member's heartbeats go on beside it. Auto-commit goes from the poll too, for the same
reason. (Closing and a fatal error do not wait for a poll: the application asked for the one
and cannot go on after the other.)
"""
