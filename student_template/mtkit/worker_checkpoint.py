"""Load a submitted checkpoint into the submission's own Transformer, inside the sandboxed worker.

The checkpoint file is untrusted: it is only ever opened here, in the worker, with torch's
weights-only loader (or safetensors), and the trusted side reads the resulting weights back as
plain tensors.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor, nn

from mtkit.constants import PAD_IDX
from mtkit.worker_training import ModelSession

# Where common training scripts put the state_dict inside a saved dict (torch.save(...)).
STATE_DICT_KEYS = ("model_state_dict", "state_dict", "model")
SAVE_HINT = "save it with torch.save(model.state_dict(), 'checkpoint.pt')"


class CheckpointError(ValueError):
    """The checkpoint cannot be used; the message says why and what to do."""


def read_checkpoint(data: Tensor, file_name: str) -> Any:
    """Deserialize checkpoint bytes without running code from the file.

    Args:
        data: (N,) uint8, the file's bytes.
        file_name: the submitted file's name; `.safetensors` selects that format.

    Returns:
        What the file holds (a mapping for any usable checkpoint).

    Raises:
        CheckpointError: the file is not a weights-only checkpoint.
    """
    raw = data.numpy().tobytes()
    if file_name.endswith(".safetensors"):
        from safetensors.torch import load as load_safetensors

        try:
            return load_safetensors(raw)
        except Exception as error:  # noqa: BLE001 - any parse failure means "not a safetensors file"
            raise CheckpointError(f"{file_name} is not a readable safetensors file ({error}).") from None
    try:
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - pickled objects other than tensors are refused here
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CheckpointError(
            f"{file_name} could not be loaded as weights only ({first_line[:300]}); "
            f"it must hold tensors, not pickled objects: {SAVE_HINT}."
        ) from None


def state_dict_of(payload: Any) -> dict[str, Tensor]:
    """The parameter tensors in a loaded checkpoint.

    Accepts a state_dict, or a dict holding one under a usual key (see STATE_DICT_KEYS); a
    "module." prefix left by DataParallel is removed.

    Returns:
        name -> tensor.

    Raises:
        CheckpointError: no state_dict is found.
    """
    if isinstance(payload, Mapping):
        for key in STATE_DICT_KEYS:
            inner = payload.get(key)
            if isinstance(inner, Mapping) and inner and all(isinstance(v, Tensor) for v in inner.values()):
                payload = inner
                break
    if (
        not isinstance(payload, Mapping)
        or not payload
        or not all(isinstance(k, str) and isinstance(v, Tensor) for k, v in payload.items())
    ):
        raise CheckpointError(f"the checkpoint holds no state_dict of tensors: {SAVE_HINT}.")
    state = dict(payload)
    if all(name.startswith("module.") for name in state):
        state = {name.removeprefix("module."): t for name, t in state.items()}
    return state


def shape_mismatches(model: nn.Module, state: Mapping[str, Tensor]) -> list[str]:
    """Returns: names present in both whose shapes differ, in the model's order."""
    expected = model.state_dict()
    return [n for n in expected if n in state and tuple(state[n].shape) != tuple(expected[n].shape)]


def mismatch_report(model: nn.Module, state: Mapping[str, Tensor], limit: int = 3) -> str | None:
    """Why `state` does not fit `model`, or None when every name and shape matches.

    Returns:
        A short text naming up to `limit` missing, unexpected or differently shaped tensors.
    """
    expected = model.state_dict()
    problems = []
    missing = [n for n in expected if n not in state]
    unexpected = [n for n in state if n not in expected]
    shapes = shape_mismatches(model, state)
    if missing:
        problems.append(f"{len(missing)} tensor(s) your model has are missing, e.g. " + ", ".join(missing[:limit]))
    if unexpected:
        problems.append(f"{len(unexpected)} tensor(s) your model does not have, e.g. " + ", ".join(unexpected[:limit]))
    for name in shapes[:limit]:
        problems.append(
            f"{name} is {tuple(state[name].shape)} in the checkpoint but {tuple(expected[name].shape)} in your model"
        )
    return "; ".join(problems) or None


def _vocabulary_differs(model: nn.Module, state: Mapping[str, Tensor], vocab_sizes: Any) -> bool:
    """True when a mismatched dimension is one of the model's vocabulary sizes."""
    sizes = set(vocab_sizes.values()) if isinstance(vocab_sizes, Mapping) else set()
    expected = model.state_dict()
    return any(
        mine != theirs and mine in sizes
        for name in shape_mismatches(model, state)
        for theirs, mine in zip(state[name].shape, expected[name].shape, strict=False)
    )


class CheckpointSession(ModelSession):
    """The submission's model, built with the given sizes and loaded from the submitted checkpoint."""

    def __init__(
        self,
        model_cls: Callable[..., nn.Module],
        padding_mask_fn: Callable[..., Tensor],
        look_ahead_mask_fn: Callable[..., Tensor],
        model_args: list[Any],
        data: Tensor,
        file_name: str,
        threads: int = 1,
        pad_idx: int = PAD_IDX,
    ) -> None:
        torch.set_num_threads(max(1, int(threads)))
        super().__init__(model_cls(*model_args), padding_mask_fn, look_ahead_mask_fn, pad_idx)
        state = state_dict_of(read_checkpoint(data, file_name))
        problem = mismatch_report(self.model, state)
        if problem:
            vocabulary = (
                " A different vocabulary size means a different vocabulary: train on the one "
                "mtkit.dataset.prepare_data builds, as the grader does."
                if _vocabulary_differs(self.model, state, model_args[0])
                else ""
            )
            raise CheckpointError(
                f"{file_name} does not fit the model your notebook builds with these "
                f"sizes: {problem}. The hyperparameter cell must hold the sizes the "
                f"checkpoint was trained with.{vocabulary}"
            )
        self.model.load_state_dict(state)
        self.model.eval()
