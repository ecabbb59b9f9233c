"""CLI `python -m assignments.transformer_mt.reference.translate`: German -> English with a train checkpoint."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts OpenMP (see this package's train)

import argparse
import fileinput
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from mtkit.bleu import ids_to_tokens
from mtkit.constants import EOS_IDX, SOS_IDX
from mtkit.tokenize import load_tokenizers
from mtkit.training import load_checkpoint
from mtkit.vocab import Vocab

from .fast_decode import fast_greedy_translate
from .model import Transformer
from .train import VOCAB_NAME, build_model

# "a , b ." -> "a, b."; "( x )" -> "(x)"; "do n't" -> "don't". Readability only: BLEU uses tokens.
_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}]|'s|'re|'ve|'ll|'d|'m|n't)")
_NO_SPACE_AFTER = re.compile(r"([(\[{]) ")


def detokenize(tokens: Sequence[str]) -> str:
    """Join tokens with spaces, then remove the spaces a reader would not expect.

    Args:
        tokens: token texts.

    Returns:
        A readable sentence.
    """
    text = " ".join(tokens)
    return _NO_SPACE_AFTER.sub(r"\1", _NO_SPACE_BEFORE.sub(r"\1", text))


def load_translator(
    checkpoint: str | Path, vocab_path: str | Path | None = None, device: str | torch.device = "cpu"
) -> tuple[Transformer, dict[str, Vocab], dict[str, Any]]:
    """Rebuild the model from a checkpoint (weights_only load) and its vocabularies from JSON.

    Args:
        checkpoint: checkpoint.pt written by assignments.transformer_mt.reference.train.
        vocab_path: vocab.json; default the one next to the checkpoint.
        device: where to put the model.

    Returns:
        (model in eval mode, {language: Vocab}, checkpoint metadata).
    """
    payload = load_checkpoint(checkpoint, map_location=device)
    meta = payload["extra"]
    vocab_path = Path(vocab_path) if vocab_path else Path(checkpoint).with_name(VOCAB_NAME)
    vocabs = {lang: Vocab.from_dict(entry) for lang, entry in json.loads(vocab_path.read_text("utf-8")).items()}
    model = build_model(meta, {lang: len(v) for lang, v in vocabs.items()}, int(meta["max_length"]))
    model.load_state_dict(payload["model"])
    return model.to(device).eval(), vocabs, meta


def translate(
    model: Transformer, vocabs: dict[str, Vocab], meta: dict[str, Any], sentences: Sequence[str]
) -> list[str]:
    """Tokenize, encode, greedy-decode with the fast decoder and detokenize.

    Args:
        model: from `load_translator`.
        vocabs: from `load_translator`.
        meta: checkpoint metadata (languages, tokenizer kind, max_length).
        sentences: source-language sentences.

    Returns:
        One translation per sentence.
    """
    src_lang, tgt_lang = meta["src_language"], meta["tgt_language"]
    max_length = int(meta["max_length"])
    tokenize = load_tokenizers(meta.get("tokenizer", "blank"), languages=(src_lang,))[src_lang]
    # Keep within the positional table: <sos> + at most max_length - 2 tokens + <eos>.
    encoded = [
        [SOS_IDX, *vocabs[src_lang].encode(tokens)[: max_length - 2], EOS_IDX] for tokens in tokenize(list(sentences))
    ]
    ids = fast_greedy_translate(model, encoded, max_new_tokens=max_length)
    return [detokenize(ids_to_tokens(row, vocabs[tgt_lang].itos)) for row in ids]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: translate sentences given as arguments, from a file, or from stdin.

    Args:
        argv: arguments (default sys.argv[1:]).

    Returns:
        Exit status 0.
    """
    parser = argparse.ArgumentParser(
        prog="python -m assignments.transformer_mt.reference.translate", description=__doc__
    )
    parser.add_argument("--checkpoint", required=True, help="checkpoint.pt from this package's train module")
    parser.add_argument("--vocab", default=None, help="vocab.json (default: next to the checkpoint)")
    parser.add_argument("--input", default=None, help="file with one sentence per line ('-' = stdin)")
    parser.add_argument("sentences", nargs="*", help="sentences to translate")
    args = parser.parse_args(argv)
    sentences = list(args.sentences)
    if args.input:  # fileinput reads "-" as stdin
        with fileinput.input(args.input, encoding="utf-8") as stream:
            sentences += [line.strip() for line in stream if line.strip()]
    if not sentences:
        parser.error("give sentences as arguments or --input FILE")
    model, vocabs, meta = load_translator(args.checkpoint, args.vocab)
    for line in translate(model, vocabs, meta, sentences):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
