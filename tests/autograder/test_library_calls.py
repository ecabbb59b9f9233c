"""Library calls a part may not use: recorded at run time (in process, then in the sandboxed worker)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from autograder import credit
from autograder.config import load_config
from autograder.config.sections import PartConfig
from autograder.i18n import use_language
from autograder.runner import Verdict
from autograder.sandbox import Limits, StudentError, Worker
from autograder.worker_runtime import library_calls

WATCHED = load_config(overrides={"assignment.name": "attention_encoder"}).parts["attention"].forbidden_calls
SDPA = "torch.nn.functional.scaled_dot_product_attention"
MHA = "torch.nn.MultiheadAttention"
Q = torch.randn(2, 3, 4)


@pytest.fixture
def recorded():
    """The names recorded while the course's list is installed in this process (restored after)."""
    seen: list[str] = []
    restore = library_calls.install(WATCHED, seen.append)
    yield seen
    restore()


def test_every_alias_and_way_of_reaching_a_watched_call_is_recorded(recorded) -> None:
    from torch.nn.functional import scaled_dot_product_attention  # bound after the stand-ins: one of them

    scaled_dot_product_attention(Q, Q, Q)
    torch._C._nn.scaled_dot_product_attention(Q, Q, Q)
    torch.ops.aten.scaled_dot_product_attention(Q, Q, Q)
    assert recorded == [SDPA, SDPA, "torch.ops.aten.scaled_dot_product_attention"]

    class Hidden(nn.MultiheadAttention):  # a subclass builds and calls through torch's own methods
        pass

    recorded.clear()
    Hidden(4, 2, batch_first=True)(Q, Q, Q)
    assert recorded[0] == MHA and "torch.nn.functional.multi_head_attention_forward" in recorded


def test_basic_operations_are_not_recorded_and_restore_puts_the_originals_back() -> None:
    original = F.scaled_dot_product_attention
    seen: list[str] = []
    restore = library_calls.install(WATCHED, seen.append)
    assert F.scaled_dot_product_attention is not original
    weights = F.softmax(torch.matmul(Q, Q.transpose(-2, -1)) / 2.0, dim=-1)
    nn.Dropout(0.1)(nn.Linear(4, 4)(torch.matmul(weights, Q)))
    nn.LayerNorm(4)(Q)
    assert seen == []
    restore()
    assert F.scaled_dot_product_attention is original and torch._C._nn.scaled_dot_product_attention is original
    assert "__init__" in vars(nn.MultiheadAttention) and vars(nn.MultiheadAttention)["__init__"].__name__ == "__init__"


PART = PartConfig(
    points=3, checks={"builds": 1, "output": 2}, gate=["output"], structure=["builds"], forbidden_calls=[SDPA]
)


def test_a_part_whose_checks_made_a_declared_call_earns_nothing_and_the_message_names_it() -> None:
    verdicts = {"builds": Verdict(True), "output": Verdict(True, library_calls=(SDPA, "made.up.name"))}
    assert credit.refused_calls(PART, verdicts) == [SDPA]  # only declared names: the worker is not trusted
    assert not credit.gate_passed(PART, verdicts)
    with use_language("ko"):
        paid = credit.credited(PART, verdicts)
    assert not paid["builds"].passed and not paid["output"].passed
    assert SDPA in paid["output"].message and "라이브러리 호출" in paid["output"].message
    undeclared = {"builds": Verdict(True), "output": Verdict(True, library_calls=("made.up.name",))}
    assert credit.credited(PART, undeclared) == undeclared and credit.gate_passed(PART, undeclared)


def test_both_assignments_declare_torchs_attention_for_every_part_the_student_writes() -> None:
    for name in ("transformer_mt", "attention_encoder"):
        parts = load_config(overrides={"assignment.name": name}).parts
        for part_name, part in parts.items():
            assert (part_name == "training") == (SDPA not in part.forbidden_calls), (name, part_name)
    training = load_config().parts["training"]  # Part 2 trains all five of its parts
    assert training.requires_parts == [
        "look_ahead_mask",
        "decoder_layer",
        "decoder",
        "transformer_forward",
        "masked_loss",
    ]


