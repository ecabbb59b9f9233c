"""Benchmark: one batch of notebooks graded by the local executor, a local Ray, and a simulated two-node Ray cluster."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from autograder.assignment import load_assignment  # noqa: E402
from autograder.batch import expand_paths, grade_all  # noqa: E402
from autograder.config import load_config  # noqa: E402
from autograder.engine import grade_submission as engine_grade_submission  # noqa: E402
from autograder.executors.local import LocalExecutor  # noqa: E402
from autograder.grading import Submission  # noqa: E402

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

CORPUS = REPO_ROOT / "tests" / "soundness" / "corpus"


def make_batch(folder: Path, count: int) -> list[Submission]:
    """`count` corpus notebooks, each its own file (faults and cheats left out: they time out or die
    on purpose); the corpus is repeated when `count` exceeds it (85 notebooks)."""
    names = sorted(p for p in CORPUS.glob("*.ipynb") if not p.name.startswith(("fault_", "cheat_")))
    folder.mkdir(parents=True)
    for index in range(count):
        source = names[index % len(names)]
        shutil.copy(source, folder / f"{index:03d}_{source.name}")
    return expand_paths([folder])


def timed(label: str, run) -> dict:
    """Run `run()` and describe its wall time and the load average around it."""
    load_before, start = os.getloadavg()[0], time.perf_counter()
    results = run()
    wall = time.perf_counter() - start
    row = {
        "run": label,
        "wall_s": round(wall, 1),
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    if isinstance(results, list) and results:  # a batch's results (start-ups return other things)
        row["scores"] = {r.submission: r.points for r in results}
        row["s_per_notebook"] = round(wall / len(results), 2)
    print(json.dumps({k: v for k, v in row.items() if k != "scores"}), flush=True)
    return row


def main() -> int:
    """Grade the batch with each executor and print the overhead of Ray over the local executor.

    The local executor runs before and after the local Ray (unless --no-bracket), so a load that
    drifts steadily during the run (the development machine is shared) weighs on both sides of
    the ratio alike: Ray's wall time is compared with the mean of the two local runs.

    Returns:
        0 when every run gave the local executor's scores, else 1.
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=40, help="notebooks in the batch (default 40)")
    parser.add_argument("--jobs", type=int, default=2, help="local workers = local Ray CPUs (default 2)")
    parser.add_argument("--parts", default=None, help="comma-separated parts (default: every unit part)")
    parser.add_argument("--skip-cluster", action="store_true", help="leave out the simulated two-node run")
    parser.add_argument(
        "--no-bracket",
        action="store_true",
        help="run the local executor once (before Ray) instead of before and after it",
    )
    args = parser.parse_args()
    parts = args.parts.split(",") if args.parts else None
    config = load_config()
    import ray
    from ray.cluster_utils import Cluster

    from autograder.executors.ray import RayExecutor

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as scratch:
        submissions = make_batch(Path(scratch) / "subs", args.count)
        local = LocalExecutor(args.jobs)
        rows.append(
            timed("local executor", lambda: grade_all(submissions, config, grade_submission, parts, executor=local))
        )
        rows.append(
            timed(
                "local Ray start-up",
                lambda: ray.init(address="local", num_cpus=args.jobs, include_dashboard=False, log_to_driver=False),
            )
        )
        executor = RayExecutor()
        rows.append(
            timed(
                "local Ray",
                lambda: grade_all(submissions, executor.prepare(config), grade_submission, parts, executor=executor),
            )
        )
        ray.shutdown()
        if not args.no_bracket:
            rows.append(
                timed(
                    "local executor, again",
                    lambda: grade_all(submissions, config, grade_submission, parts, executor=local),
                )
            )
        if not args.skip_cluster:
            cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})  # head: no grading
            rows.append(
                timed(
                    "two-node cluster start-up",
                    lambda: (
                        [cluster.add_node(num_cpus=max(1, args.jobs // 2)) for _ in range(2)]
                        and cluster.wait_for_nodes()
                    ),
                )
            )
            executor = RayExecutor(cluster.address)
            rows.append(
                timed(
                    "simulated two-node cluster",
                    lambda: grade_all(
                        submissions, executor.prepare(config), grade_submission, parts, executor=executor
                    ),
                )
            )
            ray.shutdown()
            cluster.shutdown()
    local_rows = [row for row in rows if row["run"].startswith("local executor")]
    ray_row = next(row for row in rows if row["run"] == "local Ray")
    local_wall = sum(row["wall_s"] for row in local_rows) / len(local_rows)
    same = all(row["scores"] == local_rows[0]["scores"] for row in rows if "scores" in row)
    print(
        json.dumps(
            {
                "notebooks": args.count,
                "jobs": args.jobs,
                "cpus": os.cpu_count(),
                "ray_over_local": round(ray_row["wall_s"] / local_wall, 3),
                "ray_over_each_local_run": [round(ray_row["wall_s"] / row["wall_s"], 3) for row in local_rows],
                "same_scores": same,
            }
        ),
        flush=True,
    )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
