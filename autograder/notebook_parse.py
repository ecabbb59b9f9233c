"""Pure parsing of one notebook code cell: strip IPython syntax, salvage broken cells, keep definitions."""

from __future__ import annotations

import ast
import re
import tokenize
from dataclasses import dataclass, field

from autograder.i18n import t
from autograder.notebook_rules import bound_names, drop_reason

# Cell magics whose body IPython runs as Python; any other `%%magic` cell (bash, writefile, html,
# ...) is not Python at all and is skipped whole.
PYTHON_BODY_CELL_MAGICS = frozenset({"capture", "time", "timeit", "prun"})

_MAGIC_LINE = re.compile(
    r"^\s*(?:[!%]"  # !shell, %line_magic, %%cell_magic
    r"|[\w.,][\w.,\s]*=\s*[!%]"  # files = !ls, out = %sx ... (no overlap with `\s*`: linear time)
    r"|\?"  # ?object
    r"|[\w.]+\?{1,2}\s*$)"  # object? / object??
)
_CHUNK_CONTINUATION = re.compile(r"(?:else|elif|except|finally)\b|[)\]}]")
_INCOMPLETE_MARKERS = ("was never closed", "unterminated triple-quoted", "unexpected EOF")
_EMPTY_BLOCK = re.compile(r"expected an indented block after .* on line (\d+)")
_DEFINED_NAME = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)|^(\w+)\s*(?::[^=]*)?=(?!=)")
_LINE_REFERENCE = re.compile(r" on line \d+| \(detected at line \d+\)")
_MAX_REPAIRS = 50
_MAX_MERGED_CHUNKS = 200
# Caps on what one submission may make the grader's process do (the messages name them): a line's
# length, how deeply a statement's syntax tree nests (the rules below walk it recursively), and the
# characters ast.parse may read in all for one submission, repairs and re-parses of salvage included.
MAX_LINE_CHARS = 10_000
MAX_DEPTH = 100
PARSE_BUDGET_CHARS = 4_000_000


@dataclass
class ParseBudget:
    """What is left of one submission's PARSE_BUDGET_CHARS (shared by all its cells)."""

    chars: int = PARSE_BUDGET_CHARS


@dataclass(frozen=True)
class ParsedStatement:
    """A top-level statement of a cell: its start line in the cell and its exact source."""

    line: int
    code: str
    defines: tuple[str, ...]
    reason: str = ""


@dataclass(frozen=True)
class ParseFailure:
    """A part of a cell that could not be parsed (or had to be repaired)."""

    line: int | None
    message: str
    names: tuple[str, ...] = ()


@dataclass
class CellResult:
    """What one cell contributes: statements to load, top-level work dropped, parse failures."""

    kept: list[ParsedStatement] = field(default_factory=list)
    dropped: list[ParsedStatement] = field(default_factory=list)
    failures: list[ParseFailure] = field(default_factory=list)


@dataclass
class _Parsed:
    tree: ast.Module | None
    lines: list[str]  # the text after repairs
    origin: list[int]  # origin[k]: 1-based input line of repaired line k + 1
    repairs: list[ParseFailure]
    error: ParseFailure | None


