"""The Otter plugin: options, per-part isolation and timeouts, and the conversion to Otter's results."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest
from otter.run import AutograderConfig
from otter.test_files import GradingResults

from autograder import otter_bridge as bridge
from autograder.config import load_config
from autograder.i18n import t, use_language
from autograder.otter_bridge import BridgeOptions, EngineRun

REPO = Path(__file__).resolve().parents[2]
PARTS = load_config(REPO / "grader.yml").parts
_TRAINING = load_config().training_part()  # the assignment's training part ("training")
assert _TRAINING is not None
TRAINING_PART: str = _TRAINING
UNIT = [name for name in PARTS if name != TRAINING_PART]


def engine_result(parts: list[str], failing: dict[str, str] | None = None) -> dict[str, Any]:
    """An engine SubmissionResult JSON where the given checks fail (check id -> message)."""
    failing = failing or {}
    records = []
    for name, part in PARTS.items():
        checks = [
            {
                "check_id": c,
                "part": name,
                "max_points": pts,
                "passed": c not in failing,
                "points": 0 if c in failing else pts,
                "message": failing.get(c, ""),
                "skipped": name not in parts,
            }
            for c, pts in part.checks.items()
        ]
        records.append(
            {
                "part": name,
                "title": part.title,
                "max_points": part.points,
                "points": sum(float(c["points"]) for c in checks if not c["skipped"]),
                "checks": checks,
            }
        )
    return {
        "submission": "submission.ipynb",
        "status": "graded",
        "parts": records,
        "load_problems": ["cell 3, line 1: invalid syntax"],
        "notes": [],
    }


def _result(run: EngineRun) -> dict[str, Any]:
    """The engine run's result, which these runs have."""
    assert run.result is not None, run.failure
    return run.result


class FakeRunner:
    """Stands in for `run_engine`; records calls; parts in `hang` time out, `combined_fails` fails the joint run."""

    def __init__(
        self, hang: tuple[str, ...] = (), combined_fails: bool = False, failing: dict[str, str] | None = None
    ) -> None:
        self.calls: list[dict[str, Any]] = []
        self.hang, self.combined_fails, self.failing = hang, combined_fails, failing

    def __call__(
        self,
        submission: Path,
        parts: list[str],
        timeout_s: float,
        engine_root: Path,
        *,
        train: bool = False,
        settings: dict[str, Any] | None = None,
    ) -> EngineRun:
        self.calls.append({"parts": list(parts), "timeout_s": timeout_s, "train": train, "settings": settings})
        if (self.combined_fails and len(parts) > 1) or set(parts) & set(self.hang):
            return EngineRun(list(parts), None, f"Grading took longer than {timeout_s:g} s", timeout_s)
        return EngineRun(list(parts), engine_result(list(parts), self.failing), "", 1.0)


def test_options_defaults_and_validation() -> None:
    options = BridgeOptions.from_config({"questions": {"look_ahead_mask": "q1"}, "timeouts": {"decoder": 7}})
    assert options.question("look_ahead_mask") == "q1" and options.question("decoder") == "decoder"
    assert options.timeout_for("decoder") == 7 and options.timeout_for("masked_loss") == bridge.DEFAULT_TIMEOUT_S
    assert options.timeout_for("training", training=True) == bridge.DEFAULT_TRAINING_TIMEOUT_S
    assert BridgeOptions.from_config(None) == BridgeOptions()
    with pytest.raises(ValueError, match="unknown option 'timeout'"):
        BridgeOptions.from_config({"timeout": 3})
    with pytest.raises(ValueError, match="positive"):
        BridgeOptions.from_config({"timeouts": {"decoder": 0}})
    with pytest.raises(ValueError, match="train"):
        BridgeOptions.from_config({"train": "yes"})
    with pytest.raises(ValueError, match="settings"):
        BridgeOptions.from_config({"settings": ["training.profile=cpu"]})
    assert BridgeOptions.from_config({"settings": {"training.profile": "cpu"}}).settings == {"training.profile": "cpu"}


