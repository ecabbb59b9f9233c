"""Run a buggy student notebook as a student does (its `grader.check` cells) and count the English-only output lines.

The buggy notebook is the committed student template with every answer cell solved from the master
notebook's solution, then the bugs below planted (Part 2: the two bugs of
examples/buggy_original_format.ipynb; Part 1: attention scores scaled by d_k instead of its square
root). The cells a student runs before training are executed in a fresh kernel (nbclient) in a copy
of the student folder; every output a student sees is read as Jupyter shows it (HTML when the
output has it, rendered to text; else the plain text; stream text; tracebacks).

A line counts as English-only when it has a Latin word of two letters or more and no Hangul, after
removing what is code rather than prose: `quoted` spans, HTML tags, and lines that are Python
source the student also has (a line of the notebook or of its public tests, which Otter echoes
at the failing line), a tensor's repr (`tensor(`, `dtype=torch.int32`) and a line that is a Python
value (`True`, a dict). Python's exception text (`NameError: name 'x' is not defined`) is counted.

Usage: MULTI30K_DIR=... python bench/notebook_english.py [--assignment transformer_mt] [--show]
       python bench/notebook_english.py --write buggy.ipynb   (then `otter run` it)
       python bench/notebook_english.py --otter-results out/results.json
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "soundness")]

from hangul import lacks_korean  # noqa: E402

HEAVY_TAG, TRAINING_TAG, ANSWER_TAG = "otter_ignore", "training-section", "otter_answer_cell"
KERNEL_START_TIMEOUT_S = 600
# assignment -> (master notebook, student folder, [(text in the solved answer, the bug)]).
BUGS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    "transformer_mt": (
        "assignments/transformer_mt/transformer_mt.ipynb",
        "student_template",
        [
            ("look_ahead_mask = torch.tril(", "look_ahead_mask = torch.triu("),  # bug (a)
            (  # bug (b): padding positions averaged in
                "    not_padding = create_padding_mask_for_loss(target, pad_idx)\n"
                "    token_losses = criterion(prediction, target)\n"
                "    loss = (token_losses * not_padding).sum() / not_padding.sum()\n",
                "    loss = criterion(prediction, target).mean()\n",
            ),
        ],
    ),
    "attention_encoder": (
        "assignments/attention_encoder/attention_encoder.ipynb",
        "student_template/attention_encoder",
        [("/ math.sqrt(self.attention_dim)", "/ self.attention_dim")],  # scores divided by d_k, not its root
    ),
}
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
# A value's printed form (a tensor's repr), not words: removed before looking for words.
_VALUE_REPR = re.compile(r"tensor\(|dtype=torch\.\w+|device='[^']*'|grad_fn=<\w+>|requires_grad=True|torch\.Size\(")
_SOLUTION_MARK = re.compile(r"^\s*# (BEGIN|END) SOLUTION\s*$")


def solved_sources(master: Path) -> list[str]:
    """The master's answer cells with their solutions, in order (Otter Assign's markers removed)."""
    notebook = nbformat.read(master, as_version=4)
    sources, in_question = [], False
    for cell in notebook.cells:
        text = cell.source
        if cell.cell_type == "raw":
            in_question = in_question or text.startswith("# BEGIN QUESTION")
            in_question = in_question and not text.startswith("# END QUESTION")
            continue
        if in_question and cell.cell_type == "code" and ("# SOLUTION" in text or "# BEGIN SOLUTION" in text):
            lines = [line for line in text.splitlines() if not _SOLUTION_MARK.match(line)]
            sources.append("\n".join(re.sub(r"\s*# SOLUTION$", "", line) for line in lines))
    return sources


def buggy_notebook(assignment: str) -> nbformat.NotebookNode:
    """The student template with every answer cell solved, then the assignment's bugs planted."""
    master, student, bugs = BUGS[assignment]
    notebook = nbformat.read(ROOT / student / (Path(master).name), as_version=4)
    answers = [cell for cell in notebook.cells if ANSWER_TAG in cell.metadata.get("tags", [])]
    solved = solved_sources(ROOT / master)
    if len(answers) != len(solved):
        raise SystemExit(f"{assignment}: {len(answers)} answer cells, {len(solved)} solved cells in the master")
    for cell, source in zip(answers, solved, strict=True):
        cell.source = source
    for old, new in bugs:
        cells = [cell for cell in answers if old in cell.source]
        if not cells:
            raise SystemExit(f"{assignment}: the bug's text {old!r} is in no answer cell")
        cells[0].source = cells[0].source.replace(old, new, 1)
    return notebook


