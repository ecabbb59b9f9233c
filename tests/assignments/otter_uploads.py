"""Attack uploads for the Otter paths, graded three ways: `otter run`, the zip's run_otter.py, Gradescope."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from assignments.transformer_mt import build

REPO = build.REPO
PAYLOADS = REPO / "tests" / "fixtures" / "otter_uploads" / "payloads"
TEMPLATE = build.STUDENT_DIR / build.MASTER.name
CORRECT = REPO / "examples" / "correct_original_format.ipynb"
SUBPROCESS_TIMEOUT_S = 1200  # a loaded 2-core machine, several gradings at once


@dataclass
class Planted:
    """What an attack may reach: a marker folder it must not write to, a secret it must not read."""

    markers: Path
    secret: Path
    token: str

    def written(self) -> list[str]:
        """Markers the payloads left (empty when none of them ran)."""
        return sorted(p.name for p in self.markers.iterdir())


class _ExecOnLoad:
    """Unpickles to a call that writes a marker (Otter unpickles `.OTTER_LOG` as it finds it)."""

    def __init__(self, marker: Path) -> None:
        self.code = f"open({str(marker)!r}, 'w').write('ran')"

    def __reduce__(self) -> tuple:
        return exec, (self.code,)


def payload_upload(folder: Path, planted: Planted) -> Path:
    """The untouched template with Otter's state file and modules that shadow Otter's kernel's imports."""
    folder.mkdir(parents=True)
    shutil.copyfile(TEMPLATE, folder / TEMPLATE.name)
    for payload in sorted(PAYLOADS.glob("*.py")):
        text = payload.read_text(encoding="utf-8").replace("MARKER_DIR", str(planted.markers))
        (folder / payload.name).write_text(text, encoding="utf-8")
    (folder / ".OTTER_LOG").write_bytes(pickle.dumps(_ExecOnLoad(planted.markers / "pwned-otter-log")))
    return folder


def unparsable_notebook(target: Path) -> Path:
    """The correct example notebook as Otter's reader rejects it and the engine reads it: a byte-order
    mark, a cell without `metadata`, and a `metadata.otter` key Otter cannot validate."""
    notebook = json.loads(CORRECT.read_text(encoding="utf-8"))
    notebook["metadata"]["otter"] = {"assignment_name": 7}
    del notebook["cells"][0]["metadata"]
    target.write_bytes(b"\xef\xbb\xbf" + json.dumps(notebook, ensure_ascii=False).encode("utf-8"))
    return target


OTTER_REJECTS = ("bom", "cell-without-metadata", "otter-string", "otter-list")


def otter_rejected_notebook(source: Path, defects: Sequence[str], target: Path) -> Path:
    """A copy of `source` with things Otter's reader rejects and the engine reads (OTTER_REJECTS):
    a byte-order mark, a first cell without `metadata`, `metadata.otter` a string or a list."""
    notebook = json.loads(source.read_text(encoding="utf-8"))
    if "cell-without-metadata" in defects:
        del notebook["cells"][0]["metadata"]
    if "otter-string" in defects:
        notebook["metadata"]["otter"] = "transformer_mt"
    if "otter-list" in defects:
        notebook["metadata"]["otter"] = ["transformer_mt"]
    data = json.dumps(notebook, ensure_ascii=False).encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"\xef\xbb\xbf" + data if "bom" in defects else data)
    return target


def parse_upload(folder: Path, planted: Planted) -> Path:
    """An upload holding only the unparsable (but correct) notebook."""
    folder.mkdir(parents=True)
    unparsable_notebook(folder / "hw.ipynb")
    return folder


def make_fake_engine(root: Path, planted: Planted) -> None:
    """A student-made `source/` engine beside a `submission/` folder: running it leaves a marker."""
    (root / "source" / "autograder").mkdir(parents=True)
    shutil.copyfile(REPO / "grader.yml", root / "source" / "grader.yml")
    for name in ("__init__.py", "cli.py"):
        (root / "source" / "autograder" / name).write_text("")
    (root / "source" / "autograder" / "__main__.py").write_text(
        f"open({str(planted.markers / 'pwned-fake-engine')!r}, 'w').write('ran')\n"
    )
    (root / "submission").mkdir()


def link_upload(folder: Path, planted: Planted) -> Path:
    """Links in an upload: the notebook a symlink into a tree with a fake engine (the correct example,
    so following it would score), a .py linked to the reference solution, a hard link to a secret."""
    folder.mkdir(parents=True)
    fake = folder.parent.parent / f"{folder.parent.name}-elsewhere"
    make_fake_engine(fake, planted)
    shutil.copyfile(CORRECT, fake / "submission" / "hw.ipynb")
    (folder / "hw.ipynb").symlink_to(fake / "submission" / "hw.ipynb")
    (folder / "model.py").symlink_to(REPO / "assignments" / "transformer_mt" / "reference" / "model.py")
    os.link(planted.secret, folder / "notes.py")
    return folder


UPLOADS = {"payloads": payload_upload, "parse": parse_upload, "links": link_upload}
Builder = Callable[[Path, Planted], Path]  # builds an upload in a new folder (links made in place)


