"""On a Ray cluster whose nodes the grader did not start, nothing of the grader's code is readable by
other accounts on any node, during or after a batch; a killed task's private copy is removed too.

The nodes' Ray folders are walked as Ray makes them (it opens them to all, as under /tmp/ray):
a file there is readable by others if it is o+r and every folder from the node's Ray folder down is
o+x. The last test ships the code Ray's way (working_dir) and shows that the walk finds it.

Slow: three Ray nodes start on a 2-core machine, and a real batch is graded.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
from functools import partial
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402
from ray_helpers import PARTS, small_batch  # noqa: E402

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import expand_paths, grade_all  # noqa: E402
from autograder.config import PROJECT_ROOT, GraderConfig, load_config  # noqa: E402
from autograder.engine import grade_submission as engine_grade_submission  # noqa: E402
from autograder.executors import ray_code  # noqa: E402
from autograder.executors.ray import RayExecutor, code_excludes  # noqa: E402
from autograder.results import STATUS_ERROR, STATUS_GRADED, SubmissionResult  # noqa: E402

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

pytestmark = pytest.mark.slow
CODE_ROOTS = ("assignments/", "autograder/")  # the hidden checks and the references, the engine
DISTINCT_LINE = 40  # source lines at least this long (stripped) identify the code's contents
READ_AT_MOST = 64 * 1024 * 1024


@pytest.fixture(scope="module")
def cluster():
    # Short (Ray's socket paths have a length limit) and private (this machine is shared); each
    # node gets its own Ray folder below it, which Ray opens to all as it would /tmp/ray.
    base = tempfile.mkdtemp(prefix="rc-")
    folders = [os.path.join(base, name) for name in ("head", "a", "b")]
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "temp_dir": folders[0]})
    for folder in folders[1:]:
        cluster.add_node(num_cpus=1, temp_dir=folder)
    cluster.wait_for_nodes()
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the tests are not shipped
    executor = RayExecutor(cluster.address)
    executor.prepare(load_config())  # connects
    yield executor, folders, cluster
    ray.shutdown()
    cluster.shutdown()
    shutil.rmtree(base, ignore_errors=True)


def grader_code() -> tuple[set[str], set[str]]:
    """The shipped files of the grader's code: their paths, and their distinctive source lines."""
    paths, lines = set(), set()
    for directory, folders, files in os.walk(PROJECT_ROOT):
        folders[:] = [f for f in folders if f not in {".git", ".venv", "__pycache__", "tests", "docs"}]
        for name in files:
            relative = os.path.relpath(os.path.join(directory, name), PROJECT_ROOT)
            if not relative.startswith(CODE_ROOTS) or name.endswith((".pyc", ".ipynb")):
                continue
            paths.add(relative)
            text = Path(PROJECT_ROOT, relative).read_text(encoding="utf-8", errors="ignore")
            lines |= {line.strip() for line in text.splitlines() if len(line.strip()) >= DISTINCT_LINE}
    return paths, lines


def readable_by_others(root: str) -> list[str]:
    """Regular files under a node's Ray folder that another account can read."""
    found = []
    for directory, folders, files in os.walk(root):
        if not os.stat(directory).st_mode & stat.S_IXOTH:
            folders[:] = []  # nobody else passes this folder
            continue
        for name in files:
            path = os.path.join(directory, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode) and mode & stat.S_IROTH:
                found.append(path)
    return found


def code_readable_by_others(folders: list[str]) -> dict[str, list[str]]:
    """The grader's files, and files holding lines of its code, readable by others on the nodes."""
    paths, lines = grader_code()
    by_name, by_content = [], []
    for root in folders:
        assert os.stat(root).st_mode & stat.S_IXOTH  # Ray opened it, as it does /tmp/ray
        for path in readable_by_others(root):
            if any(path.endswith("/" + relative) for relative in paths):
                by_name.append(path)
            with open(path, "rb") as handle:
                text = handle.read(READ_AT_MOST).decode("utf-8", errors="ignore")
            if any(line.strip() in lines for line in text.splitlines()):
                by_content.append(path)
    return {"by_name": by_name, "by_content": by_content}


def own_code_folders() -> list[str]:
    return [
        p
        for p in glob.glob(os.path.join(tempfile.gettempdir(), ray_code.PREFIX + "*"))
        if os.stat(p).st_uid == os.getuid()
    ]


