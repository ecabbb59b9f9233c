"""Turn a student notebook (.ipynb) or script export (.py) into the definitions grading loads."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import nbformat

from autograder.i18n import t  # every message here is student-facing
from autograder.notebook_parse import CellResult, ParseBudget, parse_cell

ProblemKind = Literal["syntax", "notebook"]
Kind = Literal["ipynb", "py"]  # what a submission is read as

# Cell markers of .py exports: jupytext/VS Code percent cells and nbconvert's `# In[ ]:` lines.
_PERCENT_MARKER = re.compile(r"^#\s*%%(?:\s+(?P<rest>.*))?$")
_NBCONVERT_MARKER = re.compile(r"^#\s*In\[\s*\d*\s*\]:?\s*$")
_NON_CODE_PERCENT = re.compile(r"\[(markdown|md|raw)\]")
# The notebook metadata key the built templates carry (assignments/build.py): {"assignment": name}.
ASSIGNMENT_METADATA = "autograder"
# Caps on a submission's code (the message names them): a course notebook has tens of code cells
# and tens of kilobytes of code; each cap is far above that and keeps parsing within seconds.
MAX_CODE_CELLS = 1_000
MAX_CODE_CHARS = 1_000_000
MAX_PROBLEMS = 100  # listed per submission (a line per broken statement could list thousands)


@dataclass(frozen=True)
class Statement:
    """One top-level statement of the submission.

    `cell` is the 1-based number of the CODE cell it comes from (markdown and raw cells are not
    counted, so the numbers match the `In [ ]` order of a fresh run and hold for .py exports too);
    `line` is the 1-based line inside that cell where the statement starts. To get tracebacks with
    those numbers, compile `"\\n" * (line - 1) + code` under a filename such as `<cell 7>`.
    """

    cell: int
    line: int
    code: str
    defines: tuple[str, ...] = ()  # module-level names it binds ("*" for a star import)
    reason: str = ""  # why it was not loaded (only for `LoadedSubmission.dropped`)

    @property
    def label(self) -> str:
        """The statement's first line, shortened, for messages."""
        first = self.code.strip().splitlines()[0] if self.code.strip() else ""
        return first if len(first) <= 70 else first[:67] + "..."


@dataclass(frozen=True)
class LoadProblem:
    """Something a student should know about how their file was read.

    kind "syntax": a cell (or part of one) did not parse; "notebook": the file itself could not be
    read. `cell`/`line` use the numbering of `Statement`.
    """

    cell: int | None
    line: int | None
    message: str
    kind: ProblemKind
    names: tuple[str, ...] = ()  # names the skipped code appears to define (for "not defined" hints)

    def describe(self) -> str:
        """The problem as the student reads it, prefixed with its cell and line when it has them."""
        if self.cell is None:
            return self.message
        return t("notebook.where", cell=self.cell, line=self.line, message=self.message)


@dataclass
class LoadedSubmission:
    """The loadable part of one submission.

    Execute `statements` in order, one at a time, each in the same globals and each under its own
    try/except, so that a failing import only breaks what depends on it; later definitions of a
    name replace earlier ones exactly as re-running notebook cells would.
    """

    path: str
    kind: Kind
    statements: list[Statement] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    dropped: list[Statement] = field(default_factory=list)
    code_cells: int = 0

    @property
    def source(self) -> str:
        """All kept statements as one Python source, each preceded by a `# cell N, line L` comment."""
        return "".join(f"# cell {s.cell}, line {s.line}\n{s.code}\n\n" for s in self.statements)

    @property
    def readable(self) -> bool:
        """False when the file itself could not be read as a Python notebook or script."""
        return not any(p.kind == "notebook" for p in self.problems)

    def why_missing(self, name: str) -> str | None:
        """Explain why a name the grader looked for was not defined by the loaded statements.

        Args:
            name: a module-level name, e.g. "EncoderLayer".

        Returns:
            A sentence pointing at the cell that would have defined it, or None when nothing in the
            file appears to define it (or it is defined after all).
        """
        if any(name in s.defines for s in self.statements):
            return None
        for p in reversed(self.problems):  # the last attempt is what the student sees last
            if p.kind == "syntax" and name in p.names:
                return t("notebook.missing.syntax", name=name, cell=p.cell, line=p.line, message=p.message)
        for s in reversed(self.dropped):
            if name in s.defines:
                fields: dict[str, Any] = {"cell": s.cell, "line": s.line, "label": s.label, "reason": s.reason}
                return t("notebook.missing.dropped", name=name, **fields)
        return None


