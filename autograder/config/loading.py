"""The whole of grader.yml as one model: loading it with CLI overrides, and describing every key."""

from __future__ import annotations

import copy
import types
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, Field, ValidationError, model_validator
from pydantic_core import PydanticUndefined

from autograder.assignment_folder import (
    ASSIGNMENTS_DIR,
    AssignmentError,
    available_assignments,
    default_assignment_name,
    grader_yml_of,
    read_config_model,
    read_settings,
    read_training_part,
)
from autograder.config.base import ConfigError, KeyProblem, Section, describe_error
from autograder.config.late import LateConfig
from autograder.config.sections import AssignmentConfig, FeedbackConfig, GradingConfig, PartConfig, WorkerConfig
from autograder.config.training import TrainingSection
from autograder.i18n import t

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "grader.yml"


class GraderConfig(Section):
    """grader.yml: what is graded and how. Every section may be left out (its defaults apply);
    `parts` left out is the named assignment's (its assignment.yml). An assignment with settings of
    its own declares a subclass of this model (assignment.yml `config:`, `config_model`)."""

    assignment: AssignmentConfig = Field(default_factory=lambda: AssignmentConfig())
    """See assignment.*."""
    worker: WorkerConfig = Field(default_factory=lambda: WorkerConfig())
    """See worker.*."""
    grading: GradingConfig = Field(default_factory=lambda: GradingConfig())
    """See grading.*."""
    feedback: FeedbackConfig = Field(default_factory=lambda: FeedbackConfig())
    """See feedback.*."""
    training: TrainingSection = Field(default_factory=lambda: TrainingSection())
    """See training.*."""
    late: LateConfig = Field(default_factory=lambda: LateConfig())
    """See late.*."""
    parts: dict[str, PartConfig] = Field(min_length=1)
    """Part name -> part, in report order; left out: the assignment's
    (assignments/<name>/assignment.yml), which this section replaces as a whole."""

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
                    raise KeyProblem(name, t("config.check_twice", check=repr(check), part=repr(seen[check])))
                seen[check] = name
        for name, part in self.parts.items():
            unknown = [required for required in part.requires_parts if required not in self.parts or required == name]
            if unknown:
                raise KeyProblem(name, t("config.requires_unknown", part=repr(unknown[0])))
        return self

    def assignment_name(self) -> str:
        """The graded assignment's folder name: `assignment.name`, else the only one there is.

        Returns:
            The folder name under assignments/.
        """
        return self.assignment.name or default_assignment_name()

    def training_part(self) -> str | None:
        """The part the assignment's training hook grades, when this configuration lists it.

        Returns:
            Its name (assignment.yml `training_part`), or None.
        """
        try:
            part = read_training_part(ASSIGNMENTS_DIR / self.assignment_name())
        except AssignmentError:  # names none among several: grading itself says so
            return None
        return part if part in self.parts else None

    def disabled_parts(self) -> dict[str, str]:
        """Parts this configuration leaves ungraded whatever is selected, with the reason to show.

        Returns:
            {part: reason}; today only the training part, when training is not enabled.
        """
        part = self.training_part()
        if not self.training.enabled and part is not None:
            return {part: t("training.disabled")}
        return {}


def _assignment_settings(name: Any) -> dict[str, Any]:
    """The named assignment's assignment.yml (read as text: the assignment's code is not imported)."""
    if name is None:
        name = graded_name({})  # the only assignment there is (None: none, or several)
    if not isinstance(name, str):
        return {}  # `parts` is then required, or the name has the wrong type: the model says so
    try:
        if name not in available_assignments():
            raise KeyProblem("assignment.name", _unknown_assignment(name))
        return read_settings(ASSIGNMENTS_DIR / name)
    except AssignmentError as error:
        raise KeyProblem("assignment.name", str(error)) from None


