"""Lower a chat template into one that MNN's Jinja engine renders like transformers (DESIGN 5.1).

MNN's engine (spec section 8) mis-renders many constructs real templates use.  Most have an
equivalent inside its subset; :func:`lower_template` rewrites each of those and leaves the rest
as findings (the linter's, :mod:`mtok_export.chat.lint`, with line:column).

How: the template is split into tags with jinja2's lexer; each tag whose expressions need a
rewrite is parsed on its own with jinja2's parser, rewritten as jinja2 nodes
(:mod:`mtok_export.chat.rewrite`) and printed back by :mod:`mtok_export.chat.jinja_emit`.  Everything else (text between tags, the tag delimiters with
their ``-`` whitespace control, untouched tags) is kept byte for byte, and a rewritten tag keeps
its number of lines, so the lowered template has the original's line structure and the findings
of the two can be matched line by line.

Rewrites (each named by the lint rule it fixes; every one was checked on MNN 3.6.1, see
``tests/chat/test_lowering.py``):

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
* ``tojson-key-order``: ``x|tojson`` (also ``ensure_ascii=False``, ``indent=N``) -> a macro that
  writes JSON in insertion order over ``|items`` (the runtime's ``tojson`` sorts keys), defined on
  the template's first line.
* ``print-value``: ``x|string`` of a non-string -> a macro that writes Python's ``repr`` (the
  runtime writes JSON-like text with sorted keys).
* ``test``: ``x is equalto(y)`` / ``x is eq(y)`` -> ``x == y``; ``x.k is mapping`` -> ``x.k is
  defined and x.k is mapping`` (the runtime's undefined is a mapping).
* ``length-undefined``: ``x.k|length`` -> ``0`` when ``x.k`` is undefined (the runtime says 1).
* ``arith-op``: ``'s' * n`` (string repetition) -> a loop over ``range(n)`` inserted before the tag.
* ``trailing-newline``: the template's final newline (after text or ``}}``), which jinja2 drops and
  the runtime prints, is dropped.
* ``filter`` (``|safe``): jinja2's ``'a'|safe + x`` HTML-escapes ``x`` (Markup + str); the escaping is
  written out with ``.replace()``.

Inserted code (loops, ``set``) goes right before the tag it serves and takes over that tag's
left whitespace control, so the rendered text around it does not change.  Names it introduces
start with ``mtok_``.

A template whose lowered form still holds a construct that hangs the runtime raises
:class:`TemplateHangError`: it must never be embedded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import jinja2
from jinja2 import nodes

from ..errors import MtokError
from ..target_type import Target
from .environment import normalize_newlines, parse_environment
from .jinja_emit import UNEMITTABLE, emit, emit_target
from .lint import Finding, lint_template
from .rules import trailing_newline
from .rewrite import TOJSON_DEFINITION, UNDEFINED, ExprRewriter, Loop, Macro, header_text, is_pure
from .source_map import SourceMap, marker_end

__all__ = ["LoweredTemplate", "TemplateHangError", "lower_template", "used_beyond_print", "UNDEFINED"]


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


def lower_template(text: str, target: Target, *, disable=()) -> LoweredTemplate:
    """Rewrite ``text`` for ``target``'s Jinja engine (``Target.jinja``: the rewrites are MNN's
    jinja.hpp subset, which every ``.mtok`` runtime has; the findings are its release's lint rules).  Raises :class:`TemplateHangError` when a
    construct that hangs the engine has no rewrite.  ``disable``: rule ids not to apply (the
    parity script measures each rule's effect this way; the hang rewrites cannot be disabled)."""
    if not target.jinja:
        raise ValueError(f"{target.name} has no Jinja engine: its files carry no chat template")
    source = normalize_newlines(text)
    before = lint_template(source, target.jinja)
    try:
        ast = parse_environment().parse(source)
    except jinja2.TemplateSyntaxError:
        return LoweredTemplate(source, (), tuple(before), text)  # nothing to lower safely
    lowered, applied = _Lowerer(source, ast, frozenset(disable) - {"runtime-hang", "tuple-literal"}).run()
    after = lint_template(lowered, target.jinja)
    if "trailing-newline" in applied:  # the lowered text is the runtime's: its last newline is meant
        after = [f for f in after if f.rule != "trailing-newline"]
    remaining, fixed_findings = _match(before, after)
    hang = [f for f in remaining if f.rule == "runtime-hang"]
    if hang:
        f = hang[0]
        raise TemplateHangError(f"chat template {f.line}:{f.col}: {f.message} (no rewrite exists; "
                                "the template must not be embedded)")
    return LoweredTemplate(lowered, tuple(sorted(applied)), tuple(remaining), text,
                           tuple(fixed_findings), dict(sorted(applied.items())))


def used_beyond_print(text: str, names) -> list[str]:
    """Those of the context variables ``names`` that ``text`` uses other than printed alone
    (``{{ bos_token }}``): in ``+``/``~``, filters, tests, comparisons, conditions, calls.  The runtime
    prints an undefined value as nothing, as it prints ``''``, but everywhere else the two differ
    (``undefined + 'x'`` is a list, ``undefined|length`` is 1, ``is defined`` is false)."""
    try:
        ast = parse_environment().parse(normalize_newlines(text))
    except jinja2.TemplateSyntaxError:
        return []
    bare = {id(n) for out in ast.find_all(nodes.Output) for n in out.nodes if isinstance(n, nodes.Name)}
    return sorted({n.name for n in ast.find_all(nodes.Name)
                   if n.name in names and n.ctx == "load" and id(n) not in bare})


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


class _Lowerer(ExprRewriter):
    """Walks the tags in order, keeps the loop/macro context the expression rewriter needs, and
    collects the text edits."""

    def __init__(self, source: str, ast: nodes.Template, disabled: frozenset = frozenset()) -> None:
        super().__init__(disabled)
        self.source = source
        self.src = SourceMap(source)
        self.env = parse_environment()
        self.blocks: list[str] = []  # open block tags: for/macro/other
        self.prefix = ""  # code to insert before the current tag (from `hoists`)
        self.in_set_block = False
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
            # a comment inside a rewritten block set is gone already (the region is replaced)
            regions = [(a, b) for a, b, _new in edits if b > a]
            edits += [e for e in self._comment_edits()
                      if not any(a <= e[0] < b for a, b in regions)]
        out = self.source
        for start, end, new in sorted(edits, reverse=True):
            out = out[:start] + new + out[end:]
        if self.on("trailing-newline") and any(trailing_newline(self.src)):
            # jinja2 drops one final newline of the source, the runtime keeps it: without it both
            # render the same text (the lint rule's own test says when the newline is printed)
            out = out[:-1]
            self._mark("trailing-newline")
        if self.uses_tojson:  # on the first line: the line structure stays
            out = TOJSON_DEFINITION + out
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
            return self._wrap_up(tag, lambda: f" {kw} {header_text(self.expr(self._parse_if(rest), True))} ")
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
            self.loops.append(Loop(None))
            return None

        def build():
            self.rewrote = False
            it = node.iter
            loop = Loop(None)
            if isinstance(it, nodes.Filter) and it.name == "dictsort" and not it.args and self.on("filter") \
                    and not it.kwargs and isinstance(node.target, nodes.Tuple) \
                    and len(node.target.items) == 2 and is_pure(it.node):
                key, value = node.target.items
                base = self.expr(it.node)
                self.applied["filter"] += 1
                self.rewrote = True
                loop.items[value.name] = nodes.Getitem(base, nodes.Name(key.name, "load"), "load")
                target, it_text = key.name, header_text(base)
            else:
                base = self.expr(it)
                target, it_text = emit_target(node.target), header_text(base)
                if node.test is None and not node.recursive and is_pure(node.iter) and not (
                        _names_in(node.iter) & _names_in(node.target)):
                    loop.iter = base
            test = f" if {header_text(self.expr(node.test, True))}" if node.test is not None else ""
            rec = " recursive" if node.recursive else ""
            self._pending_loop = loop
            return f" for {target} in {it_text}{test}{rec} "

        self._pending_loop = Loop(None)
        new = self._wrap_up(tag, build)
        self.blocks.append("for")
        self.loops.append(self._pending_loop)
        return new

    def _macro(self, tag: "_Tag", rest: str) -> str | None:
        try:
            node = self._parse(f"{{% macro{rest} %}}{{% endmacro %}}").body[0]
        except jinja2.TemplateSyntaxError:
            self.blocks.append("macro")
            self.macros.append(Macro({}))
            return None
        assigned = self.macro_assigned.get((node.name, tag.line), set())
        first_default = len(node.args) - len(node.defaults)
        defaults = {}
        for i, arg in enumerate(node.args):
            if i >= first_default and arg.name not in assigned:
                defaults[arg.name] = node.defaults[i - first_default]
        self.blocks.append("macro")
        self.macros.append(Macro({}))
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
            self.macros[-1] = Macro(rewritten)
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
        for i, tok in enumerate(self.src.toks):
            if tok.type != "comment_begin":
                continue
            kept = self.src.kept_whitespace(i)
            if kept.end is None:
                continue
            if kept.indent:
                edits.append((tok.pos - len(kept.indent), tok.pos + 2, "{#" + kept.indent))
                self.applied["comment-whitespace"] += 1
            if kept.newline is not None:
                edits.append((kept.end.pos, kept.newline + 1, "\n#}"))
                self.applied["comment-whitespace"] += 1
        return edits

    # expressions


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
        return marker_end(self.end_tok)

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


def _names_in(node: nodes.Node) -> set[str]:
    return {n.name for n in node.find_all(nodes.Name)} | (
        {node.name} if isinstance(node, nodes.Name) else set())
