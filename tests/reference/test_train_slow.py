"""Slow: the full `cpu` profile must train the reference model to BLEU >= 0.2 within its budget."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.config import load_config

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_cpu_profile_reaches_threshold(tmp_path, multi30k_dir):
    config = load_config()
    profile = config["training"]["profiles"]["cpu"]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "MULTI30K_DIR": str(multi30k_dir)}
    done = subprocess.run([sys.executable, "-m", "reference.train", "--profile", "cpu", "--out", str(tmp_path),
                           "--no-progress"], cwd=REPO_ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["reached_target"] and metrics["best_bleu"] >= config["training"]["threshold_bleu"]
    assert metrics["stop_reason"] == "target"
    # The budget is a cap on training; reaching the threshold inside it is what the profile promises.
    assert metrics["time_to_target_incl_prep_s"] <= profile["time_budget_s"] + metrics["data_prep_s"]