def parse_cell(source: str, known_names: set[str], provided_names: frozenset[str], budget: ParseBudget) -> CellResult:
    """Split one code cell into loadable definitions and everything else, without running it.

    Args:
        source: the cell's text.
        known_names: module-level names bound by earlier kept statements (plus the grader's
            names); updated in place with what this cell binds.
        provided_names: names the grader defines; statements binding them are dropped.
        budget: the submission's parse budget, shared by its cells (spent here).

    Returns:
        The cell's CellResult; a line over MAX_LINE_CHARS, or a budget spent, loads nothing of it.
    """
    result = CellResult()
    long_line = next((i for i, line in enumerate(source.splitlines()) if len(line) > MAX_LINE_CHARS), None)
    if long_line is not None:
        result.failures.append(ParseFailure(long_line + 1, t("notebook.limit.line", limit=f"{MAX_LINE_CHARS:,}")))
        return result
    lines = _strip_ipython_syntax(source.splitlines())
    if lines is None or not any(line.strip() for line in lines):
        return result
    whole = _parse(lines, budget)
    if whole.tree is not None:
        _collect(whole, 0, known_names, provided_names, result)
        result.failures.extend(whole.repairs)
        return result
    if whole.error is not None and whole.error.message == t("notebook.limit.depth", limit=MAX_DEPTH):
        result.failures.append(whole.error)  # cutting it at column-0 lines would only list its pieces
        return result
    chunks = _top_level_chunks(lines)
    index = 0
    while index < len(chunks):
        end = index + 1
        parsed = _parse(lines[chunks[index][0] : chunks[end - 1][1]], budget)
        first_error = parsed.error
        # A chunk cut short by our naive split (open bracket, multi-line string) may need the next.
        while (
            parsed.error is not None
            and _looks_incomplete(parsed.error, chunks[end - 1][1] - chunks[index][0])
            and end < len(chunks)
            and end - index < _MAX_MERGED_CHUNKS
        ):
            end += 1
            parsed = _parse(lines[chunks[index][0] : chunks[end - 1][1]], budget)
        if budget.chars < 0:  # spent: nothing from here on is read, this cell's rest nor the cells after it
            spent = t("notebook.limit.parsing", limit=f"{PARSE_BUDGET_CHARS:,}")
            result.failures.append(ParseFailure(chunks[index][0] + 1, spent))
            break
        if parsed.tree is not None:
            offset = chunks[index][0]
            _collect(parsed, offset, known_names, provided_names, result)
            result.failures.extend(_shift(failure, offset) for failure in parsed.repairs)
            index = end
            continue
        start, stop = chunks[index]
        while stop - 1 > start and _is_blank_or_comment(lines[stop - 1]):  # report code lines only
            stop -= 1
        assert first_error is not None
        names = tuple(dict.fromkeys(_guess_defined_names(lines[start:stop])))
        line = start + (first_error.line or 1)
        fields = {"error": first_error.message, "code": _snippet(lines, line)}
        if stop - start == 1:
            message = t("notebook.parse.line_not_loaded", line=start + 1, **fields)
        else:
            message = t("notebook.parse.lines_not_loaded", first=start + 1, last=stop, **fields)
        result.failures.append(ParseFailure(line, message, names))
        index += 1
    return result


def _strip_ipython_syntax(lines: list[str]) -> list[str] | None:
    """Blank out shell and magic lines (keeping line numbers); None for a non-Python cell magic.

    One tokenizer pass over the cell, which reads it a line at a time: a magic line is blanked just
    before the tokenizer reads it when it begins a logical line (the line before ended a statement
    or a comment, outside brackets), so a magic's own quotes or brackets never mislead the
    tokenizer about the lines after it. Where the tokenizer gives up (e.g. inconsistent dedent),
    the rest is judged by the pattern alone.
    """
    lines = list(lines)
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].lstrip()[2:].split(maxsplit=1)
        if not magic or magic[0] not in PYTHON_BODY_CELL_MAGICS:
            return None
        lines[first] = ""
    row, depth, ended = 0, 0, 0  # rows read; open brackets; the row of the last NEWLINE or depth-0 NL

    def readline() -> str:
        nonlocal row
        if row < len(lines) and ended == row and _MAGIC_LINE.match(lines[row]):
            _blank_magic(lines, row)
        row += 1
        return lines[row - 1] + "\n" if row <= len(lines) else ""

    try:
        for token in tokenize.generate_tokens(readline):
            if token.type == tokenize.OP and token.string in "([{":
                depth += 1
            elif token.type == tokenize.OP and token.string in ")]}":
                depth = max(0, depth - 1)
            elif token.type == tokenize.NEWLINE or (token.type == tokenize.NL and depth == 0):
                ended = token.start[0]
    except (tokenize.TokenError, SyntaxError, ValueError):  # EOF inside brackets, inconsistent dedent, ...
        for rest in range(row, len(lines)):
            if _MAGIC_LINE.match(lines[rest]):
                _blank_magic(lines, rest)
    return lines


