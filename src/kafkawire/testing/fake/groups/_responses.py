"""Answers at the request's version, and answers that are only an error.

The coordinator's logic reads requests at the newest version of their shape and writes
answers at the newest version (as Kafka's coordinator works on version-free ``*Data``
objects); :func:`at_version` moves an answer to the version asked, by
:func:`kafkawire.protocol.versions.convert` and the few rules Kafka applies on the way:

- JoinGroup before v7 has no null protocol name: an error answer carries "";
- LeaveGroup before v3 answers one member, whose error becomes the response's;
- the rest is Kafka's own rule for fields a version lacks (convert's).

:func:`error_response` is what Kafka's ``getErrorResponse`` gives for a request: the error
on the whole request, on each group of a batch, or on each partition of an OffsetCommit.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kafkawire.messages.alter_share_group_offsets import v0 as alter_share_offsets
from kafkawire.messages.consumer_group_describe import v1 as cgd
from kafkawire.messages.consumer_group_heartbeat import v1 as cgh
from kafkawire.messages.delete_groups import v2 as delete
from kafkawire.messages.delete_share_group_offsets import v0 as delete_share_offsets
from kafkawire.messages.describe_groups import v6 as describe
from kafkawire.messages.describe_share_group_offsets import v1 as share_offsets
from kafkawire.messages.heartbeat import v4 as heartbeat
from kafkawire.messages.join_group import v9 as join_group
from kafkawire.messages.leave_group import v2 as leave2
from kafkawire.messages.leave_group import v5 as leave_group
from kafkawire.messages.list_groups import v5 as listing
from kafkawire.messages.offset_delete import v0 as offset_delete
from kafkawire.messages.share_group_describe import v1 as sgd
from kafkawire.messages.share_group_heartbeat import v1 as sgh
from kafkawire.messages.sync_group import v5 as sync_group
from kafkawire.protocol.versions import convert

from ._offsets import commit_response, fetch_error_response

__all__ = ["at_version", "error_response", "leave_request_members"]

_JOIN, _LEAVE = 11, 13
_NULL_PROTOCOL_NAME_VERSION = 7
_LEAVE_BATCH_VERSION = 3


def at_version(response: Any, version: int) -> Any:
    """``response`` (at the newest version of its shape) at ``version``."""
    key = response.__api_key__
    if key == _JOIN and version < _NULL_PROTOCOL_NAME_VERSION and response.protocol_name is None:
        response = replace(response, protocol_name="")
    if (
        key == _LEAVE
        and version < _LEAVE_BATCH_VERSION
        and response.__version__ >= _LEAVE_BATCH_VERSION
    ):
        error = response.error_code or next(
            (m.error_code for m in response.members if m.error_code), 0
        )
        response = leave2.LeaveGroupResponse(error_code=error)
    return convert(response, version)


def leave_request_members(request: Any) -> tuple[tuple[str, str | None], ...]:
    """The (member id, group instance id) pairs a LeaveGroup of any version names."""
    if request.__version__ < _LEAVE_BATCH_VERSION:
        return ((request.member_id, None),)
    return tuple((m.member_id, m.group_instance_id) for m in request.members)


def error_response(request: Any, code: int, message: str | None = None) -> Any:
    """The answer to ``request`` (any group API, any version) that only carries ``code``."""
    key: int = request.__api_key__
    version: int = request.__version__
    if key == 8:
        return commit_response(request, {}, code)
    if key == 9:
        return fetch_error_response(request, code)
    newest: Any
    if key == 11:
        newest = join_group.JoinGroupResponse(
            error_code=code, member_id=request.member_id, protocol_name=None
        )
    elif key == 12:
        newest = heartbeat.HeartbeatResponse(error_code=code)
    elif key == 13:
        newest = leave_group.LeaveGroupResponse(error_code=code)
    elif key == 14:
        newest = sync_group.SyncGroupResponse(error_code=code)
    elif key == 15:
        newest = describe.DescribeGroupsResponse(
            groups=tuple(
                describe.DescribedGroup(group_id=g, error_code=code) for g in request.groups
            )
        )
    elif key == 16:
        newest = listing.ListGroupsResponse(error_code=code)
    elif key == 42:
        newest = delete.DeleteGroupsResponse(
            results=tuple(
                delete.DeletableGroupResult(group_id=g, error_code=code)
                for g in request.groups_names
            )
        )
    elif key == 47:
        newest = offset_delete.OffsetDeleteResponse(error_code=code)
    elif key == 68:
        newest = cgh.ConsumerGroupHeartbeatResponse(error_code=code, error_message=message)
    elif key == 69:
        newest = cgd.ConsumerGroupDescribeResponse(
            groups=tuple(
                cgd.DescribedGroup(group_id=g, error_code=code, error_message=message)
                for g in request.group_ids
            )
        )
    else:
        newest = _share_error_response(request, code, message)
    return at_version(newest, version)


def _share_error_response(request: Any, code: int, message: str | None) -> Any:
    key: int = request.__api_key__
    if key == 76:
        return sgh.ShareGroupHeartbeatResponse(error_code=code, error_message=message)
    if key == 77:
        return sgd.ShareGroupDescribeResponse(
            groups=tuple(
                sgd.DescribedGroup(group_id=g, error_code=code, error_message=message)
                for g in request.group_ids
            )
        )
    if key == 90:
        return share_offsets.DescribeShareGroupOffsetsResponse(
            groups=tuple(
                share_offsets.DescribeShareGroupOffsetsResponseGroup(
                    group_id=g.group_id, error_code=code, error_message=message
                )
                for g in request.groups
            )
        )
    if key == 91:
        return alter_share_offsets.AlterShareGroupOffsetsResponse(
            error_code=code, error_message=message
        )
    if key == 92:
        return delete_share_offsets.DeleteShareGroupOffsetsResponse(
            error_code=code, error_message=message
        )
    raise ValueError(f"API key {key} is not a group API")