def load_submission(
    path: str | Path,
    provided_names: frozenset[str] = frozenset(),
    max_mb: float | None = None,
    assignment: str | None = None,
) -> LoadedSubmission:
    """Read a submission and keep only its definitions. Never executes any of it and never raises
    for a bad file: unreadable input becomes a problem of kind "notebook".

    Per code cell: shell/magic lines (`!cmd`, `%magic`, `x = !cmd`, `obj?`) are blanked; a cell
    starting with `%%capture/time/timeit/prun` keeps its Python body, any other `%%magic` cell is
    skipped. A cell that does not parse is salvaged top-level statement by statement; empty blocks
    are filled with `pass`; each unparseable piece becomes a "syntax" problem. Kept top-level
    statements: imports, def/class (with decorators), assignments to plain names of values built
    from literals, operators, lambdas and names already kept or provided by the grader (no calls),
    and try blocks made only of such statements (the usual `try: import x / except: x = None`).
    Everything else (calls, loops, ifs, `with`, attribute/item assignment, augmented assignment,
    bindings of `provided_names`) is listed in `dropped`. Lone surrogates (text no file can hold,
    e.g. from a "\\ud800" escape in the notebook's JSON) become "?" so that one odd string costs
    at most its own statement.

    Args:
        path: a .ipynb notebook (nbformat 3 or 4) or a .py export (jupytext percent, nbconvert
            script, or a plain script); other suffixes are sniffed (JSON object -> notebook).
        provided_names: names the grader defines itself; the submission's bindings of them are dropped.
        max_mb: refuse files larger than this many MB before reading them (None: no limit).
        assignment: the assignment being graded; a notebook whose metadata names another one
            (the built templates carry their name) is refused with a message naming it. None, or a
            notebook without that metadata, is read as usual.

    Returns:
        The LoadedSubmission (statements to run, problems to show, dropped top-level work).
    """
    path = Path(path)
    kind, cells = _code_cells(path, max_mb, assignment)
    return _unreadable(path, kind, cells) if isinstance(cells, str) else _assemble(path, kind, cells, provided_names)


def cell_sources(path: str | Path) -> list[str]:
    """The code cells of a notebook or script as text, neither parsed nor run (e.g. to compare them).

    Args:
        path: a .ipynb notebook or .py export (other suffixes are sniffed as `load_submission` does).

    Returns:
        The code cells' sources in notebook order; [] for a file that cannot be read as either.
    """
    cells = _code_cells(Path(path), None, None)[1]  # any assignment's notebook: similarity compares texts
    return [] if isinstance(cells, str) else cells


def _code_cells(path: Path, max_mb: float | None, assignment: str | None) -> tuple[Kind, list[str] | str]:
    """The kind of a submission and its code cells' sources, or the message saying why it cannot
    be read (arguments as `load_submission`'s)."""
    kind: Kind = "py" if path.suffix == ".py" else "ipynb"
    try:
        size = path.stat().st_size
        if max_mb is not None and size > max_mb * 1024 * 1024:
            return kind, t("notebook.too_large", size_mb=size / 1024 / 1024, limit_mb=max_mb)
        with path.open("rb") as handle:  # a file growing after the check is still cut at the limit
            raw = handle.read(int(max_mb * 1024 * 1024) + 1 if max_mb is not None else -1)
        if max_mb is not None and len(raw) > max_mb * 1024 * 1024:
            return kind, t("notebook.too_large", size_mb=len(raw) / 1024 / 1024, limit_mb=max_mb)
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:  # e.g. an image renamed .ipynb, or a script saved in CP949
        return kind, t("notebook.not_text")
    except OSError as error:
        return kind, t("notebook.cannot_read", error=f"`{error}`")
    if path.suffix == ".py" or not (path.suffix == ".ipynb" or text.lstrip().startswith("{")):
        return "py", _cells_from_script(text)
    cells = _cells_from_notebook(text, assignment)
    return "ipynb", without_surrogates(cells) if isinstance(cells, str) else [without_surrogates(c) for c in cells]


def without_surrogates(text: str) -> str:
    """Text with every lone surrogate replaced by "?" (so it can be encoded as UTF-8).

    Args:
        text: any str.

    Returns:
        The same text when it has none.
    """
    return text.encode("utf-8", "replace").decode("utf-8")


def _unreadable(path: Path, kind: Kind, message: str) -> LoadedSubmission:
    return LoadedSubmission(str(path), kind, problems=[LoadProblem(None, None, message, "notebook")])