def _env(multi30k_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    return {**env, "MULTI30K_DIR": str(multi30k_dir), "OMP_WAIT_POLICY": "PASSIVE", **extra}


def _scores(document: dict) -> dict[str, float]:
    return {test["name"]: test.get("score", 0) for test in document.get("tests", [])}


@dataclass
class Outcome:
    """One grading of one upload on one path."""

    path: str
    scores: dict[str, float]  # test/question name -> points
    document: dict  # results.json as written
    seconds: float
    log: str

    @property
    def total(self) -> float:
        """The points Gradescope would record."""
        return float(self.document.get("score", sum(self.scores.values())))


# `python -m otter` in an interpreter whose site directories include argv[1] (the installed
# project: its .pth runs as it would from site-packages).
OTTER_WITH_SITE = (
    "import runpy, site, sys; site.addsitedir(sys.argv.pop(1)); "
    "runpy.run_module('otter', run_name='__main__', alter_sys=True)"
)
# Otter as it behaves without this project's start-up hook, even where the environment has it
# installed (`make setup`, CI): the hook's finder is taken off sys.meta_path before Otter loads.
OTTER_WITHOUT_HOOK = (
    "import runpy, sys; "
    "sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, 'is_otter_runner_hook', False)]; "
    "runpy.run_module('otter', run_name='__main__', alter_sys=True)"
)


def otter_run(
    upload: Path,
    autograder_zip: Path,
    work: Path,
    multi30k_dir: Path,
    site_dir: Path | None = None,
    without_hook: bool = False,
    as_user: Callable[[list[str]], list[str]] | None = None,
    env: dict[str, str] | None = None,
) -> Outcome:
    """`otter run -a <zip> <upload>` from the project root, with no PYTHONPATH.

    Args:
        upload: a notebook or a zip of the upload's files.
        autograder_zip: the autograder zip.
        work: the output folder (results.json).
        multi30k_dir: the raw Multi30k folder.
        site_dir: an installed copy of the project to add as a site directory (None: none).
        without_hook: run Otter with the project's start-up hook removed (Otter's own behaviour).
        as_user: turns the command line into one run as another user (None: as this process).
        env: the environment (None: this process's, without PYTHONPATH); MULTI30K_DIR is added.

    Returns:
        The outcome (an empty document when Otter wrote no results.json).
    """
    work.mkdir(parents=True, exist_ok=True)
    otter = [sys.executable, "-m", "otter"]
    if site_dir is not None:
        otter = [sys.executable, "-c", OTTER_WITH_SITE, str(site_dir)]
    if without_hook:
        otter = [sys.executable, "-c", OTTER_WITHOUT_HOOK]
    arguments = ["-a", str(autograder_zip), "-o", str(work), "--no-logo", str(upload)]
    command = [*otter, "run", *arguments]
    started = time.monotonic()
    done = subprocess.run(
        as_user(command) if as_user is not None else command,
        cwd=REPO,
        env={**env, "MULTI30K_DIR": str(multi30k_dir)} if env is not None else _env(multi30k_dir),
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    document = json.loads((work / "results.json").read_text()) if (work / "results.json").is_file() else {}
    return Outcome("otter run", _scores(document), document, time.monotonic() - started, done.stdout + done.stderr)


def run_otter_cli(builder: Builder, planted: Planted, autograder_zip: Path, work: Path, multi30k_dir: Path) -> Outcome:
    """`python -m otter run -a <zip> <upload.zip>` from the project root, with no PYTHONPATH."""
    upload = builder(work / "upload", planted)
    archive = work / "upload.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in sorted(upload.rglob("*")):
            handle.write(path, path.relative_to(upload).as_posix())
    return otter_run(archive, autograder_zip, work, multi30k_dir)


def run_zip_entry(builder: Builder, planted: Planted, autograder_zip: Path, work: Path, multi30k_dir: Path) -> Outcome:
    """The zip's run_otter.py (what run_autograder starts on Gradescope and in `otter grade`) in a
    copy of Gradescope's /autograder layout."""
    root = work / "autograder"
    (root / "results").mkdir(parents=True)
    with zipfile.ZipFile(autograder_zip) as handle:
        handle.extractall(root / "source")
    (root / "submission_metadata.json").write_text("{}")
    builder(root / "submission", planted)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(root / "source" / build.RUN_OTTER)],
        cwd=work,
        env=_env(multi30k_dir),
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    path = root / "results" / "results.json"
    document = json.loads(path.read_text()) if path.is_file() else {}
    return Outcome(
        "zip run_otter.py", _scores(document), document, time.monotonic() - started, done.stdout + done.stderr
    )


def run_gradescope(builder: Builder, planted: Planted, work: Path, multi30k_dir: Path) -> Outcome:
    """The project's Gradescope entry point (autograder/integrations/gradescope/run.py)."""
    submission = builder(work / "submission", planted)
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder.integrations.gradescope.run",
            "--submission-dir",
            str(submission),
            "--results",
            str(work / "results.json"),
        ],
        cwd=REPO,
        env=_env(multi30k_dir),
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    path = work / "results.json"
    document = json.loads(path.read_text()) if path.is_file() else {}
    return Outcome(
        "gradescope run.py", _scores(document), document, time.monotonic() - started, done.stdout + done.stderr
    )


def run_cli(notebook: Path, work: Path, multi30k_dir: Path) -> float:
    """`python -m autograder grade` on one file; returns its points."""
    work.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(notebook), "--out", str(work), "--quiet"],
        cwd=REPO,
        env=_env(multi30k_dir),
        check=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    return float(json.loads((work / f"{notebook.stem}.json").read_text())["points"])


def run_cli_many(notebooks: Sequence[Path], work: Path, multi30k_dir: Path) -> dict[str, float]:
    """`python -m autograder grade` on several files at once; returns points by file stem."""
    work.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *map(str, notebooks), "--out", str(work), "--quiet"],
        cwd=REPO,
        env=_env(multi30k_dir),
        check=True,
        timeout=SUBPROCESS_TIMEOUT_S,
    )
    return {path.stem: float(json.loads((work / f"{path.stem}.json").read_text())["points"]) for path in notebooks}
