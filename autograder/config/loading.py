"""The whole of grader.yml as one model: loading it with CLI overrides, and describing every key."""

from __future__ import annotations

import copy
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, Field, ValidationError, create_model, model_validator
from pydantic_core import PydanticUndefined

from autograder.assignment_folder import (
    ASSIGNMENTS_DIR,
    AssignmentError,
    available_assignments,
    default_assignment_name,
    read_config_sections,
    read_settings,
    read_training_part,
)
from autograder.config.base import ConfigError, KeyProblem, Section, describe_error
from autograder.config.late import LateConfig
from autograder.config.sections import AssignmentConfig, FeedbackConfig, GradingConfig, PartConfig, WorkerConfig
from autograder.config.training import TrainingSection

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "grader.yml"


class GraderConfig(Section):
    """grader.yml: what is graded and how. Every section may be left out (its defaults apply);
    `parts` left out is the named assignment's (its assignment.yml). An assignment's own sections
    (assignment.yml `config:`) extend this model (`config_model`)."""

    assignment: AssignmentConfig = Field(default_factory=lambda: AssignmentConfig(), description="See assignment.*.")
    worker: WorkerConfig = Field(default_factory=lambda: WorkerConfig(), description="See worker.*.")
    grading: GradingConfig = Field(default_factory=lambda: GradingConfig(), description="See grading.*.")
    feedback: FeedbackConfig = Field(default_factory=lambda: FeedbackConfig(), description="See feedback.*.")
    training: TrainingSection = Field(default_factory=lambda: TrainingSection(), description="See training.*.")
    late: LateConfig = Field(default_factory=lambda: LateConfig(), description="See late.*.")
    parts: dict[str, PartConfig] = Field(
        min_length=1,
        description="Part name -> part, in report order; left out: the assignment's "
        "(assignments/<name>/assignment.yml), which this section replaces as a whole.",
    )

    @model_validator(mode="before")
    @classmethod
    def _from_the_assignment(cls, raw: Any) -> Any:
        """Fill the parts and the title from the named assignment's assignment.yml."""
        if not isinstance(raw, dict):
            return raw
        section = raw.get("assignment")
        section = section if isinstance(section, dict) else {}
        name = section.get("name")
        if "parts" in raw and (not isinstance(name, str) or section.get("title")):
            return raw  # nothing to read (a config with its own parts table and no named assignment)
        settings = _assignment_settings(name)
        raw = dict(raw)
        if "parts" not in raw and "parts" in settings:
            raw["parts"] = settings["parts"]
        title = settings.get("title") or name
        if not section.get("title") and isinstance(title, str):
            raw["assignment"] = {**section, "title": title}
        return raw

    @model_validator(mode="after")
    def _titles_and_unique_checks(self) -> GraderConfig:
        seen: dict[str, str] = {}
        for name, part in self.parts.items():
            if not part.title:
                part.title = name
            for check in part.checks:
                if check in seen:
                    raise KeyProblem(name, f"check {check!r} is already listed in part {seen[check]!r}")
                seen[check] = name
        for name, part in self.parts.items():
            unknown = [required for required in part.requires_parts if required not in self.parts or required == name]
            if unknown:
                raise KeyProblem(name, f"requires_parts names {unknown[0]!r}, not another part of this table")
        return self

    def training_part(self) -> str | None:
        """The part the assignment's training hook grades, when this configuration lists it.

        Returns:
            Its name (assignment.yml `training_part`), or None.
        """
        try:
            part = read_training_part(ASSIGNMENTS_DIR / (self.assignment.name or default_assignment_name()))
        except AssignmentError:  # names none among several: grading itself says so
            return None
        return part if part in self.parts else None

    def disabled_parts(self) -> dict[str, str]:
        """Parts this configuration leaves ungraded whatever is selected, with the reason to show.

        Returns:
            {part: reason}; today only the training part, when training is not enabled.
        """
        from autograder.i18n import t  # the reason is student-facing text

        part = self.training_part()
        if not self.training.enabled and part is not None:
            return {part: t("training.disabled")}
        return {}


SectionModel = TypeVar("SectionModel", bound=Section)