def test_unit_parts_run_together_and_training_is_skipped() -> None:
    runner = FakeRunner()
    options = BridgeOptions(timeout_s=10, train=False)
    merged, _runs = bridge.grade_parts(Path("sub.ipynb"), REPO, options, runner)
    assert runner.calls == [{"parts": UNIT, "timeout_s": 10 * len(UNIT), "train": False, "settings": {}}]
    assert [p["part"] for p in merged["parts"]] == list(PARTS)
    assert merged["points"] == merged["max_points"] == sum(PARTS[p].points for p in UNIT)
    training = merged["parts"][-1]
    assert all(c["skipped"] for c in training["checks"]) and t("otter.training_off") in training["checks"][0]["message"]
    assert merged["load_problems"] == ["cell 3, line 1: invalid syntax"]


def test_a_hanging_part_costs_only_itself() -> None:
    runner = FakeRunner(hang=("decoder",), combined_fails=True)
    options = BridgeOptions(timeout_s=10, timeouts={"decoder": 3}, train=False)
    merged, _runs = bridge.grade_parts(Path("sub.ipynb"), REPO, options, runner)
    assert [c["parts"] for c in runner.calls] == [UNIT, *[[p] for p in UNIT]]
    assert runner.calls[0]["timeout_s"] == 10 * (len(UNIT) - 1) + 3
    assert next(c for c in runner.calls if c["parts"] == ["decoder"])["timeout_s"] == 3
    by_name = {p["part"]: p for p in merged["parts"]}
    assert by_name["decoder"]["points"] == 0
    assert all("longer than 3 s" in c["message"] for c in by_name["decoder"]["checks"])
    assert all(by_name[p]["points"] == PARTS[p].points for p in UNIT if p != "decoder")


def test_training_gets_its_own_run_when_enabled() -> None:
    runner = FakeRunner()
    options = BridgeOptions(train=True, settings={"training.profile": "cpu"}, combined=False)
    merged, _ = bridge.grade_parts(Path("sub.ipynb"), REPO, options, runner)
    assert [c["parts"] for c in runner.calls] == [[p] for p in UNIT] + [["training"]]
    assert runner.calls[-1] == {
        "parts": ["training"],
        "timeout_s": bridge.DEFAULT_TRAINING_TIMEOUT_S,
        "train": True,
        "settings": {"training.profile": "cpu"},
    }
    assert merged["max_points"] == sum(part.points for part in PARTS.values())


def test_otter_results_mirror_the_engine_parts() -> None:
    failing = {"mask_blocks_future": "Position 1 can see position 2.", "loss_value": "The loss is off."}
    merged, _ = bridge.grade_parts(Path("sub.ipynb"), REPO, BridgeOptions(train=False), FakeRunner(failing=failing))
    options = BridgeOptions(questions={"look_ahead_mask": "q1", "masked_loss": "q5"})
    results = GradingResults([])
    bridge.fill_otter_results(results, merged, options, "Assignment")
    assert results.test_files == ["q1", "decoder_layer", "decoder", "transformer_forward", "q5"]
    expected = {p["part"]: p["points"] for p in merged["parts"]}
    assert (
        results.get_score("q1")
        == expected["look_ahead_mask"]
        == 10 - PARTS["look_ahead_mask"].checks["mask_blocks_future"]
    )
    assert results.get_score("q5") == expected["masked_loss"] and results.total == merged["points"]
    document = results.to_gradescope_dict(
        AutograderConfig({"show_hidden": True, "show_all_public": True, "force_public_test_summary": False})
    )
    assert [t["name"] for t in document["tests"]] == results.test_files
    q1 = document["tests"][0]
    assert q1["visibility"] == "visible" and "Position 1 can see position 2." in q1["output"]
    assert "Not graded in this run" in document["output"] and "invalid syntax" in document["output"]


def test_otter_kernel_gets_an_empty_notebook() -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os; os.system('boom')")])
    blank = bridge.blank_submission(notebook)
    assert [c.cell_type for c in blank.cells] == ["markdown"] and blank.metadata.kernelspec.name == "python3"
    assert bridge.blank_submission("print('student script')") == ""


def test_plugin_survives_a_bridge_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    submission = tmp_path / "submission" / "notebook.ipynb"
    submission.parent.mkdir()
    submission.write_text("{}")
    plugin = bridge.EnginePlugin(str(submission), {}, {"timeouts": {"decoder": 5}})
    results = GradingResults([])

    def no_engine(path: object) -> Path:
        raise FileNotFoundError("no engine")

    monkeypatch.setattr(bridge, "find_engine_root", no_engine)
    plugin.after_grading(results)
    assert results.test_files == [] and "autograder failed" in results.output
    assert "no engine" in capsys.readouterr().out


