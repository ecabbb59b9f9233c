"""Write the soundness corpus (tests/soundness/corpus/*.ipynb) from cases.yaml and the correct example.

Usage: python tests/soundness/soundness_build.py          # (re)write the corpus notebooks
       python tests/soundness/soundness_build.py --check  # exit 1 if the committed corpus is stale
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from soundness_spec import CORPUS_DIR, Case, Patch, Replacement, load_cases  # noqa: E402

BASE_NOTEBOOK = HERE.parents[1] / "examples" / "correct_original_format.ipynb"

# Cell name -> a text that occurs in exactly one code cell of the correct example.
CELL_ANCHORS = {
    "imports": "from torch.utils.data import Dataset, DataLoader",
    "attention": "class MultiHeadAttention(nn.Module):",
    "padding_mask": "def create_padding_mask_for_attention(batch, pad_idx):",
    "encoder": "class Encoder(nn.Module):",
    "mask": "def create_look_ahead_mask_for_attention(tgt_batch, pad_idx):",
    "decoder_layer_first_attempt": "self.enc_dec_attention(dec, enc, enc, src_mask)) + x)",
    "decoder_layer": "# 1) masked self-attention",  # the later, correct definition (the one graded)
    "decoder": "class Decoder(nn.Module):",
    "transformer": "class Transformer(nn.Module):",
    "loss": "def calculate_loss(decoder_output, tgt_batch, criterion):",
    "train_step": "def process_batch_for_train(",
}


class PatchError(ValueError):
    """A patch does not apply to the base notebook (its text is not found exactly once)."""


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _set_source(cell: dict[str, Any], text: str) -> None:
    cell["source"] = text.splitlines(keepends=True)
    cell.setdefault("metadata", {})["id"] = hashlib.sha1(text.encode()).hexdigest()[:12]


def find_cell(cells: list[dict[str, Any]], name: str) -> int:
    """Index (in `cells`) of the code cell a name refers to.

    Args:
        cells: the notebook's cells.
        name: a key of CELL_ANCHORS.

    Returns:
        The index of the only code cell that contains the name's anchor.
    """
    if name not in CELL_ANCHORS:
        raise PatchError(f"unknown cell name {name!r} (known: {', '.join(CELL_ANCHORS)})")
    found = [
        i for i, cell in enumerate(cells) if cell.get("cell_type") == "code" and CELL_ANCHORS[name] in _source(cell)
    ]
    if len(found) != 1:
        raise PatchError(f"cell {name!r}: its anchor is in {len(found)} code cells, not one")
    return found[0]


def _line_start(text: str, position: int) -> int:
    return text.rfind("\n", 0, position) + 1


def replace_once(text: str, replacement: Replacement, where: str) -> str:
    """Apply one old -> new replacement that must match exactly once.

    `old` is first looked up verbatim; a multi-line `old` that is not found verbatim is taken to
    have lost the indentation of its continuation lines (as YAML blocks do) and is matched with
    them indented like the line where the match starts. The continuation lines of `new` get that
    line's indentation, except after a verbatim multi-line match, where `new` is used as given.

    Args:
        text: the cell source.
        replacement: the old and new text.
        where: the case and cell, for messages.

    Returns:
        The patched source.
    """
    old, new = replacement.old, replacement.new
    if text.count(old) == 1:
        start = text.index(old)
        if "\n" in old:  # a verbatim multi-line match: `new` is verbatim too
            return text.replace(old, new)
        line = text[_line_start(text, start) :]
        indent = line[: len(line) - len(line.lstrip(" "))]
        return text[:start] + new.replace("\n", "\n" + indent) + text[start + len(old) :]
    if text.count(old) > 1:
        raise PatchError(f"{where}: {old.splitlines()[0]!r}... occurs {text.count(old)} times")
    if "\n" not in old:
        raise PatchError(f"{where}: {old!r} not found")
    matches = []
    indents = {line[: len(line) - len(line.lstrip(" "))] for line in text.splitlines()}
    for indent in indents:
        candidate = old.replace("\n", "\n" + indent)
        start = text.find(candidate)
        while start >= 0:
            if text[_line_start(text, start) : start] == indent:
                matches.append((start, candidate, indent))
            start = text.find(candidate, start + 1)
    if len(matches) != 1:
        raise PatchError(
            f"{where}: the block starting {old.splitlines()[0]!r} matches "
            f"{len(matches)} times at some indentation, not once"
        )
    start, candidate, indent = matches[0]
    return text[:start] + new.replace("\n", "\n" + indent) + text[start + len(candidate) :]


def _apply(cells: list[dict[str, Any]], patch: Patch, case_id: str) -> None:
    if patch.insert_after is not None:
        index = find_cell(cells, patch.insert_after)
        cell: dict[str, Any] = {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [],
        }
        _set_source(cell, (patch.source or "").strip("\n"))
        cells.insert(index + 1, cell)
        return
    assert patch.cell is not None
    cell = cells[find_cell(cells, patch.cell)]
    text = _source(cell)
    where = f"case {case_id}, cell {patch.cell}"
    if patch.source is not None:
        text = patch.source.rstrip("\n")
    for replacement in patch.replace:
        text = replace_once(text, replacement, where)
    if patch.prepend is not None:
        text = patch.prepend.strip("\n") + "\n\n\n" + text
    if patch.append is not None:
        text = text.rstrip("\n") + "\n\n\n" + patch.append.strip("\n")
    _set_source(cell, text)


def _note(case: Case) -> dict[str, Any]:
    text = (
        f"> **Soundness corpus case `{case.id}`** ({case.kind}"
        + (f", breaks `{case.tag}`" if case.tag else "")
        + f"): {case.description}\n>\n"
        "> Generated by `tests/soundness/soundness_build.py` from "
        "`examples/correct_original_format.ipynb`."
    )
    return {
        "cell_type": "markdown",
        "metadata": {"id": hashlib.sha1(text.encode()).hexdigest()[:12]},
        "source": text.splitlines(keepends=True),
    }


def render_case(case: Case, base: dict[str, Any]) -> str:
    """Render one case's notebook file.

    Args:
        case: the case.
        base: the parsed correct example notebook (not modified).

    Returns:
        The file's text (JSON, or the truncated JSON of a corrupt-file case).
    """
    notebook = copy.deepcopy(base)
    cells = notebook["cells"]
    for patch in case.patches:
        _apply(cells, patch, case.id)
    cells.insert(0, _note(case))
    unknown = set(case.notebook) - {"metadata", "truncate"}
    if unknown:
        raise PatchError(f"case {case.id}: unknown notebook change {sorted(unknown)[0]!r}")
    for key, value in (case.notebook.get("metadata") or {}).items():
        notebook["metadata"][key] = value
    text = json.dumps(notebook, indent=2, ensure_ascii=False) + "\n"
    if "truncate" in case.notebook:
        text = text[: int(case.notebook["truncate"])]
    return text


def build(cases: list[Case] | None = None) -> dict[str, str]:
    """Render every case.

    Args:
        cases: the cases (default: all of cases.yaml).

    Returns:
        File name -> text.
    """
    cases = load_cases() if cases is None else cases
    base = json.loads(BASE_NOTEBOOK.read_text(encoding="utf-8"))
    return {case.path.name: render_case(case, base) for case in cases}


def stale_files(rendered: dict[str, str]) -> list[str]:
    """Corpus files that differ from what the spec renders, are missing, or are left over.

    Args:
        rendered: the output of `build()`.

    Returns:
        File names, sorted.
    """
    stale = [
        name
        for name, text in rendered.items()
        if not (CORPUS_DIR / name).is_file() or (CORPUS_DIR / name).read_text(encoding="utf-8") != text
    ]
    extra = [path.name for path in CORPUS_DIR.glob("*.ipynb") if path.name not in rendered]
    return sorted(stale + extra)


def main(argv: list[str]) -> int:
    """Write the corpus, or with --check report whether the committed one is current.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        The exit status.
    """
    rendered = build()
    if "--check" in argv:
        stale = stale_files(rendered)
        for name in stale:
            print(f"stale: tests/soundness/corpus/{name} (run python tests/soundness/soundness_build.py)")
        return 1 if stale else 0
    CORPUS_DIR.mkdir(exist_ok=True)
    for path in CORPUS_DIR.glob("*.ipynb"):
        if path.name not in rendered:
            path.unlink()
            print(f"removed tests/soundness/corpus/{path.name}")
    for name, text in rendered.items():
        (CORPUS_DIR / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(rendered)} notebooks to tests/soundness/corpus/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
