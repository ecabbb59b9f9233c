"""In the course's language (ko), every text a student reads on every route has Korean outside quoted code.

Part 2's corpus is the soundness run's own grading (`corpus_run`, graded in Korean); Part 1's
corpus is graded once per session too (`part1_run`, conftest.py), unit parts only. Each front
end then renders those results: the Markdown reports and Gradescope results.json the corpus run
wrote, the HTML page and reporter payload, Otter's results; the public checks run on the held-out
bug notebooks.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hangul import lacks_korean, lines_lacking_korean, student_texts, untranslated
from soundness_grading import CORPUS_LANGUAGE, CorpusRun

from autograder.assignment import assignment_of
from autograder.config import GraderConfig
from autograder.i18n import assignment_title, use_language
from autograder.reports.files import write_reports
from autograder.results import SubmissionResult

ROOT = Path(__file__).resolve().parents[2]
HELD_OUT = ROOT / "tests" / "fixtures" / "public_checks"
PUBLIC_TESTS = ROOT / "student_template" / "tests"

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]


def _runs(corpus_run: CorpusRun, part1_run: CorpusRun) -> list[CorpusRun]:
    return [corpus_run, part1_run]


def _report(failures: list[str], where: str) -> str:
    shown = "\n".join(f"- {text[:300]}" for text in dict.fromkeys(failures))
    return f"{len(failures)} texts without Korean in {where}:\n{shown}"


def test_both_corpora_are_graded_in_korean(corpus_run: CorpusRun, part1_run: CorpusRun) -> None:
    for run in _runs(corpus_run, part1_run):
        assert run.config.feedback.language == CORPUS_LANGUAGE == "ko"
        assert sum(len(student_texts(r)) for r in run.results.values()) > 0  # the measure is not vacuous


@pytest.mark.parametrize("assignment", ["transformer_mt", "attention_encoder"])
def test_every_check_message_load_problem_and_note_has_korean(
    assignment: str, corpus_run: CorpusRun, part1_run: CorpusRun
) -> None:
    run = corpus_run if assignment == "transformer_mt" else part1_run
    missing = untranslated(list(run.results.values()))
    assert not missing, _report(missing, f"{assignment}'s corpus results")


def test_markdown_reports_and_gradescope_results_have_korean(corpus_run: CorpusRun, part1_run: CorpusRun) -> None:
    failures = []
    for run in _runs(corpus_run, part1_run):
        for markdown in sorted(run.out_dir.glob("*.md")):
            failures += [f"{markdown.name}: {line}" for line in lines_lacking_korean(markdown.read_text("utf-8"))]
        for results_json in sorted(run.out_dir.glob("*.results.json")):
            document = json.loads(results_json.read_text(encoding="utf-8"))
            failures += [f"{results_json.name}: {line}" for line in lines_lacking_korean(document["output"])]
            for test in document["tests"]:
                texts = [test["name"], *lines_lacking_korean(test.get("output", ""))]
                failures += [f"{results_json.name}: {text}" for text in texts if lacks_korean(text)]
    assert not failures, _report(failures, "the Markdown reports and Gradescope results")


SVG_URI = "data:image/svg+xml;base64,"
_NUMBER = re.compile(r"\d[\d.e+-]*")  # the training curve's axis ticks


class _Text(HTMLParser):
    """The text nodes of a page, outside <code>, <pre>, <style> and <script>."""

    SKIPPED = frozenset({"code", "pre", "style", "script"})

    def __init__(self, tokens: set[str]) -> None:
        """Args: the tokens a picture may show as they are (the mask grids' labels: sentence data)."""
        super().__init__()
        self.texts: list[str] = []
        self.depth = 0
        self.pictures = 0
        self.tokens = tokens

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag in self.SKIPPED
        self.texts += [value for name, value in attrs if name in ("alt", "title") and value]
        # The pictures (SVG data URIs): their words, less the sentences' tokens and the axis numbers.
        source = dict(attrs).get("src") or ""
        if tag == "img" and source.startswith(SVG_URI):
            svg = ElementTree.fromstring(base64.b64decode(source[len(SVG_URI) :]))
            words = [node.text or "" for node in svg.iter("{http://www.w3.org/2000/svg}text")]
            self.texts += [
                text for text in words if not all(w in self.tokens or _NUMBER.fullmatch(w) for w in text.split())
            ]
            self.pictures += 1

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag in self.SKIPPED

    def handle_data(self, data: str) -> None:
        if not self.depth and data.strip():
            self.texts.append(data.strip())


def _feedback(run: CorpusRun) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="korean-feedback-"))
    stems = [run.stems[case.id] for case in run.cases]
    write_reports(
        [run.results[case.id] for case in run.cases],
        stems,
        run.config,
        assignment_of(run.config),
        folder,
        html=True,
        reporter=True,
    )
    return folder


