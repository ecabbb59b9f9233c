"""grader.yml's plain sections (assignment, worker, grading, feedback) and its parts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from autograder.config.base import KeyProblem, Section
from autograder.i18n import COURSE_LANGUAGE, t

Isolation = Literal["auto", "namespace", "userns", "weak"]
Language = Literal["ko", "en"]


class AssignmentConfig(Section):
    """assignment: which assignment folder is graded, and what the reports call it."""

    name: str | None = None
    """The assignment graded: the folder assignments/<name>/ (its hidden checks, and its parts in
    assignment.yml unless this file has a `parts:` section); null: the only assignment folder
    there is."""
    title: str = ""
    """Shown in reports; empty: the assignment.yml's title, else the name."""


class WorkerConfig(Section):
    """worker: limits of the sandboxed process that runs a submission's code."""

    timeout_s: float = Field(default=30, gt=0)
    """Seconds one request to the sandboxed worker may take."""
    startup_timeout_s: float = Field(default=60, gt=0)
    """Seconds for loading a submission in the worker."""
    memory_mb: int = Field(default=4096, ge=1)
    """Address-space limit of the worker process."""
    output_bytes: int = Field(default=200_000, ge=0)
    """Student output kept per worker; the rest is cut."""
    threads: int = Field(default=1, ge=1)
    """Torch threads inside the worker."""
    isolation: Isolation = "auto"
    """auto: the root jail when the grader is root, else the jail without root (bubblewrap,
    unprivileged user namespaces); grading is refused when neither can be made. namespace |
    userns: only that jail. weak: a jail when possible, else only the audit hook (best effort;
    every report says so). See docs/SECURITY.md."""
    warm_start: bool = True
    """Root jail only: fork each worker from a zygote of this grading process, which has imported
    torch and warm_preload once, instead of starting Python afresh (about 5 s per submission).
    Each fork still gets its own namespaces, uid, limits, seccomp filter and reaper before any
    student code runs; the zygote never sees a submission; its memory limit is memory_mb plus
    what the preload maps (measured), so the student keeps a cold worker's room. Workers start
    cold when this is false, in the jail without root and in weak isolation, and when the zygote
    cannot start. See docs/SECURITY.md."""
    warm_preload: list[str] | None = None
    """Modules the zygote imports once (installed packages the notebooks import; never project
    code); null: the graded assignment's list (its `worker_preload`). A submission's other
    imports load in its own worker."""
    reply_mb: int = Field(default=256, ge=1)
    """Largest reply the worker may send (MB); a larger one is refused unread and fails its request
    (bounds the grader's memory)."""


class GradingConfig(Section):
    """grading: the batch as a whole."""

    seed: int = 0
    """Seed of every generated test case."""
    jobs: int = Field(default=1, ge=1)
    """Submissions graded in parallel."""
    out_dir: str = "grading-output"
    """Where reports are written."""
    progress: bool = True
    """Show progress on stderr: a bar per batch (one line per submission when stderr is not a
    terminal) and one line per evaluation of the training part. The CLI's --quiet turns it off."""
    submission_budget_s: float = Field(default=300, ge=0)
    """Wall-clock budget for all unit parts of one submission (restarts replay the notebook's
    top-level code); parts not reached in it score 0 and say so. 0 = none. The training part has
    its own budget (time_budget_s)."""
    max_notebook_mb: float = Field(default=20, gt=0)
    """Submissions larger than this are not read (0 points, a message naming the limit); checked
    before reading the file."""


class FeedbackConfig(Section):
    """feedback: the language students read."""

    language: Language = COURSE_LANGUAGE
    """Language of every student-facing message and report: ko | en."""


class PartConfig(Section):
    """parts.<part>: one graded part and the points of each of its checks."""

    title: str = ""
    """Shown in reports (empty: the part's name)."""
    points: float
    """The part's points; must equal the sum of its checks' points."""
    checks: dict[str, float] = Field(min_length=1)
    """check id -> points (not negative)."""
    # The credit rule (docs/SOUNDNESS.md): with `gate` set, a check listed in neither `gate` nor
    # `structure` is paid only when every gate check passed, so a generic property (masking,
    # causality, dropout, gradients) earns nothing on an answer that does not do the part's work.
    gate: list[str] = Field(default_factory=list)
    """Checks that compare the answer's outputs with the reference's on inputs that exercise the
    part; the part's other checks, except `structure`, are paid only when all of them passed.
    Empty: every check is paid on its own."""
    structure: list[str] = Field(default_factory=list)
    """Checks paid on their own although an answer doing no work may pass them (it builds, the
    output's shape): the part's structural share, stated in docs/SOUNDNESS.md."""
    requires_parts: list[str] = Field(default_factory=list)
    """Parts whose gate checks must all pass before this part is graded and paid (the training part
    trains only the student's credited work); a part not graded in the run counts as failed."""
    forbidden_calls: list[str] = Field(default_factory=list)
    """Library callables (dotted paths, e.g. torch.nn.functional.scaled_dot_product_attention; a
    class covers building and calling it) that the student's code may not use in this part: a
    call recorded in the worker while the part's checks run fails every check of the part, naming
    it."""

    @field_validator("checks")
    @classmethod
    def _no_negative_points(cls, checks: dict[str, float]) -> dict[str, float]:
        for check, points in checks.items():
            if points < 0:
                raise KeyProblem(check, t("config.negative_points"))
        return checks

    @model_validator(mode="after")
    def _credit_lists_name_its_checks(self) -> PartConfig:
        for key, listed in (("gate", self.gate), ("structure", self.structure)):
            unknown = [check for check in listed if check not in self.checks]
            if unknown:
                raise KeyProblem(key, t("config.not_a_check", check=repr(unknown[0])))
        both = set(self.gate) & set(self.structure)
        if both:
            raise KeyProblem("structure", t("config.also_gate", check=repr(sorted(both)[0])))
        return self

    @model_validator(mode="after")
    def _points_add_up(self) -> PartConfig:
        total = sum(self.checks.values())
        if abs(total - self.points) > 1e-9:
            raise KeyProblem("points", t("config.points_sum", points=f"{self.points:g}", total=f"{total:g}"))
        return self
