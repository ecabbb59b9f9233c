"""Collect each student's latest Classroom50 submission (a `submit/*` tag) for the hidden grading."""

# Classroom50 marks a submission with a `submit/<UTC-time>-<short-sha>` tag in the student's
# repository `<classroom>-<slug>-<username>`. The collector clones each repository, resolves every
# submit/* tag to its commit and that commit's committer date (Classroom50's own submission
# instant, `datetime` in result.json), takes the latest submission on or before the deadline (or,
# when there is none, the latest late one, flagged), and copies its notebook with the same
# safeguards as the plain collector (collect_submissions.copy_at_commit: no links, no special
# files, size limit). Later tags are listed with their times. Nothing the student's runner
# wrote (its result.json or release) is read. Committer dates are written by the student's
# machine: the late flag is advisory, as in Classroom50 (docs/INTEGRATIONS.md, "Deadlines").

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from autograder.integrations.classroom50.result_v1 import utc_stamp
from autograder.integrations.collect_submissions import (
    GITHUB,
    MANIFEST,
    Collected,
    _git,
    clone_without_checkout,
    copy_at_commit,
    safe_name,
    write_manifest,
)

TAG_PREFIX = "submit/"


@dataclass
class TagCollected(Collected):
    """A manifest row: the plain collector's columns plus the submission's tag and lateness."""

    owner: str = ""  # the student's login (from <classroom>-<slug>-<username>, else the repository's owner)
    tag: str = ""  # the submit/* tag graded
    submitted_at: str = ""  # its commit's committer date, UTC (…Z)
    late: str = ""  # "yes" when the graded submission is after the deadline, "no" otherwise
    late_tags: str = ""  # later submissions: "tag@time" separated by "; "
    deadline: str = ""  # the deadline used, UTC


@dataclass(frozen=True)
class Submission:
    """One submit/* tag of a repository."""

    tag: str
    commit: str
    when: datetime  # committer date of the commit (aware)


def owner_of(entry: str, classroom: str = "", slug: str = "") -> str:
    """The student's login for a repository entry: `<username>` from `<classroom>-<slug>-<username>`
    (Classroom50's naming), else the repository's owner.

    Args:
        entry: `owner/name`, a URL or a path.
        classroom: the classroom's short name ("" when unknown).
        slug: the assignment's slug ("" when unknown).

    Returns:
        The login.
    """
    owner, _, repo = safe_name(entry).partition("__")
    prefix = f"{classroom}-{slug}-".lower()
    if classroom and slug and repo.lower().startswith(prefix) and len(repo) > len(prefix):
        return repo[len(prefix) :]
    return owner or repo


def submissions(checkout: Path) -> tuple[list[Submission], list[str]]:
    """Every submit/* tag of a clone that resolves to a commit, oldest first.

    Args:
        checkout: the clone.

    Returns:
        (the submissions, problems with tags that do not name a commit).
    """
    names = _git(["for-each-ref", "--format=%(refname:strip=2)", f"refs/tags/{TAG_PREFIX}"], cwd=checkout)
    found, problems = [], []
    for tag in filter(None, names.splitlines()):
        try:
            commit = _git(["rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}"], cwd=checkout)
            when = datetime.fromisoformat(_git(["show", "-s", "--format=%cI", commit], cwd=checkout))
        except (RuntimeError, ValueError):
            problems.append(f"{tag} does not name a commit")
            continue
        found.append(Submission(tag, commit, when))
    return sorted(found, key=lambda s: (s.when, s.tag)), problems


def collect_repository(
    entry: str,
    deadline: datetime,
    out: Path,
    notebook: str = "",
    token: str = "",
    base_url: str = GITHUB,
    classroom: str = "",
    slug: str = "",
) -> TagCollected:
    """Clone one repository and copy the notebook of its latest submission before the deadline.

    Args:
        entry: `owner/name`, a URL or a local path.
        deadline: the deadline (aware).
        out: the output folder; the notebook goes to `<out>/notebooks/<owner>__<name>.ipynb`.
        notebook: the notebook's path in the repository ("" = the only .ipynb at its root).
        token: a token that can read the repository ("" for public or local ones).
        base_url: where `owner/name` entries live.
        classroom: the classroom's short name (for the owner's login).
        slug: the assignment's slug (for the owner's login).

    Returns:
        The manifest row: `ok`, `no-submission`, `clone-failed`, or the copy's problem.
    """
    name = safe_name(entry)
    for stale in (out / "notebooks").glob(f"{name}.*"):  # an earlier collection's copy is not this one's
        if stale.stem == name:
            os.unlink(stale)
    base = TagCollected(entry, "", owner=owner_of(entry, classroom, slug), deadline=utc_stamp(deadline))
    with tempfile.TemporaryDirectory(prefix="collect50-") as tmp:
        checkout = Path(tmp) / name
        try:
            clone_without_checkout(entry, checkout, token, base_url)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            return replace(base, status="clone-failed", detail=str(error))
        found, problems = submissions(checkout)
        if not found:
            return replace(base, status="no-submission", detail="; ".join(problems) or "no submit/* tag")
        on_time = [s for s in found if s.when <= deadline]
        chosen = on_time[-1] if on_time else found[-1]  # oldest first: the latest, on time if any
        later = [s for s in found if s.when > deadline and s is not chosen]
        row = copy_at_commit(checkout, entry, chosen.commit, out, notebook)
        row.detail = "; ".join(filter(None, [row.detail, *problems]))
        return replace(
            base,
            **asdict(row),
            tag=chosen.tag,
            submitted_at=utc_stamp(chosen.when),
            late="yes" if chosen.when > deadline else "no",
            late_tags="; ".join(f"{s.tag}@{utc_stamp(s.when)}" for s in later),
        )


def collect_all(
    entries: list[str],
    deadline: datetime,
    out: Path,
    notebook: str = "",
    base_url: str = GITHUB,
    classroom: str = "",
    slug: str = "",
) -> list[TagCollected]:
    """Collect every repository; one failing repository is a `collect-failed` row, never a stop.

    Args:
        entries: the repositories.
        deadline: the deadline (aware).
        out: the output folder (manifest.csv and notebooks/).
        notebook: the notebook's path in each repository.
        base_url: where `owner/name` entries live.
        classroom: the classroom's short name.
        slug: the assignment's slug.

    Returns:
        The rows, in list order (also written to `<out>/manifest.csv`).
    """
    token = os.environ.get("GH_TOKEN", "")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for entry in entries:
        try:
            row = collect_repository(entry, deadline, out, notebook, token, base_url, classroom, slug)
        except Exception as error:  # noqa: BLE001 (reported in the manifest, the batch goes on)
            row = TagCollected(entry, "collect-failed", detail=f"{type(error).__name__}: {error}")
        late = " late" if row.late == "yes" else ""
        print(f"{row.status:18} {row.tag or '-':40} {entry}{late}")
        rows.append(row)
    write_manifest(rows, out / MANIFEST, TagCollected)
    return rows
