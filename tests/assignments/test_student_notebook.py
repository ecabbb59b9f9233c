"""The student notebook runs up to training; public checks fail on stubs with hints and pass on the solution."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from unittest import mock

import nbformat
import pytest
from nbclient import NotebookClient

from assignments.transformer_mt import build
from autograder.otter_bridge import KERNEL_START_TIMEOUT_S

QUESTIONS = ("q1", "q2", "q3", "q4", "q5")
HEAVY_TAG, TRAINING_TAG = "otter_ignore", "training-section"
RENAMED_NOTEBOOK = "내 과제 (최종 제출) v2.ipynb"
CHECK_REPORT = f"""
import json as _json
_report = {{}}
for _q in {QUESTIONS!r}:
    _result = grader.check(_q, globals())
    _report[_q] = {{"passed": bool(_result.passed_all), "summary": _result.summary()}}
print("CHECKS " + _json.dumps(_report, ensure_ascii=False))
"""
SMOKE_RUN = """
torch.manual_seed(0)
_tiny = Transformer(vocab_size, max_length, 32, 64, 4, 1, 0.1).to(device)
_losses = train(_tiny, train_split, nn.CrossEntropyLoss(reduction="none"),
                torch.optim.Adam(_tiny.parameters(), lr=1e-3), 1, 64, max_batches=5)
_bleu, _hyps = evaluate_bleu(_tiny, valid_split, limit=16)
_words = translate_sentence(_tiny, "Zwei Hunde spielen im Schnee.")
print("SMOKE " + _json.dumps({"losses": _losses, "bleu": _bleu, "n": len(_hyps), "words": _words}))
"""
# What each untouched stub's public check must tell the student (a fragment of its message).
STUB_HINTS = {
    "q1": "look_ahead_mask = ...",
    "q2": "MultiHeadAttention 이 2개",
    "q3": "TransformerEmbedding(또는 TokenEmbedding 과 PositionalEncoding)이 있어야",
    "q4": "decoder_output = model(...)",
    "q5": "NameError",
}


def runnable_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """Code cells a student runs before training: every cell above the training section (data
    preparation included), then only the non-heavy (definition) cells of the sections below."""
    cells, in_training = [], False
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        in_training = in_training or TRAINING_TAG in tags
        if cell.cell_type == "code" and not (in_training and HEAVY_TAG in tags):
            cells.append(cell)
    return cells


def execute(path: Path, extra: list[str], env: dict[str, str]) -> tuple[list[nbformat.NotebookNode], dict[str, str]]:
    """Run the runnable cells of a notebook plus `extra` cells in a fresh kernel (cwd: its folder).

    Returns:
        (the executed cells that raised, {marker: JSON text printed by the extra cells})
    """
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = runnable_cells(notebook) + [nbformat.v4.new_code_cell(source) for source in extra]
    # nbclient's default 60 s kernel start-up fails on a loaded 2-core machine; use the Otter path's limit.
    client = NotebookClient(
        notebook,
        timeout=300,
        startup_timeout=KERNEL_START_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    with mock.patch.dict(os.environ, env):
        client.execute()
    errors = [cell for cell in notebook.cells if any(o.output_type == "error" for o in cell.get("outputs", []))]
    printed = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            for line in output.get("text", "").splitlines() if output.output_type == "stream" else []:
                marker, _, payload = line.partition(" ")
                if marker in ("CHECKS", "SMOKE"):
                    printed[marker] = payload
    return errors, printed


def describe(errors: list[nbformat.NotebookNode]) -> str:
    """The failing cells' first line and error, for assertion messages."""
    return "; ".join(
        f"{cell.source.splitlines()[0]!r}: "
        + next(f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error")
        for cell in errors
    )


@pytest.fixture(scope="module")
def kernel_env(multi30k_dir: Path, mtkit_cache: Path) -> dict[str, str]:
    """Local Multi30k files (no download) and a shared prepared-data cache."""
    return {
        "MULTI30K_DIR": str(multi30k_dir),
        "MTKIT_CACHE_DIR": str(mtkit_cache),
        "CUDA_VISIBLE_DEVICES": "",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


@pytest.fixture(scope="module")
def student_run(kernel_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> tuple[list, dict]:
    # A copy of the committed template: running it writes .OTTER_LOG and caches next to the notebook.
    copy = tmp_path_factory.mktemp("student") / "student_template"
    shutil.copytree(build.STUDENT_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", ".OTTER_LOG"))
    return execute(copy / build.MASTER.name, [CHECK_REPORT], kernel_env)


@pytest.fixture(scope="module")
def solution_run(
    solution_notebook: Path, kernel_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[list, dict]:
    # Saved under another name (spaces, Hangul), as students do: grader.check must not depend on it.
    folder = tmp_path_factory.mktemp("solution")
    for item in ("tests", "mtkit"):
        shutil.copytree(solution_notebook.parent / item, folder / item)
    renamed = folder / RENAMED_NOTEBOOK
    shutil.copyfile(solution_notebook, renamed)
    return execute(renamed, [CHECK_REPORT, SMOKE_RUN], kernel_env)


def test_student_notebook_runs_up_to_training_without_error(student_run: tuple[list, dict]) -> None:
    errors, printed = student_run
    assert not errors, describe(errors)
    assert "CHECKS" in printed


def test_public_checks_fail_on_every_stub_with_a_hint(student_run: tuple[list, dict]) -> None:
    report = json.loads(student_run[1]["CHECKS"])
    for question in QUESTIONS:
        assert not report[question]["passed"], f"{question} passes on the untouched stub"
        assert STUB_HINTS[question] in report[question]["summary"], report[question]["summary"]


def test_public_checks_pass_on_the_solution(solution_run: tuple[list, dict]) -> None:
    errors, printed = solution_run
    assert not errors, describe(errors)
    report = json.loads(printed["CHECKS"])
    assert {q: r["passed"] for q, r in report.items()} == dict.fromkeys(QUESTIONS, True), report


def test_solution_training_and_honest_evaluation_code_runs(solution_run: tuple[list, dict]) -> None:
    smoke = json.loads(solution_run[1]["SMOKE"])
    assert len(smoke["losses"]) == 1 and 0 < smoke["losses"][0] < 20
    assert smoke["n"] == 16 and 0.0 <= smoke["bleu"] <= 1.0
    assert isinstance(smoke["words"], list)
