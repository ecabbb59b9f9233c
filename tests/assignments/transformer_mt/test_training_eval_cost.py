"""The cost of the training part's evaluations is bounded: a length cap per sentence, and pauses
far below the bar scored on a fixed subset (only the whole split decides)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import torch

import assignments.transformer_mt.training_eval as training_eval
from assignments.transformer_mt.reference.evaluate import TRUSTED_LENGTH_CAP
from assignments.transformer_mt.reference.train import build_model
from mtkit.constants import EOS_IDX
from mtkit.dataset import PreparedData, prepare_data

SMALL_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "multi30k_small"
SMALL_COUNTS = {"train": 30, "validation": 6, "test": 5}
SIZES = {"embedding_dim": 16, "feed_forward_dim": 32, "num_heads": 2, "num_layers": 1, "drop_prob": 0.0}


class _HeldWeights:
    """Stands in for the training worker: holds a model's weights and answers the trusted side's requests."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model.eval()

    def state(self, session: int) -> dict[str, torch.Tensor]:
        return {f"model.{name}": tensor for name, tensor in self.model.state_dict().items()}

    def run(self, session: int, method: str, args: list[Any], mode: str = "eval") -> torch.Tensor:
        assert method == "logits"
        with torch.no_grad():
            return self.model(*args)


def _never_stopping_model(data: PreparedData) -> torch.nn.Module:
    """The buggy run's symptom: a model that never emits <eos>, so only a limit ends its sentences."""
    torch.manual_seed(0)
    model = build_model(SIZES, {lang: len(v) for lang, v in data.vocabs.items()}, data.max_length)
    with torch.no_grad():
        model.decoder.dense_layer.bias[EOS_IDX] = -1e4
    return model


def test_a_model_that_never_emits_eos_pays_a_subset_per_pause_and_a_capped_whole_split(tmp_path, monkeypatch):
    data = prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    worker = _HeldWeights(_never_stopping_model(data))
    monkeypatch.setattr(training_eval, "ESTIMATE_SENTENCES", 2)

    pause = training_eval.evaluate_weights(worker, 0, SIZES, data, gate_bar=0.2)  # type: ignore[arg-type]
    assert pause["estimate"] is True and pause["n_sentences"] == 2 and pause["bleu"] < 0.1

    final = training_eval.evaluate_weights(worker, 0, SIZES, data)  # type: ignore[arg-type]
    assert "estimate" not in final and final["n_sentences"] == 6  # the whole split decides
    # No sentence ran past its cap (it had no <eos> to stop at), and the caps are below max_length.
    sources = data.splits["validation"].src
    caps = [TRUSTED_LENGTH_CAP.tokens(len(src), data.max_length) for src in sources]
    assert final["mean_hyp_len"] <= sum(caps) / len(caps)
    assert max(caps) < data.max_length and all(
        cap == math.ceil(1.3 * len(s)) + 8 for cap, s in zip(caps, sources, strict=True)
    )


def test_a_pause_near_the_bar_is_scored_on_the_whole_split(tmp_path, monkeypatch):
    data = prepare_data(SMALL_DIR, cache_dir=tmp_path, expected_counts=SMALL_COUNTS)
    worker = _HeldWeights(_never_stopping_model(data))
    asked: list[int | None] = []

    def scored(model: Any, data: PreparedData, **kwargs: Any) -> dict[str, Any]:
        asked.append(kwargs.get("limit"))  # estimate 0.15: above half the bar of 0.2
        return {"bleu": 0.15, "n_sentences": kwargs.get("limit") or 6, "split": "validation"}

    monkeypatch.setattr(training_eval, "evaluate_model", scored)
    pause = training_eval.evaluate_weights(worker, 0, SIZES, data, gate_bar=0.2)  # type: ignore[arg-type]
    assert asked == [training_eval.ESTIMATE_SENTENCES, None] and "estimate" not in pause
    assert pause["n_sentences"] == 6
