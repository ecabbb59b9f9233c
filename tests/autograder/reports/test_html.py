"""HTML feedback: self-contained, per-part results, attention picture, training curve; headless Chromium."""

from __future__ import annotations

import base64
import html
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

from autograder.config import load_config
from autograder.reports.feedback import mask_markdown, render_feedback_markdown
from autograder.reports.figures import OPEN_COLOUR, mask_figure_png, training_figure_png, training_series
from autograder.reports.html import render_html
from autograder.reports.submission_json import read_submission_json
from autograder.results import SubmissionResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RESULTS = FIXTURES / "results"
INTEGRATIONS = FIXTURES / "integrations"
PARTS = load_config(RESULTS / "grader.yml").parts
SCREENSHOTS = Path(os.environ.get("HTML_SCREENSHOT_DIR", tempfile.gettempdir())) / "autograder-html-screenshots"


def fixture_json(name: str) -> dict:
    return json.loads((INTEGRATIONS / name).read_text(encoding="utf-8"))


def result_with(name: str, mask: str | None = None, training: bool = False) -> SubmissionResult:
    result = read_submission_json(RESULTS / f"{name}.json")
    if mask:
        result.extras["attention_mask"] = fixture_json(mask)
    if training:
        result.extras["training"] = fixture_json("training_history.json")
    return result


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.urls += [value or "" for key, value in attrs if key in {"src", "href", "srcset", "action"}]


def test_page_is_self_contained() -> None:
    page = render_html(result_with("trained", "mask_triu.json", training=True), PARTS, "Course")
    parser = _Links()
    parser.feed(page)
    assert parser.urls and all(u.startswith(("data:image/png;base64,", "#")) for u in parser.urls)
    assert {"script", "link", "iframe"}.isdisjoint(parser.tags)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "url(" not in page and "@import" not in page


def test_parts_checks_and_messages_are_shown_and_escaped() -> None:
    result = result_with("partial")
    result.notes.append("<script>alert(1)</script> & `code`")
    page = render_html(result, PARTS, "Course")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; <code>code</code>" in page
    for part in result.parts:
        assert html.escape(part.title) in page
    failed = next(c for p in result.parts for c in p.checks if not c.passed and not c.skipped)
    assert failed.check_id in page
    assert "staff" not in page or "traceback" not in page.lower()


def test_staff_only_extras_are_not_shown() -> None:
    result = result_with("grader_error")
    result.extras["internal_errors"] = {"x": "KeyError: secret detail"}
    page = render_html(result, PARTS)
    assert "secret detail" not in page and "Traceback" not in page


def test_attention_section_for_correct_buggy_and_missing_masks() -> None:
    correct = render_html(result_with("full_marks", "mask_correct.json"), PARTS)
    buggy = render_html(result_with("partial", "mask_triu.json"), PARTS)
    missing = render_html(result_with("unreadable", "mask_missing.json"), PARTS)
    assert "matches the correct mask" in correct and "differs from the correct mask" in buggy
    assert "LATER tokens" in buggy and "is not defined" in missing
    assert "attention" not in render_html(result_with("partial"), PARTS).split("<h2>Checks")[0].lower()


def test_training_section_from_history_and_compact_curve() -> None:
    page = render_html(result_with("partial", training=True), PARTS, bleu_threshold=0.2)
    assert "<b>0.268</b>" in page and "the bar is 0.2" in page
    assert "Example translations" in page and "Two young white men are outside" in page
    compact = render_html(result_with("trained"), PARTS, bleu_threshold=0.2)  # {"curve", "bleu"}
    assert "<b>0.143</b>" in compact and 'alt="training curve"' in compact
    series = training_series(fixture_json("training_history.json"))
    assert len(series["bleu"]) == 4 and series["x_label"] == "step"
    assert training_figure_png({"notes": "nothing to plot"}) is None


def test_mask_pictures_differ_between_correct_and_triu() -> None:
    correct, triu = (
        mask_figure_png(fixture_json("mask_correct.json")),
        mask_figure_png(fixture_json("mask_triu.json")),
    )
    assert correct.startswith(b"\x89PNG") and triu.startswith(b"\x89PNG") and correct != triu


def test_markdown_version_draws_the_mask_as_text() -> None:
    text = mask_markdown(fixture_json("mask_triu.json"))
    rows = re.findall(r"^\s*<sos> (.*)$", text, re.M)
    assert rows[0].split() == ["■", "✗", "✗", "✗", "✗", "·"]  # the first query sees the future
    correct_rows = re.findall(r"^\s*<sos> (.*)$", mask_markdown(fixture_json("mask_correct.json")), re.M)
    assert correct_rows[0].split() == ["■", "·", "·", "·", "·", "·"]
    full = render_feedback_markdown(result_with("partial", "mask_triu.json", training=True), bleu_threshold=0.2)
    assert "| Part | Points | Failed checks |" in full and "validation BLEU 0.268 (bar 0.2)" in full


def _screenshot(html_path: Path, png_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    assert browser is not None, "callers skip without Chromium"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                f"--screenshot={png_path}",
                "--window-size=1200,1600",
                html_path.as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=True,
        )


def _blue_pixels(png: bytes) -> int:
    import matplotlib.image
    import numpy as np

    pixels = (matplotlib.image.imread(io.BytesIO(png), format="png")[..., :3] * 255).round()
    target = np.array([int(OPEN_COLOUR[i : i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(pixels - target).max(axis=-1) <= 6).sum())


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="headless Chromium is not installed (Debian: apt-get install chromium)",
)
@pytest.mark.parametrize("name, mask", [("full_marks", "mask_correct.json"), ("partial", "mask_triu.json")])
def test_page_renders_in_headless_chromium(name: str, mask: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page = SCREENSHOTS / f"{name}.html"
    page.write_text(
        render_html(result_with(name, mask, training=True), PARTS, "Transformer, Part 2", 0.2), encoding="utf-8"
    )
    shot = SCREENSHOTS / f"{name}.png"
    shot.unlink(missing_ok=True)
    _screenshot(page, shot)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and int.from_bytes(data[16:20], "big") == 1200
    assert _blue_pixels(data) > 2000  # the heatmap (and bars) are drawn on the first screen
    image = re.search(r'alt="look-ahead mask heatmap" src="data:image/png;base64,([^"]+)"', page.read_text())
    assert image and _blue_pixels(base64.b64decode(image.group(1))) > 0


def test_a_checkpoint_grading_says_how_it_was_graded_and_draws_no_curve() -> None:
    result = read_submission_json(RESULTS / "trained.json")
    result.extras["training"] = fixture_json("training_checkpoint.json")
    page = render_html(result, PARTS, bleu_threshold=0.2)
    assert "Your checkpoint <code>checkpoint.pt</code> (57.8 MB) was evaluated without training" in page
    assert "<b>0.205</b>" in page and 'alt="training curve"' not in page  # nothing was trained
    assert "A man is sleeping on a couch in a green room ." in page
    text = render_feedback_markdown(result, bleu_threshold=0.2)
    assert "validation BLEU 0.205 (bar 0.2). Your checkpoint `checkpoint.pt` (57.8 MB)" in text
