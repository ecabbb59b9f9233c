"""Workers forked from the zygote (warm) and started cold give the same scores.

Both corpora: the session's gradings (`corpus_run`, `part1_run`: warm, the default as root) against
the same cases graded cold. And a generator of correct `calculate_loss` submissions that touch the
worker's environment (temp files and folders, the cwd, HOME, environment variables, random seeds,
str hashes), at load or in the call: full marks both ways. Before, a fork kept the zygote's
`tempfile` folder, which is not in the jail: `tempfile.TemporaryFile()` scored 0/10 warm only.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest
from golden_scores import Scores, differences, score_table, scores
from soundness_grading import CorpusRun, corpus_config, grade_corpus

from autograder.assignment import assignment_of
from autograder.batch import expand_paths, grade_all
from autograder.engine import grade_submission
from autograder.sandbox import Limits
from autograder.sandbox.plan import choose_isolation

ROOT = Path(__file__).resolve().parents[2]
CORRECT = ROOT / "tests" / "fixtures" / "security" / "control_honest.py"  # a correct calculate_loss
LOSS_PART = "masked_loss"
HEADER = "# %%\nimport os\nimport random\nimport tempfile\n\nimport numpy\nimport torch\n"
# Correct code that touches what a worker's process holds: each is run at load and in the call.
TOUCHES = {
    "temporary_file": "with tempfile.TemporaryFile() as scratch:\n    scratch.write(b'loss')",
    "named_temporary_file": "with tempfile.NamedTemporaryFile('w', suffix='.log') as log:\n    log.write('loss')",
    "temp_folder": "os.makedirs(os.path.join(tempfile.gettempdir(), 'loss-cache'), exist_ok=True)",
    "mkdtemp": "os.rmdir(tempfile.mkdtemp(prefix='loss-'))",
    "cwd": "with open(os.path.join(os.getcwd(), 'loss.log'), 'a') as log:\n    log.write('loss')",
    "home": "os.makedirs(os.path.expanduser('~/.cache/loss'), exist_ok=True)",
    "environment": "os.environ.setdefault('LOSS_DEBUG', '0')\nassert os.environ['HOME'] and os.environ['TMPDIR']",
    "random_seeds": "random.seed()\nnumpy.random.seed()\ntorch.seed()\n_draws = (random.random(), numpy.random.rand())",
    "hash": "_order = sorted({'<pad>', '<sos>', '<eos>'}, key=hash)\nassert len(_order) == 3",
}

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(3600),
    pytest.mark.skipif(
        os.geteuid() != 0 or choose_isolation(Limits()) != "namespace", reason="the warm start is for the root jail"
    ),
]


def _indented(code: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in code.splitlines())


def environment_touching_submissions(folder: Path) -> dict[str, Path]:
    """Write the correct submission once as it is and once per touch, at load and in the call.

    Args:
        folder: where the `.py` submissions go.
    Returns:
        variant name -> its file.
    """
    source = CORRECT.read_text(encoding="utf-8")
    head, call = source.split("def calculate_loss(decoder_output, tgt_batch, criterion):\n", 1)
    variants = {"as_is": source}
    for name, code in TOUCHES.items():
        touched = f"def calculate_loss(decoder_output, tgt_batch, criterion):\n{_indented(code, 4)}\n"
        variants[f"{name}_at_load"] = f"{HEADER}\n{code}\n\n{source}"
        variants[f"{name}_in_call"] = f"{HEADER}\n{head}{touched}{call}"
    paths = {}
    for name, text in variants.items():
        paths[name] = folder / f"{name}.py"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def _grade(paths: dict[str, Path], warm: bool) -> dict[str, Scores]:
    config = corpus_config(overrides={"worker.warm_start": warm})
    grade = partial(grade_submission, assignment=assignment_of(config))
    results = grade_all(expand_paths(list(paths.values())), config, grade, parts=[LOSS_PART], jobs=2)
    return {name: scores(result) for name, result in zip(paths, results, strict=True)}


def test_correct_code_touching_the_environment_scores_the_same_warm_and_cold(tmp_path: Path) -> None:
    paths = environment_touching_submissions(tmp_path)
    warm, cold = _grade(paths, warm=True), _grade(paths, warm=False)
    full = warm["as_is"]
    assert full["status"] == "graded" and full["parts"][LOSS_PART] > 0 and set(full["checks"].values()) != {0.0}
    assert {name: table for name, table in warm.items() if table != full} == {}
    assert {name: table for name, table in cold.items() if table != full} == {}


def _graded_cold(run: CorpusRun, folder: Path) -> CorpusRun:
    """The same cases as `run`, with the same assignment and configuration, each worker started cold."""
    overrides = {"assignment.name": run.config.assignment.name, "worker.warm_start": False}
    return grade_corpus(run.cases, out_dir=folder, overrides=overrides)


def test_both_corpora_score_the_same_warm_and_cold(
    corpus_run: CorpusRun, part1_run: CorpusRun, tmp_path_factory: pytest.TempPathFactory
) -> None:
    for run in (corpus_run, part1_run):
        assert run.config.worker.warm_start  # the session's gradings are the warm ones
        cold = _graded_cold(run, tmp_path_factory.mktemp("cold-reports"))
        assert not cold.config.worker.warm_start
        warm_table, cold_table = score_table(run.results), score_table(cold.results)
        checks = sum(len(entry["checks"]) for entry in warm_table.values())
        found = differences(warm_table, cold_table)
        assert found == [], (
            f"{len(found)} differences over {len(warm_table)} notebooks, {checks} checks:\n" + "\n".join(found)
        )
