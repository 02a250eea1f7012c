"""The helper process that holds librdkafka's mock cluster (run by ``MockCluster``, not imported).

librdkafka's mock cluster lives inside a client handle (``rd_kafka_t``) for as long as that
handle does, and its settings (share groups: where they start reading, the acquisition lock,
the heartbeat, the assignment) are reachable only through its C API
(``rd_kafka_mock_*``, declared in librdkafka's ``rdkafka_mock.h``). So this process loads the
librdkafka inside the confluent-kafka wheel with ctypes, creates a producer handle and a mock
cluster on it (``rd_kafka_mock_cluster_new``), applies the share-group settings given on its
command line, and prints one JSON line ``{"bootstrap": ..., "librdkafka": ...}`` to stdout.

Then it serves commands, one JSON object per stdin line, answering one JSON line each
(``{"ok": true, ...}`` or ``{"error": "..."}``), until stdin closes (the parent exited or let
go) or SIGTERM arrives:

- ``{"op": "share_settings", "settings": {"record_lock_duration": 2000, ...}}``: the mock's
  ``rd_kafka_mock_sharegroup_set_<name>`` for each (every share group, and those to come);
- ``{"op": "share_members", "group": "g"}``: ``{"ok": true, "members": [member ids]}``;
- ``{"op": "share_assign", "group": "g", "assignment": {"member": [["topic", 0], ...]}}``:
  a target assignment of the mock's (its assignor no longer runs for that group);
- ``{"op": "telemetry", "metrics": ["org.apache.kafka."], "push_interval_ms": 100}``: what
  the mock's GetTelemetrySubscriptions asks clients for (KIP-714; by default nothing, every
  5 minutes);
- ``{"op": "track_requests"}``, then ``{"op": "requests"}``: ``{"ok": true, "api_keys":
  [...]}``, the API key of every request received since;
- ``{"op": "pushed_metrics"}``: ``{"ok": true, "names": [...]}``, the metric names the
  mock's own OTLP decoder read from pushes (its ``MOCKTELEMETRY`` log lines, caught by a log
  callback that writes every line to stderr as librdkafka would).

The mock's own threads serve the brokers; diagnostics go to stderr, which the parent sends to
a log file. The sharegroup functions are not in librdkafka's stable API: their signatures here
are those of librdkafka 2.16 (``src/rdkafka_mock_sharegrp.c``).
"""

from __future__ import annotations

import ctypes
import json
import re
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

_PRODUCER = 0  # rd_kafka_type_t RD_KAFKA_PRODUCER
_ERRSTR = 512
_LOG_CB = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)
_PUSHED_NAME = re.compile(r"string value: (org\.apache\.kafka\.\S+)")
# The setters of rdkafka_mock_sharegrp.c that take (mcluster, int), by the suffix they add.
SHARE_SETTERS = frozenset(
    {
        "auto_offset_reset",  # 0 latest (the mock's default), 1 earliest
        "record_lock_duration",
        "heartbeat_interval",
        "session_timeout",
        "max_delivery_attempts",
        "max_size",
        "max_record_locks",
    }
)


def _library_path() -> Path:
    """The librdkafka that confluent-kafka's wheel bundles (auditwheel's ``.libs`` beside the
    package on Linux, delocate's ``.dylibs`` inside it on macOS)."""
    import confluent_kafka

    package = Path(confluent_kafka.__file__).parent
    for pattern in ("../confluent_kafka.libs/librdkafka*", ".dylibs/librdkafka*"):
        found = sorted(package.glob(pattern))
        if found:
            return found[0]
    raise RuntimeError(f"no librdkafka found in the confluent-kafka wheel at {package}")


