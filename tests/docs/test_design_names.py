"""docs/DESIGN.md cites only code that exists: paths, modules, names, parameters and return types.

The convention (also stated at the top of DESIGN.md) covers inline backtick spans outside fenced
blocks and HTML comments:
- a path: it contains "/" or is a file name with a known extension; it must exist (a trailing "/"
  means a folder, "*" globs);
- `python -m MODULE ...`: MODULE must be importable (found, not run);
- a dotted name rooted at a project package (`autograder.engine.grade_submission`): the longest
  importable prefix is imported, the rest resolved as attributes; dataclass fields, class
  annotations and `self.x = ...` assignments in the class body count as members;
- `Class.member` (a capitalised first part, e.g. `Worker.call`): some class of that name in a
  module the page cites in full must have that member;
- a call form `name(a, b=1, *, c, ...)` must accept those parameter names, and `name(...) -> Type`
  must be annotated to return Type.
Anything else (grader.yml keys such as `training.mode`, literal values, bare names) is not checked.
Importing the project's modules runs no student code.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "docs" / "DESIGN.md"
PACKAGES = ("autograder", "assignments", "mtkit")
EXTENSIONS = ("py", "md", "yml", "yaml", "toml", "lock", "txt", "json", "ipynb", "sh", "cfg")
FENCE = re.compile(r"^```.*?^```|<!--.*?-->", re.MULTILINE | re.DOTALL)  # fenced blocks, comments
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"[\w.*-]+(/[\w.*-]+)*/?")
FILE_NAME = re.compile(r"[\w.-]+\.(?:" + "|".join(EXTENSIONS) + ")")
NAME = re.compile(r"(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?P<call>\(.*\))?(?:\s*->\s*(?P<ret>[\w.]+))?")


@dataclass(frozen=True)
class Cited:
    """One checked span of the page."""

    kind: str  # "path", "module", "name" or "member"
    text: str  # the span as written
    line: int


def cited_names(text: str) -> list[Cited]:
    """The spans of a Markdown text that the convention checks.

    Args:
        text: the Markdown.

    Returns:
        Checked spans in page order.
    """
    blanked = FENCE.sub(lambda block: "\n" * block.group(0).count("\n"), text)  # line numbers kept
    found = []
    for match in SPAN.finditer(blanked):
        span, line = match.group(1).strip(), blanked[: match.start()].count("\n") + 1
        if span.startswith("python -m "):
            found.append(Cited("module", span, line))
        elif ("/" in span and PATH.fullmatch(span)) or FILE_NAME.fullmatch(span):
            found.append(Cited("path", span, line))
        elif (named := NAME.fullmatch(span)) is not None:
            root = named.group("name").split(".")[0]
            if root in PACKAGES:
                found.append(Cited("name", span, line))
            elif root[0].isupper() and named.group("name").count(".") == 1:
                found.append(Cited("member", span, line))
    return found


def _import_prefix(dotted: str) -> tuple[ModuleType, list[str]]:
    """Import the longest module prefix of `dotted`; return it and the remaining parts."""
    parts = dotted.split(".")
    module = importlib.import_module(parts[0])
    end = 1
    while (
        end < len(parts)
        and hasattr(module, "__path__")
        and importlib.util.find_spec(".".join(parts[: end + 1])) is not None
    ):
        module = importlib.import_module(".".join(parts[: end + 1]))
        end += 1
    return module, parts[end:]


def _instance_attributes(cls: type) -> set[str]:
    """Names a class body assigns as `self.x = ...` (attributes that exist only on instances)."""
    names: set[str] = set()
    for klass in inspect.getmro(cls):
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):  # builtins and classes without source
            continue
        for node in ast.walk(ast.parse(source)):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign | ast.AugAssign)
                else []
            )
            names.update(
                t.attr
                for t in targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
            )
    return names


def _member(owner: Any, name: str) -> Any:
    """`owner.name`, or a marker for a member that exists only on instances; raises LookupError."""
    if hasattr(owner, name):
        return getattr(owner, name)
    if inspect.isclass(owner):
        if dataclasses.is_dataclass(owner) and name in {f.name for f in dataclasses.fields(owner)}:
            return _INSTANCE_ONLY
        if any(name in getattr(klass, "__annotations__", {}) for klass in inspect.getmro(owner)):
            return _INSTANCE_ONLY
        if name in _instance_attributes(owner):
            return _INSTANCE_ONLY
    raise LookupError(f"{getattr(owner, '__name__', owner)!r} has no {name!r}")


_INSTANCE_ONLY = object()


def _check_call(obj: Any, call: str | None, ret: str | None, span: str) -> None:
    """The parameter names and return type a call form claims, against the real signature."""
    if call is None and ret is None:
        return
    assert callable(obj), f"`{span}`: not callable"
    signature = inspect.signature(obj)
    if call is not None:
        for item in _top_level_items(call[1:-1]):
            name = item.split("=")[0].strip().lstrip("*")
            if name and name != "..." and name.isidentifier():
                assert name in signature.parameters, f"`{span}`: no parameter {name!r} in {signature}"
    if ret is not None:
        annotation = signature.return_annotation
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
        assert ret.split(".")[-1] in re.findall(r"\w+", text), f"`{span}`: returns {text}, not {ret}"


def _top_level_items(arguments: str) -> list[str]:
    """Split an argument list at the commas outside brackets and quotes."""
    items, depth, quote, current = [], 0, "", ""
    for char in arguments:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(current)
            current = ""
            continue
        current += char
    return [*items, current] if current.strip() else items


def check_cited(cited: Cited, modules: list[ModuleType]) -> None:
    """Fail (AssertionError or LookupError) when a cited name does not exist.

    Args:
        cited: one span.
        modules: the modules the page cites in full (where `Class.member` is looked up).
    """
    if cited.kind == "path":
        path = cited.text.rstrip("/")
        matches = list(ROOT.glob(path)) if "*" in path else [ROOT / path] if (ROOT / path).exists() else []
        assert matches, f"`{cited.text}` does not exist"
        if cited.text.endswith("/"):
            assert all(m.is_dir() for m in matches), f"`{cited.text}` is not a folder"
        return
    if cited.kind == "module":
        module = cited.text.split()[2]
        assert importlib.util.find_spec(module) is not None, f"`{cited.text}`: no module {module}"
        return
    named = NAME.fullmatch(cited.text)
    assert named is not None
    if cited.kind == "name":
        obj, rest = _import_prefix(named.group("name"))
        for part in rest:
            obj = _member(obj, part)
    else:
        class_name, member = named.group("name").split(".")
        classes = [getattr(m, class_name) for m in modules if inspect.isclass(getattr(m, class_name, None))]
        assert classes, f"`{cited.text}`: no class {class_name} in the modules the page cites"
        found = []
        for cls in classes:
            try:
                found.append(_member(cls, member))
            except LookupError:
                continue
        assert found, f"`{cited.text}`: {class_name} has no member {member!r}"
        obj = found[0]
    if obj is not _INSTANCE_ONLY:
        _check_call(obj, named.group("call"), named.group("ret"), cited.text)


def cited_modules(names: list[Cited]) -> list[ModuleType]:
    """The modules reached by the page's full dotted names (the `Class.member` lookup scope)."""
    modules: dict[str, ModuleType] = {}
    for cited in names:
        if cited.kind == "name":
            match = NAME.fullmatch(cited.text)
            assert match is not None, cited.text  # cited_names only yields names NAME matches
            module, _ = _import_prefix(match.group("name"))
            modules[module.__name__] = module
    return list(modules.values())


