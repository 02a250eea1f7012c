"""kafkawire._extensions.load_optional: when an optional C extension is used, and when not."""

from __future__ import annotations

import pytest

from kafkawire._extensions import DISABLE, load_optional


def _refuse(exc: Exception) -> object:
    raise exc


def test_a_loaded_extension_is_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DISABLE, raising=False)
    assert load_optional("kafkawire.x._accel", lambda: "loaded") == "loaded"


def test_disabling_skips_the_load_entirely(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DISABLE, "1")
    assert load_optional("kafkawire.x._accel", lambda: _refuse(AssertionError("loaded"))) is None


def test_an_unbuilt_extension_gives_none_quietly(
    monkeypatch: pytest.MonkeyPatch, recwarn: pytest.WarningsRecorder
) -> None:
    monkeypatch.delenv(DISABLE, raising=False)
    assert load_optional("kafkawire.x._accel", lambda: _refuse(ImportError("no module"))) is None
    assert not recwarn.list


def test_a_stale_build_gives_none_with_a_warning_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DISABLE, raising=False)
    with pytest.warns(RuntimeWarning, match=r"kafkawire\.x\._accel not used: slot layout"):
        result = load_optional("kafkawire.x._accel", lambda: _refuse(TypeError("slot layout")))
    assert result is None


def test_other_failures_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DISABLE, raising=False)
    with pytest.raises(ZeroDivisionError):
        load_optional("kafkawire.x._accel", lambda: 1 // 0)
