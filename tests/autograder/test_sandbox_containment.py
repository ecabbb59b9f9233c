"""Containment of hostile or broken student code in the sandboxed worker (fixtures in tests/fixtures/worker/)."""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

import pytest
import torch

from assignments.transformer_mt.assignment import ASSIGNMENT
from autograder.sandbox import Limits, StudentError, Worker, WorkerFailure
from autograder.sandbox.plan import PROJECT_ROOT, choose_isolation
from autograder.sandbox.warm import ForkedWorker

COURSE_PRELOAD = ASSIGNMENT.worker_preload  # Part 2's (assignment.yml `worker_preload`)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "worker"
NAMESPACES = choose_isolation(Limits()) == "namespace"
needs_namespaces = pytest.mark.skipif(not NAMESPACES, reason="needs root and mount/pid/net namespaces")


def fixture_source(*names: str) -> list[tuple[str, int, str]]:
    """One statement per fixture file; the worker runs it top-level node by node."""
    return [(name, 1, (FIXTURES / name).read_text()) for name in names]


def line_of(name: str, text: str) -> int:
    return next(n for n, line in enumerate((FIXTURES / name).read_text().splitlines(), 1) if text in line)


def errors_by_line(worker: Worker, name: str) -> dict[int, dict]:
    return {e["line"]: e for e in worker.load_report()["errors"] if e["label"] == name}


def test_infinite_loop_times_out_and_a_fresh_worker_takes_over():
    with Worker(fixture_source("infinite_loop.py", "processes.py"), Limits(timeout_s=20), {}) as worker:
        began = time.monotonic()
        with pytest.raises(WorkerFailure, match=r"^timed out after 1 s$"):
            worker.call("spin", [], timeout_s=1)
        assert time.monotonic() - began < 5
        assert worker.call("answer", []) == 42  # restarted lazily, statements re-run
        handle = worker.new("torch.nn:Linear", [2, 2])
        with pytest.raises(WorkerFailure, match=r"timed out after 0\.5 s"):
            worker.call("sleep_forever", [], timeout_s=0.5)
        with pytest.raises(WorkerFailure, match=r"handle .* was lost when the worker restarted"):
            worker.params(handle)
        with pytest.raises(WorkerFailure, match=r"worker process crashed \(SIGSEGV"):
            worker.call("segfault", [])
        assert worker.call("answer", []) == 42
        assert len(worker.start_seconds) == 4


# cold: a fresh Python per worker; warm (root jail): forked from a zygote that preloaded the course's modules
@pytest.mark.parametrize("warm", [False, pytest.param(True, marks=needs_namespaces)], ids=["cold", "warm"])
def test_huge_allocations_fail_cleanly_and_name_memory(warm):
    limits = Limits(memory_mb=1536, warm_start=warm, warm_preload=COURSE_PRELOAD if warm else ())
    with Worker(fixture_source("memory_hog.py"), limits, {}) as worker:
        at_import = errors_by_line(worker, "memory_hog.py")[line_of("memory_hog.py", "too_big_at_import =")]
        assert at_import["memory"] and "memory" in at_import["message"]
        for func in ("huge_tensor", "growing_list"):
            with pytest.raises(WorkerFailure, match=r"ran out of memory \(limit 1536 MB\) at memory_hog.py"):
                worker.call(func, [])
            assert worker.call("answer", []) == 42
        current = worker._launcher.current
        assert current is not None and isinstance(current.proc, ForkedWorker) == warm  # restarts start so too


def test_exit_or_hang_at_import_loses_only_that_statement():
    with Worker(fixture_source("exit_at_import.py", "hang_at_import.py"), Limits(timeout_s=1.5), {}) as worker:
        error = errors_by_line(worker, "exit_at_import.py")[line_of("exit_at_import.py", "os._exit(0)")]
        assert error["exc_type"] == "WorkerFailure"
        assert error["message"] == "the worker process exited (code 0) while running this statement; it was skipped"
        hang = errors_by_line(worker, "hang_at_import.py")[line_of("hang_at_import.py", "while True")]
        assert hang["message"] == "this statement ran longer than 1.5 s; it was skipped"
        assert worker.call("after_exit", []) == "defined after the exit"
        assert worker.call("after_hang", []) == "defined after the hang"
        assert worker.has("before_exit") and len(worker.start_seconds) == 1


def test_worker_that_cannot_start_fails_every_request_with_the_reason():
    with Worker(fixture_source("exit_at_import.py"), Limits(max_skipped_statements=0), {}) as worker:
        line = line_of("exit_at_import.py", "os._exit(0)")
        reason = "worker failed to start: worker process exited (code 0) while running exit_at_import.py, line"
        assert worker.load_report()["failure"] == f"{reason} {line}"
        began = time.monotonic()
        with pytest.raises(WorkerFailure, match=re.escape(reason)):
            worker.call("after_exit", [])
        assert time.monotonic() - began < 1


