"""The cluster layer's own settings: a client's connections and calls, times in seconds.

:class:`ClientSettings` is internal to the clients: what :class:`~kafkawire.cluster.Cluster`
takes. Users write the Java client's options in milliseconds (``request_timeout_ms``, ...),
which each client checks in its own settings class (built on
:class:`~kafkawire.cluster.ConnectionSettings`) and turns into these with
``client_settings()``. The checks of :mod:`kafkawire.cluster.validators` refuse a bad value
on construction, naming the option. :class:`ClientOptions` is the same set as keyword
arguments, for ``Cluster(bootstrap, request_timeout=5.0)`` in the layer's own tests (and, for
one release, ``KafkaClient``'s deprecated names), kept equal to the fields by a test (see
:mod:`kafkawire.cluster.java_settings` for why it is written out). :func:`settings_from`
builds any settings class from keyword arguments: a misspelled option is a ``TypeError``
naming the option, the class the user called and the closest option it has.
"""

from __future__ import annotations

import difflib
import ssl
import typing
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

import attrs

from kafkawire.net.sasl import SaslMechanism
from kafkawire.protocol import MAX_FRAME_SIZE

from ._health import RECONNECT_BACKOFF
from ._search import RecoveryStrategy
from .backoff import Backoff
from .validators import (
    instance_of,
    not_negative_number,
    one_of,
    optional_sasl_mechanism,
    optional_ssl_context,
    positive,
    positive_number,
    text,
)

if TYPE_CHECKING:
    from attrs import AttrsInstance

__all__ = ["ClientOptions", "ClientSettings", "settings_from"]

_BACKOFF = instance_of(Backoff, "a kafkawire.cluster.Backoff")


@attrs.frozen(kw_only=True)
class ClientSettings:
    """How a client connects to brokers and how long it tries; every option has a default.

    Times are in seconds.
    """

    client_id: str = attrs.field(default="kafkawire", validator=text)
    """Sent in every request header; brokers log it and apply quotas by it."""

    request_timeout: float = attrs.field(default=30.0, validator=positive_number)
    """How long one request may wait for its response (a request the broker holds on
    purpose, such as a long-polling Fetch, gets that wait added). A request that times out
    closes its connection, as in Kafka's Java client."""

    retry_timeout: float = attrs.field(default=30.0, validator=not_negative_number)
    """How long one call may take in all: the search for a broker, retries and their backoff
    included (Kafka's ``default.api.timeout.ms`` plays this part in the Java client). Each
    attempt's own timeout is cut to what is left of it."""

    connect_timeout: float = attrs.field(default=10.0, validator=positive_number)
    """TCP connect, TLS handshake, ApiVersions and SASL together, for one connection."""

    metadata_max_age: float = attrs.field(default=300.0, validator=positive_number)
    """Cluster metadata older than this is fetched again before it is used."""

    max_frame_size: int = attrs.field(default=MAX_FRAME_SIZE, validator=positive)
    """The largest response frame accepted (bytes); a larger size prefix closes the
    connection before anything is allocated."""

    ssl: ssl.SSLContext | None = attrs.field(default=None, validator=optional_ssl_context)
    """TLS for every connection (see :func:`kafkawire.net.client_context`); ``None``: plain."""

    sasl: SaslMechanism | None = attrs.field(default=None, validator=optional_sasl_mechanism)
    """SASL authentication on every connection (``Plain``, ``Scram``, ``OAuthBearer``)."""

    backoff: Backoff = attrs.field(factory=Backoff, validator=_BACKOFF)
    """Delays between retries: exponential with jitter."""

    reconnect_backoff: Backoff = attrs.field(default=RECONNECT_BACKOFF, validator=_BACKOFF)
    """How long a broker that failed is left alone before the next connect to it, after each
    failure in a row (Java's ``reconnect.backoff.ms`` and ``reconnect.backoff.max.ms``)."""

    metadata_recovery_strategy: RecoveryStrategy = attrs.field(
        default="rebootstrap", validator=one_of(*typing.get_args(RecoveryStrategy))
    )
    """``"rebootstrap"``: ask the bootstrap addresses for metadata again when none of the
    brokers the metadata names can be reached (Java's ``metadata.recovery.strategy``)."""

    metadata_recovery_rebootstrap_trigger: float = attrs.field(
        default=300.0, validator=not_negative_number
    )
    """Rebootstrap too once metadata has been sought this long without success."""

    @classmethod
    def from_options(cls, caller: str, options: dict[str, Any]) -> ClientSettings:
        """Settings from keyword arguments given to ``caller`` (named in a ``TypeError``)."""
        return settings_from(cls, caller, options)


S = TypeVar("S")


def settings_from(cls: type[S], caller: str, options: dict[str, Any]) -> S:
    """An attrs settings class built from keyword arguments a user gave ``caller``: an option
    it does not have is a ``TypeError`` naming that option, ``caller`` (not the class) and the
    closest option it has, or all of them when none is close."""
    known = sorted(a.name for a in attrs.fields(cast("type[AttrsInstance]", cls)))
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"its options are: {', '.join(known)}"
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}; {hint}")
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
