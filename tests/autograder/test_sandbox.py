"""Sandboxed worker API: values, globals, handles, gradients and student errors (fixture good_submission.py)."""

from __future__ import annotations

import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest
import torch

from autograder.sandbox import Global, Limits, Ref, StudentError, TorchObject, Worker, WorkerFailure

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "worker"
GLOBALS = {
    "device": "cpu",
    "src_language": "de",
    "tgt_language": "en",
    "unk_idx": 0,
    "sos_idx": 1,
    "eos_idx": 2,
    "pad_idx": 3,
    "vocab_size": {"de": 40, "en": 50},
}


def fixture_source(name: str) -> list[tuple[str, int, str]]:
    """One statement per fixture file; the worker runs it top-level node by node."""
    return [(name, 1, (FIXTURES / name).read_text())]


def line_of(name: str, text: str) -> int:
    return next(n for n, line in enumerate((FIXTURES / name).read_text().splitlines(), 1) if text in line)


HELPERS = """
from torch import nn

class Doubler(nn.Module):
    def forward(self, x):
        return x * 2
"""


@pytest.fixture(scope="module")
def worker():
    with Worker(fixture_source("good_submission.py"), Limits(timeout_s=30), GLOBALS, helpers_source=HELPERS) as started:
        yield started


def test_load_report_lists_definitions(worker):
    report = worker.load_report()
    assert report["failure"] is None and report["errors"] == []
    assert {"create_look_ahead_mask_for_attention", "calculate_loss", "add"} <= set(report["functions"])
    assert {"TinyDecoder", "Scale", "LyingTensor"} <= set(report["classes"])
    assert worker.has("TinyDecoder") and worker.has("vocab_size") and not worker.has("Decoder")


def test_call_returns_plain_tensors(worker):
    result = worker.call("add", [torch.ones(2), torch.full((2,), 2.0)])
    assert type(result) is torch.Tensor and torch.equal(result, torch.full((2,), 3.0))


def test_mask_function_receives_and_returns_tensors(worker):
    batch = torch.tensor([[1, 5, 2, 3], [1, 2, 3, 3]])
    mask = worker.call("create_look_ahead_mask_for_attention", [batch, 3])
    assert mask.dtype == torch.int32 and mask.shape == (2, 1, 4, 4)
    assert mask[0, 0].tolist() == [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 0]]


def test_grader_globals_win_over_student_assignments(worker):
    assert worker.call("describe_globals", []) == {"vocab": 50, "pad": 3, "device": "cpu"}


def test_set_globals_applies_to_one_request_only(worker):
    scoped = worker.call("describe_globals", [], set_globals={"vocab_size": {"en": 11}, "pad_idx": 0})
    assert scoped == {"vocab": 11, "pad": 0, "device": "cpu"}
    assert worker.call("describe_globals", []) == {"vocab": 50, "pad": 3, "device": "cpu"}


def test_student_changes_to_globals_do_not_leak_into_later_requests(worker):
    assert worker.call("mutate_globals", []) == 99
    assert worker.call("describe_globals", []) == {"vocab": 50, "pad": 3, "device": "cpu"}


def test_calculate_loss_with_a_whitelisted_criterion(worker):
    torch.manual_seed(0)
    logits, target = torch.randn(2, 5, 50), torch.tensor([[1, 4, 7, 2, 3], [1, 9, 2, 3, 3]])
    loss = worker.call("calculate_loss", [logits, target, TorchObject("CrossEntropyLoss", {"reduction": "none"})])
    flat_target = target[:, 1:].reshape(-1)
    per_token = torch.nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 50), flat_target, reduction="none")
    keep = flat_target != 3
    assert torch.allclose(loss, per_token[keep].sum() / keep.sum())
    with pytest.raises(ValueError):
        TorchObject("Linear", {"in_features": 1})


def test_values_round_trip(worker):
    result = worker.call("tricky_values", [])
    assert result["tuple"] == (1, 2.5, "x") and result["list"] == [None, True]
    assert result[3] == float("inf") and result["size"] == (2, 3)
    assert torch.equal(result["nested"][0]["t"], torch.arange(3))
    assert result["bool"].dtype == torch.bool and result["bool"].tolist() == [True, False]
    sent = {"a": (torch.zeros(2, 0), [torch.tensor(True)]), 7: None, "f": float("nan")}
    back = worker.call("echo", [sent])
    assert back["a"][0].shape == (2, 0) and back["a"][1][0].item() is True and back[7] is None
    assert back["f"] != back["f"]  # NaN survives


