"""Executors: the default path never imports Ray; task resources by profile; unknown names refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config
from autograder.executors import make_executor
from autograder.executors.local import LocalExecutor

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_CONFIG = ROOT / "tests" / "fixtures" / "results" / "grader.yml"


def test_the_default_grade_command_never_imports_ray(tmp_path):
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import counting_engine; "
        "sys.modules['autograder.engine'] = counting_engine; from autograder.cli import main; "
        "code = main(['grade', '--quiet', '--config', sys.argv[2], '--out', sys.argv[3], sys.argv[4]]); "
        "print('ray' in sys.modules, code)"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(Path(__file__).parent),
            str(FIXTURE_CONFIG),
            str(tmp_path / "out"),
            str(tmp_path / "a.ipynb"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"GRADING_COUNT_FILE": str(tmp_path / "n"), "GRADING_FAKE_SECONDS": "0", "PATH": "/usr/bin:/bin"},
    )
    assert done.stdout.split() == ["False", "0"], done.stderr
    assert (tmp_path / "out" / "gradebook.csv").is_file()


def test_make_executor_names():
    assert isinstance(make_executor("local", jobs=3), LocalExecutor)
    executor = make_executor("local", jobs=3)
    assert isinstance(executor, LocalExecutor) and executor.jobs == 3
    with pytest.raises(ValueError, match="unknown executor"):
        make_executor("dask")


def test_task_resources_follow_the_parts_and_the_profile():
    ray_executor = pytest.importorskip("autograder.executors.ray")
    units = load_config()
    assert ray_executor.task_resources(units, None) == {"num_cpus": 1}
    cpu = load_config(overrides={"training.enabled": True, "training.profile": "cpu"})
    assert ray_executor.task_resources(cpu, None) == {"num_cpus": training_settings(cpu).threads}
    assert ray_executor.task_resources(cpu, ["decoder"]) == {"num_cpus": 1}
    gpu = load_config(overrides={"training.enabled": True, "training.profile": "gpu"})
    assert ray_executor.task_resources(gpu, None)["num_gpus"] == 1
    custom = ray_executor.task_resources(gpu, ["training"], gpu_resource="trainer_gpu")
    assert custom["resources"] == {"trainer_gpu": 1} and "num_gpus" not in custom
    shared = load_config(overrides={"training.enabled": True, "training.profile": "gpu", "training.gpu_share": 0.25})
    assert ray_executor.task_resources(shared, None)["num_gpus"] == 0.25  # four trainings per GPU


def test_the_cli_says_how_to_install_ray_when_it_is_missing(tmp_path, monkeypatch, capsys):
    from autograder import cli, exit_codes

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    monkeypatch.delitem(sys.modules, "autograder.executors.ray", raising=False)
    (tmp_path / "a.ipynb").write_text("{}", encoding="utf-8")
    code = cli.main(
        [
            "grade",
            "--config",
            str(FIXTURE_CONFIG),
            "--executor",
            "ray",
            "--out",
            str(tmp_path / "out"),
            str(tmp_path / "a.ipynb"),
        ]
    )
    assert code == exit_codes.EXIT_USAGE
    assert 'pip install ".[ray]"' in capsys.readouterr().err


def test_a_request_no_node_meets_is_refused_naming_what_the_nodes_offer(monkeypatch):
    ray_executor = pytest.importorskip("autograder.executors.ray")
    nodes = [
        {"Alive": True, "Resources": {"CPU": 2.0, "memory": 1e9, "node:127.0.0.1": 1.0, "object_store_memory": 1e8}},
        {"Alive": True, "Resources": {"CPU": 4.0, "trainer_gpu": 1.0}},
        {"Alive": False, "Resources": {"CPU": 8.0, "GPU": 1.0}},  # a dead node offers nothing
    ]
    monkeypatch.setattr(ray_executor.ray, "nodes", lambda: nodes)
    ray_executor.check_feasible({"num_cpus": 4, "resources": {"trainer_gpu": 1}})  # the second node fits
    with pytest.raises(ray_executor.ClusterTooSmall, match=r"\(the nodes offer: CPU, trainer_gpu\)"):
        ray_executor.check_feasible({"num_cpus": 1, "num_gpus": 1})
