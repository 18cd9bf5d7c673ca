"""Lower a chat template into one that MNN's Jinja engine renders like transformers (DESIGN 5.1).

MNN's engine (spec section 8) mis-renders many constructs real templates use.  Most have an
equivalent inside its subset; :func:`lower_template` rewrites each of those and leaves the rest
as findings (the linter's, :mod:`mtok_export.chat.lint`, with line:column).

How: the template is split into tags with jinja2's lexer; each tag whose expressions need a
rewrite is parsed on its own with jinja2's parser, rewritten as jinja2 nodes and printed back by
:mod:`mtok_export.chat.jinja_emit`.  Everything else (text between tags, the tag delimiters with
their ``-`` whitespace control, untouched tags) is kept byte for byte, and a rewritten tag keeps
its number of lines, so the lowered template has the original's line structure and the findings
of the two can be matched line by line.

Rewrites (each named by the lint rule it fixes; every one was checked on MNN 3.6.1, see
``tests/test_template_lowering.py``):

* ``python-literal``: ``True``/``False``/``None`` -> ``true``/``false``/``none``.
* ``bool-value``: ``a or b`` used for its value -> ``a if a else b``; ``a and b`` -> ``b if a else a``.
* ``dict-method``: ``x.get(k[, d])`` -> ``x[k] if k in x else d``; ``x.items()`` -> ``x|items``.
* ``loop-attr``: ``loop.previtem``/``nextitem`` -> index arithmetic over the loop's sequence,
  guarded by ``loop.first``/``loop.last``; ``loop.revindex[0]`` -> ``loop.length - ...``.
* ``comment-whitespace``: the indentation before and the newline after a ``{# #}`` that jinja2's
  lstrip_blocks/trim_blocks remove are moved inside the comment.
* ``macro-default``: defaults leave the signature; each use of the parameter in the body becomes
  ``p if p is defined else default`` (for the names the runtime predefines as strings, such as
  ``namespace``, also ``and p != '<function namespace>'``).
* ``set-block``: ``{% set x %}BODY{% endset %}`` -> the body's output appended to a namespace
  (its text as jinja2 renders it, after whitespace control), then ``{% set x = ns.v %}``.
* ``filter``: ``|default(d[, true])`` -> a condition; ``|replace(a, b)`` -> ``.replace(a, b)``;
  ``|trim``/``|string`` of a possibly missing attribute -> ``''`` when undefined;
  ``for k, v in x|dictsort`` -> ``for k in x`` (the runtime visits keys sorted) with ``v`` -> ``x[k]``;
  ``|join`` (not in 3.6.1) and ``|selectattr``/``rejectattr``/``select``/``reject`` (pass
  everything in the runtime) -> a loop inserted before the tag that builds the value in a namespace.
* ``literal-method``: a postfix after a condition is moved into both branches; string methods on
  string literals are evaluated now; a postfix after another literal or ``( ... )`` applies to the
  value stored in a namespace by a ``set`` inserted before the tag.
* ``subscript-defined``: ``x['k'] is defined`` -> ``x.k is defined`` (or ``'k' in x``).
* ``tuple-literal`` / ``runtime-hang``: tuples become lists; ``}}`` inside a ``{{ }}`` becomes ``} }``.
* ``string-method``: ``s.upper()``/``s.lower()`` -> ``s|upper``/``s|lower``.
* ``unknown-function``: ``dict(k=v)`` -> ``{'k': v}``.
* ``if-no-else``: ``a if c`` -> ``a if c else mtok_undefined`` (a name no one sets: undefined in
  both engines, as jinja2's missing else branch is).
* ``test``: ``x is equalto(y)`` / ``x is eq(y)`` -> ``x == y``; ``x.k is mapping`` -> ``x.k is
  defined and x.k is mapping`` (the runtime's undefined is a mapping).
* ``length-undefined``: ``x.k|length`` -> ``0`` when ``x.k`` is undefined (the runtime says 1).
* ``arith-op``: ``'s' * n`` (string repetition) -> a loop over ``range(n)`` inserted before the tag.
* ``filter`` (``|safe``): jinja2's ``'a'|safe + x`` HTML-escapes ``x`` (Markup + str); the escaping is
  written out with ``.replace()``.

Inserted code (loops, ``set``) goes right before the tag it serves and takes over that tag's
left whitespace control, so the rendered text around it does not change.  Names it introduces
start with ``mtok_``.

A template whose lowered form still holds a construct that hangs the runtime raises
:class:`TemplateHangError`: it must never be embedded.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import jinja2
from jinja2 import nodes
from jinja2.lexer import newline_re

from ..errors import MtokError
from .jinja_emit import UNEMITTABLE, emit, emit_target
from .lint import FUNCTIONS, Finding, _Source, lint_template, parse_environment

__all__ = ["LoweredTemplate", "TemplateHangError", "lower_template", "TARGETS", "UNDEFINED"]

TARGETS = ("mnn-3.6", "mnn-3.5", "mnn-head")  # one Jinja engine (jinja.hpp) in all three
UNDEFINED = "mtok_undefined"  # a variable no template sets: undefined in both engines
_LOOP_REWRITES = frozenset({"previtem", "nextitem", "revindex", "revindex0"})
# str methods that are pure functions of their receiver and arguments: folded on string literals
_FOLDABLE = frozenset({"strip", "lstrip", "rstrip", "replace", "upper", "lower", "startswith",
                       "endswith", "split", "title", "capitalize"})


class TemplateHangError(MtokError):
    """The template would hang MNN's Jinja engine even after lowering."""


