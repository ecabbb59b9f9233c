"""Turn the hidden grading of collected Classroom50 submissions into publishable results and a gradebook."""

# Input: the report folder `python -m autograder grade` wrote for the collected notebooks (every
# `<stem>.json` is re-validated against grader.yml by merge_results before it counts) and the
# collector's manifest.csv (which tag was graded, when, late or not). Output, per repository with a
# submission: `<stem>/result.json` (classroom50/result/v1, one test per graded part, hidden-check
# points) and `<stem>/release-body.md`, in the feedback language; and `gradebook.csv` for the
# class. Nothing the student's runner produced is read: the scores come only from this grading.

from __future__ import annotations

import csv
import json
import urllib.parse
from dataclasses import dataclass, field, fields
from pathlib import Path

from autograder.config import GraderConfig
from autograder.i18n import part_title, t
from autograder.integrations.classroom50.result_v1 import (
    RELEASE_BODY_FILENAME,
    RESULT_FILENAME,
    Identity,
    PartOutcome,
    make_result,
    release_body,
    whole_points,
)
from autograder.integrations.classroom50.schema import result_problems
from autograder.integrations.collect_submissions import GITHUB, safe_name
from autograder.integrations.merge_results import MergeLog, merge_folders
from autograder.reports.markdown import status_label
from autograder.reports.md_safe import csv_cell, md_text
from autograder.results import STATUS_GRADED, SubmissionResult

GRADEBOOK = "gradebook.csv"


@dataclass
class Published:
    """One gradebook row."""

    repo: str
    owner: str
    tag: str
    submitted_at: str
    late: str
    late_tags: str
    collection: str  # the collector's status
    grading: str  # the engine's status, or "missing"
    parts: dict[str, str] = field(default_factory=dict)  # part -> points as published ("" when not graded)
    score: int = 0
    max_score: int = 0
    result_file: str = ""  # relative to the output folder ("" when nothing was published)


def part_outcomes(result: SubmissionResult) -> list[PartOutcome]:
    """One outcome per graded part (skipped parts, e.g. training not run, are left out).

    Args:
        result: a validated engine result.

    Returns:
        The outcomes, titled in the current language, with the failed checks' messages.
    """
    outcomes = []
    for part in result.parts:
        if part.skipped:
            continue
        failed = [check for check in part.checks if not check.passed and not check.skipped]
        message = "\n\n".join(f"{check.check_id}: {check.message}".rstrip(": ") for check in failed)
        outcomes.append(
            PartOutcome(
                part.part,
                part_title(part.part, part.title),
                part.points,
                part.max_points,
                not failed and part.points >= part.max_points,
                message,
            )
        )
    return outcomes


def links(repo: str, commit: str, tag: str, base_url: str = GITHUB) -> tuple[str, str]:
    """The commit and release links of a submission (for a local path: the commit id and the tag).

    Args:
        repo: the manifest's repository entry.
        commit: the graded commit.
        tag: the submit/* tag.
        base_url: the Git host.

    Returns:
        (commit link, release link).
    """
    owner, _, name = safe_name(repo).partition("__")
    if "/" in repo and not Path(repo).exists() and name:
        web = f"{base_url.rstrip('/')}/{owner}/{name}"
        return f"{web}/commit/{commit}", f"{web}/releases/tag/{urllib.parse.quote(tag, safe='')}"
    return commit or "unknown", tag


def publish(
    grading_dir: Path,
    manifest: Path,
    out: Path,
    config: GraderConfig,
    classroom: str,
    slug: str,
    base_url: str = GITHUB,
) -> list[Published]:
    """Write each submission's result.json and release-body.md, and gradebook.csv.

    Args:
        grading_dir: the report folder of `python -m autograder grade` over the collected notebooks.
        manifest: the Classroom50 collector's manifest.csv.
        out: the output folder.
        config: the configuration the grading used (its parts validate the results).
        classroom: the classroom's short name (result.json `classroom`).
        slug: the assignment's slug (result.json `assignment`).
        base_url: the Git host of `owner/name` entries.

    Returns:
        The gradebook rows, in manifest order.

    Raises:
        ValueError: a document this function built does not satisfy result/v1 (a bug).
    """
    log = MergeLog()
    stems, results = merge_folders([grading_dir], config.parts, log) if grading_dir.is_dir() else ([], [])
    by_stem = dict(zip(stems, results, strict=True))
    out.mkdir(parents=True, exist_ok=True)
    with manifest.open(encoding="utf-8", newline="") as handle:
        rows = [_publish_one(row, by_stem, out, config, classroom, slug, base_url) for row in csv.DictReader(handle)]
    _write_gradebook(rows, list(config.parts), out / GRADEBOOK)
    for source, outcome, detail in log.rows:
        if outcome != "merged":
            print(f"{outcome}: {source}: {detail}")
    return rows


