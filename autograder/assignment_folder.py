"""An assignment folder as files: its assignment.yml (title, parts, manifest, data, settings model,
training part) and its grader.yml, read without importing the assignment's code."""

# The configuration loader reads these (autograder.config.loading); the loadable assignment
# (autograder.assignment) builds on them. Neither this module nor the loader imports the other way.

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from autograder.i18n import t

PROJECT_ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS_DIR = PROJECT_ROOT / "assignments"
# What `python -m autograder new-assignment NAME` copies (data files: `__NAME__` is NAME, and a
# `.txt` ending is dropped, so that its Python templates are not the engine's code).
SCAFFOLD_DIR = Path(__file__).resolve().parent / "scaffold"
ASSIGNMENT_FILE = "assignment.yml"  # title and parts, beside assignment.py
GRADER_FILE = "grader.yml"  # the settings a grading uses: the project's, or an assignment folder's own
DECLARED_FILE = "checks/declared.yml"  # the checks declared by kind (autograder/checks/declared.py)
# The checks of a module class: autograder.checks.modules.ModuleChecks' methods of that name.
MODULE_KINDS = ("builds", "parameters", "eval_output", "padding", "causal", "dropout", "gradients")
FUNCTION_KINDS = ("shape", "values")  # a function's output against the reference's
# The credit rule a kind implies (docs/SOUNDNESS.md); every other kind is paid behind the gate.
CREDIT_OF_KIND = {"values": "gate", "eval_output": "gate", "shape": "structure", "builds": "structure"}


class AssignmentError(Exception):
    """No such assignment, or its folder does not provide what the engine needs: the catalogue's
    message `key` (`assignment_error.*`, a TA's console reads it) with its fields."""

    def __init__(self, key: str, /, **fields: Any) -> None:
        super().__init__(t(key, **fields))


@dataclass(frozen=True)
class Manifest:
    """What ships from an assignment: assignment.yml's `ships:` section, read by every builder."""

    # Items of student_template/ that the assignment's build generates (Otter Assign's student output).
    student: tuple[str, ...] = ()
    # Folders and files (from the project root) the grader zips carry (Otter, Gradescope).
    grader: tuple[str, ...] = ()
    # Files (from the project root) vendored into student_template/.github/autograding/: the public
    # checks' runner, free of solutions.
    public_checks: tuple[str, ...] = ()
    # The assignment's folder below student_template/ and dist/ ("": their top level).
    student_dir: str = ""


def shipped_files(path: Path) -> list[Path]:
    """The file at `path`, or the files below the folder at `path` (sorted), without Python's
    compiled caches (`__pycache__/`, `.pyc`, `.pyo`): what is shipped or hashed of a manifest item.

    Args:
        path: a file or folder (a missing one has no files).

    Returns:
        The files.
    """
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    return [p for p in paths if "__pycache__" not in p.parts and p.suffix not in {".pyc", ".pyo"}]


def read_manifest(folder: Path) -> Manifest:
    """An assignment folder's manifest (assignment.yml `ships:`).

    Args:
        folder: assignments/<name>/.

    Returns:
        The manifest (empty lists for keys left out).

    Raises:
        AssignmentError: `ships` is not a mapping of lists of paths.
    """
    ships = dict(read_settings(folder).get("ships") or {})
    if not set(ships) <= {"student", "grader", "public_checks", "student_dir"}:
        raise AssignmentError("assignment_error.ships_keys", path=folder / ASSIGNMENT_FILE)
    student_dir = ships.pop("student_dir", "")
    if not isinstance(student_dir, str) or not (student_dir == "" or student_dir.isidentifier()):
        raise AssignmentError("assignment_error.student_dir", path=folder / ASSIGNMENT_FILE)
    lists: dict[str, tuple[str, ...]] = {}
    for key, items in ships.items():
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            raise AssignmentError("assignment_error.ships_list", path=folder / ASSIGNMENT_FILE, key=key)
        lists[key] = tuple(items)
    return Manifest(**lists, student_dir=student_dir)


