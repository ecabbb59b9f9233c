"""`classroom50 build`: the folder holds the public checks and nothing that grades."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from classroom50_helpers import ROOT

from autograder.integrations.classroom50.__main__ import main
from autograder.integrations.classroom50.build import BuildError, build, public_tests_dir


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("autograders") / "transformer-mt"
    assert main(["build", "--assignment", "transformer_mt", "--out", str(out)]) == 0
    return out


def test_the_folder_has_the_entrypoint_settings_public_tests_and_runner(bundle: Path) -> None:
    files = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file())
    assert {"autograder.py", "assignment.json", "README.md", "requirements.lock"} <= set(files)
    # the public tests and the globals the grader provides to them
    assert [f for f in files if f.startswith("tests/")] == ["tests/grader_globals.json", "tests/library_calls.json"] + [
        f"tests/q{i}.py" for i in range(1, 6)
    ]
    assert "grader/autograder/integrations/classroom50/entrypoint.py" in files
    assert "grader/autograder/integrations/public_checks.py" in files
    assert {"grader/autograder/reports/messages/ko.yml", "grader/autograder/reports/messages/en.yml"} <= set(files)
    for name in ("q1.py", "q5.py", "grader_globals.json", "library_calls.json"):
        assert (bundle / "tests" / name).read_bytes() == (public_tests_dir("transformer_mt") / name).read_bytes()


def test_no_hidden_check_or_solution_ships(bundle: Path) -> None:
    """The runner is the student's: whatever ships, the student can read."""
    files = [p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()]
    assert not [f for f in files if "/checks/" in f or f.startswith(("grader/assignments", "grader/reference"))]
    assert not [f for f in files if "reference" in f or "solution" in f]
    hidden_ids = ["mask_matches_reference", "decoder_layer_eval_output", "transformer_mask_routing"]
    for path in bundle.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".json"):
            text = path.read_text(encoding="utf-8")
            assert not any(check in text for check in hidden_ids), path


def test_settings_pair_each_public_test_file_with_its_part(bundle: Path) -> None:
    settings = json.loads((bundle / "assignment.json").read_text(encoding="utf-8"))
    assert settings["language"] == "ko"
    assert [(p["question"], p["part"], p["points"]) for p in settings["parts"]] == [
        ("q1", "look_ahead_mask", 10),
        ("q2", "decoder_layer", 20),
        ("q3", "decoder", 20),
        ("q4", "transformer_forward", 20),
        ("q5", "masked_loss", 10),
    ]
    assert settings["parts"][0]["titles"] == {"ko": "Look-ahead 마스크", "en": "Look-ahead mask"}
    assert [p["part"] for p in settings["parts_without_public_checks"]] == ["training"]
    assert settings["parts_without_public_checks"][0]["titles"]["ko"] == "학습 (BLEU)"


def test_part_1_pairs_all_seven_questions(tmp_path: Path) -> None:
    build("attention_encoder", tmp_path / "part1")
    settings = json.loads((tmp_path / "part1" / "assignment.json").read_text(encoding="utf-8"))
    assert [p["question"] for p in settings["parts"]] == [f"q{i}" for i in range(1, 8)]
    assert settings["parts_without_public_checks"] == []


def test_the_shipped_runner_imports_from_the_folder_alone(bundle: Path) -> None:
    code = (
        "import sys; sys.path.insert(0, 'grader'); "
        "import autograder.integrations.classroom50.entrypoint as e, autograder; print(autograder.__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=bundle, capture_output=True, text=True, check=True, env={"PATH": "/usr/bin"}
    )
    assert Path(done.stdout.strip()).resolve().is_relative_to(bundle.resolve())
    assert not Path(done.stdout.strip()).resolve().is_relative_to(ROOT.resolve())


def test_build_refuses_a_foreign_folder_and_replaces_its_own(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(BuildError, match="not empty"):
        build("transformer_mt", foreign)
    own = tmp_path / "own"
    build("transformer_mt", own)
    (own / "stale.txt").write_text("old", encoding="utf-8")
    build("transformer_mt", own)
    assert not (own / "stale.txt").exists()
    assert main(["build", "--assignment", "nope", "--out", str(tmp_path / "x")]) != 0
