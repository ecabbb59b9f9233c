"""Slow: the full `cpu` profile must train the reference model to BLEU >= 0.2 within its budget."""

import json

import pytest

from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_cpu_profile_reaches_threshold(reference_cpu_run):
    config = load_config()
    profile = training_settings(config).profiles["cpu"]
    metrics = json.loads((reference_cpu_run / "metrics.json").read_text())
    assert metrics["reached_target"] and metrics["best_bleu"] >= training_settings(config).threshold_bleu
    assert metrics["stop_reason"] == "target"
    # The budget is a cap on training; reaching the threshold inside it is what the profile promises.
    assert metrics["time_to_target_incl_prep_s"] <= profile.time_budget_s + metrics["data_prep_s"]
