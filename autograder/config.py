"""Load, validate and describe grader.yml: every key has a type, a default and a description."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from autograder.checkpoint_file import DEFAULT_NAMES as DEFAULT_CHECKPOINT_NAMES

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CONFIG_PATH = PROJECT_ROOT / "grader.yml"


TRAINING_PART = "training"   # the part that training.enabled switches on
FEEDBACK_LANGUAGES = ("ko", "en")


def disabled_parts(config: dict[str, Any]) -> dict[str, str]:
    """Parts this configuration leaves ungraded whatever is selected, with the reason to show.

    Args:
        config: the validated configuration.

    Returns:
        {part: reason}; today only the training part, when training is not enabled.
    """
    from autograder.reports.i18n import t   # the reason is student-facing text

    if not config["training"]["enabled"] and TRAINING_PART in config["parts"]:
        return {TRAINING_PART: t("training.disabled")}
    return {}


class ConfigError(ValueError):
    """grader.yml (or a CLI override) is invalid; the message names the offending key."""


@dataclass(frozen=True)
class Key:
    """One scalar setting: its accepted types, default value and a description for humans."""

    types: tuple[type, ...]
    default: Any
    description: str


def _key(types: type | tuple[type, ...], default: Any, description: str) -> Key:
    return Key(types if isinstance(types, tuple) else (types,), default, description)


NUMBER = (int, float)
OPTIONAL_STR = (str, type(None))

# Keys of one training profile (training.profiles.<name>).
PROFILE_SCHEMA: dict[str, Key] = {
    "embedding_dim": _key(int, 256, "Model width d."),
    "feed_forward_dim": _key(int, 512, "Hidden size of each feed-forward block."),
    "num_heads": _key(int, 8, "Attention heads; must divide embedding_dim."),
    "num_layers": _key(int, 2, "Encoder layers and decoder layers (each)."),
    "drop_prob": _key(NUMBER, 0.1, "Dropout probability."),
    "batch_size": _key(int, 128, "Sentence pairs per batch."),
    "max_tokens": _key(int, 0, "Token-based batches: at most this many padded tokens per batch and "
                       "side, batch_size then caps the rows (0 = batches of batch_size pairs)."),
    "learning_rate": _key(NUMBER, 5e-4, "Peak Adam learning rate."),
    "warmup_steps": _key(int, 0, "Linear warm-up steps before the peak learning rate."),
    "lr_schedule": _key(str, "constant", "After warm-up: constant | inverse_sqrt | linear | cosine "
                        "(linear and cosine reach 0 at lr_decay_steps)."),
    "lr_decay_steps": _key(int, 0, "Step at which linear/cosine decay reaches 0 (0 = the end of "
                           "max_epochs)."),
    "label_smoothing": _key(NUMBER, 0.1, "Label smoothing of the cross-entropy criterion."),
    "clip_grad_norm": _key(NUMBER, 1.0, "Gradient-norm clipping threshold (0 = off)."),
    "max_epochs": _key(int, 4, "Upper bound on training epochs."),
    "max_steps": _key(int, 0, "Upper bound on optimizer steps (0 = none besides max_epochs); also "
                      "caps runs with the student's epochs in student_hparams mode."),
    "time_budget_s": _key(NUMBER, 600, "Wall-clock budget for training; stops at the first "
                          "epoch/evaluation boundary past it."),
    "eval_every_steps": _key(int, 0, "Evaluate validation BLEU every N steps (0 = per epoch)."),
    "eval_start_step": _key(int, 0, "No step-based evaluation before this step (evaluations cost "
                            "decoding time; early ones cannot reach the threshold)."),
    "hopeless_bleu": _key(NUMBER, 0.0, "Early stop of runs that cannot reach the bar: training stops at "
                          "the first evaluation at or after hopeless_after_steps whose best BLEU so far "
                          "is still below this (0 = off; docs/SCALE.md)."),
    "hopeless_after_steps": _key(int, 0, "The step from which hopeless_bleu applies (0 = off)."),
    "precision": _key(str, "auto", "auto (bf16 autocast on CUDA GPUs that support it, else fp32) | fp32 | "
                      "bf16 | fp16 (fp16 overflows the assignment's -1e10 attention mask)."),
}
# Allowed values of the profile's string keys (kept in step with mtkit.training).
PROFILE_CHOICES: dict[str, tuple[str, ...]] = {
    "lr_schedule": ("constant", "inverse_sqrt", "linear", "cosine"),
    "precision": ("auto", "fp32", "bf16", "fp16"),
}

# Scalar sections. Parts and profiles are validated by their own rules below.
SCHEMA: dict[str, dict[str, Key]] = {
    "assignment": {
        "name": _key(str, "Transformer, Part 2", "Shown in reports."),
    },
    "data": {
        "local_dir": _key(OPTIONAL_STR, None, "Directory of raw Multi30k files; null: "
                          "$MULTI30K_DIR, else the Hugging Face dataset bentrevett/multi30k."),
        "tokenizer": _key(str, "blank", "blank (spacy.blank) or model (installed spaCy models)."),
        "max_length": _key(int, 50, "Training pairs longer than this (with <sos>/<eos>) are dropped."),
        "cache_dir": _key(OPTIONAL_STR, None, "Prepared-data cache; null: $MTKIT_CACHE_DIR or "
                          "~/.cache/mtkit."),
    },
    "worker": {
        "timeout_s": _key(NUMBER, 30, "Seconds one request to the sandboxed worker may take."),
        "startup_timeout_s": _key(NUMBER, 60, "Seconds for loading a submission in the worker."),
        "memory_mb": _key(int, 4096, "Address-space limit of the worker process."),
        "output_bytes": _key(int, 200_000, "Student output kept per worker; the rest is cut."),
        "threads": _key(int, 1, "Torch threads inside the worker."),
        "isolation": _key(str, "auto", "auto: the root jail when the grader is root, else the jail "
                          "without root (bubblewrap, unprivileged user namespaces); grading is refused "
                          "when neither can be made. namespace | userns: only that jail. weak: a jail "
                          "when possible, else only the audit hook (best effort; every report says "
                          "so). See docs/SECURITY.md."),
        "reply_mb": _key(int, 256, "Largest reply the worker may send (MB); a larger one is refused "
                         "unread and fails its request (bounds the grader's memory)."),
    },
    "grading": {
        "seed": _key(int, 0, "Seed of every generated test case."),
        "jobs": _key(int, 1, "Submissions graded in parallel."),
        "out_dir": _key(str, "grading-output", "Where reports are written."),
        "submission_budget_s": _key(NUMBER, 300, "Wall-clock budget for all unit parts of one "
                                    "submission (restarts replay the notebook's top-level code); "
                                    "parts not reached in it score 0 and say so. 0 = none. The "
                                    "training part has its own budget (time_budget_s)."),
        "max_notebook_mb": _key(NUMBER, 20, "Submissions larger than this are not read (0 points, a "
                                "message naming the limit); checked before reading the file."),
    },
    "feedback": {
        "language": _key(str, "ko", "Language of every student-facing message and report: ko | en."),
    },
    "training": {
        "enabled": _key(bool, False, "Grade the training part (trains the student's model)."),
        "mode": _key(str, "recipe", "recipe: the grader trains the submission with the profile. "
                     "student_hparams: the same, with the notebook's hyperparameter cell (within "
                     "hparam_bounds) in place of the profile's sizes, batch size, dropout, learning "
                     "rate and epochs. checkpoint: no training; the weights the student submits next "
                     "to the notebook are evaluated the same trusted way."),
        "threshold_bleu": _key(NUMBER, 0.2, "Corpus BLEU (0-1) needed for the training points."),
        "profile": _key(str, "auto", "auto (gpu if CUDA is available, else cpu) or a profile name."),
        "memory_mb": _key(int, 12288, "Address-space limit of the training worker."),
        "threads": _key(int, 2, "Torch threads of the training worker (CPU)."),
        "checkpoint_names": _key(list, list(DEFAULT_CHECKPOINT_NAMES),
                                 "checkpoint mode: file names looked for next to the notebook, first "
                                 "match wins; {stem} is the notebook's name without extension. Names "
                                 "without {stem} count only when the notebook is alone in its folder."),
        "checkpoint_max_mb": _key(NUMBER, 512, "checkpoint mode: larger checkpoint files are refused."),
        "memorisation_gap": _key(NUMBER, 0.05, "Largest validation - test BLEU gap (0-1) of the final "
                                 "weights; a larger one withholds the training points for a TA's review "
                                 "(docs/TRAINING_MODES.md: honest runs measured, what it cannot catch)."),
    },
}

TRAINING_MODES = ("recipe", "student_hparams", "checkpoint")
ISOLATION_LEVELS = ("auto", "namespace", "userns", "weak")

# training.hparam_bounds: the hyperparameter cell's names (as the template spells them) and the
# range a course allows for each; student_hparams and checkpoint modes read the cell.
HPARAM_BOUNDS: dict[str, Key] = {
    "embedding_dim": _key(list, [16, 1024], "Model width d (an integer)."),
    "feed_forward_dim": _key(list, [16, 4096], "Feed-forward hidden size (an integer)."),
    "num_heads": _key(list, [1, 16], "Attention heads (an integer dividing embedding_dim)."),
    "num_layers": _key(list, [1, 6], "Encoder and decoder layers, each (an integer)."),
    "batch_size": _key(list, [8, 512], "Sentence pairs per batch (an integer)."),
    "drop_prob": _key(list, [0.0, 0.5], "Dropout probability."),
    "learning_rate": _key(list, [1e-5, 1e-2], "Peak learning rate."),
    "epochs": _key(list, [1, 30], "Training epochs (an integer); the profile's time budget still "
                   "applies."),
}


def _check_scalar(path: str, key: Key, value: Any) -> None:
    # bool is an int subclass: don't let `true` pass as a number or a number as a bool.
    if isinstance(value, bool) and bool not in key.types:
        raise ConfigError(f"{path}: expected {_type_names(key.types)}, got a boolean")
    if not isinstance(value, key.types):
        raise ConfigError(f"{path}: expected {_type_names(key.types)}, got {type(value).__name__} "
                          f"({value!r})")


def _type_names(types: tuple[type, ...]) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true/false",
             type(None): "null", list: "a list"}
    return " or ".join(names.get(t, t.__name__) for t in types)


def _merge_section(path: str, schema: dict[str, Key], given: Any) -> dict[str, Any]:
    if given is None:
        given = {}
    if not isinstance(given, dict):
        raise ConfigError(f"{path}: expected a mapping, got {type(given).__name__}")
    unknown = sorted(set(given) - set(schema))
    if unknown:
        raise ConfigError(f"{path}.{unknown[0]}: unknown key (known: {', '.join(schema)})")
    merged = {}
    for name, key in schema.items():
        value = copy.deepcopy(given.get(name, key.default))   # defaults may be lists
        _check_scalar(f"{path}.{name}", key, value)
        merged[name] = value
    return merged


def _validate_parts(parts: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(parts, dict) or not parts:
        raise ConfigError("parts: expected a non-empty mapping of part name -> part")
    result = {}
    for name, part in parts.items():
        where = f"parts.{name}"
        if not isinstance(part, dict):
            raise ConfigError(f"{where}: expected a mapping with title, points, checks")
        unknown = sorted(set(part) - {"title", "points", "checks"})
        if unknown:
            raise ConfigError(f"{where}.{unknown[0]}: unknown key (known: title, points, checks)")
        title = part.get("title", name)
        _check_scalar(f"{where}.title", _key(str, "", ""), title)
        points = part.get("points")
        _check_scalar(f"{where}.points", _key(NUMBER, 0, ""), points)
        checks = part.get("checks")
        if not isinstance(checks, dict) or not checks:
            raise ConfigError(f"{where}.checks: expected a non-empty mapping of check -> points")
        for check, check_points in checks.items():
            _check_scalar(f"{where}.checks.{check}", _key(NUMBER, 0, ""), check_points)
            if check_points < 0:
                raise ConfigError(f"{where}.checks.{check}: points must not be negative")
        total = sum(checks.values())
        if abs(total - points) > 1e-9:
            raise ConfigError(f"{where}.points: is {points} but its checks add up to {total}")
        result[name] = {"title": title, "points": points, "checks": dict(checks)}
    all_checks = [c for p in result.values() for c in p["checks"]]
    duplicates = sorted({c for c in all_checks if all_checks.count(c) > 1})
    if duplicates:
        raise ConfigError(f"parts: check {duplicates[0]!r} is listed in more than one part")
    return result


def _validate_training(given: Any) -> dict[str, Any]:
    given = {} if given is None else given
    if not isinstance(given, dict):
        raise ConfigError("training: expected a mapping")
    scalars = {k: v for k, v in given.items() if k not in ("profiles", "hparam_bounds")}
    merged = _merge_section("training", SCHEMA["training"], scalars)
    if merged["mode"] not in TRAINING_MODES:
        raise ConfigError(f"training.mode: must be one of {', '.join(TRAINING_MODES)}, "
                          f"got {merged['mode']!r}")
    names = merged["checkpoint_names"]
    if not names or not all(isinstance(n, str) and n and "/" not in n and "\\" not in n for n in names):
        raise ConfigError("training.checkpoint_names: expected a non-empty list of plain file names")
    if merged["checkpoint_max_mb"] <= 0:
        raise ConfigError("training.checkpoint_max_mb: must be positive")
    merged["hparam_bounds"] = _validate_bounds(given.get("hparam_bounds"))
    profiles = given.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise ConfigError("training.profiles: expected a mapping of profile name -> settings")
    merged["profiles"] = {
        name: _merge_section(f"training.profiles.{name}", PROFILE_SCHEMA, settings)
        for name, settings in profiles.items()
    }
    for name, profile in merged["profiles"].items():
        if profile["embedding_dim"] % profile["num_heads"]:
            raise ConfigError(f"training.profiles.{name}.num_heads: must divide embedding_dim")
        for key, choices in PROFILE_CHOICES.items():
            if profile[key] not in choices:
                raise ConfigError(f"training.profiles.{name}.{key}: must be one of {', '.join(choices)}, "
                                  f"got {profile[key]!r}")
    if merged["profile"] != "auto" and merged["profile"] not in merged["profiles"]:
        raise ConfigError(f"training.profile: no profile named {merged['profile']!r}")
    return merged


def _validate_bounds(given: Any) -> dict[str, list[float]]:
    merged = _merge_section("training.hparam_bounds", HPARAM_BOUNDS, given)
    for name, bounds in merged.items():
        where = f"training.hparam_bounds.{name}"
        if (len(bounds) != 2 or any(isinstance(b, bool) or not isinstance(b, NUMBER) for b in bounds)
                or bounds[0] > bounds[1]):
            raise ConfigError(f"{where}: expected [min, max] numbers with min <= max, got {bounds!r}")
    return merged


def validate(raw: Any) -> dict[str, Any]:
    """Check a parsed grader.yml and fill in defaults.

    Args:
        raw: the YAML document as parsed (a mapping).

    Returns:
        The complete configuration: every section with every key.

    Raises:
        ConfigError: naming the first offending key.
    """
    if not isinstance(raw, dict):
        raise ConfigError("grader.yml: expected a mapping at the top level")
    known = set(SCHEMA) | {"parts"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown section (known: {', '.join(sorted(known))})")
    config = {name: _merge_section(name, schema, raw.get(name))
              for name, schema in SCHEMA.items() if name != "training"}
    if config["worker"]["isolation"] not in ISOLATION_LEVELS:
        raise ConfigError(f"worker.isolation: must be one of {', '.join(ISOLATION_LEVELS)}, "
                          f"got {config['worker']['isolation']!r}")
    if config["worker"]["reply_mb"] < 1:
        raise ConfigError("worker.reply_mb: must be at least 1")
    if config["grading"]["submission_budget_s"] < 0:
        raise ConfigError("grading.submission_budget_s: must not be negative (0 = no budget)")
    config["training"] = _validate_training(raw.get("training"))
    if config["feedback"]["language"] not in FEEDBACK_LANGUAGES:
        raise ConfigError(f"feedback.language: must be one of {', '.join(FEEDBACK_LANGUAGES)}, "
                          f"got {config['feedback']['language']!r}")
    if config["grading"]["max_notebook_mb"] <= 0:
        raise ConfigError("grading.max_notebook_mb: must be positive")
    config["parts"] = _validate_parts(raw.get("parts"))
    return config


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read grader.yml, apply dotted-key overrides (from CLI flags) and validate.

    Args:
        path: the YAML file; None reads the project's grader.yml.
        overrides: e.g. {"worker.timeout_s": 5, "training.enabled": True}.

    Returns:
        The validated configuration (see `validate`).
    """
    path = Path(path) if path is not None else DEFAULT_CONFIG_PATH
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise ConfigError(f"{path}: file not found") from error
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from error
    raw = copy.deepcopy(raw)
    for dotted, value in (overrides or {}).items():
        _set_dotted(raw, dotted, value)
    return validate(raw)


def _set_dotted(raw: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = raw
    for name in parents:
        node = node.setdefault(name, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{dotted}: {name} is not a section")
    node[leaf] = value


def describe() -> str:
    """Render every key with its default and description (for `python -m autograder config`).

    Returns:
        Human-readable text, one key per line.
    """
    lines = []
    for section, schema in SCHEMA.items():
        for name, key in schema.items():
            lines.append(f"{section}.{name} = {key.default!r}\n    {key.description}")
    for name, key in HPARAM_BOUNDS.items():
        lines.append(f"training.hparam_bounds.{name} = {key.default!r}\n    {key.description}")
    for name, key in PROFILE_SCHEMA.items():
        lines.append(f"training.profiles.<name>.{name} = {key.default!r}\n    {key.description}")
    lines.append("parts.<part> = {title, points, checks: {check: points}}\n"
                 "    points must equal the sum of the part's check points.")
    return "\n".join(lines)