def assignment_section(config: GraderConfig, key: str, model: type[SectionModel]) -> SectionModel:
    """One of an assignment's own sections of a configuration, typed (for that assignment's code).

    Args:
        config: a configuration validated with the assignment's sections (`config_model`).
        key: the section's grader.yml key, e.g. "training".
        model: the section model the assignment declares for it.

    Returns:
        The section.

    Raises:
        TypeError: the configuration grades another assignment, whose `key` is not this model.
    """
    section = getattr(config, key, None)
    if not isinstance(section, model):
        raise TypeError(
            f"the configuration grades {config.assignment.name!r}, whose `{key}` section is not {model.__name__}"
        )
    return section


def _assignment_settings(name: Any) -> dict[str, Any]:
    """The named assignment's assignment.yml (read as text: the assignment's code is not imported)."""
    if name is not None and not isinstance(name, str):
        return {}  # the model reports the wrong type
    try:
        names = available_assignments()
        if name is None:
            if len(names) != 1:
                return {}  # `parts` is then required (the model says so)
            name = names[0]
        if name not in names:
            listed = ", ".join(names) or "none"
            raise KeyProblem("assignment.name", f"unknown assignment {name!r} (assignments: {listed})")
        return read_settings(ASSIGNMENTS_DIR / name)
    except AssignmentError as error:
        raise KeyProblem("assignment.name", str(error)) from None


def validate(raw: Any) -> GraderConfig:
    """Check a parsed grader.yml and fill in defaults.

    Args:
        raw: the YAML document as parsed (a mapping).

    Returns:
        The complete configuration.

    Raises:
        ConfigError: naming the first offending key.
    """
    if not isinstance(raw, dict):
        raise ConfigError("grader.yml: expected a mapping at the top level")
    model = config_model(graded_name(raw))
    try:
        return model.model_validate(raw)
    except ValidationError as error:
        raise ConfigError(describe_error(model, error)) from None


def graded_name(raw: Any) -> str | None:
    """The assignment a parsed grader.yml grades: `assignment.name`, else the only one there is.

    Args:
        raw: the parsed document.

    Returns:
        The folder name, or None (none named among several, or a wrong type: validation says so).
    """
    section = raw.get("assignment") if isinstance(raw, dict) else None
    name = section.get("name") if isinstance(section, dict) else None
    if name is None:
        names = available_assignments()
        return names[0] if len(names) == 1 else None
    return name if isinstance(name, str) else None


@cache
def config_model(name: str | None) -> type[GraderConfig]:
    """The model of a grader.yml that grades one assignment: GraderConfig with its sections.

    Args:
        name: the assignment folder (None or unknown: the core model alone).

    Returns:
        GraderConfig extended with the sections assignment.yml `config:` declares (the core
        model itself when it declares none).

    Raises:
        ConfigError: a declared section cannot be imported, is no grader.yml section model, or
            replaces a core section (only `training` may be extended, by a TrainingSection).
    """
    if name is None or name not in available_assignments():
        return GraderConfig
    try:
        sections = read_config_sections(ASSIGNMENTS_DIR / name)
    except AssignmentError as error:
        raise ConfigError(str(error)) from None
    fields: dict[str, Any] = {}
    for key, model in sections.items():
        core = GraderConfig.model_fields.get(key)
        base = core.annotation if core is not None else Section
        if key == "parts" or not (isinstance(base, type) and issubclass(model, base)):
            raise ConfigError(
                f"assignments/{name}/assignment.yml: config.{key}: {model.__name__} must derive from "
                f"{getattr(base, '__name__', base)}" + (" (a core section)" if core is not None else "")
            )
        fields[key] = (model, Field(default_factory=model, description=f"See {key}.*."))
    if not fields:
        return GraderConfig
    extended: type[GraderConfig] = create_model(
        f"{_EXTENDED_PREFIX}{name}", __base__=GraderConfig, __module__=__name__, **fields
    )
    return extended


_EXTENDED_PREFIX = "GraderConfig_"  # config_model's classes: GraderConfig_<assignment>


