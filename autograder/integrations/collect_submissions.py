"""Fetch each student repository at its last commit before the deadline and copy out its notebook."""

# Used by .github/workflows/instructor-batch-grade.yml. The commit is `git rev-list -1
# --before=DEADLINE HEAD`: the first commit, walking back from the default branch, whose COMMITTER
# date is not after the deadline. Committer dates are written by the student's machine, so this
# is a convenience, not proof; see docs/INTEGRATIONS.md ("Deadlines").

from __future__ import annotations

import base64
import csv
import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from pathlib import Path

from autograder.cli_table import parse_command
from autograder.config import parse_moment
from autograder.exit_codes import command_error
from autograder.integrations.upload_guard import UnsafeFile, read_beneath, write_new
from autograder.sidecar_files import locate_sidecar

GITHUB = "https://github.com"
MANIFEST = "manifest.csv"
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024
MAX_SIDECAR_BYTES = 512 * 1024 * 1024
GIT_ERROR_CHARS = 400  # git's error output kept in the manifest's detail column
GIT_DATE = "%Y-%m-%d %H:%M:%S %z"  # how a deadline is given to git
# --deadline as an aware datetime, checked before git sees it (git's own date parser accepts nearly
# anything: "yesterday", typos become "now"): ISO 8601 WITH a time zone, as grader.yml's late.deadline.
deadline_moment = parse_moment


@dataclass
class Collected:
    """What happened to one repository (a row of manifest.csv)."""

    repo: str
    status: str  # ok | no-commit-before-deadline | no-notebook | several-notebooks | refused
    # (a link, folder, special or too large file) | clone-failed | collect-failed
    commit: str = ""
    commit_date: str = ""  # committer date, ISO 8601
    notebook: str = ""  # path inside the repository
    file: str = ""  # the copy under <out>/notebooks/
    detail: str = ""
    # With --sidecar-names: the side file's path inside the repository (the column keeps the name it
    # has in the manifest's format: Part 2's side file is its checkpoint).
    checkpoint: str = ""


def read_repo_list(path: Path) -> list[str]:
    """Repositories to collect, one per line (`owner/name`, a URL or a local path); `#` comments.

    Args:
        path: the list file.

    Returns:
        The entries in file order, duplicates removed.
    """
    entries = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return list(dict.fromkeys(entry for entry in entries if entry))


def clone_without_checkout(entry: str, checkout: Path, token: str, base_url: str = GITHUB) -> None:
    """Clone a list entry's repository into `checkout` without a work tree (files are read per commit).

    Args:
        entry: `owner/name` or a git URL or path.
        checkout: the folder to clone into.
        token: a token that can read the repository ("" for none).
        base_url: where `owner/name` entries live.

    Raises:
        RuntimeError: git failed (its message).
        subprocess.TimeoutExpired: git took too long.
    """
    _git(
        ["clone", "--quiet", "--no-checkout", clone_url(entry, base_url), str(checkout)], token=token, base_url=base_url
    )


def clone_url(entry: str, base_url: str = GITHUB) -> str:
    """The URL or path git clones for a list entry (`owner/name` means a GitHub repository)."""
    if re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", entry) and not Path(entry).exists():
        return f"{base_url.rstrip('/')}/{entry}.git"
    return entry


def safe_name(entry: str) -> str:
    """A file name for a repository: `owner__name` (from any URL or path)."""
    trimmed = re.sub(r"\.git$", "", entry.rstrip("/"))
    parts = [p for p in re.split(r"[/:]", trimmed) if p][-2:]
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "__".join(parts)) or "repository"


