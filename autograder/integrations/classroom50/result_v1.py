"""Classroom50 `result/v1` documents, their release body and step outputs (stdlib and i18n only)."""

# Two writers use this module: the autograder.py the Classroom50 runner executes on the student's
# runner (public checks; a copy ships in the folder `build` writes, so it imports only the standard
# library and the message catalogue) and the instructor's `publish` step (hidden checks).
# The contract (foundation50/classroom50, schemas/result-v1.schema.json): integer scores, one
# entry per test with `test-name`, `passed`, `score`, `max-score`, optional `message`; `datetime`
# is UTC with a `Z`; no key outside the schema at the top level.

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from autograder.i18n import t

SCHEMA_ID = "classroom50/result/v1"
RESULT_FILENAME = "result.json"
RELEASE_BODY_FILENAME = "release-body.md"
MESSAGE_LIMIT = 2000  # per test: a runaway message must not bloat the release


@dataclass
class Identity:
    """Who and what a result is about (the runner's environment, or the collector's manifest)."""

    classroom: str
    assignment: str
    owner: str
    submission: str  # the submit/* tag
    commit: str  # link to the graded commit
    release: str
    review: str
    submitted_at: str  # UTC, YYYY-MM-DDTHH:MM:SSZ
    assignment_type: str = "individual"


@dataclass
class PartOutcome:
    """One part as one Classroom50 test."""

    name: str  # the part's key
    title: str  # shown to the student (catalogue's part title)
    earned: float
    possible: float
    passed: bool
    message: str = ""  # student-facing explanation of what failed


def utc_stamp(moment: datetime | None = None) -> str:
    """A UTC instant as YYYY-MM-DDTHH:MM:SSZ (the schema's `datetime` format).

    Args:
        moment: an aware datetime (a deadline, a committer date), or None for now.

    Returns:
        The formatted instant.
    """
    return (moment or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def whole_points(earned: float, possible: float) -> tuple[int, int]:
    """Integer points for the schema: the maximum rounded, the earned points rounded down (never
    more than earned, never above the maximum, never negative; NaN counts as 0).

    Args:
        earned: points earned.
        possible: points available.

    Returns:
        (score, max-score).
    """
    top = max(0, round(possible)) if math.isfinite(possible) else 0
    got = math.floor(earned + 1e-9) if math.isfinite(earned) else 0
    return min(max(0, got), top), top


def make_result(identity: Identity, parts: Sequence[PartOutcome]) -> dict[str, Any]:
    """A result/v1 document with one test per part, graded now.

    Args:
        identity: the submission.
        parts: the parts, in report order.

    Returns:
        The JSON-ready document; `score` is the sum of the tests' scores.
    """
    tests = []
    for part in parts:
        score, top = whole_points(part.earned, part.possible)
        test: dict[str, Any] = {"test-name": part.title, "passed": part.passed, "score": score, "max-score": top}
        if part.message:
            test["message"] = _clip(part.message)
        tests.append(test)
    return {
        "schema": SCHEMA_ID,
        "classroom": identity.classroom,
        "assignment": identity.assignment,
        "assignment_type": identity.assignment_type,
        "owner": identity.owner,
        "submission": identity.submission,
        "commit": identity.commit,
        "release": identity.release,
        "review": identity.review or identity.commit,
        "datetime": identity.submitted_at,
        "graded_at": utc_stamp(),
        "score": sum(test["score"] for test in tests),
        "max-score": sum(test["max-score"] for test in tests),
        "tests": tests,
    }


def status_and_summary(result: Mapping[str, Any]) -> tuple[str, str]:
    """The runner's `status` (success | failure) and a one-line summary, in the current language.

    Args:
        result: a result/v1 document.

    Returns:
        (status, summary); the summary has no line breaks.
    """
    tests = result.get("tests") or []
    passed = sum(1 for test in tests if test.get("passed"))
    fields = {"score": result.get("score", 0), "max_score": result.get("max-score", 0)}
    if tests and passed == len(tests):
        status, summary = "success", t("classroom50.summary_all", **fields)
    else:
        status, summary = "failure", t("classroom50.summary_some", passed=passed, total=len(tests), **fields)
    return status, " ".join(summary.split())


def release_body(result: Mapping[str, Any], title_key: str, lead: Sequence[str] = (), tail: Sequence[str] = ()) -> str:
    """The release's Markdown: the score line, notes, a table row per part, then what failed (fenced).

    Args:
        result: a result/v1 document.
        title_key: the catalogue key of the heading (`classroom50.public.title` or `classroom50.graded.title`).
        lead: paragraphs under the heading (catalogue text).
        tail: paragraphs at the end (catalogue text; student text must be fenced by the caller).

    Returns:
        The Markdown.
    """
    heading = t(title_key, score=result.get("score", 0), max_score=result.get("max-score", 0))
    lines = [f"### {heading}", ""]
    for paragraph in lead:
        lines += [paragraph, ""]
    tests = result.get("tests") or []
    if tests:
        lines += [
            f"| {t('classroom50.part')} | {t('classroom50.result')} | {t('classroom50.points')} |",
            "|---|---|---:|",
        ]
        for test in tests:
            verdict = ("✅ " + t("classroom50.passed")) if test.get("passed") else ("❌ " + t("classroom50.failed"))
            name = str(test.get("test-name", "")).replace("|", "\\|")
            lines.append(f"| {name} | {verdict} | {test.get('score', 0)}/{test.get('max-score', 0)} |")
        lines.append("")
    failed = [test for test in tests if not test.get("passed") and test.get("message")]
    if failed:
        lines += [f"<details><summary>{t('classroom50.details')}</summary>", ""]
        for test in failed:
            lines += [f"**{test['test-name']}**", "", *fenced(str(test["message"])), ""]
        lines += ["</details>", ""]
    for paragraph in tail:
        lines += [paragraph, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def fenced(text: str) -> list[str]:
    """Text as a Markdown code block whose fence is longer than any backtick run inside it, so
    student text can never close it and inject Markdown or HTML.

    Args:
        text: any text.

    Returns:
        The block's lines.
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", text.rstrip("\n"), fence]


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "\n..."
