"""The assignment as a loadable unit: what the engine core asks of it, and the loader."""

# The engine core (loading, sandbox, runner, scoring, reports, front ends) names no assignment,
# part, model class or dataset. Everything that knows what is graded lives in one folder,
# assignments/<name>/, whose assignment.py exposes one `Assignment` object named ASSIGNMENT and
# whose assignment.yml holds its title and parts (the TA's grader.yml names the assignment and may
# override them). docs/ASSIGNMENTS.md walks through adding one.

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograder.assignment_folder import (
    ASSIGNMENTS_DIR,
    AssignmentError,
    BundledData,
    Manifest,
    available_assignments,
    default_assignment_name,
    read_bundled_data,
    read_manifest,
    read_settings,
    read_training_part,
)

ASSIGNMENT_OBJECT = "ASSIGNMENT"  # the name assignment.py binds its Assignment to

if TYPE_CHECKING:  # the hooks' signatures only; importing these at run time would be circular
    from autograder.checks.student import Student
    from autograder.config import GraderConfig
    from autograder.reports.sections import ReportView


@dataclass(frozen=True)
class TrainingOutcome:
    """What a training hook found: one verdict for every check of the training part."""

    passed: bool
    message: str  # student-facing: why it failed, or the figure it reached
    details: dict[str, Any] = field(default_factory=dict)  # shown in the report ("training" extras)


# (statements, config, grader globals, submission path) -> outcome; statements are the worker's
# (label, line, code) triples of the submission's definitions.
TrainingHook = Callable[[list[tuple[str, int, str]], "GraderConfig", dict[str, Any], Path | None], TrainingOutcome]
# (config, submission stem) -> names of the files beside the submission that its training part reads
# in this configuration (submitted weights, say), in the order they are looked for.
SidecarHook = Callable[["GraderConfig", str], list[str]]


@dataclass(frozen=True)
class TrainingFigures:
    """One graded training run as the class view counts it, read from the training part's extras."""

    metric: str  # what the run's figure is called in reports, e.g. "accuracy"
    value: float | None  # the figure the training part graded; None: the run reported none
    threshold: float | None  # the bar the figure had to reach; None: not reported
    curve: tuple[tuple[float, float], ...] | None  # (step, figure) at each evaluation; None: no curve kept
    steps: float | None  # how many steps the run took; None: not reported
    stop_reason: str = ""  # why the run ended, in the assignment's words ("" when it did not say)
    stopped_early: bool = False  # the run ended before its schedule did (at the bar, or given up)


# (the training part's report extras) -> its figures; must not raise on a mapping of another shape.
FiguresHook = Callable[[Mapping[str, Any]], TrainingFigures]


def reported_number(value: Any) -> float | None:
    """A figure read from stored report extras: a JSON number as a float, anything else None.

    Args:
        value: a value of the extras (a boolean is not a number here).

    Returns:
        The float, or None.
    """
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# (worker, graded parts) -> report extras, read from the unit parts' worker before it closes; must
# never raise (a picture of the student's output, say).
ReportHook = Callable[["Student", list[str]], dict[str, Any]]


