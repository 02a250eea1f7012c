"""A PySpark (4.x) data source for Kafka through kafkawire, registered as format "kafkawire".

``pip install 'kafkawire[spark]'``; the top-level module ``pyspark_kafkawire`` makes PySpark
register it by itself. Batch and streaming reads with the schema of Spark's Kafka source,
batch and streaming writes (``.mode("append")``; at least once). See docs/guide/spark.md.
"""

from .offsets import DataLossError
from .options import OptionError
from .source import KafkawireDataSource

__all__ = ["DataLossError", "KafkawireDataSource", "OptionError"]
