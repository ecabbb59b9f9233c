"""The message catalogue: Korean and English hold the same messages, used keys exist, reports follow it."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from assignments.transformer_mt.training_modes import TRAINING_MODES
from autograder.assignment import load_assignment
from autograder.config import ConfigError, load_config
from autograder.reports.common import part_columns
from autograder.reports.feedback import render_feedback_markdown
from autograder.reports.html import render_html
from autograder.reports.i18n import LANGUAGES, catalogue, t, use_language
from autograder.reports.markdown import render_markdown
from autograder.reports.submission_json import read_submission_json

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "results"
PARTS = load_config(FIXTURES / "grader.yml").parts
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Keys whose value is the same in both languages by nature.
NOT_TRANSLATED = {"report.html.lang"}
# Keys built at run time from a prefix (assignments/transformer_mt/training_part.py, reports/markdown.py).
DYNAMIC = {"training.low_bleu_hint.": tuple(TRAINING_MODES), "report.status.": ("graded", "unreadable", "grader-error")}


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_both_languages_hold_the_same_messages_with_the_same_fields() -> None:
    english, korean = catalogue("en"), catalogue("ko")
    assert set(korean) - {k for k in korean if k.startswith("part.")} == set(english)
    for key, text in english.items():
        assert _fields(korean[key]) == _fields(text), key
        if key not in NOT_TRANSLATED:
            assert HANGUL.search(korean[key]), f"{key} is not Korean: {korean[key]!r}"


def _keys_asked_for(path: Path) -> set[str]:
    return set(re.findall(r"""\bt\(\s*["']([a-z_][a-z0-9_.\-]*)["']""", path.read_text(encoding="utf-8")))


def test_every_key_the_code_asks_for_exists() -> None:
    used = set()
    own_missing = []
    for path in [*(ROOT / "autograder").rglob("*.py"), *(ROOT / "assignments").rglob("*.py")]:  # engine, checks
        keys = _keys_asked_for(path)
        # An assignment with a catalogue of its own (Assignment.messages_dir) asks it first.
        parts = path.relative_to(ROOT).parts
        own = ROOT / "assignments" / parts[1] / "messages" if parts[0] == "assignments" else None
        if own is not None and (own / "en.yml").is_file():
            known = set(catalogue("en", own)) | set(catalogue("en"))
            own_missing += [f"{path.relative_to(ROOT)}: {key}" for key in sorted(keys - known)]
            continue
        used.update(keys)
    for prefix, suffixes in DYNAMIC.items():
        used.discard(prefix)  # t("prefix." + variable)
        used.update(prefix + suffix for suffix in suffixes)
    assert len(used) > 60
    assert sorted(used - set(catalogue("en"))) == []
    assert own_missing == []


def test_no_student_message_mentions_the_tas_train_flag() -> None:
    for language in LANGUAGES:
        assert not [k for k, v in catalogue(language).items() if "--train" in v]


def test_the_configured_language_is_validated() -> None:
    assert load_config().feedback.language == "ko"
    assert load_config(overrides={"feedback.language": "en"}).feedback.language == "en"
    with pytest.raises(ConfigError, match=r"feedback\.language"):
        load_config(overrides={"feedback.language": "fr"})


@pytest.mark.parametrize("language", LANGUAGES)
def test_reports_use_the_language_throughout(language: str) -> None:
    result = read_submission_json(FIXTURES / "trained.json")
    view = load_assignment("transformer_mt").report_sections
    with use_language(language):
        pages = [
            render_markdown([result, read_submission_json(FIXTURES / "partial.json")], PARTS),
            render_feedback_markdown(result, part_columns(PARTS), view),
            render_html(result, PARTS, "Course", view),
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
    text = t("checks.mask.differs_open", shape=(2, 6), pad_idx=3, row=0, query=0, key=1, language="en")
    assert "query 0, key 1 but should be blocked" in text
