"""Credit only for the student's own code, through the engine (issue 38, breaks 5 and 6), with controls."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import yaml

from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.engine import grade_submission
from autograder.results import SubmissionResult

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "library_calls"
PART1_CORRECT = ROOT / "tests" / "assignments" / "attention_encoder" / "fixtures" / "correct.py.txt"
PART2_CORRECT = ROOT / "examples" / "correct_original_format.ipynb"
TINY_PROFILE = ROOT / "tests" / "fixtures" / "training" / "tiny_profile.yml"
grade_part1 = partial(grade_submission, assignment=load_assignment("attention_encoder"))
grade_part2 = partial(grade_submission, assignment=load_assignment("transformer_mt"))


def _parts(result: SubmissionResult) -> dict[str, tuple[float, float, list[str]]]:
    """part -> (points, possible, the messages of its failed checks)."""
    return {p.part: (p.points, p.max_points, [c.message for c in p.checks if not c.passed]) for p in result.parts}


def test_part1_library_attention_earns_nothing_on_those_parts_and_the_message_names_the_calls(tmp_path) -> None:
    correct = PART1_CORRECT.read_text(encoding="utf-8")
    library = correct + "\n\n" + (FIXTURES / "part1_library_attention.py.txt").read_text(encoding="utf-8")
    (tmp_path / "library.py").write_text(library, encoding="utf-8")
    (tmp_path / "correct.py").write_text(correct, encoding="utf-8")
    config = load_config(overrides={"assignment.name": "attention_encoder"})  # Korean, as the course grades
    graded = _parts(grade_part1(tmp_path / "library.py", config))
    for part, call in (
        ("attention", "torch.nn.functional.scaled_dot_product_attention"),
        ("multi_head_attention", "torch.nn.functional.multi_head_attention_forward"),
    ):
        points, _, messages = graded[part]
        assert points == 0 and messages and all(call in m and "라이브러리 호출" in m for m in messages), part
    control = _parts(grade_part1(tmp_path / "correct.py", config))
    for part in (
        "attention",
        "multi_head_attention",
        "positional_encoding",
        "feed_forward",
        "encoder_layer",
        "encoder",
    ):
        assert control[part][0] == control[part][1], part  # the correct submission keeps every point
        if part not in ("attention", "multi_head_attention"):  # their own code: full marks beside the refusal
            assert graded[part][0] == graded[part][1], part


def _tiny_training_config():
    profile = yaml.safe_load(TINY_PROFILE.read_text(encoding="utf-8"))
    overrides = {"training.enabled": True, "training.profile": "cpu"}
    overrides.update({f"training.profiles.cpu.{key}": value for key, value in profile.items()})
    return load_config(overrides=overrides)


def test_part2_training_is_not_paid_to_torchs_decoder_layer(tmp_path) -> None:
    notebook = json.loads(PART2_CORRECT.read_text(encoding="utf-8"))
    at = max(i for i, cell in enumerate(notebook["cells"]) if "class DecoderLayer" in "".join(cell["source"]))
    source = (FIXTURES / "part2_torch_decoder_layer.py.txt").read_text(encoding="utf-8")
    notebook["cells"].insert(at + 1, {"cell_type": "code", "metadata": {}, "outputs": [], "source": source})
    (tmp_path / "library.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    config = _tiny_training_config()
    graded = _parts(grade_part2(tmp_path / "library.ipynb", config))
    points, _, messages = graded["decoder_layer"]
    assert points == 0 and all("torch.nn.TransformerDecoderLayer" in m for m in messages)
    points, _, messages = graded["training"]
    assert points == 0 and messages and all("DecoderLayer" in m and "채점하지 않았습니다" in m for m in messages)
    # Control: the correct notebook's training part is graded, also in a run of its own (the
    # required parts are graded for their gates), and its unit parts keep every point.
    result = grade_part2(PART2_CORRECT, config, parts=["training"])
    assert [p.part for p in result.parts if not all(c.skipped for c in p.checks)] == ["training"]
    assert "evaluation" in result.extras["training"]
    assert not any("채점하지 않았습니다" in m for m in _parts(result)["training"][2])
    control = _parts(grade_part2(PART2_CORRECT, load_config()))
    assert all(points == possible for part, (points, possible, _) in control.items() if part != "training")
