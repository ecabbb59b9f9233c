"""A synthetic class for the similarity tests: independent correct notebooks and planted copies of them.

A student is a `Recipe`: which correct variant fills each `...` of the Part 2 template
(tests/fixtures/similarity/variants.yml), drawn independently per choice, plus the student's own
names, sum orders, comments and hyperparameters. A planted copy reuses another student's structural
choices and changes only what a copier changes: names, comments, the order of cells, or copies one
part into otherwise independent work.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from autograder.config import PROJECT_ROOT

VARIANTS_FILE = PROJECT_ROOT / "tests" / "fixtures" / "similarity" / "variants.yml"
TEMPLATE = PROJECT_ROOT / "student_template" / "transformer_mt.ipynb"
# Template cells the students fill (code cells holding `...`), by the text that identifies them.
CELL_ANCHORS = {
    "mask": "def create_look_ahead_mask_for_attention(",
    "decoder_layer": "class DecoderLayer(nn.Module):",
    "decoder": "class Decoder(nn.Module):",
    "transformer": "class Transformer(nn.Module):",
    "train_step": "def process_batch_for_train(",
    "loss": "def calculate_loss(",
    "hyperparameters": "embedding_dim = ...",
}
DECODER_LAYER_ATTRIBUTES = (
    ("masked_multi_head_attention", "attention"),
    ("norm1", "norm"),
    ("dropout1", "dropout"),
    ("enc_dec_attention", "attention"),
    ("norm2", "norm"),
    ("dropout2", "dropout"),
    ("feed_forward_neural_network", "feed_forward"),
    ("norm3", "norm"),
    ("dropout3", "dropout"),
)
STICKY_STYLE = 0.75  # chance that a DecoderLayer line uses the student's usual spelling of its kind
SUM = re.compile(r"<<(.+?)\|(.+?)>>")
# Orders a student may write the loss's first three steps in (each needs only the earlier ones:
# the mask may read the targets).
LOSS_STEP_ORDERS = (("logits", "targets", "mask"), ("targets", "logits", "mask"), ("targets", "mask", "logits"))


@cache
def variants() -> dict[str, Any]:
    """The building blocks (variants.yml), loaded once."""
    loaded: dict[str, Any] = yaml.safe_load(VARIANTS_FILE.read_text(encoding="utf-8"))
    return loaded


@dataclass(frozen=True)
class Recipe:
    """One student's notebook: structural choices (part -> choice -> index) and personal touches."""

    choices: dict[str, dict[str, Any]]
    names: dict[str, str]
    sums: dict[str, tuple[bool, ...]]  # part -> order of each `<<a|b>>` (True: b + a)
    comments: dict[str, str]  # part -> a comment line opening the filled code ("" none)
    hyperparameters: dict[str, Any]
    cell_order: tuple[str, ...] = field(default=tuple(CELL_ANCHORS))  # filled cells, in notebook order


def _structure(rng: random.Random, part: str) -> dict[str, Any]:
    blocks = variants()[part]
    picked: dict[str, Any] = {
        key: rng.randrange(len(options)) for key, options in blocks.items() if isinstance(options, list)
    }
    if part == "decoder_layer":  # a usual spelling per kind, sometimes another one on a line
        usual = {kind: picked[kind] for kind in ("attention", "norm", "dropout", "feed_forward")}
        picked["lines"] = tuple(
            usual[kind] if rng.random() < STICKY_STYLE else rng.randrange(len(blocks[kind]))
            for _, kind in DECODER_LAYER_ATTRIBUTES
        )
        picked["sublayers"] = tuple(rng.randrange(len(blocks["sublayer"])) for _ in range(3))
    if part == "loss":
        picked["steps"] = rng.choice(LOSS_STEP_ORDERS)
    return picked


def _personal(rng: random.Random) -> tuple[dict[str, str], dict[str, tuple[bool, ...]], dict[str, str]]:
    names = {key: rng.choice(pool) for key, pool in variants()["names"].items()}
    sums = {part: tuple(rng.random() < 0.5 for _ in range(8)) for part in CELL_ANCHORS}
    comments = {part: rng.choice(["", "", *variants()["comments"]]) for part in CELL_ANCHORS}
    return names, sums, comments


def random_recipe(rng: random.Random) -> Recipe:
    """An independent student: every choice drawn on its own.

    Args:
        rng: the generator (seeded by the caller).

    Returns:
        The recipe.
    """
    parts = ("mask", "decoder_layer", "decoder", "transformer", "loss")
    names, sums, comments = _personal(rng)
    hyper = {key: rng.choice(values) for key, values in variants()["hyperparameters"].items()}
    return Recipe({part: _structure(rng, part) for part in parts}, names, sums, comments, hyper)


