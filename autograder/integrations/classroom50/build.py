"""Write the Classroom50 autograder folder of an assignment (public checks only)."""

# The folder goes to the teacher's Classroom50 config repository as
# `<classroom>/autograders/<slug>/`; the runner downloads it to the STUDENT's runner and executes
# its autograder.py in the student's checkout. Whatever is in it, a student can read (a workflow
# step that prints the bundle directory is enough), so it carries an explicit allow-list and
# nothing else: the public-check runner (the same modules the student template vendors,
# assignment.yml `ships.public_checks`), the assignment's PUBLIC Otter tests, its message
# catalogue and requirements.lock. Never assignments/<name>/checks/ (the hidden checks), never
# assignments/<name>/reference/ (the solution).

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.assignment import load_assignment
from autograder.assignment_folder import ASSIGNMENTS_DIR, PROJECT_ROOT, available_assignments, read_manifest
from autograder.i18n import LANGUAGES, part_title, use_language
from autograder.integrations.public_checks import GLOBALS_FILE, LIBRARY_CALLS_FILE, otter_test_files
from autograder.integrations.student_bundle import GENERATED

# Shipped besides the assignment's `ships.public_checks` list (paths from the project root).
CLASSROOM50_MODULES = (
    "autograder/integrations/classroom50/__init__.py",
    "autograder/integrations/classroom50/entrypoint.py",
    "autograder/integrations/classroom50/result_v1.py",
)
# The whole autograder.py run, install included: the runner's job is killed at 15 min, and its
# checkout, setup-python and runner.py's own steps get the other 3, so this limit fires first.
DEFAULT_TIMEOUT_S = 720.0
CHECK_TIMEOUT_S = 120.0  # per test file, as the student workflow's default

# The bundle's generated files, `{assignment}` standing for the assignment's folder name: its entry
# point autograder.py and its README.md.
TEMPLATES = Path(__file__).resolve().parent / "templates"


class BuildError(Exception):
    """The assignment cannot be turned into a Classroom50 autograder."""


@dataclass(frozen=True)
class QuestionPart:
    """A public Otter test file and the grader part it checks."""

    part: str
    title: str
    question: str
    points: float
    file: str


def public_tests_dir(assignment: str) -> Path:
    """The assignment's public Otter tests in the student template.

    Args:
        assignment: its folder name.

    Returns:
        student_template/[<student_dir>/]tests.
    """
    manifest = read_manifest(ASSIGNMENTS_DIR / assignment)
    return PROJECT_ROOT / "student_template" / manifest.student_dir / "tests"


def runner_files(assignment: str) -> tuple[str, ...]:
    """The public-check modules to ship: the assignment's `ships.public_checks`, else the first
    assignment's that declares them (the list is the same engine code for every assignment)."""
    for name in [assignment, *available_assignments()]:
        listed = read_manifest(ASSIGNMENTS_DIR / name).public_checks
        if listed:
            return listed
    raise BuildError("no assignment declares ships.public_checks")


def question_parts(assignment: str) -> tuple[list[QuestionPart], list[dict[str, Any]]]:
    """Pair the public test files (q1, q2, ...) with the assignment's parts, in order.

    Otter Assign numbers the master notebook's questions in order, one per graded part, so the
    i-th test file checks the i-th part; the pairing is only accepted when every test file's
    points equal its part's points.

    Args:
        assignment: its folder name.

    Returns:
        (the pairs, the parts that have no public test file as {"part", "title"}).

    Raises:
        BuildError: no tests, more test files than parts, or points that disagree.
    """
    from otter.nbmeta_config import NBMetadataConfig
    from otter.test_files import create_test_file

    parts = load_assignment(assignment).parts
    files = otter_test_files(public_tests_dir(assignment))
    if not files:
        raise BuildError(f"{assignment}: no public Otter tests in {public_tests_dir(assignment)}")
    if len(files) > len(parts):
        raise BuildError(f"{assignment}: {len(files)} public test files but {len(parts)} parts")
    pairs = []
    for path, (name, part) in zip(files, parts.items(), strict=False):
        test_file = create_test_file(str(path), NBMetadataConfig())
        if abs(float(test_file.possible) - float(part["points"])) > 1e-9:
            raise BuildError(
                f"{assignment}: {path.name} is worth {test_file.possible} points but part {name} {part['points']}"
            )
        pairs.append(QuestionPart(name, str(part["title"]), test_file.name, float(part["points"]), path.name))
    rest = [{"part": name, "title": str(part["title"])} for name, part in list(parts.items())[len(files) :]]
    return pairs, rest


def _titles(part: str, title: str, messages: Path | None) -> dict[str, str]:
    """A part's title in every catalogue language (its assignment's `part.<name>`, else grader's title)."""
    titles = {}
    for language in LANGUAGES:
        with use_language(language, messages):
            titles[language] = part_title(part, title)
    return titles


def build(assignment: str, out: Path, language: str = "ko") -> list[str]:
    """Write the autograder folder.

    Args:
        assignment: the assignment's folder name.
        out: the folder to write (replaced when it exists and holds a previous build).
        language: the language of result.json and release-body.md.

    Returns:
        The written files, relative to `out`, sorted.

    Raises:
        BuildError: the assignment cannot be built, or `out` is a non-empty folder of something else.
    """
    if assignment not in available_assignments():
        raise BuildError(f"unknown assignment {assignment!r} (choose from {', '.join(available_assignments())})")
    pairs, rest = question_parts(assignment)
    if out.exists():
        if any(out.iterdir()) and not (out / "assignment.json").is_file():
            raise BuildError(f"{out} is not empty and not an earlier build; choose another --out")
        shutil.rmtree(out)
    files: dict[str, bytes] = {}
    for relative in [*runner_files(assignment), *CLASSROOM50_MODULES]:
        inside = "requirements.lock" if relative == "requirements.lock" else f"grader/{relative}"
        files[inside] = (PROJECT_ROOT / relative).read_bytes()
    for relative, text in GENERATED.items():
        if relative.endswith("__init__.py"):
            files[f"grader/{relative}"] = text.encode("utf-8")
    for pair in pairs:
        files[f"tests/{pair.file}"] = (public_tests_dir(assignment) / pair.file).read_bytes()
    for name in (GLOBALS_FILE, LIBRARY_CALLS_FILE):
        files[f"tests/{name}"] = (public_tests_dir(assignment) / name).read_bytes()
    messages = load_assignment(assignment).messages_dir
    settings = {
        "assignment": assignment,
        "language": language,
        "timeout_s": DEFAULT_TIMEOUT_S,
        "check_timeout_s": CHECK_TIMEOUT_S,
        # Part titles as the reports show them, per language: the only text the runner needs from
        # the assignment's catalogue, so the catalogue itself does not ship.
        "parts": [{**pair.__dict__, "titles": _titles(pair.part, pair.title, messages)} for pair in pairs],
        "parts_without_public_checks": [{**p, "titles": _titles(p["part"], p["title"], messages)} for p in rest],
    }
    files["assignment.json"] = (json.dumps(settings, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    for name in ("autograder.py", "README.md"):
        template = (TEMPLATES / f"{name}.tmpl").read_text(encoding="utf-8")
        files[name] = template.format(assignment=assignment).encode("utf-8")
    for relative, data in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (out / "autograder.py").chmod(0o755)
    return sorted(files)