def make_fake_engine(root: Path, body: str) -> Path:
    """A folder that looks like an engine root whose `python -m autograder` runs `body`."""
    (root / "autograder").mkdir(parents=True)
    shutil.copyfile(REPO / "grader.yml", root / "grader.yml")
    (root / "autograder" / "__init__.py").write_text("")
    (root / "autograder" / "cli.py").write_text("")
    (root / "autograder" / "__main__.py").write_text(textwrap.dedent(body))
    return root


def test_find_engine_root_trusts_only_otters_folder(tmp_path: Path) -> None:
    source = make_fake_engine(tmp_path / "ag" / "source", "")
    assert bridge.find_engine_root(tmp_path / "ag") == source
    assert bridge.find_engine_root(None) == REPO
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "source").symlink_to(source)  # a link to an engine is not an engine
    assert bridge.find_engine_root(tmp_path / "linked") == REPO


def test_the_engines_result_clears_otters_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Otter's own (blank) execution may fail, e.g. a kernel that died; the engine's grades stand."""
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    submission = root / "submission" / "hw.ipynb"
    submission.write_text("{}")
    (root / "submission" / "numpy.py").write_text("raise SystemExit")
    monkeypatch.setattr(
        bridge,
        "grade_parts",
        lambda path, engine, options: (
            bridge._merge(
                "hw.ipynb",
                PARTS,
                {n: _result(FakeRunner()(path, [n], 1, engine))["parts"][i] for i, n in enumerate(PARTS)},
                [EngineRun(UNIT, {"status": "graded"})],
            ),
            [],
        ),
    )
    plugin = bridge.EnginePlugin(str(submission), {}, {"train": False})
    plugin.before_grading(AutograderConfig({"autograder_dir": str(root)}))
    assert sorted(p.name for p in (root / "submission").iterdir()) == ["__init__.py", "hw.ipynb"]
    results = GradingResults.without_results(RuntimeError("Kernel died"))
    plugin.after_grading(results)
    assert not results.has_catastrophic_failure() and results.total == 100


def test_run_engine_kills_a_hung_engine(tmp_path: Path) -> None:
    root = make_fake_engine(tmp_path / "engine", "import time\ntime.sleep(60)\n")
    submission = tmp_path / "x.ipynb"
    submission.write_text("{}")
    run = bridge.run_engine(submission, ["decoder"], 1.0, root)
    assert run.result is None and "longer than 1 s" in run.failure and run.seconds < 10


def test_run_engine_reports_a_crash_and_reads_a_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MULTI30K_DIR", raising=False)
    submission = tmp_path / "x.ipynb"
    submission.write_text("{}")
    crash = make_fake_engine(tmp_path / "crash", "import sys\nprint('boom')\nsys.exit(3)\n")
    run = bridge.run_engine(submission, ["decoder"], 30, crash)
    assert run.result is None and "exit code 3" in run.failure and "boom" in run.log_tail
    ok = make_fake_engine(
        tmp_path / "ok",
        """
        import json, os, sys
        from pathlib import Path
        out = Path(sys.argv[sys.argv.index("--out") + 1])
        out.mkdir(parents=True)
        (out / "submission.json").write_text(json.dumps({"argv": sys.argv[1:], "data": os.environ.get("MULTI30K_DIR")}))
    """,
    )
    (ok / "data" / "multi30k").mkdir(parents=True)
    run = bridge.run_engine(
        submission, ["decoder", "masked_loss"], 30, ok, train=False, settings={"training.profile": "cpu"}
    )
    argv = _result(run)["argv"]
    assert run.failure == "" and argv[0] == "grade" and Path(argv[1]).name == "submission.ipynb"
    assert argv[argv.index("--parts") + 1] == "decoder,masked_loss" and "--no-train" in argv
    assert argv[argv.index("--set") + 1] == 'training.profile="cpu"'
    assert _result(run)["data"] == str(ok / "data" / "multi30k"), "bundled data is used when none is set"


def test_run_engine_brings_the_submitted_checkpoint_along(tmp_path: Path) -> None:
    """The engine grades a copy named submission.ipynb: a checkpoint beside the original must be
    beside the copy too, under the copy's stem; a link stays a link (the engine refuses it)."""
    upload = tmp_path / "upload"
    upload.mkdir()
    submission = upload / "hw.ipynb"
    submission.write_text("{}")
    (upload / "hw.pt").write_bytes(b"weights")
    engine = make_fake_engine(
        tmp_path / "engine",
        """
        import json, os, sys
        from pathlib import Path
        graded = Path(sys.argv[2])
        out = Path(sys.argv[sys.argv.index("--out") + 1])
        out.mkdir(parents=True)
        beside = {p.name: ("link" if p.is_symlink() else p.read_text()) for p in graded.parent.iterdir()
                  if p.suffix == ".pt"}
        (out / "submission.json").write_text(json.dumps(beside))
    """,
    )
    project = (REPO / "grader.yml").read_text(encoding="utf-8")  # the bridge validates it as the engine does
    (engine / "grader.yml").write_text(project)  # training.mode: recipe
    assert bridge.run_engine(submission, [TRAINING_PART], 30, engine, train=True).result == {}, (
        "nothing to copy when the grader trains"
    )
    (engine / "grader.yml").write_text(project.replace("  mode: recipe\n", "  mode: checkpoint\n"))  # {stem}.pt first
    run = bridge.run_engine(submission, [TRAINING_PART], 30, engine, train=True)
    assert run.result == {"submission.pt": "weights"}
    assert bridge.run_engine(submission, ["decoder"], 30, engine).result == {}, "only for the training part"
    (upload / "hw.pt").unlink()
    (upload / "hw.pt").symlink_to(tmp_path / "elsewhere.pt")
    assert bridge.run_engine(submission, [TRAINING_PART], 30, engine, train=True).result == {"submission.pt": "link"}


