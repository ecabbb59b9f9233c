"""The class page: statuses, distributions, most failed checks, the training part; files, CLI, Chromium."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder import cli, exit_codes
from autograder.assignment import assignment_of
from autograder.config import load_config
from autograder.reports.class_data import class_data, failed_checks, histogram, is_late
from autograder.reports.class_view import (
    CLASS_CHECKS_CSV,
    CLASS_DISTRIBUTIONS_CSV,
    CLASS_FILES,
    CLASS_HTML,
    CLASS_JSON,
    CLASS_STATUSES_CSV,
    CSP,
    SORT_SCRIPT,
    write_class_view,
)
from autograder.reports.submission_json import read_submission_json
from autograder.results import CheckResult, PartResult, SubmissionResult
from autograder.results_store import ResultsStore, StoredResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RESULTS = FIXTURES / "results"
CLASS_FIXTURES = FIXTURES / "reports" / "class_view"
CONFIG = load_config(RESULTS / "grader.yml")
PART2 = assignment_of(CONFIG)
PART1 = load_config(overrides={"assignment.name": "attention_encoder", "training.enabled": True})
PART1_FIGURES = assignment_of(PART1).training_figures
PART1_TRAINING = "training"  # attention_encoder's training part (asserted below)


def result(name: str, label: str | None = None) -> SubmissionResult:
    loaded = read_submission_json(RESULTS / f"{name}.json")
    loaded.submission = label or f"{name}.ipynb"
    return loaded


def a_class() -> list[SubmissionResult]:
    """Two full marks (one late), three partial, one unreadable, one grader error; the two with full
    marks also trained to the bar, one more trained below it (`trained.json`)."""
    results = [result("full_marks", "a.ipynb"), result("full_marks", "b.ipynb")]
    results += [result("partial", f"p{i}.ipynb") for i in range(3)]
    results += [result("unreadable"), result("grader_error"), result("trained", "t.ipynb")]
    results[1].late = json.loads((CLASS_FIXTURES / "late_record.json").read_text(encoding="utf-8"))
    training = json.loads((FIXTURES / "integrations" / "training_history.json").read_text(encoding="utf-8"))
    for trained in results[:2]:
        trained.extras["training"] = training
        part = next(p for p in trained.parts if p.part == "training")
        for check in part.checks:
            check.skipped, check.passed, check.points = False, True, check.max_points
        part.points = part.max_points = sum(check.points for check in part.checks)
    return results


def test_statuses_count_every_kind_and_keep_the_late_and_missing_slots() -> None:
    data = class_data(a_class(), CONFIG.parts, CONFIG.training_part(), PART2.training_figures, "T", missing=["m.ipynb"])
    assert data["statuses"] == {"graded": 6, "unreadable": 1, "grader-error": 1, "missing": 1, "late": 1}
    assert data["submissions"] == 9
    nobody_late = class_data(a_class()[2:], CONFIG.parts, None, None, "T")
    assert nobody_late["statuses"]["late"] == 0 and nobody_late["statuses"]["missing"] == 0


def test_is_late_reads_only_what_the_result_says() -> None:
    plain = result("full_marks")
    assert not is_late(plain)
    on_time = json.loads((CLASS_FIXTURES / "late_record.json").read_text(encoding="utf-8"))
    plain.late = {**on_time, "late_seconds": 0.0, "units_late": 0, "penalty_points": 0.0}
    assert not is_late(plain)
    plain.extras["late"] = True  # only the late policy's record counts, not what extras say
    assert not is_late(plain)
    plain.late = on_time
    assert is_late(plain)


def test_histogram_puts_every_value_in_one_bin_and_the_top_in_the_last() -> None:
    bins = histogram([0, 0.5, 5, 9.99, 10, 10], 10)
    assert [b["count"] for b in bins] == [2, 0, 0, 0, 0, 1, 0, 0, 0, 3]
    assert bins[0]["low"] == 0 and bins[-1]["high"] == 10
    assert histogram([3, 3], 0) == [{"low": 0.0, "high": 0, "count": 2}]


def test_score_series_leave_out_grader_errors_and_skipped_parts() -> None:
    data = class_data(a_class(), CONFIG.parts, CONFIG.training_part(), PART2.training_figures, "T")
    by_part = {series["part"]: series for series in data["scores"]}
    # 2 full (trained) + 3 partial + 1 trained + 1 unreadable scored; the grader error is not a score
    assert by_part["total"]["count"] == 7 and by_part["total"]["values"] == [0, 66, 66, 66, 80, 100, 100]
    assert by_part["decoder_layer"]["values"] == [0, 11, 11, 11, 20, 20, 20]
    assert sum(b["count"] for b in by_part["decoder_layer"]["histogram"]) == 7
    # the training part counts only where it was graded (skipped for the partial students)
    assert by_part["training"]["values"] == [0, 20, 20]
    assert by_part["decoder_layer"]["possible"] == 20


def test_failed_checks_are_counted_over_graded_submissions_most_failed_first() -> None:
    results = a_class()
    results[0].parts[0].checks[0].passed = False  # one full-marks student fails one more check
    results[0].parts[0].checks[0].message = "own reason"
    rows = failed_checks(results)
    partial = result("partial")
    failing = {(p.part, c.check_id): c.message for p in partial.parts for c in p.checks if not (c.passed or c.skipped)}
    top = [(row["part"], row["check_id"]) for row in rows if row["failed"]]
    # the 3 partial students fail these; the unreadable one (failing everything) is not counted,
    # nor are skipped checks; the extra failure is the least frequent
    extra = (results[0].parts[0].part, results[0].parts[0].checks[0].check_id)
    assert set(top) == set(failing) | {extra, ("training", "training_bleu")}
    assert all(row["graded"] == 6 for row in rows if row["part"] != "training")
    for row in rows[: len(failing)]:
        assert row["failed"] == 3 and row["message"] == failing[(row["part"], row["check_id"])]
    # then the two checks failed once: trained.json's training (it trained below the bar) and the extra one
    assert {row["message"] for row in rows[len(failing) : len(top)]} >= {"own reason"}
    assert [row["failed"] for row in rows[len(failing) : len(top)]] == [1, 1]
    assert all(row["failed"] == 0 for row in rows[len(top) :])


def test_training_summary_of_part_2_reads_bleu_steps_to_the_bar_and_stop_reasons() -> None:
    training = class_data(a_class(), CONFIG.parts, CONFIG.training_part(), PART2.training_figures, "T")["training"]
    assert training is not None
    assert training["metric"] == "BLEU" and training["threshold"] == 0.2
    assert training["metric_series"]["values"] == [0.143, 0.268, 0.268] and training["trained"] == 3
    # the fixture's evaluations reach 0.2 first at step 454
    assert training["steps_series"]["values"] == [454.0, 454.0] and training["reached"] == 2
    assert training["stop_reasons"] == {"max_epochs": 2} and training["early_stops"] == 0


def part1_result(label: str, training: dict[str, float]) -> SubmissionResult:
    """A Part 1 result: every unit check passed; the training check passed when the accuracy reached the bar."""
    passed = training["accuracy"] >= training["threshold"]
    parts = []
    for name, part in PART1.parts.items():
        ok = passed if name == PART1_TRAINING else True
        checks = [CheckResult(check, name, points, ok, points if ok else 0.0) for check, points in part.checks.items()]
        parts.append(PartResult(name, part.title, part.points, sum(c.points for c in checks), checks))
    return SubmissionResult(label, "graded", parts, extras={"training": training})


def test_training_summary_of_part_1_reads_accuracy_and_its_steps() -> None:
    extras = json.loads((CLASS_FIXTURES / "part1_training.json").read_text(encoding="utf-8"))
    results = [part1_result(f"s{i}.ipynb", details) for i, details in enumerate(extras)]
    assert PART1.training_part() == PART1_TRAINING
    data = class_data(results, PART1.parts, PART1_TRAINING, PART1_FIGURES, "Part 1")
    training = data["training"]
    assert training is not None and training["metric"] == "accuracy" and training["threshold"] == 0.9
    assert training["metric_series"]["values"] == [0.42, 0.97, 1.0] and training["metric_series"]["possible"] == 1.0
    # Part 1 reports only its run's steps: those of the runs that reached the bar
    assert training["steps_series"]["values"] == [400.0, 400.0] and training["reached"] == 2
    assert [row["check_id"] for row in data["checks"] if row["failed"]] == ["training_accuracy"]
    assert {series["part"] for series in data["scores"]} == {*PART1.parts, "total"}


def test_files_are_written_in_korean_by_default_and_english_on_request(tmp_path: Path) -> None:
    written = write_class_view(a_class(), CONFIG, PART2, tmp_path, missing=["m.ipynb"])
    assert sorted(path.name for path in written) == sorted(CLASS_FILES)
    page = (tmp_path / CLASS_HTML).read_text(encoding="utf-8")
    # a histogram per part, the total, the training metric and steps, and the lateness (b.ipynb is late)
    assert "반 전체 한눈에 보기" in page and page.count("<svg") == len(CONFIG.parts) + 1 + 2 + 1
    without_training = [r for r in a_class() if r.submission != "t.ipynb"][2:]  # nobody trained
    write_class_view(without_training, CONFIG, PART2, tmp_path / "untrained")
    assert (tmp_path / "untrained" / CLASS_HTML).read_text(encoding="utf-8").count("<svg") == len(CONFIG.parts)
    english = CONFIG.model_copy(update={"feedback": CONFIG.feedback.model_copy(update={"language": "en"})})
    write_class_view(a_class(), english, PART2, tmp_path / "en")
    assert "the class at a glance" in (tmp_path / "en" / CLASS_HTML).read_text(encoding="utf-8")
    data = json.loads((tmp_path / CLASS_JSON).read_text(encoding="utf-8"))
    checks = list(csv.DictReader(io.StringIO((tmp_path / CLASS_CHECKS_CSV).read_text(encoding="utf-8-sig"))))
    assert [(row["check_id"], int(row["failed"])) for row in checks] == [
        (row["check_id"], row["failed"]) for row in data["checks"]
    ]
    statuses = dict(csv.reader(io.StringIO((tmp_path / CLASS_STATUSES_CSV).read_text(encoding="utf-8-sig"))))
    assert statuses["missing"] == "1" and statuses["late"] == "1"
    bins = list(csv.DictReader(io.StringIO((tmp_path / CLASS_DISTRIBUTIONS_CSV).read_text(encoding="utf-8-sig"))))
    assert sum(int(row["count"]) for row in bins if row["series"] == "total") == 7


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: set[str] = set()
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.urls += [value or "" for key, value in attrs if key in {"src", "href", "srcset", "action"}]
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data


def test_page_needs_no_network_and_escapes_student_text(tmp_path: Path) -> None:
    results = a_class()
    results[2].parts[0].checks[0].passed = False
    results[2].parts[0].checks[0].message = "<script>alert(1)</script> `x`"
    write_class_view(results, CONFIG, PART2, tmp_path)
    page = (tmp_path / CLASS_HTML).read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(page)
    assert not tags.urls and "img" not in tags.tags
    assert "default-src 'none'" in page and "&lt;script&gt;" in page
    # the one script is the table's sorter, allowed by its hash alone (no inline script of anyone else runs)
    assert tags.scripts == [SORT_SCRIPT] and "'unsafe-inline'" not in CSP.split("script-src")[1]
    digest = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page


def test_every_student_has_a_row_linked_to_their_report(tmp_path: Path) -> None:
    results = a_class()
    links = [f"{r.submission.split('.')[0]}.html" for r in results]
    write_class_view(results, CONFIG, PART2, tmp_path, links=links)
    page = (tmp_path / CLASS_HTML).read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(page)
    assert tags.urls == links  # one link per student, to the report beside the page
    students = json.loads((tmp_path / CLASS_JSON).read_text(encoding="utf-8"))["students"]
    assert [row["name"] for row in students] == [r.submission for r in results]
    full = students[0]
    assert full["total"] == results[0].points and full["parts"]["decoder_layer"] == 20
    assert students[1]["late_days"] == round(19740 / 86400, 2) and full["late_days"] == 0
    assert full["metric"] == 0.268 and students[2]["metric"] is None  # trained / not trained
    assert '<table class="sortable">' in page and page.count('<tr><td><a href="') == len(results)


def test_each_failing_check_names_who_failed_it_and_how_well_it_separates(tmp_path: Path) -> None:
    results = a_class()
    rows = {(row["part"], row["check_id"]): row for row in failed_checks(results)}
    partial = result("partial")
    failing = [(p.part, c.check_id) for p in partial.parts for c in p.checks if not (c.passed or c.skipped)]
    # the three partial students failed them. Of 6 graded, the top 2 (a, b: 100/100) passed; the
    # bottom 2 are t (80/100, passed the unit checks) and p0 (66/80, failed): 1.0 - 0.5
    assert rows[failing[0]]["failed_by"] == ["p0.ipynb", "p1.ipynb", "p2.ipynb"]
    assert rows[failing[0]]["discrimination"] == 0.5
    # the training check: only t failed it, and t is in the bottom group (its training was graded
    # for a, b and t; the partial students' was skipped, so the bottom group's mean is t's alone)
    assert rows["training", "training_bleu"]["discrimination"] == 1.0
    # a part: its points over the possible, top group (a, b: 20/20) minus bottom (t: 20/20, p0: 11/20)
    scores = class_data(results, CONFIG.parts, CONFIG.training_part(), PART2.training_figures, "T")["scores"]
    assert next(s for s in scores if s["part"] == "decoder_layer")["discrimination"] == round(1 - (1 + 11 / 20) / 2, 4)
    # a check everybody passed says nothing about strong and weak work
    assert all(row["discrimination"] == 0.0 for row in rows.values() if not row["failed"])
    write_class_view(results, CONFIG, PART2, tmp_path)
    page = (tmp_path / CLASS_HTML).read_text(encoding="utf-8")
    assert "실패한 학생 3명" in page and "p0.ipynb, p1.ipynb, p2.ipynb" in page and "변별도" in page
    # too few graded submissions for two groups: no index
    assert all(row["discrimination"] is None for row in failed_checks(results[2:5]))


def test_the_metric_has_three_decimals_and_stop_reasons_are_words(tmp_path: Path) -> None:
    write_class_view(a_class(), CONFIG, PART2, tmp_path)
    page = (tmp_path / CLASS_HTML).read_text(encoding="utf-8")
    assert "평균 0.226" in page and "기준(0.200)" in page  # (0.143 + 0.268 + 0.268) / 3, the 0.2 bar
    assert "최대 에폭 완료" in page and "<code>max_epochs</code>" not in page
    assert "지각 분포" in page and "마감 뒤 일수" in page


def _stored_batch(out_dir: Path, results: list[SubmissionResult], missing: list[str]) -> None:
    store = ResultsStore(out_dir)
    labels = [r.submission for r in results] + missing
    entries = [{"stem": label.split(".")[0], "label": label, "source": label} for label in labels]
    store.start_batch(CONFIG, None, "inputs", entries)
    for entry, stored in zip(entries, results, strict=False):
        store.save(StoredResult(entry["stem"], entry["label"], entry["source"], "sha", "inputs", stored))


def test_report_class_flag_writes_only_the_class_view_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _stored_batch(tmp_path, a_class(), ["late_one.ipynb"])
    assert cli.main(["report", str(tmp_path), "--class"]) == exit_codes.EXIT_OK
    assert {path.name for path in tmp_path.iterdir() if not path.name.startswith(".")} == set(CLASS_FILES)
    data = json.loads((tmp_path / CLASS_JSON).read_text(encoding="utf-8"))
    assert data["statuses"]["missing"] == 1 and data["missing"] == ["late_one.ipynb"]
    assert "아직 채점하지 않은 제출물 1개" in capsys.readouterr().err  # the stored batch's language, ko
    assert cli.main(["report", str(tmp_path / "nothing"), "--class"]) == exit_codes.EXIT_USAGE


def test_report_rebuild_also_writes_the_class_view(tmp_path: Path) -> None:
    _stored_batch(tmp_path, a_class(), [])
    assert cli.main(["report", str(tmp_path)]) == exit_codes.EXIT_OK
    assert (tmp_path / "gradebook.csv").is_file() and (tmp_path / CLASS_HTML).is_file()


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="headless Chromium is not installed (Debian: apt-get install chromium)",
)
def test_class_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    write_class_view(a_class(), CONFIG, PART2, tmp_path)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser is not None
    shot = Path(os.environ.get("HTML_SCREENSHOT_DIR", tempfile.gettempdir())) / "class-view.png"
    shot.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                f"--user-data-dir={profile}",
                f"--screenshot={shot}",
                "--window-size=1200,1600",
                (tmp_path / CLASS_HTML).as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and int.from_bytes(data[16:20], "big") == 1200
    assert _bar_pixels(data) > 500  # the histograms' bars are drawn


def _bar_pixels(png: bytes) -> int:
    import matplotlib.image
    import numpy as np

    pixels = (matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3] * 255).round()
    colour = re.fullmatch(r"#(..)(..)(..)", "#3182ce")
    assert colour is not None
    target = np.array([int(part, 16) for part in colour.groups()])
    return int((np.abs(pixels - target).max(axis=-1) <= 6).sum())
