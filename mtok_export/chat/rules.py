"""The lint rules for MNN's Jinja subset (spec section 8): for each rule its id, severity and
summary (:data:`RULES`), and the check that finds it, with its message.

Node checks look at one AST node as the walker (:mod:`.walker`) saw it, and are registered for
its node types with :func:`check`; token checks look at the lexed source (:mod:`.source_map`).
A check may report more than one rule id: a construct that would make the runtime hang is
reported once, as ``runtime-hang``, instead of the rule that describes it outside a list/dict
literal.

Rules are static and deliberately low-noise where the difference depends on run-time types:

* ``string-slice``: slicing is flagged unless the sliced value is evidently a list (``messages``,
  ``tools``, ``documents``, ``.tool_calls``, list literals, ``.split()`` results, ``range()``,
  list-producing filters, list slices, and names ``set`` from those).
* ``length-undefined``: ``|length`` of a context variable other than ``messages``/``eos_token``
  (the runtime never sets ``tools``) or of an attribute other than the ones messages and tool
  schemas always carry (``role``, ``content``, ``name``, ...), unless an enclosing ``if``/``and``
  has already tested it for being defined or truthy (``is not none`` does not count: the runtime's
  undefined is not none).
* ``dict-order``: ``for`` over a dict literal, a name ``set`` from one, or a ``.properties``
  (JSON-schema) mapping. ``|items`` keeps insertion order in the runtime and is not flagged;
  ``|dictsort`` is an unsupported filter.
* ``tojson-key-order``: every ``tojson`` except of evident strings.
* ``bool-value``: ``and``/``or`` whose value is used (printed, assigned, passed on), not when it
  only feeds ``if``/``elif``/a loop filter/``not``, where true/false is all that matters.
* ``print-value``: printing of evident booleans, none, lists and dicts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from jinja2 import nodes

from ..errors import UnsupportedError
from ..target_type import MNN_JINJA, JinjaEngine, Version
from .runtime_subset import (DICT_METHODS, ESCAPES, FUNCTIONS, LOOP_ATTRS, RUNTIME_ESCAPES,
                             STRING_METHODS, SUPPORTED_FILTERS, SUPPORTED_METHODS,
                             SUPPORTED_TESTS, UNPARSED_OPERATORS, chainable)
from .source_map import NodePositions, SourceMap, Token, marker_end
from .walker import LOADER_TAGS, Ctx, Scope, Walker

__all__ = ["NODE_CHECKS", "RULES", "RULESETS", "TOKEN_CHECKS", "Facts", "Finding", "Rule", "RuleSet", "check",
           "rules_for"]


@dataclass(frozen=True)
class Finding:
    """One construct the runtime renders differently. ``line`` and ``col`` are 1-based."""

    line: int
    col: int
    rule: str
    message: str

    def __post_init__(self) -> None:
        if self.rule not in RULES:  # a misspelt id in a check
            raise ValueError(f"unknown lint rule {self.rule!r}")


@dataclass(frozen=True)
class Rule:
    """A lint rule: its stable id, severity and what the runtime does."""

    id: str
    severity: str  # "error": the runtime hangs; "warning": the runtime renders something else
    summary: str


def _rules(*items: tuple[str, str, str]) -> dict[str, Rule]:
    return {rid: Rule(rid, sev, summary) for rid, sev, summary in items}


RULES: dict[str, Rule] = _rules(
    ("syntax", "error", "jinja2 cannot parse the template (transformers cannot render it either)"),
    ("runtime-hang", "error",
     "a construct the runtime parser cannot consume sits inside a list/dict literal, or `}}` "
     "closes a `{{ }}` tag inside a dict literal: the parser loops forever"),
    ("arith-op", "warning", "`*` `/` `//` `%` `**` are not parsed: the tag is cut at the operator"),
    ("float-literal", "warning",
     "no float literals: `1.5` lexes as `1` `.` `5` and the tag is cut"),
    ("python-literal", "warning",
     "`True`/`False`/`None` are undefined names (falsy, print nothing)"),
    ("string-escape", "warning",
     "only \\n \\r \\t \\b \\f \\\\ \\' \\\" escapes; `\\x` becomes `x`"),
    ("raise-exception", "warning",
     "no `raise_exception`: the call renders \"\" and rendering goes on"),
    ("unknown-function", "warning", "functions other than range/namespace/strftime_now and macros "
     "evaluate to \"\""),
    ("dict-method", "warning", "`.items()` `.get()` `.keys()` `.values()` ... evaluate to \"\""),
    ("string-method", "warning", "string methods other than startswith/endswith/split/strip/lstrip/"
     "rstrip/replace evaluate to \"\""),
    ("method", "warning", "list and unknown methods (`.append()` ...) evaluate to \"\" and change "
     "nothing"),
    ("split-default", "warning", "`.split()` without a separator splits on single spaces only"),
    ("literal-method", "warning", "no `.attr`, `[..]` or `.method()` after a literal or `( ... )`: "
     "the postfix and the rest of the tag are dropped"),
    ("tuple-literal", "warning", "no tuples: `(a, b)` evaluates as `a` and the tag is cut"),
    ("loop-attr", "warning", "`loop` has only index, index0, first, last, length; others are "
     "undefined, `loop(...)` renders \"\""),
    ("loop-control", "warning", "`{% break %}`/`{% continue %}` are ignored"),
    ("for-else", "warning",
     "`{% else %}` of a for loop is rendered inside the loop, once per item"),
    ("set-block", "warning", "`{% set x %}...{% endset %}` renders the body in place, x = \"\""),
    ("set-tuple", "warning",
     "`{% set a, b = ... %}` sets `a` to \"\" and leaves the rest unchanged"),
    ("filter-block", "warning", "`{% filter %}` is skipped: the body is rendered unfiltered"),
    ("call-block", "warning", "`{% call %}` is skipped: the body is rendered in place, the macro "
     "is not called"),
    ("caller", "warning", "`caller()` renders \"\""),
    ("macro-default", "warning", "macro default values are dropped: an omitted argument is "
     "undefined"),
    ("unsupported-tag", "warning",
     "include/import/extends/with/autoescape/raw tags are skipped and "
     "their body rendered as plain template code"),
    ("filter", "warning", "filters other than tojson/string/capitalize/lower/upper/trim/length/"
     "items/map pass their input through unchanged"),
    ("test", "warning", "tests other than defined/undefined/none/boolean/string/number/sequence/"
     "iterable/mapping/true/false are false (`is not` ...: true)"),
    ("if-no-else", "warning", "`a if c` without else returns `a` whatever `c` is"),
    ("bool-value", "warning", "`and`/`or` return true/false, not an operand"),
    ("print-value", "warning", "non-strings print as compact JSON (`true`, `null`, `[1,\"a\"]`), "
     "not Python repr"),
    ("string-slice", "warning", "slicing a string gives \"\""),
    ("subscript-defined", "warning", "`x['k']` of a missing key is \"\" (defined), so "
     "`x['k'] is defined` is true"),
    ("tojson-key-order", "warning", "`tojson` re-sorts object keys (type, function, name, "
     "description, parameters, properties, required, enum first, then alphabetical)"),
    ("length-undefined", "warning", "`|length` of an undefined value is 1 (jinja2: 0)"),
    ("dict-order", "warning", "`for k in mapping` iterates keys in sorted order (jinja2: "
     "insertion order)"),
    ("comment-whitespace", "warning", "trim_blocks/lstrip_blocks do not apply to `{# #}`: the "
     "newline after and the indentation before a comment are kept"),
    ("lstrip-midline", "warning", "spaces/tabs between a tag and a following `{%` on the same line "
     "are removed (jinja2 keeps them)"),
    ("trailing-newline", "warning", "a final newline of the template is kept (jinja2 drops it)"),
)

# Filters the runtime lacks but whose jinja2 result prints the same as the pass-through.
_HARMLESS_FILTERS = frozenset({"safe"})
_DICT_ATTRS = frozenset({"properties"})  # JSON-schema `properties` is a mapping
# String-valued attributes of chat messages and tool schemas: `|tojson` of them is not reported.
_STRING_ATTRS = frozenset({"content", "text", "role", "name", "id", "description", "type",
                           "reasoning_content", "thinking"})
_PYTHON_LITERALS = ("True", "False", "None")


class Facts:
    """What a check may look at besides its node: the source, the positions of nodes, the
    template's names, and the walker's anchors (the token each node introduced)."""

    def __init__(self, src: SourceMap, positions: NodePositions, scope: Scope,
                 walker: Walker) -> None:
        self.src = src
        self.positions = positions
        self.scope = scope
        self.walker = walker

    def text(self, node: nodes.Node) -> str:
        return self.positions.text(node)

    def reg(self, node: nodes.Node, *key: str) -> int:
        return self.walker.anchor(node, key)

    def token(self, reg: int = -1, node: nodes.Node | None = None) -> Token | None:
        return self.positions.anchor(reg, node)

    def finding(self, rule: str, message: str, *, reg: int = -1,
                node: nodes.Node | None = None, after: bool = False) -> Iterator[Finding]:
        """The finding at registration ``reg`` (else at ``node``'s leftmost token); ``after``:
        at the name after that token (attribute, filter, test)."""
        line, col = self.positions.place(self.token(reg, node), reg, node, after)
        yield Finding(line, col, rule, message)


Check = Callable[[nodes.Node, Ctx, Facts], Iterator[Finding]]
NODE_CHECKS: dict[type, list[Check]] = {}


def check(*types: type) -> Callable[[Check], Check]:
    """Register a node check for the node types ``types``."""
    def register(fn: Check) -> Check:
        for t in types:
            NODE_CHECKS.setdefault(t, []).append(fn)
        return fn
    return register


# --- tags ---------------------------------------------------------------------------------------


@check(nodes.For)
def for_else(node: nodes.For, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if node.else_:
        yield from f.finding("for-else", (
            "runtime has no for-else: the `{% else %}` tag is skipped and its body is "
            "rendered inside the loop after every item, and never for an empty sequence"),
            reg=f.reg(node, "tag", "for-else"))


@check(nodes.For)
def dict_order(node: nodes.For, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    it = node.iter
    if (isinstance(it, nodes.Dict)
            or (isinstance(it, nodes.Name) and it.name in f.scope.dict_names)
            or (isinstance(it, nodes.Getattr) and it.attr in _DICT_ATTRS)):
        yield from f.finding("dict-order", (
            f"runtime iterates a mapping's keys in sorted order: `for ... in "
            f"{f.text(it)}` visits the keys alphabetically, jinja2 in insertion order; "
            "use `|items` (which keeps the order)"), node=it)


@check(nodes.Assign)
def set_tuple(node: nodes.Assign, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if isinstance(node.target, nodes.Tuple):
        names = ", ".join(getattr(n, "name", "?") for n in node.target.items)
        first = getattr(node.target.items[0], "name", "?") if node.target.items else "?"
        yield from f.finding("set-tuple", (
            f"runtime has no tuple assignment: `set {names} = ...` sets `{first}` to \"\" "
            "and leaves the other names unchanged"), reg=f.reg(node, "tag", "set"))


@check(nodes.AssignBlock)
def set_block(node: nodes.AssignBlock, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    name = getattr(node.target, "name", "x")
    yield from f.finding("set-block", (
        f"runtime has no block set: `{{% set {name} %}}...{{% endset %}}` renders the body in "
        f"place and sets `{name}` to \"\""), reg=f.reg(node, "tag", "set"))


@check(nodes.Macro, nodes.CallBlock)
def macro_default(node: nodes.Macro | nodes.CallBlock, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    first_default = len(node.args) - len(node.defaults)
    for arg, default in zip(node.args[first_default:], node.defaults):
        yield from f.finding("macro-default", (
            f"runtime parses and drops macro default values: a call without `{arg.name}` "
            f"leaves it undefined instead of `{f.text(default) or '...'}`"),
            reg=f.reg(arg, "ident", arg.name))


@check(nodes.CallBlock)
def call_block(node: nodes.CallBlock, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    yield from f.finding("call-block", (
        "runtime has no `{% call %}`: the tag is skipped, the body is rendered in place and "
        "the macro is not called"), reg=f.reg(node, "tag", "call"))


@check(nodes.FilterBlock)
def filter_block(node: nodes.FilterBlock, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    names = []
    flt = node.filter
    while isinstance(flt, nodes.Filter):
        names.append(flt.name)
        flt = flt.node
    chain = "|".join(reversed(names))
    yield from f.finding("filter-block", (
        f"runtime has no `{{% filter %}}` block: the tag is skipped and the body is rendered "
        f"without `{chain}`"), reg=f.reg(node, "tag", "filter"))


@check(nodes.With)
def with_tag(node: nodes.With, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    names = ", ".join(getattr(t, "name", "?") for t in node.targets)
    yield from f.finding("unsupported-tag", (
        f"runtime has no `{{% with %}}`: the tag is skipped and the body is rendered without "
        f"`{names}` being set"), reg=f.reg(node, "tag", "with"))


@check(*LOADER_TAGS)
def loader_tag(node: nodes.Node, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    tag = LOADER_TAGS[type(node)]
    yield from f.finding("unsupported-tag", (
        f"runtime has no `{{% {tag} %}}`: the tag is skipped and renders nothing, while "
        "transformers fails (its environment has no template loader)"),
        reg=f.reg(node, "tag", tag))


@check(nodes.ScopedEvalContextModifier, nodes.EvalContextModifier)
def autoescape_tag(node: nodes.Node, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    yield from f.finding("unsupported-tag", (
        "runtime has no `{% autoescape %}`: the tag is skipped and output inside it is "
        "never HTML-escaped"), reg=f.reg(node, "tag", "autoescape"))


@check(nodes.Break, nodes.Continue)
def loop_control(node: nodes.Node, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if isinstance(node, nodes.Break):
        message = "runtime ignores `{% break %}`: the loop goes on with every remaining item"
        tag = "break"
    else:
        message = "runtime ignores `{% continue %}`: the rest of the loop body is still rendered"
        tag = "continue"
    yield from f.finding("loop-control", message, reg=f.reg(node, "tag", tag))


@check(nodes.Output)
def print_value(node: nodes.Output, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    for expr in node.nodes:
        kind = None if isinstance(expr, nodes.TemplateData) else _printed_kind(expr)
        if kind is None:
            continue
        tok = f.token(node=expr)
        if tok is not None and tok.value in _PYTHON_LITERALS and isinstance(expr, nodes.Const):
            continue  # `{{ True }}` prints nothing at all in the runtime: python-literal
        yield from f.finding("print-value", (
            f"runtime prints non-strings as compact JSON: `{{{{ {_not_prefix(expr, f)}"
            f"{f.text(expr)} }}}}` prints "
            f"{kind} as `true`/`false`/`null`/`[1,\"a\"]` where jinja2 prints `True`/`False`/"
            "`None`/`[1, 'a']`"), node=expr)


def _printed_kind(expr: nodes.Node) -> str | None:
    """What a printed expression evidently is when it is not a string, else None."""
    if isinstance(expr, nodes.Const) and (expr.value is None or isinstance(expr.value, bool)):
        return "a boolean/none literal"
    if isinstance(expr, (nodes.Compare, nodes.Test, nodes.Not)):
        return "a boolean"
    if isinstance(expr, (nodes.List, nodes.Dict)):
        return "a list/dict"
    if isinstance(expr, nodes.Getattr) and isinstance(expr.node, nodes.Name) \
            and expr.node.name == "loop" and expr.attr in ("first", "last"):
        return "a boolean"
    if isinstance(expr, nodes.Filter) and expr.name in ("map", "items"):
        return "a list"
    if isinstance(expr, nodes.Call) and isinstance(expr.node, nodes.Name) \
            and expr.node.name == "range":
        return "a list"
    return None


def _not_prefix(expr: nodes.Node, f: Facts) -> str:
    """``"not "`` for `not x` (not for `x is not y`, which is also a Not node)."""
    inner = f.positions.leftmost(expr.node) if isinstance(expr, nodes.Not) else None
    if inner is None:
        return ""
    before = f.src.text[:inner.pos].rstrip()
    return "not " if re.search(r"(?<![\w.])not\Z", before) else ""


# --- literals -----------------------------------------------------------------------------------


@check(nodes.Const)
def float_literal(node: nodes.Const, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if not isinstance(node.value, float):
        return
    reg = f.reg(node, "const")
    tok = f.token(reg)
    raw = tok.value if tok is not None else repr(node.value)
    if ctx.literal:
        yield from f.finding("runtime-hang", (
            f"runtime has no float literals: inside this list/dict literal the parser "
            f"stops at the `.` of `{tok.value if tok else node.value}` and loops forever: "
            "rendering hangs"), reg=reg)
        return
    whole = raw.split(".")[0] or "0"
    yield from f.finding("float-literal", (
        f"runtime has no float literals: `{raw}` lexes as `{whole}` `.` ... so it "
        f"evaluates as `{whole}` and the rest of the tag is dropped"), reg=reg)


@check(nodes.Const)
def python_literal(node: nodes.Const, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if not (isinstance(node.value, bool) or node.value is None):
        return
    reg = f.reg(node, "const")
    tok = f.token(reg)
    if tok is not None and tok.value in _PYTHON_LITERALS:
        yield from f.finding("python-literal", (
            f"runtime knows only lower-case `true`/`false`/`none`: `{tok.value}` is an "
            "undefined variable (falsy, prints nothing)"), reg=reg)


@check(nodes.Const)
def string_escape(node: nodes.Const, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if not isinstance(node.value, str):
        return
    reg = f.reg(node, "const")
    tok = f.token(reg)
    if tok is None or tok.type != "string":
        return
    raw = tok.value[1:-1]
    bad = [m.group(0) for m in re.finditer(r"\\(.)", raw, re.DOTALL) if m.group(1) not in ESCAPES]
    if not bad:
        return
    runtime = re.sub(r"\\(.)", lambda m: RUNTIME_ESCAPES.get(m.group(1), m.group(1)), raw,
                     flags=re.DOTALL)
    yield from f.finding("string-escape", (
        f"runtime knows only the escapes \\n \\r \\t \\b \\f \\\\ \\' \\\": "
        f"`{bad[0]}` becomes `{bad[0][1]}`, so {tok.value} is {runtime!r} in the runtime; "
        "write the character itself"), reg=reg)


@check(nodes.Tuple)
def tuple_literal(node: nodes.Tuple, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if node.ctx != "load":
        return
    if ctx.literal:
        yield from f.finding("runtime-hang", (
            f"runtime has no tuples: inside a list/dict literal its parser stops at the `,` "
            f"of `({f.text(node)})` and loops forever: rendering hangs; use a list"), node=node)
        return
    first = f.text(node.items[0]) if node.items else ""
    yield from f.finding("tuple-literal", (
        f"runtime has no tuples: `({f.text(node)})` evaluates as its first item "
        f"`{first}` and the rest of the tag is "
        "dropped (`x in ('a', 'b')` becomes a substring test on 'a'); use a list"), node=node)


# --- operators ----------------------------------------------------------------------------------


@check(*UNPARSED_OPERATORS)
def arith_op(node: nodes.BinExpr, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    op = UNPARSED_OPERATORS[type(node)]
    reg = f.reg(node, "op", op)
    if ctx.literal:
        yield from f.finding("runtime-hang", (
            f"runtime does not parse `{op}`: inside a list/dict literal its parser stops at "
            "the operator and loops forever, so rendering hangs; compute the value in a "
            "`{% set %}` without the operator"), reg=reg)
        return
    tok = f.token(reg)
    if tok is None:
        message = f"runtime does not parse `{op}`: the tag is cut at the operator"
    else:
        start = f.src.expression_start(tok)
        full = " ".join(f.src.text[start:f.src.tag_end(tok)].strip(" -+").split())
        cut = " ".join(f.src.text[start:tok.pos].split())
        message = (f"runtime does not parse `{op}`: it stops at the operator and drops the rest "
                   f"of the tag, so `{full}` evaluates as `{cut}`")
    yield from f.finding("arith-op", message, reg=reg)


@check(nodes.And, nodes.Or)
def bool_value(node: nodes.And | nodes.Or, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if ctx.boolean or ctx.in_boolop:  # only true/false matters, or the outer and/or is reported
        return
    op = "and" if isinstance(node, nodes.And) else "or"
    picks = "first truthy" if op == "or" else "first falsy"
    yield from f.finding("bool-value", (
        f"runtime's `{op}` returns true/false, not one of its operands: "
        f"`{f.text(node)}` evaluates to `true`/`false` where jinja2 returns the "
        f"{picks} operand (or the last one); write `a if a else b` instead"),
        reg=f.reg(node, "kw", op))


@check(nodes.CondExpr)
def if_no_else(node: nodes.CondExpr, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if node.expr2 is None:
        yield from f.finding("if-no-else", (
            f"runtime ignores the condition of an `if` without `else`: "
            f"`{f.text(node.expr1)} if {f.text(node.test)}` always evaluates to "
            f"`{f.text(node.expr1)}` (jinja2 gives an empty value when the condition is "
            "false); add `else \"\"`"), reg=f.reg(node, "kw", "if"))


# --- attributes, subscripts and calls -----------------------------------------------------------


@check(nodes.Getattr, nodes.Getitem)
def literal_postfix(node: nodes.Getattr | nodes.Getitem, ctx: Ctx,
                    f: Facts) -> Iterator[Finding]:
    base = node.node
    if chainable(base):
        return
    if isinstance(node, nodes.Getattr):
        what, reg = f".{node.attr}", f.reg(node, "op", ".")
    else:
        what, reg = "[...]", f.reg(node, "op", "[")
    text = f.text(base)
    base_text = text if isinstance(base, (nodes.Const, nodes.List, nodes.Dict)) else f"({text})"
    if ctx.literal:
        yield from f.finding("runtime-hang", (
            f"runtime takes no postfix after a literal or `( ... )`: inside this list/dict "
            f"literal its parser stops at `{what}` after `{base_text}` and loops "
            "forever: rendering hangs"), reg=reg)
        return
    yield from f.finding("literal-method", (
        f"runtime takes no postfix after a literal or `( ... )`: "
        f"`{base_text}{what}...` evaluates as `{base_text}`, the `{what}` and "
        "the rest of the tag are dropped; assign the value with `set` first"), reg=reg)


def _is_loop(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == "loop"


@check(nodes.Getattr)
def loop_attr(node: nodes.Getattr, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if _is_loop(node.node) and node.attr not in LOOP_ATTRS:
        yield from f.finding("loop-attr", (
            f"runtime's loop object has only index, index0, first, last and length: "
            f"`loop.{node.attr}` is undefined (falsy, prints nothing, calling it gives \"\")"),
            reg=f.reg(node, "op", "."), after=True)


@check(nodes.Getitem)
def string_slice(node: nodes.Getitem, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if chainable(node.node) and isinstance(node.arg, nodes.Slice) \
            and not f.scope.listlike(node.node):
        yield from f.finding("string-slice", (
            f"runtime slices only lists: if `{f.text(node.node)}` is a string, "
            f"`{f.text(node)}` evaluates to \"\" (jinja2 slices the string)"),
            reg=f.reg(node, "op", "["))


@check(nodes.Call)
def function_call(node: nodes.Call, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    """raise-exception, caller, loop-attr (`loop(...)`) and unknown-function."""
    callee = node.node
    if not isinstance(callee, nodes.Name):
        return
    name = callee.name
    reg = f.reg(callee, "ident", name)
    if name == "raise_exception":
        yield from f.finding("raise-exception", (
            "runtime has no `raise_exception`: the call renders \"\" and the template goes "
            "on rendering the case it meant to reject"), reg=reg)
    elif name == "caller":
        yield from f.finding("caller", (
            "runtime has no `{% call %}` blocks, so `caller()` renders \"\""), reg=reg)
    elif name == "loop":
        yield from f.finding("loop-attr", (
            "runtime has no recursive loops: `loop(...)` renders \"\""), reg=reg)
    elif name not in FUNCTIONS and name not in f.scope.macros:
        yield from f.finding("unknown-function", (
            f"runtime has no function `{name}`: `{name}(...)` evaluates to \"\" (it knows only "
            "range, namespace, strftime_now and the template's macros)"), reg=reg)


_DICT_METHOD_HINTS = {"items": "use `|items`", "get": "use `x[key]` / `x.key` with `is defined`",
                      "keys": "iterate the mapping itself"}
_STRING_METHOD_HINTS = {"upper": "use `|upper`", "lower": "use `|lower`", "join": "use `~`",
                        "title": "use `|capitalize` per word",
                        "capitalize": "use `|capitalize`"}


@check(nodes.Call)
def method_call(node: nodes.Call, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    """split-default, dict-method, string-method and method."""
    callee = node.node
    if not (isinstance(callee, nodes.Getattr) and chainable(callee.node)
            and not _is_loop(callee.node)):
        return
    name = callee.attr
    reg = f.reg(callee, "op", ".")  # the `.` of the method
    if name in SUPPORTED_METHODS:
        if name == "split" and not node.args and not node.kwargs:
            yield from f.finding("split-default", (
                "runtime's `.split()` without a separator splits on each single space: runs of "
                "spaces give empty strings and newlines/tabs do not split (Python splits on "
                "whitespace runs); pass the separator explicitly"), reg=reg, after=True)
    elif name in DICT_METHODS:
        hint = _DICT_METHOD_HINTS.get(name, "avoid it")
        yield from f.finding("dict-method", (
            f"runtime has no dict methods: `.{name}()` evaluates to \"\" (a `for` over it "
            f"iterates nothing); {hint}"), reg=reg, after=True)
    elif name in STRING_METHODS:
        hint = _STRING_METHOD_HINTS.get(name)
        yield from f.finding("string-method", (
            f"runtime implements only startswith, endswith, split, strip, lstrip, rstrip and "
            f"replace on strings: `.{name}()` evaluates to \"\""
            + (f"; {hint}" if hint else "")), reg=reg, after=True)
    else:
        yield from f.finding("method", (
            f"runtime has no `.{name}()` method: the call evaluates to \"\" and changes "
            "nothing"), reg=reg, after=True)


# --- filters and tests --------------------------------------------------------------------------

# What an unsupported filter's pass-through loses, for the message.
_FILTER_LOSSES = {
    "default": "an undefined value stays undefined (prints nothing, falsy) and none "
               "prints `null`: the default is never used",
    "d": "an undefined value stays undefined: the default is never used",
    "first": "the whole sequence is returned, not its first item",
    "last": "the whole sequence is returned, not its last item",
    "join": "`join` was added to the runtime after MNN 3.6.1: the list prints as JSON "
            "`[\"a\",\"b\"]`",
    "selectattr": "nothing is filtered out",
    "rejectattr": "nothing is filtered out",
    "select": "nothing is filtered out",
    "reject": "nothing is filtered out",
    "dictsort": "the mapping is not turned into sorted pairs",
    "replace": "nothing is replaced",
    "int": "a string stays a string",
    "escape": "nothing is HTML-escaped",
    "e": "nothing is HTML-escaped",
}


@check(nodes.Filter)
def unsupported_filter(node: nodes.Filter, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    name = node.name
    reg = f.reg(node, "op", "|")
    if name == "map" and node.args:
        yield from f.finding("filter", (
            "runtime's `map` only looks up attributes: `map('f')` maps every item to its "
            "attribute `f` (null when missing) instead of applying the filter `f`; use "
            "`map(attribute=...)`"), reg=reg, after=True)
        return
    if name in SUPPORTED_FILTERS or name in _HARMLESS_FILTERS:
        return
    if name == "list" and (isinstance(node.node, nodes.Filter) or f.scope.listlike(node.node)):
        return  # a list already in both engines
    detail = _FILTER_LOSSES.get(name, "")
    yield from f.finding("filter", (
        f"runtime has no `{name}` filter: the value passes through unchanged"
        + (f" ({detail})" if detail else "")), reg=reg, after=True)


def _is_stringy(node: nodes.Node | None) -> bool:
    if isinstance(node, nodes.Const):
        return not isinstance(node.value, (dict, list, tuple))
    if isinstance(node, nodes.Concat):
        return True
    if isinstance(node, nodes.Getattr):
        return node.attr in _STRING_ATTRS
    if isinstance(node, nodes.Filter):
        return node.name in ("string", "trim", "lower", "upper", "capitalize", "replace")
    return False


@check(nodes.Filter)
def tojson_key_order(node: nodes.Filter, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if node.name == "tojson" and not _is_stringy(node.node):
        yield from f.finding("tojson-key-order", (
            "runtime's `tojson` re-sorts object keys: type, function, name, description, "
            "parameters, properties, required, enum first, then the rest alphabetically "
            "(transformers keeps insertion order), at every nesting level"),
            reg=f.reg(node, "op", "|"), after=True)


@check(nodes.Filter)
def length_undefined(node: nodes.Filter, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    if node.name == "length" and f.scope.maybe_undefined(node.node, ctx):
        text = f.text(node.node) or "x"
        never = " (the runtime never sets `tools`)" if text == "tools" else ""
        yield from f.finding("length-undefined", (
            f"runtime's `|length` of an undefined value is 1 (undefined is an "
            f"object with one key), jinja2 gives 0: if `{text}` is "
            f"undefined{never}, `{text}|length` is 1; test `{text} is defined` "
            "first"), reg=f.reg(node, "op", "|"), after=True)


@check(nodes.Test)
def unsupported_test(node: nodes.Test, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    name = node.name
    if name not in SUPPORTED_TESTS:
        yield from f.finding("test", (
            f"runtime has no `{name}` test: `x is {name}` is always false and "
            f"`x is not {name}` always true"), reg=f.reg(node, "kw", "is"), after=True)


@check(nodes.Test)
def subscript_defined(node: nodes.Test, ctx: Ctx, f: Facts) -> Iterator[Finding]:
    name = node.name
    item = node.node
    if name in ("defined", "undefined") and isinstance(item, nodes.Getitem) \
            and not isinstance(item.arg, nodes.Slice):
        if isinstance(item.arg, nodes.Const) and isinstance(item.arg.value, str) \
                and item.arg.value.isidentifier():
            attr_form = f"{f.text(item.node)}.{item.arg.value}"
        else:
            attr_form = "x.key"
        yield from f.finding("subscript-defined", (
            f"runtime gives \"\" (which is defined) for a missing key: "
            f"`{f.text(item)} is {name}` is always "
            f"{str(name == 'defined').lower()}; use "
            f"attribute access (`{attr_form} is {name}`)"),
            reg=f.reg(node, "kw", "is"), after=True)


# --- token checks: what the lexer sees ----------------------------------------------------------


def hang_brace(src: SourceMap) -> Iterator[Finding]:
    for tok in src.hang_braces:
        yield Finding(tok.line, tok.col, "runtime-hang", (
            "the runtime's lexer ends the `{{ }}` tag at this `}}` although a dict literal is "
            "still open, and its parser then loops forever: rendering hangs. Put a space "
            "between the braces (`} }`) or build the dict in a `{% set %}`"))


def comment_whitespace(src: SourceMap) -> Iterator[Finding]:
    for i, tok in enumerate(src.toks):
        if tok.type != "comment_begin":
            continue
        kept = src.kept_whitespace(i)
        problems = []
        if kept.indent:
            problems.append(f"keeps the indentation {kept.indent!r} before it")
        if kept.newline is not None:
            problems.append("keeps the newline after it")
        if problems:
            yield Finding(tok.line, tok.col, "comment-whitespace", (
                "runtime applies trim_blocks/lstrip_blocks only to `{% %}` tags, not to "
                "comments: it " + " and ".join(problems) + " (jinja2 removes it); use "
                "`{#-`/`-#}`"))


def lstrip_midline(src: SourceMap) -> Iterator[Finding]:
    for i, tok in enumerate(src.toks):
        if tok.type not in ("block_begin", "raw_begin") or tok.value.startswith("{%-"):
            continue
        if i == 0 or src.toks[i - 1].type != "data":
            continue
        prev_end = src.prev_tag_end(i - 1)
        if prev_end is None or prev_end.value.startswith("-"):
            continue
        gap_start = marker_end(prev_end)
        gap = src.text[gap_start:tok.pos]
        if gap and not gap.strip(" \t") and "\n" not in gap:
            line, col = src.line_col(gap_start)
            yield Finding(line, col, "lstrip-midline", (
                f"runtime strips the {gap!r} between the previous tag and `{{%` (its "
                "lstrip_blocks does not check for the start of a line); jinja2 keeps it"))


def raw_block(src: SourceMap) -> Iterator[Finding]:
    for i, tok in enumerate(src.toks):
        if tok.type != "raw_begin":
            continue
        body = src.toks[i + 1].value if i + 1 < len(src.toks) and \
            src.toks[i + 1].type == "data" else ""
        if any(d in body for d in ("{{", "{%", "{#")):
            yield Finding(tok.line, tok.col, "unsupported-tag", (
                "runtime has no `{% raw %}`: the tag is skipped and the template code inside "
                "it is executed instead of printed literally"))


def trailing_newline(src: SourceMap) -> Iterator[Finding]:
    if not src.text.endswith("\n"):
        return
    body = src.text[:-1]
    if body.endswith(("%}", "#}")) or re.search(r"-(}}|%}|#})\s*\Z", body):
        return
    line, col = src.line_col(len(body))
    yield Finding(line, col, "trailing-newline", (
        "runtime keeps the template's final newline, jinja2 (keep_trailing_newline=False) "
        "drops it: the prompt ends with an extra \\n; strip it from the template"))


TOKEN_CHECKS: tuple[Callable[[SourceMap], Iterator[Finding]], ...] = (
    hang_brace, comment_whitespace, lstrip_midline, raw_block, trailing_newline)


@dataclass(frozen=True)
class RuleSet:
    """The rules of one Jinja engine release: what `lint_template` reports and the lowering fixes."""

    rules: dict[str, Rule]
    node_checks: dict[type, list[Check]]
    token_checks: tuple[Callable[[SourceMap], Iterator[Finding]], ...]


# The rules of each engine release they were reproduced against, keyed by `JinjaEngine.version`: a
# target whose engine is another release gets no rules by default (`rules_for` refuses it) until an
# entry here says which apply (a new release's own, or an older set named explicitly).
RULESETS: dict[Version, RuleSet] = {MNN_JINJA.version: RuleSet(RULES, NODE_CHECKS, TOKEN_CHECKS)}


def rules_for(engine: JinjaEngine) -> RuleSet:
    """The rules of `engine`'s release; `UnsupportedError` (exit 2) naming it when there are none."""
    found = RULESETS.get(engine.version)
    if found is None:
        known = ", ".join(str(v) for v in RULESETS)
        raise UnsupportedError(f"no chat lint rules for {engine} (rules exist for jinja.hpp {known}): its "
                               "templates cannot be checked or lowered; add its rules to chat.rules.RULESETS")
    return found