def _unknown_assignment(name: str) -> str:
    """The message for an assignment name no folder has."""
    return t("config.unknown_assignment", name=repr(name), listed=", ".join(available_assignments()) or "-")


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
        raise ConfigError(t("config.top_not_mapping"))
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
    """The model of a grader.yml that grades one assignment: the class its assignment.yml `config:` names.

    Args:
        name: the assignment folder (None or unknown: the core model alone).

    Returns:
        The assignment's subclass of GraderConfig (its own sections and keys), or GraderConfig
        itself when it declares none.

    Raises:
        ConfigError: the declared class cannot be imported or does not derive from GraderConfig.
    """
    if name is None or name not in available_assignments():
        return GraderConfig
    try:
        model = read_config_model(ASSIGNMENTS_DIR / name)
    except AssignmentError as error:
        raise ConfigError(str(error)) from None
    if model is None:
        return GraderConfig
    if not issubclass(model, GraderConfig):
        raise ConfigError(t("config.model_base", name=name, model=model.__name__))
    return model


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> GraderConfig:
    """Read grader.yml, apply dotted-key overrides (from CLI flags) and validate.

    Args:
        path: the YAML file; None reads the grader.yml of the assignment `overrides` name
            (`grader_yml_of`), else the project's.
        overrides: e.g. {"worker.timeout_s": 5, "training.enabled": True}.

    Returns:
        The validated configuration (see `validate`).

    Raises:
        ConfigError: the file is missing or not YAML, grades another assignment than the one the
            overrides name, or a key (given or overridden) is invalid.
    """
    overrides = overrides or {}
    named = overrides.get("assignment.name")
    if path is None:
        path = grader_yml_of(named) if isinstance(named, str) else DEFAULT_CONFIG_PATH
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ConfigError(t("config.file_missing", path=path)) from error
    except yaml.YAMLError as error:
        raise ConfigError(t("config.not_yaml", path=path, error=error)) from error
    raw = copy.deepcopy(raw)
    graded = graded_name(raw)
    if named in available_assignments() and graded not in (None, named):
        # One grader.yml per assignment: a file's parts and own sections belong to the one it names.
        raise ConfigError(t("config.other_assignment", path=path, graded=repr(graded), named=named))
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
    return validate(raw)


def parse_settings(pairs: list[str]) -> dict[str, Any]:
    """Dotted-key overrides from `--set KEY=VALUE` arguments, each value read as YAML.

    Args:
        pairs: e.g. ["training.mode=checkpoint", "worker.timeout_s=5"] (a later key wins).

    Returns:
        Dotted key -> value, e.g. {"training.mode": "checkpoint", "worker.timeout_s": 5};
        validation judges the keys and values.

    Raises:
        ConfigError: an argument is not KEY=VALUE or its value is not YAML.
    """
    settings: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or not key or any(not step for step in key.split(".")):
            raise ConfigError(t("config.set_syntax", pair=pair))
        try:
            settings[key] = yaml.safe_load(text)  # typed as in grader.yml: 5, 0.5, true, null, [1, 2]
        except yaml.YAMLError:
            raise ConfigError(t("config.value_not_yaml", key=key, text=repr(text))) from None
    return settings


def _set_dotted(raw: Any, dotted: str, value: Any) -> None:
    """Set `a.b.c` in the parsed document, making the mappings on the way (validation judges the key)."""
    if not isinstance(raw, dict):
        raise ConfigError(t("config.top_not_mapping"))
    *parents, leaf = dotted.split(".")
    node = raw
    for name in parents:
        if node.get(name) is None:  # absent, or an empty section (`data:` alone parses as null)
            node[name] = {}
        node = node[name]
        if not isinstance(node, dict):
            raise ConfigError(t("config.not_a_section", dotted=dotted, name=name))
    node[leaf] = value


def _model_of(annotation: Any) -> tuple[type[BaseModel] | None, str]:
    """The model a field holds, and the path step to it: '' for a section, '<part>.' or '<name>.' for a collection."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, ""
    value = get_args(annotation)[-1] if get_origin(annotation) is dict else None
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value, "<part>." if value is PartConfig else "<name>."
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
            description = " ".join((info.description or "").split())  # a docstring's lines as one
            yield dotted, _type_text(info.annotation), _default_text(info), description
        else:
            yield from iter_keys(inner, f"{dotted}.{step}")


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
        raise ConfigError(_unknown_assignment(assignment))
    if assignment is None:
        try:
            assignment = graded_name(yaml.safe_load(DEFAULT_CONFIG_PATH.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError):
            assignment = None
    model = config_model(assignment)
    lines = [f"{key}: {kind} = {default}\n    {description}" for key, kind, default, description in iter_keys(model)]
    lines.append("(A part's points must equal the sum of its checks' points; a check id belongs to one part.)")
    return "\n".join(lines)
