"""The notebook's training section matches grader.yml: the graded mode and the CPU setting."""

from __future__ import annotations

import ast
import inspect
import json
import re

from assignments.transformer_mt import build
from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config
from mtkit.training import make_optimizer

CONFIG = load_config(build.REPO / "grader.yml")
CELLS = json.loads(build.MASTER.read_text(encoding="utf-8"))["cells"]
MODEL_AND_RECIPE = (
    "embedding_dim",
    "feed_forward_dim",
    "num_layers",
    "num_heads",
    "batch_size",
    "drop_prob",
    "learning_rate",
)


def source(cell: dict) -> str:
    return "".join(cell["source"])


def assignments(text: str) -> dict[str, object]:
    """Top-level `name = constant` statements of a code cell."""
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(text).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }


def solution_hparams() -> dict[str, object]:
    cell = next(
        source(c)
        for c in CELLS
        if c["cell_type"] == "code" and "embedding_dim = " in source(c) and "epochs = " in source(c)
    )
    return assignments(cell)


def test_training_section_names_the_graded_mode() -> None:
    section = next(source(c) for c in CELLS if "training-section" in c["metadata"].get("tags", []))
    mode = training_settings(CONFIG).mode
    assert "`training.mode`" in section and f"이 과목은 `{mode}` 입니다" in section


def test_cpu_setting_is_the_graders_cpu_profile() -> None:
    profile = training_settings(CONFIG).profile_hparams("cpu")
    hparams = solution_hparams()
    assert {name: hparams[name] for name in MODEL_AND_RECIPE} == {name: profile[name] for name in MODEL_AND_RECIPE}
    settings = next(
        assignments(source(c)) for c in CELLS if c["cell_type"] == "code" and "warmup_steps = " in source(c)
    )
    assert (
        settings["warmup_steps"] == profile["warmup_steps"]
        and settings["eval_start_step"] == profile["eval_start_step"]
        and settings["eval_every_steps"] == profile["eval_every_steps"]
        and settings["target_bleu"] == training_settings(CONFIG).threshold_bleu
    )


def test_the_notebooks_decay_horizon_is_the_profiles() -> None:
    # The notebook's lr reaches 0 where its `epochs` end; the profile's where max_epochs end when
    # lr_decay_steps is 0. Equal epochs give both the same schedule, step for step.
    profile = training_settings(CONFIG).profile_hparams("cpu")
    assert profile["lr_schedule"] == "linear" and profile["lr_decay_steps"] == 0
    assert solution_hparams()["epochs"] == profile["max_epochs"]


def adam_keywords(text: str) -> dict[str, str]:
    """The keyword arguments, as source text, of the first `torch.optim.Adam(...)` call in a text."""
    call = next(
        node
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("optim.Adam")
    )
    return {keyword.arg or "**": ast.unparse(keyword.value) for keyword in call.keywords}


def test_the_notebooks_optimizer_is_the_graders() -> None:
    # The same update and the same kernel: the fused one changes the rounding, hence the curve.
    notebook = adam_keywords(next(source(c) for c in CELLS if c["cell_type"] == "code" and "optim.Adam(" in source(c)))
    grader = adam_keywords(inspect.getsource(make_optimizer))
    defaults = inspect.signature(make_optimizer).parameters
    assert notebook["fused"] == grader["fused"] == "True"
    assert ast.literal_eval(notebook["betas"]) == defaults["betas"].default
    assert ast.literal_eval(notebook["eps"]) == defaults["eps"].default
    assert notebook["lr"] == "learning_rate"


def test_the_table_shown_to_students_lists_the_cpu_setting() -> None:
    table = next(source(c) for c in CELLS if c["cell_type"] == "markdown" and "| CPU 설정" in source(c))
    for name, value in solution_hparams().items():
        row = re.search(rf"^\| `{name}` \| ([^|]+) \|", table, re.MULTILINE)
        assert row, f"{name} is not in the table"
        assert ast.literal_eval(row.group(1).strip()) == value, (name, row.group(1), value)


def test_the_training_sections_prose_states_the_graders_cpu_recipe() -> None:
    # The section's sentence on the grader's CPU method, e.g. "(임베딩 128, feed-forward 512, 헤드 8,
    # 인코더·디코더 층 2개, warm-up 150 스텝 ...)", must say what the profile says.
    section = next(source(c) for c in CELLS if "training-section" in c["metadata"].get("tags", []))
    profile = training_settings(CONFIG).profile_hparams("cpu")
    stated = {
        "embedding_dim": r"임베딩 (\d+)",
        "feed_forward_dim": r"feed-forward (\d+)",
        "num_heads": r"헤드 (\d+)",
        "num_layers": r"층 (\d+)개",
        "warmup_steps": r"warm-up (\d+)",
    }
    found = {name: re.search(pattern, section) for name, pattern in stated.items()}
    assert all(found.values()), [name for name, match in found.items() if match is None]
    assert {name: int(match.group(1)) for name, match in found.items() if match} == {
        name: int(profile[name]) for name in stated
    }
