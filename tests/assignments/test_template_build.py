"""`otter assign` builds the template and zip; the template is current, stubbed, and free of hidden material."""

from __future__ import annotations

import ast
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from assignments.transformer_mt import build
from autograder.assignment_folder import ASSIGNMENTS_DIR, read_bundled_data

REPO = build.REPO
STUDENT = build.STUDENT_DIR
QUESTIONS = ("q1", "q2", "q3", "q4", "q5")
# Reference definitions that are graded parts (their bodies are the solution).
GRADED_REFERENCE = {
    "assignments/transformer_mt/reference/model.py": ("DecoderLayer", "Decoder", "Transformer.forward"),
    "assignments/transformer_mt/reference/masks.py": ("create_look_ahead_mask_for_attention",),
    "assignments/transformer_mt/reference/loss.py": ("calculate_loss",),
}


def _statements(tree: ast.AST) -> set[str]:
    """Every statement below `tree` (nested ones too), unparsed, docstrings and short ones left out."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            text = ast.unparse(node)
            if len(text) >= 25 and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                found.add(text.splitlines()[0] if isinstance(node, (ast.For, ast.If, ast.With, ast.While)) else text)
    return found


def _definitions(tree: ast.Module, names: tuple[str, ...]) -> tuple[list[ast.AST], list[ast.AST]]:
    """Split a module's top-level definitions (and methods) into the named ones and the rest."""
    chosen: list[ast.AST] = []
    rest: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name not in names:
            methods = [m for m in node.body if isinstance(m, ast.FunctionDef)]
            for method in methods:
                (chosen if f"{node.name}.{method.name}" in names else rest).append(method)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            (chosen if node.name in names else rest).append(node)
    return chosen, rest


def reference_solution_statements() -> set[str]:
    """Statements of the reference's graded parts that its given (ungraded) code does not also use."""
    graded, given = set(), set()
    for relative, names in GRADED_REFERENCE.items():
        chosen, rest = _definitions(ast.parse((REPO / relative).read_text(encoding="utf-8")), names)
        for node in chosen:
            graded |= _statements(node)
        for node in rest:
            given |= _statements(node)
    return graded - given


def hidden_check_lines() -> set[str]:
    """Distinctive code lines of the hidden checks (assignments/transformer_mt/checks/); signatures (the public
    interface) are left out, and the caller removes lines of the master's given code."""
    lines = set()
    for path in (REPO / "assignments" / "transformer_mt" / "checks").glob("*.py"):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.strip()
            if len(text) >= 30 and not text.startswith(("#", "import ", "from ", '"""', "def ", "class ")):
                lines.add(text)
    return lines


def check_ids() -> set[str]:
    """The hidden checks' ids (the assignment's assignment.yml)."""
    parts = yaml.safe_load((REPO / "assignments" / "transformer_mt" / "assignment.yml").read_text(encoding="utf-8"))[
        "parts"
    ]
    return {check for part in parts.values() for check in part["checks"]}


def student_code(path: Path) -> list[str]:
    """The Python sources of a student file: a notebook's code cells, or the file itself."""
    if path.suffix == ".ipynb":
        return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    return [path.read_text(encoding="utf-8")] if path.suffix == ".py" else []


def master_code_lines() -> tuple[set[str], set[str]]:
    """(solution lines, given lines) of the master's code cells, stripped: solution lines are those
    between `# BEGIN SOLUTION` / `# END SOLUTION` comments or ending in `# SOLUTION`; given lines are
    the rest, except public test cells."""
    solution, given = set(), set()
    in_tests = False
    for cell in nbformat.read(build.MASTER, as_version=4).cells:
        if cell.cell_type == "raw":
            in_tests = cell.source.startswith("# BEGIN TESTS") or (
                in_tests and not cell.source.startswith("# END TESTS")
            )
        if cell.cell_type != "code" or in_tests:
            continue
        inside = False
        for line in cell.source.splitlines():
            text = line.strip()
            if text in ("# BEGIN SOLUTION", "# END SOLUTION"):
                inside = text == "# BEGIN SOLUTION"
            elif inside or text.endswith("# SOLUTION"):
                solution.add(text.removesuffix("# SOLUTION").strip())
            else:
                given.add(text)
    return solution, given


