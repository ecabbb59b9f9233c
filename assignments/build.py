"""Build an assignment's student template and Otter autograder zip from its master notebook (`make template`)."""

# Usage: python -m assignments.build --assignment NAME            # write student_template/ and dist/
#        python -m assignments.build --assignment NAME --data DIR # ... and bundle Multi30k into the zip
#        python -m assignments.build --assignment NAME --check    # exit 1 if its template is stale
# (python assignments/transformer_mt/build.py is the same for Part 2.) Everything per assignment
# comes from its assignment.yml `ships:` manifest: the master is assignments/NAME/NAME.ipynb, the
# template goes to student_template/<student_dir>/, the zip to dist/<student_dir>/autograder.zip.

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script (python assignments/transformer_mt/build.py)
    sys.path.insert(0, str(REPO))

from autograder.assignment_folder import (  # noqa: E402
    ASSIGNMENTS_DIR,
    AssignmentError,
    grader_yml_of,
    read_bundled_data,
    read_manifest,
    shipped_files,
)
from autograder.cli_table import parse_command  # noqa: E402
from autograder.notebook import ASSIGNMENT_METADATA  # noqa: E402

DEFAULT_ASSIGNMENT = "transformer_mt"  # also the default of --assignment (autograder/cli_flags.yml)
ZIP_NAME = "autograder.zip"
GRADER_YML = "grader.yml"
# Items Otter Assign writes itself (the public tests); the others of `ships.student` besides the
# notebook are project folders staged beside the master (Part 2's mtkit/).
GENERATED_ITEMS = ("tests",)
TORCH_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
# What the project puts into Otter's zip (container/otter-zip/, docs/OTTER.md): its own run_otter.py, which
# takes the upload out of Otter's reach before Otter's runner starts (autograder/integrations/otter_upload.py),
# and a prelude before Otter's setup.sh and run_autograder that uses the project's grading image when the zip
# runs on it (nothing is downloaded there; Otter's own lines run on any other image). `otter grade` builds its
# image with Otter's Dockerfile, which copies only some of the zip's files into /autograder/source (setup.sh,
# environment.yml, requirements.*): the engine also goes in as a tar archive under a name that matches, which
# Docker's ADD unpacks there, the layout Gradescope gives.
OTTER_ZIP_DIR = REPO / "container" / "otter-zip"
RUN_OTTER = "run_otter.py"
PRELUDES = ("setup.sh", "run_autograder")
ENGINE_TAR = "requirements.engine.tar"


@dataclass(frozen=True)
class Target:
    """One assignment's build, as its manifest (assignment.yml `ships:`) describes it."""

    name: str
    master: Path  # assignments/<name>/<name>.ipynb, the Otter Assign master
    student_dir: Path  # student_template/<ships.student_dir>/
    dist_dir: Path  # dist/<ships.student_dir>/
    student_items: tuple[str, ...]  # what the generated student folder holds; others are left alone
    # The engine goes to the zip's root (/autograder/source on Gradescope), NOT through Otter's
    # `files`, which Otter copies into the submission folder next to the student's notebook.
    engine_items: tuple[str, ...]  # folders first, then files


def target(name: str = DEFAULT_ASSIGNMENT) -> Target:
    """The build of one assignment.

    Args:
        name: the assignment's folder name.

    Returns:
        Its paths and lists, from its manifest.
    """
    manifest = read_manifest(ASSIGNMENTS_DIR / name)
    return Target(
        name=name,
        master=ASSIGNMENTS_DIR / name / f"{name}.ipynb",
        student_dir=REPO / "student_template" / manifest.student_dir,
        dist_dir=REPO / "dist" / manifest.student_dir,
        student_items=manifest.student,
        engine_items=tuple(sorted(manifest.grader, key=lambda item: not (REPO / item).is_dir())),
    )


PART = target()  # the default assignment's build (the names below keep its old module interface)
MASTER = PART.master
STUDENT_DIR = PART.student_dir


def requirements_text(lock: Path = REPO / "requirements.lock") -> str:
    """The zip's pip requirements: the project's exact freeze (CPU torch from PyTorch's index).

    Args:
        lock: the project's requirements.lock.

    Returns:
        requirements.txt text for Otter (`overwrite_requirements: true` in the master config).
    """
    pins = [
        line.strip()
        for line in lock.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not any(pin.startswith("torch==") for pin in pins):
        raise SystemExit(f"{lock}: expected an exact torch pin (torch==...)")
    return "\n".join([TORCH_INDEX, *pins]) + "\n"


def stage(workdir: Path, part: Target = PART) -> Path:
    """Copy the master notebook, the project items of the student folder that Otter does not write
    (Part 2: mtkit/) and requirements.txt into one folder (Otter Assign needs every listed file
    below the master's folder).

    Args:
        workdir: an empty scratch folder.
        part: the assignment's build.

    Returns:
        The staged master notebook's path.
    """
    folder = workdir / "stage"
    folder.mkdir(parents=True)
    shutil.copyfile(part.master, folder / part.master.name)
    for item in part.student_items:
        if item == part.master.name or item in GENERATED_ITEMS:
            continue
        if (REPO / item).is_dir():
            shutil.copytree(REPO / item, folder / item, ignore=IGNORED)
        else:  # a file, possibly inside a folder (Part 1's mtkit/otter_checks.py)
            (folder / item).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / item, folder / item)
    (folder / "requirements.txt").write_text(requirements_text(), encoding="utf-8")
    return folder / part.master.name