@dataclass(frozen=True)
class BundledData:
    """Data an assignment's grading reads, which a grader zip may bundle (assignment.yml `data:`)."""

    env: str  # the environment variable the assignment's code reads the folder from
    bundled: str  # where a zip carries the folder, relative to the grader's root (e.g. data/<name>)
    # File-name stems (the part before the first dot) the builders bundle; empty: every file.
    files: tuple[str, ...] = ()

    def environment(self, root: Path, environ: Mapping[str, str]) -> dict[str, str]:
        """The variable to set so that grading reads the copy bundled under `root`.

        Args:
            root: the grader's root (the unpacked zip, or where setup copied its data).
            environ: the current environment (a variable already set wins).

        Returns:
            {env: folder}, or nothing when the variable is set or nothing is bundled there.
        """
        folder = root / self.bundled
        if environ.get(self.env) or not folder.is_dir():
            return {}
        return {self.env: str(folder)}


def read_bundled_data(folder: Path) -> BundledData | None:
    """An assignment folder's bundled-data declaration (assignment.yml `data:`).

    Args:
        folder: assignments/<name>/.

    Returns:
        The declaration, or None when the assignment reads no bundled data.

    Raises:
        AssignmentError: `data` is not {env: NAME, bundled: relative/path, files: [stems]}.
    """
    data = read_settings(folder).get("data")
    if data is None:
        return None
    where = f"{folder / ASSIGNMENT_FILE}: data"
    if not isinstance(data, dict) or not set(data) <= {"env", "bundled", "files"}:
        raise AssignmentError("assignment_error.data_mapping", where=where)
    env, bundled, files = data.get("env"), data.get("bundled"), data.get("files") or []
    if not isinstance(env, str) or not env.isidentifier():
        raise AssignmentError("assignment_error.data_env", where=where)
    path = Path(bundled) if isinstance(bundled, str) else None
    if path is None or path.is_absolute() or ".." in path.parts or not path.parts:
        raise AssignmentError("assignment_error.data_bundled", where=where)
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise AssignmentError("assignment_error.data_files", where=where)
    return BundledData(env=env, bundled=path.as_posix(), files=tuple(files))


def read_config_model(folder: Path) -> type | None:
    """The grader.yml model an assignment declares (assignment.yml `config: module:Class`).

    Only the named module is imported (a light settings module, not the assignment's code), so
    validating a configuration never loads its checks or models.

    Args:
        folder: assignments/<name>/.

    Returns:
        The class (the configuration loader checks that it derives from GraderConfig), or None
        when the assignment declares none (the core model applies).

    Raises:
        AssignmentError: `config` is not `module:Class`, or the class cannot be imported.
    """
    target = read_settings(folder).get("config")
    if target is None:
        return None
    where = f"{folder / ASSIGNMENT_FILE}: config"
    module_name, _, class_name = str(target).partition(":")
    if not (isinstance(target, str) and module_name and class_name.isidentifier()):
        raise AssignmentError("assignment_error.config_target", where=where, target=repr(target))
    try:
        model = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise AssignmentError("assignment_error.config_import", where=where, target=target, error=error) from None
    if not isinstance(model, type):
        raise AssignmentError("assignment_error.config_not_class", where=where, target=target)
    return model


def grader_yml_of(name: str) -> Path:
    """The grader.yml that grades an assignment: its folder's own, else the project's (the course's default).

    Args:
        name: the assignment folder's name.

    Returns:
        assignments/<name>/grader.yml when there is one, else the project's grader.yml.
    """
    own = ASSIGNMENTS_DIR / name / GRADER_FILE
    return own if name.isidentifier() and own.is_file() else PROJECT_ROOT / GRADER_FILE


