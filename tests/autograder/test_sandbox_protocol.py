"""In-process tests of the sandbox's wire format, reply validation, output log, file policy and statement runner."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from typing import Any

import pytest
import torch

from autograder.sandbox import Global, Ref, TorchObject, WorkerFailure
from autograder.sandbox.limits import Limits
from autograder.sandbox.plan import (
    PROJECT_ROOT,
    PYTHON_FLAGS,
    WORKER_HASH_SEED,
    build_env,
    hidden_paths,
    preload_candidates,
    python_dirs,
    system_layout,
)
from autograder.sandbox.process import ExchangeError, OutputLog, _FrameReader
from autograder.sandbox.replies import clean_report, expect_modules, expect_params, expect_state
from autograder.worker_runtime import server
from autograder.worker_runtime.guards import FilePolicy
from autograder.worker_runtime.protocol import (
    PREFIX,
    EncodeError,
    ProtocolError,
    ValueReader,
    ValueWriter,
    load_blob,
    pack_frame,
)
from autograder.worker_runtime.server import plain_tensor, seed_everything
from autograder.worker_runtime.statements import StatementRunner


def round_trip(value, resolve=None):
    encoder = ValueWriter(plain_tensor)
    frame = pack_frame({"value": encoder.encode(value)}, encoder.tensors)
    reader = _FrameReader(1 << 30)
    reader.buffer += frame
    read = reader.next_frame()
    assert read is not None
    header, blob = read
    return ValueReader(load_blob(blob), resolve).decode(header["value"])


def test_values_survive_the_wire_format():
    class Count(int):
        def __repr__(self):
            return "lies"

    value: dict[Any, Any] = {
        "t": torch.arange(6, dtype=torch.int32).view(2, 3).t(),
        "b": torch.tensor([True]),
        "bf": torch.ones(2, dtype=torch.bfloat16),
        1: (None, -math.inf, "s"),
        "n": Count(4),
        "dev": torch.device("cpu"),
        "dt": torch.float16,
        "empty": torch.zeros(0, 4),
    }
    back = round_trip(value)
    assert torch.equal(back["t"], value["t"]) and back["t"].is_contiguous()
    assert back["b"].dtype == torch.bool and back["bf"].dtype == torch.bfloat16
    assert back[1] == (None, -math.inf, "s") and type(back["n"]) is int and back["n"] == 4
    assert back["dev"] == torch.device("cpu") and back["dt"] is torch.float16
    assert back["empty"].shape == (0, 4)


def test_shared_storage_and_parameters_are_sent():
    weight = torch.nn.Parameter(torch.ones(3))
    view = torch.arange(10)[2:5]
    back = round_trip([weight, weight, view, view])
    assert all(type(t) is torch.Tensor for t in back)
    assert back[2].tolist() == [2, 3, 4] and back[0].tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "value, message",
    [(object(), "a object"), ({(1, 2): 3}, "a dict with a tuple key"), (torch.ones(1, dtype=torch.complex64), "dtype")],
)
def test_unsendable_values_are_named(value, message):
    with pytest.raises(EncodeError, match=message):
        ValueWriter(plain_tensor).encode(value)


def test_self_referencing_values_stop_at_the_depth_limit():
    loop: list = []
    loop.append(loop)
    with pytest.raises(EncodeError, match="nested too deeply"):
        ValueWriter(plain_tensor).encode(loop)


def test_refs_globals_and_torch_objects_need_a_resolver():
    encoded = ValueWriter(plain_tensor).encode([Ref(3), Global("f"), TorchObject("NLLLoss", {"reduction": "sum"})])
    with pytest.raises(ProtocolError):
        ValueReader({}).decode(encoded)
    seen = ValueReader({}, lambda tag, body: (tag, body)).decode(encoded)
    assert seen == [("$ref", 3), ("$global", "f"), ("$torch", ("NLLLoss", {"reduction": "sum"}))]


@pytest.mark.parametrize(
    "data",
    [
        {"$t": "t0", "dtype": "float32", "shape": [3]},  # wrong shape
        {"$t": "t0", "dtype": "int64", "shape": [2]},  # wrong dtype
        {"$t": "t9", "dtype": "float32", "shape": [2]},  # missing tensor
        {"$unknown": 1},
        {"$dict": [[{"$tuple": []}, 1]]},
        {},
        {"$float": "1e999"},
        {"$device": "gpu:x"},
    ],
)
def test_malformed_replies_are_rejected(data):
    with pytest.raises(ProtocolError):
        ValueReader({"t0": torch.zeros(2)}).decode(data)


def test_garbage_blobs_and_headers_are_rejected():
    with pytest.raises(ProtocolError):
        load_blob(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all}")
    reader = _FrameReader(1 << 20)
    reader.buffer += PREFIX.pack(5, 0) + b"[1,2]"
    with pytest.raises(ExchangeError, match="not an object"):
        reader.next_frame()


def test_oversized_replies_are_refused_before_buffering():
    reader = _FrameReader(max_blob=1 << 20)
    reader.buffer += PREFIX.pack(10, 5 << 30)
    with pytest.raises(ExchangeError, match="over the reply limit of 1 MB"):
        reader.next_frame()


def test_frames_arrive_in_pieces():
    frame = pack_frame({"a": 1}, {"x": torch.ones(2)}) * 2
    reader = _FrameReader(1 << 20)
    frames = []
    for index in range(0, len(frame), 7):
        reader.buffer += frame[index : index + 7]
        while (found := reader.next_frame()) is not None:
            frames.append(found)
    assert [header for header, _ in frames] == [{"a": 1}, {"a": 1}]
    assert torch.equal(load_blob(frames[1][1])["x"], torch.ones(2))


def test_output_log_keeps_only_the_tail():
    log = OutputLog(cap=50)
    for index in range(1000):
        log.write(f"line {index}\n".encode())
    assert log.total_bytes > 8000 and len(log.tail(1000).encode()) <= 50
    log.write(b"\xff broken utf-8\n")
    assert log.tail(2).splitlines() == ["line 999", "\ufffd broken utf-8"]
    log.write(b"x" * 500)
    assert log.tail(5) == "x" * 50


def test_file_policy_lets_the_deepest_root_decide():
    policy = FilePolicy(
        read_roots=["/usr", "/proj/.venv", "/tmp/sandbox"],
        write_roots=["/tmp/sandbox/work"],
        hidden_roots=["/proj", "/proj/.venv/lib/site-packages/assignments"],
    )
    assert policy.readable("/proj/.venv/lib/site-packages/torch/__init__.py")
    assert not policy.readable("/proj/.venv/lib/site-packages/assignments/transformer_mt/reference/model.py")
    assert not policy.readable("/proj/grader.yml") and not policy.readable("/etc/passwd-not-listed/x")
    assert policy.readable("/tmp/sandbox/work/notes.txt") and policy.writable("/tmp/sandbox/work/a")
    assert not policy.writable("/tmp/results.json") and not policy.writable("/tmp/sandbox/lib/x.py")
    assert not policy.readable("/projection")  # a prefix of a name is not a parent


def test_statements_run_node_by_node_with_student_line_numbers():
    namespace: dict = {}
    runner = StatementRunner(namespace)
    seen = []
    report = runner.run(
        [
            ["cell 3", 10, "a = 1\nb = missing\nc = 3"],
            ["cell 4", 1, "def f(:\n    pass"],
            ["cell 5", 20, "from __future__ import annotations\ndef g(x: Nope) -> Nope:\n    return x / 0"],
            ["cell 6", 1, "raise SystemExit(2)\nd = 4"],
        ],
        skip={(3, 1)},
        notify=lambda at, line: seen.append((at, line)),
    )
    errors = {(e["label"], e["line"]): (e["exc_type"], e["where"]) for e in report["errors"]}
    assert errors == {
        ("cell 3", 11): ("NameError", "cell 3, line 11"),
        ("cell 4", 1): ("SyntaxError", "cell 4, line 1"),
        ("cell 6", 1): ("SystemExit", "cell 6, line 1"),
    }
    assert namespace["a"] == 1 and namespace["c"] == 3 and "d" not in namespace  # (3, 1) skipped
    assert report["functions"] == ["g"] and ((0, 1), 11) in seen
    with pytest.raises(ZeroDivisionError) as info:
        namespace["g"](1)
    assert info.traceback[-1].lineno + 1 == 22  # pytest counts from 0


def test_reply_validators_reject_wrong_shapes():
    assert expect_params([["w", [2, 3]]]) == [("w", [2, 3])]
    assert expect_modules([["", "Net"]]) == [("", "Net")]
    for bad in ([["w", ["2"]]], {"w": [2]}, [["w", [2], 3]]):
        with pytest.raises(WorkerFailure, match="malformed"):
            expect_params(bad)
    with pytest.raises(WorkerFailure):
        expect_state({"w": [1.0]})
    report = clean_report({"functions": ["f", 3], "errors": [{"label": "cell 1", "line": "x", "message": 5}]})
    assert report["functions"] == ["f"] and report["errors"][0]["line"] is None
    assert report["errors"][0]["message"] == ""


def test_worker_environment_leaks_nothing_from_the_grader(monkeypatch, tmp_path):
    monkeypatch.setenv("GITHUB_TOKEN", "secret")

    class FakeSandbox:
        work = tmp_path

    env = build_env(Limits(threads=2), "plain", FakeSandbox())  # type: ignore[arg-type]
    assert "GITHUB_TOKEN" not in env and env["OMP_NUM_THREADS"] == "2"
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and env["HOME"] == str(tmp_path)


def test_the_only_python_variable_a_worker_reads_is_its_fixed_hash_seed(monkeypatch, tmp_path):
    """Workers run without -E (to read PYTHONHASHSEED, the same cold and warm): none of the grader's
    PYTHON* variables (a path, a start-up file) may reach them."""
    for name in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONHASHSEED"):
        monkeypatch.setenv(name, str(tmp_path))

    class FakeSandbox:
        work = tmp_path

    env = build_env(Limits(), "namespace", FakeSandbox())  # type: ignore[arg-type]
    assert [key for key in env if key.startswith("PYTHON")] == ["PYTHONHASHSEED"]
    assert env["PYTHONHASHSEED"] == WORKER_HASH_SEED == "0"
    assert "-E" not in PYTHON_FLAGS and {"-s", "-P"} <= set(PYTHON_FLAGS)  # -I but for -E


def test_workers_start_with_the_training_allocator_settings(monkeypatch, tmp_path):
    from mtkit.allocator import GLIBC_TUNABLES_VALUE

    class FakeSandbox:
        work = tmp_path

    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert build_env(Limits(), "plain", FakeSandbox())["GLIBC_TUNABLES"] == GLIBC_TUNABLES_VALUE  # type: ignore[arg-type]
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")  # the grader's own wins
    assert build_env(Limits(), "plain", FakeSandbox())["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2"  # type: ignore[arg-type]


def test_the_project_is_hidden_but_the_interpreter_is_visible(monkeypatch):
    monkeypatch.setattr(sys, "path", [tempfile.gettempdir(), str(PROJECT_ROOT), *sys.path])
    hidden = hidden_paths()
    assert str(PROJECT_ROOT) in hidden
    links, dirs = system_layout()
    visible = python_dirs(dirs + [os.path.realpath("/" + name) for name in links], hidden)
    prefixes = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix)]
    assert all(any(p == v or p.startswith(v + "/") or p.startswith("/usr") for v in visible) for p in prefixes)
    assert not any(v == str(PROJECT_ROOT) for v in visible)
    assert os.path.realpath(tempfile.gettempdir()) not in visible  # a script's dir is not bound


def _draws() -> list[Any]:
    import random

    import numpy

    return [torch.rand(3), torch.randint(0, 100, (4,)), random.random(), float(numpy.random.rand())]


def _same_draws(a: list[Any], b: list[Any]) -> bool:
    return torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) and a[2:] == b[2:]


def test_a_request_seed_gives_the_streams_of_torch_manual_seed():
    """On a torch with only the CPU the worker seeds the CPU generator directly: the same draws."""
    import random

    import numpy

    seed_everything(1234)
    ours = _draws()
    random.seed(1234)
    torch.manual_seed(1234)
    numpy.random.seed(1234)
    assert _same_draws(ours, _draws())
    seed_everything(1234)
    assert _same_draws(ours, _draws())


def test_a_torch_with_an_accelerator_is_seeded_by_torch_manual_seed(monkeypatch: pytest.MonkeyPatch):
    calls: list[int] = []
    monkeypatch.setattr(torch.backends.cuda, "is_built", lambda: True)
    monkeypatch.setattr(torch, "manual_seed", calls.append)
    seed_everything(7)
    assert calls == [7]
    assert not server._only_cpu_to_seed()


def test_a_torch_lacking_a_device_probe_is_seeded_by_torch_manual_seed(monkeypatch: pytest.MonkeyPatch):
    calls: list[int] = []
    monkeypatch.delattr(torch.mtia, "_is_compiled")
    monkeypatch.setattr(torch, "manual_seed", calls.append)
    seed_everything(3)
    assert calls == [3]


def test_preload_candidates_are_the_installed_top_level_modules_the_sources_import():
    source = "import numpy.linalg as la, os\nfrom matplotlib import pyplot\n  import  json ,sys\nfrom . import x\n"
    hidden = "import autograder\nfrom assignments import transformer_mt\nimport no_such_module_here\n"
    assert preload_candidates([source, hidden]) == ["numpy", "os", "matplotlib", "json", "sys"]
