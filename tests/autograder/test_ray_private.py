"""Ray = local: a shared checkpoint goes to nobody on Ray too; the code is private to each task and removed.

Slow: one local Ray, started by the executor itself (its private folder is what is tested).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import expand_paths, grade_batch  # noqa: E402
from autograder.config import GraderConfig, load_config  # noqa: E402
from autograder.executors import ray_code  # noqa: E402
from autograder.executors.ray import RayExecutor  # noqa: E402
from autograder.results import STATUS_GRADED, SubmissionResult  # noqa: E402

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def report_surroundings(path: Path, config: GraderConfig, parts: list[str] | None) -> SubmissionResult:
    """A stand-in engine run in the Ray task: what lies beside the graded file, where the grader's
    code was imported from, and what of it other accounts could open."""
    import autograder

    beside = sorted(p.name for p in Path(path).parent.iterdir())
    code = Path(autograder.__file__).parents[1]
    open_to_others = [
        str(p)
        for p in [code, *code.rglob("*")]
        if not p.is_symlink() and os.stat(p).st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    ]
    note = json.dumps({"beside": beside, "code": str(code), "cwd": os.getcwd(), "open_to_others": open_to_others})
    return SubmissionResult(Path(path).name, STATUS_GRADED, [], notes=[note])


@pytest.fixture(scope="module")
def executor():
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the tests are not shipped
    made = RayExecutor()
    yield made
    made.close()


def test_a_shared_checkpoint_goes_to_nobody_and_the_code_is_private(executor: RayExecutor, tmp_path: Path) -> None:
    config = executor.prepare(
        load_config(FIXTURES / "grader.yml", {"training.enabled": True, "training.mode": "checkpoint"})
    )
    shared = tmp_path / "shared"
    shared.mkdir()
    for name in ("alice", "bob"):
        (shared / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    (shared / "checkpoint.pt").write_bytes(b"alice's weights")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "carol.ipynb").write_text("{}", encoding="utf-8")
    (alone / "checkpoint.pt").write_bytes(b"carol's weights")
    run = grade_batch(
        expand_paths([shared, alone]),
        config,
        None,
        tmp_path / "out",
        executor=executor,
        grade_function=report_surroundings,
        assignment=load_assignment("transformer_mt"),
    )
    seen = {r.submission: json.loads(r.notes[0]) for r in run.results}
    assert seen["alice.ipynb"]["beside"] == ["alice.ipynb"]
    assert seen["bob.ipynb"]["beside"] == ["bob.ipynb"]
    assert seen["carol.ipynb"]["beside"] == ["carol.ipynb", "checkpoint.pt"]
    temp_dir = executor._temp_dir
    assert temp_dir is not None and os.stat(temp_dir).st_mode & 0o077 == 0
    for report in seen.values():
        # each task imported the code from its own private folder (0700 dirs, 0600 files), deleted since
        assert Path(report["code"]).name.startswith(ray_code.PREFIX) and report["cwd"] == report["code"]
        assert report["open_to_others"] == [], report["open_to_others"]
        assert not os.path.exists(report["code"])
    assert len({report["code"] for report in seen.values()}) == len(seen)
    executor.close()
    assert not os.path.exists(temp_dir)
