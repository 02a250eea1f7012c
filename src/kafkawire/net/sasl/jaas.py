"""Java's ``sasl.jaas.config``: one JAAS login module line, parsed into its class and options.

The form is ``<LoginModule class> <flag> [<name>=<value> ...];`` (Kafka's ``JaasConfig``), for
example ``org.apache.kafka.common.security.plain.PlainLoginModule required username="alice"
password="secret";``. Values are bare words or quoted with ``"`` or ``'`` (a backslash escapes
the next character inside quotes). A client's ``sasl.jaas.config`` holds exactly one login
module, as in Kafka.

The text holds passwords, so no error here quotes any of it: errors name the position and
what was expected there.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "OAUTHBEARER_LOGIN_MODULE",
    "PLAIN_LOGIN_MODULE",
    "SCRAM_LOGIN_MODULE",
    "JaasLogin",
    "parse_jaas_config",
]

PLAIN_LOGIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_LOGIN_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
OAUTHBEARER_LOGIN_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
_FLAGS = ("required", "requisite", "sufficient", "optional")
_PUNCTUATION = "=;"


@dataclass(frozen=True, slots=True)
class JaasLogin:
    """One login module: its class name and options (``repr`` hides the options)."""

    module: str
    options: dict[str, str] = field(repr=False)


def _tokens(text: str) -> list[tuple[str, int, bool]]:
    """Words, quoted strings and ``=``/``;``, each with its position and whether quoted."""
    tokens: list[tuple[str, int, bool]] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
        elif char in _PUNCTUATION:
            tokens.append((char, i, False))
            i += 1
        elif char in "\"'":
            start, i, value = i, i + 1, []
            while i < len(text) and text[i] != char:
                if text[i] == "\\" and i + 1 < len(text):
                    i += 1
                value.append(text[i])
                i += 1
            if i >= len(text):
                raise ValueError(f"sasl_jaas_config: the quote at character {start} is not closed")
            tokens.append(("".join(value), start, True))
            i += 1
        else:
            start = i
            while i < len(text) and not text[i].isspace() and text[i] not in _PUNCTUATION:
                i += 1
            tokens.append((text[start:i], start, False))
    return tokens


def parse_jaas_config(text: str) -> JaasLogin:
    """The one login module of ``text``; a ``ValueError`` says where it is malformed."""
    tokens = _tokens(text)
    if not tokens:
        raise ValueError("sasl_jaas_config is empty; it takes one login module line")
    module, _, quoted = tokens[0]
    if quoted or module in _PUNCTUATION:
        raise ValueError("sasl_jaas_config must start with a login module's class name")
    if len(tokens) < 2 or tokens[1][0].lower() not in _FLAGS or tokens[1][2]:
        raise ValueError(
            f"sasl_jaas_config: the login module's class name must be followed by a flag"
            f" ({', '.join(_FLAGS)})"
        )
    options: dict[str, str] = {}
    i = 2
    while True:
        if i >= len(tokens):
            raise ValueError("sasl_jaas_config must end with ';'")
        name, position, name_quoted = tokens[i]
        if name == ";" and not name_quoted:
            break
        if name_quoted or name in _PUNCTUATION:
            raise ValueError(
                f"sasl_jaas_config: an option name was expected at character {position}"
            )
        if i + 2 >= len(tokens) or tokens[i + 1][0] != "=" or tokens[i + 1][2]:
            raise ValueError(f"sasl_jaas_config: the option {name} needs =value")
        value, _, value_quoted = tokens[i + 2]
        if value in _PUNCTUATION and not value_quoted:
            raise ValueError(f"sasl_jaas_config: the option {name} has no value")
        options[name] = value
        i += 3
    if i + 1 < len(tokens):
        raise ValueError(
            "sasl_jaas_config holds more than one login module; a client takes exactly one"
        )
    return JaasLogin(module, options)
