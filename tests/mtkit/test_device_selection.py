"""The GPU path as far as a CPU allows: device choice, mixed precision, profile choice, no fixed 'cuda'."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from assignments.transformer_mt.settings import training_settings
from autograder.config import load_config
from mtkit import training
from mtkit.recipe import resolve_profile_name

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend a bf16-capable CUDA device is present (nothing is allocated on it)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)


def test_default_device_follows_cuda_availability(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert training.default_device().type == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert training.default_device().type == "cuda"


def test_mixed_precision_is_off_on_cpu_and_bf16_on_a_capable_gpu(fake_cuda: None) -> None:
    assert training._autocast_dtype("auto", torch.device("cpu")) is None
    assert training._autocast_dtype("auto", torch.device("cuda")) is torch.bfloat16
    assert training._autocast_dtype("fp32", torch.device("cuda")) is None


def test_gpu_without_bf16_falls_back_to_fp32_not_fp16(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: False)
    # fp16 would overflow the assignment's masked_fill(-1e10).
    assert training._autocast_dtype("auto", torch.device("cuda")) is None


def test_auto_profile_is_gpu_with_cuda_and_cpu_without(monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config()
    assert training_settings(config).profile == "auto"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert training_settings(config).profile_name() == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert training_settings(config).profile_name() == "gpu"
    assert resolve_profile_name("auto", ["cpu"]) == "cpu"  # no gpu profile defined
    assert resolve_profile_name("tiny", ["cpu"]) == "tiny"  # an explicit name is kept


def test_no_code_path_hard_codes_the_cuda_device() -> None:
    # "cuda" may appear only where a device is chosen or described, never as a fixed target
    # such as .cuda(), device="cuda" or torch.device("cuda") outside the selection function.
    fixed = re.compile(r"\.cuda\(|device\s*=\s*['\"]cuda|to\(['\"]cuda")
    offenders = []
    for package in ("mtkit", "assignments", "autograder"):
        for path in (ROOT / package).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if fixed.search(line) and not line.lstrip().startswith("#"):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
