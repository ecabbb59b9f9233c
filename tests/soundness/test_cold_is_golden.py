"""Workers started cold give the scores of workers forked from the zygote (warm), on Part 2's corpus.

Part 2's soundness corpus graded cold must match the golden file check by check
(`golden_scores.json`); the session's warm grading (`corpus_run`, the default as root) is held to
the same file by test_golden_scores.py, and test_warm_is_cold.py checks that it is the warm one.
`differences` compares every notebook's status, parts and checks both ways, so the two together
say warm == cold exactly. Against the file rather than `corpus_run`, this test needs no warm
grading of its own and runs beside it on another pytest-xdist worker (tests/xdist_groups.py):
before, the cold grading of both corpora waited for the warm ones on one worker, the end-to-end
tier's longest chain. Part 1's corpus, which has no golden file, is compared with its warm
session grading in test_warm_is_cold.py.

And a generator of correct `calculate_loss` submissions that touch the worker's environment (temp
files and folders, the cwd, HOME, environment variables, random seeds, str hashes), at load and in
the call: full marks both ways. Before, a fork kept the zygote's `tempfile` folder, which is not in
the jail: `tempfile.TemporaryFile()` scored 0/10 warm only.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest
from golden_scores import Scores, differences, load_golden, score_table, scores
from soundness_grading import corpus_config, grade_corpus
from soundness_spec import load_cases

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

EXAMPLE_PREFIX = "examples/"  # the golden file's keys for the examples, not graded here

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


# First in the file: the worker (tests/xdist_groups.py) queues its next group when one test is left,
# which is then the short one below, not this one of about 11 minutes.
def test_the_corpus_graded_cold_matches_the_golden_file(tmp_path_factory: pytest.TempPathFactory) -> None:
    # The cases and configuration of the session's `corpus_run` (conftest.py), each worker started cold.
    cold = grade_corpus(
        load_cases(), out_dir=tmp_path_factory.mktemp("cold-reports"), overrides={"worker.warm_start": False}
    )
    assert not cold.config.worker.warm_start
    golden = {key: entry for key, entry in load_golden().items() if not key.startswith(EXAMPLE_PREFIX)}
    found = differences(golden, score_table(cold.results))
    checks = sum(len(entry["checks"]) for entry in golden.values())
    assert found == [], (
        f"{len(found)} differences over {len(golden)} notebooks, {checks} checks (cold against the golden file, "
        "which the warm grading matches if test_golden_scores.py passes):\n" + "\n".join(found)
    )


def test_correct_code_touching_the_environment_scores_the_same_warm_and_cold(tmp_path: Path) -> None:
    paths = environment_touching_submissions(tmp_path)
    warm, cold = _grade(paths, warm=True), _grade(paths, warm=False)
    full = warm["as_is"]
    assert full["status"] == "graded" and full["parts"][LOSS_PART] > 0 and set(full["checks"].values()) != {0.0}
    assert {name: table for name, table in warm.items() if table != full} == {}
    assert {name: table for name, table in cold.items() if table != full} == {}
