"""Shared pieces of the Classroom50 tests: local git repositories and the runner's way of running autograder.py."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures" / "classroom50"
MTKIT = ROOT / "student_template" / "mtkit"
CLASSROOM, SLUG = "tf2026", "transformer-mt"


def git(cwd: Path, *args: str, when: str = "") -> str:
    """Run git in `cwd` (with a fixed identity, and author/committer date `when` when given)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "Student", "GIT_AUTHOR_EMAIL": "s@example.org"}
    env.update({"GIT_COMMITTER_NAME": "Student", "GIT_COMMITTER_EMAIL": "s@example.org"})
    if when:
        env.update({"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when})
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_files(repo: Path, files: dict[str, Path | None], when: str, message: str = "work") -> str:
    """Commit files into a work tree (a None source deletes the path); returns the commit id."""
    for relative, source in files.items():
        target = repo / relative
        if source is None:
            git(repo, "rm", "-q", "--ignore-unmatch", relative)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, dirs_exist_ok=True)
        else:
            shutil.copyfile(source, target)
        git(repo, "add", relative)
    git(repo, "commit", "-q", "--allow-empty", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


def new_repo(path: Path) -> Path:
    """An empty work tree on branch main."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    return path


def student_checkout(root: Path, notebook: Path | None, name: str = "hw.ipynb") -> Path:
    """A student's checkout as the runner has it: the notebook (if any) and mtkit, one commit."""
    repo = new_repo(root)
    files: dict[str, Path | None] = {"mtkit": MTKIT}
    if notebook is not None:
        files[name] = notebook
    commit_files(repo, files, "2026-12-01T12:00:00+09:00")
    return repo


def runner_env(output: Path, **extra: str) -> dict[str, str]:
    """The environment the Classroom50 runner gives autograder.py (nothing of this project on PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_OUTPUT")}
    env.update(
        {
            "CLASSROOM": CLASSROOM,
            "ASSIGNMENT": SLUG,
            "ASSIGNMENT_TYPE": "individual",
            "USERNAME": "alice",
            "OWNER": "alice",
            "SUBMISSION_TAG": "submit/20261201T030000Z-abc1234",
            "COMMIT_URL": "https://github.com/course/tf2026-transformer-mt-alice/commit/abc1234",
            "RELEASE_URL": "https://github.com/course/tf2026-transformer-mt-alice/releases/tag/submit%2F1",
            "REVIEW_URL": "https://github.com/course/tf2026-transformer-mt-alice/compare/a...b",
            "GITHUB_REPOSITORY": "course/tf2026-transformer-mt-alice",
            "GITHUB_SHA": "abc1234",
            "GITHUB_OUTPUT": str(output),
            "OMP_NUM_THREADS": "1",
        }
    )
    env.update(extra)
    return env


def python_reachable(argv: list[str]) -> list[str]:
    """argv, run where the fresh uid autograder.py runs the notebook as can reach this Python.

    On GitHub's runners Python is under /opt/hostedtoolcache, open to every user. A pyenv Python
    under /root (mode 700) is not: there the command (still root) gets a private mount namespace in
    which /root is an empty tmpfs holding only the Python's folder, bind-mounted back (as
    tests/security/identities.py does for its throwaway users); the host's /root is not changed.
    """
    real = Path(os.path.realpath(sys.base_prefix))
    blocked = [p for p in reversed(real.parents) if not os.stat(p).st_mode & stat.S_IXOTH]
    if not blocked or os.geteuid() != 0:
        return argv
    parent, child = blocked[0], blocked[0] / real.relative_to(blocked[0]).parts[0]
    script = (
        'set -e; mount --bind "$1" /mnt; mount -t tmpfs -o mode=755,size=1m tmpfs "$2"; '
        'mkdir -p "$1"; mount --move /mnt "$1"; shift 2; exec "$@"'
    )
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        str(child),
        str(parent),
        *argv,
    ]


def can_switch_uid() -> bool:
    """Whether autograder.py can run the notebook as a fresh uid here (root, or sudo without a password)."""
    if os.geteuid() == 0:
        return True
    if shutil.which("sudo") is None:
        return False
    return subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode == 0


def run_autograder(
    bundle: Path, checkout: Path, output: Path, timeout: float = 600, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run the bundle's autograder.py as Classroom50's runner.py does: `python autograder.py` in the checkout."""
    output.touch()
    return subprocess.run(
        python_reachable([sys.executable, str(bundle / "autograder.py")]),
        cwd=checkout,
        env=runner_env(output, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


DEADLINE = "2026-12-01T23:59:59+09:00"


def make_class(root: Path) -> Path:
    """Student repositories (bare, as a Git host holds them) with submit/* tags, and the roster file.

    alice: two submissions before the deadline (the second an annotated tag) and a late one.
    bob: only a late submission. carol: her last submission's commit deleted the notebook.
    dave: listed, but his repository was deleted. erin: commits, never submitted.

    Returns:
        The roster file (one repository path per line).
    """
    correct, buggy = EXAMPLES / "correct_original_format.ipynb", EXAMPLES / "buggy_original_format.ipynb"
    hosted = root / "host" / "course"
    hosted.mkdir(parents=True)

    def publish(work: Path, name: str) -> Path:
        bare = hosted / f"{CLASSROOM}-{SLUG}-{name}.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
        return bare

    alice = new_repo(root / "work" / "alice")
    commit_files(alice, {"hw.ipynb": buggy, "mtkit": MTKIT}, "2026-12-01T10:00:00+09:00")
    git(alice, "tag", "submit/20261201T010000Z-a1")
    commit_files(alice, {"hw.ipynb": correct}, "2026-12-01T20:00:00+09:00")
    git(alice, "tag", "-a", "-m", "submitted", "submit/20261201T110000Z-a2", when="2026-12-01T20:00:00+09:00")
    commit_files(alice, {"hw.ipynb": buggy}, "2026-12-02T09:00:00+09:00")
    git(alice, "tag", "submit/20261202T000000Z-a3")

    bob = new_repo(root / "work" / "bob")
    commit_files(bob, {"hw.ipynb": correct}, "2026-12-03T09:00:00+09:00")
    git(bob, "tag", "submit/20261203T000000Z-b1")

    carol = new_repo(root / "work" / "carol")
    commit_files(carol, {"hw.ipynb": buggy}, "2026-12-01T10:00:00+09:00")
    git(carol, "tag", "submit/20261201T010000Z-c1")
    commit_files(carol, {"hw.ipynb": None}, "2026-12-01T11:00:00+09:00", "remove my notebook")
    git(carol, "tag", "submit/20261201T020000Z-c2")

    erin = new_repo(root / "work" / "erin")
    commit_files(erin, {"hw.ipynb": correct}, "2026-12-01T10:00:00+09:00")

    entries = [publish(alice, "alice"), publish(bob, "bob"), publish(carol, "carol")]
    entries.append(hosted / f"{CLASSROOM}-{SLUG}-dave.git")  # deleted: listed, not there
    entries.append(publish(erin, "erin"))
    roster = root / "repos.txt"
    roster.write_text("# roster\n" + "".join(f"{path}\n" for path in entries), encoding="utf-8")
    return roster
