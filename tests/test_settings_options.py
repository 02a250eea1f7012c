"""Each client's keyword options are its settings' fields (the TypedDict that types them is
kept by hand beside the attrs class that checks them)."""

from __future__ import annotations

import typing

import attrs
import pytest

from kafkawire.admin import AdminOptions, AdminSettings
from kafkawire.cluster import ClientOptions, ClientSettings, ConnectionOptions, ConnectionSettings
from kafkawire.consumer import ConsumerOptions, ConsumerSettings
from kafkawire.producer import ProducerOptions, ProducerSettings


@pytest.mark.parametrize(
    ("settings", "options"),
    [
        (ClientSettings, ClientOptions),
        (ConnectionSettings, ConnectionOptions),
        (ProducerSettings, ProducerOptions),
        (AdminSettings, AdminOptions),
        (ConsumerSettings, ConsumerOptions),
    ],
)
def test_the_keyword_options_are_the_settings_fields(settings: type, options: type) -> None:
    fields = typing.get_type_hints(settings)
    given = typing.get_type_hints(options)
    keyword = [a for a in attrs.fields(settings) if a.name != "bootstrap_servers"]  # positional
    assert set(given) == {a.name for a in keyword}
    for field in keyword:
        if field.converter is None:
            assert given[field.name] == fields[field.name], field.name
        # else the option takes more spellings (such as acks="all"), which the converter
        # reduces to the field's type: its annotation differs on purpose
