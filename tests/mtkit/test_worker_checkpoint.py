"""Loading a submitted checkpoint (worker side): weights only, usual layouts, clear mismatches."""

from __future__ import annotations

import io

import pytest
import torch
from safetensors.torch import save as save_safetensors
from torch import nn

from mtkit.worker_checkpoint import CheckpointError, CheckpointSession, mismatch_report, read_checkpoint, state_dict_of


class TinyTranslator(nn.Module):
    """Stands in for a student's Transformer: (vocab sizes dict, width) -> embedding + output layer."""

    def __init__(self, vocab_size: dict, width: int) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab_size["de"], width)
        self.dense_layer = nn.Linear(width, vocab_size["en"])


def _bytes(payload: object) -> torch.Tensor:
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return torch.frombuffer(bytearray(buffer.getvalue()), dtype=torch.uint8)


def _mask(batch: torch.Tensor, pad_idx: int) -> torch.Tensor:
    return batch != pad_idx


def test_state_dicts_are_found_in_the_usual_layouts() -> None:
    state = TinyTranslator({"de": 7, "en": 5}, 4).state_dict()
    for payload in (
        state,
        {"model_state_dict": state, "epoch": 3},
        {"state_dict": state},
        {"model": state, "extra": {"lr": 1e-3}},
    ):
        assert state_dict_of(read_checkpoint(_bytes(payload), "checkpoint.pt")).keys() == state.keys()
    wrapped = {f"module.{name}": t for name, t in state.items()}  # saved from DataParallel
    assert state_dict_of(wrapped).keys() == state.keys()
    raw = save_safetensors({k: v.contiguous() for k, v in state.items()})
    loaded = read_checkpoint(torch.frombuffer(bytearray(raw), dtype=torch.uint8), "weights.safetensors")
    assert all(torch.equal(loaded[k], state[k]) for k in state)


class Sneaky:
    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.mark.parametrize("payload", [Sneaky(), {"model": {"weight": Sneaky()}}])
def test_pickled_objects_are_refused_without_running_them(payload: object, capsys) -> None:
    with pytest.raises(CheckpointError, match="could not be loaded as weights only"):
        read_checkpoint(_bytes(payload), "checkpoint.pt")
    assert "this must never run" not in capsys.readouterr().out


@pytest.mark.parametrize("payload, name", [({"lr": 0.1}, "checkpoint.pt"), ([1, 2], "checkpoint.pt")])
def test_a_file_without_tensors_says_how_to_save_one(payload: object, name: str) -> None:
    with pytest.raises(CheckpointError, match=r"torch.save\(model.state_dict\(\)"):
        state_dict_of(read_checkpoint(_bytes(payload), name))


def test_not_a_checkpoint_at_all_is_refused() -> None:
    garbage = torch.frombuffer(bytearray(b"not a zip, not a pickle"), dtype=torch.uint8)
    with pytest.raises(CheckpointError, match="could not be loaded"):
        read_checkpoint(garbage, "checkpoint.pt")
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        read_checkpoint(garbage, "checkpoint.safetensors")


def test_mismatches_name_tensors_and_shapes() -> None:
    model = TinyTranslator({"de": 7, "en": 5}, 4)
    state = TinyTranslator({"de": 7, "en": 5}, 6).state_dict()
    state["extra.weight"] = torch.zeros(1)
    del state["dense_layer.bias"]
    report = mismatch_report(model, state) or ""
    assert "1 tensor(s) your model has are missing, e.g. dense_layer.bias" in report
    assert "1 tensor(s) your model does not have, e.g. extra.weight" in report
    assert "embedding.weight is (7, 6) in the checkpoint but (7, 4) in your model" in report
    assert mismatch_report(model, model.state_dict()) is None


def test_the_session_loads_matching_weights_and_flags_another_vocabulary() -> None:
    trained = TinyTranslator({"de": 7, "en": 5}, 4)
    session = CheckpointSession(
        TinyTranslator, _mask, _mask, [{"de": 7, "en": 5}, 4], _bytes(trained.state_dict()), "checkpoint.pt"
    )
    assert all(
        torch.equal(a, b)
        for a, b in zip(session.model.state_dict().values(), trained.state_dict().values(), strict=True)
    )
    assert not session.model.training
    with pytest.raises(CheckpointError, match="A different vocabulary size means a different vocabulary"):
        CheckpointSession(
            TinyTranslator, _mask, _mask, [{"de": 9, "en": 5}, 4], _bytes(trained.state_dict()), "checkpoint.pt"
        )
    with pytest.raises(CheckpointError) as error:  # another width: no vocabulary hint
        CheckpointSession(
            TinyTranslator, _mask, _mask, [{"de": 7, "en": 5}, 8], _bytes(trained.state_dict()), "checkpoint.pt"
        )
    assert "vocabulary" not in str(error.value) and "hyperparameter cell" in str(error.value)