def report_code_folder(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    """A stand-in engine: where the grader's code was imported from, and what of it others could open."""
    import autograder

    code = Path(autograder.__file__).parents[1]
    open_to_others = [str(p) for p in [code, *code.rglob("*")] if os.stat(p).st_mode & (stat.S_IRWXG | stat.S_IRWXO)]
    return SubmissionResult(Path(path).name, STATUS_GRADED, [], notes=[str(code), *open_to_others])


def test_nothing_of_the_code_is_readable_by_others_during_or_after_a_batch(cluster, tmp_path: Path) -> None:
    executor, folders, _ = cluster
    results = grade_all(
        small_batch(tmp_path / "subs"), executor.prepare(load_config()), grade_submission, PARTS, executor=executor
    )
    assert [r.status for r in results] == [STATUS_GRADED] * len(results)
    assert len({r.points for r in results}) > 1  # the real checks and the reference ran on the nodes
    during = grade_all(small_batch(tmp_path / "again"), load_config(), report_code_folder, None, executor=executor)
    for result in during:
        code, *open_to_others = result.notes
        assert Path(code).name.startswith(ray_code.PREFIX) and open_to_others == []
        assert not any(code.startswith(folder) for folder in folders)
        assert not os.path.exists(code)
    assert own_code_folders() == []
    assert code_readable_by_others(folders) == {"by_name": [], "by_content": []}


def quote_the_code_and_fail(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    """A stand-in engine that prints a line of the reference every way it can, then fails inside the
    grader's code (a traceback would quote its lines)."""
    import warnings

    import assignments.transformer_mt.reference.model as reference_model
    from autograder.config import load_config as load

    source = Path(reference_model.__file__).read_text(encoding="utf-8").splitlines()
    line = max(source, key=len)
    print(line)
    print(line, file=sys.stderr)
    warnings.warn(line, stacklevel=1)
    os.write(2, line.encode())
    load(Path(path).with_name("no-such-grader.yml"))
    raise AssertionError("unreachable: the configuration does not exist")


def test_what_a_task_prints_or_raises_quotes_no_code_in_the_nodes_logs(cluster, tmp_path: Path) -> None:
    executor, folders, _ = cluster
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "a.ipynb").write_text("{}", encoding="utf-8")
    results = grade_all(
        expand_paths([tmp_path / "subs"]), load_config(), quote_the_code_and_fail, None, executor=executor
    )
    assert [r.status for r in results] == [STATUS_ERROR]
    assert "file not found" in json.dumps(results[0].to_json())
    assert own_code_folders() == []
    assert code_readable_by_others(folders) == {"by_name": [], "by_content": []}


def die_on_first_attempt(marker: Path):
    """A stand-in engine whose first run records its private code folder and kills its Ray worker."""

    def grade(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
        import autograder

        if not marker.exists():
            marker.write_text(str(Path(autograder.__file__).parents[1]), encoding="utf-8")
            os.kill(os.getpid(), signal.SIGKILL)
        return SubmissionResult(Path(path).name, STATUS_GRADED, [], notes=[])

    return grade


def test_the_copy_of_a_task_killed_mid_run_is_removed_by_the_next_task(cluster, tmp_path: Path) -> None:
    executor, _, _ = cluster
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "a.ipynb").write_text("{}", encoding="utf-8")
    marker = tmp_path / "killed-code-folder"
    results = grade_all(
        expand_paths([tmp_path / "subs"]), load_config(), die_on_first_attempt(marker), None, executor=executor
    )
    assert [r.status for r in results] == [STATUS_GRADED]  # Ray ran the task again
    killed = marker.read_text(encoding="utf-8")
    assert Path(killed).name.startswith(ray_code.PREFIX) and not os.path.exists(killed)
    assert own_code_folders() == []


@ray.remote
def import_from_working_dir() -> str:
    import autograder

    return autograder.__file__


def test_the_walk_finds_the_code_when_shipped_the_ray_way(cluster) -> None:
    """The check above can fail: shipped as the job's working_dir (as before), the code stays
    readable by others on the nodes."""
    _, folders, cluster_ = cluster
    ray.shutdown()
    ray.init(address=cluster_.address, runtime_env={"working_dir": str(PROJECT_ROOT), "excludes": code_excludes()})
    unpacked = ray.get(import_from_working_dir.remote())
    assert any(unpacked.startswith(folder) for folder in folders), unpacked
    found = code_readable_by_others(folders)
    assert any(p.endswith("/assignments/transformer_mt/reference/model.py") for p in found["by_name"]), found
    assert any("/assignments/" in p for p in found["by_content"]), found
