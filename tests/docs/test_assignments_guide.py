"""The hand-written check of docs/ASSIGNMENTS.md runs as written: it passes on tensor_basics' reference
and fails, with its message, on a softmax that does not weigh equal values equally."""

from __future__ import annotations

import re
from pathlib import Path

from namespace_student import NamespaceStudent  # the tests' helper (tests/namespace_student.py)

from autograder.assignment import load_assignment
from autograder.checks.support import CheckContext
from autograder.runner import run_checks

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "ASSIGNMENTS.md"
EXAMPLE = re.compile(r"<!-- check-example: (\w+) -->\n```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
SKEWED_SOFTMAX = "import torch\n\ndef softmax(x):\n    return torch.softmax(x * torch.arange(x.size(-1)), dim=-1)\n"


def test_the_guides_hand_written_check_runs_against_the_reference_and_a_wrong_answer(tmp_path: Path) -> None:
    examples = EXAMPLE.findall(GUIDE.read_text(encoding="utf-8"))
    assert [name for name, _ in examples] == ["tensor_basics"]
    (tmp_path / "test_example.py").write_text(examples[0][1], encoding="utf-8")
    reference = CheckContext(student=load_assignment("tensor_basics").reference_student())
    assert run_checks(tmp_path, reference)["softmax_uniform_rows"].passed
    wrong = run_checks(tmp_path, CheckContext(student=NamespaceStudent(SKEWED_SOFTMAX, {}, {})))
    assert not wrong["softmax_uniform_rows"].passed
    assert wrong["softmax_uniform_rows"].message.startswith("`softmax`")  # the assignment's catalogue
