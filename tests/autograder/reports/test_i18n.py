"""The message catalogues (the engine's, each assignment's): Korean and English hold the same messages,
every key the code asks for is in the catalogue that serves it, reports follow the language."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from assignments.transformer_mt.training_modes import TRAINING_MODES
from autograder.assignment import load_assignment
from autograder.config import ConfigError, load_config
from autograder.i18n import LANGUAGES, MESSAGES_DIR, catalogue, t, t_in, use_language
from autograder.reports.common import part_columns
from autograder.reports.files import render_feedback_markdown
from autograder.reports.html import render_html
from autograder.reports.markdown import render_markdown
from autograder.reports.submission_json import read_submission_json

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Keys whose value is the same in both languages by nature.
NOT_TRANSLATED = {"report.html.lang"}
# The engine's catalogue, then each assignment's (Assignment.messages_dir: assignments/<name>/messages).
CATALOGUES = {"engine": MESSAGES_DIR} | {p.parent.name: p for p in sorted(ROOT.glob("assignments/*/messages"))}
# Keys built at run time from a prefix: (the code's catalogue, prefix) -> suffixes
# (assignments/transformer_mt/training_part.py and training_eval.py, autograder/reports/markdown.py).
DYNAMIC = {
    ("transformer_mt", "training.low_bleu_hint."): tuple(TRAINING_MODES),
    ("transformer_mt", "training.unfit."): ("reference_only", "student_only"),  # describe_unfitted sides
    ("engine", "report.status."): ("graded", "unreadable", "grader-error"),
    ("engine", "console."): ("pass", "fail", "skip"),  # autograder/reports/table.py
}
# Words of one assignment (Part 2) that the engine's catalogue must not hold.
ASSIGNMENT_WORDS = re.compile(r"bleu|transformer|decoder|look.ahead|multi30k|create_\w*mask", re.IGNORECASE)


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("owner", list(CATALOGUES))
def test_both_languages_hold_the_same_messages_with_the_same_fields(owner: str) -> None:
    english, korean = catalogue("en", CATALOGUES[owner]), catalogue("ko", CATALOGUES[owner])
    assert len(english) > 5
    # Part and assignment titles may be Korean only (English ones fall back to grader.yml's titles).
    assert {k for k in korean if not _is_title(k)} == {k for k in english if not _is_title(k)}
    for key, text in english.items():
        assert _fields(korean[key]) == _fields(text), key
        if key not in NOT_TRANSLATED and not _is_title(key):
            assert HANGUL.search(korean[key]), f"{key} is not Korean: {korean[key]!r}"


def _is_title(key: str) -> bool:
    return key.startswith("part.") or key == "assignment.title"


def _keys_asked_for(path: Path) -> set[str]:
    return set(re.findall(r"""\bt\(\s*["']([a-z_][a-z0-9_.\-]*)["']""", path.read_text(encoding="utf-8")))


def _owner(path: Path) -> str:
    """Whose catalogue serves a source file: its assignment's (when it has one), else the engine's."""
    parts = path.relative_to(ROOT).parts
    return parts[1] if parts[0] == "assignments" and parts[1] in CATALOGUES else "engine"


def test_every_key_the_code_asks_for_is_in_the_catalogue_that_serves_it_in_both_languages() -> None:
    used: dict[str, set[str]] = {owner: set() for owner in CATALOGUES}
    for path in [*(ROOT / "autograder").rglob("*.py"), *(ROOT / "assignments").rglob("*.py")]:  # engine, checks
        used[_owner(path)] |= _keys_asked_for(path)
    for (owner, prefix), suffixes in DYNAMIC.items():
        used[owner].discard(prefix)  # t("prefix." + variable)
        used[owner].update(prefix + suffix for suffix in suffixes)
    assert len(used["engine"]) > 40 and len(used["transformer_mt"]) > 40
    missing = []
    for owner, keys in used.items():
        for language in LANGUAGES:
            # The engine's code has only the engine's catalogue; an assignment's asks its own first.
            known = set(catalogue(language)) | (
                set(catalogue(language, CATALOGUES[owner])) if owner != "engine" else set()
            )
            missing += [f"{owner} ({language}): {key}" for key in sorted(keys - known)]
    assert missing == []


def test_the_engines_catalogue_names_no_assignment() -> None:
    for language in LANGUAGES:
        texts = [f"{key}: {text}" for key, text in catalogue(language).items()]
        assert [text for text in texts if ASSIGNMENT_WORDS.search(text)] == [], language
    assert not [k for k in catalogue("ko") if k.startswith("part.")]  # part titles are the assignments'


def test_the_graded_assignments_catalogue_is_asked_first_and_only_while_it_is_graded() -> None:
    part2 = CATALOGUES["transformer_mt"]
    with pytest.raises(KeyError):
        t("training.memorised", language="ko", validation=0.5, test=0.1, gap=0.4, threshold=0.1)
    with use_language("ko", part2):
        text = t("training.memorised", validation=0.5, test=0.1, gap=0.4, threshold=0.1)
        assert HANGUL.search(text) and "0.400" in text
        assert t("engine.no_code") == catalogue("ko")["engine.no_code"]  # the engine's, when it has no such key
    assert t_in(part2, "mask_view.differing", language="en", differing=2, total=36).startswith("2 of 36 cells")


@pytest.mark.parametrize("owner", list(CATALOGUES))
def test_no_student_message_mentions_the_tas_train_flag(owner: str) -> None:
    for language in LANGUAGES:
        assert not [k for k, v in catalogue(language, CATALOGUES[owner]).items() if "--train" in v]


def test_the_configured_language_is_validated() -> None:
    assert load_config().feedback.language == "ko"
    assert load_config(overrides={"feedback.language": "en"}).feedback.language == "en"
    with pytest.raises(ConfigError, match=r"feedback\.language"):
        load_config(overrides={"feedback.language": "fr"})


@pytest.mark.parametrize("language", LANGUAGES)
def test_reports_use_the_language_throughout(language: str) -> None:
    result = read_submission_json(FIXTURES / "trained.json")
    assignment = load_assignment("transformer_mt")
    with use_language(language, assignment.messages_dir):
        pages = [
            render_markdown([result, read_submission_json(FIXTURES / "partial.json")], PARTS),
            render_feedback_markdown(result, part_columns(PARTS), assignment.report_sections),
            render_html(result, PARTS, "Course", assignment.report_sections),
        ]
    labels = ("report.failed_checks", "report.total", "report.training_run", "report.html.checks", "report.html.parts")
    for key in labels:
        assert any(t(key, language=language) in page for page in pages), key
    other = "en" if language == "ko" else "ko"
    for page in pages:
        for key in ("report.failed_checks", "report.html.checks", "report.summary_title"):
            assert t(key, language=other) not in page, (key, language)
    assert f'<html lang="{language}">' in pages[2]


def test_a_message_may_have_fields_named_key_or_language() -> None:
    part2 = CATALOGUES["transformer_mt"]
    text = t_in(part2, "checks.mask.differs_open", shape=(2, 6), pad_idx=3, row=0, query=0, key=1, language="en")
    assert "query 0, key 1 but should be blocked" in text
