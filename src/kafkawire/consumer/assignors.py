"""The classic protocol's assignors, at the import path they had before they moved to
:mod:`kafkawire.consumer.group.assignors` (kept for code that imports them from here)."""

from .group.assignors import COOPERATIVE, Assignment, Member, assign

__all__ = ["COOPERATIVE", "Assignment", "Member", "assign"]