def _cells_from_notebook(text: str, assignment: str | None) -> list[str] | str:
    """The code cells' sources, or an error message saying why this is not a usable notebook
    (one of another assignment than `assignment` included)."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return t("notebook.not_json")
    if not isinstance(document, dict) or not ({"cells", "worksheets"} & document.keys()):
        return t("notebook.no_cells")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat warns about e.g. missing cell ids; irrelevant here
            notebook = nbformat.reads(text, as_version=4)
        cells = [dict(cell) for cell in notebook.cells]
        metadata = dict(notebook.metadata)
    except Exception as error:  # nbformat raises assorted types for malformed notebooks
        lenient = _lenient_cells(document)  # tolerate notebooks that only miss optional keys
        if lenient is None:
            return t("notebook.invalid", error=f"`{type(error).__name__}: {error}`")
        cells, metadata = lenient
    language = _notebook_language(metadata)
    if language is not None and not language.lower().startswith(("python", "ipython")):
        return t("notebook.kernel_language", kernel=f"`{language}`")
    named = _notebook_assignment(metadata)
    if assignment is not None and named is not None and named != assignment:
        return t("notebook.other_assignment", found=named, expected=assignment)
    sources = [cell.get("source", "") for cell in cells if cell.get("cell_type") == "code"]
    return ["".join(source) if isinstance(source, list) else str(source) for source in sources]


def _lenient_cells(data: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]] | None:
    """Cells and metadata of a v4-shaped JSON notebook that nbformat rejected, or None."""
    cells = data.get("cells")
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        return None
    metadata = data.get("metadata")
    return cells, metadata if isinstance(metadata, dict) else {}


def _notebook_language(metadata: dict[str, Any]) -> str | None:
    kernelspec = metadata.get("kernelspec") or {}
    language_info = metadata.get("language_info") or {}
    language = kernelspec.get("language") or language_info.get("name")
    return str(language) if language else None


def _notebook_assignment(metadata: dict[str, Any]) -> str | None:
    """The assignment a built template names in its metadata (None: none, or not a plain name)."""
    stamp = metadata.get(ASSIGNMENT_METADATA)
    named = stamp.get("assignment") if isinstance(stamp, dict) else None
    return named if isinstance(named, str) and re.fullmatch(r"[A-Za-z0-9_]+", named) else None


def _cells_from_script(text: str) -> list[str]:
    """Split a .py export into code cells at `# %%` / `# In[ ]:` markers (markdown cells skipped)."""
    cells: list[str] = []
    current: list[str] = []
    current_is_code = True
    seen_marker = False
    for line in text.splitlines():
        percent = _PERCENT_MARKER.match(line)
        if percent or _NBCONVERT_MARKER.match(line):
            # a comment-only header before the first marker is no cell
            if (seen_marker or _has_code(current)) and current_is_code:
                cells.append("\n".join(current))
            seen_marker = True
            current = []
            current_is_code = not (percent and _NON_CODE_PERCENT.search(percent.group("rest") or ""))
            continue
        current.append(line)
    if current_is_code and (seen_marker or _has_code(current)):
        cells.append("\n".join(current))
    return cells


def _has_code(lines: list[str]) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#") for line in lines)


def _assemble(path: Path, kind: Kind, cell_sources: list[str], provided_names: frozenset[str]) -> LoadedSubmission:
    """Parse every code cell in order (within the caps); names bound so far decide which
    assignments are static."""
    chars = sum(map(len, cell_sources))
    if len(cell_sources) > MAX_CODE_CELLS or chars > MAX_CODE_CHARS:
        limits = {"max_cells": f"{MAX_CODE_CELLS:,}", "max_chars": f"{MAX_CODE_CHARS:,}"}
        return _unreadable(path, kind, t("notebook.limit.code", cells=len(cell_sources), chars=f"{chars:,}", **limits))
    submission = LoadedSubmission(str(path), kind, code_cells=len(cell_sources))
    known_names: set[str] = set(provided_names)
    budget = ParseBudget()
    for number, source in enumerate(cell_sources, start=1):
        result: CellResult = parse_cell(source, known_names, provided_names, budget)
        submission.statements += [Statement(number, s.line, s.code, s.defines) for s in result.kept]
        submission.dropped += [Statement(number, s.line, s.code, s.defines, s.reason) for s in result.dropped]
        submission.problems += [LoadProblem(number, f.line, f.message, "syntax", f.names) for f in result.failures]
        if budget.chars < 0:  # spent: its problem (the cell's last) goes first; the cells after are not read
            submission.problems.insert(0, submission.problems.pop())
            break
    if len(submission.problems) > MAX_PROBLEMS:
        more = t("notebook.limit.problems", more=len(submission.problems) - MAX_PROBLEMS)
        submission.problems[MAX_PROBLEMS:] = [LoadProblem(None, None, more, "syntax")]
    return submission