def renamed(recipe: Recipe, rng: random.Random) -> Recipe:
    """A copy with other identifiers (and their comments): same code otherwise."""
    names, _, comments = _personal(rng)
    return replace(recipe, names=names, comments=comments)


def recommented(recipe: Recipe, rng: random.Random) -> Recipe:
    """A copy whose comments differ (and always exist)."""
    return replace(recipe, comments={part: rng.choice(variants()["comments"]) for part in CELL_ANCHORS})


def reordered(recipe: Recipe, rng: random.Random) -> Recipe:
    """A copy whose filled cells come in another order (each at another filled cell's place)."""
    order = list(recipe.cell_order)
    while order == list(recipe.cell_order):
        rng.shuffle(order)
    return replace(recipe, cell_order=tuple(order))


def part_copied(recipe: Recipe, source: Recipe, part: str = "decoder_layer") -> Recipe:
    """An otherwise independent student who copied one part from `source` (renamed: own names)."""
    choices = {**recipe.choices, part: source.choices[part]}
    return replace(recipe, choices=choices, sums={**recipe.sums, part: source.sums[part]})


def _fill(text: str, recipe: Recipe, part: str) -> str:
    orders = iter(recipe.sums[part] * 4)

    def one_sum(match: re.Match[str]) -> str:
        first, second = match.group(1), match.group(2)
        return f"{second} + {first}" if next(orders) else f"{first} + {second}"

    return SUM.sub(one_sum, text).format(**recipe.names)


def _part_code(recipe: Recipe, part: str) -> list[str]:
    """The code filling the part's `...` placeholders, one string per placeholder, in order."""
    blocks, picked = variants().get(part, {}), recipe.choices.get(part, {})
    if part == "mask":
        device = blocks["device"][picked["device"]]
        code = blocks["build"][picked["build"]].replace("{dev}", device)
        shape = blocks["shape"][picked["shape"]]
        return [_fill(code + ("\n" + shape if shape else ""), recipe, part)]
    if part == "decoder_layer":
        lines = [
            f"self.{attribute} = {blocks[kind][style]}"
            for (attribute, kind), style in zip(DECODER_LAYER_ATTRIBUTES, picked["lines"], strict=True)
        ]
        return ["\n".join(lines), _fill(_decoder_layer_forward(blocks, picked), recipe, part)]
    if part == "decoder":
        init = (
            f"self.transformer_embedding = {blocks['embedding'][picked['embedding']]}\n"
            f"{blocks['layers'][picked['layers']]}\n"
            f"self.dense_layer = {blocks['dense'][picked['dense']]}"
        )
        loop = re.sub(
            r"LAYER\((.+)\)$",
            r"\1" + blocks["layer_call"][picked["layer_call"]].replace("\\", ""),
            blocks["loop"][picked["loop"]],
            flags=re.M,
        )
        forward = "\n".join([blocks["embed"][picked["embed"]], loop, blocks["ending"][picked["ending"]]])
        return [_fill(init, recipe, part), _fill(forward, recipe, part)]
    if part == "transformer":
        return [_fill(blocks["forward"][picked["forward"]], recipe, part)]
    if part == "train_step":
        call = variants()["transformer"]["call"][recipe.choices["transformer"]["call"]]
        return [call]
    if part == "loss":
        steps = [*(blocks[step][picked[step]] for step in picked["steps"]), blocks["reduce"][picked["reduce"]]]
        body = "\n".join(steps)
        body = body.replace("{flat}", blocks["flat"][picked["flat"]]).replace(
            "{flat2}", blocks["flat2"][picked["flat2"]]
        )
        return [_fill(body, recipe, part)]
    raise ValueError(f"no code for part {part!r}")


def _decoder_layer_forward(blocks: dict[str, Any], picked: dict[str, Any]) -> str:
    """DecoderLayer.forward: the three sublayers, each in the student's chosen style, and the ending."""
    calls = (
        blocks["self_attention"][picked["self_attention"]],
        blocks["cross_attention"][picked["cross_attention"]],
        blocks["feed_forward_call"][picked["feed_forward_call"]],
    )
    lines, source = [], "dec"
    for number, (call, style) in enumerate(zip(calls, picked["sublayers"], strict=True), start=1):
        step = blocks["sublayer"][style].replace("SUB", call).replace("NORM", f"self.norm{number}")
        step = step.replace("DROP", f"self.dropout{number}").replace("TMP", "{t}").replace("OUT", "{x}")
        lines.append(step.replace("IN", source))
        source = "{x}"
    lines.append(blocks["ending"][picked["ending"]])
    return "\n".join(lines)