def _blank_magic(lines: list[str], target: int) -> None:
    """Blank a magic line and its backslash continuations."""
    stop = target
    while lines[stop].rstrip().endswith("\\") and stop + 1 < len(lines):  # `!pip install a \`
        stop += 1
    for i in range(target, stop + 1):
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
        # Inside a block an empty line would leave the block empty; `pass` keeps it valid.
        lines[i] = indent + "pass" if indent and i == target else ""


def _parse(lines: list[str], budget: ParseBudget) -> _Parsed:
    """ast.parse, filling empty blocks (`def f():` + only a comment) with `pass` as needed; each
    parse is paid from `budget` (one it cannot pay is not made: no tree, no error, budget below 0)."""
    lines, origin = list(lines), list(range(1, len(lines) + 1))
    repairs: list[ParseFailure] = []
    for _ in range(_MAX_REPAIRS):
        text = "\n".join(lines) + "\n"
        budget.chars -= len(text)
        if budget.chars < 0:
            return _Parsed(None, lines, origin, repairs, None)
        try:
            return _Parsed(ast.parse(text), lines, origin, repairs, None)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            failure = _describe(error, origin)
            empty_block = _EMPTY_BLOCK.match(getattr(error, "msg", "") or "")
            lineno = getattr(error, "lineno", None)
            if not isinstance(error, IndentationError) or not empty_block or lineno is None:
                return _Parsed(None, lines, origin, repairs, failure)
            header = int(empty_block.group(1))
            leading = re.match(r"\s*", lines[header - 1])  # always matches (maybe empty)
            indent = (leading.group(0) if leading else "") + "    "
            at = len(lines) if _at_end_of_text(error, lines) else max(lineno - 1, header)
            lines.insert(at, indent + "pass")
            origin.insert(at, origin[at - 1])
            message = t("notebook.parse.empty_block", error=failure.message, code=_snippet(lines, header))
            repairs.append(ParseFailure(origin[header - 1], message))
    return _Parsed(None, lines, origin, repairs, ParseFailure(None, t("notebook.parse.too_many_empty_blocks")))


def _at_end_of_text(error: SyntaxError, lines: list[str]) -> bool:
    """Whether the parser hit the end of the text (so `pass` goes last, not before the error line)."""
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1) + 1
    lineno, offset = error.lineno or 0, error.offset or 0
    if lineno < last:
        return False
    text = lines[lineno - 1] if lineno <= len(lines) else ""
    return not text.strip() or text.lstrip().startswith("#") or offset > len(text.rstrip())


def _describe(error: BaseException, origin: list[int]) -> ParseFailure:
    lineno = getattr(error, "lineno", None)
    line = origin[lineno - 1] if lineno and 0 < lineno <= len(origin) else lineno
    if isinstance(error, (RecursionError, MemoryError)):  # nested deeper than CPython's parser goes
        return ParseFailure(line or 1, t("notebook.limit.depth", limit=MAX_DEPTH))
    message = getattr(error, "msg", None) or str(error) or "could not be parsed"
    # Python's own line references are relative to the parsed chunk; `line` carries the real one.
    message = _LINE_REFERENCE.sub("", message)
    # Python's own text, quoted as code: the catalogue's messages wrap it.
    return ParseFailure(line, f"`{type(error).__name__}: {message}`")


def _looks_incomplete(error: ParseFailure, line_count: int) -> bool:
    return any(marker in error.message for marker in _INCOMPLETE_MARKERS) or (error.line or 0) > line_count


def _shift(failure: ParseFailure, offset: int) -> ParseFailure:
    return ParseFailure(None if failure.line is None else failure.line + offset, failure.message, failure.names)


