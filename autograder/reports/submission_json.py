"""The full per-submission JSON: sorted keys and a fixed layout, so that regrading diffs cleanly."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from autograder.results import SubmissionResult

TIMING_DIGITS = 3  # grading_seconds is the only field that changes between identical gradings


def json_safe(value: Any) -> Any:
    """Make data strict-JSON: non-finite floats become the strings "nan", "inf", "-inf".

    Args:
        value: plain data (dicts, lists, scalars).

    Returns:
        An equivalent value that `json.dumps(..., allow_nan=False)` accepts.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def dumps_stable(data: Any) -> str:
    """Serialise with sorted keys, two-space indent, UTF-8 text and a final newline.

    Args:
        data: JSON-ready data; objects json cannot encode are written as their str().

    Returns:
        The JSON text.
    """
    return (
        json.dumps(json_safe(data), sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
    )


def submission_json(result: SubmissionResult) -> str:
    """The result as stable JSON (`SubmissionResult.to_json`, timing rounded to milliseconds).

    Args:
        result: one graded submission.

    Returns:
        JSON text; two gradings of the same file differ only in `grading_seconds`.
    """
    data = result.to_json()
    data["grading_seconds"] = round(float(data.get("grading_seconds") or 0.0), TIMING_DIGITS)
    return dumps_stable(data)


def read_submission_json(path: Path) -> SubmissionResult:
    """Read a file holding `submission_json(result)` (or any `to_json` dump).

    Args:
        path: the JSON file.

    Returns:
        The SubmissionResult.
    """
    return SubmissionResult.from_json(json.loads(path.read_text(encoding="utf-8")))
