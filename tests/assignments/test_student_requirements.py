"""The student requirements file: one install line for Colab, a CPU laptop and a GPU machine."""

from __future__ import annotations

import ast
import json
import sys

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from assignments.transformer_mt import build

REQUIREMENTS = build.STUDENT_DIR / "requirements.txt"
# Import name -> distribution, for what the notebook and mtkit import.
DISTRIBUTIONS = {"otter": "otter-grader"}
# Imported only inside the grader's sandboxed worker, never by a student's notebook.
GRADER_ONLY_MODULES = {"safetensors"}


def requirements() -> dict[str, Requirement]:
    lines = [line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines()]
    parsed = [Requirement(line) for line in lines if line]
    return {canonicalize_name(r.name): r for r in parsed}


def lock_versions() -> dict[str, str]:
    pins = [
        line.split("==")
        for line in (build.REPO / "requirements.lock").read_text(encoding="utf-8").splitlines()
        if "==" in line and not line.startswith("#")
    ]
    return {canonicalize_name(name): version.strip().split("+")[0] for name, version in pins}


def third_party_imports(sources: list[str]) -> set[str]:
    names = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"mtkit", "__future__"}


def test_torch_is_a_range_that_keeps_an_installed_torch() -> None:
    torch = requirements()["torch"]
    assert not any(spec.operator in ("==", "===", "~=") for spec in torch.specifier), torch
    assert torch.specifier.contains(lock_versions()["torch"]), "the project's own torch must satisfy it"
    assert torch.specifier.contains("2.8.0") and not torch.url, torch  # e.g. a recent Colab's torch
    assert "index-url" not in REQUIREMENTS.read_text(encoding="utf-8").replace(
        "#     pip install torch --index-url", ""
    )


def test_every_requirement_admits_the_tested_versions() -> None:
    locked = lock_versions()
    for name, requirement in requirements().items():
        assert name in locked, f"{name} is not in requirements.lock (untested)"
        assert requirement.specifier.contains(locked[name]), f"{requirement} excludes the tested {locked[name]}"


def test_everything_the_notebook_and_mtkit_import_is_required() -> None:
    notebook = json.loads((build.STUDENT_DIR / build.MASTER.name).read_text(encoding="utf-8"))
    cells = [
        "\n".join(line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith(("%", "!")))
        for cell in notebook["cells"]
        if cell["cell_type"] == "code"
    ]
    modules = [path.read_text(encoding="utf-8") for path in sorted((build.STUDENT_DIR / "mtkit").glob("*.py"))]
    needed = {
        canonicalize_name(DISTRIBUTIONS.get(name, name))
        for name in third_party_imports(cells + modules) - GRADER_ONLY_MODULES
    }
    assert needed <= set(requirements()), needed - set(requirements())
    assert {"torch", "spacy", "nltk", "otter-grader"} <= needed


def test_a_fresh_venv_can_run_the_notebook_kernel() -> None:
    # Without ipykernel, opening the notebook in a fresh venv fails with NoSuchKernel: python3.
    assert "ipykernel" in requirements()


def test_the_template_ignores_what_the_checks_write() -> None:
    ignored = (build.STUDENT_DIR / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert ".OTTER_LOG" in ignored and "public-checks/" in ignored
