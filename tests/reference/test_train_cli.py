"""Smoke tests of the reference training CLI and `python -m assignments.transformer_mt.reference.translate`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from assignments.transformer_mt import reference_training as train_cli
from assignments.transformer_mt.reference import translate as translate_cli

REPO_ROOT = Path(__file__).resolve().parents[2]
SMALL_DIR = REPO_ROOT / "tests" / "fixtures" / "multi30k_small"
COUNTS = "train=30,validation=6,test=5"
TINY = [
    "--set",
    "embedding_dim=16",
    "--set",
    "feed_forward_dim=32",
    "--set",
    "num_heads=2",
    "--set",
    "num_layers=1",
    "--set",
    "batch_size=8",
    "--set",
    "max_tokens=0",
    "--set",
    "eval_every_steps=0",
    "--set",
    "learning_rate=0.003",
]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MTKIT_CACHE_DIR", str(tmp_path / "cache"))


def tiny_args(out, *extra):
    return [
        "--profile",
        "cpu",
        "--data-dir",
        str(SMALL_DIR),
        "--expected-counts",
        COUNTS,
        "--out",
        str(out),
        "--no-progress",
        "--max-epochs",
        "2",
        "--seed",
        "3",
        *TINY,
        *extra,
    ]


def test_train_writes_artifacts_and_translate_reads_them(tmp_path, capsys):
    out = tmp_path / "run"
    status = train_cli.main(tiny_args(out, "--target-bleu", "1.0", "--teacher-forced"))
    assert status == 1  # a 16-wide model on 30 pairs does not reach BLEU 1.0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["hparams"]["embedding_dim"] == 16 and metrics["recipe"]["seed"] == 3
    assert metrics["steps"] == 8 and metrics["epochs"] == 2 and metrics["stop_reason"] == "max_epochs"
    assert [e["step"] for e in metrics["history"]["evals"]] == [4, 8]
    assert metrics["final"]["n_sentences"] == 6 and "teacher_forced_bleu_not_graded" in metrics["final"]
    assert metrics["time_to_target_incl_prep_s"] is None and not metrics["reached_target"]
    assert (out / "curves.png").stat().st_size > 1000 and (out / "train_log.json").exists()
    payload = torch.load(out / "checkpoint.pt", weights_only=True)
    assert payload["extra"]["embedding_dim"] == 16 and payload["extra"]["max_length"] == 50
    assert "NOT graded" in capsys.readouterr().out

    sentences = tmp_path / "in.txt"
    sentences.write_text("Ein Mann fährt Fahrrad.\n\nZwei Hunde spielen im Schnee.\n", encoding="utf-8")
    assert translate_cli.main(["--checkpoint", str(out / "checkpoint.pt"), "--input", str(sentences), "Ein Hund."]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3  # the argument, then the two non-empty lines of the file


def test_target_reached_exit_status_and_time_to_target(tmp_path):
    out = tmp_path / "run"
    assert train_cli.main(tiny_args(out, "--target-bleu", "0.0")) == 0  # the first evaluation stops it
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["stop_reason"] == "target" and metrics["steps"] == 4
    assert 0 < metrics["time_to_target_incl_prep_s"] <= metrics["total_wall_s"]


def test_profile_from_a_custom_grader_yml(tmp_path):
    config = yaml.safe_load((REPO_ROOT / "grader.yml").read_text())
    config["training"]["profiles"]["tiny"] = {
        "embedding_dim": 8,
        "feed_forward_dim": 16,
        "num_heads": 2,
        "num_layers": 1,
        "batch_size": 16,
        "max_epochs": 1,
    }
    path = tmp_path / "grader.yml"
    path.write_text(yaml.safe_dump(config))
    out = tmp_path / "run"
    args = [
        "--config",
        str(path),
        "--profile",
        "tiny",
        "--data-dir",
        str(SMALL_DIR),
        "--expected-counts",
        COUNTS,
        "--out",
        str(out),
        "--no-progress",
    ]
    train_cli.main(args)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["profile"] == "tiny" and metrics["hparams"]["embedding_dim"] == 8 and metrics["steps"] == 2
    with pytest.raises(SystemExit):
        train_cli.main([*args, "--set", "embedding_dim"])  # not KEY=VALUE


def test_set_pairs_become_keys_of_the_chosen_profile():
    # The CLI's own `--set` reader: values typed as YAML, keys stripped, a later pair wins.
    pairs = ["embedding_dim=128", " lr_schedule = constant", "betas=[0.9, 0.98]", "embedding_dim=64"]
    assert train_cli._profile_overrides(pairs, "cpu") == {
        "training.profiles.cpu.embedding_dim": 64,
        "training.profiles.cpu.lr_schedule": "constant",
        "training.profiles.cpu.betas": [0.9, 0.98],
    }
    for bad, said in [("embedding_dim", "--set embedding_dim:"), ("=5", "--set =5:"), ("x=[1", "not YAML")]:
        with pytest.raises(SystemExit) as raised:
            train_cli._profile_overrides([bad], "cpu")
        assert said in str(raised.value.code)


def test_module_entry_point(tmp_path):
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "MTKIT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assignments.transformer_mt.reference_training",
            *tiny_args(tmp_path / "run", "--max-epochs", "1"),
        ],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "best BLEU" in done.stdout and (tmp_path / "run" / "checkpoint.pt").exists()
