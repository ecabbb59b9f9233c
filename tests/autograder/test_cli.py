"""Command line: flags to config keys, written reports, exit codes, config commands."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from assignments.transformer_mt.settings import training_settings
from autograder import cli, exit_codes
from autograder.config import describe
from autograder.reports.submission_json import read_submission_json

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES = REPO_ROOT / "tests" / "fixtures" / "results"
FIXTURE_CONFIG = str(FIXTURES / "grader.yml")


@pytest.fixture
def engine(monkeypatch):
    """A fake autograder.engine: returns the `partial` fixture; records every call."""
    calls = []

    def grade_submission(path, config, parts=None, *, assignment):
        calls.append({"path": Path(path), "config": config, "parts": parts, "assignment": assignment.name})
        if "raise" in Path(path).read_text(encoding="utf-8"):
            raise RuntimeError("engine bug")
        return read_submission_json(FIXTURES / "partial.json")

    module = types.ModuleType("autograder.engine")
    module.grade_submission = grade_submission  # type: ignore[attr-defined]  # a stand-in module
    monkeypatch.setitem(sys.modules, "autograder.engine", module)
    return calls


@pytest.fixture
def notebook(tmp_path):
    path = tmp_path / "subs" / "bob.ipynb"
    path.parent.mkdir()
    path.write_text("{}", encoding="utf-8")
    return path


def grade(*args: str) -> int:
    return cli.main(["grade", "--config", FIXTURE_CONFIG, "--jobs", "1", *args])


def test_grading_one_file_writes_every_report_and_prints_the_details(engine, notebook, tmp_path, capsys):
    out = tmp_path / "out"
    assert grade(str(notebook), "--out", str(out)) == exit_codes.EXIT_OK
    assert sorted(p.name for p in out.iterdir()) == [
        ".grading",
        "bob.json",
        "bob.md",
        "bob.results.json",
        "class.html",
        "class.json",
        "class_checks.csv",
        "class_distributions.csv",
        "class_statuses.csv",
        "gradebook.csv",
        "summary.md",
    ]
    stdout = capsys.readouterr().out
    assert "bob.ipynb: 66/80 (채점 완료)" in stdout  # feedback.language ko: the console too
    assert "  실패    mask_blocks_future" in stdout
    assert json.loads((out / "bob.results.json").read_text())["score"] == 66
    assert read_submission_json(out / "bob.json").submission == "bob.ipynb"
    assert (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()[2].startswith("bob.ipynb,7,11,")


def test_flags_override_their_grader_yml_keys(engine, notebook, tmp_path):
    args = [
        "--out",
        str(tmp_path / "o"),
        "--timeout",
        "5",
        "--seed",
        "7",
        "--train",
        "--set",
        "training.profile=cpu",
        "--set",
        "worker.timeout_s=9",  # the named flag (--timeout 5) wins
        "--set",
        "worker.memory_mb=8192",
        "--parts",
        "decoder, look_ahead_mask,decoder",
        "--language",
        "en",
    ]
    assert grade(str(notebook), *args) == exit_codes.EXIT_OK
    (call,) = engine
    config = call["config"]
    assert config.worker.timeout_s == 5.0 and config.worker.memory_mb == 8192
    assert config.grading.model_dump() == {
        "seed": 7,
        "jobs": 1,
        "out_dir": str(tmp_path / "o"),
        "submission_budget_s": 300,
        "max_notebook_mb": 20,
        "progress": True,
    }
    assert config.feedback.language == "en"
    assert config.training.enabled is True and training_settings(config).profile == "cpu"
    assert call["parts"] == ["decoder", "look_ahead_mask"]


def test_flags_not_given_override_nothing():
    args = cli.build_parser().parse_args(["grade", "x.ipynb", "--no-train"])
    assert cli.config_overrides(args) == {"training.enabled": False}


def test_folder_is_graded_with_a_progress_bar_and_a_gradebook_row_each(engine, notebook, tmp_path, capsys):
    (notebook.parent / "alice.py").write_text("raise", encoding="utf-8")
    out = tmp_path / "out"
    assert grade(str(notebook.parent), "--out", str(out)) == exit_codes.EXIT_OK
    captured = capsys.readouterr()
    # stderr is not a terminal here: one line per finished submission
    assert "[1/2] alice.py" in captured.err and "[2/2] bob.ipynb" in captured.err
    rows = (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == ["points-per-question", "alice.py", "bob.ipynb"]
    assert ",grader-error," in rows[2]
    assert "FAIL" not in captured.out  # a batch shows only the summary table


def test_quiet_turns_the_progress_display_off(engine, notebook, tmp_path, capsys):
    assert grade(str(notebook.parent), "--out", str(tmp_path / "out"), "--quiet") == exit_codes.EXIT_OK
    (call,) = engine
    assert call["config"].grading.progress is False
    assert capsys.readouterr().err == ""


def test_grading_twice_gives_identical_json_except_the_timing(engine, notebook, tmp_path):
    texts = []
    for run in ("first", "second"):
        assert grade(str(notebook), "--out", str(tmp_path / run), "--quiet") == exit_codes.EXIT_OK
        text = (tmp_path / run / "bob.json").read_text(encoding="utf-8")
        texts.append([line for line in text.splitlines() if '"grading_seconds"' not in line])
    assert texts[0] == texts[1]


def test_json_flag_prints_the_results_and_quiet_prints_nothing(engine, notebook, tmp_path, capsys):
    assert grade(str(notebook), "--out", str(tmp_path / "a"), "--json") == exit_codes.EXIT_OK
    printed = json.loads(capsys.readouterr().out)
    assert [r["submission"] for r in printed] == ["bob.ipynb"]
    assert grade(str(notebook), "--out", str(tmp_path / "b"), "--quiet") == exit_codes.EXIT_OK
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--parts", "decoder,nope"], "--parts: 알 수 없는 파트 'nope'"),
        (["--jobs", "0"], "grading.jobs: 1 이상이어야 합니다 (받은 값: 0)"),
        (["--set", "training.profile=tpu"], "--set: training.profile: 그런 이름의 프로필이 없습니다: 'tpu'"),
        (["--set", "training.profiles.cpu.num_heads=3"], "training.profiles.cpu.num_heads: embedding_dim의 약수여야"),
        (
            ["--set", "training.mode=gpu"],
            "--set: training.mode: 'recipe', 'student_hparams' or 'checkpoint' 중 하나여야",
        ),
        (["--set", "training.nope=1"], "--set: training.nope: 알 수 없는 키입니다 (있는 키: enabled, mode,"),
        (["--set", "worker.timeout_s=soon"], "--set: worker.timeout_s: 숫자 값이어야 합니다 (받은 값: str ('soon'))"),
        (["--set", "training.mode"], "--set training.mode: 점으로 이은 grader.yml 키로 KEY=VALUE 형식이어야"),
        (["--timeout", "0"], "worker.timeout_s: 0보다 커야 합니다"),
    ],
)
def test_bad_flags_exit_2_with_the_message_and_no_traceback(args, message, engine, notebook, capsys):
    assert grade(str(notebook), *args) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert engine == []


def test_invalid_config_file_exits_2_naming_the_key(engine, notebook, tmp_path, capsys):
    bad = tmp_path / "grader.yml"
    bad.write_text("parts:\n  p:\n    points: 3\n    checks: {a: 1}\n", encoding="utf-8")
    assert cli.main(["grade", str(notebook), "--config", str(bad)]) == exit_codes.EXIT_USAGE
    assert "오류: parts.p.points: 3점인데 체크 점수의 합은 1점입니다" in capsys.readouterr().err


def test_missing_path_exits_2(engine, tmp_path, capsys):
    assert grade(str(tmp_path / "nothing.ipynb")) == exit_codes.EXIT_USAGE
    assert "그런 파일이나 폴더가 없습니다" in capsys.readouterr().err


def test_unusable_engine_exits_1(monkeypatch, notebook, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "autograder.engine", None)  # makes the import fail
    assert grade(str(notebook), "--out", str(tmp_path / "o")) == exit_codes.EXIT_CRASH
    assert "채점 엔진(autograder.engine)을 불러올 수 없습니다" in capsys.readouterr().err


def test_config_command_prints_every_key(capsys):
    assert cli.main(["config"]) == exit_codes.EXIT_OK
    assert capsys.readouterr().out == describe() + "\n"
    assert cli.main(["config", "--assignment", "attention_encoder"]) == exit_codes.EXIT_OK
    out = capsys.readouterr().out
    assert out == describe("attention_encoder") + "\n" and "training.mode" not in out
    assert cli.main(["config", "--assignment", "nope"]) == exit_codes.EXIT_USAGE
    assert "알 수 없는 과제 'nope'" in capsys.readouterr().err


def test_an_assignment_is_graded_with_its_own_grader_yml(engine, notebook, tmp_path):
    # No --config: Part 1's grader.yml (assignments/attention_encoder/grader.yml), typed by its model.
    args = ["grade", str(notebook), "--assignment", "attention_encoder", "--quiet", "--out", str(tmp_path / "o")]
    assert cli.main(args) == exit_codes.EXIT_OK
    config = engine[0]["config"]
    assert config.assignment.name == "attention_encoder" and "attention" in config.parts
    assert type(config).__name__ == "AttentionEncoderConfig" and not hasattr(config, "data")
    assert (config.training.threshold_accuracy, config.training.time_budget_s) == (0.9, 120)


def test_a_grader_yml_of_another_assignment_is_a_usage_error(engine, notebook, capsys):
    args = ["grade", str(notebook), "--config", str(REPO_ROOT / "grader.yml"), "--assignment", "attention_encoder"]
    assert cli.main(args) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err
    assert (
        err.startswith("오류: --assignment: assignment.name: ") and "'transformer_mt'을(를) 채점하는 파일입니다" in err
    )
    assert "그 과제의 grader.yml(assignments/attention_encoder/grader.yml" in err
    assert engine == []


def test_a_key_the_graded_assignment_lacks_is_a_usage_error_naming_it(engine, notebook, capsys):
    args = ["grade", str(notebook), "--assignment", "attention_encoder", "--set", "training.mode=recipe"]
    assert cli.main(args) == exit_codes.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(
        "오류: --set: training.mode: 알 수 없는 키입니다 (있는 키: enabled, threshold_accuracy, time_budget_s)"
    )
    assert engine == []


def test_validate_config_accepts_a_good_file_and_rejects_a_bad_one(tmp_path, capsys):
    assert cli.main(["validate-config", FIXTURE_CONFIG]) == exit_codes.EXIT_OK
    assert "올바른 설정입니다 (파트 6개, 100점, 학습 disabled)" in capsys.readouterr().out
    # an assignment's own grader.yml, found by its name (Part 1's: 6 parts, its training disabled)
    assert cli.main(["validate-config", "--assignment", "attention_encoder"]) == exit_codes.EXIT_OK
    assert "assignments/attention_encoder/grader.yml: 올바른 설정입니다" in capsys.readouterr().out
    assert cli.main(["validate-config", "--assignment", "nope"]) == exit_codes.EXIT_USAGE
    bad = tmp_path / "bad.yml"
    bad.write_text("grading: {jobs: many}\nparts: {p: {points: 1, checks: {a: 1}}}\n")
    assert cli.main(["validate-config", str(bad)]) == exit_codes.EXIT_USAGE
    assert "grading.jobs: 정수 값이어야 합니다" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    # The timeouts only guard against a hang: starting Python and importing torch takes long on a loaded machine.
    ok = subprocess.run(
        [sys.executable, "-m", "autograder", "validate-config", FIXTURE_CONFIG],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (ok.returncode, ok.stderr) == (0, "")
    usage = subprocess.run(
        [sys.executable, "-m", "autograder", "grade"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300
    )
    assert usage.returncode == 2 and "PATH" in usage.stderr