class MockLibrary:
    """The part of librdkafka's C API the helper uses, typed for ctypes."""

    def __init__(self, path: Path) -> None:
        lib = self._lib = ctypes.CDLL(str(path))
        p, i, s, z = ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t
        self._declare("rd_kafka_version_str", s, [])
        self._declare("rd_kafka_conf_new", p, [])
        self._declare("rd_kafka_new", p, [i, p, ctypes.c_char_p, z])
        self._declare("rd_kafka_mock_cluster_new", p, [p, i])
        self._declare("rd_kafka_mock_cluster_bootstraps", s, [p])
        self._declare("rd_kafka_mem_free", None, [p, p])
        self._declare("rd_kafka_topic_partition_list_new", p, [i])
        self._declare("rd_kafka_topic_partition_list_add", p, [p, s, ctypes.c_int32])
        self._declare("rd_kafka_topic_partition_list_destroy", None, [p])
        self._declare(
            "rd_kafka_mock_sharegroup_get_member_ids",
            i,
            [p, s, ctypes.POINTER(ctypes.POINTER(p)), ctypes.POINTER(z)],
        )
        self._declare(
            "rd_kafka_mock_sharegroup_target_assignment",
            None,
            [p, s, ctypes.POINTER(s), ctypes.POINTER(p), z],
        )
        for name in SHARE_SETTERS:
            self._declare(f"rd_kafka_mock_sharegroup_set_{name}", None, [p, i])
        self._declare("rd_kafka_conf_set_log_cb", None, [p, _LOG_CB])
        self._declare(
            "rd_kafka_mock_telemetry_set_requested_metrics", None, [p, ctypes.POINTER(s), z]
        )
        self._declare("rd_kafka_mock_telemetry_set_push_interval", None, [p, ctypes.c_int64])
        self._declare("rd_kafka_mock_start_request_tracking", None, [p])
        self._declare("rd_kafka_mock_get_requests", ctypes.POINTER(p), [p, ctypes.POINTER(z)])
        self._declare("rd_kafka_mock_request_api_key", ctypes.c_int16, [p])
        self._declare("rd_kafka_mock_request_destroy_array", None, [ctypes.POINTER(p), z])
        self.lib = lib

    def _declare(self, name: str, restype: Any, argtypes: list[Any]) -> None:
        function = getattr(self._lib, name)
        function.restype = restype
        function.argtypes = argtypes


