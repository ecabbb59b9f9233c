"""Part 2's module checks (DecoderLayer, Decoder, Transformer.forward) on the shared module checks.

Each part describes itself with a `ModulePart` (how to build it, its inputs, its outputs); the
checks themselves live in autograder.checks.modules, worded here: it builds, its parameters
match, eval-mode outputs reproduce the reference under transplanted weights, it is causal,
dropout is applied, gradients reach every parameter and equal the reference's.
"""

from __future__ import annotations

from assignments.transformer_mt.checks.probes import probe_namespace
from assignments.transformer_mt.messages import t
from assignments.transformer_mt.reference import model as reference_model
from autograder.checks import modules
from autograder.checks.modules import Case, ModulePart

__all__ = ["CHECKS", "Case", "ModulePart"]


# The reference is built with every offered probe standing in (Part 2's probes wrap the given
# classes the student's module must use).
CHECKS = modules.ModuleChecks(
    modules.ModuleTexts(t, "checks.module", method_in_names=True), reference_model, probe_namespace
)
