"""Which top-level statements of a notebook are definitions to load, and which are work to skip."""

from __future__ import annotations

import ast
import builtins

from autograder.i18n import t

_BUILTIN_NAMES = frozenset(dir(builtins))
_NEW_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def bound_names(node: ast.AST) -> list[str]:
    """Module-level names a statement binds (also inside if/for/try blocks, not inside new scopes).

    Args:
        node: a top-level statement (or any node below one, when recursing).

    Returns:
        The bound names in source order, possibly repeated; "*" for a star import.
    """
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Name):
        return [node.id] if isinstance(node.ctx, ast.Store) else []
    if isinstance(node, _NEW_SCOPES):
        return []
    return [name for child in ast.iter_child_nodes(node) for name in bound_names(child)]


def drop_reason(node: ast.stmt, known: set[str]) -> str | None:
    """Decide whether a top-level statement is a definition to load.

    Args:
        node: a top-level statement.
        known: module-level names already bound by kept statements or provided by the grader.

    Returns:
        None to keep the statement; "" to drop it silently (a no-op such as a bare string);
        otherwise a short reason why it is dropped.
    """
    if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    if isinstance(node, (ast.Pass, ast.Global, ast.Nonlocal)):
        return ""
    if isinstance(node, ast.Expr):
        return "" if isinstance(node.value, ast.Constant) else t("notebook.drop.expression")
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            return ""  # a bare annotation binds nothing
        if not all(_is_name_target(target) for target in targets):
            return t("notebook.drop.attribute")
        if not _is_static(node.value, known):
            return t("notebook.drop.computed")
        return None
    if isinstance(node, ast.Try):
        # try/except around imports (or constants) is a definition pattern; keep it whole.
        scratch = set(known)
        for part in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
            for child in part:
                if drop_reason(child, scratch) not in (None, ""):
                    return t("notebook.drop.try_block")
                scratch.update(bound_names(child))
        if all(h.type is None or _is_static(h.type, scratch) for h in node.handlers):
            return None
        return t("notebook.drop.try_type")
    return t("notebook.drop.statement", kind=f"`{type(node).__name__.lower()}`")


def _is_name_target(target: ast.expr) -> bool:
    if isinstance(target, ast.Name):
        return True
    if isinstance(target, ast.Starred):
        return _is_name_target(target.value)
    return isinstance(target, (ast.Tuple, ast.List)) and all(_is_name_target(e) for e in target.elts)


_STATIC_NODES = (
    ast.Constant,
    ast.Tuple,
    ast.List,
    ast.Set,
    ast.Dict,
    ast.UnaryOp,
    ast.BinOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Attribute,
    ast.Subscript,
    ast.Slice,
    ast.Starred,
    ast.JoinedStr,
    ast.FormattedValue,
    ast.Load,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)


def _is_static(expr: ast.expr, known: set[str]) -> bool:
    """True for values built from literals and already-loaded names without calling anything.

    Lambdas count as static: like a def, creating one runs none of its body.
    """
    if isinstance(expr, ast.Lambda):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in known or expr.id in _BUILTIN_NAMES
    if isinstance(expr, ast.Dict) and any(key is None for key in expr.keys):
        return False  # `{**other}` unpacking
    if not isinstance(expr, _STATIC_NODES):
        return False
    return all(
        _is_static(child, known) if isinstance(child, ast.expr) else isinstance(child, _STATIC_NODES)
        for child in ast.iter_child_nodes(expr)
    )
