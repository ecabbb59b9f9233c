"""`otter grade` end to end in containers of the grading image: the same per-part scores as the CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from container_tools import (
    REPO,
    OtterRun,
    built_zip,
    cli_parts,
    leftovers,
    otter_grade,
    questions_of,
    require_engine,
    zip_with_isolation,
)

pytestmark = [pytest.mark.slow, pytest.mark.container]

CORPUS = REPO / "tests" / "soundness" / "corpus"
# The batch from the soundness corpus: the first notebooks of each kind (alt_, cheat_, dec_, ...), so
# that correct alternatives, cheats, faults and degenerate answers are all in it. CONTAINER_BATCH
# (a number of notebooks per kind) makes it smaller or larger; 2 per kind gives 20 notebooks.
PER_KIND = int(os.environ.get("CONTAINER_BATCH", "2"))
CONTAINERS = 2  # several containers at once (the machine kind has 2 cores)


def corpus_batch() -> list[Path]:
    """The corpus notebooks graded here, PER_KIND of each kind, sorted."""
    kinds: dict[str, list[Path]] = {}
    for notebook in sorted(CORPUS.glob("*.ipynb")):
        kinds.setdefault(notebook.name.split("_")[0], []).append(notebook)
    return sorted(notebook for members in kinds.values() for notebook in members[:PER_KIND])


def compare(otter: OtterRun, cli: dict[str, dict], questions: dict[str, str]) -> list[str]:
    """Every notebook whose Otter question points differ from the CLI's part points.

    Parts the Otter route does not grade (training: the plugin's `train` is off) have no column.
    """
    differences = []
    for stem, result in sorted(cli.items()):
        if stem not in otter.grades:
            differences.append(f"{stem}: not in Otter's final_grades.csv")
            continue
        row = otter.grades[stem]
        for part, points in result["parts"].items():
            question = questions[part]
            if question in row and row[question] != points:
                differences.append(f"{stem}: {part} ({question}) Otter {row[question]} != CLI {points}")
        graded = {questions[part] for part in result["parts"] if part != "training"}
        if set(row) != graded:
            differences.append(f"{stem}: Otter's questions {sorted(row)} != the CLI's unit parts {sorted(graded)}")
    return differences


def grade_both(
    tmp_path: Path, zip_path: Path, name: str, notebooks: list[Path], assignment: str | None = None
) -> tuple[OtterRun, dict[str, dict]]:
    """Grade the notebooks with `otter grade` and with the CLI; check nothing is left in the engine."""
    graded_zip = zip_with_isolation(zip_path, tmp_path / "autograder.zip")
    folder = tmp_path / "submissions"
    folder.mkdir()
    copies = [Path(shutil.copy(notebook, folder)) for notebook in notebooks]
    before = leftovers(f"otter-grade:{name}")
    otter = otter_grade(graded_zip, name, copies, tmp_path / "otter", CONTAINERS)
    left = leftovers(f"otter-grade:{name}")
    cli = cli_parts(copies, tmp_path / "cli", assignment)
    report = {
        stem: {"otter": otter.grades.get(stem), "cli": cli[stem]["parts"], "otter_status": otter.statuses.get(stem)}
        for stem in cli
    }
    per_notebook = otter.wall_s / len(notebooks)
    print(
        f"\n{name}: {len(notebooks)} notebooks, {CONTAINERS} containers, {otter.wall_s:.0f} s wall "
        f"({per_notebook:.1f} s per notebook)\n{json.dumps(report, indent=1, ensure_ascii=False)}"
    )
    assert left == before, "otter grade left containers or volumes behind"
    return otter, cli


@pytest.fixture(scope="module")
def part2(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Part 2's Otter zip and solution notebook, built once for the module."""
    require_engine()
    return built_zip(tmp_path_factory.mktemp("part2"), "transformer_mt")


def test_otter_grade_scores_the_examples_as_the_cli(tmp_path: Path, part2: dict[str, Path]) -> None:
    notebooks = sorted((REPO / "examples").glob("*.ipynb"))
    zip_path = part2["zip"]
    otter, cli = grade_both(tmp_path, zip_path, "transformer_mt", notebooks)
    assert compare(otter, cli, questions_of(zip_path)) == []
    # Not vacuous: the correct example earns every unit point, the template none.
    assert sum(otter.grades["correct_original_format"].values()) == 80
    assert sum(otter.grades["template_untouched"].values()) == 0


def test_otter_grade_scores_part1_as_the_cli(tmp_path: Path) -> None:
    require_engine()
    part1 = built_zip(tmp_path / "build", "attention_encoder")
    # The untouched student notebook and the solution (Otter's autograder notebook of the master).
    notebooks = [REPO / "student_template" / "attention_encoder" / "attention_encoder.ipynb", part1["solution"]]
    otter, cli = grade_both(tmp_path, part1["zip"], "attention_encoder", notebooks, "attention_encoder")
    assert compare(otter, cli, questions_of(part1["zip"])) == []
    assert sum(otter.grades[part1["solution"].stem].values()) > sum(otter.grades["attention_encoder"].values())


def test_otter_grade_scores_a_corpus_batch_as_the_cli(tmp_path: Path, part2: dict[str, Path]) -> None:
    notebooks = corpus_batch()
    assert len(notebooks) >= 10 * min(PER_KIND, 1)
    zip_path = part2["zip"]
    otter, cli = grade_both(tmp_path, zip_path, "transformer_mt", notebooks)
    assert compare(otter, cli, questions_of(zip_path)) == []
    # The batch holds both full and partial marks (the comparison is not of zeros only).
    totals = {sum(row.values()) for row in otter.grades.values()}
    assert 80 in totals and len(totals) > 2
