"""The asyncio admin client: topics, configs, consumer groups and their offsets, share
groups and their start offsets, the cluster, ACLs and SCRAM credentials.

``async with Admin("host:9092") as admin:`` then, for example,
``(await admin.create_topics([NewTopic("orders", partitions=3)]))["orders"]``. Calls about
many items answer each one: an :class:`ItemResults` maps every item to its result, and
looking up an item that failed raises that item's error.
"""

from .acls import AclBinding, AclFilter, AclOperation, AclPermission, PatternType, ResourceType
from .admin import Admin
from .cluster_info import ClusterDescription, LogDirDescription
from .configs import (
    AlterConfigOp,
    ConfigEntry,
    ConfigResource,
    ConfigResourceType,
    ConfigSource,
)
from .group_offsets import CommittedOffset, PartitionLag, ResetTo
from .groups import (
    GroupDescription,
    GroupListing,
    MemberDescription,
    decode_assignment,
    decode_subscription,
)
from .offsets import EARLIEST, LATEST, MAX_TIMESTAMP, ListedOffset
from .results import AdminItemsError, ItemResults
from .scram import ScramCredential, ScramMechanism, ScramUpsert
from .settings import AdminOptions, AdminSettings
from .share_groups import ShareGroupDescription, ShareMemberDescription, SharePartitionOffset
from .topic_names import MAX_TOPIC_NAME_LENGTH, topic_name_problem
from .topics import CreatedTopic, NewTopic, PartitionDescription, TopicDescription

__all__ = [
    "EARLIEST",
    "LATEST",
    "MAX_TIMESTAMP",
    "MAX_TOPIC_NAME_LENGTH",
    "AclBinding",
    "AclFilter",
    "AclOperation",
    "AclPermission",
    "Admin",
    "AdminItemsError",
    "AdminOptions",
    "AdminSettings",
    "AlterConfigOp",
    "ClusterDescription",
    "CommittedOffset",
    "ConfigEntry",
    "ConfigResource",
    "ConfigResourceType",
    "ConfigSource",
    "CreatedTopic",
    "GroupDescription",
    "GroupListing",
    "ItemResults",
    "ListedOffset",
    "LogDirDescription",
    "MemberDescription",
    "NewTopic",
    "PartitionDescription",
    "PartitionLag",
    "PatternType",
    "ResetTo",
    "ResourceType",
    "ScramCredential",
    "ScramMechanism",
    "ScramUpsert",
    "ShareGroupDescription",
    "ShareMemberDescription",
    "SharePartitionOffset",
    "TopicDescription",
    "decode_assignment",
    "decode_subscription",
    "topic_name_problem",
]
