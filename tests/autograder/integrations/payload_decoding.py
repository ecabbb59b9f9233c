"""What the autograding reporter does with a payload: decode it (test support; the grader only encodes)."""

from __future__ import annotations

import base64
import json
from typing import Any


def decode_payload(encoded: str) -> dict[str, Any]:
    """Inverse of `autograder.reports.reporter_payload.encode_payload` (what the reporter does with `<ID>_RESULTS`).

    Args:
        encoded: base64 text.

    Returns:
        The payload dict.
    """
    payload: dict[str, Any] = json.loads(base64.b64decode(encoded).decode("utf-8"))
    return payload
