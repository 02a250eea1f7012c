"""SASLprep (RFC 4013), the stringprep profile SCRAM applies to user names and passwords.

Applied as for "queries" (RFC 3454 section 7): unassigned code points are allowed. RFC 5802
asks ``Normalize()`` for "stored strings", which refuse them; this deviates on purpose, since
"unassigned" means unassigned in Unicode 3.2 (every emoji, for one) and Kafka's Java broker
accepts such passwords. For printable ASCII it changes nothing. Kafka's Java broker does not
apply SASLprep when it stores SCRAM credentials, so a password that SASLprep changes (one with
non-ASCII spaces, soft hyphens or compatibility characters) matches RFC-conformant servers but
not a credential a Java broker derived from the raw string.
"""

from __future__ import annotations

import stringprep
import unicodedata

__all__ = ["saslprep"]

_PROHIBITED = (
    stringprep.in_table_c12,  # non-ASCII space
    stringprep.in_table_c21,  # ASCII control
    stringprep.in_table_c22,  # non-ASCII control
    stringprep.in_table_c3,  # private use
    stringprep.in_table_c4,  # non-character code points
    stringprep.in_table_c5,  # surrogates
    stringprep.in_table_c6,  # inappropriate for plain text
    stringprep.in_table_c7,  # inappropriate for canonical representation
    stringprep.in_table_c8,  # change display properties, deprecated
    stringprep.in_table_c9,  # tagging characters
)


def saslprep(value: str) -> str:
    """``value`` prepared by RFC 4013; raises ``ValueError`` naming a prohibited character."""
    # Mapping (RFC 4013 2.1): non-ASCII spaces to SPACE, "commonly mapped to nothing" removed.
    mapped = "".join(
        " " if stringprep.in_table_c12(c) else c for c in value if not stringprep.in_table_b1(c)
    )
    prepared = unicodedata.normalize("NFKC", mapped)
    for c in prepared:
        if any(table(c) for table in _PROHIBITED):
            raise ValueError(f"SASLprep prohibits the character U+{ord(c):04X}")
    # Bidirectional text (RFC 3454 section 6).
    if any(stringprep.in_table_d1(c) for c in prepared):
        if any(stringprep.in_table_d2(c) for c in prepared):
            raise ValueError("SASLprep prohibits mixing right-to-left and left-to-right text")
        if not (stringprep.in_table_d1(prepared[0]) and stringprep.in_table_d1(prepared[-1])):
            raise ValueError("SASLprep requires right-to-left text to start and end with it")
    return prepared