def _git(args: Sequence[str], cwd: Path | None = None, token: str = "", base_url: str = GITHUB) -> str:
    command = ["git"]
    if token:  # as actions/checkout does: a header, so the token never appears in a URL or log
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        command += ["-c", f"http.{base_url.rstrip('/')}/.extraheader=AUTHORIZATION: basic {basic}"]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run([*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        # All of git's lines, not only the last ("and the repository exists." says nothing alone).
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise RuntimeError(" ".join(lines)[:GIT_ERROR_CHARS] if lines else "git failed")
    return done.stdout.strip()


def _pick_notebook(checkout: Path, wanted: str) -> tuple[str | None, str, str]:
    """The notebook's path in the checkout (POSIX, relative), never a link, folder or special file."""
    if wanted:
        try:
            kind = _kind(checkout, wanted)
        except OSError:
            return None, "no-notebook", f"{wanted} not found"
        return (wanted, "ok", "") if kind is None else (None, "refused", f"{wanted} is {kind}")
    names = sorted(e.name for e in os.scandir(checkout) if e.name.endswith(".ipynb") and not e.name.startswith("."))
    kinds = {name: _kind(checkout, name) for name in names}
    found = [name for name in names if kinds[name] is None]
    refused = "; ".join(f"{name} is {kind}" for name, kind in kinds.items() if kind)
    if len(found) == 1:
        return found[0], "ok", refused
    if not found:
        return None, "refused" if refused else "no-notebook", refused or "no .ipynb at the repository root"
    return None, "several-notebooks", ", ".join(found)


def _kind(checkout: Path, relative: str) -> str | None:
    """What is wrong with a path for copying (None: a regular, singly linked file); by lstat, so
    nothing is followed. Raises OSError when it does not exist."""
    status = os.lstat(checkout / relative)
    if stat.S_ISLNK(status.st_mode):
        return "a symbolic link (not followed)"
    if stat.S_ISDIR(status.st_mode):
        return "a folder"
    if not stat.S_ISREG(status.st_mode):
        return "not a regular file"
    return "a hard link" if status.st_nlink > 1 else None


def _copy_sidecar(checkout: Path, notebook: str, target: Path, names: Sequence[str]) -> str | None:
    """Copy the first of `names` found beside the notebook to `target`'s stem, so that the grading
    finds it beside the collected notebook; read without following links (a link or special file
    is not copied, and the grader reports the missing file).

    Args:
        checkout: the clone, checked out.
        notebook: the notebook's path in it.
        target: the notebook's copy.
        names: the assignment's side-file names (`{stem}`: the notebook's stem), in the order looked for.

    Returns:
        The side file's path in the repository, or None (none found).
    """
    found = locate_sidecar(checkout / notebook, list(names))
    if found is None:
        return None
    relative = found[0].relative_to(checkout).as_posix()
    write_new(target.with_suffix(found[0].suffix), read_beneath(checkout, relative, MAX_SIDECAR_BYTES))
    return relative


def _sidecar_suffix(name: str) -> str:
    """Returns: the suffix a side-file name keeps on its copy ("" when it has none), `{stem}` aside."""
    return Path(name.replace("{stem}", "x")).suffix


def parse_sidecar_names(text: str) -> tuple[str, ...]:
    """`--sidecar-names` as file names.

    Args:
        text: comma-separated names, e.g. "{stem}.pt,checkpoint.pt" ("" for none).

    Returns:
        The names, in the order given.

    Raises:
        ValueError: a name with a folder in it, or one that would not keep the notebook's stem's
            suffix (a copy is renamed `<owner>__<name><suffix>`).
    """
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    for name in names:
        if "/" in name or "\\" in name or not _sidecar_suffix(name):
            raise ValueError(f"--sidecar-names: {name!r} is not a file name with a suffix")
    return names


def collect_one(
    entry: str,
    deadline: datetime,
    out: Path,
    notebook: str = "",
    token: str = "",
    base_url: str = GITHUB,
    sidecar_names: Sequence[str] = (),
) -> Collected:
    """Clone one repository, check out its last commit before the deadline, copy its notebook.

    Args:
        entry: `owner/name`, a URL or a local path.
        deadline: from `deadline_moment`.
        out: the output folder; the notebook goes to `<out>/notebooks/<owner>__<name>.ipynb`.
        notebook: the notebook's path in the repository ("" = the only .ipynb at its root).
        token: a token that can read the repository ("" for public or local ones).
        base_url: where `owner/name` entries live.
        sidecar_names: also copy the first of these files found beside the notebook (the
            assignment's side files, e.g. Part 2's checkpoint), as `<owner>__<name><suffix>`.

    Returns:
        The manifest row.
    """
    name = safe_name(entry)
    with tempfile.TemporaryDirectory(prefix="collect-") as tmp:
        checkout = Path(tmp) / name
        try:
            clone_without_checkout(entry, checkout, token, base_url)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            return Collected(entry, "clone-failed", detail=str(error))
        try:
            commit = _git(["rev-list", "-1", f"--before={deadline:{GIT_DATE}}", "HEAD"], cwd=checkout)
        except RuntimeError as error:  # e.g. an empty repository
            return Collected(entry, "no-commit-before-deadline", detail=str(error))
        if not commit:
            return Collected(entry, "no-commit-before-deadline")
        return copy_at_commit(checkout, entry, commit, out, notebook, sidecar_names)


def copy_at_commit(
    checkout: Path, entry: str, commit: str, out: Path, notebook: str = "", sidecar_names: Sequence[str] = ()
) -> Collected:
    """Check out `commit` in a clone and copy its notebook to `<out>/notebooks/<owner>__<name>.ipynb`.

    Args:
        checkout: the clone (made with --no-checkout).
        entry: the repository's list entry (names the copy).
        commit: the commit to take.
        out: the output folder.
        notebook: the notebook's path in the repository ("" = the only .ipynb at its root).
        sidecar_names: also copy the first of these files found beside the notebook.

    Returns:
        The manifest row (`ok`, or why nothing was copied).
    """
    name = safe_name(entry)
    _git(["checkout", "--quiet", "--force", commit], cwd=checkout)
    date = _git(["show", "-s", "--format=%cI", commit], cwd=checkout)
    picked, status, detail = _pick_notebook(checkout, notebook)
    if picked is None:
        return Collected(entry, status, commit, date, detail=detail)
    target = out / "notebooks" / f"{name}{Path(picked).suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = read_beneath(checkout, picked, MAX_NOTEBOOK_BYTES)
    except UnsafeFile as error:
        return Collected(entry, "refused", commit, date, picked, detail=str(error))
    for old in [target, *(target.with_suffix(_sidecar_suffix(n)) for n in sidecar_names)]:
        if os.path.lexists(old):  # an earlier collection's copies
            os.unlink(old)
    write_new(target, data)
    row = Collected(entry, "ok", commit, date, picked, target.relative_to(out).as_posix(), detail=detail)
    if sidecar_names:
        try:
            row.checkpoint = _copy_sidecar(checkout, picked, target, sidecar_names) or ""
        except (UnsafeFile, OSError) as error:  # the manifest's wording
            row.detail = "; ".join(filter(None, [row.detail, f"checkpoint not copied: {error}"]))
    return row


def write_manifest(rows: Sequence[Collected], path: Path, row_type: type[Collected] = Collected) -> None:
    """Write manifest.csv: one row per repository, whatever happened to it.

    Args:
        rows: the rows, in list order.
        path: the file to write.
        row_type: the rows' class, whose fields are the columns (a subclass adds columns after
            this collector's, so that merge_results' --manifest reads either).
    """
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, [f.name for f in fields(row_type)], lineterminator="\n")
        writer.writeheader()
        writer.writerows(asdict(row) for row in rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Collect every listed repository; exit 0 when the manifest was written.

    Args:
        argv: the arguments (None: sys.argv[1:]).

    Returns:
        0, or 2 for a bad deadline or list.
    """
    args = parse_command("collect_submissions", argv, prog="python -m autograder.integrations.collect_submissions")
    try:
        deadline = deadline_moment(args.deadline)
        entries = read_repo_list(args.repos)
        sidecar_names = parse_sidecar_names(args.sidecar_names)
    except (ValueError, OSError) as error:
        return command_error(error)
    token = os.environ.get("GH_TOKEN", "")
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for entry in entries:
        try:  # one bad repository never stops the class's batch
            row = collect_one(
                entry, deadline, args.out, args.notebook, token, args.base_url, sidecar_names=sidecar_names
            )
        except Exception as error:  # noqa: BLE001 (reported in the manifest, the batch goes on)
            row = Collected(entry, "collect-failed", detail=f"{type(error).__name__}: {error}")
        print(f"{row.status:26} {row.commit[:12]:12} {entry}")
        rows.append(row)
    write_manifest(rows, args.out / MANIFEST)
    print(
        f"{sum(r.status == 'ok' for r in rows)} of {len(rows)} repositories collected "
        f"(deadline {deadline:{GIT_DATE}}); see {args.out / MANIFEST}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
