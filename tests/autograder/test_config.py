"""grader.yml as typed models: defaults, ranges, overrides, errors that name the offending key, `config` output."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from assignments.attention_encoder.settings import AttentionEncoderConfig
from assignments.attention_encoder.settings import TrainingConfig as Part1TrainingConfig
from assignments.transformer_mt.settings import (
    DataConfig,
    TrainingConfig,
    TransformerMtConfig,
    part2_settings,
    training_settings,
)
from autograder.assignment_folder import available_assignments
from autograder.config import (
    ConfigError,
    GraderConfig,
    TrainingSection,
    config_model,
    describe,
    iter_keys,
    load_config,
    parse_settings,
)

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, document: dict) -> Path:
    path = tmp_path / "grader.yml"
    path.write_text(yaml.safe_dump(document))
    return path


def _assignment_document() -> dict:
    return yaml.safe_load((ROOT / "assignments" / "transformer_mt" / "assignment.yml").read_text())


def _project_document() -> dict:
    """grader.yml with the assignment's parts written out (the TA's override section)."""
    document = yaml.safe_load((ROOT / "grader.yml").read_text())
    assert "parts" not in document  # the parts are the assignment's (assignment.yml)
    return {**document, "parts": _assignment_document()["parts"]}


def test_project_config_loads_with_every_section() -> None:
    config = load_config()
    assert isinstance(config, GraderConfig)
    # The core names no assignment's sections; Part 2's model adds `data` and extends `training`.
    assert set(GraderConfig.model_fields) == {
        "assignment",
        "worker",
        "grading",
        "feedback",
        "training",
        "late",
        "parts",
    }
    assert set(type(config).model_fields) == set(GraderConfig.model_fields) | {"data"}
    assert sum(p.points for p in config.parts.values()) == 100
    assert training_settings(config).threshold_bleu == 0.2
    assert list(training_settings(config).profiles) == ["cpu", "gpu"]  # file order kept


def test_the_parts_and_title_come_from_the_named_assignment(tmp_path: Path) -> None:
    config = load_config()
    assert config.assignment.name == "transformer_mt"
    assert config.assignment.title == _assignment_document()["title"]
    assert list(config.parts) == list(_assignment_document()["parts"])
    override = _project_document()
    override["parts"] = {"only": {"points": 2, "checks": {"a": 2}}}  # replaces the table as a whole
    assert list(load_config(_write(tmp_path, override)).parts) == ["only"]
    with pytest.raises(ConfigError, match=r"^assignment\.name: unknown assignment 'nope'"):
        load_config(overrides={"assignment.name": "nope"})
    with pytest.raises(ConfigError, match=r"^assignment\.name: unknown assignment 'nope'"):
        load_config(_write(tmp_path, override), {"assignment.name": "nope"})  # the file's parts are not its


def test_missing_keys_take_their_defaults(tmp_path: Path) -> None:
    document = {"assignment": {"name": "transformer_mt"}, "parts": _project_document()["parts"]}
    config = load_config(_write(tmp_path, document))
    assert config.worker.timeout_s == 30
    assert part2_settings(config).data.tokenizer == "blank"
    training = training_settings(config)
    assert training.profiles == {} and training.hparam_bounds.epochs == [1, 30]


def test_overrides_use_dotted_keys() -> None:
    config = load_config(overrides={"worker.timeout_s": 5, "training.enabled": True})
    assert config.worker.timeout_s == 5 and config.training.enabled is True
    config = load_config(
        None,
        {
            "grading.submission_budget_s": 10,
            "training.profiles.cpu.max_steps": 7,
            "training.hparam_bounds.num_layers": [1, 2],
        },
    )
    assert config.grading.submission_budget_s == 10
    training = training_settings(config)
    assert training.profiles["cpu"].max_steps == 7 and training.profiles["gpu"].max_steps == 0
    assert training.hparam_bounds.num_layers == [1, 2]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"grading.submission_budgets": 10}, "grading.submission_budgets: unknown key (known: seed, jobs, out_dir, "),
        ({"gradin.seed": 1}, "gradin: unknown section (known: assignment, worker, grading, feedback, training, "),
        ({"grading.jobs": "4"}, "grading.jobs: expected an integer, got str ('4')"),
        ({"grading.seed.value": 1}, "grading.seed.value: seed is not a section"),
        ({"parts.decoder.checks": {}}, "parts.decoder.checks: "),
    ],
)
def test_overrides_are_validated_like_the_file(overrides: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, overrides)
    assert str(error.value).startswith(message)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("grading.jobs", 0, "grading.jobs: must be at least 1, got 0"),
        ("worker.timeout_s", 0, "worker.timeout_s: must be greater than 0, got 0"),
        ("worker.reply_mb", 0, "worker.reply_mb: must be at least 1, got 0"),
        ("training.threshold_bleu", 20, "training.threshold_bleu: must be at most 1, got 20"),
        ("training.profiles.cpu.drop_prob", 1.5, "training.profiles.cpu.drop_prob: must be less than 1, got 1.5"),
        (
            "training.profiles.cpu.lr_schedule",
            "step",
            "training.profiles.cpu.lr_schedule: must be one of "
            "'constant', 'inverse_sqrt', 'linear' or 'cosine', got 'step'",
        ),
        ("feedback.language", "de", "feedback.language: must be one of 'ko' or 'en', got 'de'"),
        ("training.profile", "tpu", "training.profile: no profile named 'tpu' (have: cpu, gpu)"),
    ],
)
def test_out_of_range_values_are_rejected_naming_key_and_value(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, {key: value})
    assert str(error.value) == message


@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda d: d["worker"].update(timeout_ss=3), "worker.timeout_ss: unknown key (known: timeout_s, "),
        (lambda d: d["training"]["profiles"]["cpu"].update(warmup=3), "training.profiles.cpu.warmup: unknown key"),
        (
            lambda d: d["parts"]["decoder"].update(weight=3),
            "parts.decoder.weight: unknown key (known: title, points, checks, gate, structure, requires_parts, "
            "forbidden_calls)",
        ),
        (lambda d: d["worker"].update(timeout_s="soon"), "worker.timeout_s"),
        (lambda d: d["training"].update(enabled=1), "training.enabled"),
        (lambda d: d["parts"]["decoder"].update(points=25), "parts.decoder.points"),
        (lambda d: d["parts"]["decoder"]["checks"].update(decoder_causal=-3), "parts.decoder.checks.decoder_causal"),
        (lambda d: d.update(extra={}), "extra"),
        (lambda d: d["training"]["profiles"]["cpu"].update(num_heads=7), "training.profiles.cpu.num_heads"),
        (lambda d: d["training"].update(mode="magic"), "training.mode"),
    ],
)
def test_invalid_values_name_the_key(tmp_path: Path, mutate, key: str) -> None:
    document = _project_document()
    mutate(document)
    with pytest.raises(ConfigError) as error:
        load_config(_write(tmp_path, document))
    assert str(error.value).startswith(key)


def test_every_training_mode_is_accepted_and_bounds_default_per_name(tmp_path: Path) -> None:
    for mode in ("recipe", "student_hparams", "checkpoint"):
        document = _project_document()
        document["training"]["mode"] = mode
        document["training"]["hparam_bounds"] = {"num_layers": [1, 3]}
        training = training_settings(load_config(_write(tmp_path, document)))
        assert training.mode == mode
        assert training.hparam_bounds.num_layers == [1, 3]
        assert training.hparam_bounds.embedding_dim == [16, 1024]  # the default


@pytest.mark.parametrize(
    "section, value, key",
    [
        ("hparam_bounds", {"num_layers": [3, 1]}, "training.hparam_bounds.num_layers"),
        ("hparam_bounds", {"num_layers": [1]}, "training.hparam_bounds.num_layers"),
        ("hparam_bounds", {"num_layers": [1, "six"]}, "training.hparam_bounds.num_layers"),
        ("hparam_bounds", {"depth": [1, 3]}, "training.hparam_bounds.depth"),
        ("checkpoint_names", [], "training.checkpoint_names"),
        ("checkpoint_names", ["../other.pt"], "training.checkpoint_names"),
        ("checkpoint_names", "checkpoint.pt", "training.checkpoint_names"),
        ("checkpoint_max_mb", 0, "training.checkpoint_max_mb"),
    ],
)
def test_bad_training_mode_settings_name_their_key(tmp_path: Path, section: str, value: object, key: str) -> None:
    document = _project_document()
    document["training"][section] = value
    with pytest.raises(ConfigError) as error:
        load_config(_write(tmp_path, document))
    assert str(error.value).startswith(key)


def test_defaults_are_not_shared_between_loaded_configs() -> None:
    first = training_settings(load_config())
    first.checkpoint_names.append("mine.pt")
    first.hparam_bounds.epochs[1] = 99
    second = training_settings(load_config())
    assert "mine.pt" not in second.checkpoint_names
    assert second.hparam_bounds.epochs[1] != 99


def test_a_check_listed_twice_is_rejected(tmp_path: Path) -> None:
    document = _project_document()
    document["parts"]["decoder"]["checks"]["mask_blocks_future"] = 0
    with pytest.raises(ConfigError, match="mask_blocks_future"):
        load_config(_write(tmp_path, document))


def _document_keys(node: object, prefix: str = "") -> set[str]:
    """Every leaf key of a grader.yml document, collections' names generalised as in `describe`."""
    if not isinstance(node, dict):
        return {prefix.rstrip(".")}
    keys: set[str] = set()
    for name, value in node.items():
        if prefix in ("parts.", "training.profiles."):
            name = "<part>" if prefix == "parts." else "<name>"
        if f"{prefix}{name}" == "parts.<part>.checks":
            keys.add("parts.<part>.checks")
            continue
        keys |= _document_keys(value, f"{prefix}{name}.")
    return keys