def test_a_statement_that_hangs_the_start_names_the_statement_limit_not_the_start_up_limit():
    limits = Limits(timeout_s=1.5, startup_timeout_s=60, max_skipped_statements=0)
    with Worker(fixture_source("hang_at_import.py"), limits, {}) as worker:
        line = line_of("hang_at_import.py", "while True")
        reason = f"worker failed to start: timed out after 1.5 s while running hang_at_import.py, line {line}"
        assert worker.load_report()["failure"] == reason


def test_system_exit_and_keyboard_interrupt_at_import_are_student_errors():
    with Worker(fixture_source("base_exceptions_at_import.py"), Limits(), {}) as worker:
        errors = errors_by_line(worker, "base_exceptions_at_import.py")
        assert [errors[line]["exc_type"] for line in sorted(errors)] == [
            "SystemExit",
            "KeyboardInterrupt",
            "SystemExit",
        ]
        assert worker.call("still_here", []) == "alive"
        assert len(worker.start_seconds) == 1


@needs_namespaces
def test_forks_that_bypass_the_audit_hook_are_bounded_and_reaped():
    limits = Limits(processes=32)
    with Worker(fixture_source("processes.py"), limits, {}) as worker:
        uid = worker.isolation["uid"]

        def sandbox_user_processes() -> int:
            return sum(1 for pid in os.listdir("/proc") if pid.isdigit() and _uid_of(pid) == uid)

        before = sandbox_user_processes()  # the pid-1 reaper and the worker
        made = worker.call("fork_with_ctypes_until_refused", [1000])
        assert uid >= 1 << 20 and 0 < made < limits.processes  # its own uid: counts only its tasks
        assert before + made == sandbox_user_processes() <= limits.processes
    deadline = time.monotonic() + 5  # the kernel tears the pid namespace down just after close()
    while sandbox_user_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sandbox_user_processes() == 0  # the whole pid namespace went with the worker


