"""HTML feedback: self-contained, per-part results, the assignment's sections in place; headless Chromium."""

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
from collections.abc import Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from assignments.transformer_mt.report_figures import OPEN_COLOUR
from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.reports.common import part_columns
from autograder.reports.files import render_feedback_markdown
from autograder.reports.html import render_html
from autograder.reports.sections import ReportSection
from autograder.reports.submission_json import read_submission_json
from autograder.results import SubmissionResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
RESULTS = FIXTURES / "results"
INTEGRATIONS = FIXTURES / "integrations"
PARTS = load_config(RESULTS / "grader.yml").parts
VIEW = load_assignment("transformer_mt").report_sections  # an assignment that draws its extras
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
    page = render_html(result_with("trained", "mask_triu.json", training=True), PARTS, "Course", VIEW)
    assert 'id="attention"' in page and 'id="training"' in page
    parser = _Links()
    parser.feed(page)
    assert parser.urls and all(u.startswith(("data:image/svg+xml;base64,", "#")) for u in parser.urls)
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


def test_the_assignments_sections_sit_between_the_notes_and_the_checks() -> None:
    result = result_with("partial", "mask_triu.json", training=True)
    result.notes.append("a note")
    page = render_html(result, PARTS, "Course", VIEW)
    notes, attention, training, checks = (
        page.index(marker) for marker in ("<h2>Notes", 'id="attention"', 'id="training"', "<h2>Checks")
    )
    assert notes < attention < training < checks
    assert "attention" not in render_html(result_with("partial"), PARTS, view=VIEW).split("<h2>Checks")[0].lower()


def test_without_an_assignment_view_a_training_run_shows_its_method_and_verdict_only() -> None:
    result = result_with("partial", "mask_triu.json", training=True)
    result.extras["training"].update(method="Trained `by` <the grader>.", message="Accuracy 0.95 & more.")
    page = render_html(result, PARTS)
    section = page[page.index('<section id="training">') :]
    section = section[: section.index("</section>")]
    assert "<p>Trained <code>by</code> &lt;the grader&gt;.</p>" in section
    assert '<p class="note">Accuracy 0.95 &amp; more.</p>' in section
    assert "BLEU" not in section and "<img" not in section and 'id="attention"' not in page  # nothing it cannot know
    assert render_feedback_markdown(result, part_columns(PARTS)) == render_feedback_markdown(
        result_with("partial"), part_columns(PARTS)
    )


def test_an_assignments_training_section_replaces_the_generic_one() -> None:
    def view(extras: Mapping[str, Any]) -> list[ReportSection]:
        return [ReportSection("training", lambda: '<section id="training">own</section>', lambda: "own training")]

    result = result_with("partial", training=True)
    page = render_html(result, PARTS, view=view)
    assert page.count('<section id="training">') == 1 and '<section id="training">own</section>' in page
    assert render_feedback_markdown(result, view=view).endswith("\nown training")


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
        render_html(result_with(name, mask, training=True), PARTS, "Transformer, Part 2", VIEW), encoding="utf-8"
    )
    shot = SCREENSHOTS / f"{name}.png"
    shot.unlink(missing_ok=True)
    _screenshot(page, shot)
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and int.from_bytes(data[16:20], "big") == 1200
    assert _blue_pixels(data) > 2000  # the heatmap (and bars) are drawn on the first screen
    image = re.search(r'alt="look-ahead mask heatmap" src="data:image/svg\+xml;base64,([^"]+)"', page.read_text())
    assert image and f'fill="{OPEN_COLOUR}"' in base64.b64decode(image.group(1)).decode("utf-8")