def test_describe_lists_every_key_with_its_default_and_description() -> None:
    text = describe()  # the project's grader.yml grades Part 2: its sections are described too
    described = list(iter_keys(config_model("transformer_mt")))
    assert len(described) > 50
    for key, kind, default, description in described:
        assert f"{key}: {kind} = {default}\n    {description}" in text
        assert description.strip(), key
    keys = {key for key, *_ in described}
    assert _document_keys(_project_document()) <= keys  # every key grader.yml sets is described
    assert "grading.submission_budget_s: float = 300\n" in text
    assert "training.profiles.<name>.learning_rate: float = 0.0005\n" in text
    assert "training.hparam_bounds.epochs: list[float] = [1, 30]\n" in text


def test_isolation_reply_and_budget_keys_are_checked_and_reach_the_worker_limits() -> None:
    from autograder.part_kinds import worker_limits

    config = load_config(None, {"worker.isolation": "weak", "worker.reply_mb": 64})
    limits = worker_limits(config)
    assert (limits.isolation, limits.reply_mb) == ("weak", 64)
    assert load_config().worker.isolation == "auto"
    for key, value in (("worker.isolation", "none"), ("worker.reply_mb", 0), ("grading.submission_budget_s", -1)):
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_config(None, {key: value})


def test_the_zygotes_preload_is_the_assignments_unless_grader_yml_names_one() -> None:
    from autograder.assignment import load_assignment
    from autograder.part_kinds import worker_limits

    for name in available_assignments():
        preload = load_assignment(name).worker_preload
        assert preload and worker_limits(load_config(), preload).warm_preload == preload
    assert worker_limits(load_config()).warm_preload == ()  # null and no list: nothing beyond torch
    chosen = load_config(None, {"worker.warm_preload": ["json"]})
    assert worker_limits(chosen, ("numpy",)).warm_preload == ("json",)