@dataclass(frozen=True)
class Assignment:
    """One gradable assignment, as the engine sees it.

    The hidden checks are a pytest folder (`checks_dir`) whose `ctx` fixture takes the grading
    context from the engine's plugin (`autograder.checks.support.check_context`) and, when the
    folder runs on its own, grades `reference_student()` instead, so every check must pass.
    """

    name: str  # the folder's name: assignments/<name>/
    folder: Path
    checks_dir: Path
    # Module globals the grader defines in the worker (the submission's own bindings of these
    # names are not loaded); the public checks inject the same ones.
    grader_globals: Mapping[str, Any]
    # A stand-in for the worker that answers with the reference solution (run-alone checks).
    reference_student: Callable[[], Student]
    # Python source run in the worker beside the submission, as module `grader_helpers` (probes).
    worker_helpers: str = ""
    # Folders importable in the worker besides the submission (public, solution-free toolkits).
    worker_paths: tuple[Path, ...] = ()
    # Installed modules the assignment's notebooks import, which the warm workers' zygote imports
    # once (grader.yml's `worker.warm_preload` overrides the list).
    worker_preload: tuple[str, ...] = ()
    # Grades the part assignment.yml's `training_part` names (None: the assignment has no training part).
    training: TrainingHook | None = None
    # config -> why the training part cannot succeed on this machine (its data missing, say), in the
    # staff's language; asked by the CLI before a `--train` grading starts (None: nothing to say).
    training_preflight: Callable[[GraderConfig], str | None] | None = None
    sidecar_names: SidecarHook | None = None
    # Reads a graded run's figures for the class view (None: the class view shows no training figures).
    training_figures: FiguresHook | None = None
    report_extras: ReportHook | None = None
    # (report extras) -> the feedback's sections that draw them, in the assignment's words and the
    # current language (autograder.reports.sections); None: the engine's generic sections only.
    report_sections: ReportView | None = None
    # The assignment's own message catalogue (<lang>.yml files, the engine's format), asked before
    # the engine's while it is graded or reported (autograder.i18n); its `part.<name>` keys
    # title the parts in reports.
    messages_dir: Path | None = None

    @classmethod
    def in_folder(cls, folder: Path, **fields: Any) -> Assignment:
        """The assignment of a folder: its name, checks/ and messages/, and assignment.yml's
        `grader_globals` (the names the grader defines in the worker) and `worker_preload`
        (installed modules the notebooks import; default torch.nn), with the hooks in `fields`.

        Args:
            folder: assignments/<name>/.
            fields: the other fields (`reference_student` at least); one named above overrides it.

        Returns:
            The assignment.
        """
        settings = read_settings(folder)
        declared: dict[str, Any] = {
            "name": folder.name,
            "folder": folder,
            "checks_dir": folder / "checks",
            "grader_globals": dict(settings.get("grader_globals") or {}),
            "worker_preload": tuple(settings.get("worker_preload") or ("torch.nn",)),
            "messages_dir": folder / "messages",
        }
        return cls(**{**declared, **fields})

    def __reduce__(self) -> tuple[Callable[[str], Assignment], tuple[str]]:
        """Pickled by name: a pool process or Ray node that unpickles it imports its own copy.

        Its paths (`folder`, `worker_paths`) are those of the process that loaded it, so each
        process that grades must hold its own (the grader's code on a Ray node is a private copy).
        """
        return load_assignment, (self.name,)

    @cached_property  # asked for every part of every submission; assignment.yml is read once
    def training_part(self) -> str | None:
        """The part the training hook grades (assignment.yml `training_part`; None: no training part)."""
        return read_training_part(self.folder) if self.training is not None else None

    @property
    def provided_names(self) -> frozenset[str]:
        """The names the grader provides; a submission's own binding of them is not loaded."""
        return frozenset(self.grader_globals)

    @property
    def manifest(self) -> Manifest:
        """What ships (assignment.yml's `ships:`)."""
        return read_manifest(self.folder)

    @property
    def parts(self) -> dict[str, Any]:
        """assignment.yml's `parts:` as parsed (validated with the rest of the configuration)."""
        parts = read_settings(self.folder).get("parts") or {}
        return dict(parts) if isinstance(parts, dict) else {}


@cache
def load_assignment(name: str | None = None) -> Assignment:
    """Import assignments/<name>/assignment.py and return its ASSIGNMENT (without one: `declared_assignment`).

    Args:
        name: the folder name; None: the only assignment there is (`default_assignment_name`).

    Returns:
        The loaded assignment (loaded once per process).

    Raises:
        AssignmentError: no such folder, or it exposes no Assignment.
    """
    name = name or default_assignment_name()
    if not name.isidentifier() or name not in available_assignments():
        known = ", ".join(available_assignments()) or "-"
        raise AssignmentError("config.unknown_assignment", name=repr(name), listed=known)
    if not (ASSIGNMENTS_DIR / name / "assignment.py").is_file():
        return declared_assignment(ASSIGNMENTS_DIR / name)
    module = importlib.import_module(f"assignments.{name}.assignment")
    assignment = getattr(module, ASSIGNMENT_OBJECT, None)
    if not isinstance(assignment, Assignment):
        raise AssignmentError("assignment_error.not_an_assignment", name=name, object=ASSIGNMENT_OBJECT)
    if (assignment.training is None) != (read_training_part(assignment.folder) is None):
        raise AssignmentError("assignment_error.training_pair", name=name)
    return assignment


def declared_assignment(folder: Path) -> Assignment:
    """An assignment folder without assignment.py: its assignment.yml, checks/ and reference.py say it all.

    The reference is the folder's `reference.py` (trusted code, importable on its own as
    `assignments.<name>.reference`); the rest is `Assignment.in_folder`'s.

    Args:
        folder: assignments/<name>/.

    Returns:
        The assignment, with no hooks (no training part, the engine's report sections).
    """

    def reference_student() -> Student:
        from autograder.checks.inprocess import ReferenceModuleStudent

        reference = importlib.import_module(f"assignments.{folder.name}.reference")
        return ReferenceModuleStudent(reference, dict(assignment.grader_globals))

    assignment = Assignment.in_folder(folder, reference_student=reference_student)
    return assignment


def bundled_data_of(config: GraderConfig) -> BundledData | None:
    """The bundled data of the assignment a configuration grades, read without importing its code.

    Args:
        config: the validated configuration.

    Returns:
        Its assignment.yml `data:` declaration, or None.
    """
    return read_bundled_data(ASSIGNMENTS_DIR / config.assignment_name())


def assignment_of(config: GraderConfig) -> Assignment:
    """The assignment a configuration grades: a front end's one load, passed down from there.

    Args:
        config: the validated configuration.

    Returns:
        The assignment its `assignment.name` names (or the only one there is).
    """
    return load_assignment(config.assignment.name)
