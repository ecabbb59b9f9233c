"""The in-process answerer of worker requests (autograder/checks/inprocess.py) on a trusted fixture."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from namespace_student import NamespaceStudent  # the tests' helper (tests/namespace_student.py)
from torch import nn

SOURCE = (Path(__file__).resolve().parents[2] / "fixtures" / "checks" / "inprocess_source.py.txt").read_text()


class Passthrough(nn.Module):
    """A grader helper standing in for `Inner` while a Block is built."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


@pytest.fixture
def student() -> NamespaceStudent:
    return NamespaceStudent(SOURCE, {"pad_idx": 1}, {"Passthrough": Passthrough, "negate": lambda x: -x})


def test_names_and_globals_come_from_the_source_and_the_grader(student: NamespaceStudent) -> None:
    assert student.has("Block") and not student.has("Decoder")
    tokens = torch.tensor([[5, 1, 1], [1, 7, 8]])
    assert int(student.call("count_padding", [tokens])) == 3
    assert int(student.call("count_padding", [tokens], set_globals={"pad_idx": 5})) == 1
    assert torch.equal(student.call("grader_helpers:negate", [torch.tensor([2.0])]), torch.tensor([-2.0]))


def test_call_returns_input_gradients_when_asked(student: NamespaceStudent) -> None:
    x = torch.tensor([1.0, -2.0, 3.0])
    result = student.call("squares", [x], grad_wrt=[0])
    assert torch.equal(result["output"], x * x)
    assert torch.equal(result["grads"][0], 2 * x)  # d(sum x^2)/dx
    assert x.grad is None  # the caller's tensor is left alone


def test_new_is_seeded_and_reports_parameters_and_modules_in_order(student: NamespaceStudent) -> None:
    first, second, other = (student.new("Block", [4], seed=seed) for seed in (7, 7, 8))
    weights = [student.objects[h].proj.weight for h in (first, second, other)]
    assert torch.equal(weights[0], weights[1]) and not torch.equal(weights[0], weights[2])
    assert student.params(first) == [("proj.weight", [4, 4]), ("proj.bias", [4]), ("inner.scale", [4])]
    assert student.modules(first) == [("", "Block"), ("proj", "Linear"), ("inner", "Inner"), ("drop", "Dropout")]


def test_substitutes_stand_in_only_while_building(student: NamespaceStudent) -> None:
    handle = student.new("Block", [4], substitute={"Inner": "Passthrough"})
    assert type(student.objects[handle].inner).__name__ == "Passthrough"
    assert student.function("Inner").__name__ == "Inner"  # the source's own class is back
    assert type(student.objects[student.new("Block", [4])].inner).__name__ == "Inner"


def test_run_follows_the_mode_and_backpropagates_on_request(student: NamespaceStudent) -> None:
    handle = student.new("Block", [4], seed=0)
    x = torch.randn(3, 4)
    evaluated = student.run(handle, "forward", [x], mode="eval")
    assert torch.equal(evaluated, student.run(handle, "forward", [x], mode="eval"))
    assert not student.objects[handle].training
    trained = [student.run(handle, "forward", [x], mode="train", seed=s) for s in (1, 1, 2)]
    assert torch.equal(trained[0], trained[1]) and not torch.equal(trained[0], trained[2])  # dropout, seeded
    assert (trained[0] == 0).any()
    result = student.run(handle, "inner.forward", [x], grad=torch.ones(3, 4), grad_wrt=[0])
    assert torch.equal(result["output"], x * 3.0)
    assert torch.equal(result["grads"][0], torch.full((3, 4), 3.0))
    assert torch.equal(result["param_grads"]["inner.scale"], x.sum(0))
    assert result["param_grads"]["proj.weight"] is None  # not on the path run


def test_handles_in_arguments_resolve_to_the_kept_objects(student: NamespaceStudent) -> None:
    handle = student.new("Block", [2])
    kept = student.objects[handle]
    assert student._resolve([SimpleNamespace(handle=handle)]) == [kept]
