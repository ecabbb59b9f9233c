"""Report the values of a notebook's hyperparameter cell as plain JSON, inside the sandboxed worker."""

from __future__ import annotations

import numbers
from typing import Any


def describe_values(**values: Any) -> dict[str, dict[str, Any]]:
    """Turn the notebook's hyperparameter globals into plain data the trusted side can check.

    Args:
        **values: global name -> the value the notebook bound to it.

    Returns:
        name -> {"kind": "int" | "float" | "other", "value": int, float or None, "text": a short
        repr for messages}. Booleans count as "other": `True` is not a layer count.
    """
    described = {}
    for name, value in values.items():
        plain: int | float | None
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            kind, plain = "other", None
        elif isinstance(value, numbers.Integral):
            kind, plain = "int", int(value)
        else:
            kind, plain = "float", float(value)
        described[name] = {"kind": kind, "value": plain, "text": repr(value)[:60]}
    return described