# In the worker: the stand-ins are in place before the statements run, and what would hide a call
# (reading the stand-ins' defaults, the garbage collector's walks) is refused there.
SUBMISSION = """
import gc
import torch
import torch.nn.functional as F
from torch.nn.functional import scaled_dot_product_attention as early

def plain(q):
    return torch.softmax(q @ q.transpose(-2, -1), dim=-1) @ q

def imported_early(q):
    return early(q, q, q)

def through_c(q):
    return torch._C._nn.scaled_dot_product_attention(q, q, q)

def through_ops(q):
    return torch.ops.aten.scaled_dot_product_attention(q, q, q)

def torch_module(q):
    return torch.nn.MultiheadAttention(4, 2, batch_first=True)(q, q, q)[0]

def unwrap_defaults(q):
    return F.scaled_dot_product_attention.__kwdefaults__["_original"](q, q, q)

def replace_code(q):
    F.scaled_dot_product_attention.__code__ = plain.__code__
    return q

def unwrap_gc(q):
    return gc.get_referents(F.scaled_dot_product_attention)[0]["_original"](q, q, q)
"""


@pytest.fixture(scope="module")
def worker():
    with Worker([("cell 1", 1, SUBMISSION)], Limits(timeout_s=30), {"device": "cpu"}, watch=WATCHED) as started:
        yield started


def _calls(worker: Worker, function: str) -> set[str]:
    worker.library_calls.clear()
    worker.call(function, [Q])
    return set(worker.library_calls)


def test_the_worker_records_the_calls_however_the_submission_reaches_them(worker) -> None:
    assert worker.load_report()["errors"] == []
    assert _calls(worker, "plain") == set()  # control: basic operations are not recorded
    for function in ("imported_early", "through_c"):
        assert _calls(worker, function) == {SDPA}, function
    assert _calls(worker, "through_ops") == {"torch.ops.aten.scaled_dot_product_attention"}
    assert MHA in _calls(worker, "torch_module")


@pytest.mark.parametrize("function", ["unwrap_defaults", "replace_code", "unwrap_gc"])
def test_the_worker_refuses_what_would_take_the_stand_ins_apart(worker, function) -> None:
    worker.library_calls.clear()
    with pytest.raises(StudentError) as raised:
        worker.call(function, [Q])
    assert raised.value.exc_type == "SandboxViolation"
    assert _calls(worker, "through_c") == {SDPA}  # the stand-ins still record afterwards


def test_an_unwatched_worker_records_nothing() -> None:
    with Worker([("cell 1", 1, SUBMISSION)], Limits(timeout_s=30), {"device": "cpu"}) as plain_worker:
        assert _calls(plain_worker, "through_c") == set()
    with use_language("en"):
        assert (
            "library call" in credit.credited(PART, {"output": Verdict(True, library_calls=(SDPA,))})["output"].message
        )


def test_the_public_checks_warn_about_the_calls_grading_refuses(tmp_path) -> None:
    from autograder.integrations.public_checks import run_public_checks

    root = Path(__file__).resolve().parents[2]
    notebook = json.loads((root / "examples" / "correct_original_format.ipynb").read_text(encoding="utf-8"))
    at = max(i for i, cell in enumerate(notebook["cells"]) if "class DecoderLayer" in "".join(cell["source"]))
    source = (root / "tests" / "fixtures" / "library_calls" / "part2_torch_decoder_layer.py.txt").read_text()
    notebook["cells"].insert(at + 1, {"cell_type": "code", "metadata": {}, "outputs": [], "source": source})
    (tmp_path / "library.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    original = F.scaled_dot_product_attention
    with use_language("ko"):
        _, problems = run_public_checks(tmp_path / "library.ipynb", root / "student_template" / "tests")
        _, control = run_public_checks(
            root / "examples" / "correct_original_format.ipynb", root / "student_template" / "tests"
        )
    warnings = [p for p in problems if "torch.nn.TransformerDecoderLayer" in p]
    assert len(warnings) == 1 and "허용되지 않는 라이브러리 호출" in warnings[0]
    assert not any("라이브러리 호출" in p for p in control)  # the correct notebook: no warning
    assert F.scaled_dot_product_attention is original  # the student's process gets torch back