def test_new_params_modules_and_run(worker):
    handle = worker.new("TinyDecoder", [50, 8, 0.5], seed=1)
    assert worker.params(handle) == [
        ("embedding.weight", [50, 8]),
        ("dense_layer.weight", [50, 8]),
        ("dense_layer.bias", [50]),
    ]
    assert worker.modules(handle) == [
        ("", "TinyDecoder"),
        ("embedding", "Embedding"),
        ("dropout", "Dropout"),
        ("dense_layer", "Linear"),
    ]
    tokens = torch.tensor([[1, 4, 2]])
    first = worker.run(handle, "forward", [tokens])
    assert torch.equal(first, worker.run(handle, "forward", [tokens]))
    train_a = worker.run(handle, "forward", [tokens], mode="train", seed=5)
    assert torch.equal(train_a, worker.run(handle, "forward", [tokens], mode="train", seed=5))
    assert not torch.equal(train_a, first)  # dropout is active in train mode
    assert torch.allclose(worker.run(handle, "forward", [tokens], kwargs={"scale": 2.0}), first * 2)
    assert worker.run(handle, "hidden", [tokens]).shape == (1, 3, 8)


def test_construction_is_seeded_and_state_round_trips(worker):
    same = [worker.state(worker.new("TinyDecoder", [50, 8, 0.0], seed=3)) for _ in range(2)]
    other = worker.state(worker.new("TinyDecoder", [50, 8, 0.0], seed=4))
    assert all(torch.equal(same[0][k], same[1][k]) for k in same[0])
    assert not torch.equal(same[0]["embedding.weight"], other["embedding.weight"])
    handle = worker.new("TinyDecoder", [50, 8, 0.0])
    worker.load_state(handle, {k: torch.zeros_like(v) for k, v in same[0].items()})
    assert torch.count_nonzero(worker.run(handle, "forward", [torch.tensor([[1, 2]])])) == 0
    with pytest.raises(StudentError) as info:
        worker.load_state(handle, {"embedding.weight": torch.zeros(50, 8)})
    assert info.value.exc_type == "RuntimeError" and "Missing key" in info.value.message


def test_backward_gives_parameter_and_input_gradients(worker):
    handle = worker.new("TinyDecoder", [50, 8, 0.0], seed=2)
    result = worker.run(handle, "forward", [torch.tensor([[1, 2, 3]])], grad=torch.ones(1, 3, 50))
    assert result["output"].shape == (1, 3, 50)
    assert set(result["param_grads"]) == {"embedding.weight", "dense_layer.weight", "dense_layer.bias"}
    assert torch.equal(result["param_grads"]["dense_layer.bias"], torch.full((50,), 3.0))
    x = torch.tensor([1.0, -2.0, 3.0])
    squared = worker.call("square_sum", [x], grad_wrt=[0])
    assert squared["output"].item() == 14.0 and torch.equal(squared["grads"][0], 2 * x)


def test_refs_and_globals_pass_objects(worker):
    scale = worker.new("Scale", [])
    assert torch.equal(worker.call("apply_module", [Ref(scale), torch.ones(2)]), torch.full((2,), 3.0))
    assert worker.run(scale, "requires_grad_", [False]) == Ref(scale)  # returns the module itself
    assert worker.call("echo", [Global("pad_idx")]) == 3
    with pytest.raises(ValueError):
        worker.params(10_000)


def test_helper_classes_stand_in_for_student_classes_during_construction(worker):
    ones = torch.ones(2)
    substituted = worker.new("Chain", [], substitute={"Scale": "Doubler"})
    assert worker.modules(substituted) == [("", "Chain"), ("inner", "Doubler")]
    assert torch.equal(worker.run(substituted, "forward", [ones]), torch.full((2,), 3.0))
    assert torch.equal(worker.run(worker.new("Chain", []), "forward", [ones]), torch.full((2,), 4.0))
    assert not worker.has("Doubler")  # helpers live apart from the student namespace
    with pytest.raises(WorkerFailure, match="no helper named"):
        worker.new("Chain", [], substitute={"Scale": "Missing"})


def test_student_exception_names_the_student_line(worker):
    with pytest.raises(StudentError) as info:
        worker.call("fail_with_value_error", [1])
    error = info.value
    assert (error.exc_type, error.message) == ("ValueError", "the student's own message")
    line = line_of("good_submission.py", 'raise ValueError("the student')
    assert error.where == f"good_submission.py, line {line}, in fail_with_value_error"