def run_assign(workdir: Path, part: Target = PART) -> Path:
    """Run `otter assign` on a staged copy of the master notebook, and write the globals the grader
    provides beside its public tests (the public checks read them).

    Args:
        workdir: an empty scratch folder.
        part: the assignment's build (its `Assignment.grader_globals`).

    Returns:
        Otter's output folder (with `student/` and `autograder/`).
    """
    from autograder.assignment import load_assignment
    from autograder.config import load_config
    from autograder.i18n import t
    from autograder.integrations.public_checks import GLOBALS_FILE, LIBRARY_CALLS_FILE
    from mtkit.otter_checks import KEYS, WORDS_FILE

    staged = stage(workdir, part)
    out = workdir / "out"
    # The plugin named in the master's config is imported during generation: put the repo on the path.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    completed = subprocess.run(
        [sys.executable, "-m", "otter", "assign", "--no-pdfs", "--no-run-tests", str(staged), str(out)],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
    )
    if completed.returncode != 0:
        raise SystemExit(f"otter assign failed:\n{completed.stdout}\n{completed.stderr}")
    provided = dict(load_assignment(part.name).grader_globals)
    text = json.dumps(provided, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    (out / "student" / "tests" / GLOBALS_FILE).write_text(text, encoding="utf-8")
    config = load_config(overrides={"assignment.name": part.name})
    calls = list(dict.fromkeys(name for part_config in config.parts.values() for name in part_config.forbidden_calls))
    (out / "student" / "tests" / LIBRARY_CALLS_FILE).write_text(json.dumps(calls, indent=1) + "\n", encoding="utf-8")
    # grader.check's words (mtkit/otter_checks.py), in the course's language: the student has no catalogue.
    words = {key: t(f"otter.check.{key}", language=config.feedback.language) for key in KEYS}
    text = json.dumps(words, indent=1, ensure_ascii=False) + "\n"
    (out / "student" / "tests" / WORDS_FILE).write_text(text, encoding="utf-8")
    return out


def package_zip(otter_zip: Path, destination: Path, data_dir: Path | None = None, part: Target = PART) -> list[str]:
    """Write the final autograder zip: Otter's files plus the engine at the root.

    Otter's test files are dropped (an empty tests/ folder stays, as Otter requires one): the
    grading plugin replaces their results anyway, and running them would only cost time.

    Args:
        otter_zip: the zip `otter assign` wrote.
        destination: where to write the final zip.
        data_dir: the assignment's data files to bundle where its assignment.yml `data:` says
            (offline training grading; the plugin points the assignment's variable there when the
            grading machine sets none).
        part: the assignment's build (its grader items; the zip's grader.yml is its grader.yml).

    Returns:
        The archive names written.
    """
    data = read_bundled_data(ASSIGNMENTS_DIR / part.name) if data_dir else None
    if data_dir and data is None:
        raise AssignmentError("assignment_error.no_data", name=repr(part.name))
    destination.parent.mkdir(parents=True, exist_ok=True)
    names = []
    with zipfile.ZipFile(otter_zip) as source, zipfile.ZipFile(destination, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename.startswith("tests/") or info.filename == RUN_OTTER:
                continue
            prelude = (OTTER_ZIP_DIR / info.filename).read_bytes() if info.filename in PRELUDES else b""
            target.writestr(info, prelude + source.read(info))
            names.append(info.filename)
        target.writestr(zipfile.ZipInfo("tests/"), b"")
        target.writestr(RUN_OTTER, (OTTER_ZIP_DIR / RUN_OTTER).read_text(encoding="utf-8"))
        names.append(RUN_OTTER)
        engine = io.BytesIO()
        with tarfile.open(fileobj=engine, mode="w") as tar:
            for path in (path for item in part.engine_items for path in shipped_files(REPO / item)):
                name = path.relative_to(REPO).as_posix()
                # The zip's grader.yml is the assignment's own (the project's for the course's default).
                target.write(grader_yml_of(part.name) if name == GRADER_YML else path, name)
                tar.add(grader_yml_of(part.name) if name == GRADER_YML else path, name)
                names.append(name)
        target.writestr(ENGINE_TAR, engine.getvalue())
        bundled = data.bundled if data_dir and data else ""
        for path in sorted(data_dir.iterdir()) if data_dir and bundled else []:
            if path.is_file():
                target.write(path, f"{bundled}/{path.name}")
                names.append(f"{bundled}/{path.name}")
    return names


def normalized_notebook(path: Path, assignment: str | None = None) -> dict:
    """A notebook's JSON with position-based cell ids (Otter gives its check cells random ids).

    Args:
        path: an .ipynb file.
        assignment: stamp this assignment's name into the notebook's metadata
            (`autograder.notebook.ASSIGNMENT_METADATA`), so that grading it as another assignment is
            refused with a message naming the right one; None leaves the metadata as it is.

    Returns:
        The parsed notebook, cell ids replaced by "cell-000", "cell-001", ...
    """
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if "id" in cell:
            cell["id"] = f"cell-{index:03d}"
    if assignment is not None:
        notebook.setdefault("metadata", {})[ASSIGNMENT_METADATA] = {"assignment": assignment}
    return notebook


def write_notebook(source: Path, target: Path, assignment: str | None = None) -> None:
    """Copy a generated notebook with stable cell ids (so that rebuilding changes nothing), stamped
    with `assignment`'s name when given (see `normalized_notebook`)."""
    notebook = normalized_notebook(source, assignment)
    target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_student(generated: Path, destination: Path = STUDENT_DIR, part: Target = PART) -> None:
    """Replace the generated items of the student template (notebook, tests/, Part 2's mtkit/).

    Args:
        generated: Otter's `student/` output folder.
        destination: the committed student template folder.
        part: the assignment's build (its student items).
    """
    destination.mkdir(parents=True, exist_ok=True)
    for item in part.student_items:
        source, target = generated / item, destination / item
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=IGNORED)
        elif source.suffix == ".ipynb":
            write_notebook(source, target, part.name)
        else:
            shutil.copyfile(source, target)


def _student_files(folder: Path, part: Target) -> dict[str, Path]:
    return {p.relative_to(folder).as_posix(): p for item in part.student_items for p in shipped_files(folder / item)}


def stale_files(generated: Path, committed: Path | None = None, part: Target = PART) -> list[str]:
    """Differences between a fresh student output and the committed template.

    Notebooks are compared as parsed JSON (formatting aside), other files byte for byte.

    Args:
        generated: a freshly generated student folder.
        committed: the committed student template (None: the assignment's).
        part: the assignment's build.

    Returns:
        One line per missing, extra or differing file; empty when up to date.
    """
    committed = part.student_dir if committed is None else committed
    new, old = _student_files(generated, part), _student_files(committed, part)
    problems = [f"missing: {name}" for name in sorted(set(new) - set(old))]
    problems += [f"not generated any more: {name}" for name in sorted(set(old) - set(new))]
    for name in sorted(set(new) & set(old)):
        if name.endswith(".ipynb"):
            same = normalized_notebook(new[name], part.name) == normalized_notebook(old[name])
        else:
            same = new[name].read_bytes() == old[name].read_bytes()
        if not same:
            problems.append(f"differs: {name}")
    return problems


def build(
    student_dir: Path | None = None, dist_dir: Path | None = None, data_dir: Path | None = None, part: Target = PART
) -> dict[str, Path]:
    """Run the whole build.

    Args:
        student_dir: where the student template goes (None: the assignment's).
        dist_dir: where the autograder zip and the solution notebook go (None: the assignment's).
        data_dir: raw Multi30k files to bundle into the zip (see `package_zip`).
        part: the assignment's build.

    Returns:
        {"zip", "solution", "student"} paths.
    """
    student_dir = part.student_dir if student_dir is None else student_dir
    dist_dir = part.dist_dir if dist_dir is None else dist_dir
    with tempfile.TemporaryDirectory(prefix="otter-assign-") as tmp:
        out = run_assign(Path(tmp), part=part)
        otter_zips = sorted((out / "autograder").glob("*.zip"))
        if len(otter_zips) != 1:
            raise SystemExit(f"expected one autograder zip from otter assign, found {len(otter_zips)}")
        zip_path = dist_dir / ZIP_NAME
        package_zip(otter_zips[0], zip_path, data_dir, part)
        dist_dir.mkdir(parents=True, exist_ok=True)
        solution = dist_dir / f"{part.name}_solution.ipynb"
        write_notebook(out / "autograder" / part.master.name, solution, part.name)
        write_student(out / "student", student_dir, part)
    return {"zip": zip_path, "solution": solution, "student": student_dir}


def main(argv: list[str] | None = None) -> int:
    """Command line entry point.

    Args:
        argv: arguments after the program name.

    Returns:
        The exit status (1 when --check finds the template stale).
    """
    args = parse_command("assignments.build", argv, prog="python -m assignments.build")
    part = target(args.assignment)
    if args.check:
        with tempfile.TemporaryDirectory(prefix="otter-check-") as tmp:
            problems = stale_files(run_assign(Path(tmp), part=part) / "student", part=part)
        where = part.student_dir.relative_to(REPO).as_posix()
        for problem in problems:
            print(f"stale {where}/: {problem} (run `make template`)")
        return 1 if problems else 0
    paths = build(data_dir=args.data, part=part)
    for key, path in paths.items():
        print(f"{key}: {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
