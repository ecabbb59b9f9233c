"""Trusted BLEU of a submission's weights held in a worker session (trained there or loaded there).

The trusted side reads the weights, maps them onto the reference architecture (the same
structural mapping as the unit checks, confirmed by matching logits), translates the whole
validation split with its own greedy decoder and computes NLTK corpus BLEU.

Documented rule when the weights do not fit the reference architecture: the trusted side asks
the worker to translate the validation SOURCES with the student's own model and masks (the
decoder only ever sees what it generated) and scores those translations the same way; the report
says so.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from autograder.sandbox import Worker
from autograder.transplant import candidate_mappings
from mtkit.batching import pad_pair_batch
from mtkit.bleu import corpus_bleu, ids_to_tokens, sacre_bleu
from mtkit.constants import PAD_IDX
from mtkit.dataset import PreparedData, prepare_data
from mtkit.worker_training import flatten
from reference.evaluate import evaluate_model
from reference.masks import create_look_ahead_mask_for_attention, create_padding_mask_for_attention
from reference.train import build_model

BY_REFERENCE = "reference architecture with the submission's weights"
BY_OWN_MODEL = "the submission's own model (its weights do not fit the reference architecture)"


def load_data(config: dict[str, Any]) -> PreparedData:
    """Prepared Multi30k as grader.yml's data section describes it."""
    data = config["data"]
    return prepare_data(local_dir=data["local_dir"], tokenizer=data["tokenizer"],
                        max_length=data["max_length"], cache_dir=data["cache_dir"])


def probe_batch(data: PreparedData, count: int = 8) -> list[Tensor]:
    """A few training pairs with the reference masks: [src (B, S), tgt (B, T), src mask, tgt mask]."""
    train = data.splits["train"]
    src, tgt = pad_pair_batch(train.src[:count], train.tgt[:count], PAD_IDX)
    return [src, tgt, create_padding_mask_for_attention(src, PAD_IDX),
            create_look_ahead_mask_for_attention(tgt, PAD_IDX)]


def map_onto_reference(worker: Worker, session: int, hparams: dict[str, Any], data: PreparedData,
                       ) -> torch.nn.Module | None:
    """Load the session's weights into the reference Transformer, if some mapping reproduces them.

    Args:
        worker: the worker holding the session.
        session: a handle whose `.model` is the submission's Transformer, with a `logits` method.
        hparams: the model sizes (embedding_dim, feed_forward_dim, num_heads, num_layers, drop_prob).
        data: prepared data (vocabularies and the probe batch).

    Returns:
        The reference model carrying the student's weights, or None when no mapping fits.
    """
    state = {name.removeprefix("model."): t for name, t in worker.state(session).items()
             if name.startswith("model.")}
    vocab_sizes = {lang: len(v) for lang, v in data.vocabs.items()}
    model = build_model(hparams, vocab_sizes, data.max_length).eval()
    reference_params = [(n, list(p.shape)) for n, p in model.named_parameters()]
    student_params = [(n, list(t.shape)) for n, t in state.items() if t.is_floating_point()]
    batch = probe_batch(data)
    student_logits = worker.run(session, "logits", batch, mode="eval")
    for mapping in candidate_mappings(reference_params, student_params):
        model.load_state_dict({ref: state[stu] for ref, stu in mapping.items()}, strict=False)
        with torch.no_grad():
            logits = model(*batch)
        if logits.shape == student_logits.shape and torch.allclose(logits, student_logits, rtol=1e-3, atol=1e-4):
            return model
    return None


def _score_in_worker(worker: Worker, session: int, data: PreparedData, timeout_s: float) -> dict[str, Any]:
    split = data.splits["validation"]
    flat, lengths = flatten(split.src)
    ids = worker.run(session, "translate", [flat, lengths, data.max_length], mode="eval", timeout_s=timeout_s)
    itos = data.vocabs[data.tgt_language].itos
    hyps = [ids_to_tokens([i for i in row if i >= 0], itos) for row in ids.tolist()]
    refs = split.tgt_tokens
    return {"bleu": corpus_bleu(hyps, refs), "sacrebleu": sacre_bleu(hyps, refs),
            "n_sentences": len(hyps), "split": "validation",
            "examples": [{"src": " ".join(split.src_tokens[i]), "ref": " ".join(refs[i]),
                          "hyp": " ".join(hyps[i])} for i in range(min(3, len(hyps)))]}


def evaluate_weights(worker: Worker, session: int, hparams: dict[str, Any], data: PreparedData,
                     ) -> dict[str, Any]:
    """BLEU of the session's current weights (see the module docstring for the two routes).

    The original notebook's teacher-forced figure rides along, labelled as not graded.

    Returns:
        `evaluate_model`'s result plus "evaluated_by".
    """
    model = map_onto_reference(worker, session, hparams, data)
    if model is not None:
        result = evaluate_model(model, data, teacher_forced=True)
        result["evaluated_by"] = BY_REFERENCE
        return result
    result = _score_in_worker(worker, session, data, timeout_s=300)
    result["evaluated_by"] = BY_OWN_MODEL
    return result