CITED = cited_names(DESIGN.read_text(encoding="utf-8"))


def test_the_page_cites_code_of_every_kind() -> None:
    kinds = {cited.kind for cited in CITED}
    assert kinds == {"path", "module", "name", "member"}, kinds
    assert len(CITED) > 40


@pytest.mark.parametrize("cited", CITED, ids=[f"L{c.line}:{c.text}" for c in CITED])
def test_every_cited_name_exists(cited: Cited) -> None:
    check_cited(cited, cited_modules(CITED))


@pytest.mark.parametrize(
    "span",
    [
        "autograder.engine.grade",  # the engine's old entry point
        "autograder.engine.grade_submission(path, config, parts) -> GradeResult",  # its old return type
        "autograder.engine.grade_submission(path, settings)",  # a parameter it does not have
        "Worker.train",  # a request the worker lacks
        "autograder/no_such_module.py",
        "autograder/engine.py/",  # a file, not a folder
        "python -m autograder.no_such_module",
        "mtkit.no_such_module.thing",
    ],
)
def test_a_name_that_is_gone_fails(span: str) -> None:
    cited = cited_names(f"`{span}` and `autograder.sandbox.Worker`")
    assert cited[0].text == span
    with pytest.raises((AssertionError, LookupError)):
        check_cited(cited[0], cited_modules(cited))


def test_spans_outside_the_convention_are_not_checked() -> None:
    text = (
        '`training.mode`, `"blank"`, `Transformer`, `spacy.blank`, `<sos>`\n```\n`autograder.gone`\n```\n'
        "<!-- `autograder/gone.py` -->\n"
    )
    assert cited_names(text) == []