def _filled_cell(source: str, recipe: Recipe, part: str) -> str:
    """The template cell with its placeholders replaced (each at the placeholder's indentation)."""
    if part == "hyperparameters":
        values = recipe.hyperparameters
        lines = [
            f"{name} = {values[name]}" if (name := line.split("=")[0].strip()) in values else line
            for line in source.splitlines()
        ]
        return "\n".join(lines) + "\n"
    pieces = iter(_part_code(recipe, part))
    out: list[str] = []
    comment = recipe.comments.get(part, "")
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == "..." or stripped.endswith("= ..."):
            indent = line[: len(line) - len(line.lstrip())]
            if comment:
                out.append(indent + comment)
            out.extend(indent + piece if piece else piece for piece in next(pieces).splitlines())
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def render(recipe: Recipe) -> dict[str, Any]:
    """The recipe as a notebook (nbformat 4 JSON) built from the student template.

    Args:
        recipe: the student.

    Returns:
        The notebook document.
    """
    notebook: dict[str, Any] = copy.deepcopy(_template())
    cells = notebook["cells"]
    places = {part: _cell_index(cells, anchor) for part, anchor in CELL_ANCHORS.items()}
    filled = {part: _filled_cell("".join(cells[i]["source"]), recipe, part) for part, i in places.items()}
    for place_part, part in zip(CELL_ANCHORS, recipe.cell_order, strict=True):
        cells[places[place_part]]["source"] = filled[part].splitlines(keepends=True)
    return notebook


@cache
def _template() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    return loaded


def _cell_index(cells: list[dict[str, Any]], anchor: str) -> int:
    found = [i for i, c in enumerate(cells) if c["cell_type"] == "code" and anchor in "".join(c["source"])]
    if len(found) != 1:
        raise ValueError(f"template: {anchor!r} is in {len(found)} code cells")
    return found[0]


# Planted copy kinds: name -> (builder of the copy from its source recipe).
PLANTED: dict[str, Callable[[Recipe, random.Random], Recipe]] = {
    "renamed": renamed,
    "recommented": recommented,
    "reordered": reordered,
    "renamed_reordered_recommented": lambda r, rng: recommented(reordered(renamed(r, rng), rng), rng),
}


@dataclass
class SyntheticClass:
    """The files written and which pairs are planted copies."""

    files: list[Path]
    planted: set[frozenset[str]]  # pairs of file names
    kinds: dict[frozenset[str], str] = field(default_factory=dict)  # planted pair -> how it was copied


def write_class(folder: Path, independent: int, planted_per_kind: int, seed: int = 0) -> SyntheticClass:
    """Write independent students and planted copies as notebooks into folder.

    Args:
        folder: where to write `student_NNN.ipynb` (created).
        independent: number of independent students.
        planted_per_kind: copies per kind of `PLANTED`, plus as many one-part copies.
        seed: the generator's seed.

    Returns:
        The files and the planted pairs.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    recipes = [random_recipe(rng) for _ in range(independent)]
    # Each planted copy has its own source: two copies of one student would be a copied pair too.
    sources = iter(rng.sample(range(independent), planted_per_kind * (len(PLANTED) + 1)))
    planted: list[tuple[int, Recipe, str]] = []
    for name, kind in PLANTED.items():
        for source in (next(sources) for _ in range(planted_per_kind)):
            planted.append((source, kind(recipes[source], rng), name))
    for source in (next(sources) for _ in range(planted_per_kind)):  # one part copied into own work
        planted.append((source, renamed(part_copied(random_recipe(rng), recipes[source]), rng), "decoder_layer_copied"))
    everyone = recipes + [copy_ for _, copy_, _ in planted]
    order = list(range(len(everyone)))
    rng.shuffle(order)  # file names say nothing about who copied whom
    names = {index: f"student_{position:03d}.ipynb" for position, index in enumerate(order)}
    files = []
    for index, recipe in enumerate(everyone):
        path = folder / names[index]
        path.write_text(json.dumps(render(recipe), ensure_ascii=False, indent=1), encoding="utf-8")
        files.append(path)
    kinds = {frozenset({names[source], names[independent + k]}): name for k, (source, _, name) in enumerate(planted)}
    return SyntheticClass(sorted(files), set(kinds), kinds)
