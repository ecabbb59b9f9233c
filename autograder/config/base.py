"""The base of every grader.yml model, the error type, and the translation of validation errors into it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from autograder.i18n import t


class ConfigError(ValueError):
    """grader.yml (or a CLI override) is invalid; the message names the offending key."""


class KeyProblem(ValueError):
    """Raised by a model's own checks to name the key at fault below the model being validated."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


class Section(BaseModel):
    """A grader.yml mapping: unknown keys are errors, and values are not coerced (`"5"` is not
    a number, `1` is not true); an integer is accepted where a number is expected. A key's
    description (`python -m autograder config`) is the docstring under its field."""

    model_config = ConfigDict(extra="forbid", strict=True, validate_assignment=True, use_attribute_docstrings=True)


# Pydantic error type -> what the key expected, in the words grader.yml's readers use (`config.type.<word>`).
_EXPECTED = {
    "int_type": "integer",
    "int_from_float": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "string_type": "string",
    "list_type": "list",
    "dict_type": "mapping",
    "model_type": "mapping",
    "model_attributes_type": "mapping",
    "none_required": "null",
}


def _dotted(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location)


def _known_keys(model: type[BaseModel], location: tuple[int | str, ...]) -> list[str]:
    """The keys allowed at `location` (the parent of an unknown key), found by walking the models."""
    node: Any = model
    for part in location:
        if isinstance(node, type) and issubclass(node, BaseModel) and part in node.model_fields:
            node = node.model_fields[str(part)].annotation
        else:  # a dict[str, Model] collection: its values' model
            args = getattr(node, "__args__", ())
            node = args[-1] if args else None
    if isinstance(node, type) and issubclass(node, BaseModel):
        return list(node.model_fields)
    return []


def describe_error(model: type[BaseModel], error: ValidationError) -> str:
    """The first problem of a validation error as one line that starts with the key at fault.

    Args:
        model: the model that was validated (to list the keys allowed beside an unknown one).
        error: pydantic's error.

    Returns:
        e.g. "worker.timeout_s: expected a number, got str ('soon')".
    """
    first = error.errors(include_url=False)[0]
    location, kind, given = tuple(first["loc"]), first["type"], first.get("input")
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, KeyProblem):
        return f"{_dotted((*location, cause.key))}: {cause.message}"
    where = _dotted(location) or "grader.yml"
    if kind == "extra_forbidden":
        known = ", ".join(_known_keys(model, location[:-1]))
        return t("config.unknown_section" if len(location) == 1 else "config.unknown_key", where=where, known=known)
    if kind == "missing":
        return t("config.missing", where=where)
    if kind in _EXPECTED:
        got = t("config.got_boolean") if isinstance(given, bool) else f"{type(given).__name__} ({given!r})"
        return t("config.expected", where=where, expected=t(f"config.type.{_EXPECTED[kind]}"), got=got)
    if kind == "literal_error":
        return t("config.one_of", where=where, expected=first["ctx"]["expected"], given=repr(given))
    bound = {"greater_than_equal": "ge", "greater_than": "gt", "less_than_equal": "le", "less_than": "lt"}.get(kind)
    if bound is not None:
        return t(f"config.bound.{kind}", where=where, limit=f"{first['ctx'][bound]:g}", given=repr(given))
    message = str(cause) if isinstance(cause, ValueError) else first["msg"]
    return t("config.invalid", where=where, message=message, given=repr(given))