def read_settings(folder: Path) -> dict[str, Any]:
    """An assignment folder's assignment.yml, its parts' credit rule filled in from checks/declared.yml.

    Args:
        folder: assignments/<name>/.

    Returns:
        The parsed mapping (empty when there is no file).

    Raises:
        AssignmentError: the file is not a YAML mapping.
    """
    path = folder / ASSIGNMENT_FILE
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise AssignmentError("config.not_yaml", path=path, error=error) from error
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise AssignmentError("assignment_error.top_not_mapping", path=path)
    # A part without its own credit rule takes the one its declared checks' kinds imply: what
    # compares outputs with the reference gates it, what an answer doing no work passes is its
    # structure, the rest is paid behind the gate (docs/SOUNDNESS.md); `credit:` overrides a kind.
    for name, declared in read_declared(folder).items():
        part = (data.get("parts") or {}).get(name)
        if isinstance(part, dict) and "gate" not in part:
            credit = {
                cid: spec.get("credit") or CREDIT_OF_KIND.get(spec["kind"]) for cid, spec in declared["checks"].items()
            }
            part.update({key: [cid for cid, rule in credit.items() if rule == key] for key in ("gate", "structure")})
    return data


def available_assignments() -> list[str]:
    """The assignment folders of this project (those with an assignment.yml).

    Returns:
        Folder names, sorted.
    """
    return sorted(p.parent.name for p in ASSIGNMENTS_DIR.glob(f"*/{ASSIGNMENT_FILE}"))  # none without the folder


def default_assignment_name() -> str:
    """The assignment a configuration that names none grades: the only one there is.

    Returns:
        Its folder name.

    Raises:
        AssignmentError: there are none, or several (grader.yml must then name one).
    """
    names = available_assignments()
    if len(names) != 1:
        raise AssignmentError("assignment_error.name_one", found=", ".join(names) or t("assignment_error.no_folders"))
    return names[0]


def read_training_part(folder: Path) -> str | None:
    """The part an assignment's training hook grades (assignment.yml `training_part`).

    Read as text, so that a configuration knows its training part without importing the
    assignment's code.

    Args:
        folder: assignments/<name>/.

    Returns:
        The part's name, or None when the assignment has no training part.

    Raises:
        AssignmentError: the key is there but not a part name.
    """
    part = read_settings(folder).get("training_part")
    if part is not None and not (isinstance(part, str) and part):
        raise AssignmentError("assignment_error.training_part", path=folder / ASSIGNMENT_FILE)
    return part


def read_declared(folder: Path) -> dict[str, dict[str, Any]]:
    """checks/declared.yml's parts, each check given as {kind: ..., ...} (empty: no file).

    Args:
        folder: assignments/<name>/.

    Returns:
        part -> its declaration, `checks` normalised to check id -> mapping with a `kind`.
    """
    path = folder / DECLARED_FILE
    if not path.is_file():
        return {}
    parts: dict[str, dict[str, Any]] = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("parts") or {}
    for name, part in parts.items():
        checks = {cid: spec if isinstance(spec, dict) else {"kind": spec} for cid, spec in part["checks"].items()}
        for cid, spec in checks.items():
            if spec.get("kind") not in (*MODULE_KINDS, *FUNCTION_KINDS):
                raise AssignmentError(
                    "assignment_error.unknown_kind", path=path, part=name, check=cid, kind=spec.get("kind")
                )
        part["checks"] = checks
    return parts


def write_scaffold(name: str, assignments_dir: Path = ASSIGNMENTS_DIR) -> Path:
    """Write a working minimal assignment: one graded function, its reference, a declared value
    check behind the credit gate, Korean and English messages and a master notebook.

    Args:
        name: the new folder's name (a Python identifier, not taken).
        assignments_dir: where to write it (the project's assignments/).

    Returns:
        The new folder.

    Raises:
        AssignmentError: the name is not an identifier, or the folder exists.
    """
    folder = assignments_dir / name
    if not name.isidentifier() or folder.exists():
        raise AssignmentError("assignment_error.new_folder", folder=folder)
    for template in sorted(p for p in SCAFFOLD_DIR.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        target = folder / str(template.relative_to(SCAFFOLD_DIR)).replace("__NAME__", name).removesuffix(".txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(template.read_text(encoding="utf-8").replace("__NAME__", name), encoding="utf-8")
    return folder
