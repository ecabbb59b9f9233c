"""Part 2's feedback pictures as SVG: the mask cells and marks, the training curve, the catalogue's words."""

from __future__ import annotations

import base64
import json
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from assignments.transformer_mt.report_figures import mask_figure_svg, svg_data_uri, training_figure_svg
from assignments.transformer_mt.report_view import training_series
from autograder.assignment import load_assignment
from autograder.i18n import use_language

INTEGRATIONS = Path(__file__).resolve().parents[2] / "fixtures" / "integrations"
SVG = "{http://www.w3.org/2000/svg}"
MESSAGES = load_assignment("transformer_mt").messages_dir
HANGUL = re.compile("[\uac00-\ud7a3]")


def fixture_json(name: str) -> dict:
    return json.loads((INTEGRATIONS / name).read_text(encoding="utf-8"))


def parsed(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)  # raises on text that is not well-formed XML


def cells(root: ElementTree.Element) -> list[ElementTree.Element]:
    return [r for r in root.iter(f"{SVG}rect") if r.get("width") == r.get("height") == "18"]


def texts(root: ElementTree.Element) -> list[str]:
    return [node.text or "" for node in root.iter(f"{SVG}text")]


def test_a_buggy_mask_is_drawn_beside_the_correct_one_with_each_wrong_cell_marked() -> None:
    picture = fixture_json("mask_triu.json")
    root = parsed(mask_figure_svg(picture))
    grid_cells = sum(len(grid) * len(grid[0]) for grid in picture["expected"])
    assert len(cells(root)) == 2 * grid_cells  # the student's grids and the correct ones
    differing = sum(
        a != b
        for mine, right in zip(picture["mask"], picture["expected"], strict=True)
        for row_a, row_b in zip(mine, right, strict=True)
        for a, b in zip(row_a, row_b, strict=True)
    )
    assert differing > 0 and texts(root).count("✗") == differing


def test_a_correct_mask_has_no_marks_and_a_missing_one_draws_only_the_correct_masks() -> None:
    correct = fixture_json("mask_correct.json")
    root = parsed(mask_figure_svg(correct))
    assert "✗" not in texts(root) and len(cells(root)) == 2 * sum(len(g) * len(g[0]) for g in correct["expected"])
    alone = parsed(mask_figure_svg({**correct, "mask": None}))
    assert len(cells(alone)) == sum(len(g) * len(g[0]) for g in correct["expected"])


def test_tokens_are_escaped_into_well_formed_svg() -> None:
    picture = fixture_json("mask_correct.json")
    picture["labels"] = [["<script>", "a&b", *row[2:]] for row in picture["labels"]]
    svg = mask_figure_svg(picture)
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert "<script>" in texts(parsed(svg))


def test_the_pictures_words_come_from_the_catalogue_korean_by_default() -> None:
    history = fixture_json("training_history.json")
    picture = fixture_json("mask_triu.json")
    with use_language("ko", MESSAGES):
        mask_texts = texts(parsed(mask_figure_svg(picture)))
        curve = training_figure_svg(training_series(history), 0.2)
    assert curve is not None
    tokens = {token for row in picture["labels"] for token in row} | {" ".join(row) for row in picture["labels"]}
    words = [w for w in mask_texts if w not in tokens and w != "✗"]  # the legend, titles and axis note
    assert len(words) == 6 and all(HANGUL.search(w) for w in words), words  # legend, 4 titles, axes
    assert "스텝" in texts(parsed(curve)) and "기준 0.2" in texts(parsed(curve))
    with use_language("en", MESSAGES):
        english = training_figure_svg(training_series(history), 0.2)
    assert english is not None and "step" in texts(parsed(english))


def test_the_curve_has_a_point_per_logged_loss_and_evaluation_and_the_bar_where_it_belongs() -> None:
    series = training_series(fixture_json("training_history.json"))
    root = parsed(training_figure_svg(series, 0.2) or "")
    loss_line, bleu_line = list(root.iter(f"{SVG}polyline"))
    assert len((loss_line.get("points") or "").split()) == len(series["loss"])
    assert len((bleu_line.get("points") or "").split()) == len(series["bleu"]) == len(list(root.iter(f"{SVG}circle")))
    frame = next(r for r in root.iter(f"{SVG}rect") if r.get("fill") == "none")
    top, height = float(frame.get("y") or 0), float(frame.get("height") or 0)
    bar_line = next(root.iter(f"{SVG}line"))
    # The BLEU axis runs from 0 at the bottom to 1.15 x the highest BLEU (or bar) at the top.
    bleu_top = 1.15 * max(max(bleu for _, bleu in series["bleu"]), 0.2)
    assert float(bar_line.get("y1") or 0) == round(top + height * (1 - 0.2 / bleu_top), 1)
    lower = parsed(training_figure_svg(series, 0.1) or "")
    assert float(next(lower.iter(f"{SVG}line")).get("y1") or 0) > float(bar_line.get("y1") or 0)
    assert training_figure_svg(training_series({"notes": "nothing to plot"}), 0.2) is None


def test_the_data_uri_carries_the_document() -> None:
    uri = svg_data_uri("<svg/>")
    assert uri.startswith("data:image/svg+xml;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == b"<svg/>"
