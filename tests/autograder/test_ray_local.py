"""The Ray executor on a local Ray of 2 CPUs: the local executor's exact scores, stored resumably.

Slow: Ray's start-up alone takes 10-30 s on a loaded 2-core machine.
"""

from __future__ import annotations

from functools import partial

import pytest

ray = pytest.importorskip("ray")

from ray_helpers import PARTS, local_scores, scores, small_batch  # noqa: E402

from assignments.transformer_mt.settings import training_settings  # noqa: E402
from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import grade_all, grade_batch  # noqa: E402
from autograder.config import load_config  # noqa: E402
from autograder.engine import grade_submission as engine_grade_submission  # noqa: E402
from autograder.executors.ray import RayExecutor  # noqa: E402

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray():
    # address="local": a new Ray of its own, never one a file of an earlier Ray (/tmp/ray) points at
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield RayExecutor()  # uses the Ray started above
    ray.shutdown()


def test_local_ray_gives_the_local_executors_scores(local_ray, tmp_path):
    submissions = small_batch(tmp_path / "subs")
    config = local_ray.prepare(load_config())
    assert training_settings(config).profile == "cpu"  # auto, and no GPU in this Ray
    on_ray = scores(grade_all(submissions, config, grade_submission, PARTS, executor=local_ray))
    assert on_ray == local_scores(submissions)
    assert len({points for _, points, _ in on_ray.values()}) > 1  # the batch has different scores


def test_results_from_ray_go_through_the_resumable_writer(local_ray, tmp_path):
    submissions = small_batch(tmp_path / "subs")
    config = local_ray.prepare(load_config())
    first = grade_batch(
        submissions,
        config,
        PARTS,
        tmp_path / "out",
        grade_submission,
        load_assignment("transformer_mt"),
        executor=local_ray,
    )
    assert len(first.graded) == len(submissions)
    assert sorted(p.stem for p in (tmp_path / "out" / ".grading" / "results").glob("*.json")) == sorted(
        s.stem for s in submissions
    )
    again = grade_batch(
        submissions,
        config,
        PARTS,
        tmp_path / "out",
        grade_submission,
        load_assignment("transformer_mt"),
        executor=local_ray,
    )
    assert again.graded == [] and scores(again.results) == scores(first.results)
