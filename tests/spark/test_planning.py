"""The driver-side rules, without Spark: options, rate limits, how ranges are cut."""

from __future__ import annotations

import attrs
import pytest
from pyspark.sql.types import BinaryType, StructType

from kafkawire.cluster import TopicPartition
from kafkawire.producer import ProducerSettings
from kafkawire.spark.offsets import (
    Bounds,
    DataLossError,
    OffsetRange,
    from_json,
    next_end,
    rate_limited,
    split,
    to_json,
)
from kafkawire.spark.options import (
    EARLIEST,
    WRITE_BATCH_SIZE,
    OptionError,
    ReadOptions,
    Timestamps,
    read_options,
    write_options,
)
from kafkawire.spark.source import KafkawireDataSource

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)
BOOTSTRAP = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_options_arrive_lower_cased_or_not() -> None:
    options = read_options(
        {**BOOTSTRAP, "subscribe": "a, b", "maxOffsetsPerTrigger": "5", "INCLUDEHEADERS": "true"},
        streaming=True,
    )
    assert options.subscribe == ("a", "b")
    assert options.max_offsets_per_trigger == 5
    assert options.include_headers is True
    assert options.starting == "latest"
    assert read_options({**BOOTSTRAP, "assign": '{"a": [1, 0]}'}, streaming=False).assign == (
        ("a", 0),
        ("a", 1),
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"subscribe": "a", "assign": '{"a": [0]}'}, "exactly one of"),
        ({"subscribe": "a", "startingOffsets": "latest"}, "would read nothing"),
        ({"subscribe": "a", "endingOffsets": '{"a": {"0": -2}}'}, "cannot be"),
        ({"subscribe": "a", "startingOffsets": "{nope"}, "not valid JSON"),
        ({"subscribe": "a", "failOnDataLoss": "maybe"}, "true or false"),
        ({"subscribe": "a", "kafka.group.id": "g"}, "unsupported option"),
        # A misspelled name is refused, naming the closest known one.
        ({"subscribe": "a", "startingOffset": "latest"}, "did you mean startingOffsets?"),
        ({"subscribe": "a", "maxOffsetPerTrigger": "5"}, "did you mean maxOffsetsPerTrigger?"),
        ({"subscribe": "a", "toppic": "b"}, "unknown option toppic .* a read takes"),
        ({"subscribe": "a", "groupIdPrefix": "g"}, "groupIdPrefix of Spark's Kafka .* not supp"),
        # Positions by time, and admission control.
        ({"subscribe": "a", "startingOffsetsByTimestamp": '{"a": {"0": -1}}'}, "timestamp -1"),
        ({"subscribe": "a", "endingOffsetsByTimestamp": "[1]"}, "must be like"),
        ({"subscribe": "a", "startingOffsetsByTimestampStrategy": "latest"}, "needs starting"),
        (
            {"subscribe": "a", "startingTimestamp": "5", "startingOffsetsByTimestampStrategy": "x"},
            "must be error or latest",
        ),
        ({"subscribe": "a", "maxTriggerDelay": "5m"}, "maxTriggerDelay needs minOffsetsPerTrigger"),
        (
            {"subscribe": "a", "minOffsetsPerTrigger": "9", "maxOffsetsPerTrigger": "5"},
            r"minOffsetsPerTrigger \(9\) must not be above maxOffsetsPerTrigger \(5\)",
        ),
        (
            {"subscribe": "a", "minOffsetsPerTrigger": "9", "maxTriggerDelay": "soon"},
            "must be a duration such as 15m",
        ),
        # TLS and SASL by Java's names, checked together and named as the user wrote them.
        (
            {"subscribe": "a", "kafka.sasl.mechanism": "PLAIN"},
            "kafka.sasl.mechanism needs kafka.security.protocol 'SASL_SSL'",
        ),
        (
            {"subscribe": "a", "kafka.sasl.mechanisms": "PLAIN"},
            "did you mean kafka.sasl.mechanism?",
        ),
        (
            {"subscribe": "a", "kafka.security.protocol": "SASL_SSL"},
            "kafka.security.protocol 'SASL_SSL' needs kafka.sasl.mechanism",
        ),
        ({"subscribe": "a", "path": "a"}, "takes no path"),
        # Offsets below -2 mean nothing; -1 starts no batch read.
        ({"subscribe": "a", "startingOffsets": '{"a": {"0": -5}}'}, "a/0 the offset -5"),
        ({"subscribe": "a", "endingOffsets": '{"a": {"0": -3}}'}, "endingOffsets gives a/0"),
        ({"subscribe": "a", "startingOffsets": '{"a": {"0": -1}}'}, 'cannot name "latest"'),
        ({"subscribe": "a", "startingOffsets": '{"a": {"0": "5"}}'}, "must be"),
        ({"assign": '{"a": [-1]}'}, "assign must look like"),
    ],
)
def test_bad_read_options_name_the_option(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        read_options({**BOOTSTRAP, **options}, streaming=False)


def test_positions_by_time_in_sparks_order_of_precedence() -> None:
    def spec(**options: str) -> tuple[object, object]:
        read = read_options({**BOOTSTRAP, "subscribe": "a", **options}, streaming=False)
        return read.starting, read.ending

    by_partition = '{"a": {"0": 100, "1": 200}}'
    assert spec(startingTimestamp="5") == (Timestamps(5, "error"), "latest")
    assert spec(startingTimestamp="5", startingOffsetsByTimestamp=by_partition)[0] == Timestamps(
        5, "error"
    )
    assert spec(
        startingOffsetsByTimestamp=by_partition,
        startingOffsets="earliest",
        startingOffsetsByTimestampStrategy="LATEST",
    )[0] == Timestamps({"a": {0: 100, 1: 200}}, "latest")
    assert spec(endingTimestamp="9", endingOffsetsByTimestamp=by_partition)[1] == Timestamps(9)
    assert spec(endingOffsetsByTimestamp=by_partition)[1] == Timestamps({"a": {0: 100, 1: 200}})
    with pytest.raises(OptionError, match="endingTimestamp is for batch reads only"):
        read_options({**BOOTSTRAP, "subscribe": "a", "endingTimestamp": "9"}, streaming=True)


def test_trigger_limits() -> None:
    stream = read_options(
        {**BOOTSTRAP, "subscribe": "a", "minOffsetsPerTrigger": "10", "maxTriggerDelay": "30s"},
        streaming=True,
    )
    assert (stream.min_offsets_per_trigger, stream.max_trigger_delay_ms) == (10, 30_000)
    default = read_options(
        {**BOOTSTRAP, "subscribe": "a", "minOffsetsPerTrigger": "1"}, streaming=True
    )
    assert default.max_trigger_delay_ms == 15 * 60_000  # Spark's "15m"


def test_security_options_on_reads_and_writes_stay_out_of_repr() -> None:
    secret = "pa55-w0rd-3d"
    security = {
        "kafka.security.protocol": "sasl_ssl",  # Java takes any case
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule"
        f' required username="alice" password="{secret}";',
        "kafka.ssl.endpoint.identification.algorithm": "",
    }
    read = read_options({**BOOTSTRAP, "subscribe": "a", **security}, streaming=True)
    write = write_options({**BOOTSTRAP, "topic": "t", **security})
    expected = {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_jaas_config": security["kafka.sasl.jaas.config"],
        "ssl_endpoint_identification_algorithm": "",
    }
    assert read.client_options() == write.client_options() == expected
    assert write.producer_options() == {**expected, "batch_size": WRITE_BATCH_SIZE}
    assert secret not in repr(read)
    assert secret not in repr(write)
    wrong = {**security, "kafka.sasl.jaas.config": f"Mine required password={secret};"}
    with pytest.raises(OptionError, match=r"kafka\.sasl\.jaas\.config names the login") as error:
        read_options({**BOOTSTRAP, "subscribe": "a", **wrong}, streaming=True)
    assert secret not in str(error.value)


def test_streams_take_the_meaning_spark_gives_minus_one_and_minus_two() -> None:
    offsets = '{"a": {"0": -1, "1": -2}}'
    assert read_options({**BOOTSTRAP, "subscribe": "a", "startingOffsets": offsets}, streaming=True)
    with pytest.raises(OptionError, match="the offset -7"):
        read_options(
            {**BOOTSTRAP, "subscribe": "a", "startingOffsets": '{"a": {"0": -7}}'}, streaming=True
        )


def test_misspelled_write_options_are_refused() -> None:
    with pytest.raises(OptionError, match=r"unknown option toppic .* did you mean topic\?"):
        write_options({**BOOTSTRAP, "toppic": "b"})
    # What Spark adds to a streaming write's options is not the user's mistake.
    spark_adds = {"checkpointlocation": "/tmp/c", "queryname": "q"}
    assert write_options({**BOOTSTRAP, "topic": "b", **spark_adds}).topic == "b"


def test_write_options_pass_producer_settings() -> None:
    options = write_options({**BOOTSTRAP, "kafka.linger.ms": "20", "topic": "t"})
    assert options.topic == "t"
    assert dict(options.producer) == {"linger_ms": 20, "batch_size": WRITE_BATCH_SIZE}
    with pytest.raises(OptionError, match=r"kafka\.linger\.ms must be an int"):
        write_options({**BOOTSTRAP, "kafka.linger.ms": "soon"})


def test_writes_batch_by_512_kib_unless_told() -> None:
    """Twice the producer's default (see WRITE_BATCH_SIZE), in every writer's producer."""
    assert dict(write_options(BOOTSTRAP).producer)["batch_size"] == 512 * 1024
    assert 2 * attrs.fields(ProducerSettings).batch_size.default == WRITE_BATCH_SIZE
    given = write_options({**BOOTSTRAP, "kafka.batch.size": "16384"})
    assert dict(given.producer)["batch_size"] == 16384


def test_exactly_once_options() -> None:
    options = write_options(
        {
            **BOOTSTRAP,
            "exactlyOnce": "true",
            "transactionalIdPrefix": "orders",
            "kafka.transaction.timeout.ms": "120000",
        }
    )
    assert (options.exactly_once, options.transactional_id_prefix) == (True, "orders")
    assert dict(options.producer)["transaction_timeout_ms"] == 120000
    assert dict(write_options({**BOOTSTRAP, "kafka.acks": "1"}).producer)["acks"] == 1
    refused = [
        ({"transactionalIdPrefix": "orders"}, "need exactlyOnce=true"),
        ({"kafka.transaction.timeout.ms": "1000"}, "need exactlyOnce=true"),
        ({"exactlyOnce": "true", "kafka.acks": "1"}, "needs kafka.acks=all"),
        ({"exactlyOnce": "true", "transactionalIdPrefix": " "}, "cannot be empty"),
        ({"kafka.linger.ms": "200000"}, "do not make a producer: delivery_timeout_ms"),
    ]
    for given, message in refused:
        with pytest.raises(OptionError, match=message):
            write_options({**BOOTSTRAP, **given})


def test_exactly_once_is_for_streaming_writes() -> None:
    source = KafkawireDataSource({**BOOTSTRAP, "topic": "t", "exactlyOnce": "true"})
    with pytest.raises(OptionError, match="exactlyOnce is for streaming writes"):
        source.writer(StructType().add("value", BinaryType()), overwrite=False)


def test_rate_limit_shares_by_backlog() -> None:
    start = {A0: 0, A1: 0}
    assert rate_limited(start, {A0: 30, A1: 10}, 100) == {A0: 30, A1: 10}
    assert rate_limited(start, {A0: 30, A1: 10}, 8) == {A0: 6, A1: 2}
    # A partition whose share is below one record still moves by one.
    assert rate_limited(start, {A0: 1000, A1: 1}, 10) == {A0: 9, A1: 1}


def test_split_cuts_large_ranges_and_keeps_unknown_starts() -> None:
    ranges = [OffsetRange("a", 0, 0, 10), OffsetRange("a", 1, EARLIEST, 5)]
    assert split(ranges, 1, 4) == [
        OffsetRange("a", 1, EARLIEST, 5),
        OffsetRange("a", 0, 0, 4),
        OffsetRange("a", 0, 4, 8),
        OffsetRange("a", 0, 8, 10),
    ]
    assert len(split([OffsetRange("a", 0, 0, 10)], 5, 1000)) == 5
    assert split([OffsetRange("a", 0, 3, 3)], 1, 10) == [OffsetRange("a", 0, 3, 3)]


def test_offsets_json_is_ordered_and_round_trips() -> None:
    offsets = {TopicPartition("b", 10): 1, TopicPartition("b", 2): 2, A0: 3}
    assert list(to_json(offsets)) == ["a", "b"]
    assert list(to_json(offsets)["b"]) == ["2", "10"]
    assert from_json(to_json(offsets)) == offsets


def _stream_options(fail_on_data_loss: bool = True) -> ReadOptions:
    return read_options(
        {**BOOTSTRAP, "subscribe": "a", "failOnDataLoss": str(fail_on_data_loss)}, streaming=True
    )


def test_next_end_is_the_end_of_each_log() -> None:
    bounds = {A0: Bounds(0, 10), A1: Bounds(4, 6)}
    gone = TopicPartition("b", 0)
    # A1 is new (not in begin): it starts at its earliest offset; b/0 went away and stays.
    ends = next_end({A0: 2, gone: 7}, bounds, None, None, _stream_options())
    assert ends == {A0: 10, A1: 6, gone: 7}
    # A rate limit shares by backlog, A1's counted from its earliest offset: 8 and 2.
    assert next_end({A0: 2}, bounds, None, 5, _stream_options()) == {A0: 6, A1: 5}


def test_next_end_stops_at_the_available_now_target() -> None:
    bounds = {A0: Bounds(0, 10), A1: Bounds(0, 3)}
    # A1 appeared after the target was taken: it does not move past its start.
    assert next_end({A0: 2}, bounds, {A0: 8}, None, _stream_options()) == {A0: 8, A1: 0}
    # A stream's start is resolved after the target is taken (batch 0, source.py): a start
    # past the target does not move, and is no data loss.
    assert next_end({A0: 9, A1: 0}, bounds, {A0: 8, A1: 0}, None, _stream_options()) == {
        A0: 9,
        A1: 0,
    }


def test_next_end_below_the_start_is_data_loss() -> None:
    bounds = {A0: Bounds(0, 3)}
    with pytest.raises(DataLossError, match="the log ends at 3, below the offset 9"):
        next_end({A0: 9}, bounds, None, None, _stream_options())
    assert next_end({A0: 9}, bounds, None, None, _stream_options(False)) == {A0: 3}


def test_arrow_batches_carry_each_records_timestamp_type() -> None:
    from kafkawire.records import RecordBatchBuilder, decode_batches
    from kafkawire.records.arrow_columns import RecordColumns
    from kafkawire.spark.arrow import to_batch

    appended = RecordBatchBuilder(base_offset=5, log_append_time=1)
    appended.append(None, b"a", timestamp=0)
    created = RecordBatchBuilder(base_offset=6)
    created.append(b"k", None, timestamp=2, headers=[("h", b"v")])
    columns = RecordColumns(include_headers=True)
    for batch in decode_batches(appended.build() + created.build()):
        columns.add_batch(batch, 0, 10)
    batch = to_batch("t", 3, columns.finish(), True)
    assert batch.column("timestampType").to_pylist() == [1, 0]
    assert batch.column("offset").to_pylist() == [5, 6]
    assert batch.column("headers").to_pylist()[1] == [{"key": "h", "value": b"v"}]