def runnable(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The cells a student runs before training: every cell above the training section, then the
    definition cells below it (heavy cells skipped)."""
    cells, in_training = [], False
    for cell in notebook.cells:
        tags = cell.metadata.get("tags", [])
        in_training = in_training or TRAINING_TAG in tags
        if cell.cell_type == "code" and not (in_training and HEAVY_TAG in tags):
            cells.append(cell)
    notebook.cells = cells
    return notebook


def execute(assignment: str, workdir: Path, env: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """Execute the buggy notebook's runnable cells in a copy of the student folder.

    Args:
        assignment: a key of `BUGS`.
        workdir: an empty scratch folder.
        env: more environment for the kernel (e.g. MULTI30K_DIR; the process's own is kept).

    Returns:
        The executed notebook.
    """
    from unittest import mock

    from nbclient import NotebookClient

    student = ROOT / BUGS[assignment][1]
    folder = workdir / "student"
    shutil.copytree(student, folder, ignore=shutil.ignore_patterns("__pycache__", ".OTTER_LOG", "attention_encoder"))
    notebook = runnable(buggy_notebook(assignment))
    kernel_env = {"CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": "1", "MTKIT_CACHE_DIR": str(workdir / "cache")}
    client = NotebookClient(
        notebook,
        timeout=600,
        startup_timeout=KERNEL_START_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(folder)}},
    )
    with mock.patch.dict(os.environ, {**kernel_env, **(env or {})}):
        client.execute()
    return notebook


def shown_text(output: nbformat.NotebookNode) -> str:
    """What Jupyter shows for one output: HTML rendered to text when present, else plain text."""
    if output.output_type == "stream":
        return output.text
    if output.output_type == "error":
        return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(output.traceback))
    data = output.get("data", {})
    if "text/html" in data:
        # Block elements end a line; an inline <pre> (Otter's question names) does not.
        rendered = re.sub(r"</?p>|<br\s*/?>|<pre>|</li>|</h\d>", "\n", data["text/html"])
        return html.unescape(_TAG.sub("", rendered))
    return data.get("text/plain", "")


def source_lines(notebook: nbformat.NotebookNode, tests: Path) -> set[str]:
    """Every stripped line of Python source the student has: the notebook's cells and public tests."""
    texts = [cell.source for cell in notebook.cells if cell.cell_type == "code"]
    texts += [path.read_text(encoding="utf-8") for path in tests.glob("*.py")]
    return {line.strip() for text in texts for line in text.splitlines() if line.strip()}


def english_lines(notebook: nbformat.NotebookNode, tests: Path) -> list[str]:
    """The English-only lines of the executed notebook's outputs (see the module docstring).

    Args:
        notebook: the executed notebook.
        tests: its public tests folder (their source lines are code, not prose).

    Returns:
        The lines, stripped, in output order (repeats kept: the student reads each).
    """
    code = source_lines(notebook, tests)
    shown = [shown_text(o) for cell in notebook.cells for o in cell.get("outputs", [])]
    lines = [line.strip() for text in shown for line in text.splitlines()]
    return [line for line in lines if not (line in code or _is_value(line)) and lacks_korean(_VALUE_REPR.sub("", line))]


def _is_value(line: str) -> bool:
    """Whether a line is a Python value's repr (`True`, `{'de': 19214}`): a printed value, not words."""
    try:
        ast.literal_eval(line)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def measure(assignment: str, env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Run the buggy notebook of `assignment` (`execute`'s env).

    Returns:
        (its English-only output lines, every non-empty output line), lines stripped
    """
    with tempfile.TemporaryDirectory(prefix="notebook-english-") as scratch:
        notebook = execute(assignment, Path(scratch), env)
        tests = Path(scratch) / "student" / "tests"
        shown = [shown_text(o) for cell in notebook.cells for o in cell.get("outputs", [])]
        every = [line.strip() for text in shown for line in text.splitlines() if line.strip()]
        return english_lines(notebook, tests), every


def otter_results_english(results_json: Path) -> list[str]:
    """The English-only lines of an Otter results.json's outputs (what Gradescope shows the student).

    Args:
        results_json: written by `otter run` / `otter grade` (e.g. on `--write`'s notebook).

    Returns:
        The lines, stripped.
    """
    results = json.loads(results_json.read_text(encoding="utf-8"))
    texts = [results.get("output", ""), *(test.get("output", "") for test in results.get("tests", []))]
    return [line.strip() for text in texts for line in text.splitlines() if lacks_korean(line)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", choices=sorted(BUGS), action="append")
    parser.add_argument("--show", action="store_true", help="print the English-only lines")
    parser.add_argument("--write", type=Path, help="only write the buggy notebook (first assignment) there")
    parser.add_argument("--otter-results", type=Path, help="only count the English-only lines of a results.json")
    args = parser.parse_args()
    if args.otter_results:
        lines = otter_results_english(args.otter_results)
        print(json.dumps({"results_json": str(args.otter_results), "english_only": len(lines)}))
        print("".join(f"    {line}\n" for line in lines), end="")
        return
    if args.write:
        nbformat.write(buggy_notebook((args.assignment or ["transformer_mt"])[0]), args.write)
        return
    for assignment in args.assignment or sorted(BUGS):
        lines, every = measure(assignment)
        print(json.dumps({"assignment": assignment, "english_only": len(lines), "output_lines": len(every)}))
        for line in lines if args.show else []:
            print("    " + line)


if __name__ == "__main__":
    main()
