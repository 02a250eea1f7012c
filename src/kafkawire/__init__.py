"""kafkawire: an asyncio Kafka client built on message types generated from Kafka's schemas."""

from kafkawire.errors import KafkawireError

__all__ = ["KafkawireError", "__version__"]

__version__ = "0.1.0"
