"""librdkafka's mock cluster in this process, through ctypes on the librdkafka of the
confluent-kafka wheel, for what the helper process of ``kafkawire.testing`` cannot do: set the
metrics its GetTelemetrySubscriptions asks for (``rd_kafka_mock_telemetry_set_*``), count the
requests it received, and read what its own OTLP decoder logs of each push (``MOCKTELEMETRY``
lines, caught by a log callback).

The mock runs on librdkafka's threads; the test's event loop talks to it over loopback.
"""

from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["RdkafkaMock", "rdkafka_mock"]

_P = ctypes.c_void_p
_LOG_CB = ctypes.CFUNCTYPE(None, _P, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)
_METRIC_NAME = re.compile(r"string value: (org\.apache\.kafka\.\S+)")


def _library() -> ctypes.CDLL:
    import confluent_kafka

    libs = Path(confluent_kafka.__file__).parent.parent / "confluent_kafka.libs"
    lib = ctypes.CDLL(str(next(libs.glob("librdkafka*"))))
    signatures: dict[str, tuple[Any, list[Any]]] = {
        "rd_kafka_conf_new": (_P, []),
        "rd_kafka_conf_set_log_cb": (None, [_P, _LOG_CB]),
        "rd_kafka_new": (_P, [ctypes.c_int, _P, ctypes.c_char_p, ctypes.c_size_t]),
        "rd_kafka_destroy": (None, [_P]),
        "rd_kafka_mock_cluster_new": (_P, [_P, ctypes.c_int]),
        "rd_kafka_mock_cluster_destroy": (None, [_P]),
        "rd_kafka_mock_cluster_bootstraps": (ctypes.c_char_p, [_P]),
        "rd_kafka_mock_telemetry_set_requested_metrics": (
            None,
            [_P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t],
        ),
        "rd_kafka_mock_telemetry_set_push_interval": (None, [_P, ctypes.c_int64]),
        "rd_kafka_mock_start_request_tracking": (None, [_P]),
        "rd_kafka_mock_get_requests": (ctypes.POINTER(_P), [_P, ctypes.POINTER(ctypes.c_size_t)]),
        "rd_kafka_mock_request_api_key": (ctypes.c_int16, [_P]),
        "rd_kafka_mock_request_destroy_array": (None, [ctypes.POINTER(_P), ctypes.c_size_t]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes
    return lib


class RdkafkaMock:
    """One running mock cluster: its ``bootstrap``, the ``api_keys`` it received so far, and
    the metric names its decoder read from pushes (``pushed_names``)."""

    def __init__(self, lib: ctypes.CDLL, cluster: int, bootstrap: str) -> None:
        self._lib = lib
        self._cluster = cluster
        self.bootstrap = bootstrap
        self.pushed_names: set[str] = set()
        self._lock = threading.Lock()

    def logged(self, line: str) -> None:
        found = _METRIC_NAME.search(line)
        if found:
            with self._lock:
                self.pushed_names.add(found.group(1))

    def api_keys(self) -> list[int]:
        count = ctypes.c_size_t()
        requests = self._lib.rd_kafka_mock_get_requests(self._cluster, ctypes.byref(count))
        keys = [self._lib.rd_kafka_mock_request_api_key(requests[i]) for i in range(count.value)]
        self._lib.rd_kafka_mock_request_destroy_array(requests, count)
        return keys


@contextmanager
def rdkafka_mock(requested_metrics: Sequence[str], push_interval_ms: int) -> Iterator[RdkafkaMock]:
    """A one-broker mock cluster whose subscription asks for ``requested_metrics`` every
    ``push_interval_ms``, tracking requests."""
    lib = _library()
    mock: list[RdkafkaMock] = []

    @_LOG_CB
    def log(rk: int, level: int, facility: bytes, message: bytes) -> None:
        if mock and facility == b"MOCKTELEMETRY":
            mock[0].logged(message.decode(errors="replace"))

    conf = lib.rd_kafka_conf_new()
    lib.rd_kafka_conf_set_log_cb(conf, log)
    error = ctypes.create_string_buffer(512)
    client = lib.rd_kafka_new(0, conf, error, len(error))  # a producer: it owns the mock
    assert client, error.value.decode()
    cluster = lib.rd_kafka_mock_cluster_new(client, 1)
    try:
        names = (ctypes.c_char_p * len(requested_metrics))(*(n.encode() for n in requested_metrics))
        lib.rd_kafka_mock_telemetry_set_requested_metrics(cluster, names, len(requested_metrics))
        lib.rd_kafka_mock_telemetry_set_push_interval(cluster, push_interval_ms)
        lib.rd_kafka_mock_start_request_tracking(cluster)
        bootstrap = lib.rd_kafka_mock_cluster_bootstraps(cluster).decode()
        mock.append(RdkafkaMock(lib, cluster, bootstrap))
        yield mock[0]
    finally:
        lib.rd_kafka_mock_cluster_destroy(cluster)
        lib.rd_kafka_destroy(client)
