"""kafkawire.testing.strategies, the public hypothesis strategies (round trips use them too)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given

from kafkawire.errors import UnknownMessageError
from kafkawire.messages.metadata.v12 import MetadataResponse
from kafkawire.messages.produce.v11 import ProduceRequest
from kafkawire.protocol import decode, encode
from kafkawire.testing.strategies import messages, messages_of


@given(messages(ProduceRequest))
def test_messages_fit_their_wire_types(request: ProduceRequest) -> None:
    assert -(2**15) <= request.acks < 2**15
    assert decode(ProduceRequest, encode(request)) == request


@given(messages_of(3, 12, "response"))
def test_messages_of_looks_the_class_up(response: MetadataResponse) -> None:
    assert type(response) is MetadataResponse


def test_messages_of_an_unknown_version_is_an_error() -> None:
    with pytest.raises(UnknownMessageError):
        messages_of(3, 999)


def test_only_generated_classes_are_accepted() -> None:
    with pytest.raises(TypeError, match="not a generated kafkawire message class"):
        messages(int)


def test_kafkawire_testing_does_not_import_hypothesis() -> None:
    # hypothesis is the optional "testing" extra: only the strategies module may need it.
    code = "import sys, kafkawire.testing; print('hypothesis' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
