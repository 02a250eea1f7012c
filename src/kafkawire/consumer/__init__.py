"""The asyncio consumer: fetching, positions, consumer groups and offsets.

``async with Consumer("topic", group_id="g", bootstrap_servers="host:9092") as consumer:``
then ``async for record in consumer: ...``.
"""

from .record import ConsumerRecord
from .settings import ConsumerOptions, ConsumerSettings

__all__ = ["ConsumerOptions", "ConsumerRecord", "ConsumerSettings"]
