"""The Ray executor on a simulated two-node cluster (one node advertises a GPU-like resource):
placement by resources, the local executor's exact scores, and a node killed mid-batch.

Slow: three Ray nodes start on a 2-core machine (about a minute when it is loaded).
"""

from __future__ import annotations

import threading
import time
from functools import partial

import pytest

ray = pytest.importorskip("ray")

from ray.cluster_utils import Cluster  # noqa: E402
from ray_helpers import PARTS, local_scores, scores, small_batch  # noqa: E402

from assignments.transformer_mt.settings import training_settings  # noqa: E402
from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import expand_paths, grade_all, grade_batch  # noqa: E402
from autograder.config import load_config  # noqa: E402
from autograder.engine import grade_submission as engine_grade_submission  # noqa: E402
from autograder.executors.ray import RayExecutor  # noqa: E402
from autograder.results import STATUS_GRADED  # noqa: E402

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

pytestmark = pytest.mark.slow
GPU_LIKE = "trainer_gpu"


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})  # the head grades nothing
    plain = cluster.add_node(num_cpus=1)
    # Two CPUs: a training task asks for training.threads (2) CPUs besides the GPU-like unit.
    gpu_node = cluster.add_node(num_cpus=2, resources={GPU_LIKE: 1})
    cluster.wait_for_nodes()
    executor = RayExecutor(cluster.address, gpu_resource=GPU_LIKE)
    executor.prepare(load_config())  # connects
    yield cluster, executor, {"plain": plain, "gpu": gpu_node}
    ray.shutdown()
    cluster.shutdown()


def where_and_sleep(seconds: float):
    """A stand-in grade function (a closure: Ray ships it by value) that sleeps and records its node."""

    def grade(path, config, parts):
        import ray as node_ray

        from autograder.results import STATUS_GRADED as graded
        from autograder.results import SubmissionResult

        time.sleep(seconds)
        return SubmissionResult(path.name, graded, [], notes=[node_ray.get_runtime_context().get_node_id()])

    return grade


def test_training_tasks_go_to_the_gpu_like_node_and_unit_tasks_anywhere(cluster, tmp_path):
    _, executor, nodes = cluster
    for index in range(4):
        (tmp_path / f"s{index}.ipynb").write_text("{}", encoding="utf-8")
    submissions = expand_paths([tmp_path])
    training = executor.prepare(load_config(overrides={"training.enabled": True}))
    assert training_settings(training).profile == "gpu"  # auto: the cluster offers the GPU-like resource
    placed = grade_all(submissions, training, parts=None, executor=executor, grade_function=where_and_sleep(0.2))
    assert {r.notes[0] for r in placed} == {nodes["gpu"].node_id}
    units = executor.prepare(load_config())
    placed = grade_all(submissions, units, parts=None, executor=executor, grade_function=where_and_sleep(1.0))
    assert {r.notes[0] for r in placed} == {nodes["plain"].node_id, nodes["gpu"].node_id}


def test_a_request_no_node_can_meet_is_refused_instead_of_waiting_forever(cluster, tmp_path):
    _, _, _ = cluster
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    nowhere = RayExecutor(gpu_resource="no_such_accelerator")
    config = load_config(overrides={"training.enabled": True, "training.profile": "gpu"})
    with pytest.raises(RuntimeError, match="no_such_accelerator"):
        grade_all(expand_paths([tmp_path]), config, parts=None, executor=nowhere, grade_function=where_and_sleep(0))


def test_the_cluster_gives_the_local_executors_scores(cluster, tmp_path):
    _, executor, _ = cluster
    submissions = small_batch(tmp_path / "subs")
    config = executor.prepare(load_config())
    assert scores(grade_all(submissions, config, grade_submission, PARTS, executor=executor)) == local_scores(
        submissions
    )


def test_a_node_killed_mid_batch_loses_no_submission(cluster, tmp_path):
    cluster_, executor, nodes = cluster
    for index in range(8):
        (tmp_path / "subs").mkdir(exist_ok=True)
        (tmp_path / "subs" / f"s{index}.ipynb").write_text("{}", encoding="utf-8")
    submissions = expand_paths([tmp_path / "subs"])
    out = tmp_path / "out"
    stored = out / ".grading" / "results"
    killed = []

    def kill_when_two_are_stored():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and len(list(stored.glob("*.json"))) < 2:
            time.sleep(0.1)
        cluster_.remove_node(nodes["plain"], allow_graceful=False)
        killed.append(len(list(stored.glob("*.json"))))

    killer = threading.Thread(target=kill_when_two_are_stored)
    killer.start()
    run = grade_batch(
        submissions,
        executor.prepare(load_config()),
        None,
        out,
        executor=executor,
        grade_function=where_and_sleep(1.5),
        assignment=load_assignment("transformer_mt"),
    )
    killer.join()
    assert 2 <= killed[0] < len(submissions)  # the node died mid-batch
    assert [r.status for r in run.results] == [STATUS_GRADED] * len(submissions)
    assert sorted(p.stem for p in stored.glob("*.json")) == [s.stem for s in submissions]
    # After the kill, everything ran on the surviving node.
    assert {r.notes[0] for r in run.results} <= {nodes["plain"].node_id, nodes["gpu"].node_id}
