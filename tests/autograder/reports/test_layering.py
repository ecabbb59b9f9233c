"""Layering: the reports render results and never depend on a front end (integrations, CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_graph import imported_modules

ROOT = Path(__file__).resolve().parents[3]
REPORTS = ROOT / "autograder" / "reports"
FRONT_ENDS = ("autograder.integrations", "autograder.cli")


def _front_ends(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == name or m.startswith(name + ".") for name in FRONT_ENDS))


def test_no_report_module_imports_a_front_end() -> None:
    paths = sorted(REPORTS.rglob("*.py"))
    assert len(paths) > 5, "the reports package was not found"
    found = {}
    for path in paths:
        package = ".".join(path.parent.relative_to(ROOT).parts)
        found[path.relative_to(ROOT).as_posix()] = _front_ends(
            imported_modules(path.read_text(encoding="utf-8"), package)
        )
    assert {path: names for path, names in found.items() if names} == {}


@pytest.mark.parametrize(
    "source",
    [
        "import autograder.integrations.github",
        "from autograder.integrations import github",
        "from autograder.cli import main",
        "from autograder import cli",
        "def render():\n    from ..integrations.github import runner_id\n",
        "from .. import integrations",
    ],
)
def test_every_import_form_of_a_front_end_is_caught(source: str) -> None:
    assert _front_ends(imported_modules(source, "autograder.reports"))


def test_imports_within_the_reports_are_allowed() -> None:
    source = "from .md_safe import md_text\nfrom autograder.i18n import t\nimport json\n"
    assert imported_modules(source, "autograder.reports") >= {"autograder.reports.md_safe", "json"}
    assert not _front_ends(imported_modules(source, "autograder.reports"))