def test_the_core_model_has_only_the_training_switch() -> None:
    assert set(TrainingSection.model_fields) == {"enabled"}
    core = TrainingSection(enabled=True)
    assert core.summary() == "enabled" and core.resolved_for(True) is core
    assert core.ray_options() == {"num_cpus": 1}
    assert config_model(None) is GraderConfig


def test_each_assignment_declares_its_own_model() -> None:
    part2, part1 = config_model("transformer_mt"), config_model("attention_encoder")
    assert part2 is TransformerMtConfig and issubclass(part2, GraderConfig)
    assert part2.model_fields["data"].annotation is DataConfig
    assert part2.model_fields["training"].annotation is TrainingConfig
    assert part1 is AttentionEncoderConfig and part1.model_fields["training"].annotation is Part1TrainingConfig


def test_an_assignment_without_an_override_of_the_file_reads_its_own_grader_yml() -> None:
    config = load_config(overrides={"assignment.name": "attention_encoder", "training.enabled": True})
    assert type(config) is AttentionEncoderConfig and not hasattr(config, "data")
    assert config.training.enabled and (config.training.threshold_accuracy, config.training.time_budget_s) == (0.9, 120)
    assert "attention" in config.parts and "look_ahead_mask" not in config.parts
    assert config.assignment.title != load_config().assignment.title
    # The course's default grader.yml (the project's) grades Part 2, named or not.
    assert load_config(overrides={"assignment.name": "transformer_mt"}) == load_config()