def test_html_pages_and_reporter_payloads_have_korean(corpus_run: CorpusRun, part1_run: CorpusRun) -> None:
    failures, pictures = [], 0
    for run in _runs(corpus_run, part1_run):
        folder = _feedback(run)
        tokens = {
            token
            for result in run.results.values()
            for row in (result.extras.get("attention_mask") or {}).get("labels", [])
            for token in row
        }
        for page in sorted(folder.glob("*.html")):
            parser = _Text(tokens)
            parser.feed(page.read_text(encoding="utf-8"))
            failures += [f"{page.name}: {text}" for text in parser.texts if lacks_korean(text)]
            pictures += parser.pictures
        for payload in sorted(folder.glob("*.reporter.json")):
            for test in json.loads(payload.read_text(encoding="utf-8")).get("tests", []):
                texts = [test.get("name", ""), *lines_lacking_korean(test.get("message", "") or "")]
                failures += [f"{payload.name}: {text}" for text in texts if lacks_korean(text)]
        for feedback in sorted(folder.glob("*.feedback.md")):
            failures += [f"{feedback.name}: {line}" for line in lines_lacking_korean(feedback.read_text("utf-8"))]
    assert pictures > 0  # the pictures' words were read too
    assert not failures, _report(failures, "the HTML pages, feedback and reporter payloads")


def _otter_texts(result: SubmissionResult, config: GraderConfig) -> list[str]:
    from autograder.otter_bridge import part_test_file, summary_text

    merged = {**result.to_json()}
    with use_language(config.feedback.language, assignment_of(config).messages_dir):
        texts = lines_lacking_korean(summary_text(merged, assignment_title(config.assignment.title)))
        for part in merged["parts"]:
            test_file = part_test_file(part, part["part"])
            for outcome in test_file.test_case_results:
                texts += [outcome.test_case.name, *lines_lacking_korean(outcome.message)]
    return [text for text in texts if lacks_korean(text)]


def test_otter_results_have_korean(corpus_run: CorpusRun, part1_run: CorpusRun) -> None:
    failures = [
        f"{case_id}: {text}"
        for run in _runs(corpus_run, part1_run)
        for case_id, result in run.results.items()
        for text in _otter_texts(result, run.config)
    ]
    assert not failures, _report(failures, "Otter's results")


def test_public_checks_have_korean() -> None:
    from autograder.integrations.public_checks import run_public_checks, summary_markdown

    failures = []
    notebooks = sorted(HELD_OUT.glob("bug_*.ipynb"))
    assert len(notebooks) == 8
    with use_language("ko"):
        for notebook in notebooks:
            outcomes, problems = run_public_checks(notebook, PUBLIC_TESTS)
            assert not all(o.passed for o in outcomes), notebook.name  # a held-out bug fails a check
            texts = [*problems, *(o.error for o in outcomes if o.error)]
            texts += [case.message for o in outcomes for case in o.cases if not case.passed]
            failures += [f"{notebook.name}: {text}" for text in texts if lacks_korean(text)]
            summary = summary_markdown(notebook.name, outcomes, problems)
            failures += [f"{notebook.name} summary: {line}" for line in lines_lacking_korean(summary)]
    assert not failures, _report(failures, "the public checks")