def _top_level_chunks(lines: list[str]) -> list[tuple[int, int]]:
    """[start, stop) line ranges, each beginning at a column-0 line that starts a statement."""
    starts: list[int] = []
    in_decorators = False  # decorators belong with the def/class below them
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or line[0].isspace() or _CHUNK_CONTINUATION.match(line):
            continue
        if in_decorators and not line.startswith("@"):
            in_decorators = False
            continue
        if not in_decorators:
            starts.append(i)
        in_decorators = line.startswith("@")
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return list(zip(starts, [*starts[1:], len(lines)], strict=True))


def _snippet(lines: list[str], line: int) -> str:
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return text if len(text) <= 60 else text[:57] + "..."


def _is_blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def _guess_defined_names(lines: list[str]) -> list[str]:
    return [match.group(1) or match.group(2) for match in map(_DEFINED_NAME.match, lines) if match]


def _collect(parsed: _Parsed, offset: int, known: set[str], provided: frozenset[str], result: CellResult) -> None:
    """Sort a parsed chunk's top-level statements into kept and dropped."""
    body = parsed.tree.body if parsed.tree is not None else []  # callers pass parsed chunks only
    for node in body:
        decorators = getattr(node, "decorator_list", None) or []
        start_line = decorators[0].lineno if decorators else node.lineno
        start_col = 0 if decorators else node.col_offset
        # ast.parse sets the end positions of every statement.
        end_line = node.end_lineno if node.end_lineno is not None else node.lineno
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        code = _segment(parsed.lines, start_line, start_col, end_line, end_col)
        line = parsed.origin[start_line - 1] + offset
        if _deeper_than(node, MAX_DEPTH):  # the rules below (and compile) recurse over the tree
            guessed = tuple(_guess_defined_names(code.splitlines()[:1]))
            result.failures.append(ParseFailure(line, t("notebook.limit.depth", limit=MAX_DEPTH), guessed))
            continue
        defines = tuple(dict.fromkeys(bound_names(node)))
        reason = drop_reason(node, known)
        if reason is None and provided.intersection(defines):
            names = ", ".join(f"`{name}`" for name in sorted(provided.intersection(defines)))
            reason = t("notebook.drop.provided", names=names)
        compile_error = _compile_error(node) if reason is None else None
        if compile_error is not None:  # e.g. `break` outside a loop: ast.parse accepts it, Python does not
            error_row = min(max(compile_error.lineno or start_line, 1), len(parsed.origin))
            error = f"`SyntaxError: {_LINE_REFERENCE.sub('', compile_error.msg)}`"
            snippet = _snippet(parsed.lines, error_row)
            message = t("notebook.parse.statement_not_loaded", error=error, code=snippet, line=line)
            result.failures.append(ParseFailure(parsed.origin[error_row - 1] + offset, message, defines))
        elif reason is None:
            result.kept.append(ParsedStatement(line, code, defines))
            known.update(defines)
        elif reason:  # "" marks no-ops (docstrings, pass) that are not worth listing
            result.dropped.append(ParsedStatement(line, code, defines, reason))


def _deeper_than(node: ast.AST, limit: int) -> bool:
    """Whether a syntax tree has more than `limit` levels (walked a level at a time, not recursively)."""
    level = [node]
    for _ in range(limit):
        level = [child for parent in level for child in ast.iter_child_nodes(parent)]
        if not level:
            return False
    return True


def _compile_error(node: ast.stmt) -> SyntaxError | None:
    """The error CPython's compiler (not the parser) finds in a statement; compiling runs nothing."""
    try:
        compile(ast.Module(body=[node], type_ignores=[]), "<cell>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return error
    except (ValueError, RecursionError, MemoryError) as error:
        return SyntaxError(f"{type(error).__name__}: {error}")
    return None


def _segment(lines: list[str], start_line: int, start_col: int, end_line: int, end_col: int) -> str:
    """Source between two ast positions (columns are UTF-8 byte offsets)."""
    picked = [line.encode() for line in lines[start_line - 1 : end_line]]
    picked[-1] = picked[-1][:end_col]
    picked[0] = picked[0][start_col:]
    return b"\n".join(picked).decode()
