"""The low-level client: any request to the right broker, and the simple conveniences."""

from .client import EARLIEST, LATEST, FetchResult, KafkaClient, ListedOffset
from .settings import KafkaClientOptions, KafkaClientSettings

__all__ = [
    "EARLIEST",
    "LATEST",
    "FetchResult",
    "KafkaClient",
    "KafkaClientOptions",
    "KafkaClientSettings",
    "ListedOffset",
]
