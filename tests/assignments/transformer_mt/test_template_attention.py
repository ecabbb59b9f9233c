"""The template's given MultiHeadAttention (key and value split with their own length) against the
original one (split with the query's length): same numbers on equal lengths, and notebooks with
either version are graded alike."""

from __future__ import annotations

import importlib.util
import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml
from torch import Tensor, nn

from autograder.assignment import load_assignment
from autograder.config import load_config
from autograder.engine import grade_submission as engine_grade_submission

# The engine's grade function for Part 2, bound as a front end binds it (autograder.cli).
grade_submission = partial(engine_grade_submission, assignment=load_assignment("transformer_mt"))

ROOT = Path(__file__).resolve().parents[3]
MASTER = ROOT / "assignments" / "transformer_mt" / "transformer_mt.ipynb"
VERSIONS = ROOT / "tests" / "fixtures" / "notebooks" / "attention_versions.yml"
BUILD_FIXTURES = ROOT / "tests" / "fixtures" / "public_checks" / "build_fixtures.py"
CLASS_LINE = "class MultiHeadAttention(nn.Module):"


def _versions() -> dict[str, str]:
    texts: dict[str, str] = yaml.safe_load(VERSIONS.read_text(encoding="utf-8"))
    return {name: text.rstrip("\n") for name, text in texts.items()}


def _attention_cell(notebook: dict[str, Any]) -> dict[str, Any]:
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code" and CLASS_LINE in "".join(c["source"])]
    assert len(cells) == 1
    return cells[0]


def _with_version(notebook: dict[str, Any], version: str) -> dict[str, Any]:
    """A copy of the notebook whose MultiHeadAttention.forward is the named version."""
    versions = _versions()
    notebook = json.loads(json.dumps(notebook))
    cell = _attention_cell(notebook)
    source = "".join(cell["source"])
    assert source.count(versions["current"]) == 1, "the master's forward is not the fixture's current version"
    cell["source"] = source.replace(versions["current"], versions[version]).splitlines(keepends=True)
    return notebook


def _attention_class(version: str) -> type[nn.Module]:
    master = json.loads(MASTER.read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {"math": math, "torch": torch, "nn": nn}
    exec("".join(_attention_cell(_with_version(master, version))["source"]), namespace)  # the given classes
    cls: type[nn.Module] = namespace["MultiHeadAttention"]
    return cls


def _inputs(length: int, key_length: int) -> tuple[Tensor, Tensor, Tensor]:
    generator = torch.Generator().manual_seed(1)
    query = torch.randn(3, length, 16, generator=generator)
    key = torch.randn(3, key_length, 16, generator=generator)
    mask = torch.ones(3, 1, length, key_length, dtype=torch.bool)
    mask[0, :, :, -2:] = False  # padded keys in the first row
    return query, key, mask


def test_the_master_carries_the_current_version() -> None:
    source = "".join(_attention_cell(json.loads(MASTER.read_text(encoding="utf-8")))["source"])
    assert _versions()["current"] in source and _versions()["original"] not in source


def test_both_versions_give_the_same_numbers_on_equal_lengths() -> None:
    torch.manual_seed(0)
    current = _attention_class("current")(16, 4).eval()
    original = _attention_class("original")(16, 4).eval()
    original.load_state_dict(current.state_dict())
    query, key, mask = _inputs(7, 7)
    with torch.no_grad():
        assert torch.equal(current(query, key, key, mask), original(query, key, key, mask))


def test_the_current_version_attends_from_a_shorter_query() -> None:
    """Query positions are independent: the first 3 of a length-9 query attend to the 9 keys as
    they do when the query has only those 3 positions (what greedy decoding's own lengths rely on)."""
    torch.manual_seed(0)
    attention = _attention_class("current")(16, 4).eval()
    query, key, mask = _inputs(9, 9)
    with torch.no_grad():
        full = attention(query, key, key, mask)  # (3, 9, 16)
        prefix = attention(query[:, :3], key, key, mask[:, :, :3, :])  # (3, 3, 16)
    assert prefix.shape == (3, 3, 16)
    torch.testing.assert_close(prefix, full[:, :3])
    with torch.no_grad(), pytest.raises(RuntimeError):
        _attention_class("original")(16, 4).eval()(query[:, :3], key, key, mask[:, :, :3, :])


@pytest.mark.slow
def test_notebooks_with_either_version_are_graded_alike(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_fixtures", BUILD_FIXTURES)
    assert spec is not None and spec.loader is not None
    build_fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_fixtures)
    solution = build_fixtures.base_notebook("new")  # the master's solution, as a student submits it
    config = load_config()
    results = {}
    for version in ("current", "original"):
        path = tmp_path / version / "submission.ipynb"
        path.parent.mkdir()
        path.write_text(json.dumps(_with_version(solution, version)), encoding="utf-8")
        result = grade_submission(path, config)
        results[version] = [
            (part.part, part.points, [(c.check_id, c.passed, c.message) for c in part.checks]) for part in result.parts
        ]
    assert results["current"] == results["original"]
    unit_points = {name: points for name, points, _ in results["current"] if name != "training"}
    assert unit_points == {name: config.parts[name].points for name in unit_points}  # full marks