def test_otters_kernel_gets_a_start_up_timeout_for_a_loaded_machine() -> None:
    from nbconvert import preprocessors
    from traitlets.config import Config

    config = Config()
    config.ExecutePreprocessor.allow_errors = True  # what Otter sets: still applies
    patience = bridge._PatientKernelStart()
    patience.__enter__()
    try:
        executor = preprocessors.ExecutePreprocessor(config=config)
        assert executor.startup_timeout == bridge.KERNEL_START_TIMEOUT_S and executor.allow_errors
    finally:
        patience.__exit__()
    assert preprocessors.ExecutePreprocessor(config=Config()).startup_timeout == 60, "restored after grading"


def test_the_patient_kernel_start_is_in_place_when_otter_imports_its_executor(tmp_path: Path) -> None:
    # Otter's run: before_grading, then grade_notebook imports ExecutePreprocessor, then calls
    # before_execution, builds the executor, and after grading calls after_grading.
    from nbconvert import preprocessors
    from traitlets.config import Config

    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    submission = root / "submission" / "hw.ipynb"
    submission.write_text("{}")
    plugin = bridge.EnginePlugin(str(submission), {}, {"train": False})
    plugin.before_grading(AutograderConfig({"autograder_dir": str(root)}))
    try:
        imported = preprocessors.ExecutePreprocessor  # as Otter's grade_notebook does, before the next call
        plugin.before_execution(nbformat.v4.new_notebook())
        plugin.before_execution(nbformat.v4.new_notebook())  # entering twice keeps the real original
        assert imported(config=Config()).startup_timeout == bridge.KERNEL_START_TIMEOUT_S
    finally:
        plugin.kernel_start.__exit__()
    assert preprocessors.ExecutePreprocessor(config=Config()).startup_timeout == 60, "restored after grading"


