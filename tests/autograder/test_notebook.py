"""Tests of the notebook loader (autograder.notebook) against the fixture notebooks."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest

from autograder.assignment import load_assignment
from autograder.notebook import LoadedSubmission, load_submission

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "notebooks"
# The names Part 2 provides (the loader itself provides none unless told).
PROVIDED = load_assignment("transformer_mt").provided_names


def load(name: str) -> LoadedSubmission:
    return load_submission(FIXTURES / name, provided_names=PROVIDED)


def defined(submission: LoadedSubmission) -> set[str]:
    return {name for statement in submission.statements for name in statement.defines}


def run(submission: LoadedSubmission, namespace: dict | None = None) -> dict:
    """Execute the kept statements one at a time, as the worker does (tests only)."""
    namespace = {"__name__": "submission"} if namespace is None else namespace
    for statement in submission.statements:
        exec(compile("\n" * (statement.line - 1) + statement.code, f"<cell {statement.cell}>", "exec"), namespace)
    return namespace


def test_fixture_builder_matches_committed_files() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_fixtures", FIXTURES / "build_fixtures.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    for name, text in builder.FIXTURES.items():
        assert (FIXTURES / name).read_text(encoding="utf-8") == text, f"{name} is stale: run build_fixtures.py"


# ------------------------------------------------------------------------------------------ magics
def test_shell_and_magic_lines_are_stripped() -> None:
    submission = load("magics.ipynb")
    assert submission.problems == []
    assert defined(submission) == {"math", "json", "timed", "with_shell", "value", "text"}
    namespace = run(submission)
    assert namespace["with_shell"]() == 2  # `!ls` inside the body became `pass`


def test_python_cell_magics_keep_their_body_and_other_cell_magics_are_skipped() -> None:
    submission = load("magics.ipynb")
    assert "json" in defined(submission)  # %%capture cell
    assert "timed" in defined(submission)  # %%time cell
    assert "os" not in defined(submission)  # %%bash cell is not Python
    assert 3 not in {s.cell for s in submission.statements}


def test_magic_look_alikes_inside_strings_and_brackets_are_kept() -> None:
    namespace = run(load("magics.ipynb"))
    assert namespace["value"] == 1  # `% 3` continues `(7` on the next line: modulo, not a magic
    assert "!not a magic inside a string" in namespace["text"]
    assert "%neither is this" in namespace["text"]


# ------------------------------------------------------------------------------------ syntax errors
def test_syntax_error_is_reported_and_later_cells_still_load() -> None:
    submission = load("syntax_error.ipynb")
    assert [(p.cell, p.line, p.kind) for p in submission.problems] == [(2, 1, "syntax")]
    problem = submission.problems[0]
    assert "SyntaxError" in problem.message and "def broken(:" in problem.message
    assert problem.names == ("broken",)
    assert defined(submission) == {"math", "later"}
    assert sorted({s.cell for s in submission.statements}) == [1, 3]  # code cells only: the markdown cell is skipped
    assert "cell 2, line 1" in (submission.why_missing("broken") or "")
    assert submission.why_missing("later") is None
    assert submission.why_missing("never_written") is None


def test_broken_cell_is_salvaged_statement_by_statement() -> None:
    submission = load("salvage.ipynb")
    assert defined(submission) == {"math", "num_heads", "Stub", "helper", "decorated", "after_stub"}
    problems = [(p.line, p.message) for p in submission.problems]
    assert [line for line, _ in problems] == [3, 10, 26]
    assert "`embedding_dim =`" in problems[0][1]
    assert "loaded as `pass`" in problems[1][1]
    assert "unterminated string literal" in problems[2][1]
    assert submission.problems[0].names == ("embedding_dim",)
    assert "embedding_dim" in (submission.why_missing("embedding_dim") or "")


def test_salvaged_definitions_work_and_keep_their_line_numbers() -> None:
    submission = load("salvage.ipynb")
    namespace = run(submission)
    assert namespace["Stub"]().value == 1 and namespace["Stub"]().forward(0) is None
    assert namespace["helper"]() == [1, 2]  # its column-0 docstring line did not split it
    assert namespace["after_stub"]() == "ok"
    decorated = next(s for s in submission.statements if "decorated" in s.defines)
    assert decorated.code.startswith("@staticmethod") and decorated.line == 20
    helper = next(s for s in submission.statements if "helper" in s.defines)
    assert helper.line == 13


def test_errors_only_the_compiler_finds_are_reported_like_syntax_errors() -> None:
    submission = load("compile_errors.ipynb")
    assert defined(submission) == {"fine"}
    assert [(p.line, p.names) for p in submission.problems] == [(2, ("loop_less",)), (5, ("NotAFunction",))]
    assert "'break' outside loop" in submission.problems[0].message


def test_traceback_points_at_the_cell_line() -> None:
    submission = load("redefinition.ipynb")
    namespace = run(submission)
    statement = next(s for s in submission.statements if "Model" in s.defines and s.cell == 3)
    code = "\n" * (statement.line - 1) + statement.code + "\nraise ValueError('here')\n"
    with pytest.raises(ValueError) as caught:
        exec(compile(code, f"<cell {statement.cell}>", "exec"), namespace)
    frame = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert frame.filename == "<cell 3>" and frame.lineno == statement.line + statement.code.count("\n") + 1


# -------------------------------------------------------------------------------- keep / drop rules
def test_top_level_work_is_dropped() -> None:
    submission = load("dropped_work.ipynb")
    dropped = {statement.label for statement in submission.dropped}
    for label in (
        'device = torch.device("cpu")',
        "model = nn.Linear(2, 2)",
        'print("hello")',
        "for epoch in range(3):",
        'if __name__ == "__main__":',
        'nlp = spacy.load("en_core_web_sm")',
        'data = load_dataset("bentrevett/multi30k")',
        "plt.plot([1, 2])",
        'config["lr"] = 0.1',
        "counter += 1",
        "from_dropped = model",
    ):
        assert label in dropped, label
    assert not any("bare string" in label for label in dropped)  # no-ops are not even listed
    assert {"device", "model", "nlp", "data", "epoch", "from_dropped"}.isdisjoint(defined(submission))
    assert submission.problems == []  # dropping is not a problem...
    assert all(s.reason for s in submission.dropped)  # ...each dropped statement says why
    assert "nlp" in (submission.why_missing("nlp") or "") and "does not run" in (submission.why_missing("nlp") or "")


def test_literal_constants_and_static_expressions_are_kept() -> None:
    namespace = run(load("dropped_work.ipynb"))
    assert (namespace["a"], namespace["b"], namespace["c"], namespace["d"]) == (0, 1, 2, 3)
    assert namespace["learning_rate"] == 1e-3 and namespace["negative"] == -5
    assert namespace["names"] == ["<unk>", "<sos>"] and namespace["table"] == {"x": (1, 2.5), "y": None}
    assert namespace["flag"] is True and namespace["hidden"] == 256 and namespace["ratio"] == 32
    assert namespace["label"] == "dim=256" and namespace["counter"] == 0
    assert namespace["activation"](5) == 5 and namespace["alias"] is namespace["nn"].Linear


def test_names_the_grader_provides_are_not_rebound() -> None:
    submission = load("dropped_work.ipynb")
    assert {"pad_idx", "vocab_size", "src_language", "device"}.isdisjoint(defined(submission))
    reasons = {s.label: s.reason for s in submission.dropped}
    assert "grader defines `pad_idx`" in reasons["pad_idx = 1"]
    assert {"device", "vocab_size", "pad_idx", "src_language", "tgt_language"} <= PROVIDED
    relaxed = load_submission(FIXTURES / "dropped_work.ipynb", provided_names=frozenset())
    assert {"pad_idx", "vocab_size", "src_language"} <= defined(relaxed)


def test_try_around_imports_is_kept_and_try_with_work_is_dropped() -> None:
    submission = load("dropped_work.ipynb")
    kept_try = [s for s in submission.statements if s.code.startswith("try:")]
    assert len(kept_try) == 1 and kept_try[0].defines == ("sns",)
    assert any(s.code.startswith("try:") and "np" in s.defines for s in submission.dropped)


def test_later_definitions_win() -> None:
    submission = load("redefinition.ipynb")
    assert [(s.cell, s.defines) for s in submission.statements] == [
        (1, ("version",)),
        (1, ("Model",)),
        (3, ("version",)),
        (3, ("Model",)),
    ]
    namespace = run(submission)
    assert namespace["version"]() == 2 and namespace["Model"].tag == "second"


def test_source_is_the_statements_in_order_and_compiles() -> None:
    submission = load("dropped_work.ipynb")
    compile(submission.source, "<submission>", "exec")
    assert submission.source.index("import torch") < submission.source.index("a, b, c, d = 0, 1, 2, 3")
    assert "# cell 2, line 1\n" in submission.source and "print(" not in submission.source


def test_loading_never_runs_student_code() -> None:
    submission = load("side_effects.py")  # top-level SystemExit, a raising class body, os.remove
    assert defined(submission) == {"os", "Boom"}
    assert {s.label for s in submission.dropped} >= {'raise SystemExit("the loader executed student code")'}


# ------------------------------------------------------------------------------------ file formats
def test_jupytext_percent_export() -> None:
    submission = load("export_percent.py")
    assert submission.kind == "py" and submission.code_cells == 4  # markdown cells are not counted
    assert defined(submission) == {"math", "area", "after_broken"}
    assert [(p.cell, p.line) for p in submission.problems] == [(3, 1)]
    area = next(s for s in submission.statements if "area" in s.defines)
    assert (area.cell, area.line) == (2, 2)


def test_nbconvert_script_export() -> None:
    submission = load("export_nbconvert.py")
    assert submission.code_cells == 3 and submission.problems == []
    assert defined(submission) == {"math", "double", "triple"}
    assert any("get_ipython" in s.label for s in submission.dropped)


def test_plain_script_is_one_cell() -> None:
    submission = load("plain_script.py")
    assert submission.code_cells == 1 and submission.problems == []
    assert defined(submission) == {"math", "SCALE", "scaled"}
    assert run(submission)["scaled"](2) == 6


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("corrupt.ipynb", "not valid JSON"),
        ("not_a_notebook.ipynb", "not a Jupyter notebook"),
        ("binary.ipynb", "is not UTF-8 text"),
        ("does_not_exist.ipynb", "cannot read the file"),
        ("r_kernel.ipynb", "kernel language is `R`, not Python"),
    ],
)
def test_unusable_files_become_a_notebook_problem(name: str, fragment: str) -> None:
    submission = load(name)
    assert submission.statements == [] and not submission.readable
    assert [p.kind for p in submission.problems] == ["notebook"]
    assert fragment in submission.problems[0].message


def test_old_and_loose_notebooks_still_load() -> None:
    assert defined(load("nbformat3.ipynb")) == {"old_style"}
    loose = load("lenient_v4.ipynb")  # no cell metadata/outputs: nbformat rejects it
    assert defined(loose) == {"x", "f"} and loose.readable


def test_empty_notebook() -> None:
    submission = load("empty.ipynb")
    assert submission.readable and submission.statements == [] and submission.problems == []
    assert submission.source == ""


def test_outputs_and_execution_counts_are_ignored() -> None:
    submission = load("magics.ipynb")  # its first code cell has an output and execution_count 3
    assert submission.statements[0].cell == 1 and submission.statements[0].code == "import math"


def test_lone_surrogates_in_the_notebook_become_question_marks_and_cost_nothing_else() -> None:
    loaded = load_submission(FIXTURES / "surrogate.ipynb")
    code = "\n".join(s.code for s in loaded.statements)
    assert "LABEL = '?'" in code and "def also_good" in code and "def good" in code
    code.encode("utf-8")  # nothing left that UTF-8 cannot hold


def test_a_file_above_max_mb_is_refused_with_the_limit_and_what_to_do(tmp_path: Path) -> None:
    big = tmp_path / "big.ipynb"
    big.write_bytes(b"{" + b" " * 300_000 + b"}")
    loaded = load_submission(big, max_mb=0.25)
    assert not loaded.statements and loaded.problems[0].kind == "notebook"
    assert "0.25 MB" in loaded.problems[0].message and "grading.max_notebook_mb" in loaded.problems[0].message
    assert "no cells" in load_submission(big, max_mb=1).problems[0].message  # read, then judged


STUDENT_TEMPLATE = Path(__file__).resolve().parents[2] / "student_template"


def test_a_notebook_of_another_assignment_is_refused_naming_the_right_one() -> None:
    from autograder.i18n import use_language

    part1 = STUDENT_TEMPLATE / "attention_encoder" / "attention_encoder.ipynb"
    with use_language("ko"):
        refused = load_submission(part1, assignment="transformer_mt")
    assert not refused.statements and [p.kind for p in refused.problems] == ["notebook"]
    message = refused.problems[0].message
    assert "`--assignment attention_encoder`" in message and "과제" in message, message
    assert load_submission(part1, assignment="attention_encoder").statements  # its own assignment: read


def test_a_notebook_without_the_assignment_metadata_is_read_as_before() -> None:
    # The examples predate the metadata (no "autograder" key), like notebooks students already hold.
    example = Path(__file__).resolve().parents[2] / "examples" / "correct_original_format.ipynb"
    assert "autograder" not in json.loads(example.read_text(encoding="utf-8"))["metadata"]
    loaded = load_submission(example, assignment="attention_encoder")
    assert loaded.statements and not [p for p in loaded.problems if p.kind == "notebook"]


def test_the_built_templates_name_their_assignment() -> None:
    for notebook, name in [
        (STUDENT_TEMPLATE / "transformer_mt.ipynb", "transformer_mt"),
        (STUDENT_TEMPLATE / "attention_encoder" / "attention_encoder.ipynb", "attention_encoder"),
    ]:
        metadata = json.loads(notebook.read_text(encoding="utf-8"))["metadata"]
        assert metadata["autograder"] == {"assignment": name}, notebook