@pytest.mark.parametrize(
    "func, exc_type",
    [
        ("raise_system_exit", "SystemExit"),
        ("raise_keyboard_interrupt", "KeyboardInterrupt"),
        ("recurse", "RecursionError"),
        ("not_defined_anywhere", "NameError"),
    ],
)
def test_base_exceptions_recursion_and_missing_names_are_student_errors(worker, func, exc_type):
    starts = len(worker.start_seconds)
    with pytest.raises(StudentError) as info:
        worker.call(func, [0] if func == "recurse" else [])
    assert info.value.exc_type == exc_type
    if func != "not_defined_anywhere":
        assert info.value.where.startswith("good_submission.py, line ")
    assert worker.call("add", [1, 2]) == 3 and len(worker.start_seconds) == starts  # same worker


def test_unsendable_return_value_is_a_student_error(worker):
    with pytest.raises(StudentError) as info:
        worker.call("return_opaque", [])
    assert info.value.exc_type == "TypeError"
    assert "returned a Opaque, expected a tensor" in info.value.message


def test_lying_tensor_subclass_arrives_as_plain_data(worker):
    result = worker.call("return_lying_tensor", [])
    assert type(result) is torch.Tensor and result.tolist() == [5.0, 6.0]
    assert not torch.equal(result, torch.zeros(2))


def test_output_tail_quotes_student_prints(worker):
    assert worker.call("print_lines", [5]) == 5
    assert worker.output_tail(2).splitlines() == ["student line 3", "student line 4"]


def test_per_request_overhead_is_milliseconds(worker):
    x = torch.randn(16, 50, 64)
    worker.call("echo", [x])
    began = time.perf_counter()
    for _ in range(50):
        worker.call("echo", [x])
    per_request = (time.perf_counter() - began) / 50
    print(
        f"per-request round trip with a 200 KB tensor: {per_request * 1000:.2f} ms; "
        f"worker start: {worker.start_seconds[0]:.2f} s"
    )
    assert per_request < 0.05


def test_statements_fail_one_by_one_and_extra_paths_are_importable(tmp_path):
    package = tmp_path / "toolkit"
    package.mkdir()
    (package / "__init__.py").write_text("def triple(x):\n    return 3 * x\n")
    data = Path(tempfile.mkdtemp(prefix="sandbox-test-data-"))
    data.chmod(0o755)  # the worker may run as nobody: tmp_path itself is private to the grader
    (data / "pairs.txt").write_text("ein Hund\ta dog\n")
    (data / "pairs.txt").chmod(0o644)
    statements = [
        ("cell 1", 1, "embedding_dim ="),
        ("cell 2", 10, "x = 1\ny = undefined_name\nz = 2"),
        ("cell 3", 1, "from __future__ import annotations\ndef f() -> Undefined:\n    return x + z"),
        ("cell 4", 1, "import toolkit\ndef read(p):\n    return open(p).read()"),
    ]
    with Worker(statements, Limits(), GLOBALS, extra_paths=[package], data_paths=[data]) as worker:
        errors = {(e["label"], e["exc_type"], e["where"]) for e in worker.load_report()["errors"]}
        assert errors == {("cell 1", "SyntaxError", "cell 1, line 1"), ("cell 2", "NameError", "cell 2, line 11")}
        assert worker.call("f", []) == 3
        assert worker.call("toolkit:triple", [torch.ones(1)]).item() == 3.0
        assert worker.call("read", [str(data / "pairs.txt")]) == "ein Hund\ta dog\n"
        with pytest.raises(WorkerFailure, match="rejected"):
            worker.call("toolkit:triple", [Global("x")], set_globals=[1])  # type: ignore[arg-type]
        # A global the submission never defined lives for its request only: it is removed after.
        assert worker.call("toolkit:triple", [Global("brand_new")], set_globals={"brand_new": 2}) == 6
        with pytest.raises(StudentError, match="brand_new"):
            worker.call("toolkit:triple", [Global("brand_new")])
        with pytest.raises(WorkerFailure, match="cannot find toolkit:missing"):
            worker.call("toolkit:missing", [])
    shutil.rmtree(data)


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("timeout", "timed out after 20 s"),
        ("died", "worker process exited (code 3) during the request"),
        ("memory", "exited (code 3)"),
        ("protocol", "worker sent a malformed reply: exited (code 3)"),
    ],
)
def test_a_failed_exchange_names_its_kind_and_the_next_request_gets_a_fresh_worker(monkeypatch, kind, reason):
    from autograder.sandbox.process import ExchangeError, WorkerProcess

    with Worker("def one():\n    return 1", Limits(timeout_s=20), {}) as worker:
        with monkeypatch.context() as patched:

            def fail(*args: object) -> None:
                raise ExchangeError(kind, "exited (code 3)")

            patched.setattr(WorkerProcess, "exchange", fail)
            with pytest.raises(WorkerFailure, match=f"^{re.escape(reason)}$"):
                worker.call("one", [])
        assert worker.call("one", []) == 1
