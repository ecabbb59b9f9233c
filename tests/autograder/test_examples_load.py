"""The bundled example notebooks load, and the correct one's definitions actually work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.assignment import load_assignment
from autograder.notebook import LoadedSubmission, load_submission

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PROVIDED = load_assignment("transformer_mt").provided_names  # what the engine passes for Part 2
VOCAB_SIZE = {"de": 40, "en": 50}
PAD, SOS, EOS = 3, 1, 2
GRADED_MODEL_NAMES = ("DecoderLayer", "Decoder", "Transformer")


def grader_globals() -> dict:
    """What the grading worker defines before running a submission's statements."""
    return {
        "__name__": "submission",
        "device": torch.device("cpu"),
        "src_language": "de",
        "tgt_language": "en",
        "unk_idx": 0,
        "sos_idx": SOS,
        "eos_idx": EOS,
        "pad_idx": PAD,
        "vocab_size": dict(VOCAB_SIZE),
    }


def run_statements(submission: LoadedSubmission) -> tuple[dict, list[tuple[str, BaseException]]]:
    """Execute the kept statements one by one, as the worker does, collecting failures."""
    namespace = grader_globals()
    failures: list[tuple[str, BaseException]] = []
    for statement in submission.statements:
        padded = "\n" * (statement.line - 1) + statement.code
        try:
            exec(compile(padded, f"<cell {statement.cell}>", "exec"), namespace)
        except Exception as error:  # a failing statement must not stop the rest
            failures.append((statement.label, error))
    return namespace, failures


@pytest.fixture(scope="module")
def correct() -> dict:
    namespace, failures = run_statements(
        load_submission(EXAMPLES / "correct_original_format.ipynb", provided_names=PROVIDED)
    )
    # Only imports of packages this environment lacks (seaborn) may fail.
    assert all(isinstance(error, ImportError) for _, error in failures), failures
    return namespace


@pytest.fixture(scope="module")
def buggy() -> dict:
    namespace, failures = run_statements(
        load_submission(EXAMPLES / "buggy_original_format.ipynb", provided_names=PROVIDED)
    )
    assert all(isinstance(error, ImportError) for _, error in failures), failures
    return namespace


def random_batch(batch_size: int, length: int, vocab: int, seed: int) -> torch.Tensor:
    """Token ids with <sos>, an <eos> and right padding of varying length."""
    generator = torch.Generator().manual_seed(seed)
    batch = torch.randint(4, vocab, (batch_size, length), generator=generator)
    batch[:, 0] = SOS
    for row in range(batch_size):
        end = length - 1 - row % 4
        batch[row, end] = EOS
        batch[row, end + 1 :] = PAD
    return batch


def reference_look_ahead(tgt: torch.Tensor) -> torch.Tensor:
    length = tgt.size(1)
    causal = torch.tril(torch.ones(length, length, dtype=torch.bool))
    return (causal.view(1, 1, length, length) & (tgt != PAD).view(tgt.size(0), 1, 1, length)).to(torch.int)


def reference_loss(logits: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    token_losses = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1), reduction="none"
    )
    not_pad = (tgt[:, 1:] != PAD).reshape(-1)
    return (token_losses * not_pad).sum() / not_pad.sum()


def build_model(namespace: dict) -> torch.nn.Module:
    torch.manual_seed(0)
    return namespace["Transformer"](VOCAB_SIZE, 12, 32, 64, 4, 2, 0.1).eval()


def test_builder_output_is_current() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "build_examples.py"), "--check"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_correct_notebook_forward_and_loss(correct: dict) -> None:
    model = build_model(correct)
    src, tgt = random_batch(4, 12, VOCAB_SIZE["de"], 1), random_batch(4, 12, VOCAB_SIZE["en"], 2)
    src_mask = correct["create_padding_mask_for_attention"](src, PAD)
    tgt_mask = correct["create_look_ahead_mask_for_attention"](tgt, PAD)
    assert tgt_mask.dtype == torch.int32 and torch.equal(tgt_mask, reference_look_ahead(tgt))
    logits = model(src, tgt, src_mask, tgt_mask)
    assert logits.shape == (4, 12, VOCAB_SIZE["en"])
    loss = correct["calculate_loss"](logits, tgt, torch.nn.CrossEntropyLoss(reduction="none"))
    assert loss.dim() == 0 and torch.isfinite(loss)
    torch.testing.assert_close(loss, reference_loss(logits, tgt))
    loss.backward()
    decoder = model.decoder
    assert isinstance(decoder, torch.nn.Module)
    assert all(p.grad is not None for p in decoder.parameters() if p.requires_grad)


def test_correct_notebook_is_causal(correct: dict) -> None:
    model = build_model(correct)
    src, tgt = random_batch(2, 12, VOCAB_SIZE["de"], 3), random_batch(2, 12, VOCAB_SIZE["en"], 4)
    changed = tgt.clone()
    changed[:, 6:9] = torch.randint(4, VOCAB_SIZE["en"], (2, 3))  # alter positions 6-8 only
    src_mask = correct["create_padding_mask_for_attention"](src, PAD)
    with torch.no_grad():
        before = model(src, tgt, src_mask, correct["create_look_ahead_mask_for_attention"](tgt, PAD))
        after = model(src, changed, src_mask, correct["create_look_ahead_mask_for_attention"](changed, PAD))
    torch.testing.assert_close(before[:, :6], after[:, :6])


