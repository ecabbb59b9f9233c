"""Part 1's training part: the reversal task needs attention, the reference learns it in the budget."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml
from ae_inprocess import InProcessStudent

from assignments.attention_encoder import training, worker_training
from assignments.attention_encoder.checks.conftest import GRADER_GLOBALS
from assignments.attention_encoder.checks.helpers import TRAIN_HELPER
from assignments.attention_encoder.settings import training_settings
from autograder.config import load_config
from autograder.sandbox import Global

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORRECT = (FIXTURES / "correct.py.txt").read_text(encoding="utf-8")
ASSIGNMENT = Path(training.__file__).resolve().parent


def test_the_targets_mirror_each_row_around_its_own_end() -> None:
    inputs, targets = training.test_set(0)
    again = training.test_set(0)
    assert torch.equal(inputs, again[0]) and torch.equal(targets, again[1])
    assert not torch.equal(inputs, training.test_set(1)[0])
    for row in range(5):
        real = inputs[row][inputs[row] != worker_training.REVERSAL_PAD]
        assert torch.equal(targets[row][: len(real)], real.flip(0))
    lengths = (inputs != worker_training.REVERSAL_PAD).sum(1)
    assert int(lengths.min()) == training.SETTINGS["min_length"]
    assert int(lengths.max()) == training.SETTINGS["max_length"]


def test_no_fixed_choice_of_positions_reaches_the_threshold() -> None:
    # The best any position-to-position map can do: each output position copies the one input
    # position that is right most often on the test set itself (flip(1) and identity included).
    inputs, targets = training.test_set(0)
    length = inputs.size(1)
    best = torch.zeros_like(targets)
    for i in range(length):
        hits = [int((inputs[:, j] == targets[:, i]).sum()) for j in range(length)]
        best[:, i] = inputs[:, max(range(length), key=hits.__getitem__)]
    threshold = training_settings(load_config(None, {"assignment.name": "attention_encoder"})).threshold_accuracy
    assert training.accuracy(best, targets) < 0.5 < threshold
    assert training.accuracy(inputs.flip(1), targets) < 0.3


def test_every_message_key_used_exists_in_both_languages() -> None:
    used: set[str] = set()
    for path in ASSIGNMENT.rglob("*.py"):
        used |= set(re.findall(r"""\bt\(\s*f?["'](ae\.[a-z_.]+)["']""", path.read_text(encoding="utf-8")))
    used |= {f"ae.attention.scale_{n}" for n in ("none", "embedding_dim", "attention_dim")}
    used |= {f"ae.layout.{n}" for n in ("multi_head_attention", "feed_forward", "encoder_layer", "encoder")}
    for language in ("en", "ko"):
        catalogue = yaml.safe_load((ASSIGNMENT / "messages" / f"{language}.yml").read_text(encoding="utf-8"))
        assert used - set(catalogue) == set(), language
        assert {f"part.{name}" for name in yaml.safe_load((ASSIGNMENT / "assignment.yml").read_text())["parts"]} <= set(
            catalogue
        )


@pytest.mark.slow
def test_the_reference_learns_the_task_within_the_budget() -> None:
    outcome = training.run_training_part(InProcessStudent(CORRECT, GRADER_GLOBALS), seed=0)
    assert outcome.passed, outcome.message
    assert outcome.details["steps"] == training.SETTINGS["steps"]


EMBEDDING_ONLY = """
def _embedding_only(self, x, padding_mask):
    return self.transformer_embedding(x)


Encoder.forward = _embedding_only
"""
IDENTITY_ATTENTION = """
class ScaledDotProductAttention(nn.Module):
    def __init__(self, embedding_dim, attention_dim):
        super().__init__()

    def forward(self, query, key, value, mask):
        return value
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "degenerate", [EMBEDDING_ONLY, IDENTITY_ATTENTION], ids=["embedding_only", "identity_attention"]
)
def test_an_encoder_that_cannot_attend_stays_below_the_threshold(degenerate: str) -> None:
    student = InProcessStudent(CORRECT + degenerate, GRADER_GLOBALS)
    inputs, targets = training.test_set(0)
    # its own predictions, after the full recipe, are far below the threshold ...
    reply = student.call(TRAIN_HELPER, [Global("Encoder"), dict(training.SETTINGS), inputs])
    assert training.accuracy(reply["predictions"], targets) < 0.5
    # ... and the grading gives nothing (its weights do not even fit the reference architecture)
    if degenerate is EMBEDDING_ONLY:
        assert not training.run_training_part(student, seed=0).passed


REVERSAL_BY_HAND = """
def _reversed_by_hand(self, x, padding_mask):
    # no attention at all: gathers the mirrored tokens itself, then embeds them
    lengths = padding_mask[:, 0, 0, :].sum(-1, keepdim=True)
    positions = torch.arange(x.size(1)).unsqueeze(0)
    return self.transformer_embedding(torch.gather(x, 1, (lengths - 1 - positions).clamp(min=0)))


Encoder.forward = _reversed_by_hand
"""


@pytest.mark.slow
def test_an_encoder_that_reverses_by_hand_earns_nothing() -> None:
    # It would reach 100% on its own predictions; the trusted side's reference architecture,
    # given its weights, does not reproduce them.
    outcome = training.run_training_part(InProcessStudent(CORRECT + REVERSAL_BY_HAND, GRADER_GLOBALS), seed=0)
    assert not outcome.passed
    assert "accuracy" not in outcome.details, outcome.message


def test_both_languages_have_the_same_keys_and_fields() -> None:
    field = re.compile(r"{(\w+)")
    catalogues = {
        language: yaml.safe_load((ASSIGNMENT / "messages" / f"{language}.yml").read_text(encoding="utf-8"))
        for language in ("en", "ko")
    }
    # The assignment's title may be Korean only: English falls back to assignment.yml's title
    # (autograder.i18n.assignment_title), as the engine's catalogue test allows.
    assert set(catalogues["en"]) == set(catalogues["ko"]) - {"assignment.title"}
    for key, text in catalogues["en"].items():
        assert set(field.findall(text)) == set(field.findall(catalogues["ko"][key])), key
