"""Write the example notebooks (template, correct, buggy) from the cell sources in this folder.

Usage: python examples/build_examples.py          # (re)write examples/*.ipynb
       python examples/build_examples.py --check  # exit 1 if the committed notebooks are stale
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the cell modules sit beside this script
sys.path.insert(1, str(HERE.parent))  # they take the solution's code from the reference through assignments/

import _graded_cells as graded  # noqa: E402
import _notebook_cells as given  # noqa: E402

# A 1x1 PNG stands in for the loss plot a student leaves in the file.
_PLOT_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cf"
        "c0f01f0005000201a5b2c3e10000000049454e44ae426082"
    )
).decode()

BUGGY_NOTE = given.code("""
    > **Example submission with two planted bugs** (for the autograder's examples; see `examples/README.md`).
    >
    > 1. `create_look_ahead_mask_for_attention` builds its triangle with `torch.triu`, so each position sees
    >    the *future* instead of the past. Only part 1 (look-ahead mask) should lose points.
    > 2. `calculate_loss` averages over every position, padding included (`.mean()`), instead of dividing by
    >    the number of non-pad target tokens. Only part 5 (masked loss) should lose points.
    >
    > Everything else is identical to `correct_original_format.ipynb`.
""")


def _markdown(source: str) -> dict:
    return {"cell_type": "markdown", "metadata": {"id": _cell_id(source)}, "source": _lines(source)}


def _code_cell(source: str, count: int | None = None, outputs: list[dict] | None = None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": count,
        "metadata": {"id": _cell_id(source)},
        "outputs": outputs or [],
        "source": _lines(source),
    }


def _stream(text: str, name: str = "stdout") -> dict:
    return {"name": name, "output_type": "stream", "text": _lines(text)}


def _cell_id(source: str) -> str:
    return hashlib.sha1(source.encode()).hexdigest()[:12]  # stable across rebuilds, Colab-like


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _cells(solved: bool, buggy: bool) -> list[dict]:
    """All cells of one variant; `solved` adds the solution and a student's leftovers."""

    def run(source: str, count: int, *outputs: dict) -> dict:
        return _code_cell(source, count, list(outputs)) if solved else _code_cell(source)

    def pick(template: str, correct: str, bug: str | None = None) -> str:
        if not solved:
            return template
        return bug if (buggy and bug is not None) else correct

    cells = [_markdown(BUGGY_NOTE)] if buggy else []
    cells += [
        _markdown(given.INTRO),
        _markdown(given.SETUP_MD),
        run(given.INSTALL, 1, _stream("Collecting de-core-news-sm==3.8.0\n✔ Download and installation successful\n")),
        _markdown(given.IMPORTS_MD),
        run(given.IMPORTS, 2),
        _markdown(given.CONSTANTS_MD),
        run(given.CONSTANTS, 3, _stream("device: cuda\n")),
        _markdown(given.DATA_MD),
        run(given.LOAD_DATA, 4, _stream("29000 1014\n")),
        run(given.TOKENIZERS, 5, _stream("['Zwei', 'Hunde', 'spielen', 'im', 'Schnee', '.']\n")),
        _markdown(given.VOCAB_MD),
        run(
            given.VOCAB,
            6,
            _stream("tokenizing de: 100%|██████████| 29000/29000\n", "stderr"),
            _stream("{'de': 18666, 'en': 10837}\n"),
        ),
        _markdown(given.BATCHING_MD),
        run(given.BATCHING, 7, _stream("28996 1014\n")),
        _markdown(given.GIVEN_MD),
        run(given.EMBEDDINGS, 8),
        run(given.ATTENTION, 9),
        run(given.FEED_FORWARD, 10),
        run(given.PADDING_MASK, 11),
        run(given.ENCODER, 12),
        _markdown(given.MASK_MD),
        run(pick(graded.MASK_TEMPLATE, graded.MASK_CORRECT, graded.MASK_BUGGY), 21),
    ]
    if solved:
        output = graded.MASK_TRY_OUTPUT_BUGGY if buggy else graded.MASK_TRY_OUTPUT_CORRECT
        cells.append(run(graded.MASK_TRY, 22, _stream(output)))
    cells += [
        _markdown(given.DECODER_LAYER_MD),
        run(pick(graded.DECODER_LAYER_TEMPLATE, graded.DECODER_LAYER_FIRST_ATTEMPT), 23),
    ]
    if solved:
        cells.append(run(graded.DECODER_LAYER_TRY, 24, _stream("torch.Size([2, 7, 16])\n")))
    cells += [_markdown(given.DECODER_MD), run(pick(graded.DECODER_TEMPLATE, graded.DECODER_CORRECT), 25)]
    if solved:  # the student fixes DecoderLayer in a later cell; the last definition must win
        cells += [_markdown(graded.DECODER_LAYER_FIXED_MD), run(graded.DECODER_LAYER_FIXED, 31)]
    cells += [
        _markdown(given.TRANSFORMER_MD),
        run(pick(graded.TRANSFORMER_TEMPLATE, graded.TRANSFORMER_CORRECT), 32),
        _markdown(given.LOSS_MD),
        run(pick(graded.LOSS_TEMPLATE, graded.LOSS_CORRECT, graded.LOSS_BUGGY), 33),
        _markdown(given.TRAINING_MD),
        run(
            pick(graded.HYPERPARAMETERS_TEMPLATE, graded.HYPERPARAMETERS_CORRECT),
            40,
            _stream("Decoder: 3 layers, vocabulary 10837\n"),
        ),
        run(pick(graded.TRAIN_STEP_TEMPLATE, graded.TRAIN_STEP_CORRECT) + "\n\n\n" + given.TRAIN_LOOP, 41),
        run(
            given.RUN_AND_PLOT,
            42,
            _stream(
                "".join(
                    f"epoch {epoch}: 평균 손실 {loss:.4f}\n"
                    for epoch, loss in enumerate(
                        [4.1873, 2.9542, 2.4418, 2.1179, 1.8862, 1.7101, 1.5713, 1.4590, 1.3652, 1.2871], 1
                    )
                )
            ),
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": _PLOT_PNG, "text/plain": ["<Figure size 600x400 with 1 Axes>"]},
            },
        ),
        _markdown(given.EVALUATION_MD),
        run(given.EVALUATION, 43, _stream("validation BLEU: 0.3517\n")),
    ]
    if solved:
        cells += _scratch_cells()
    return cells


