"""Every command in README.md and docs/*.md is checked against its real program (and, slow, run)."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest
from doc_commands import (
    ROOT,
    Command,
    activated_commands,
    activates,
    command_env,
    commands_in,
    documentation_files,
    documented_commands,
    make_checkout,
    parse_checks,
)

FIXTURE = ROOT / "tests" / "fixtures" / "docs" / "commands.md"
COMMANDS = documented_commands()
RUN_TIMEOUT_S = 1200


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One scratch copy of the repository for the parse-only checks."""
    return make_checkout(tmp_path_factory.mktemp("docs-checkout") / "repo")


@pytest.fixture(scope="module")
def parsed(checkout: Path) -> dict[str, tuple[str, str]]:
    """Every documented command checked once (one process for all python/otter commands)."""
    results = parse_checks(COMMANDS, checkout)
    print("checked: " + ", ".join(f"{how} {n}" for how, n in Counter(h for h, _ in results.values()).items()))
    return results


def test_extractor_reads_blocks_continuations_comments_and_markers() -> None:
    found = commands_in(FIXTURE.read_text(encoding="utf-8"), "commands.md")
    assert [(c.line, c.text, c.not_run) for c in found] == [
        (6, "make grade-examples   # a trailing comment", ""),
        (9, ".venv/bin/python -m autograder grade hw.ipynb      --parts decoder_layer,decoder", ""),
        (
            22,
            "otter grade -n demo -a dist/autograder.zip -o grades/ submissions/",
            "needs Docker (a reason may span lines)",
        ),
        (30, "PYTHONPATH=$PWD otter run -a dist/autograder.zip -o out/ 'path/to/submission.ipynb'", ""),
    ]
    env, words = found[3].words()
    assert env == {"PYTHONPATH": "$PWD"} and words[-1] == "path/to/submission.ipynb"
    assert found[0].words() == ({}, ["make", "grade-examples"])


def test_the_docs_have_commands_and_every_not_run_block_gives_a_reason() -> None:
    assert {"README.md", "docs/OTTER.md"} <= {c.doc for c in COMMANDS}
    assert len(COMMANDS) >= 8
    assert all(documentation_files())


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_documented_command_is_accepted_by_its_program(command: Command, parsed) -> None:
    how, problem = parsed[command.id]
    assert not problem, f"{command.id}: {command.text!r} ({how}): {problem}"


def test_a_wrong_flag_a_missing_otter_name_and_an_unknown_target_are_caught(checkout: Path) -> None:
    (checkout / "grades").mkdir(exist_ok=True)
    wrong = [
        Command("x.md", 1, ".venv/bin/python -m autograder grade hw.ipynb --no-such-flag", ""),
        Command("x.md", 2, ".venv/bin/otter grade -a dist/autograder.zip -o grades/ submissions/", ""),
        Command("x.md", 3, "make no-such-target", ""),
        Command("x.md", 4, ".venv/bin/otter run --no-such-option hw.ipynb", ""),
        Command("x.md", 5, ".venv/bin/python -m json.tool --help", ""),
    ]
    results = parse_checks(wrong, checkout)
    assert "no-such-flag" in results["x.md:1"][1]
    assert "assignment name" in results["x.md:2"][1]
    assert results["x.md:3"][0] == "make -n" and "failed" in results["x.md:3"][1]
    assert "no-such-option" in results["x.md:4"][1]
    assert "without parsing" in results["x.md:5"][1]
    right = [Command("x.md", 6, ".venv/bin/otter grade -n demo -a dist/autograder.zip -o grades/ submissions/", "")]
    assert parse_checks(right, checkout) == {"x.md:6": ("otter click", "")}


def test_a_bare_python_or_otter_needs_the_venv_path_or_an_activation_line(checkout: Path) -> None:
    bare = [
        Command("a.md", 1, "python -m autograder config", ""),
        Command("a.md", 2, "otter run --help", ""),
        Command("b.md", 1, "source .venv/bin/activate", ""),
        Command("b.md", 2, "python -m autograder config", ""),
    ]
    results = parse_checks(bare, checkout)
    assert "fresh shell" in results["a.md:1"][1] and ".venv/bin/python" in results["a.md:1"][1]
    assert ".venv/bin/otter" in results["a.md:2"][1]
    assert results["b.md:1"] == ("activation", "") and results["b.md:2"] == ("argparse", "")
    assert activates(bare[2]) and activated_commands(bare) == {"b.md:2"}


def test_commands_run_in_a_fresh_shell_without_the_venv_on_path(checkout: Path) -> None:
    path = command_env(checkout)["PATH"].split(":")
    assert not any(".venv" in entry for entry in path) and "VIRTUAL_ENV" not in command_env(checkout)
    assert command_env(checkout, activated=True)["PATH"].startswith(str(checkout / ".venv" / "bin"))


def _run_doc(doc: str, tmp_path: Path) -> list[str]:
    """Run a doc's runnable commands in order in a fresh checkout, each in a fresh shell (the venv
    not on PATH unless the doc activated it); returns the commands run."""
    repo = make_checkout(tmp_path / "repo")
    ran = []
    activated = activated_commands(COMMANDS)  # what a `source .venv/bin/activate` line leaves behind
    for command in (c for c in COMMANDS if c.doc == doc and not c.not_run):
        if activates(command):
            ran.append(command.text)
            continue
        done = subprocess.run(
            ["bash", "-c", command.text],
            cwd=repo,
            env=command_env(repo, command.id in activated),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
        assert done.returncode == 0, (
            f"{command.id}: {command.text!r} exited {done.returncode}:\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
        )
        ran.append(command.text)
    return ran


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("doc", sorted({c.doc for c in COMMANDS if not c.not_run}))
def test_documented_commands_run_as_written(doc: str, tmp_path: Path) -> None:
    ran = _run_doc(doc, tmp_path)
    counts = Counter(c.doc for c in COMMANDS)
    print(f"{doc}: ran {len(ran)} of {counts[doc]} commands")
    assert ran
