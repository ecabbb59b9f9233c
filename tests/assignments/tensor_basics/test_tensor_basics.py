"""The guide's example assignment (assignments/tensor_basics, grown from the scaffold), graded by the
CLI: solved 100, untouched template 0, and each common bug loses its check with its message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # CLI gradings of seven notebooks (about half a minute)

REPO = Path(__file__).resolve().parents[3]
FOLDER = REPO / "assignments" / "tensor_basics"
MASTER = FOLDER / "tensor_basics.ipynb"
TEMPLATE = REPO / "student_template" / "tensor_basics" / "tensor_basics.ipynb"
FIXTURES = REPO / "tests" / "fixtures" / "tensor_basics"

# fixture -> (the function it replaces, total points, the failed checks, a phrase of the English message)
VARIANTS = {
    "naive_softmax": ("softmax", 91.0, {"softmax_stable"}, "Subtract each row's max"),
    "library_softmax": ("softmax", 70.0, {"softmax_shape", "softmax_values", "softmax_stable"}, "torch.softmax"),
    "attention_divides_by_d": ("attention", 64.0, {"attention_values", "attention_masking"}, "sqrt(d_k)"),
    "attention_mask_ignored": ("attention", 88.0, {"attention_masking"}, "-inf"),
    "eps_outside_root": ("layer_norm", 91.0, {"layer_norm_eps"}, "inside the square root"),
}


def with_function(function: str, source: str) -> dict:
    """The solved master with one solution cell replaced by other code."""
    notebook = json.loads(MASTER.read_text(encoding="utf-8"))
    cell = next(c for c in notebook["cells"] if c.get("id") == f"cell-solution-{function}")
    cell["source"] = source.splitlines(keepends=True)
    return notebook


def grade(paths: list[Path], out: Path) -> dict[str, dict]:
    """`python -m autograder grade --assignment tensor_basics` in English; stem -> its JSON result."""
    command = [sys.executable, "-m", "autograder", "grade", "--assignment", "tensor_basics", "--language", "en"]
    subprocess.run([*command, *map(str, paths), "--out", str(out)], cwd=REPO, check=True, capture_output=True)
    return {path.stem: json.loads((out / f"{path.stem}.json").read_text(encoding="utf-8")) for path in paths}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("tensor_basics")
    paths = [folder / "solved.ipynb", folder / "untouched.ipynb"]
    paths[0].write_bytes(MASTER.read_bytes())
    paths[1].write_bytes(TEMPLATE.read_bytes())
    for name, (function, *_) in VARIANTS.items():
        path = folder / f"{name}.ipynb"
        source = (FIXTURES / f"{name}.py.txt").read_text(encoding="utf-8")
        path.write_text(json.dumps(with_function(function, source)), encoding="utf-8")
        paths.append(path)
    return grade(paths, folder / "out")


def failed(result: dict) -> dict[str, str]:
    return {c["check_id"]: c["message"] for p in result["parts"] for c in p["checks"] if not c["passed"]}


def test_the_solved_master_earns_everything_and_the_untouched_template_nothing(results: dict[str, dict]) -> None:
    assert (results["solved"]["points"], results["solved"]["max_points"]) == (100.0, 100.0)
    assert failed(results["solved"]) == {}
    assert (results["untouched"]["points"], results["untouched"]["max_points"]) == (0.0, 100.0)
    assert len(failed(results["untouched"])) == 9


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_common_bug_loses_its_checks_with_its_message(results: dict[str, dict], name: str) -> None:
    _, points, checks, phrase = VARIANTS[name]
    lost = failed(results[name])
    assert set(lost) == checks, lost
    assert results[name]["points"] == points
    assert any(phrase in message for message in lost.values()), lost
