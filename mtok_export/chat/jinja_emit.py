"""Turn jinja2 expression nodes back into template source that MNN's Jinja engine parses the same way.

The template lowering (:mod:`mtok_export.chat.lowering`) rewrites the expressions of a tag as jinja2
nodes and prints them with :func:`emit`.  The printed form stays inside the runtime's subset
(spec section 8.3) wherever the node allows it:

* booleans and none print as ``true``/``false``/``none`` (``True`` is an undefined name there);
* tuples print as lists (a tuple inside a list literal makes the runtime's parser loop forever);
* strings print with only the escapes the runtime decodes (``\\n \\r \\t \\\\ \\'``), other
  characters raw;
* two closing braces never touch (``}}`` would end a ``{{ }}`` tag in the runtime's lexer);
* parentheses are added only where precedence needs them, because the runtime drops a postfix
  (``.attr``, ``[i]``, ``.m()``) after a parenthesised expression.

Precedence follows jinja2's parser, and where the runtime's differs (``is`` tests bind like
comparisons there, ``~`` and ``+``/``-`` share a level) the operand is parenthesised so that both
engines read the same tree.
"""

from __future__ import annotations

from jinja2 import nodes

__all__ = ["emit", "emit_target", "UNEMITTABLE"]


class UNEMITTABLE(Exception):
    """A node this printer does not know (the tag is then left as written)."""


# binding strength: higher binds tighter
_COND, _OR, _AND, _NOT, _CMP, _ADD, _CONCAT, _MUL, _UNARY, _FILTER, _PRIMARY = range(11)
_CMP_OPS = {"eq": "==", "ne": "!=", "gt": ">", "gteq": ">=", "lt": "<", "lteq": "<=", "in": "in",
            "notin": "not in"}
_BIN = {nodes.Add: ("+", _ADD), nodes.Sub: ("-", _ADD), nodes.Mul: ("*", _MUL),
        nodes.Div: ("/", _MUL), nodes.FloorDiv: ("//", _MUL), nodes.Mod: ("%", _MUL),
        nodes.Pow: ("**", _MUL)}
_STR_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def emit(node: nodes.Node) -> str:
    """Source text of an expression node."""
    return _emit(node)[0]


def emit_target(node: nodes.Node) -> str:
    """Source text of an assignment / loop target (``a`` or ``a, b`` or ``ns.x``)."""
    if isinstance(node, nodes.Tuple):
        return ", ".join(emit_target(n) for n in node.items)
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.NSRef):
        return f"{node.name}.{node.attr}"
    raise UNEMITTABLE(type(node).__name__)


def _string(value: str) -> str:
    return "'" + "".join(_STR_ESCAPES.get(ch, ch) for ch in value) + "'"


def _join_braces(parts: list[str]) -> str:
    """Concatenate, putting a space between two closing braces (`} }`, never `}}`)."""
    out = ""
    for p in parts:
        if out.endswith("}") and p.startswith("}"):
            out += " "
        out += p
    return out


def _wrap(node: nodes.Node, min_level: int) -> str:
    text, level = _emit(node)
    return f"({text})" if level < min_level else text


def _args(args, kwargs, dyn_args=None, dyn_kwargs=None) -> str:
    parts = [_wrap(a, _COND) for a in args]
    parts += [f"{k.key}={_wrap(k.value, _COND)}" for k in kwargs]
    if dyn_args is not None:
        parts.append("*" + _wrap(dyn_args, _PRIMARY))
    if dyn_kwargs is not None:
        parts.append("**" + _wrap(dyn_kwargs, _PRIMARY))
    return ", ".join(parts)