@pytest.mark.parametrize("language", ["ko", "en"])
def test_the_zip_states_refused_upload_entries_in_the_engines_language(tmp_path: Path, language: str) -> None:
    """run_otter.py quarantines the upload before Otter (and the plugin) start; the reasons it stores
    are what the student reads, so they must already be in grader.yml's feedback language."""
    autograder_dir = tmp_path / "autograder"
    source = autograder_dir / "source"  # the zip's engine: grader.yml beside the autograder package
    (source / "autograder").mkdir(parents=True)
    shutil.copyfile(bridge.find_engine_root(None) / "autograder" / "cli.py", source / "autograder" / "cli.py")
    text = (bridge.find_engine_root(None) / "grader.yml").read_text(encoding="utf-8")
    (source / "grader.yml").write_text(text.replace("language: ko", f"language: {language}"), encoding="utf-8")
    submission = autograder_dir / "submission"
    submission.mkdir()
    (submission / "hw.ipynb").write_text("{}", encoding="utf-8")
    (tmp_path / "elsewhere.txt").write_text("not the student's", encoding="utf-8")
    (submission / "notes.txt").symlink_to(tmp_path / "elsewhere.txt")
    upload = bridge.prepare_upload(autograder_dir)
    with use_language(language):
        expected = t("upload.symlink")
    assert upload.refused == {"notes.txt": expected}


def test_the_plugins_report_names_the_parts_in_the_students_language() -> None:
    """Otter prints it under the results: "Look-ahead 마스크: 1/10", not "look_ahead_mask: 1/10"."""
    from autograder.assignment import load_assignment
    from autograder.i18n import use_language

    merged = {
        "parts": [
            {
                "part": "look_ahead_mask",
                "title": "Look-ahead mask",
                "points": 1,
                "max_points": 10,
                "checks": [{"skipped": False}],
            },
            {"part": "training", "title": "Training run", "points": 0, "max_points": 20, "checks": [{"skipped": True}]},
        ]
    }
    with use_language("ko", load_assignment("transformer_mt").messages_dir):
        report = bridge.EnginePlugin._report(merged, [], 1.0)
    assert report.splitlines()[:2] == ["Look-ahead 마스크: 1/10", "학습 (BLEU): 채점 안 함"]


def test_otters_questions_are_worded_in_the_students_language_and_pickle_as_otters() -> None:
    """Gradescope's test output is Otter's question summary: "q1 결과: …", not "q1 results:", though
    Otter words it after the plugin's language block; `otter grade` unpickles it without this project."""
    import pickle

    from otter.test_files.ok_test import OKTestFile

    failing = {"mask_blocks_future": "0번 위치가 1번 위치를 볼 수 있습니다."}
    merged, _ = bridge.grade_parts(Path("sub.ipynb"), REPO, BridgeOptions(train=False), FakeRunner(failing=failing))
    results = GradingResults([])
    with use_language("ko"):
        bridge.fill_otter_results(results, merged, BridgeOptions(questions={"look_ahead_mask": "q1"}))
    document = results.to_gradescope_dict(
        AutograderConfig({"show_hidden": True, "show_all_public": True, "force_public_test_summary": False})
    )
    q1, q2 = document["tests"][0]["output"], document["tests"][1]["output"]
    points = next(p["points"] for p in merged["parts"] if p["part"] == "look_ahead_mask")
    assert q1.splitlines()[0] == f"q1 결과: {points:g}/10점"
    assert ": mask_blocks_future: ❌ 실패\n        0번 위치가 1번 위치를 볼 수 있습니다." in q1
    assert ": mask_shape_and_dtype: ✅ 통과" in q1
    full = PARTS["decoder_layer"].points
    assert q2 == f"decoder_layer: 모든 검사를 통과했습니다({full:g}/{full:g}점) ✅"
    assert not any(english in q1 + q2 for english in ("results:", "result:", "passed", "All test cases"))
    stored = pickle.dumps(results.results["q1"])
    assert b"otter_bridge" not in stored and type(pickle.loads(stored)) is OKTestFile
    assert pickle.loads(stored).score == points


def test_the_plugins_report_times_the_engine_in_the_students_language() -> None:
    merged: dict[str, Any] = {"parts": []}
    runs = [EngineRun(["look_ahead_mask"], {}, "", 2.0), EngineRun(["decoder"], None, "멈춤", 3.0, "tail")]
    with use_language("ko"):
        report = bridge.EnginePlugin._report(merged, runs, 5.5)
    assert report.splitlines() == [
        "엔진 실행 [look_ahead_mask]: 2.0초, 정상",
        "엔진 실행 [decoder]: 3.0초, 실패: 멈춤",
        "  로그 끝부분:",
        "tail",
        "엔진 전체 시간: 5.5초",
    ]
