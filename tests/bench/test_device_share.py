"""bench/device_share.py on the CPU with a tiny model: each count's trainings run together and are summarised."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from bench_scripts import load_bench

REPO = Path(__file__).resolve().parents[2]
SMALL_DIR = REPO / "tests" / "fixtures" / "multi30k_small"
TINY = ["embedding_dim=16", "feed_forward_dim=32", "num_heads=2", "num_layers=1", "batch_size=8", "max_tokens=0"]


def _bench() -> ModuleType:
    return load_bench("device_share")


def test_a_slowdown_is_measured_against_one_training_alone() -> None:
    bench = _bench()
    runs = [{"steps": 10, "train_wall_s": 3.0, "exit_code": 0, "reached_target": True, "time_to_target_incl_prep_s": 5}]
    alone = bench.summarise(1, runs, None)
    assert (alone["s_per_step"], alone["slowdown"], alone["time_to_target_s"], alone["failed"]) == (0.3, None, 5, 0)
    two = bench.summarise(2, [{**runs[0], "train_wall_s": 6.0}, {"exit_code": -9}], alone["s_per_step"])
    # the killed run counts as failed; the other one's step is twice as slow; not both reached the target
    assert (two["slowdown"], two["failed"], two["time_to_target_s"]) == (pytest.approx(2.0), 1, None)


@pytest.mark.e2e  # three tiny trainings in subprocesses: tens of seconds
def test_trainings_run_together_and_each_is_measured(tmp_path: Path) -> None:
    extra = ["--data-dir", str(SMALL_DIR), "--expected-counts", "train=30,validation=6,test=5", "--max-epochs", "1"]
    extra += ["--target-bleu", "1.0", "--seed", "3"]
    for pair in TINY:
        extra += ["--set", pair]
    options = ["--profile", "cpu", "--device", "cpu", "--counts", "1,2", "--max-slowdown", "100"]
    status = _bench().main([*options, "--out", str(tmp_path), "--", *extra])
    assert status == 0  # every run finished (a target of 1.0 is not reached: exit code 1, still a finished run)
    rows = json.loads((tmp_path / "device_share.json").read_text(encoding="utf-8"))
    assert [row["trainings"] for row in rows] == [1, 2]
    assert all(row["failed"] == 0 and row["s_per_step"] > 0 for row in rows)
    assert rows[0]["slowdown"] is None and rows[1]["slowdown"] > 0
    assert len(list((tmp_path / "together-2").glob("run-*/metrics.json"))) == 2
