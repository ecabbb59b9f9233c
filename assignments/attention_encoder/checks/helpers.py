"""The grader-written code the worker runs apart from the student's (`grader_helpers`).

The engine starts the worker with HELPERS_SOURCE as its helpers source: the probes (checks) and the
worker side of the training part, both plain torch code written by the grader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assignments.attention_encoder.checks.probes import PROBE_SOURCE

WORKER_TRAINING = Path(__file__).resolve().parents[1] / "worker_training.py"
HELPERS_SOURCE = PROBE_SOURCE + "\n\n" + WORKER_TRAINING.read_text(encoding="utf-8")
TRAIN_HELPER = "grader_helpers:train_and_predict"  # called in the worker by that name


def helpers_namespace() -> dict[str, Any]:
    """Run HELPERS_SOURCE in the trusted process (the reference side of the checks).

    Returns:
        Its globals: the probe classes and the training helper.
    """
    namespace: dict[str, Any] = {"__name__": "grader_helpers"}
    exec(compile(HELPERS_SOURCE, "<attention_encoder helpers>", "exec"), namespace)  # our own code
    return namespace
