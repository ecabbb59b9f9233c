"""Validation of untrusted reply values: each is checked for shape and rebuilt from plain types."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .errors import WorkerFailure


def _malformed(what: str) -> WorkerFailure:
    return WorkerFailure(f"worker sent a malformed reply: {what}")


def text(value: Any, limit: int = 4000) -> str:
    """Args: a reply field. Returns: it as a str (empty when not a string), truncated."""
    return value[:limit] if isinstance(value, str) else ""


def _str_list(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def clean_report(value: Any, extra_errors: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Args: the load reply's value; errors found by the grader itself (skipped statements).
    Returns: {"functions", "classes", "names", "errors"} with plain types only."""
    if not isinstance(value, dict):
        raise _malformed("load report is not a dict")
    errors = []
    for item in [*(value.get("errors") or []), *extra_errors]:
        if isinstance(item, dict):
            line, memory = item.get("line"), item.get("memory") is True
            texts = {key: text(item.get(key)) for key in ("label", "exc_type", "message", "where")}
            errors.append({**texts, "line": line if type(line) is int else None, "memory": memory})
    errors.sort(key=lambda e: (e["label"], e["line"] or 0))
    return {
        "functions": _str_list(value.get("functions")),
        "classes": _str_list(value.get("classes")),
        "names": _str_list(value.get("names")),
        "errors": errors,
    }


def expect_params(value: Any) -> list[tuple[str, list[int]]]:
    """Args: params reply. Returns: [(name, shape)] (WorkerFailure if malformed)."""
    if not isinstance(value, list):
        raise _malformed("parameter list")
    if not all(
        isinstance(item, list)
        and len(item) == 2
        and isinstance(item[0], str)
        and isinstance(item[1], list)
        and all(type(n) is int for n in item[1])
        for item in value
    ):
        raise _malformed("parameter entry")
    return [(item[0], list(item[1])) for item in value]


def expect_modules(value: Any) -> list[tuple[str, str]]:
    """Args: modules reply. Returns: [(name, class name)] (WorkerFailure if malformed)."""
    if not isinstance(value, list) or not all(
        isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item) for item in value
    ):
        raise _malformed("module list")
    return [(item[0], item[1]) for item in value]


def expect_state(value: Any) -> dict[str, torch.Tensor]:
    """Args: state reply. Returns: {name: Tensor} (WorkerFailure if malformed)."""
    if not isinstance(value, dict) or not all(isinstance(k, str) and type(v) is torch.Tensor for k, v in value.items()):
        raise _malformed("state dict")
    return value
