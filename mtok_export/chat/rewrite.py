"""The expression half of template lowering (:mod:`mtok_export.chat.lowering`): jinja2 nodes
rewritten into nodes MNN's Jinja engine evaluates like jinja2 (spec section 8).

:class:`ExprRewriter` holds what a rewrite needs to know about the tags around the expression
(the enclosing loops and macro), collects the code to insert before the current tag (``hoists``:
loops and ``set`` statements computing what has no expression form in the runtime) and counts
the rewrites per rule.  Each ``_x_<Node>`` method returns the rewritten node; children first.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from jinja2 import nodes

from .jinja_emit import emit
from .runtime_subset import FUNCTIONS, chainable

UNDEFINED = "mtok_undefined"  # a variable no template sets: undefined in both engines
_LOOP_REWRITES = frozenset({"previtem", "nextitem", "revindex", "revindex0"})
# str methods that are pure functions of their receiver and arguments: folded on string literals
_FOLDABLE = frozenset({"strip", "lstrip", "rstrip", "replace", "upper", "lower", "startswith",
                       "endswith", "split", "title", "capitalize"})


TOJSON_MACRO = "mtok_tojson"
TOJSON_INDENT_MACRO = "mtok_tojson_indent"
REPR_MACRO = "mtok_repr"
# JSON in insertion order, like transformers' tojson (json.dumps, ", "/": " separators, no ASCII
# escaping): `|items` keeps a mapping's order in the runtime, its `tojson` of a string escapes as
# json.dumps does.  Keys and strings go through `(s ~ '')` so that the linter sees strings.
TOJSON_DEFINITION = (
    "{% macro " + TOJSON_MACRO + "(x) %}"
    "{%- if x is mapping -%}{{ '{' }}{%- for k, v in x|items -%}{%- if not loop.first %}, {% endif -%}"
    "{{ (k ~ '')|tojson }}: {{ " + TOJSON_MACRO + "(v) }}{%- endfor -%}{{ '}' }}"
    "{%- elif x is string -%}{{ (x ~ '')|tojson }}"
    "{%- elif x is sequence -%}[{%- for v in x -%}{%- if not loop.first %}, {% endif -%}"
    "{{ " + TOJSON_MACRO + "(v) }}{%- endfor -%}]"
    "{%- elif x is boolean -%}{{ 'true' if x else 'false' }}"
    "{%- elif x is none -%}null"
    "{%- else -%}{{ x ~ '' }}{%- endif -%}"
    "{% endmacro %}"
    # json.dumps(indent=N): "," then a newline and the indentation before each item
    "{% macro " + TOJSON_INDENT_MACRO + "(x, pad, cur) %}"
    "{%- if x is mapping -%}{%- if x|length == 0 -%}{{ '{}' }}{%- else -%}{{ '{' }}"
    "{%- for k, v in x|items -%}{%- if not loop.first -%},{%- endif -%}{{ '\\n' ~ cur ~ pad }}"
    "{{ (k ~ '')|tojson }}: {{ " + TOJSON_INDENT_MACRO + "(v, pad, cur ~ pad) }}{%- endfor -%}"
    "{{ '\\n' ~ cur ~ '}' }}{%- endif -%}"
    "{%- elif x is string -%}{{ (x ~ '')|tojson }}"
    "{%- elif x is sequence -%}{%- if x|length == 0 -%}[]{%- else -%}["
    "{%- for v in x -%}{%- if not loop.first -%},{%- endif -%}{{ '\\n' ~ cur ~ pad }}"
    "{{ " + TOJSON_INDENT_MACRO + "(v, pad, cur ~ pad) }}{%- endfor -%}{{ '\\n' ~ cur ~ ']' }}{%- endif -%}"
    "{%- else -%}{{ " + TOJSON_MACRO + "(x) }}{%- endif -%}"
    "{% endmacro %}"
    # Python's repr() of JSON values, for `|string`: dict/list/str/True/False/None
    "{% macro " + REPR_MACRO + "(x) %}"
    "{%- if x is mapping -%}{{ '{' }}{%- for k, v in x|items -%}{%- if not loop.first %}, {% endif -%}"
    "{{ " + REPR_MACRO + "(k) }}: {{ " + REPR_MACRO + "(v) }}{%- endfor -%}{{ '}' }}"
    "{%- elif x is string -%}"
    "{%- set e = x.replace('\\\\', '\\\\\\\\').replace('\\n', '\\\\n').replace('\\r', '\\\\r')"
    ".replace('\\t', '\\\\t') -%}"
    "{%- if \"'\" in e and '\"' not in e -%}{{ '\"' ~ e ~ '\"' }}"
    "{%- else -%}{{ \"'\" ~ e.replace(\"'\", \"\\\\'\") ~ \"'\" }}{%- endif -%}"
    "{%- elif x is sequence -%}[{%- for v in x -%}{%- if not loop.first %}, {% endif -%}"
    "{{ " + REPR_MACRO + "(v) }}{%- endfor -%}]"
    "{%- elif x is boolean -%}{{ 'True' if x else 'False' }}"
    "{%- elif x is none -%}None"
    "{%- else -%}{{ x ~ '' }}{%- endif -%}"
    "{% endmacro %}{{ '' }}")


@dataclass
class Loop:
    iter: nodes.Node | None  # the sequence, when loop.previtem can index it again
    items: dict = field(default_factory=dict)  # name -> node replacing it in the body (dictsort)


@dataclass
class Macro:
    defaults: dict  # parameter -> default value node, for the parameters rewritten in the body


class ExprRewriter:
    def __init__(self, disabled: frozenset = frozenset()) -> None:
        self.disabled = disabled  # rules not to apply (to measure what each one fixes)
        self.applied: Counter = Counter()
        self.loops: list[Loop] = []
        self.macros: list[Macro] = []
        self.hoists: list[str] | None = None  # code to insert before the current tag, or None
        self.rewrote = False  # the current tag changed
        self.fresh = 0
        self.uses_tojson = False  # the template needs TOJSON_DEFINITION

    def on(self, rule: str) -> bool:
        return rule not in self.disabled

    def _mark(self, rule: str) -> None:
        self.applied[rule] += 1
        self.rewrote = True

    def expr(self, node: nodes.Node, boolean: bool = False, receiver: bool = False) -> nodes.Node:
        """The rewritten ``node``.  ``boolean``: only its truth value is used; ``receiver``: a
        postfix (``.x``, ``[i]``, call) follows it."""
        method = getattr(self, "_x_" + type(node).__name__, None)
        if method is not None:
            return method(node, boolean, receiver)
        for name, value in node.iter_fields():
            if isinstance(value, nodes.Node):
                setattr(node, name, self.expr(value))
            elif isinstance(value, list):
                setattr(node, name, [self.expr(v) if isinstance(v, nodes.Node) else v
                                     for v in value])
        return node

    def _x_Name(self, node, boolean, receiver):
        if node.ctx != "load":
            return node
        for loop in reversed(self.loops):
            if node.name in loop.items:
                self.rewrote = True
                return loop.items[node.name]
        if self.macros and node.name in self.macros[-1].defaults:
            self._mark("macro-default")
            default = self.macros[-1].defaults[node.name]
            test = nodes.Test(node, "defined", [], [], None, None)
            if node.name in FUNCTIONS:  # the runtime predefines these names as "<function NAME>"
                test = nodes.And(test, nodes.Compare(node, [nodes.Operand(
                    "ne", nodes.Const(f"<function {node.name}>"))]))
            return nodes.CondExpr(test, node, default)
        return node

    def _x_Tuple(self, node, boolean, receiver):
        items = [self.expr(i) for i in node.items]
        if node.ctx != "load":
            return nodes.Tuple(items, node.ctx)
        self._mark("tuple-literal")
        return nodes.List(items)

    def _x_List(self, node, boolean, receiver):
        if any(isinstance(i, nodes.Tuple) for i in node.items):
            self._mark("runtime-hang")
        return nodes.List([self.expr(i) for i in node.items])

    def _x_Dict(self, node, boolean, receiver):
        if any(isinstance(p.value, nodes.Tuple) or isinstance(p.key, nodes.Tuple) for p in node.items):
            self._mark("runtime-hang")
        return nodes.Dict([nodes.Pair(self.expr(p.key), self.expr(p.value)) for p in node.items])

    def _x_Getattr(self, node, boolean, receiver):
        if isinstance(node.node, nodes.Name) and node.node.name == "loop" \
                and node.attr in _LOOP_REWRITES and self.loops and self.on("loop-attr"):
            new = self._loop_attr(node.attr, self.loops[-1])
            if new is not None:
                self._mark("loop-attr")
                return new
        return self._postfix(self.expr(node.node, receiver=True),
                        lambda r: nodes.Getattr(r, node.attr, node.ctx))

    def _loop_attr(self, attr: str, loop: Loop) -> nodes.Node | None:
        loop_ = nodes.Name("loop", "load")
        if attr == "revindex":
            return nodes.Sub(nodes.Getattr(loop_, "length", "load"), nodes.Getattr(loop_, "index0", "load"))
        if attr == "revindex0":
            return nodes.Sub(nodes.Getattr(loop_, "length", "load"), nodes.Getattr(loop_, "index", "load"))
        if loop.iter is None:
            return None
        index0 = nodes.Getattr(loop_, "index0", "load")
        if attr == "previtem":
            index, edge = nodes.Sub(index0, nodes.Const(1)), "first"
        else:
            index, edge = nodes.Add(index0, nodes.Const(1)), "last"
        return nodes.CondExpr(nodes.Not(nodes.Getattr(loop_, edge, "load")),
                              nodes.Getitem(loop.iter, index, "load"), nodes.Name(UNDEFINED, "load"))

    def _x_Getitem(self, node, boolean, receiver):
        arg = self.expr(node.arg)
        return self._postfix(self.expr(node.node, receiver=True),
                        lambda r: nodes.Getitem(r, arg, node.ctx))

    def _x_Slice(self, node, boolean, receiver):
        return nodes.Slice(*(None if p is None else self.expr(p) for p in (node.start, node.stop, node.step)))

    def _x_Call(self, node, boolean, receiver):
        args = [self.expr(a) for a in node.args]
        kwargs = [nodes.Keyword(k.key, self.expr(k.value)) for k in node.kwargs]
        dyn = [None if d is None else self.expr(d) for d in (node.dyn_args, node.dyn_kwargs)]
        callee = node.node
        if isinstance(callee, nodes.Name) and callee.name == "dict" and not args and not any(dyn) \
                and self.on("unknown-function"):
            self._mark("unknown-function")
            return nodes.Dict([nodes.Pair(nodes.Const(k.key), k.value) for k in kwargs])
        if not isinstance(callee, nodes.Getattr):
            return nodes.Call(self.expr(callee), args, kwargs, *dyn)
        method = callee.attr
        plain = not kwargs and not any(dyn)
        obj = self.expr(callee.node, receiver=True)
        if method == "get" and plain and 1 <= len(args) <= 2 and self.on("dict-method"):
            self._mark("dict-method")
            default = args[1] if len(args) == 2 else nodes.Const(None)
            return _branches(obj, lambda r: nodes.CondExpr(
                nodes.Compare(args[0], [nodes.Operand("in", r)]),
                nodes.Getitem(r, args[0], "load"), default))
        if method == "items" and plain and not args and not receiver and self.on("dict-method"):
            self._mark("dict-method")
            return nodes.Filter(obj, "items", [], [], None, None)
        if method in ("upper", "lower") and plain and not args and not receiver \
                and not isinstance(obj, nodes.Const) and self.on("string-method"):
            self._mark("string-method")
            return nodes.Filter(obj, method, [], [], None, None)

        def call(r):
            if isinstance(r, nodes.Const) and isinstance(r.value, str) and method in _FOLDABLE \
                    and plain and all(isinstance(a, nodes.Const) for a in args) \
                    and self.on("literal-method"):
                try:
                    value = getattr(r.value, method)(*(a.value for a in args))
                except (TypeError, ValueError):
                    value = None
                if isinstance(value, (str, bool)):
                    self._mark("literal-method")
                    return nodes.Const(value)
            return nodes.Call(nodes.Getattr(r, method, "load"), args, kwargs, *dyn)

        return self._postfix(obj, call)

    def _x_Filter(self, node, boolean, receiver):
        if node.node is None:
            return node
        obj = self.expr(node.node)
        args = [self.expr(a) for a in node.args]
        kwargs = [nodes.Keyword(k.key, self.expr(k.value)) for k in node.kwargs]
        name = node.name
        options = {k.key: k.value for k in kwargs}
        indent = options.get("indent")
        if name == "tojson" and not args and not node.dyn_args and not node.dyn_kwargs \
                and set(options) <= {"ensure_ascii", "indent"} and not _stringy(obj) \
                and _const(options.get("ensure_ascii", nodes.Const(False)), bool) is False \
                and (indent is None or isinstance(_const(indent, int), int)) and self.on("tojson-key-order"):
            # the runtime's tojson re-sorts keys; a macro over |items keeps insertion order
            self._mark("tojson-key-order")
            self.uses_tojson = True
            if indent is None:
                return nodes.Call(nodes.Name(TOJSON_MACRO, "load"), [obj], [], None, None)
            return nodes.Call(nodes.Name(TOJSON_INDENT_MACRO, "load"),
                              [obj, nodes.Const(" " * indent.value), nodes.Const("")], [], None, None)
        if name == "string" and not args and not kwargs and not _stringy(obj) and not _maybe_missing(obj) \
                and self.on("print-value"):
            # Python's str(): a string as it is, anything else as repr (the runtime sorts keys and
            # quotes with ")
            self._mark("print-value")
            self.uses_tojson = True
            return nodes.CondExpr(nodes.Test(obj, "string", [], [], None, None), obj,
                                  nodes.Call(nodes.Name(REPR_MACRO, "load"), [obj], [], None, None))
        if not self.on("filter") and name != "length":
            return nodes.Filter(obj, name, args, kwargs, node.dyn_args, node.dyn_kwargs)
        if name in ("default", "d") and not kwargs and len(args) <= 2:
            self._mark("filter")
            default = args[0] if args else nodes.Const("")
            truthy = len(args) == 2 and isinstance(args[1], nodes.Const) and args[1].value
            if truthy:
                return nodes.CondExpr(obj, obj, default)
            return nodes.CondExpr(_defined(obj), obj, default)
        hoisted = isinstance(obj, nodes.Getattr) and isinstance(obj.node, nodes.Name) \
            and obj.node.name.startswith("mtok_h")
        if hoisted and name == "list" and not args:
            return obj
        if hoisted and name in ("first", "last") and not args:
            self._mark("filter")
            return nodes.Getitem(obj, nodes.Const(0 if name == "first" else -1), "load")
        if self.hoists is not None and not kwargs and not node.dyn_args and not node.dyn_kwargs:
            ref = self._hoist(name, obj, args)
            if ref is not None:
                self._mark("filter")
                return ref
        if name == "safe" and not args:
            return obj  # the runtime has no Markup; `_x_Add` writes out what Markup + str escapes
        if name == "length" and not args and _maybe_missing(obj) and self.on("length-undefined"):
            self._mark("length-undefined")  # the runtime's undefined has length 1
            return nodes.CondExpr(_defined(obj), nodes.Filter(obj, "length", [], [], None, None), nodes.Const(0))
        if name in ("trim", "string") and not args and (
                _maybe_missing(obj) or (_const_key(obj) and obj.arg.value not in _PRESENT)):
            # jinja2 gives "" for an undefined value; the runtime passes undefined on
            self._mark("filter")
            return nodes.CondExpr(_defined(obj), nodes.Filter(obj, name, [], [], None, None), nodes.Const(""))
        if name == "replace" and len(args) == 2 and not kwargs and chainable(obj):
            self._mark("filter")
            return nodes.Call(nodes.Getattr(obj, "replace", "load"), args, [], None, None)
        return nodes.Filter(obj, name, args, kwargs, node.dyn_args, node.dyn_kwargs)

    def _hoist(self, name: str, seq: nodes.Node, args: list) -> nodes.Node | None:
        """`seq|join(sep)` and `seq|selectattr(...)` (and reject/select variants) have no
        expression in the runtime (no join in 3.6.1; selection filters pass everything): compute
        them in a loop inserted before the tag, into a namespace, and return its value."""
        if name == "join" and len(args) <= 1:
            ns, item = self._names()
            sep = emit(args[0]) if args else "''"
            self.hoists.append(
                f"{{% set {ns} = namespace(v='') %}}{{% for {item} in {header_text(seq)} %}}"
                f"{{% set {ns}.v = {ns}.v ~ ({sep} if not loop.first else '') ~ {item} %}}"
                "{% endfor %}")
            return nodes.Getattr(nodes.Name(ns, "load"), "v", "load")
        if name not in ("selectattr", "rejectattr", "select", "reject"):
            return None
        ns, item = self._names()
        subject = nodes.Name(item, "load")
        if name.endswith("attr"):
            if not args or not isinstance(args[0], nodes.Const) or not isinstance(args[0].value, str):
                return None
            for part in args[0].value.split("."):
                subject = nodes.Getattr(subject, part, "load")
            args = args[1:]
        cond = _selection_test(subject, args)
        if cond is None:
            self.fresh -= 1
            return None
        if name.startswith("reject"):
            cond = nodes.Not(cond)
        self.hoists.append(
            f"{{% set {ns} = namespace(v=[]) %}}{{% for {item} in {header_text(seq)} %}}"
            f"{{% if {header_text(cond)} %}}{{% set {ns}.v = {ns}.v + [{item}] %}}{{% endif %}}"
            "{% endfor %}")
        return nodes.Getattr(nodes.Name(ns, "load"), "v", "load")

    def _postfix(self, receiver: nodes.Node, build) -> nodes.Node:
        """``build(receiver)`` for a postfix (``.x``, ``[i]``, ``.m()``), which the runtime drops
        after a literal or ``( ... )``: moved into both branches of a condition, else (for a
        receiver that is not a name, attribute, item or call) applied to the receiver's value
        stored in a namespace by a ``set`` hoisted before the tag."""
        def apply(r: nodes.Node) -> nodes.Node:
            if chainable(r) or self.hoists is None or not self.on("literal-method") or (
                    isinstance(r, nodes.Const) and isinstance(r.value, str)):
                return build(r)  # string literals: folded by build where possible
            ns, _item = self._names()
            self.hoists.append(f"{{% set {ns} = namespace(v={emit(r)}) %}}")
            self._mark("literal-method")
            return build(nodes.Getattr(nodes.Name(ns, "load"), "v", "load"))

        return _branches(receiver, apply) if self.on("literal-method") else build(receiver)

    def _names(self) -> tuple[str, str]:
        self.fresh += 1
        return f"mtok_h{self.fresh}", f"mtok_i{self.fresh}"

    def _x_Test(self, node, boolean, receiver):
        obj = self.expr(node.node)
        args = [self.expr(a) for a in node.args]
        if node.name in ("defined", "undefined") and isinstance(obj, nodes.Getitem) \
                and not isinstance(obj.arg, (nodes.Slice, nodes.Const)) and self.on("subscript-defined"):
            # a computed key: `d[k] is defined` is `k in d` for a mapping (lists are not tested so)
            self._mark("subscript-defined")
            test = nodes.Compare(obj.arg, [nodes.Operand("in", obj.node)])
            return test if node.name == "defined" else nodes.Not(test)
        if node.name in ("defined", "undefined") and _const_key(obj) and self.on("subscript-defined"):
            self._mark("subscript-defined")
            test = _defined(obj)
            return test if node.name == "defined" else nodes.Not(test)
        if node.name in ("equalto", "eq") and len(args) == 1 and self.on("test"):
            self._mark("test")
            return nodes.Compare(obj, [nodes.Operand("eq", args[0])])
        test = nodes.Test(obj, node.name, args, node.kwargs, node.dyn_args, node.dyn_kwargs)
        if node.name == "mapping" and _maybe_missing(obj) and self.on("test"):
            # the runtime's undefined is a mapping (an object with one marker key)
            self._mark("test")
            return nodes.And(_defined(obj), test)
        return test

    def _x_Mul(self, node, boolean, receiver):
        """``'s' * n`` (string repetition; the runtime has no `*`) -> a loop over ``range(n)``."""
        left, right = self.expr(node.left), self.expr(node.right)
        if isinstance(right, nodes.Const) and isinstance(right.value, str):
            left, right = right, left
        if self.hoists is None or not self.on("arith-op") \
                or not (isinstance(left, nodes.Const) and isinstance(left.value, str)):
            return nodes.Mul(left, right)
        ns, _item = self._names()
        self.hoists.append(f"{{% set {ns} = namespace(v='') %}}{{% for {_item} in range({emit(right)}) %}}"
                           f"{{% set {ns}.v = {ns}.v ~ {emit(left)} %}}{{% endfor %}}")
        self._mark("arith-op")
        return nodes.Getattr(nodes.Name(ns, "load"), "v", "load")

    def _x_Add(self, node, boolean, receiver):
        """jinja2's ``'a'|safe + x`` is markupsafe's Markup + str: ``x`` is HTML-escaped (and so
        is every later ``+`` operand that is not ``|safe``); the runtime has no Markup, so the
        escaping is written out with ``.replace()``."""
        if not _markup(node.left) or not self.on("filter"):
            return nodes.Add(self.expr(node.left), self.expr(node.right))
        left = self.expr(node.left)
        right = node.right
        if _markup(right):
            return nodes.Add(left, self.expr(right))
        self._mark("filter")
        escaped = self.expr(right, receiver=True)
        for old, new in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"), ("'", "&#39;")):
            escaped = self._postfix(escaped, lambda r, o=old, n=new: nodes.Call(
                nodes.Getattr(r, "replace", "load"), [nodes.Const(o), nodes.Const(n)], [], None, None))
        return nodes.Add(left, escaped)

    def _x_CondExpr(self, node, boolean, receiver):
        test = self.expr(node.test, True)
        expr1 = self.expr(node.expr1, boolean)
        if node.expr2 is None and self.on("if-no-else"):
            self._mark("if-no-else")
            expr2 = nodes.Name(UNDEFINED, "load")
        else:
            expr2 = None if node.expr2 is None else self.expr(node.expr2, boolean)
        return nodes.CondExpr(test, expr1, expr2)

    def _x_Not(self, node, boolean, receiver):
        return nodes.Not(self.expr(node.node, True))

    def _x_Or(self, node, boolean, receiver):
        return self._boolop(node, boolean)

    def _x_And(self, node, boolean, receiver):
        return self._boolop(node, boolean)

    def _boolop(self, node: nodes.BinExpr, boolean: bool) -> nodes.Node:
        """Where only the truth value counts the runtime's true/false is right; else the operand
        jinja2 returns: ``a or b`` -> ``a if a else b``, ``a and b`` -> ``b if a else a``."""
        left, right = self.expr(node.left, boolean), self.expr(node.right, boolean)
        if boolean or not self.on("bool-value"):
            return type(node)(left, right)
        self._mark("bool-value")
        if isinstance(node, nodes.Or):
            return nodes.CondExpr(left, left, right)
        return nodes.CondExpr(left, right, left)


def _selection_test(subject: nodes.Node, args: list) -> nodes.Node | None:
    """The condition `select`/`selectattr` apply to ``subject`` with test ``args``."""
    if not args:
        return subject
    if not isinstance(args[0], nodes.Const) or not isinstance(args[0].value, str):
        return None
    test, rest = args[0].value, args[1:]
    ops = {"equalto": "eq", "eq": "eq", "==": "eq", "sameas": "eq", "ne": "ne", "!=": "ne",
           "in": "in"}
    if test in ops and len(rest) == 1:
        return nodes.Compare(subject, [nodes.Operand(ops[test], rest[0])])
    if test in ("defined", "undefined", "none", "string", "number", "mapping", "sequence",
                "iterable", "true", "false", "boolean") and not rest:
        return nodes.Test(subject, test, [], [], None, None)
    return None


def header_text(node: nodes.Node) -> str:
    """An expression in an ``if``/``for`` header, where jinja2 reads a bare ``a if c else b`` as
    the end of the expression."""
    text = emit(node)
    return f"({text})" if isinstance(node, nodes.CondExpr) else text


def _branches(node: nodes.Node, build) -> nodes.Node:
    if isinstance(node, nodes.CondExpr) and node.expr2 is not None:
        return nodes.CondExpr(node.test, _branches(node.expr1, build), _branches(node.expr2, build))
    return build(node)


def _defined(node: nodes.Node) -> nodes.Node:
    """A test that ``node`` is defined, in a form the runtime gets right (``x['k']`` of a missing
    key is defined there)."""
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) \
            and isinstance(node.arg.value, str):
        key = node.arg.value
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            return nodes.Test(nodes.Getattr(node.node, key, "load"), "defined", [], [], None, None)
        return nodes.Compare(nodes.Const(key), [nodes.Operand("in", node.node)])
    return nodes.Test(node, "defined", [], [], None, None)


def _const(node: nodes.Node, kind: type):
    """The value of a constant of type ``kind`` (else None; bool is not an int here)."""
    if isinstance(node, nodes.Const) and isinstance(node.value, kind) and \
            (kind is bool or not isinstance(node.value, bool)):
        return node.value
    return None


def _stringy(node: nodes.Node) -> bool:
    """Evidently a string (its tojson has no keys to reorder)."""
    return (isinstance(node, nodes.Const) and isinstance(node.value, str)) or isinstance(node, nodes.Concat)


def _markup(node: nodes.Node) -> bool:
    """Whether jinja2 evaluates ``node`` to a Markup string (``|safe``, or Markup + anything)."""
    if isinstance(node, nodes.Filter):
        return node.name == "safe"
    if isinstance(node, nodes.Add):
        return _markup(node.left)
    return False


# Attributes messages and tool schemas carry (or that the runtime sets): never undefined in practice.
_PRESENT = frozenset({"role", "content", "type", "function", "name", "arguments", "parameters",
                      "index", "index0", "first", "last", "length", "v"})


def _const_key(node: nodes.Node) -> bool:
    """``x['k']``: a subscript with a string key (missing: "" in the runtime, undefined in jinja2)."""
    return isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const) \
        and isinstance(node.arg.value, str)


def _maybe_missing(node: nodes.Node) -> bool:
    """Whether ``node`` is an attribute that may be missing (undefined in both engines)."""
    return isinstance(node, nodes.Getattr) and node.attr not in _PRESENT and not (
        isinstance(node.node, nodes.Name) and node.node.name == "loop")


def is_pure(node: nodes.Node) -> bool:
    """Whether evaluating ``node`` again gives the same value: names, attributes, subscripts."""
    if isinstance(node, (nodes.Name, nodes.Const)):
        return True
    if isinstance(node, (nodes.List, nodes.Tuple)):
        return all(is_pure(i) for i in node.items)
    if isinstance(node, nodes.Dict):
        return all(is_pure(p.key) and is_pure(p.value) for p in node.items)
    if isinstance(node, nodes.Getattr):
        return is_pure(node.node)
    if isinstance(node, nodes.Getitem):
        return is_pure(node.node) and (isinstance(node.arg, nodes.Slice) or is_pure(node.arg))
    return False