def test_otter_assign_builds_both_versions(assign_out: Path) -> None:
    student, autograder = assign_out / "student", assign_out / "autograder"
    assert (student / "transformer_mt.ipynb").is_file()
    assert sorted(p.name for p in (student / "tests").glob("*.py")) == [f"{q}.py" for q in QUESTIONS]
    assert (student / "mtkit" / "decoding.py").is_file()
    assert len(list(autograder.glob("*.zip"))) == 1
    assert not [p for p in ("reference", "assignments", "autograder") if (student / p).exists()]


def test_student_template_is_up_to_date(assign_out: Path) -> None:
    problems = build.stale_files(assign_out / "student")
    assert not problems, f"student_template/ is stale, run `make template`: {problems}"


def test_stale_template_is_detected(assign_out: Path, tmp_path: Path) -> None:
    copy = tmp_path / "student_template"
    shutil.copytree(STUDENT, copy)
    notebook = nbformat.read(copy / "transformer_mt.ipynb", as_version=4)
    notebook.cells[1].source += "\nedited"
    nbformat.write(notebook, copy / "transformer_mt.ipynb")
    (copy / "tests" / "q3.py").unlink()
    problems = build.stale_files(assign_out / "student", copy)
    assert "differs: transformer_mt.ipynb" in problems and "missing: tests/q3.py" in problems


def test_graded_stubs_are_empty() -> None:
    notebook = nbformat.read(STUDENT / "transformer_mt.ipynb", as_version=4)
    answers = [cell.source for cell in notebook.cells if "otter_answer_cell" in cell.metadata.get("tags", [])]
    assert len(answers) == 7, "mask, DecoderLayer, Decoder, Transformer, train step, loss, hyperparameters"
    solution, given = master_code_lines()
    assert len(solution) >= 30, "the master lost its solution markers"
    leaked = {
        line
        for source in answers
        for line in map(str.strip, source.splitlines())
        if line in solution - given and len(line) > 3
    }
    assert not leaked, f"solution lines in the student notebook: {sorted(leaked)[:5]}"
    stubs = {
        "create_look_ahead_mask_for_attention",
        "DecoderLayer.__init__",
        "DecoderLayer.forward",
        "Decoder.__init__",
        "Decoder.forward",
        "Transformer.forward",
        "calculate_loss",
        "process_batch_for_train",
    }
    found = set()
    for source in answers:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            for child in getattr(node, "body", []):
                if isinstance(child, ast.FunctionDef):
                    name = child.name if isinstance(node, ast.Module) else f"{getattr(node, 'name', '')}.{child.name}"
                    has_blank = any(isinstance(n, ast.Constant) and n.value is Ellipsis for n in ast.walk(child))
                    if name in stubs:
                        assert has_blank, f"{name} has no `...` blank in the student notebook"
                        found.add(name)
    assert found == stubs
    hyperparameters = ast.parse(answers[-1])
    assert all(isinstance(s.value, ast.Constant) and s.value.value is Ellipsis for s in hyperparameters.body)


