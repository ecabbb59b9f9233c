"""Every doc page's code references still hold: cited project paths exist, and the project imports
shown in its code blocks resolve (DESIGN.md's inline names get the deeper check of test_design_names)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted({*ROOT.glob("*.md"), *ROOT.glob("docs/*.md"), *ROOT.glob("*/README.md"), *ROOT.glob("*/*/README.md")})
FOLDERS = "autograder|assignments|reference|mtkit|bench|tests|examples|docs|student_template"
CITED_PATH = re.compile(rf"(?<![\w./-])((?:{FOLDERS})/[\w./-]*\.py)\b")
FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
PROJECT_IMPORT = re.compile(
    r"^\s*from ((?:autograder|assignments|reference|mtkit)[\w.]*) import ([\w, ]+)$", re.MULTILINE
)


def _label(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES, ids=_label)
def test_cited_python_files_exist(page: Path) -> None:
    missing = [path for path in CITED_PATH.findall(page.read_text(encoding="utf-8")) if not (ROOT / path).exists()]
    assert not missing, f"{_label(page)} cites files that are gone: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=_label)
def test_project_imports_in_code_blocks_resolve(page: Path) -> None:
    unresolved = []
    for block in FENCED.findall(page.read_text(encoding="utf-8")):
        for module_name, names in PROJECT_IMPORT.findall(block):
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                unresolved.append(module_name)
                continue
            for name in (part.strip() for part in names.split(",")):
                if not hasattr(module, name) and importlib.util.find_spec(f"{module_name}.{name}") is None:
                    unresolved.append(f"{module_name}.{name}")
    assert not unresolved, f"{_label(page)} shows imports that no longer resolve: {unresolved}"