def _scratch_cells() -> list[dict]:
    """Leftovers typical of a finished notebook: a failed experiment and a parameter count."""
    failed = {
        "output_type": "error",
        "ename": "TypeError",
        "evalue": "Transformer.decode() missing 1 required positional argument: 'tgt_batch'",
        "traceback": [
            "\u001b[0;31mTypeError\u001b[0m: Transformer.decode() missing 1 required positional argument: 'tgt_batch'"
        ],
    }
    return [
        _code_cell(
            "src_batch, tgt_batch = next(iter(valid_loader))\nprint(model.decode(src_batch[:2].to(device)))",
            38,
            [failed],
        ),
        _code_cell("print(sum(p.numel() for p in model.parameters()))", 44, [_stream("12094613\n")]),
        _code_cell("", None),
    ]


def _notebook(cells: list[dict]) -> dict:
    """A Colab-style nbformat 4.0 notebook around the cells."""
    return {
        "nbformat": 4,
        "nbformat_minor": 0,
        "metadata": {
            "colab": {"provenance": []},
            "accelerator": "GPU",
            "kernelspec": {"name": "python3", "display_name": "Python 3"},
            "language_info": {"name": "python"},
        },
        "cells": cells,
    }


def build() -> dict[str, str]:
    """Render every example notebook.

    Returns:
        File name -> JSON text.
    """
    variants = {
        "template_untouched.ipynb": _cells(solved=False, buggy=False),
        "correct_original_format.ipynb": _cells(solved=True, buggy=False),
        "buggy_original_format.ipynb": _cells(solved=True, buggy=True),
    }
    return {name: json.dumps(_notebook(cells), indent=2, ensure_ascii=False) + "\n" for name, cells in variants.items()}


def main(argv: list[str]) -> int:
    """Write the notebooks, or with --check report whether the committed ones are current.

    Args:
        argv: command-line arguments after the program name.

    Returns:
        The exit status.
    """
    rendered = build()
    if "--check" in argv:
        stale = [
            name
            for name, text in rendered.items()
            if not (HERE / name).is_file() or (HERE / name).read_text(encoding="utf-8") != text
        ]
        for name in stale:
            print(f"stale: examples/{name} (run python examples/build_examples.py)")
        return 1 if stale else 0
    for name, text in rendered.items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote examples/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