def find_leaks(folder: Path) -> list[str]:
    """Hidden-check code, check ids, grader imports or reference solution code found under a folder."""
    files = [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    leaks = [
        f"{p.relative_to(folder)}: grader folder"
        for p in files
        if {"reference", "checks"} & set(p.relative_to(folder).parts) or p.name == "grader.yml"
    ]
    solution = reference_solution_statements()
    assert len(solution) >= 10, "the leak test lost its reference statements"
    hidden_lines, ids = hidden_check_lines() - master_code_lines()[1], check_ids()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        where = path.relative_to(folder)
        leaks += [f"{where}: hidden-check line {line!r}" for line in hidden_lines if line in text]
        leaks += [f"{where}: names hidden check {check!r}" for check in ids if check in text]
        if re.search(r"\b(from|import)\s+(reference|autograder\.checks)\b", text):
            leaks.append(f"{where}: imports grader code")
        for source in student_code(path):
            try:
                statements = _statements(ast.parse(source))
            except SyntaxError:
                continue
            leaks += [f"{where}: reference solution {line!r}" for line in sorted(statements & solution)]
    return leaks


def test_student_template_has_no_hidden_checks_or_reference_code() -> None:
    assert (STUDENT / "transformer_mt.ipynb").is_file()
    assert find_leaks(STUDENT) == []


def test_leak_finder_finds_planted_leaks(tmp_path: Path) -> None:
    copy = tmp_path / "student_template"
    shutil.copytree(STUDENT, copy, ignore=shutil.ignore_patterns("__pycache__"))
    reference_line = next(line for line in sorted(reference_solution_statements()) if not line.endswith(":"))
    hidden_line = sorted(hidden_check_lines() - master_code_lines()[1])[0]
    notebook = nbformat.read(copy / "transformer_mt.ipynb", as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell("def helper(self, x, mask):\n    " + reference_line))
    nbformat.write(notebook, copy / "transformer_mt.ipynb")
    (copy / "tests" / "q9.py").write_text(f"# {hidden_line}\n")
    (copy / "assignments" / "transformer_mt" / "reference").mkdir(parents=True)
    (copy / "assignments" / "transformer_mt" / "reference" / "masks.py").write_text("")
    leaks = find_leaks(copy)
    assert any("reference solution" in leak for leak in leaks), leaks
    assert any("q9.py: hidden-check line" in leak for leak in leaks), leaks
    assert any("grader folder" in leak for leak in leaks), leaks


def test_autograder_zip_holds_engine_and_pins(autograder_zip: Path) -> None:
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        config = json.loads(archive.read("otter_config.json"))
        environment = yaml.safe_load(archive.read("environment.yml"))
    for required in (
        "run_autograder",
        "setup.sh",
        "grader.yml",
        "autograder/engine.py",
        "autograder/otter_bridge.py",
        "assignments/transformer_mt/checks/test_decoder.py",
        "autograder/worker_runtime/server.py",
        "assignments/transformer_mt/reference/model.py",
        "mtkit/decoding.py",
    ):
        assert required in names, required
    assert not [n for n in names if n.startswith("tests/") and n != "tests/"], "Otter test files are not used"
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    with zipfile.ZipFile(autograder_zip) as archive:  # the project's run_otter.py, once: quarantine first
        assert [n for n in archive.namelist() if n == build.RUN_OTTER] == [build.RUN_OTTER]
        assert "prepare_upload(" in archive.read(build.RUN_OTTER).decode()
    plugins = [next(iter(p)) if isinstance(p, dict) else p for p in config["plugins"]]
    assert plugins == ["autograder.otter_bridge.EnginePlugin"]
    assert "assignment_name" not in config, "original-format notebooks carry no Otter metadata"
    assert "python=3.11" in environment["dependencies"]
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    lock = [line.strip() for line in (REPO / "requirements.lock").read_text().splitlines() if line.strip()]
    assert pip[0] == build.TORCH_INDEX and pip[1:] == lock
    assert "torch==2.13.0+cpu" in pip


def test_requirements_need_the_torch_pin(tmp_path: Path) -> None:
    lock = tmp_path / "requirements.lock"
    lock.write_text("numpy==2.4.6\n")
    with pytest.raises(SystemExit, match="torch"):
        build.requirements_text(lock)


def test_multi30k_can_be_bundled(assign_out: Path, multi30k_dir: Path, tmp_path: Path) -> None:
    otter_zip = next((assign_out / "autograder").glob("*.zip"))
    names = build.package_zip(otter_zip, tmp_path / "autograder.zip", multi30k_dir)
    declared = read_bundled_data(ASSIGNMENTS_DIR / "transformer_mt")  # assignment.yml `data:`
    assert declared is not None and declared.bundled == "data/multi30k"
    bundled = {n.rsplit("/", 1)[1] for n in names if n.startswith(declared.bundled + "/")}
    assert bundled == {p.name for p in multi30k_dir.iterdir() if p.is_file()}
