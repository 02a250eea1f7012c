"""The options of a client's connections and calls, as one frozen, validated value.

:class:`ClientSettings` holds them (attrs validators reject a bad value on construction, with a
message naming the option); :class:`ClientOptions` is the same set as keyword arguments, for
``KafkaClient(bootstrap, request_timeout=5.0)``: a misspelled option is a type error for mypy
and, at run time, a ``TypeError`` naming the option and the class the user called.
"""

from __future__ import annotations

import ssl
import typing
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

import attrs
from attrs import validators

from kafkawire.net.sasl import SaslMechanism
from kafkawire.protocol import MAX_FRAME_SIZE

from ._health import RECONNECT_BACKOFF
from ._search import RecoveryStrategy
from .backoff import Backoff

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = ["ClientOptions", "ClientSettings", "settings_from"]

_positive = validators.gt(0.0)


@attrs.frozen(kw_only=True)
class ClientSettings:
    """How a client connects to brokers and how long it tries; every option has a default.

    Times are in seconds.
    """

    client_id: str = attrs.field(default="kafkawire", validator=validators.instance_of(str))
    """Sent in every request header; brokers log it and apply quotas by it."""

    request_timeout: float = attrs.field(default=30.0, validator=_positive)
    """How long one request may wait for its response (a request the broker holds on
    purpose, such as a long-polling Fetch, gets that wait added). A request that times out
    closes its connection, as in Kafka's Java client."""

    retry_timeout: float = attrs.field(default=30.0, validator=validators.ge(0.0))
    """How long one call may take in all: the search for a broker, retries and their backoff
    included (Kafka's ``default.api.timeout.ms`` plays this part in the Java client). Each
    attempt's own timeout is cut to what is left of it."""

    connect_timeout: float = attrs.field(default=10.0, validator=_positive)
    """TCP connect, TLS handshake, ApiVersions and SASL together, for one connection."""

    metadata_max_age: float = attrs.field(default=300.0, validator=_positive)
    """Cluster metadata older than this is fetched again before it is used."""

    max_frame_size: int = attrs.field(default=MAX_FRAME_SIZE, validator=validators.gt(0))
    """The largest response frame accepted (bytes); a larger size prefix closes the
    connection before anything is allocated."""

    ssl: ssl.SSLContext | None = attrs.field(
        default=None, validator=validators.optional(validators.instance_of(ssl.SSLContext))
    )
    """TLS for every connection (see :func:`kafkawire.net.client_context`); ``None``: plain."""

    sasl: SaslMechanism | None = None
    """SASL authentication on every connection (``Plain``, ``Scram``, ``OAuthBearer``)."""

    backoff: Backoff = attrs.field(factory=Backoff, validator=validators.instance_of(Backoff))
    """Delays between retries: exponential with jitter."""

    reconnect_backoff: Backoff = attrs.field(
        default=RECONNECT_BACKOFF, validator=validators.instance_of(Backoff)
    )
    """How long a broker that failed is left alone before the next connect to it, after each
    failure in a row (Java's ``reconnect.backoff.ms`` and ``reconnect.backoff.max.ms``)."""

    metadata_recovery_strategy: RecoveryStrategy = attrs.field(
        default="rebootstrap", validator=validators.in_(typing.get_args(RecoveryStrategy))
    )
    """``"rebootstrap"``: ask the bootstrap addresses for metadata again when none of the
    brokers the metadata names can be reached (Java's ``metadata.recovery.strategy``)."""

    metadata_recovery_rebootstrap_trigger: float = attrs.field(
        default=300.0, validator=validators.ge(0.0)
    )
    """Rebootstrap too once metadata has been sought this long without success."""

    @classmethod
    def from_options(cls, caller: str, options: dict[str, Any]) -> ClientSettings:
        """Settings from keyword arguments given to ``caller`` (named in a ``TypeError``)."""
        return settings_from(cls, caller, options)


S = TypeVar("S")


def settings_from(cls: type[S], caller: str, options: dict[str, Any]) -> S:
    """An attrs settings class built from keyword arguments a user gave ``caller``: an option
    it does not have is a ``TypeError`` naming that option and ``caller``, not the class."""
    known = {a.name for a in attrs.fields(cast("type[AttrsInstance]", cls))}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(
            f"{caller}() got an unexpected keyword argument {unknown[0]!r}; "
            f"its options are: {', '.join(sorted(known))}"
        )
    return cls(**options)


class ClientOptions(TypedDict, total=False):
    """:class:`ClientSettings`' fields as keyword arguments (a test keeps the two equal)."""

    client_id: str
    request_timeout: float
    retry_timeout: float
    connect_timeout: float
    metadata_max_age: float
    max_frame_size: int
    ssl: ssl.SSLContext | None
    sasl: SaslMechanism | None
    backoff: Backoff
    reconnect_backoff: Backoff
    metadata_recovery_strategy: RecoveryStrategy
    metadata_recovery_rebootstrap_trigger: float
