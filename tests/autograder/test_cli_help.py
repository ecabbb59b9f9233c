"""Every command line's --help comes from the message catalogues: Korean by default, English with the switch."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from autograder.cli import COMMANDS
from autograder.cli import main as autograder_main
from autograder.cli_table import FLAG_TABLE, flag_table
from autograder.i18n import LANGUAGES, catalogue, command_language

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT_TABLES = sorted((ROOT / "assignments").glob("*/reference_training.yml"))
HANGUL = re.compile("[\uac00-\ud7a3]")
# argparse's own English words: none may show in a Korean --help.
ARGPARSE_WORDS = ("usage:", "positional arguments", "options:", "show this help message and exit")


def _help_keys() -> dict[Path, set[str]]:
    """Catalogue folder -> the keys every table's --help asks of it (its own catalogue, else the engine's)."""
    keys: dict[Path, set[str]] = {}
    for table in [FLAG_TABLE, *ASSIGNMENT_TABLES]:
        folder = table.parent / "messages" if table != FLAG_TABLE else ROOT / "autograder" / "reports" / "messages"
        for command, specs in flag_table(table).items():
            prefix = "cli." + command.replace(" ", ".")
            names = ["description", *(spec["flags"][0] for spec in specs)]
            keys.setdefault(folder, set()).update(f"{prefix}.{name}" for name in names)
    subcommands = list(COMMANDS)
    engine = keys[ROOT / "autograder" / "reports" / "messages"]
    engine.update(f"cli.{name}.summary" for name in [*subcommands, "classroom50.build", "classroom50.collect"])
    engine.add("cli.classroom50.publish.summary")
    engine.update(f"cli.frame.{word}" for word in ("usage", "positionals", "options", "help", "error"))
    engine.update(("cli.autograder.description", "cli.classroom50.description"))
    return keys


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_help_text_is_in_both_catalogues_and_korean_in_korean(language: str) -> None:
    for folder, keys in _help_keys().items():
        missing = sorted(keys - set(catalogue(language, folder)))
        assert not missing, f"{folder}/{language}.yml lacks {missing}"
        if language == "ko":
            texts = {key: catalogue("ko", folder)[key] for key in keys}
            assert not [key for key, text in texts.items() if not HANGUL.search(text)]
        # argparse formats a help text with %: only its own %(default)s may stand there
        assert not [key for key in keys if "%" in catalogue(language, folder)[key].replace("%(default)s", "")]


def test_the_two_catalogues_have_the_same_help_keys() -> None:
    for folder in {ROOT / "autograder" / "reports" / "messages", *(t.parent / "messages" for t in ASSIGNMENT_TABLES)}:
        ko, en = ({key for key in catalogue(lang, folder) if key.startswith("cli.")} for lang in ("ko", "en"))
        assert ko == en, folder


def _help(run: Callable[[list[str]], object], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        run(argv)
    assert stopped.value.code == 0
    return capsys.readouterr().out


def test_autograder_help_is_korean_by_default(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("FEEDBACK_LANGUAGE", raising=False)
    top = _help(autograder_main, ["--help"], capsys)
    assert top.startswith("사용법: python -m autograder") and "위치 인자:" in top and "옵션:" in top
    assert "이 도움말을 보여 주고 끝냅니다" in top and catalogue("ko")["cli.grade.summary"] in top
    grade = _help(autograder_main, ["grade", "--help"], capsys)
    assert "보고서 폴더 (grading.out_dir)" in grade and not [word for word in ARGPARSE_WORDS if word in grade]


def test_autograder_help_is_english_with_the_language_switch(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("FEEDBACK_LANGUAGE", raising=False)
    for argv in (["grade", "--language", "en", "--help"], ["grade", "--language=en", "--help"]):
        grade = _help(autograder_main, argv, capsys)
        assert grade.startswith("usage: python -m autograder grade") and "report folder (grading.out_dir)" in grade
        assert "show this help message and exit" in grade and not HANGUL.search(grade)
    monkeypatch.setenv("FEEDBACK_LANGUAGE", "en")  # the public checks' switch: also for commands without --language
    for argv in (["--help"], ["new-assignment", "--help"]):
        text = _help(autograder_main, argv, capsys)
        assert text.startswith("usage: ") and not HANGUL.search(text)
    assert "사용법:" in _help(autograder_main, ["grade", "--language", "ko", "--help"], capsys)  # the flag wins


def test_a_usage_error_is_in_the_console_language(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.delenv("FEEDBACK_LANGUAGE", raising=False)
    with pytest.raises(SystemExit) as stopped:
        autograder_main(["grade"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.startswith("사용법: ") and "python -m autograder grade: 오류: " in err


def test_command_language_reads_the_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FEEDBACK_LANGUAGE", raising=False)
    assert command_language([]) == "ko" and command_language(["x", "--language", "en"]) == "en"
    assert command_language(["--language"]) == "ko" and command_language(["--language", "fr"]) == "ko"
    monkeypatch.setenv("FEEDBACK_LANGUAGE", "en")
    assert command_language([]) == "en" and command_language(["--language=ko"]) == "ko"


# Every other program whose parser is built from a table or the catalogue: module, a subcommand's argv.
PROGRAMS = [
    ("autograder.integrations.classroom50.__main__", []),
    ("autograder.integrations.classroom50.__main__", ["build"]),
    ("autograder.integrations.classroom50.__main__", ["collect"]),
    ("autograder.integrations.classroom50.__main__", ["publish"]),
    ("autograder.integrations.collect_submissions", []),
    ("autograder.integrations.merge_results", []),
    ("autograder.integrations.gradescope.build_zip", []),
    ("autograder.integrations.gradescope.run", []),
    ("autograder.integrations.public_checks", []),
    ("assignments.build", []),
    ("assignments.transformer_mt.reference_training", []),
]


@pytest.mark.parametrize("module, argv", PROGRAMS, ids=lambda value: str(value))
@pytest.mark.parametrize("language", LANGUAGES)
def test_every_program_speaks_the_language_of_its_command_line(
    module: str, argv: list[str], language: str, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("FEEDBACK_LANGUAGE", language)
    text = _help(importlib.import_module(module).main, [*argv, "--help"], capsys)
    if language == "ko":
        assert text.startswith("사용법: ") and "이 도움말을 보여 주고 끝냅니다" in text
        assert not [word for word in ARGPARSE_WORDS if word in text]
    else:
        assert text.startswith("usage: ") and "show this help message and exit" in text and not HANGUL.search(text)
