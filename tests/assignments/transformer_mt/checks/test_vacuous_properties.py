"""Properties are credited only with the work they are about: the hidden checks on in-process stand-ins.

Each stand-in is the reference (ReferenceStudent) with one answer replaced by one that has the
right shapes and does no work; the engine-level figures are in the soundness corpus's
degenerate group (tests/soundness).
"""

from __future__ import annotations

from typing import Any

import torch

from assignments.transformer_mt.assignment import ASSIGNMENT
from assignments.transformer_mt.checks import reference_student
from assignments.transformer_mt.checks.reference_student import ReferenceStudent
from autograder.checks.support import CheckContext
from autograder.config import load_config
from autograder.runner import run_checks

GRADER_GLOBALS = dict(ASSIGNMENT.grader_globals)  # Part 2's (assignment.yml `grader_globals`)


class _Degenerate(ReferenceStudent):
    """The reference, except that `cls` returns its first input (plus 0 x nothing) from forward."""

    def __init__(self, cls: str = "", functions: dict[str, Any] | None = None) -> None:
        super().__init__(dict(GRADER_GLOBALS))
        self.cls, self.replaced = cls, functions or {}

    def _functions(self) -> dict[str, Any]:
        return {**super()._functions(), **self.replaced}

    def run(
        self,
        handle: int,
        method: str,
        args: list[Any],
        *,
        mode: str = "eval",
        seed: int = 0,
        set_globals: dict[str, Any] | None = None,
        grad: torch.Tensor | None = None,
        grad_wrt: list[int] | None = None,
    ) -> Any:
        module = self.objects[handle]
        if type(module).__name__ != self.cls or method != "forward" or grad_wrt is not None:
            return super().run(
                handle, method, args, mode=mode, seed=seed, set_globals=set_globals, grad=grad, grad_wrt=grad_wrt
            )
        output = self._degenerate_output(module, args)
        if grad is None:
            return output
        return {"output": output, "param_grads": {n: None for n, _ in module.named_parameters()}}

    def _degenerate_output(self, module: torch.nn.Module, args: list) -> torch.Tensor:
        if self.cls == "DecoderLayer":
            return args[0].clone()  # its input
        model: Any = module  # the reference Transformer or Decoder
        vocab = model.decoder.dense_layer.out_features if self.cls == "Transformer" else model.dense_layer.out_features
        return torch.zeros(*args[1 if self.cls == "Transformer" else 0].shape, vocab)


def _points(student: ReferenceStudent, part: str) -> tuple[float, dict[str, bool]]:
    checks = load_config().parts[part].checks
    verdicts = run_checks(ASSIGNMENT.checks_dir, CheckContext(student=student, seed=0), list(checks))
    return (
        sum(points for check, points in checks.items() if verdicts[check].passed),
        {check: verdicts[check].passed for check in checks},
    )


def test_a_decoder_layer_returning_its_input_keeps_only_the_structural_points() -> None:
    points, passed = _points(_Degenerate("DecoderLayer"), "decoder_layer")
    assert not passed["decoder_layer_causal"]
    assert points <= 0.25 * 20, passed


def test_a_decoder_returning_constant_logits_keeps_only_the_structural_points() -> None:
    points, passed = _points(_Degenerate("Decoder"), "decoder")
    assert not passed["decoder_causal"]
    assert points <= 0.25 * 20, passed


def test_a_forward_returning_zeros_keeps_at_most_a_tenth() -> None:
    points, passed = _points(_Degenerate("Transformer"), "transformer_forward")
    assert not passed["transformer_causal"] and not passed["transformer_mask_routing"]
    assert passed["transformer_train_step"]  # the training step is the reference's
    assert points <= 0.10 * 20, passed


def test_a_mask_that_blocks_everything_does_not_earn_the_padding_point() -> None:
    blocked = {
        "create_look_ahead_mask_for_attention": lambda tgt, pad_idx: torch.zeros(
            tgt.shape[0], 1, tgt.shape[1], tgt.shape[1], dtype=torch.int
        )
    }
    points, passed = _points(_Degenerate(functions=blocked), "look_ahead_mask")
    assert passed["mask_shape_and_dtype"] and not passed["mask_blocks_padding"]
    assert points <= 0.10 * 10, passed


def test_a_constant_loss_does_not_earn_the_padding_points() -> None:
    constant = {"calculate_loss": lambda output, tgt, criterion: torch.tensor(2.5) + 0 * output.sum()}
    points, passed = _points(_Degenerate(functions=constant), "masked_loss")
    assert passed["loss_is_scalar"] and not passed["loss_ignores_padding"]
    assert points <= 0.10 * 10, passed


def test_a_real_loss_with_one_bug_keeps_the_properties_it_has() -> None:
    # Divided by the batch size: the value is wrong, but padding is ignored and the loss scores.
    import assignments.transformer_mt.reference.loss

    student = _Degenerate()

    def by_batch(output: torch.Tensor, tgt: torch.Tensor, criterion: Any) -> torch.Tensor:
        pad = student.globals["pad_idx"]  # the case's pad_idx (set_globals)
        mean = assignments.transformer_mt.reference.loss.calculate_loss(
            output, tgt, torch.nn.CrossEntropyLoss(reduction="none"), pad
        )
        return mean * int((tgt[:, 1:] != pad).sum()) / tgt.shape[0]

    student.replaced = {"calculate_loss": by_batch}
    _, passed = _points(student, "masked_loss")
    assert passed["loss_ignores_padding"] and not passed["loss_value"]


def test_the_training_step_check_sees_swapped_masks_and_a_missing_model_call() -> None:
    assert _points(ReferenceStudent(dict(GRADER_GLOBALS)), "transformer_forward")[1]["transformer_train_step"]
    for wrong in ("model(src_batch, tgt_batch, tgt_attention_mask, src_padding_mask)", "..."):
        student = ReferenceStudent(dict(GRADER_GLOBALS))
        text = reference_student._TRAIN_STEP_SOURCE.replace(
            "model(src_batch, tgt_batch, src_padding_mask, tgt_attention_mask)", wrong
        )
        exec(compile(text, "<wrong train step>", "exec"), student.namespace)
        verdicts = run_checks(ASSIGNMENT.checks_dir, CheckContext(student=student, seed=0), ["transformer_train_step"])
        assert not verdicts["transformer_train_step"].passed, wrong