def test_later_decoder_layer_definition_wins(correct: dict) -> None:
    submission = load_submission(EXAMPLES / "correct_original_format.ipynb", provided_names=PROVIDED)
    definitions = [s for s in submission.statements if "DecoderLayer" in s.defines]
    assert len(definitions) == 2 and definitions[0].cell < definitions[1].cell
    assert "self.enc_dec_attention(x, enc, enc, src_mask)" in definitions[-1].code
    # the class in the namespace is the later one
    assert "residual" in correct["DecoderLayer"].forward.__code__.co_varnames


def test_buggy_notebook_bugs_stay_in_their_parts(buggy: dict, correct: dict) -> None:
    tgt = random_batch(3, 10, VOCAB_SIZE["en"], 5)
    buggy_mask = buggy["create_look_ahead_mask_for_attention"](tgt, PAD)
    assert buggy_mask.shape == (3, 1, 10, 10) and not torch.equal(buggy_mask, reference_look_ahead(tgt))
    assert buggy_mask[0, 0, 0, 1] == 1  # position 0 sees position 1: the future leaks

    logits = torch.randn(3, 10, VOCAB_SIZE["en"])
    criterion = torch.nn.CrossEntropyLoss(reduction="none")
    assert not torch.allclose(buggy["calculate_loss"](logits, tgt, criterion), reference_loss(logits, tgt))

    # The model parts are the same code as in the correct notebook, and none uses the mask function.
    by_name = {}
    for name in ("buggy_original_format", "correct_original_format"):
        submission = load_submission(EXAMPLES / f"{name}.ipynb", provided_names=PROVIDED)
        by_name[name] = [s.code for s in submission.statements if set(s.defines) & set(GRADED_MODEL_NAMES)]
    assert by_name["buggy_original_format"] == by_name["correct_original_format"]
    for code in by_name["buggy_original_format"]:
        forward_part = code.split("def decode")[0]  # Transformer.decode is given code, not graded
        assert "create_look_ahead_mask_for_attention" not in forward_part


def test_untouched_template_loads_with_expected_problems() -> None:
    submission = load_submission(EXAMPLES / "template_untouched.ipynb", provided_names=PROVIDED)
    assert submission.readable
    defined = {name for s in submission.statements for name in s.defines}
    assert "create_look_ahead_mask_for_attention" not in defined
    assert "process_batch_for_train" not in defined
    assert {"DecoderLayer", "Decoder", "Transformer", "calculate_loss", "Encoder", "train"} <= defined
    assert "embedding_dim" not in defined
    reason = submission.why_missing("create_look_ahead_mask_for_attention")
    assert reason is not None and "create_look_ahead_mask_for_attention" in reason
    messages = " | ".join(p.message for p in submission.problems)
    assert "empty block was loaded as `pass`" in messages
    assert "unterminated triple-quoted string" in messages
    namespace, failures = run_statements(submission)
    assert all(isinstance(error, ImportError) for _, error in failures), failures
    layer = namespace["DecoderLayer"](16, 32, 4, 0.1)
    assert layer(torch.zeros(1, 3, 16), torch.zeros(1, 3, 16), None, None) is None  # the stub does nothing


def test_correct_notebook_matches_the_reference_solution(correct: dict) -> None:
    reference_model = pytest.importorskip("assignments.transformer_mt.reference.model")
    reference_masks = pytest.importorskip("assignments.transformer_mt.reference.masks")
    reference_loss_module = pytest.importorskip("assignments.transformer_mt.reference.loss")
    torch.manual_seed(0)
    expected = reference_model.Transformer(VOCAB_SIZE, 12, 32, 64, 4, 2, 0.1).eval()
    student = build_model(correct)
    shapes = [(key, tuple(value.shape)) for key, value in student.state_dict().items()]
    assert shapes == [(key, tuple(value.shape)) for key, value in expected.state_dict().items()]
    student.load_state_dict(expected.state_dict())
    src, tgt = random_batch(3, 12, VOCAB_SIZE["de"], 6), random_batch(3, 12, VOCAB_SIZE["en"], 7)
    src_mask = reference_masks.create_padding_mask_for_attention(src, PAD)
    tgt_mask = reference_masks.create_look_ahead_mask_for_attention(tgt, PAD)
    with torch.no_grad():
        torch.testing.assert_close(student(src, tgt, src_mask, tgt_mask), expected(src, tgt, src_mask, tgt_mask))
    logits = torch.randn(3, 12, VOCAB_SIZE["en"])
    criterion = torch.nn.CrossEntropyLoss(reduction="none")
    torch.testing.assert_close(
        correct["calculate_loss"](logits, tgt, criterion), reference_loss_module.calculate_loss(logits, tgt, criterion)
    )