@dataclass(frozen=True)
class LoweredTemplate:
    """A lowered template: ``text`` renders in the runtime like ``original`` in transformers,
    except for the constructs in ``remaining`` (lint findings, positions in the original where
    they come from it).  ``fixed`` names the rewrite rules applied, ``fixed_findings`` the
    original's findings that no longer apply."""

    text: str
    fixed: tuple[str, ...]
    remaining: tuple[Finding, ...]
    original: str = ""
    fixed_findings: tuple[Finding, ...] = ()
    rewrites: dict = field(default_factory=dict)  # rule -> number of rewrites


def lower_template(text: str, target: str = "mnn-3.6", *, disable=()) -> LoweredTemplate:
    """Rewrite ``text`` for ``target``'s Jinja engine.  Raises :class:`TemplateHangError` when a
    construct that hangs the engine has no rewrite.  ``disable``: rule ids not to apply (the
    parity script measures each rule's effect this way; the hang rewrites cannot be disabled)."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (known: {', '.join(TARGETS)})")
    source = "\n".join(newline_re.split(text)[::2])
    before = lint_template(source)
    try:
        ast = parse_environment().parse(source)
    except jinja2.TemplateSyntaxError:
        return LoweredTemplate(source, (), tuple(before), text)  # nothing to lower safely
    lowered, applied = _Lowerer(source, ast, frozenset(disable) - {"runtime-hang", "tuple-literal"}).run()
    after = lint_template(lowered)
    remaining, fixed_findings = _match(before, after)
    hang = [f for f in remaining if f.rule == "runtime-hang"]
    if hang:
        f = hang[0]
        raise TemplateHangError(f"chat template {f.line}:{f.col}: {f.message} (no rewrite exists; "
                                "the template must not be embedded)")
    return LoweredTemplate(lowered, tuple(sorted(applied)), tuple(remaining), text,
                           tuple(fixed_findings), dict(sorted(applied.items())))


def _match(before: list[Finding], after: list[Finding]) -> tuple[list[Finding], list[Finding]]:
    """Split the original's findings into (still present, fixed) by matching the lowered
    template's findings on (rule, line), which lowering preserves; findings only the lowered
    template has are kept as remaining too."""
    pool = Counter((f.rule, f.line) for f in after)
    remaining, fixed = [], []
    for f in before:
        if pool[(f.rule, f.line)]:
            pool[(f.rule, f.line)] -= 1
            remaining.append(f)
        else:
            fixed.append(f)
    for f in after:
        if pool[(f.rule, f.line)]:
            pool[(f.rule, f.line)] -= 1
            remaining.append(f)
    remaining.sort(key=lambda f: (f.line, f.col, f.rule, f.message))
    return remaining, fixed


# --- the rewriting of one template -----------------------------------------------------------


@dataclass
class _Loop:
    iter: nodes.Node | None  # the sequence, when loop.previtem can index it again
    items: dict = field(default_factory=dict)  # name -> node replacing it in the body (dictsort)


@dataclass
class _Macro:
    defaults: dict  # parameter -> default value node, for the parameters rewritten in the body


class _Lowerer:
    def __init__(self, source: str, ast: nodes.Template, disabled: frozenset = frozenset()) -> None:
        self.source = source
        self.disabled = disabled  # rules not to apply (to measure what each one fixes)
        self.src = _Source(source)
        self.env = parse_environment()
        self.applied: Counter = Counter()
        self.loops: list[_Loop] = []
        self.macros: list[_Macro] = []
        self.blocks: list[str] = []  # open block tags: for/macro/other
        self.hoists: list[str] | None = None  # loops to insert before the current tag
        self.prefix = ""
        self.in_set_block = False
        self.fresh = 0
        # parameters a macro body assigns to keep their defaults (the rewrite would be wrong)
        self.macro_assigned = {
            (m.name, m.lineno): {n.name for n in m.find_all(nodes.Name) if n.ctx == "store"}
            for m in ast.find_all(nodes.Macro)}

    def run(self) -> tuple[str, Counter]:
        edits: list[tuple[int, int, str]] = []
        tags = list(self._tags())
        gaps = _effective_gaps(self.env, self.source)
        if len(gaps) != len(tags) + 1:
            gaps = None  # lexers disagree: no set-block rewrite
        i = 0
        while i < len(tags):
            tag = tags[i]
            if tag.kind == "block" and tag.keyword == "set" and not tag.assigns and gaps \
                    and self.on("set-block"):
                end = self._endset(tags, i)
                edit = self._set_block(tags, gaps, i, end) if end is not None else None
                if edit is not None:
                    edits.append(edit)
                    i = end + 1
                    continue
            if tag.kind in ("block", "variable"):
                new = self._tag(tag)
                if new is not None:
                    edits.append((tag.start, tag.end, new))
                    if self.prefix:
                        edits.append((tag.begin.pos, tag.begin.pos, self.prefix))
            i += 1
        if self.on("comment-whitespace"):
            edits += self._comment_edits()
        out = self.source
        for start, end, new in sorted(edits, reverse=True):
            out = out[:start] + new + out[end:]
        return out, self.applied

    # tags

    def _tags(self):
        """Every tag in source order (comments and raw blocks too, for the set-block rewrite)."""
        toks = self.src.toks
        ends = {"variable_begin": "variable_end", "block_begin": "block_end",
                "comment_begin": "comment_end", "raw_begin": "raw_end"}
        i = 0
        while i < len(toks):
            tok = toks[i]
            if tok.type in ends:
                j = i + 1
                while j < len(toks) and toks[j].type != ends[tok.type]:
                    j += 1
                if j >= len(toks):
                    return
                yield _Tag(tok.type[:-len("_begin")], tok.pos + len(tok.value), toks[j].pos,
                           toks[i + 1:j], self.source, tok, toks[j])
                i = j
            i += 1

    def _endset(self, tags: list, i: int) -> int | None:
        """Index of the `endset` closing the block set at ``i`` (None if another block set or a
        raw block comes first: not rewritten)."""
        for j in range(i + 1, len(tags)):
            t = tags[j]
            if t.kind == "raw" or (t.kind == "block" and t.keyword == "set" and not t.assigns):
                return None
            if t.kind == "block" and t.keyword == "endset":
                return j
        return None

    def _set_block(self, tags: list, gaps: list[str], i: int, j: int) -> tuple[int, int, str] | None:
        """``{% set x %}BODY{% endset %}`` -> the body's output appended to a namespace, then
        ``{% set x = ns.v %}``.  The body's text is taken as jinja2 renders it (after trim_blocks,
        lstrip_blocks and ``-``), so whitespace control around the new tags cannot change it."""
        head = tags[i]
        try:
            node = self._parse(f"{{% set{head.after_keyword} %}}{{% endset %}}").body[0]
        except jinja2.TemplateSyntaxError:
            return None
        if not isinstance(node.target, nodes.Name) or node.filter is not None:
            return None
        name = node.target.name
        ns = f"mtok_set_{name}"
        add = f"{{%- set {ns}.v = {ns}.v ~ "
        pieces = [f"{head.begin.value} set {ns} = namespace(v='') -%}}"]
        newlines = head.inner.count("\n")

        def put(text: str) -> None:
            nonlocal newlines
            pieces.append(text.replace("-%}", "\n" * newlines + "-%}", 1) if newlines else text)
            newlines = 0

        for k in range(i + 1, j + 1):
            tag = tags[k]
            raw_gap = self.source[tags[k - 1].end_pos:tag.begin.pos]
            newlines += raw_gap.count("\n")
            if gaps[k]:
                put(f"{add}{_string_const(gaps[k])} -%}}")
            if k == j:
                break
            inner = tag.inner
            newlines += inner.count("\n")
            if tag.kind == "comment":
                continue
            self.in_set_block = True
            try:
                new = self._tag(tag)
            finally:
                self.in_set_block = False
            text = (new if new is not None else inner).strip()
            if tag.kind == "variable":
                put(f"{add}({text}) -%}}")
            else:
                put(f"{{%- {text} -%}}")
        end = tags[j]
        newlines += end.inner.count("\n")
        put(f"{{%- set {name} = {ns}.v -%}}")
        pieces[-1] = pieces[-1][:-3] + end.end_tok.value[:end.end_tok.value.index("}") + 1]
        self._mark("set-block")
        return head.begin.pos, end.end_pos, "".join(pieces)

    def _tag(self, tag: "_Tag") -> str | None:
        """The new inner text of ``tag``, or None to keep it.  ``self.prefix`` is then the code
        to insert before the tag (hoisted loops, see ``_hoist``)."""
        self.rewrote = False
        self.prefix = ""
        kw = "" if tag.variable else tag.keyword
        self.hoists = [] if (kw in ("", "if", "for") or (kw == "set" and tag.assigns)) \
            and not self.in_set_block else None
        self.force = self.on("python-literal") and any(
            t.type == "name" and t.value in ("True", "False", "None") for t in tag.toks)
        if self.force:
            self.applied["python-literal"] += 1
        if tag.variable:
            if any(t in self.src.hang_braces for t in tag.toks):
                self.force = True
                self.applied["runtime-hang"] += 1
            return self._wrap_up(tag, lambda: " " + emit(self.expr(self._parse_expr(tag.inner))) + " ")
        kw = tag.keyword
        rest = tag.after_keyword
        if kw in ("if", "elif"):
            return self._wrap_up(tag, lambda: f" {kw} {_header(self.expr(self._parse_if(rest), True))} ")
        if kw == "for":
            return self._for(tag, rest)
        if kw == "endfor":
            self._pop("for")
        elif kw == "macro":
            return self._macro(tag, rest)
        elif kw == "endmacro":
            self._pop("macro")
        elif kw == "set" and tag.assigns:
            def set_text():
                node = self._parse(f"{{% set{rest} %}}").body[0]
                return f" set {emit_target(node.target)} = {emit(self.expr(node.node))} "
            return self._wrap_up(tag, set_text)
        elif kw in ("call", "filter", "with", "autoescape", "block") or (kw == "set"):
            self.blocks.append(kw)
        elif kw.startswith("end") and self.blocks and self.blocks[-1] == kw[3:]:
            self.blocks.pop()
        return None

    def _wrap_up(self, tag: "_Tag", build) -> str | None:
        try:
            new = build()
        except (jinja2.TemplateSyntaxError, UNEMITTABLE, _Skip):
            return None
        if not (self.rewrote or self.force):
            return None
        if self.hoists:
            # The hoisted tags go right before the tag and take over its left whitespace control;
            # before a `{{` without `-` an empty `{{ '' }}` keeps lstrip_blocks off the line.
            marker = tag.begin.value
            lead = "{{ '' }}" if marker.startswith("{{") and not marker.endswith("-") else ""
            code = "".join(self.hoists)
            self.prefix = lead + ("{%-" if marker.endswith("-") else "{%") + code[2:]
        # keep the line count: the lowered template's findings are matched line by line
        return new + "\n" * tag.inner.count("\n")

    def _pop(self, kind: str) -> None:
        if kind in self.blocks:
            while self.blocks:
                top = self.blocks.pop()
                if top == "for":
                    self.loops.pop()
                elif top == "macro":
                    self.macros.pop()
                if top == kind:
                    break

    def _for(self, tag: "_Tag", rest: str) -> str | None:
        try:
            node = self._parse(f"{{% for{rest} %}}{{% endfor %}}").body[0]
        except jinja2.TemplateSyntaxError:
            self.blocks.append("for")
            self.loops.append(_Loop(None))
            return None

        def build():
            self.rewrote = False
            it = node.iter
            loop = _Loop(None)
            if isinstance(it, nodes.Filter) and it.name == "dictsort" and not it.args and self.on("filter") \
                    and not it.kwargs and isinstance(node.target, nodes.Tuple) \
                    and len(node.target.items) == 2 and _pure(it.node):
                key, value = node.target.items
                base = self.expr(it.node)
                self.applied["filter"] += 1
                self.rewrote = True
                loop.items[value.name] = nodes.Getitem(base, nodes.Name(key.name, "load"), "load")
                target, it_text = key.name, _header(base)
            else:
                base = self.expr(it)
                target, it_text = emit_target(node.target), _header(base)
                if node.test is None and not node.recursive and _pure(node.iter) and not (
                        _names(node.iter) & _names(node.target)):
                    loop.iter = base
            test = f" if {_header(self.expr(node.test, True))}" if node.test is not None else ""
            rec = " recursive" if node.recursive else ""
            self._pending_loop = loop
            return f" for {target} in {it_text}{test}{rec} "

        self._pending_loop = _Loop(None)
        new = self._wrap_up(tag, build)
        self.blocks.append("for")
        self.loops.append(self._pending_loop)
        return new

    def _macro(self, tag: "_Tag", rest: str) -> str | None:
        try:
            node = self._parse(f"{{% macro{rest} %}}{{% endmacro %}}").body[0]
        except jinja2.TemplateSyntaxError:
            self.blocks.append("macro")
            self.macros.append(_Macro({}))
            return None
        assigned = self.macro_assigned.get((node.name, tag.line), set())
        first_default = len(node.args) - len(node.defaults)
        defaults = {}
        for i, arg in enumerate(node.args):
            if i >= first_default and arg.name not in assigned:
                defaults[arg.name] = node.defaults[i - first_default]
        self.blocks.append("macro")
        self.macros.append(_Macro({}))
        if not defaults or not self.on("macro-default"):
            return None

        def build():
            rewritten = {k: self.expr(v) for k, v in defaults.items()}
            params = []
            for i, arg in enumerate(node.args):
                if arg.name in defaults or i < first_default:
                    params.append(arg.name)
                else:
                    params.append(f"{arg.name}={emit(node.defaults[i - first_default])}")
            self.rewrote = True
            self.applied["macro-default"] += len(defaults)
            self.macros[-1] = _Macro(rewritten)
            return f" macro {node.name}({', '.join(params)}) "

        return self._wrap_up(tag, build)

    # parsing pieces of a tag

    def _parse(self, snippet: str) -> nodes.Template:
        return self.env.parse(snippet)

    def _parse_expr(self, inner: str) -> nodes.Node:
        body = self._parse("{{" + inner + "}}").body
        if len(body) != 1 or not isinstance(body[0], nodes.Output) or len(body[0].nodes) != 1:
            raise _Skip()
        return body[0].nodes[0]

    def _parse_if(self, rest: str) -> nodes.Node:
        return self._parse(f"{{% if{rest} %}}{{% endif %}}").body[0].test

    # comments

    def _comment_edits(self) -> list[tuple[int, int, str]]:
        """Move the whitespace jinja2 strips around a comment (lstrip_blocks before it,
        trim_blocks after it) inside the comment, where both engines drop it."""
        edits = []
        toks, text = self.src.toks, self.source
        for i, tok in enumerate(toks):
            if tok.type != "comment_begin":
                continue
            end = next((t for t in toks[i:] if t.type == "comment_end"), None)
            if end is None:
                continue
            if not tok.value.endswith(("-", "+")):
                line_start = text.rfind("\n", 0, tok.pos) + 1
                before = text[line_start:tok.pos]
                prev = self.src._prev_tag_end(i)
                trimmed = prev is not None and prev.value.startswith("-") and \
                    not text[self.src._marker_end(prev):tok.pos].strip()
                if before and not before.strip(" \t") and not trimmed:
                    edits.append((line_start, tok.pos + 2, "{#" + before))
                    self.applied["comment-whitespace"] += 1
            if not end.value.startswith("-"):
                after = end.pos + 2
                if text.startswith("\n", after):
                    nxt = self.src._next_tag_begin(end.index)
                    trimmed = nxt is not None and nxt.value.endswith("-") and \
                        not text[after:nxt.pos].strip()
                    if not trimmed:
                        edits.append((end.pos, after + 1, "\n#}"))
                        self.applied["comment-whitespace"] += 1
        return edits

    # expressions

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

    def _loop_attr(self, attr: str, loop: _Loop) -> nodes.Node | None:
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
        if name in ("trim", "string") and not args and (_maybe_missing(obj) or _const_key(obj)):
            # jinja2 gives "" for an undefined value; the runtime passes undefined on
            self._mark("filter")
            return nodes.CondExpr(_defined(obj), nodes.Filter(obj, name, [], [], None, None), nodes.Const(""))
        if name == "replace" and len(args) == 2 and not kwargs and _chainable(obj):
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
                f"{{% set {ns} = namespace(v='') %}}{{% for {item} in {_header(seq)} %}}"
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
            f"{{% set {ns} = namespace(v=[]) %}}{{% for {item} in {_header(seq)} %}}"
            f"{{% if {_header(cond)} %}}{{% set {ns}.v = {ns}.v + [{item}] %}}{{% endif %}}"
            "{% endfor %}")
        return nodes.Getattr(nodes.Name(ns, "load"), "v", "load")

    def _postfix(self, receiver: nodes.Node, build) -> nodes.Node:
        """``build(receiver)`` for a postfix (``.x``, ``[i]``, ``.m()``), which the runtime drops
        after a literal or ``( ... )``: moved into both branches of a condition, else (for a
        receiver that is not a name, attribute, item or call) applied to the receiver's value
        stored in a namespace by a ``set`` hoisted before the tag."""
        def apply(r: nodes.Node) -> nodes.Node:
            if _chainable(r) or self.hoists is None or not self.on("literal-method") or (
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


class _Skip(Exception):
    """The tag is not one this pass rewrites."""


@dataclass
class _Tag:
    kind: str  # "variable", "block", "comment", "raw"
    start: int  # offset of the text between the delimiters
    end: int
    toks: list
    source: str
    begin: object = None  # the opening and closing delimiter tokens
    end_tok: object = None

    @property
    def variable(self) -> bool:
        return self.kind == "variable"

    @property
    def end_pos(self) -> int:
        """Offset just after the closing delimiter (its token may hold trimmed whitespace)."""
        value = self.end_tok.value
        for marker in ("%}", "}}", "#}"):
            k = value.find(marker)
            if k >= 0:
                return self.end_tok.pos + k + 2
        return self.end_tok.pos + len(value)

    @property
    def inner(self) -> str:
        return self.source[self.start:self.end]

    @property
    def line(self) -> int:
        return self.toks[0].line if self.toks else 0

    @property
    def keyword(self) -> str:
        first = next((t for t in self.toks if t.type != "whitespace"), None)
        return first.value if first is not None and first.type == "name" else ""

    @property
    def assigns(self) -> bool:
        return any(t.type == "operator" and t.value == "=" for t in self.toks)

    @property
    def after_keyword(self) -> str:
        first = next((t for t in self.toks if t.type != "whitespace"), None)
        return self.source[first.pos + len(first.value):self.end] if first is not None else ""


def _effective_gaps(env: jinja2.Environment, source: str) -> list[str]:
    """The text before each tag and after the last one as jinja2 renders it: its lexer applies
    trim_blocks, lstrip_blocks and ``-`` to the data tokens."""
    gaps, data, inside = [], "", False
    for _line, typ, value in env.lexer.tokeniter(source, None):
        if typ in ("block_begin", "variable_begin", "comment_begin", "raw_begin"):
            gaps.append(data)
            data, inside = "", True
        elif typ in ("block_end", "variable_end", "comment_end", "raw_end"):
            inside = False
        elif typ == "data" and not inside:
            data += value
    gaps.append(data)
    return gaps


def _string_const(text: str) -> str:
    return emit(nodes.Const(text))


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


def _header(node: nodes.Node) -> str:
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


def _chainable(node: nodes.Node) -> bool:
    return isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem, nodes.Call))


def _pure(node: nodes.Node) -> bool:
    """Whether evaluating ``node`` again gives the same value: names, attributes, subscripts."""
    if isinstance(node, (nodes.Name, nodes.Const)):
        return True
    if isinstance(node, (nodes.List, nodes.Tuple)):
        return all(_pure(i) for i in node.items)
    if isinstance(node, nodes.Dict):
        return all(_pure(p.key) and _pure(p.value) for p in node.items)
    if isinstance(node, nodes.Getattr):
        return _pure(node.node)
    if isinstance(node, nodes.Getitem):
        return _pure(node.node) and (isinstance(node.arg, nodes.Slice) or _pure(node.arg))
    return False


def _names(node: nodes.Node) -> set[str]:
    return {n.name for n in node.find_all(nodes.Name)} | (
        {node.name} if isinstance(node, nodes.Name) else set())
