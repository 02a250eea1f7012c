"""The low-level client: any request to the right broker, and the simple conveniences."""

from .client import EARLIEST, LATEST, FetchResult, KafkaClient, KafkaClientOptions, ListedOffset

__all__ = [
    "EARLIEST",
    "LATEST",
    "FetchResult",
    "KafkaClient",
    "KafkaClientOptions",
    "ListedOffset",
]
