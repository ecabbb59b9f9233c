"""bench/config_speed.py's variant syntax: NAME:KEY=VALUE,... over a profile's settings."""

from __future__ import annotations

from bench_scripts import load_bench

BASE = {"embedding_dim": 256, "learning_rate": 0.002, "lr_schedule": "linear", "batch_size": 128}


def test_a_variant_replaces_its_keys_with_the_profiles_types() -> None:
    name, hparams = load_bench("config_speed").parse_variant("d128:embedding_dim=128,learning_rate=3e-3", BASE)
    assert name == "d128"
    assert hparams == {"embedding_dim": 128, "learning_rate": 0.003, "lr_schedule": "linear", "batch_size": 128}
    assert isinstance(hparams["embedding_dim"], int)


def test_a_variant_without_keys_is_the_profile_and_leaves_it_untouched() -> None:
    name, hparams = load_bench("config_speed").parse_variant("base:", BASE)
    assert (name, hparams) == ("base", BASE) and hparams is not BASE
    assert load_bench("config_speed").parse_variant("cos:lr_schedule=cosine", BASE)[1]["lr_schedule"] == "cosine"
    assert BASE["lr_schedule"] == "linear"