def _const(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return _join_braces(["["] + [", ".join(_const(v) for v in value)] + ["]"])
    raise UNEMITTABLE(f"constant {value!r}")


def _emit(node: nodes.Node) -> tuple[str, int]:  # noqa: C901  one branch per node type
    if isinstance(node, nodes.Name):
        return node.name, _PRIMARY
    if isinstance(node, nodes.Const):
        text = _const(node.value)
        return text, (_UNARY if text.startswith("-") else _PRIMARY)
    if isinstance(node, (nodes.List, nodes.Tuple)):
        return _join_braces(["[", ", ".join(_wrap(i, _COND) for i in node.items), "]"]), _PRIMARY
    if isinstance(node, nodes.Dict):
        items = ", ".join(_join_braces([_wrap(p.key, _COND), ": ", _wrap(p.value, _COND)])
                          for p in node.items)
        return _join_braces(["{", items, "}"]), _PRIMARY
    if isinstance(node, nodes.Getattr):
        return f"{_wrap(node.node, _PRIMARY)}.{node.attr}", _PRIMARY
    if isinstance(node, nodes.Getitem):
        if isinstance(node.arg, nodes.Slice):
            s = node.arg
            sub = ":".join("" if p is None else _wrap(p, _COND) for p in (s.start, s.stop, s.step))
            if s.step is None:
                sub = sub[:-1]
        else:
            sub = _wrap(node.arg, _COND)
        return f"{_wrap(node.node, _PRIMARY)}[{sub}]", _PRIMARY
    if isinstance(node, nodes.Call):
        args = _args(node.args, node.kwargs, node.dyn_args, node.dyn_kwargs)
        return f"{_wrap(node.node, _PRIMARY)}({args})", _PRIMARY
    if isinstance(node, nodes.Filter):
        if node.node is None:
            raise UNEMITTABLE("filter block")
        args = _args(node.args, node.kwargs, node.dyn_args, node.dyn_kwargs)
        call = f"({args})" if args else ""
        return f"{_wrap(node.node, _UNARY)}|{node.name}{call}", _FILTER
    if isinstance(node, nodes.Test):
        return _test(node, negated=False), _CMP
    if isinstance(node, nodes.Not):
        if isinstance(node.node, nodes.Test):
            return _test(node.node, negated=True), _CMP
        return f"not {_wrap(node.node, _NOT)}", _NOT
    if isinstance(node, nodes.Neg):
        return f"-{_wrap(node.node, _PRIMARY)}", _UNARY
    if isinstance(node, nodes.Pos):
        return f"+{_wrap(node.node, _PRIMARY)}", _UNARY
    if isinstance(node, nodes.CondExpr):
        # `a if b if c else d else e` is legal but unreadable: parenthesise nested conditions
        text = f"{_wrap(node.expr1, _OR)} if {_wrap(node.test, _OR)}"
        if node.expr2 is not None:
            text += f" else {_wrap(node.expr2, _OR)}"
        return text, _COND
    if isinstance(node, nodes.Or):
        return f"{_wrap(node.left, _OR)} or {_wrap(node.right, _AND)}", _OR
    if isinstance(node, nodes.And):
        return f"{_wrap(node.left, _AND)} and {_wrap(node.right, _NOT)}", _AND
    if isinstance(node, nodes.Compare):
        parts = [_wrap(node.expr, _ADD)]
        for op in node.ops:
            parts.append(f"{_CMP_OPS[op.op]} {_wrap(op.expr, _ADD)}")
        return " ".join(parts), _CMP
    if isinstance(node, nodes.Concat):
        # jinja2 binds `~` tighter than `+`/`-`; the runtime treats them alike: parenthesise both
        return " ~ ".join(_wrap(n, _MUL) if isinstance(n, (nodes.Add, nodes.Sub))
                          else _wrap(n, _CONCAT) for n in node.nodes), _CONCAT
    if type(node) in _BIN:
        op, level = _BIN[type(node)]
        if level == _ADD:  # `~` operands of `+`/`-` in parentheses, see Concat
            left = _wrap(node.left, _MUL if isinstance(node.left, nodes.Concat) else _ADD)
            right = _wrap(node.right, _MUL)
        else:
            left, right = _wrap(node.left, _MUL), _wrap(node.right, _UNARY)
        return f"{left} {op} {right}", level
    raise UNEMITTABLE(type(node).__name__)


def _test(node: nodes.Test, negated: bool) -> str:
    operand = _wrap(node.node, _FILTER)
    args = _args(node.args, node.kwargs, node.dyn_args, node.dyn_kwargs)
    call = f"({args})" if args else ""
    return f"{operand} is {'not ' if negated else ''}{node.name}{call}"
