"""spaCy tokenizers (blank rules or the course's trained pipelines) returning token texts only."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any

from mtkit.constants import SRC_LANGUAGE, TGT_LANGUAGE

if TYPE_CHECKING:
    from spacy.language import Language

TokenizeFn = Callable[[Sequence[str]], list[list[str]]]

TOKENIZER_KINDS: tuple[str, ...] = ("blank", "model")
# The trained pipelines the original notebook loads with spacy.load(...).
SPACY_MODELS: dict[str, str] = {"de": "de_core_news_sm", "en": "en_core_web_sm"}

# Sentences handed to the tokenizer at a time; larger batches amortise per-call overhead.
_PIPE_BATCH_SIZE = 1000


class TokenizerError(RuntimeError):
    """A tokenizer cannot be created; the message says how to fix it."""


def _check_kind(kind: str) -> None:
    if kind not in TOKENIZER_KINDS:
        raise ValueError(f"Unknown tokenizer kind {kind!r}; choose one of {TOKENIZER_KINDS}")


def _make_tokenize_fn(tokenizer: Any) -> TokenizeFn:
    """Wrap a spaCy Tokenizer so that it maps a batch of sentences to token-text lists.

    (`Language.tokenizer` is typed as a plain callable; the object has `pipe`.)
    """

    def tokenize(sentences: Sequence[str]) -> list[list[str]]:
        # Tokenizer.pipe streams the sentences through the rules without building a full
        # pipeline Doc per call; the result equals [[t.text for t in nlp(s)] for s in sentences].
        return [[token.text for token in doc] for doc in tokenizer.pipe(sentences, batch_size=_PIPE_BATCH_SIZE)]

    return tokenize


def _load_model(lang: str) -> Language:
    """spacy.load the course's trained pipeline for a language, with an actionable error."""
    import spacy

    name = SPACY_MODELS.get(lang)
    if name is None:
        raise TokenizerError(f"No trained spaCy pipeline is configured for language {lang!r}")
    try:
        return spacy.load(name)
    except OSError as error:
        raise TokenizerError(
            f"spaCy pipeline {name!r} is not installed ({error}). Install it with "
            f"`python -m spacy download {name}`, or use the tokenizer kind 'blank' "
            "(spacy.blank rules; on Multi30k they give the same token lists)."
        ) from error


def load_tokenizers(
    kind: str = "blank", languages: Sequence[str] = (SRC_LANGUAGE, TGT_LANGUAGE)
) -> dict[str, TokenizeFn]:
    """Create one batch tokenizer per language.

    Args:
        kind: "blank" for `spacy.blank(lang)` rules (no download needed), or "model" for the
            trained pipelines de_core_news_sm / en_core_web_sm (their tokenizer only: the other
            components do not change token boundaries).
        languages: language codes to create tokenizers for.

    Returns:
        {lang: fn}, where fn(sentences) returns one list of token texts per sentence.

    Raises:
        ValueError: unknown kind.
        TokenizerError: kind "model" and a pipeline is not installed.
    """
    _check_kind(kind)
    import spacy  # lazy: importing spaCy takes about a second

    tokenizers: dict[str, TokenizeFn] = {}
    for lang in languages:
        nlp = spacy.blank(lang) if kind == "blank" else _load_model(lang)
        tokenizers[lang] = _make_tokenize_fn(nlp.tokenizer)
    return tokenizers


def tokenizer_fingerprint(kind: str = "blank", languages: Sequence[str] = (SRC_LANGUAGE, TGT_LANGUAGE)) -> str:
    """Identify the tokenization rules in use (for cache keys) without loading spaCy.

    Args:
        kind: tokenizer kind as in `load_tokenizers`.
        languages: language codes in use.

    Returns:
        A string naming the kind, the spaCy version and, for "model", each pipeline's version.
    """
    _check_kind(kind)
    parts = [f"kind={kind}", f"spacy={_version('spacy')}"]
    if kind == "model":
        parts += [f"{SPACY_MODELS.get(lang, lang)}={_version(SPACY_MODELS.get(lang, lang))}" for lang in languages]
    return ";".join(parts)


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "missing"
