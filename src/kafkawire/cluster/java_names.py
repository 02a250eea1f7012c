"""Settings written as Java writes them: dotted names, text values (a properties file, the
command line's ``-X``, Spark's ``kafka.*`` options).

``security.protocol=SASL_SSL`` becomes ``security_protocol="SASL_SSL"``: the name in snake_case,
the text converted to what the option takes (an int, ``true``/``false``, a choice matched
without regard to case as Kafka's ``SecurityProtocol.forName`` does, ``k=v,k=v`` for a mapping).
librdkafka's names for the same settings are taken too (``sasl.username``, ``ssl.ca.location``,
...), and so are Kafka 4.1's for the OIDC client (``sasl.oauthbearer.client.credentials.*``).
A few Java settings name things kafkawire does not need (a Java class it has built in, a DNS
policy); they are left out knowingly. Any other name that is not an option is refused,
naming the closest one. A secret's text never appears in a message.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["IGNORED", "in_java_names", "options_from_java"]

_ALIASES = {
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "sasl.oauthbearer.client.credentials.client.id": "sasl_oauthbearer_client_id",
    "sasl.oauthbearer.client.credentials.client.secret": "sasl_oauthbearer_client_secret",
}
IGNORED = frozenset(
    {
        # The login callback handler for OIDC: kafkawire's follows from the token endpoint.
        "sasl.login.callback.handler.class",
        # How Java resolves bootstrap names; kafkawire tries every address a name has.
        "client.dns.lookup",
        # TLS 1.2 and 1.3 are what kafkawire offers, as Java's defaults do.
        "ssl.protocol",
        "ssl.enabled.protocols",
    }
)


def options_from_java(
    settings: type[Any],
    names: Mapping[str, str],
    *,
    source: str,
    elsewhere: Iterable[type[Any]] = (),
) -> dict[str, Any]:
    """Keyword options of the attrs class ``settings`` from Java ``names`` and their text.

    A name that is an option of a class in ``elsewhere`` but not of ``settings`` is left out
    (a properties file shared by a producer and a consumer). ``source`` is put before a name
    in a ``ValueError`` for a name or text that cannot be used (``"-X "``, ``"the option
    kafka."``).
    """
    fields = attrs.fields_dict(settings)
    types_of = typing.get_type_hints(settings)
    others = {name for cls in elsewhere for name in attrs.fields_dict(cls)}
    options: dict[str, Any] = {}
    for name, text in names.items():
        option = _ALIASES.get(name, name.replace(".", "_").replace("-", "_"))
        if name in IGNORED or (option not in fields and option in others):
            continue
        if option not in fields:
            known = sorted(key.replace("_", ".") for key in fields)
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ValueError(f"{source}{name} is not a setting kafkawire has{hint}")
        secret = not fields[option].repr
        options[option] = _from_text(types_of[option], text, f"{source}{name}", secret=secret)
    return options


def in_java_names(message: str, settings: type[Any], prefix: str = "") -> str:
    """``message`` with the options of ``settings`` it names written as Java's names
    (``sasl_plain_username`` as ``kafka.sasl.plain.username`` with the prefix ``kafka.``)."""
    names = sorted(attrs.fields_dict(settings), key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return pattern.sub(lambda found: prefix + found[1].replace("_", "."), message)


def _from_text(kind: Any, text: str, where: str, *, secret: bool) -> Any:
    """``text`` as a value of ``kind``; a ``ValueError`` names ``where`` (not a secret)."""
    shown = "its text" if secret else repr(text)
    value = text.strip()
    for member in _members(kind):
        if member is str or member is typing.Any:
            return text if secret else value
        if typing.get_origin(member) is typing.Literal:
            by_case = {str(choice).lower(): choice for choice in typing.get_args(member)}
            if value.lower() in by_case:
                return by_case[value.lower()]
        elif member is bool and value.lower() in ("true", "false"):
            return value.lower() == "true"
        elif member is int and value.lstrip("-").isdigit():
            return int(value)
        elif typing.get_origin(member) is Mapping:
            return _mapping(value, where)
    choices = [c for m in _members(kind) for c in typing.get_args(m) if _is_literal(m)]
    if choices:  # the option's own check names them
        return value
    raise ValueError(f"{where} cannot be {shown}: {_wanted(kind)}")


def _members(kind: Any) -> list[Any]:
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return [m for m in typing.get_args(kind) if m is not type(None)]
    return [kind]


def _is_literal(member: Any) -> bool:
    return typing.get_origin(member) is typing.Literal


def _wanted(kind: Any) -> str:
    members = _members(kind)
    if int in members:
        return "it takes an integer"
    if bool in members:
        return "it takes true or false"
    return "it cannot be given as text"


def _mapping(value: str, where: str) -> dict[str, str]:
    """``key=value,key=value`` (librdkafka's ``sasl.oauthbearer.extensions``)."""
    pairs: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in value.split(","))):
        key, sep, entry = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{where} must be key=value pairs separated by commas")
        pairs[key.strip()] = entry.strip()
    return pairs
