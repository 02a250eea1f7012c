"""SCRAM credentials: list which users have them, set them (salted here), delete them.

The broker stores only the salted password; it is derived here with PBKDF2 as RFC 5802
defines it, from the password after SASLprep, so the password itself never goes on the wire.
"""

from __future__ import annotations

import enum
import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from kafkawire.errors import KafkawireError
from kafkawire.messages.alter_user_scram_credentials import v0 as alter_scram
from kafkawire.messages.describe_user_scram_credentials import v0 as describe_scram
from kafkawire.net.sasl.saslprep import saslprep

from ._base import AdminBase, raise_top_level
from .results import ItemResults, error_of, unanswered

__all__ = ["ScramCredential", "ScramMechanism", "ScramMixin", "ScramUpsert"]

_MIN_ITERATIONS = 4096  # RFC 7677's minimum, and Kafka's


class ScramMechanism(enum.IntEnum):
    """The SCRAM mechanisms a broker keeps credentials for."""

    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def hash_name(self) -> str:
        """The ``hashlib`` name of the mechanism's hash (``"sha256"`` or ``"sha512"``)."""
        return {1: "sha256", 2: "sha512"}[self.value]


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """A user's SCRAM credential as the broker describes it: its mechanism and iteration count."""

    mechanism: ScramMechanism
    iterations: int


@dataclass(frozen=True, slots=True)
class ScramUpsert:
    """Set ``user``'s password for ``mechanism``."""

    user: str
    password: str
    mechanism: ScramMechanism = ScramMechanism.SCRAM_SHA_256
    iterations: int = _MIN_ITERATIONS


class ScramMixin(AdminBase):
    async def describe_user_scram_credentials(
        self, users: Iterable[str] | None = None
    ) -> ItemResults[str, list[ScramCredential]]:
        """The SCRAM mechanisms each user has credentials for (every user, for ``None``)."""
        request = describe_scram.DescribeUserScramCredentialsRequest(
            users=None if users is None else tuple(describe_scram.UserName(name=u) for u in users)
        )
        response = await self._send(request)
        raise_top_level(response)
        return ItemResults(
            {
                r.user: error_of(r)
                or [
                    ScramCredential(ScramMechanism(c.mechanism), c.iterations)
                    for c in r.credential_infos
                ]
                for r in response.results
            }
        )

    async def alter_user_scram_credentials(
        self,
        upsertions: Iterable[ScramUpsert] = (),
        deletions: Iterable[tuple[str, ScramMechanism]] = (),
    ) -> ItemResults[str, None]:
        """Set and delete users' SCRAM credentials; each user's outcome."""
        upserts = list(upsertions)
        deletes = list(deletions)
        for upsert in upserts:
            if upsert.iterations < _MIN_ITERATIONS:
                raise ValueError(f"SCRAM needs at least {_MIN_ITERATIONS} iterations")
        request = alter_scram.AlterUserScramCredentialsRequest(
            deletions=tuple(
                alter_scram.ScramCredentialDeletion(name=user, mechanism=mechanism)
                for user, mechanism in deletes
            ),
            upsertions=tuple(_salted(u) for u in upserts),
        )
        response = await self._send(request)
        answers: dict[str, KafkawireError | None] = {r.user: error_of(r) for r in response.results}
        users = [u.user for u in upserts] + [user for user, _ in deletes]
        return ItemResults(
            {u: answers[u] if u in answers else unanswered(f"user {u!r}", response) for u in users}
        )


def _salted(upsert: ScramUpsert) -> alter_scram.ScramCredentialUpsertion:
    salt = secrets.token_bytes(32)
    salted = hashlib.pbkdf2_hmac(
        upsert.mechanism.hash_name, saslprep(upsert.password).encode(), salt, upsert.iterations
    )
    return alter_scram.ScramCredentialUpsertion(
        name=upsert.user,
        mechanism=upsert.mechanism,
        iterations=upsert.iterations,
        salt=salt,
        salted_password=salted,
    )