def __getattr__(attribute: str) -> Any:
    """This module's `GraderConfig_<assignment>` classes, built on first use, so that pickle finds
    them by name (a configuration sent to a worker process of the local executor).

    Args:
        attribute: the name looked up.

    Returns:
        The extended model.

    Raises:
        AttributeError: any other name.
    """
    name = attribute.removeprefix(_EXTENDED_PREFIX)
    if attribute.startswith(_EXTENDED_PREFIX) and config_model(name).__name__ == attribute:
        return config_model(name)
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> GraderConfig:
    """Read grader.yml, apply dotted-key overrides (from CLI flags) and validate.

    Args:
        path: the YAML file; None reads the project's grader.yml.
        overrides: e.g. {"worker.timeout_s": 5, "training.enabled": True}.

    Returns:
        The validated configuration (see `validate`).

    Raises:
        ConfigError: the file is missing or not YAML, or a key (given or overridden) is invalid.
    """
    path = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ConfigError(f"{path}: file not found") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from error
    raw = copy.deepcopy(raw)
    overrides = overrides or {}
    if isinstance(raw, dict) and _names_another_assignment(raw, overrides):
        raw = settings_for(raw, overrides["assignment.name"])
    if isinstance(raw, dict) and "parts" not in raw and any(k.startswith("parts.") for k in overrides):
        # A dotted override of one part's key edits the assignment's table, not an empty one.
        section = raw.get("assignment")
        name = overrides.get("assignment.name", section.get("name") if isinstance(section, dict) else None)
        try:
            parts = _assignment_settings(name).get("parts")
        except KeyProblem as problem:
            raise ConfigError(f"{problem.key}: {problem.message}") from None
        if isinstance(parts, dict):
            raw["parts"] = copy.deepcopy(parts)
    for dotted, value in overrides.items():
        _set_dotted(raw, dotted, value)
    _check_override_keys(overrides, graded_name(raw))
    return validate(raw)


def settings_for(raw: dict[str, Any], name: Any) -> dict[str, Any]:
    """A parsed grader.yml as it applies to grading another assignment than the one it names.

    The file's parts table, title and own sections (and own keys of shared sections) belong to the
    assignment it names, so they are left out; everything else (worker, grading, feedback, the
    training switch) applies as written.

    Args:
        raw: the parsed document (not changed).
        name: the assignment graded instead.

    Returns:
        A new document naming `name`.
    """
    raw = copy.deepcopy(raw)
    named = config_model(graded_name(raw))
    raw.pop("parts", None)
    if isinstance(raw.get("assignment"), dict):
        raw["assignment"].pop("title", None)
    _set_dotted(raw, "assignment.name", name)
    _drop_foreign_keys(raw, named, config_model(graded_name(raw)))
    return raw


def _check_override_keys(overrides: dict[str, Any], name: str | None) -> None:
    """Refuse an override of a key that another assignment has and the graded one lacks (a flag
    meant for that one), naming the assignment; other unknown keys are validation's to report."""
    for dotted in overrides:
        if has_key(config_model(name), dotted):
            continue
        if any(has_key(config_model(other), dotted) for other in available_assignments()):
            raise ConfigError(f"{dotted}: assignment {name!r} has no such setting (`python -m autograder config`)")


def has_key(model: type[BaseModel], dotted: str) -> bool:
    """Whether a dotted key names a setting of a configuration model.

    Args:
        model: e.g. `config_model(name)` of the graded assignment.
        dotted: e.g. "training.mode"; a collection's entries take any name ("parts.x.points").

    Returns:
        True when every step is a field (or a collection entry) of the model.
    """
    node: type[BaseModel] | None = model
    steps = dotted.split(".")
    index = 0
    while index < len(steps):
        if node is None or steps[index] not in node.model_fields:
            return False
        inner, collection = _model_of(node.model_fields[steps[index]].annotation)
        index += 2 if collection and index + 1 < len(steps) else 1
        if index < len(steps) and inner is None:
            return False
        node = inner
    return True