def _publish_one(
    entry: dict[str, str],
    by_stem: dict[str, SubmissionResult],
    out: Path,
    config: GraderConfig,
    classroom: str,
    slug: str,
    base_url: str,
) -> Published:
    repo = entry.get("repo", "")
    stem = Path(entry.get("file") or "").stem or safe_name(repo)
    result = by_stem.get(stem) if entry.get("status") == "ok" else None
    columns = ("owner", "tag", "submitted_at", "late", "late_tags", "status")  # the manifest's
    owner, tag, submitted_at, late, late_tags, collection = (entry.get(column, "") for column in columns)
    grading = result.status if result is not None else "missing"
    row = Published(repo, owner, tag, submitted_at, late, late_tags, collection, grading)
    if result is not None:
        row.parts = {p.part: f"{p.points:g}" for p in result.parts if not p.skipped}
    if not row.tag.startswith("submit/"):
        # No submission: a gradebook row only, out of the same possible points as a graded row, so
        # that an LMS import counts the student's 0 against the assignment's whole maximum.
        row.max_score = sum(whole_points(0.0, outcome.possible)[1] for outcome in _zero_outcomes(config, ""))
        return row
    why = f"{row.collection} {entry.get('detail', '')}".strip()  # the detail may name the student's files
    if result is not None:
        outcomes = part_outcomes(result)
    else:  # a tag whose notebook could not be taken: every part 0, with the collector's reason
        outcomes = _zero_outcomes(config, t("classroom50.summary_none", reason=why))
    commit_link, release_link = links(repo, entry.get("commit", ""), row.tag, base_url)
    identity = Identity(
        classroom, slug, row.owner or stem, row.tag, commit_link, release_link, commit_link, row.submitted_at
    )
    document = make_result(identity, outcomes)
    problems = result_problems(document)
    if problems:
        raise ValueError(f"{repo}: built an invalid result.json: {'; '.join(problems)}")
    lead = [t("classroom50.graded.hidden")]
    if row.late == "yes":
        lead.append(t("classroom50.graded.late", when=row.submitted_at, deadline=entry.get("deadline", "")))
    if row.grading != STATUS_GRADED:
        lead.append(t("classroom50.graded.status", status=status_label(row.grading)))
    if result is None:
        lead.append(t("classroom50.summary_none", reason=md_text(why)))
    tail = [t("classroom50.rounding")]
    folder = out / stem
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULT_FILENAME).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    body = release_body(document, "classroom50.graded.title", lead, tail)
    (folder / RELEASE_BODY_FILENAME).write_text(body, encoding="utf-8")
    row.score, row.max_score = document["score"], document["max-score"]
    row.result_file = f"{stem}/{RESULT_FILENAME}"
    return row


def _zero_outcomes(config: GraderConfig, reason: str) -> list[PartOutcome]:
    """Every enabled part at 0 of its points, each with the same reason."""
    disabled = config.disabled_parts()
    return [
        PartOutcome(name, part_title(name, part.title), 0.0, float(part.points), False, reason)
        for name, part in config.parts.items()
        if name not in disabled
    ]


def _write_gradebook(rows: list[Published], parts: list[str], path: Path) -> None:
    """gradebook.csv: a row per repository; part columns hold the exact points ("" = not graded)."""
    names = [f.name for f in fields(Published) if f.name != "parts"]
    at = names.index("score")  # the part columns go between the grading status and the totals
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*names[:at], *parts, *names[at:]])
        for row in rows:
            cells = [str(getattr(row, name)) for name in names]
            cells[at:at] = [row.parts.get(p, "") for p in parts]
            writer.writerow([csv_cell(c) for c in cells])
