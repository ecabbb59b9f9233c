"""The shell commands of README.md and docs/*.md: extraction, a scratch checkout, parse-only checks."""

# Convention (stated in README.md's "Commands in these docs"): every fenced ```bash (or sh/shell)
# block holds commands a reader types at the repository root, one per line (a trailing backslash
# continues a line; `#` starts a comment). The test suite checks every one of them against the real
# program: `make` targets with `make -n`, Python modules and scripts with their own argparse parser,
# `otter` with Otter's click CLI (and, for `otter grade`, Otter's own argument checks up to the point
# where it would start Docker). The slow suite also RUNS every command, in order, in a scratch copy
# of the repository, unless its block is preceded by `<!-- not-run: REASON -->` (Docker, a GPU, or
# minutes of training). Placeholders in commands exist in that copy: hw.ipynb,
# path/to/submission.ipynb and submissions/ hold the correct example notebook.

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARSE_ONLY = Path(__file__).resolve().with_name("parse_only.py")
SHELL_LANGUAGES = {"bash", "sh", "shell"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
NOT_RUN = re.compile(r"<!--\s*not-run:\s*(.+?)\s*-->", re.DOTALL)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
EXAMPLE = ROOT / "examples" / "correct_original_format.ipynb"
PLACEHOLDERS = ("hw.ipynb", "path/to/submission.ipynb", "submissions/example.ipynb")
# Files that an earlier documented command makes (e.g. `make template`): empty stand-ins exist
# for the parse-only check, which runs nothing that would make them.
MADE_BY_EARLIER_COMMANDS = ("dist/autograder.zip",)
EXIT_PARSED, EXIT_NEVER_PARSED = 0, 3
ACTIVATE = ".venv/bin/activate"
# Programs `make setup` installs into .venv only: bare, a fresh shell finds the system's or none.
VENV_PROGRAMS = ("python", "python3", "pip", "pip3", "otter", "pytest", "ruff", "mypy")


@dataclass(frozen=True)
class Command:
    """One command line of a documentation file."""

    doc: str  # path relative to the repository root
    line: int  # 1-based line of the command in the file
    text: str  # the command, continuation lines joined
    not_run: str  # the block's not-run reason, "" when it runs in the slow suite

    @property
    def id(self) -> str:
        """`README.md:28` style name."""
        return f"{self.doc}:{self.line}"

    def words(self) -> tuple[dict[str, str], list[str]]:
        """The leading VAR=value assignments and the argument words (shell quoting and comments removed)."""
        words = shlex.split(self.text, comments=True)
        env = {}
        while words and ASSIGNMENT.match(words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        return env, words


def documentation_files(root: Path = ROOT) -> list[Path]:
    """README.md and every docs/*.md, sorted."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def not_run_reason(before: str) -> str:
    """The reason of a `<!-- not-run: REASON -->` comment that ends `before` (blank lines allowed), else ""."""
    before = before.rstrip()
    if not before.endswith("-->"):
        return ""
    marker = NOT_RUN.fullmatch(before[before.rfind("<!--") :])
    return " ".join(marker.group(1).split()) if marker else ""


def commands_in(text: str, doc: str) -> list[Command]:
    """The commands of the shell blocks of one Markdown text.

    Args:
        text: the Markdown.
        doc: its name, for `Command.doc`.

    Returns:
        The commands in file order.
    """
    found = []
    for block in FENCE.finditer(text):
        if block.group(1).lower() not in SHELL_LANGUAGES:
            continue
        reason = not_run_reason(text[: block.start()])
        first_line = text[: block.start(2)].count("\n") + 1
        pending, start = "", 0
        for offset, line in enumerate(block.group(2).splitlines()):
            if not pending:
                start = offset
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            joined, pending = (pending + line).strip(), ""
            if joined and not joined.startswith("#"):
                found.append(Command(doc, first_line + start, joined, reason))
    return found


def documented_commands(root: Path = ROOT) -> list[Command]:
    """Every command of README.md and docs/*.md."""
    return [
        command
        for path in documentation_files(root)
        for command in commands_in(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    ]


def _tracked_files(root: Path) -> list[Path]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if done.returncode == 0:
        return [root / name for name in done.stdout.decode().split("\0") if name]
    skip = {".git", ".venv", "__pycache__", "runs", "dist", "grading-output"}
    return [p for p in root.rglob("*") if p.is_file() and not skip & set(p.relative_to(root).parts)]


def make_checkout(destination: Path, root: Path = ROOT) -> Path:
    """A scratch copy of the repository where documented commands can run as written.

    The tracked files are copied; `.venv` is this interpreter's environment, linked entry by entry,
    with its own fresh `.installed` stamp so that `make` never reinstalls into the real one; the
    placeholders hold the correct example notebook.

    Args:
        destination: an empty or missing folder.
        root: the repository.

    Returns:
        The checkout folder.
    """
    for path in _tracked_files(root):
        if path.is_file():
            target = destination / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
    venv = destination / ".venv"
    venv.mkdir(exist_ok=True)
    prefix = Path(sys.prefix)
    if prefix != Path(sys.base_prefix):
        for entry in prefix.iterdir():
            if entry.name != ".installed":
                (venv / entry.name).symlink_to(entry)
    else:  # not a virtual environment: a bin/ with this interpreter is enough
        (venv / "bin").mkdir()
        (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / ".installed").touch()
    for name in PLACEHOLDERS:
        (destination / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(EXAMPLE, destination / name)
    return destination


def fresh_shell_path(path: str) -> str:
    """PATH as a fresh shell has it: without any virtual environment's bin folder (this test's own
    interpreter may run from an activated one)."""
    venvs = {Path(sys.prefix) / "bin", Path(os.environ.get("VIRTUAL_ENV") or sys.prefix) / "bin"}
    return os.pathsep.join(
        entry
        for entry in path.split(os.pathsep)
        if entry and Path(entry) not in venvs and ".venv" not in Path(entry).parts
    )


def command_env(checkout: Path, activated: bool = False) -> dict[str, str]:
    """The environment commands run with: a fresh shell's, the venv NOT on PATH (a reader who has
    only run `make setup`), unless the doc activated it (`source .venv/bin/activate`).

    Args:
        checkout: the folder from `make_checkout`.
        activated: an earlier line of the doc activated the checkout's .venv.

    Returns:
        The environment.
    """
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)
    env["PATH"] = fresh_shell_path(env.get("PATH", ""))
    if activated:
        env["PATH"] = f"{checkout / '.venv' / 'bin'}{os.pathsep}{env['PATH']}"
        env["VIRTUAL_ENV"] = str(checkout / ".venv")
    env["PWD"] = str(checkout)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    env.pop("PYTHONPATH", None)
    return env


def activates(command: Command) -> bool:
    """Whether the command is `source .venv/bin/activate` (or `. .venv/bin/activate`)."""
    _, words = command.words()
    return len(words) == 2 and words[0] in ("source", ".") and words[1] in (ACTIVATE, f"./{ACTIVATE}")


def activated_commands(commands: list[Command]) -> set[str]:
    """The ids of the commands that follow an activation line of their own doc."""
    active_docs: set[str] = set()
    after = set()
    for command in commands:
        if command.doc in active_docs:
            after.add(command.id)
        if activates(command):
            active_docs.add(command.doc)
    return after


def _env_for(command: Command, checkout: Path, activated: bool = False) -> dict[str, str]:
    env_assignments, _ = command.words()
    env = command_env(checkout, activated)
    env.update({name: value.replace("$PWD", str(checkout)) for name, value in env_assignments.items()})
    return env


def parse_checks(commands: list[Command], checkout: Path, timeout_s: float = 600) -> dict[str, tuple[str, str]]:
    """Check commands against their real programs without doing their work.

    `make` runs as `make -n`; `mkdir` runs (it only makes a folder in the checkout); `python` and
    `otter` commands go, all in one process, through parse_only.py; any other program must be on
    PATH, unless its block is marked not-run (then it is only listed).

    Args:
        commands: documented commands.
        checkout: a folder from `make_checkout`.
        timeout_s: limit for each subprocess.

    Returns:
        Command id -> (how it was checked, the problem or "" when it passed).
    """
    for made in MADE_BY_EARLIER_COMMANDS:
        (checkout / made).parent.mkdir(parents=True, exist_ok=True)
        (checkout / made).touch(exist_ok=True)
    results: dict[str, tuple[str, str]] = {}
    batch: list[tuple[Command, list[str]]] = []
    activated = activated_commands(commands)
    for command in commands:
        _, words = command.words()
        program = words[0] if words else ""
        if activates(command):
            results[command.id] = ("activation", "")
        elif program in VENV_PROGRAMS and command.id not in activated:
            results[command.id] = (
                "fresh shell",
                f"a fresh shell has no {program!r} of the project's environment: write .venv/bin/{program}, "
                f"or put `source {ACTIVATE}` on a line of its own before it",
            )
        elif program == "make":
            done = subprocess.run(
                ["make", "-n", "-o", ".venv/.installed", *words[1:]],
                cwd=checkout,
                env=_env_for(command, checkout, command.id in activated),
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
            results[command.id] = (
                "make -n",
                "" if done.returncode == 0 else f"`make -n` failed: {done.stderr.strip()}",
            )
        elif program == "mkdir":
            done = subprocess.run(words, cwd=checkout, capture_output=True, text=True, timeout=timeout_s)
            results[command.id] = ("mkdir", "" if done.returncode == 0 else done.stderr.strip())
        elif Path(program).name.startswith("python") or Path(program).name == "otter":
            batch.append((command, ["otter" if Path(program).name == "otter" else "python", *words[1:]]))
        elif (checkout / program).is_file() or shutil.which(program, path=command_env(checkout)["PATH"]):
            results[command.id] = ("on PATH", "")
        else:
            results[command.id] = ("listed", "" if command.not_run else f"no checker for {program!r} and not on PATH")
    if batch:
        done = subprocess.run(
            [str(checkout / ".venv" / "bin" / "python"), str(PARSE_ONLY)],
            cwd=checkout,
            env=command_env(checkout),
            input=json.dumps([words for _, words in batch]),
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        assert done.returncode == 0, f"parse_only.py failed: {done.stderr[-3000:]}"
        for (command, words), (code, message) in zip(batch, json.loads(done.stdout), strict=True):
            how = "otter click" if words[0] == "otter" else "argparse"
            if code == EXIT_PARSED:
                problem = ""
            elif code == EXIT_NEVER_PARSED:
                problem = (
                    "finished without parsing its arguments (no argparse/click parser to check); "
                    "precede its block with <!-- not-run: REASON --> and check it another way"
                )
            else:
                problem = f"rejected (exit {code}): {message.strip()[-2000:]}"
            results[command.id] = (how, problem)
    return results