class Mock:
    """One mock cluster, on a producer handle that lives as long as this process."""

    def __init__(self, library: MockLibrary, brokers: int) -> None:
        self._lib = lib = library.lib
        self.pushed_names: set[str] = set()
        self._names_lock = threading.Lock()
        self._log = _LOG_CB(self._logged)  # kept: librdkafka calls it for the handle's life
        conf = lib.rd_kafka_conf_new()
        lib.rd_kafka_conf_set_log_cb(conf, self._log)
        errstr = ctypes.create_string_buffer(_ERRSTR)
        self._rk = lib.rd_kafka_new(_PRODUCER, conf, errstr, _ERRSTR)
        if not self._rk:
            raise RuntimeError(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._cluster = lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._cluster:
            raise RuntimeError("rd_kafka_mock_cluster_new failed")
        self.bootstrap: str = lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()
        self.version: str = lib.rd_kafka_version_str().decode()

    def share_settings(self, settings: dict[str, int]) -> None:
        unknown = set(settings) - SHARE_SETTERS
        if unknown:
            known = ", ".join(sorted(SHARE_SETTERS))
            raise ValueError(f"no share-group setting {sorted(unknown)} (known: {known})")
        for name, value in settings.items():
            getattr(self._lib, f"rd_kafka_mock_sharegroup_set_{name}")(self._cluster, int(value))

    def share_members(self, group: str) -> list[str]:
        ids = ctypes.POINTER(ctypes.c_void_p)()
        count = ctypes.c_size_t()
        err = self._lib.rd_kafka_mock_sharegroup_get_member_ids(
            self._cluster, group.encode(), ctypes.byref(ids), ctypes.byref(count)
        )
        if err:
            raise LookupError(f"share group {group!r}: error {err} (is it known to the mock?)")
        members = []
        for index in range(count.value):
            members.append(ctypes.cast(ids[index], ctypes.c_char_p).value.decode())  # type: ignore[union-attr]
            self._lib.rd_kafka_mem_free(self._rk, ids[index])
        if ids:
            self._lib.rd_kafka_mem_free(self._rk, ids)
        return members

    def share_assign(self, group: str, assignment: dict[str, list[list[Any]]]) -> None:
        lib = self._lib
        members = list(assignment)
        lists = []
        for member in members:
            partitions = lib.rd_kafka_topic_partition_list_new(len(assignment[member]))
            for topic, partition in assignment[member]:
                lib.rd_kafka_topic_partition_list_add(partitions, topic.encode(), int(partition))
            lists.append(partitions)
        try:
            ids = (ctypes.c_char_p * len(members))(*(m.encode() for m in members))
            parts = (ctypes.c_void_p * len(lists))(*lists)
            lib.rd_kafka_mock_sharegroup_target_assignment(
                self._cluster, group.encode(), ids, parts, len(members)
            )
        finally:
            for partitions in lists:
                lib.rd_kafka_topic_partition_list_destroy(partitions)

    def _logged(self, rk: int, level: int, facility: bytes, message: bytes) -> None:
        """librdkafka's log line (on its threads): to stderr, and a pushed metric's name kept."""
        text = message.decode(errors="replace")
        sys.stderr.write(f"%{level}|{facility.decode(errors='replace')}| {text}\n")
        found = _PUSHED_NAME.search(text) if facility == b"MOCKTELEMETRY" else None
        if found:
            with self._names_lock:
                self.pushed_names.add(found.group(1))

    def telemetry(self, metrics: list[str], push_interval_ms: int) -> None:
        names = (ctypes.c_char_p * len(metrics))(*(m.encode() for m in metrics))
        self._lib.rd_kafka_mock_telemetry_set_requested_metrics(self._cluster, names, len(metrics))
        self._lib.rd_kafka_mock_telemetry_set_push_interval(self._cluster, push_interval_ms)

    def requests(self) -> list[int]:
        count = ctypes.c_size_t()
        found = self._lib.rd_kafka_mock_get_requests(self._cluster, ctypes.byref(count))
        keys = [self._lib.rd_kafka_mock_request_api_key(found[i]) for i in range(count.value)]
        self._lib.rd_kafka_mock_request_destroy_array(found, count)
        return keys

    def serve(self, command: dict[str, Any]) -> dict[str, Any]:
        op = command.get("op")
        if op == "share_settings":
            self.share_settings(command["settings"])
            return {"ok": True}
        if op == "share_members":
            return {"ok": True, "members": self.share_members(command["group"])}
        if op == "share_assign":
            self.share_assign(command["group"], command["assignment"])
            return {"ok": True}
        if op == "telemetry":
            self.telemetry(list(command["metrics"]), int(command["push_interval_ms"]))
            return {"ok": True}
        if op == "track_requests":
            self._lib.rd_kafka_mock_start_request_tracking(self._cluster)
            return {"ok": True}
        if op == "requests":
            return {"ok": True, "api_keys": self.requests()}
        if op == "pushed_metrics":
            with self._names_lock:
                return {"ok": True, "names": sorted(self.pushed_names)}
        raise ValueError(f"unknown command {op!r}")


def _answer(reply: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def _serve_stdin(mock: Mock, stop: threading.Event) -> None:
    for line in sys.stdin:
        try:
            reply = mock.serve(json.loads(line))
        except Exception as exc:  # the parent hears of it; the cluster goes on
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        _answer(reply)
    stop.set()


def main(brokers: int, share_settings: dict[str, int]) -> int:
    stop = threading.Event()

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_sigterm)
    mock = Mock(MockLibrary(_library_path()), brokers)
    mock.share_settings(share_settings)
    _answer({"bootstrap": mock.bootstrap, "librdkafka": mock.version})
    threading.Thread(target=_serve_stdin, args=(mock, stop), daemon=True).start()
    while not stop.wait(0.5):  # a timed wait lets SIGTERM's handler run
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}))