def test_a_grader_yml_is_not_pointed_at_another_assignment() -> None:
    with pytest.raises(ConfigError) as error:
        load_config(ROOT / "grader.yml", {"assignment.name": "attention_encoder"})
    assert str(error.value).startswith("assignment.name: ") and "grades 'transformer_mt'" in str(error.value)
    assert "its own grader.yml (assignments/attention_encoder/grader.yml" in str(error.value)


@pytest.mark.parametrize(
    "key, value", [("training.mode", "checkpoint"), ("training.profile", "cpu"), ("data.max_length", 20)]
)
def test_an_override_the_graded_assignment_lacks_is_refused_by_name(key: str, value: object) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(None, {"assignment.name": "attention_encoder", key: value})
    section = key.partition(".")[0]
    unknown = f"{key}: unknown key" if section == "training" else f"{section}: unknown section"
    assert str(error.value).startswith(unknown)


def test_set_arguments_are_read_as_yaml_and_refused_when_malformed() -> None:
    pairs = [
        "training.mode=checkpoint",
        "worker.timeout_s=5",
        "late.deadline=null",
        "training.hparam_bounds.epochs=[1, 3]",
    ]
    assert parse_settings(pairs) == {
        "training.mode": "checkpoint",
        "worker.timeout_s": 5,
        "late.deadline": None,
        "training.hparam_bounds.epochs": [1, 3],
    }
    config = load_config(None, parse_settings(pairs))
    assert training_settings(config).hparam_bounds.epochs == [1, 3] and config.worker.timeout_s == 5
    for bad in ("training.mode", "=3", "training..mode=x", "worker.timeout_s=[1"):
        with pytest.raises(ConfigError, match=r"KEY=VALUE|not YAML"):
            parse_settings([bad])


def test_describe_follows_the_assignment() -> None:
    part1 = describe("attention_encoder")
    assert "training.enabled: bool = False" in part1
    assert "training.mode" not in part1 and "data.local_dir" not in part1
    assert "training.mode: recipe | student_hparams | checkpoint = 'recipe'" in describe("transformer_mt")
    with pytest.raises(ConfigError, match="unknown assignment 'nope'"):
        describe("nope")


def test_an_extended_config_pickles_into_a_fresh_process() -> None:
    # The local executor's worker processes receive the configuration pickled.
    import pickle
    import subprocess
    import sys

    config = load_config(overrides={"training.enabled": True})
    assert pickle.loads(pickle.dumps(config)) == config
    code = "import pickle, sys; c = pickle.loads(sys.stdin.buffer.read()); print(type(c).__name__, c.training.mode)"
    run = subprocess.run(
        [sys.executable, "-c", code], input=pickle.dumps(config), capture_output=True, cwd=ROOT, timeout=300
    )
    assert run.stdout.decode().split() == [type(config).__name__, training_settings(config).mode]
