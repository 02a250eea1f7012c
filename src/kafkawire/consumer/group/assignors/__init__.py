"""The partition assignors of the classic protocol, run by the group leader: ``range``,
``roundrobin`` (:mod:`.assignors`), ``sticky`` and ``cooperative-sticky`` (:mod:`.sticky`)."""

from .assignors import COOPERATIVE, Assignment, Member, assign

__all__ = ["COOPERATIVE", "Assignment", "Member", "assign"]
