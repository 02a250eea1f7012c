"""PySpark 4.x imports every installed top-level module named ``pyspark_*`` and registers its
``DefaultSource`` under that class's ``name()``: this one makes ``format("kafkawire")`` work
with no call to ``spark.dataSource.register``."""

from kafkawire.spark import KafkawireDataSource as DefaultSource

__all__ = ["DefaultSource"]