def _drop_foreign_keys(raw: dict[str, Any], named: type[BaseModel], graded: type[BaseModel]) -> None:
    """Remove the sections and section keys the file's assignment declares and the graded one lacks.

    Args:
        raw: the parsed document (changed in place).
        named: the model of the assignment the file names.
        graded: the model of the assignment graded instead.
    """
    for key in list(raw):
        if key in named.model_fields and key not in graded.model_fields:
            del raw[key]
            continue
        mine, _ = _model_of(named.model_fields[key].annotation) if key in named.model_fields else (None, "")
        theirs, _ = _model_of(graded.model_fields[key].annotation) if key in graded.model_fields else (None, "")
        if mine is None or theirs is None or mine is theirs or not isinstance(raw[key], dict):
            continue
        raw[key] = {k: v for k, v in raw[key].items() if k in theirs.model_fields or k not in mine.model_fields}


def _names_another_assignment(raw: dict[str, Any], overrides: dict[str, Any]) -> bool:
    """Whether the overrides grade another assignment than the one the file names."""
    if "assignment.name" not in overrides:
        return False
    section = raw.get("assignment")
    named = section.get("name") if isinstance(section, dict) else None
    return bool(overrides["assignment.name"] != named)


def _set_dotted(raw: Any, dotted: str, value: Any) -> None:
    """Set `a.b.c` in the parsed document, making the mappings on the way (validation judges the key)."""
    if not isinstance(raw, dict):
        raise ConfigError("grader.yml: expected a mapping at the top level")
    *parents, leaf = dotted.split(".")
    node = raw
    for name in parents:
        if node.get(name) is None:  # absent, or an empty section (`data:` alone parses as null)
            node[name] = {}
        node = node[name]
        if not isinstance(node, dict):
            raise ConfigError(f"{dotted}: {name} is not a section")
    node[leaf] = value


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model a field holds, and the path step to it: '' for a section, '.<name>' for a collection."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    if get_origin(annotation) is dict:
        value = get_args(annotation)[-1]
        if isinstance(value, type) and issubclass(value, BaseModel):
            return value, "<name>"
    return None, ""


def _default_text(info: Any) -> str:
    if info.default_factory is not None:
        return repr(info.default_factory())
    if info.default is PydanticUndefined:
        return "(required)"
    return repr(info.default)


def _type_text(annotation: Any) -> str:
    if get_origin(annotation) in (Union, types.UnionType):
        return " | ".join(_type_text(arg) for arg in get_args(annotation))
    if get_origin(annotation) is Literal:
        return " | ".join(str(arg) for arg in get_args(annotation))
    if get_origin(annotation) in (list, dict):
        return str(annotation)
    return getattr(annotation, "__name__", str(annotation)).replace("NoneType", "null")


def iter_keys(model: type[BaseModel] = GraderConfig, prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """Every leaf key of a model, depth first in declaration order.

    Args:
        model: the model to walk (default: the whole grader.yml).
        prefix: the dotted path of `model` ("" for the root).

    Yields:
        (dotted key, type, default, description); collections appear as `<name>` / `<part>`.
    """
    for name, info in model.model_fields.items():
        dotted = f"{prefix}{name}"
        inner, step = _model_of(info.annotation)
        if inner is None:
            yield dotted, _type_text(info.annotation), _default_text(info), info.description or ""
            continue
        if step:
            step = "<part>" if inner is PartConfig else step
            yield from iter_keys(inner, f"{dotted}.{step}.")
        else:
            yield from iter_keys(inner, f"{dotted}.")


def describe(assignment: str | None = None) -> str:
    """Render every key with its type, default and description (for `python -m autograder config`).

    Args:
        assignment: whose sections to include (None: the one the project's grader.yml grades).

    Returns:
        Human-readable text, two lines per key, read from the models.

    Raises:
        ConfigError: no such assignment, or its sections cannot be loaded.
    """
    if assignment is not None and assignment not in available_assignments():
        raise ConfigError(f"unknown assignment {assignment!r} (assignments: {', '.join(available_assignments())})")
    if assignment is None:
        try:
            assignment = graded_name(yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError):
            assignment = None
    model = config_model(assignment)
    lines = [f"{key}: {kind} = {default}\n    {description}" for key, kind, default, description in iter_keys(model)]
    lines.append("(A part's points must equal the sum of its checks' points; a check id belongs to one part.)")
    return "\n".join(lines)
