"""Access control lists: create, describe and delete ACL bindings."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafkawire.errors import KafkawireError
from kafkawire.messages.create_acls import v3 as create_acls
from kafkawire.messages.delete_acls import v3 as delete_acls
from kafkawire.messages.describe_acls import v3 as describe_acls

from ._base import AdminBase, raise_top_level
from .results import ItemResults, error_of, unanswered

__all__ = [
    "AclBinding",
    "AclFilter",
    "AclOperation",
    "AclPermission",
    "AclsMixin",
    "PatternType",
    "ResourceType",
]


class ResourceType(enum.IntEnum):
    """The kind of resource an ACL is about (Kafka's ``ResourceType``; ``ANY`` only in filters)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    """How an ACL's resource name matches: ``LITERAL`` (that name, or ``*`` for all),
    ``PREFIXED`` (every name starting with it); ``ANY`` and ``MATCH`` only in filters."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(enum.IntEnum):
    """What an ACL allows or denies (Kafka's ``AclOperation``; ``ANY`` only in filters)."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class AclPermission(enum.IntEnum):
    """Whether an ACL allows or denies its operation (``ANY`` only in filters)."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


@dataclass(frozen=True, slots=True)
class AclBinding:
    """``principal`` (such as ``"User:alice"``) may or may not do ``operation`` on a resource
    from ``host`` (``"*"``: any)."""

    resource_type: ResourceType
    resource_name: str
    principal: str
    operation: AclOperation
    permission: AclPermission = AclPermission.ALLOW
    host: str = "*"
    pattern_type: PatternType = PatternType.LITERAL


@dataclass(frozen=True, slots=True)
class AclFilter:
    """Which bindings to describe or delete; ``None`` and the ``ANY`` values match all."""

    resource_type: ResourceType = ResourceType.ANY
    resource_name: str | None = None
    principal: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission: AclPermission = AclPermission.ANY
    host: str | None = None
    pattern_type: PatternType = PatternType.ANY


class AclsMixin(AdminBase):
    async def create_acls(self, bindings: Iterable[AclBinding]) -> ItemResults[AclBinding, None]:
        """Create each ACL binding; the result maps every binding to ``None`` or its own error."""
        wanted = list(bindings)
        request = create_acls.CreateAclsRequest(
            creations=tuple(
                create_acls.AclCreation(
                    resource_type=b.resource_type,
                    resource_name=b.resource_name,
                    resource_pattern_type=b.pattern_type,
                    principal=b.principal,
                    host=b.host,
                    operation=b.operation,
                    permission_type=b.permission,
                )
                for b in wanted
            )
        )
        response = await self._send(request)
        # Answered in the order asked, one result per creation.
        answers = list(response.results)
        return ItemResults(
            {
                b: error_of(answers[i]) if i < len(answers) else unanswered(b, response)
                for i, b in enumerate(wanted)
            }
        )

    async def describe_acls(self, acl_filter: AclFilter = AclFilter()) -> list[AclBinding]:
        """The ACL bindings that match ``acl_filter`` (by default: every binding)."""
        request = describe_acls.DescribeAclsRequest(**_filter_fields(acl_filter))
        response = await self._send(request)
        raise_top_level(response)
        return [
            _binding(r, a, getattr(r, "pattern_type", PatternType.LITERAL))
            for r in response.resources
            for a in r.acls
        ]

    async def delete_acls(
        self, filters: Iterable[AclFilter]
    ) -> ItemResults[AclFilter, list[AclBinding]]:
        """Delete the bindings each filter matches; each filter's deleted bindings."""
        wanted = list(filters)
        request = delete_acls.DeleteAclsRequest(
            filters=tuple(delete_acls.DeleteAclsFilter(**_filter_fields(f)) for f in wanted)
        )
        response = await self._send(request)
        answers = list(response.filter_results)
        results: dict[AclFilter, list[AclBinding] | KafkawireError] = {}
        for i, f in enumerate(wanted):
            if i >= len(answers):
                results[f] = unanswered(f, response)
                continue
            results[f] = error_of(answers[i]) or [
                _binding(m, m, getattr(m, "pattern_type", PatternType.LITERAL))
                for m in answers[i].matching_acls
            ]
        return ItemResults(results)


def _filter_fields(acl_filter: AclFilter) -> dict[str, Any]:
    """A filter as DescribeAcls and DeleteAcls name its fields (the same in both)."""
    return {
        "resource_type_filter": acl_filter.resource_type,
        "resource_name_filter": acl_filter.resource_name,
        "pattern_type_filter": acl_filter.pattern_type,
        "principal_filter": acl_filter.principal,
        "host_filter": acl_filter.host,
        "operation": acl_filter.operation,
        "permission_type": acl_filter.permission,
    }


def _binding(resource: Any, acl: Any, pattern_type: int) -> AclBinding:
    return AclBinding(
        resource_type=ResourceType(resource.resource_type),
        resource_name=resource.resource_name,
        principal=acl.principal,
        operation=AclOperation(acl.operation),
        permission=AclPermission(acl.permission_type),
        host=acl.host,
        pattern_type=PatternType(pattern_type),
    )
