"""Java's sasl.jaas.config: one login module line, parsed; malformed lines named, not shown."""

from __future__ import annotations

import pytest

from kafkawire.net.sasl import parse_jaas_config

SECRET = "s3cr3t"


@pytest.mark.parametrize(
    ("text", "options"),
    [
        (
            'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice"'
            ' password="wonderland";',
            {"username": "alice", "password": "wonderland"},
        ),
        (
            "M required user=bare password='single quoted';",
            {"user": "bare", "password": "single quoted"},
        ),
        ('M optional a="with \\"quote\\" and ; = inside";', {"a": 'with "quote" and ; = inside'}),
        ("M REQUIRED\n  a = 'x'\n  b='';", {"a": "x", "b": ""}),
        ("M sufficient;", {}),
    ],
)
def test_login_module_lines(text: str, options: dict[str, str]) -> None:
    login = parse_jaas_config(text)
    assert login.module == text.split(maxsplit=1)[0]
    assert login.options == options


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "is empty"),
        (f'"{SECRET}" required;', "must start with a login module"),
        (f"M password={SECRET};", "must be followed by a flag"),
        (f'M required password="{SECRET};', "the quote at character 20 is not closed"),
        (f"M required password {SECRET};", "the option password needs =value"),
        ("M required password=;", "the option password has no value"),
        (f"M required password={SECRET}", "must end with ';'"),
        (f"M required password={SECRET}; N required;", "more than one login module"),
    ],
)
def test_malformed_lines_are_refused_without_showing_them(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as error:
        parse_jaas_config(text)
    assert SECRET not in str(error.value)


def test_repr_hides_the_options() -> None:
    assert SECRET not in repr(parse_jaas_config(f"M required password={SECRET};"))