def _uid_of(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return None


def test_giant_output_is_truncated_and_never_blocks():
    limits = Limits(output_bytes=100_000, timeout_s=20)
    with Worker(fixture_source("giant_output.py"), limits, {}) as worker:
        assert worker.output_tail(1) == "import-time line 49999"
        assert worker.call("print_megabytes", [20]) == 20
        assert worker.output_tail(1) == "last line after the flood"
        with pytest.raises(WorkerFailure, match="timed out after 1 s"):
            worker.call("print_forever", [], timeout_s=1)
        kept = worker._output  # noqa: SLF001 - the cap is the point of this test
        assert kept.total_bytes > 20 << 20 and len(worker.output_tail(10**6).encode()) <= limits.output_bytes


@needs_namespaces
def test_a_root_host_refusing_the_jail_falls_back_to_the_jail_without_namespaces(monkeypatch):
    from autograder.sandbox import IsolationUnavailable, plan, startup, uidjail

    def broken_jail(*args, **kwargs):
        config = plan.build_config(*args, **kwargs)
        if config["isolation"] == "namespace":
            config["jail_root"] = "/nonexistent/jail"  # the mount fails, as without CAP_SYS_ADMIN
        return config

    monkeypatch.setattr(startup, "build_config", broken_jail)
    monkeypatch.setattr(plan.HostState, "namespace_broken", False)  # restored after the test
    # Only the way to Python is opened (e.g. /root, put back below): this checkout is not closed
    # under the tests running beside this one (test_sandbox_uidjail.py tests the closing).
    sealed: list[list[str]] = []
    real_seal = uidjail.seal

    def seal_the_way_only(hidden: list[str], keep: list[str]) -> None:
        sealed.append(hidden)
        real_seal([], keep)

    monkeypatch.setattr(startup, "seal", seal_the_way_only)  # startup calls it by this name
    monkeypatch.setattr(uidjail, "CHANGED", {})
    monkeypatch.setattr(uidjail, "_kept", [])
    monkeypatch.setattr(uidjail, "_closed", set())
    monkeypatch.setattr(uidjail, "CONTAINER_PATHS", ())
    try:
        with Worker(fixture_source("infinite_loop.py"), Limits(), {}) as worker:
            assert worker.isolation["mode"] == "uid" and worker.call("answer", []) == 42
            assert worker.isolation["uid"] >= 1 << 20
    finally:
        for path, mode in uidjail.CHANGED.items():
            os.chmod(path, mode)
    assert plan.HostState.namespace_broken
    assert sealed and str(PROJECT_ROOT) in sealed[0]
    with pytest.raises(IsolationUnavailable, match=r"^refusing to run student code without a jail: "):
        Worker(fixture_source("infinite_loop.py"), Limits(isolation="namespace"), {})


# --- one worker per isolation mode loads every import-time attack at once --------------------------
MODES = ["auto", "plain"] if choose_isolation(Limits(isolation="weak")) != "weak" else ["plain"]


@pytest.fixture(scope="module", params=MODES)
def hostile(request):
    marker = uuid.uuid4().hex
    sources = fixture_source("network.py", "grader_imports.py", "file_access.py", "processes.py", "forged_results.py")
    grader_globals = {"project_root": str(PROJECT_ROOT), "marker": marker}
    with Worker(sources, Limits(isolation=request.param), grader_globals) as worker:
        yield worker, marker
    assert not worker._launcher.sandbox.path.exists()  # noqa: SLF001 - whatever it wrote there is gone


def test_network_is_unreachable(hostile):
    worker, _ = hostile
    error = errors_by_line(worker, "network.py")[line_of("network.py", "connection = socket")]
    assert error["exc_type"] in ("OSError", "SandboxViolation")
    with pytest.raises(StudentError) as info:
        worker.call("connect_loopback", [])
    assert info.value.exc_type in ("OSError", "ConnectionRefusedError", "SandboxViolation")
    assert info.value.exc_type != "ConnectionRefusedError" or worker.isolation["mode"] == "weak"


def test_grader_packages_cannot_be_imported(hostile):
    worker, _ = hostile
    errors = errors_by_line(worker, "grader_imports.py")
    for text in ("import assignments.transformer_mt.reference", "import autograder", "from autograder import sandbox"):
        assert errors[line_of("grader_imports.py", text)]["exc_type"] == "ModuleNotFoundError"
    for name in (
        "assignments",
        "assignments.transformer_mt.reference.model",
        "assignments.attention_encoder.reference",
    ):
        assert worker.call("can_import", [name]) is False


def test_project_files_cannot_be_read(hostile):
    worker, _ = hostile
    errors = errors_by_line(worker, "file_access.py")
    denied = ("FileNotFoundError", "PermissionError", "SandboxViolation")
    # The reference the fixture reads is there for the grader (else its refusal would prove nothing).
    assert (PROJECT_ROOT / "assignments" / "transformer_mt" / "reference" / "model.py").is_file()
    for text in ("pyproject = open", "reference_source = open"):
        assert errors[line_of("file_access.py", text)]["exc_type"] in denied
    try:  # namespace: an empty stand-in directory (holding only the venv mount point); plain: refused
        listing = worker.call("listing_of", [str(PROJECT_ROOT)])
    except StudentError as error:
        assert error.exc_type in denied
    else:
        assert not {"assignments", "autograder", "tests", "pyproject.toml", "grader.yml"} & set(listing)
    reference = PROJECT_ROOT / "assignments" / "attention_encoder" / "reference" / "model.py"
    for path in (
        PROJECT_ROOT / "pyproject.toml",
        Path(__file__),
        PROJECT_ROOT / "autograder" / "__init__.py",
        reference,
    ):
        with pytest.raises(StudentError) as info:
            worker.call("read", [str(path)])
        assert info.value.exc_type in denied
    assert worker.call("read", [str(Path(torch.__file__))])  # site-packages stays readable


def test_process_creation_is_refused(hostile):
    worker, _ = hostile
    errors = errors_by_line(worker, "processes.py")
    for text in ("child = os.fork()", "subprocess.run", "os.system"):
        assert errors[line_of("processes.py", text)]["exc_type"] == "SandboxViolation"
    for func in ("fork_bomb", "run_subprocess"):
        with pytest.raises(StudentError) as info:
            worker.call(func, [])
        assert info.value.exc_type == "SandboxViolation"


def test_forged_results_never_reach_the_grader(hostile):
    worker, marker = hostile
    error = errors_by_line(worker, "forged_results.py")[line_of("forged_results.py", "os._exit(0)")]
    assert "exited (code 0)" in error["message"]
    project_write = errors_by_line(worker, "forged_results.py")[line_of("forged_results.py", "project_root, f")]
    assert project_write["exc_type"] in ("FileNotFoundError", "PermissionError", "SandboxViolation", "OSError")
    assert not (PROJECT_ROOT / f"forged-{marker}.json").exists()
    assert not Path(f"/tmp/forged-{marker}.json").exists()
    assert not (Path.cwd() / "results.json").exists()


def test_worker_failures_are_worded_in_the_students_language():
    """A student's report says how the worker failed in the catalogue's words, cells and lines as the
    checks' exceptions say them (no English "cell 3, line 2" inside a Korean sentence)."""
    from autograder.i18n import use_language

    exit_source, hang_source = ((FIXTURES / name).read_text() for name in ("exit_at_import.py", "hang_at_import.py"))
    exit_line = line_of("exit_at_import.py", "os._exit(0)")
    with (
        use_language("ko"),
        Worker([("cell 3", 1, exit_source), ("cell 4", 1, hang_source)], Limits(timeout_s=1.5), {}) as worker,
    ):
        messages = {
            e["label"]: e["message"] for e in worker.load_report()["errors"] if e["exc_type"] == "WorkerFailure"
        }
    assert messages == {
        "cell 3": "이 문장을 실행하던 프로세스가 종료되었습니다(종료 코드 0)",
        "cell 4": "이 문장이 1.5초보다 오래 걸렸습니다",
    }
    with use_language("ko"), Worker([("cell 3", 1, exit_source)], Limits(max_skipped_statements=0), {}) as worker:
        assert worker.load_report()["failure"] == (
            "코드를 불러오지 못했습니다: 코드를 실행하던 프로세스가 종료되었습니다(종료 코드 0)"
            f" (3번 셀 {exit_line}번째 줄을 실행하던 중)"
        )
