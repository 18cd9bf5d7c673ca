"""Lint a chat template for MNN's Jinja subset (spec section 8).

MNN renders chat templates with its own small Jinja engine (``jinja.hpp``). It never reports an
error: constructs outside its subset are skipped, cut short, or evaluated differently, and a few
make its parser loop forever. This module parses a template with jinja2 (the engine transformers
uses) and reports every construct whose rendering differs in the runtime, with its position and
what the runtime does instead.

Every rule was reproduced against the released runtime (MNN 3.6.1): ``tests/test_template_lint.py``
renders a minimal template per rule with jinja2 (configured like transformers) and with the runtime,
and asserts that the outputs differ. :data:`RULES` lists each rule with what the runtime does.

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
* A construct that would make the runtime hang is reported once, as ``runtime-hang``, instead of
  the rule that describes it outside a list/dict literal.

Positions: jinja2 nodes carry only a line number, so the column is found by matching each node to
the token that introduces it (its operator, keyword, name or literal), in source order. The result
is deterministic; in rare multi-line constructs the column may point at a neighbouring token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, NamedTuple

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.lexer import newline_re

__all__ = ["Finding", "Rule", "RULES", "GenerationTag", "lint_template", "parse_environment"]


@dataclass(frozen=True)
class Finding:
    """One construct the runtime renders differently. ``line`` and ``col`` are 1-based."""

    line: int
    col: int
    rule: str
    message: str


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

# --- the runtime's subset (spec 8.4-8.7) --------------------------------------------------------

SUPPORTED_FILTERS = frozenset(
    {"tojson", "string", "capitalize", "lower", "upper", "trim", "length", "items", "map"})
# Filters the runtime lacks but whose jinja2 result prints the same as the pass-through.
_HARMLESS_FILTERS = frozenset({"safe"})
SUPPORTED_TESTS = frozenset({"defined", "undefined", "none", "boolean", "string", "number",
                             "sequence", "iterable", "mapping", "true", "false"})
SUPPORTED_METHODS = frozenset({"startswith", "endswith", "split", "lstrip", "rstrip", "strip",
                               "replace"})
DICT_METHODS = frozenset({"items", "keys", "values", "get", "update", "pop", "popitem",
                          "setdefault", "copy", "clear", "fromkeys"})
STRING_METHODS = frozenset({
    "upper", "lower", "title", "capitalize", "casefold", "swapcase", "format", "format_map", "join",
    "count", "find", "rfind", "index", "rindex", "splitlines", "rsplit", "partition", "rpartition",
    "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isnumeric",
    "isdecimal", "isidentifier", "isprintable", "isascii", "zfill", "center", "ljust", "rjust",
    "expandtabs", "encode", "removeprefix", "removesuffix", "translate"})
LOOP_ATTRS = frozenset({"index", "index0", "first", "last", "length"})
FUNCTIONS = frozenset({"range", "namespace", "strftime_now"})
# Context variables the runtime always sets (spec 8.7); bos_token only when non-empty.
_ALWAYS_DEFINED = frozenset({"messages", "eos_token"})
_ESCAPES = frozenset("nrt\\\"'bf")
_RUNTIME_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}
_ARITH = {nodes.Mul: "*", nodes.Div: "/", nodes.FloorDiv: "//", nodes.Mod: "%", nodes.Pow: "**"}
# Results of these filters are lists in both engines.
_LIST_FILTERS = frozenset({"list", "map", "select", "selectattr", "reject", "rejectattr", "sort",
                           "unique", "batch", "slice", "reverse", "items", "dictsort"})
_LIST_NAMES = frozenset({"messages", "tools", "documents"})
_LIST_ATTRS = frozenset({"tool_calls", "messages"})
_DICT_ATTRS = frozenset({"properties"})  # JSON-schema `properties` is a mapping
# Attributes that chat messages and tool schemas practically always carry: `|length` of them is
# not reported, nor `|tojson` of the string-valued ones.
_PRESENT_ATTRS = frozenset({"role", "content", "type", "text", "function", "name", "arguments",
                            "parameters", "description"})
_STRING_ATTRS = frozenset({"content", "text", "role", "name", "id", "description", "type",
                           "reasoning_content", "thinking"})
_BLOCK_TAGS = frozenset({"for", "if", "macro", "call", "filter", "with", "block", "autoescape",
                         "generation", "trans"})
_NO_IDENT_TAGS = frozenset({"include", "import", "from", "extends", "block", "endblock",
                            "endmacro"})
_EXPR_KEYWORDS = frozenset({"not", "in", "is", "else", "recursive", "elif", "endif"})
_CONST_NAMES = frozenset({"true", "false", "none", "True", "False", "None"})


class GenerationTag(Extension):
    """transformers' ``{% generation %}...{% endgeneration %}`` tag, rendered as its body.

    transformers uses the tag to record which output characters the assistant produced; the
    rendered text is the body. The runtime skips unknown tags and renders their body, so the
    tag itself renders the same in both engines.
    """

    tags = {"generation"}

    def parse(self, parser: jinja2.parser.Parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def parse_environment() -> jinja2.Environment:
    """The environment used to parse templates: transformers' options and tags."""
    return jinja2.Environment(trim_blocks=True, lstrip_blocks=True,
                              extensions=["jinja2.ext.loopcontrols", GenerationTag])


# Lexing for positions uses no whitespace control, so data tokens keep their text.
_LEX_ENV = jinja2.Environment(extensions=["jinja2.ext.loopcontrols", GenerationTag])


def lint_template(text: str) -> list[Finding]:
    """Return the findings for ``text``, sorted by (line, col, rule)."""
    source = "\n".join(newline_re.split(text)[::2])
    try:
        ast = parse_environment().parse(source)
    except jinja2.TemplateSyntaxError as exc:
        return [Finding(exc.lineno or 1, 1, "syntax", f"jinja2 cannot parse the template: "
                        f"{exc.message}; transformers cannot render it either")]
    except RecursionError:  # readers refuse such templates (chat/nesting.py); this covers direct callers
        return [Finding(1, 1, "syntax", "jinja2 cannot parse the template: nested too deeply; "
                        "transformers cannot render it either")]
    src = _Source(source)
    walker = _Walker(src, ast)
    walker.run()
    findings = walker.findings() + src.findings()
    unique = {(f.line, f.col, f.rule, f.message): f for f in findings}
    return sorted(unique.values(), key=lambda f: (f.line, f.col, f.rule, f.message))


# --- tokens and positions -----------------------------------------------------------------------


@dataclass
class _Tok:
    index: int
    pos: int
    line: int
    col: int
    type: str
    value: str
    tag: int = -1  # index of the *_begin token of the enclosing tag


class _Source:
    """The normalised source, its jinja2 tokens with offsets, and token-level checks."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.toks: list[_Tok] = []
        self.keyed: dict[tuple, list[_Tok]] = {}
        self.hang_braces: list[_Tok] = []
        self._tokenize()
        self._classify()

    # positions
    def line_col(self, pos: int) -> tuple[int, int]:
        lo, hi = 0, len(self.line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.line_starts[mid] <= pos:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, pos - self.line_starts[lo] + 1

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    def first_col(self, line: int) -> int:
        text = self.line_text(line) if 1 <= line <= len(self.line_starts) else ""
        return len(text) - len(text.lstrip()) + 1

    def _tokenize(self) -> None:
        cursor = 0
        tag = -1
        for _lineno, typ, value in _LEX_ENV.lexer.tokeniter(self.text, None):
            if not value:
                continue
            pos = self.text.find(value, cursor)
            if pos < 0:
                pos = cursor
            line, col = self.line_col(pos)
            tok = _Tok(len(self.toks), pos, line, col, typ, value)
            if typ in ("block_begin", "variable_begin"):
                tag = tok.index
            tok.tag = tag
            if typ in ("block_end", "variable_end"):
                tag = -1
            self.toks.append(tok)
            cursor = pos + len(value)

    def _has_assign(self, i: int) -> bool:
        """Whether the block tag containing token ``i`` has a top-level ``=``."""
        for tok in self.toks[i:]:
            if tok.type == "block_end":
                return False
            if tok.type == "operator" and tok.value == "=":
                return True
        return False

    def _classify(self) -> None:
        """Give each token in a tag the key of the AST node it introduces."""
        state = None
        first = False
        tag_kw = ""
        stack: list[str] = []
        prev: _Tok | None = None
        prev2: _Tok | None = None
        for tok in self.toks:
            typ, value = tok.type, tok.value
            if typ in ("whitespace", "data", "comment", "comment_begin", "comment_end",
                       "raw_end"):
                continue
            if typ == "raw_begin":
                self.keyed.setdefault(("tag", "raw"), []).append(tok)
                continue
            if typ in ("block_begin", "variable_begin"):
                state = "block" if typ == "block_begin" else "variable"
                first = state == "block"
                tag_kw = ""
                prev = prev2 = None
                continue
            if typ in ("block_end", "variable_end"):
                state = None
                continue
            key: tuple | None = None
            if typ == "name":
                if first:
                    first = False
                    tag_kw = value
                    kw = value
                    if value == "else":
                        kw = "for-else" if stack and stack[-1] == "for" else "else"
                    elif value.startswith("end"):
                        if stack and stack[-1] == value[3:]:
                            stack.pop()
                    elif value in _BLOCK_TAGS or (value == "set"
                                                  and not self._has_assign(tok.index)):
                        stack.append(value)
                    key = ("tag", kw)
                elif prev is not None and prev.type == "operator" and prev.value in (".", "|"):
                    key = None  # attribute or filter name
                elif prev is not None and prev.type == "name" and (
                        prev.value == "is" or (prev.value == "not" and prev2 is not None
                                               and prev2.type == "name" and prev2.value == "is")):
                    key = None  # test name
                elif prev is not None and prev2 is None and prev.value in ("macro", "filter",
                                                                           "block"):
                    key = None  # macro / filter / block name after the tag keyword
                elif value in ("and", "or", "if", "is"):
                    key = ("kw", value)
                elif value in _CONST_NAMES:
                    key = ("const",)
                elif value in _EXPR_KEYWORDS or tag_kw in _NO_IDENT_TAGS:
                    key = None
                else:
                    key = ("ident", value)
            elif typ in ("string", "integer", "float"):
                key = ("const",)
            elif typ == "operator":
                if value in (".", "[", "{", "|", "*", "/", "//", "%", "**"):
                    key = ("op", value)
                elif (value == "}" and state == "variable"
                      and self.text.startswith("}}", tok.pos)):
                    self.hang_braces.append(tok)
            if key is not None:
                self.keyed.setdefault(key, []).append(tok)
            prev2, prev = prev, tok

    def next_sig(self, tok: _Tok, skip: Iterable[str] = ()) -> _Tok | None:
        """The next non-whitespace token after ``tok`` in the same tag (skipping names in skip)."""
        for nxt in self.toks[tok.index + 1:]:
            if nxt.type == "whitespace" or (nxt.type == "name" and nxt.value in skip):
                continue
            if nxt.type in ("block_end", "variable_end"):
                return None
            return nxt
        return None

    def expression_start(self, tok: _Tok) -> int:
        """Offset where the expression holding ``tok`` starts in its tag (after a keyword)."""
        if tok.tag < 0:
            return tok.pos
        begin = self.toks[tok.tag]
        start = begin.pos + len(begin.value)
        first = None
        for t in self.toks[tok.tag + 1:tok.index]:
            if t.type == "whitespace":
                continue
            if first is None:
                first = t
                if begin.type == "block_begin" and t.type == "name" and t.value in ("if", "elif"):
                    start = t.pos + len(t.value)
                continue
            if first.value == "set" and t.type == "operator" and t.value == "=":
                start = t.pos + 1
                break
            if first.value == "for" and t.type == "name" and t.value == "in":
                start = t.pos + 2
                break
        return start

    def tag_end(self, tok: _Tok) -> int:
        for t in self.toks[tok.index:]:
            if t.type in ("block_end", "variable_end"):
                return t.pos
        return len(self.text)

    # token-level rules
    def findings(self) -> list[Finding]:
        out: list[Finding] = []
        for tok in self.hang_braces:
            out.append(Finding(tok.line, tok.col, "runtime-hang", (
                "the runtime's lexer ends the `{{ }}` tag at this `}}` although a dict literal is "
                "still open, and its parser then loops forever: rendering hangs. Put a space "
                "between the braces (`} }`) or build the dict in a `{% set %}`")))
        out += self._comment_findings()
        out += self._lstrip_findings()
        out += self._raw_findings()
        out += self._trailing_newline()
        return out

    def _marker_end(self, end: _Tok) -> int:
        """Offset just after the closing delimiter of an end token (its value may hold trimmed
        whitespace, and a raw_end holds the whole `{% endraw %}`)."""
        for marker in ("%}", "}}", "#}"):
            k = end.value.find(marker)
            if k >= 0:
                return end.pos + k + 2
        return end.pos + len(end.value)

    def _prev_tag_end(self, i: int) -> _Tok | None:
        for t in reversed(self.toks[:i]):
            if t.type in ("block_end", "variable_end", "comment_end", "raw_end"):
                return t
            if t.type in ("block_begin", "variable_begin", "comment_begin", "raw_begin"):
                return None
        return None

    def _next_tag_begin(self, i: int) -> _Tok | None:
        for t in self.toks[i + 1:]:
            if t.type in ("block_begin", "variable_begin", "comment_begin", "raw_begin"):
                return t
        return None

    def _comment_findings(self) -> list[Finding]:
        out = []
        for i, tok in enumerate(self.toks):
            if tok.type != "comment_begin":
                continue
            end = next((t for t in self.toks[i:] if t.type == "comment_end"), None)
            problems = []
            if not tok.value.endswith("-"):
                line_start = self.line_starts[tok.line - 1]
                before = self.text[line_start:tok.pos]
                prev_end = self._prev_tag_end(i)
                trimmed = prev_end is not None and prev_end.value.startswith("-") and \
                    not self.text[self._marker_end(prev_end):tok.pos].strip()
                if before and not before.strip(" \t") and not trimmed:
                    problems.append(f"keeps the indentation {before!r} before it")
            if end is not None and not end.value.startswith("-"):
                after = end.pos + 2
                if self.text.startswith("\n", after):
                    nxt = self._next_tag_begin(end.index)
                    trimmed = nxt is not None and nxt.value.endswith("-") and \
                        not self.text[after:nxt.pos].strip()
                    if not trimmed:
                        problems.append("keeps the newline after it")
            if problems:
                out.append(Finding(tok.line, tok.col, "comment-whitespace", (
                    "runtime applies trim_blocks/lstrip_blocks only to `{% %}` tags, not to "
                    "comments: it " + " and ".join(problems) + " (jinja2 removes it); use "
                    "`{#-`/`-#}`")))
        return out

    def _lstrip_findings(self) -> list[Finding]:
        out = []
        for i, tok in enumerate(self.toks):
            if tok.type not in ("block_begin", "raw_begin") or tok.value.startswith("{%-"):
                continue
            if i == 0 or self.toks[i - 1].type != "data":
                continue
            prev_end = self._prev_tag_end(i - 1)
            if prev_end is None or prev_end.value.startswith("-"):
                continue
            gap_start = self._marker_end(prev_end)
            gap = self.text[gap_start:tok.pos]
            if gap and not gap.strip(" \t") and "\n" not in gap:
                line, col = self.line_col(gap_start)
                out.append(Finding(line, col, "lstrip-midline", (
                    f"runtime strips the {gap!r} between the previous tag and `{{%` (its "
                    "lstrip_blocks does not check for the start of a line); jinja2 keeps it")))
        return out

    def _raw_findings(self) -> list[Finding]:
        out = []
        for i, tok in enumerate(self.toks):
            if tok.type != "raw_begin":
                continue
            body = self.toks[i + 1].value if i + 1 < len(self.toks) and \
                self.toks[i + 1].type == "data" else ""
            if any(d in body for d in ("{{", "{%", "{#")):
                out.append(Finding(tok.line, tok.col, "unsupported-tag", (
                    "runtime has no `{% raw %}`: the tag is skipped and the template code inside "
                    "it is executed instead of printed literally")))
        return out

    def _trailing_newline(self) -> list[Finding]:
        if not self.text.endswith("\n"):
            return []
        body = self.text[:-1]
        if body.endswith("%}") or body.endswith("#}") or re.search(r"-(}}|%}|#})\s*\Z", body):
            return []
        line, col = self.line_col(len(body))
        return [Finding(line, col, "trailing-newline", (
            "runtime keeps the template's final newline, jinja2 (keep_trailing_newline=False) "
            "drops it: the prompt ends with an extra \\n; strip it from the template"))]


# --- the AST walk -------------------------------------------------------------------------------


class _Ctx(NamedTuple):
    boolean: bool = False  # the value is only used for its truthiness
    in_boolop: bool = False  # inside an and/or that is already reported
    literal: bool = False  # inside a list/dict literal of the same expression
    guards: frozenset = frozenset()  # expressions known to be defined here


class _Reg(NamedTuple):
    key: tuple
    lineno: int


def _ekey(node: nodes.Node) -> str:
    return repr(node)


def _chainable(node: nodes.Node) -> bool:
    """Whether the runtime accepts ``.x``/``[..]``/``.m()`` after ``node``."""
    return isinstance(node, (nodes.Name, nodes.Getattr, nodes.Getitem, nodes.Call))


@dataclass
class _Pending:
    rule: str
    message: str | Callable[[_Tok | None], str | None]
    reg: int = -1  # registration whose token anchors the finding
    node: nodes.Node | None = None  # else: the leftmost token of this node
    after: bool = False  # anchor at the name after the key token (attribute, filter, test)


class _Walker:
    def __init__(self, src: _Source, ast: nodes.Template) -> None:
        self.src = src
        self.ast = ast
        self.regs: list[_Reg] = []
        self.by_key: dict[tuple, list[int]] = {}
        self.spans: dict[int, tuple[int, int]] = {}
        self.pending: list[_Pending] = []
        self.resolved: dict[int, _Tok] = {}
        self.macros = {m.name for m in ast.find_all(nodes.Macro)}
        self.bound = {n.name for n in ast.find_all(nodes.Name) if n.ctx in ("store", "param")}
        self.bound |= {"loop"}
        self.dict_names = {a.target.name for a in ast.find_all(nodes.Assign)
                           if isinstance(a.target, nodes.Name) and isinstance(a.node, nodes.Dict)}
        self.list_names = {a.target.name for a in ast.find_all(nodes.Assign)
                           if isinstance(a.target, nodes.Name) and self._listlike(a.node)}

    # registration and resolution
    def _reg(self, node: nodes.Node, key: tuple) -> int:
        idx = len(self.regs)
        self.regs.append(_Reg(key, node.lineno))
        self.by_key.setdefault(key, []).append(idx)
        return idx

    def _resolve(self) -> None:
        for key, idxs in self.by_key.items():
            toks = self.src.keyed.get(key, [])
            p = 0
            for i in idxs:
                line = self.regs[i].lineno
                while p < len(toks) and toks[p].line < line:
                    p += 1
                if p < len(toks):
                    self.resolved[i] = toks[p]
                    p += 1

    def _leftmost(self, node: nodes.Node) -> _Tok | None:
        lo, hi = self.spans.get(id(node), (0, 0))
        toks = [self.resolved[i] for i in range(lo, hi) if i in self.resolved]
        return min(toks, key=lambda t: t.pos) if toks else None

    def _text(self, node: nodes.Node) -> str:
        """Best-effort source text of an expression node."""
        lo, hi = self.spans.get(id(node), (0, 0))
        toks = [self.resolved[i] for i in range(lo, hi) if i in self.resolved]
        if not toks:
            return ""
        start = min(t.pos for t in toks)
        last = max(toks, key=lambda t: t.pos)
        end = last.pos + len(last.value)
        if (last.type == "operator" and last.value in (".", "|")) or (
                last.type == "name" and last.value == "is"):
            nxt = self.src.next_sig(last, skip=("not",))
            if nxt is not None:
                end = nxt.pos + len(nxt.value)
        text = self.src.text
        if isinstance(node, (nodes.Call, nodes.Filter, nodes.Test)):
            m = re.compile(r"\s*\(").match(text, end)
            if m:
                end = m.end()
        # extend over closing brackets that belong to the expression
        depth = 0
        for ch in text[start:end]:
            depth += ch in "([{"
            depth -= ch in ")]}"
        limit = self.src.tag_end(last)
        while depth > 0 and end < limit:
            ch = text[end]
            depth += ch in "([{"
            depth -= ch in ")]}"
            end += 1
        return re.sub(r"\s*\n\s*", " ", text[start:end])

    def run(self) -> None:
        self._walk(self.ast, _Ctx())
        self._resolve()

    def findings(self) -> list[Finding]:
        out = []
        for p in self.pending:
            tok = self.resolved.get(p.reg) if p.reg >= 0 else None
            if p.reg < 0 and p.node is not None:
                tok = self._leftmost(p.node)
            message = p.message(tok) if callable(p.message) else p.message
            if message is None:
                continue
            anchor = tok
            if tok is not None and p.after:
                anchor = self.src.next_sig(tok, skip=("not",)) or tok
            if anchor is not None:
                line, col = anchor.line, anchor.col
            else:
                line = p.node.lineno if p.node is not None else self.regs[p.reg].lineno
                col = self.src.first_col(line)
            out.append(Finding(line, col, p.rule, message))
        return out

    def _add(self, rule: str, message, *, reg: int = -1, node: nodes.Node | None = None,
             after: bool = False) -> None:
        self.pending.append(_Pending(rule, message, reg, node, after))

    # walking
    def _walk(self, node: nodes.Node | None, ctx: _Ctx) -> None:
        if node is None:
            return
        start = len(self.regs)
        method = getattr(self, "_v_" + type(node).__name__, None)
        if method is not None:
            method(node, ctx)
        elif type(node) in _ARITH:
            self._v_arith(node, ctx)
        else:
            for child in node.iter_child_nodes():
                self._walk(child, ctx._replace(boolean=False, in_boolop=False))
        self.spans[id(node)] = (start, len(self.regs))

    def _walk_all(self, items: Iterable[nodes.Node], ctx: _Ctx) -> None:
        for item in items:
            self._walk(item, ctx)

    def _value(self, ctx: _Ctx) -> _Ctx:
        return ctx._replace(boolean=False, in_boolop=False)

    # statements
    def _v_Template(self, node: nodes.Template, ctx: _Ctx) -> None:
        self._walk_all(node.body, ctx)

    def _v_Output(self, node: nodes.Output, ctx: _Ctx) -> None:
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                continue
            self._walk(child, _Ctx(guards=ctx.guards))
            self._check_print(child)

    def _v_For(self, node: nodes.For, ctx: _Ctx) -> None:
        self._reg(node, ("tag", "for"))
        body_ctx = _Ctx(guards=ctx.guards)
        self._walk(node.target, body_ctx)
        self._walk(node.iter, body_ctx)
        self._check_dict_order(node.iter)
        if node.test is not None:
            self._reg(node, ("kw", "if"))
            self._walk(node.test, body_ctx._replace(boolean=True))
        self._walk_all(node.body, body_ctx)
        if node.else_:
            reg = self._reg(node, ("tag", "for-else"))
            self._add("for-else", (
                "runtime has no for-else: the `{% else %}` tag is skipped and its body is "
                "rendered inside the loop after every item, and never for an empty sequence"),
                reg=reg)
            self._walk_all(node.else_, body_ctx)

    def _v_If(self, node: nodes.If, ctx: _Ctx, tag: str = "if") -> None:
        self._reg(node, ("tag", tag))
        self._walk(node.test, _Ctx(boolean=True, guards=ctx.guards))
        self._walk_all(node.body, ctx._replace(guards=ctx.guards | _guards(node.test)))
        negated = ctx.guards | _neg_guards(node.test)
        for elif_ in node.elif_:
            start = len(self.regs)
            self._v_If(elif_, ctx._replace(guards=negated), tag="elif")
            self.spans[id(elif_)] = (start, len(self.regs))
            negated |= _neg_guards(elif_.test)
        self._walk_all(node.else_, ctx._replace(guards=negated))

    def _v_Assign(self, node: nodes.Assign, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "set"))
        if isinstance(node.target, nodes.Tuple):
            names = ", ".join(getattr(n, "name", "?") for n in node.target.items)
            first = getattr(node.target.items[0], "name", "?") if node.target.items else "?"
            self._add("set-tuple", (
                f"runtime has no tuple assignment: `set {names} = ...` sets `{first}` to \"\" "
                "and leaves the other names unchanged"), reg=reg)
        self._walk(node.target, _Ctx(guards=ctx.guards))
        self._walk(node.node, _Ctx(guards=ctx.guards))

    def _v_AssignBlock(self, node: nodes.AssignBlock, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "set"))
        name = getattr(node.target, "name", "x")
        self._add("set-block", (
            f"runtime has no block set: `{{% set {name} %}}...{{% endset %}}` renders the body in "
            f"place and sets `{name}` to \"\""), reg=reg)
        self._walk(node.target, ctx)
        if node.filter is not None:
            self._walk_filter_chain(node.filter, ctx, innermost_pipe=True)
        self._walk_all(node.body, ctx)

    def _v_Macro(self, node: nodes.Macro, ctx: _Ctx) -> None:
        self._reg(node, ("tag", "macro"))
        self._walk_params(node, node.args, node.defaults, ctx)
        self._walk_all(node.body, _Ctx())

    def _walk_params(self, node: nodes.Node, args: list, defaults: list, ctx: _Ctx) -> None:
        first_default = len(args) - len(defaults)
        for i, arg in enumerate(args):
            self._walk(arg, _Ctx())
            if i >= first_default:
                default = defaults[i - first_default]
                name = arg.name
                self._add("macro-default", lambda tok, name=name, default=default: (
                    f"runtime parses and drops macro default values: a call without `{name}` "
                    f"leaves it undefined instead of `{self._text(default) or '...'}`"),
                    reg=self.spans[id(arg)][0])
                self._walk(default, _Ctx())

    def _v_CallBlock(self, node: nodes.CallBlock, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "call"))
        self._add("call-block", (
            "runtime has no `{% call %}`: the tag is skipped, the body is rendered in place and "
            "the macro is not called"), reg=reg)
        self._walk_params(node, node.args, node.defaults, ctx)
        self._walk(node.call, _Ctx())
        self._walk_all(node.body, ctx)

    def _v_FilterBlock(self, node: nodes.FilterBlock, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "filter"))
        names = []
        f = node.filter
        while isinstance(f, nodes.Filter):
            names.append(f.name)
            f = f.node
        chain = "|".join(reversed(names))
        self._add("filter-block", (
            f"runtime has no `{{% filter %}}` block: the tag is skipped and the body is rendered "
            f"without `{chain}`"), reg=reg)
        self._walk_filter_chain(node.filter, ctx, innermost_pipe=False)
        self._walk_all(node.body, ctx)

    def _walk_filter_chain(self, f: nodes.Filter, ctx: _Ctx, innermost_pipe: bool) -> None:
        if isinstance(f.node, nodes.Filter):
            self._walk_filter_chain(f.node, ctx, innermost_pipe)
            self._reg(f, ("op", "|"))
        elif innermost_pipe:
            self._reg(f, ("op", "|"))
        self._walk_all(f.args, _Ctx())
        self._walk_all(f.kwargs, _Ctx())

    def _v_With(self, node: nodes.With, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "with"))
        names = ", ".join(getattr(t, "name", "?") for t in node.targets)
        self._add("unsupported-tag", (
            f"runtime has no `{{% with %}}`: the tag is skipped and the body is rendered without "
            f"`{names}` being set"), reg=reg)
        for target, value in zip(node.targets, node.values):
            self._walk(target, _Ctx())
            self._walk(value, _Ctx())
        self._walk_all(node.body, ctx)

    def _v_loader_tag(self, node: nodes.Node, tag: str, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", tag))
        self._add("unsupported-tag", (
            f"runtime has no `{{% {tag} %}}`: the tag is skipped and renders nothing, while "
            "transformers fails (its environment has no template loader)"), reg=reg)
        self._walk(node.template, _Ctx())

    def _v_Include(self, node, ctx):
        self._v_loader_tag(node, "include", ctx)

    def _v_Import(self, node, ctx):
        self._v_loader_tag(node, "import", ctx)

    def _v_FromImport(self, node, ctx):
        self._v_loader_tag(node, "from", ctx)

    def _v_Extends(self, node, ctx):
        self._v_loader_tag(node, "extends", ctx)

    def _v_Block(self, node: nodes.Block, ctx: _Ctx) -> None:
        # Without `extends` a block renders in place in jinja2, as the runtime does.
        self._reg(node, ("tag", "block"))
        self._walk_all(node.body, ctx)

    def _v_ScopedEvalContextModifier(self, node, ctx: _Ctx) -> None:
        reg = self._reg(node, ("tag", "autoescape"))
        self._add("unsupported-tag", (
            "runtime has no `{% autoescape %}`: the tag is skipped and output inside it is "
            "never HTML-escaped"), reg=reg)
        for kw in node.options:
            self._walk(kw.value, _Ctx())
        self._walk_all(node.body, ctx)

    _v_EvalContextModifier = _v_ScopedEvalContextModifier

    def _v_Break(self, node, ctx):
        reg = self._reg(node, ("tag", "break"))
        self._add("loop-control", (
            "runtime ignores `{% break %}`: the loop goes on with every remaining item"), reg=reg)

    def _v_Continue(self, node, ctx):
        reg = self._reg(node, ("tag", "continue"))
        self._add("loop-control", (
            "runtime ignores `{% continue %}`: the rest of the loop body is still rendered"),
            reg=reg)

    # expressions
    def _v_Name(self, node: nodes.Name, ctx: _Ctx) -> None:
        self._reg(node, ("ident", node.name))

    def _v_NSRef(self, node: nodes.NSRef, ctx: _Ctx) -> None:
        self._reg(node, ("ident", node.name))
        self._reg(node, ("op", "."))

    def _v_Keyword(self, node: nodes.Keyword, ctx: _Ctx) -> None:
        self._reg(node, ("ident", node.key))
        self._walk(node.value, self._value(ctx))

    def _v_Const(self, node: nodes.Const, ctx: _Ctx) -> None:
        reg = self._reg(node, ("const",))
        value = node.value
        if isinstance(value, float):
            if ctx.literal:
                self._add("runtime-hang", lambda tok: (
                    f"runtime has no float literals: inside this list/dict literal the parser "
                    f"stops at the `.` of `{tok.value if tok else value}` and loops forever: "
                    "rendering hangs"), reg=reg)
            else:
                self._add("float-literal", lambda tok: self._float_message(tok, value), reg=reg)
        elif isinstance(value, bool) or value is None:
            self._add("python-literal", lambda tok: (
                f"runtime knows only lower-case `true`/`false`/`none`: `{tok.value}` is an "
                "undefined variable (falsy, prints nothing)")
                if tok is not None and tok.value in ("True", "False", "None") else None, reg=reg)
        elif isinstance(value, str):
            self._add("string-escape", self._escape_message, reg=reg)

    def _float_message(self, tok: _Tok | None, value: float) -> str:
        raw = tok.value if tok is not None else repr(value)
        whole = raw.split(".")[0] or "0"
        return (f"runtime has no float literals: `{raw}` lexes as `{whole}` `.` ... so it "
                f"evaluates as `{whole}` and the rest of the tag is dropped")

    @staticmethod
    def _escape_message(tok: _Tok | None) -> str | None:
        if tok is None or tok.type != "string":
            return None
        raw = tok.value[1:-1]
        bad = [m.group(0) for m in re.finditer(r"\\(.)", raw, re.S) if m.group(1) not in _ESCAPES]
        if not bad:
            return None
        runtime = re.sub(r"\\(.)", lambda m: _RUNTIME_ESCAPES.get(m.group(1), m.group(1)), raw,
                         flags=re.S)
        return (f"runtime knows only the escapes \\n \\r \\t \\b \\f \\\\ \\' \\\": "
                f"`{bad[0]}` becomes `{bad[0][1]}`, so {tok.value} is {runtime!r} in the runtime; "
                "write the character itself")

    def _v_Getattr(self, node: nodes.Getattr, ctx: _Ctx) -> None:
        self._walk(node.node, self._value(ctx)._replace(literal=ctx.literal))
        reg = self._reg(node, ("op", "."))
        if not _chainable(node.node):
            self._postfix(node, reg, f".{node.attr}", ctx)
        elif isinstance(node.node, nodes.Name) and node.node.name == "loop" \
                and node.attr not in LOOP_ATTRS:
            self._add("loop-attr", (
                f"runtime's loop object has only index, index0, first, last and length: "
                f"`loop.{node.attr}` is undefined (falsy, prints nothing, calling it gives \"\")"),
                reg=reg, after=True)

    def _postfix(self, node: nodes.Node, reg: int, what: str, ctx: _Ctx) -> None:
        base = node.node

        def base_text() -> str:
            text = self._text(base)
            literal = isinstance(base, (nodes.Const, nodes.List, nodes.Dict))
            return text if literal else f"({text})"
        if ctx.literal:
            self._add("runtime-hang", lambda tok: (
                f"runtime takes no postfix after a literal or `( ... )`: inside this list/dict "
                f"literal its parser stops at `{what}` after `{base_text()}` and loops "
                "forever: rendering hangs"), reg=reg)
            return
        self._add("literal-method", lambda tok: (
            f"runtime takes no postfix after a literal or `( ... )`: "
            f"`{base_text()}{what}...` evaluates as `{base_text()}`, the `{what}` and "
            "the rest of the tag are dropped; assign the value with `set` first"), reg=reg)

    def _v_Getitem(self, node: nodes.Getitem, ctx: _Ctx) -> None:
        self._walk(node.node, self._value(ctx)._replace(literal=ctx.literal))
        reg = self._reg(node, ("op", "["))
        self._walk(node.arg, self._value(ctx)._replace(literal=ctx.literal))
        if not _chainable(node.node):
            self._postfix(node, reg, "[...]", ctx)
        elif isinstance(node.arg, nodes.Slice) and not self._listlike(node.node):
            self._add("string-slice", lambda tok: (
                f"runtime slices only lists: if `{self._text(node.node)}` is a string, "
                f"`{self._text(node)}` evaluates to \"\" (jinja2 slices the string)"), reg=reg)

    def _v_Call(self, node: nodes.Call, ctx: _Ctx) -> None:
        callee = node.node
        self._walk(callee, self._value(ctx)._replace(literal=ctx.literal))
        args_ctx = _Ctx(literal=ctx.literal, guards=ctx.guards)
        if isinstance(callee, nodes.Name):
            self._check_function(callee)
        elif isinstance(callee, nodes.Getattr) and _chainable(callee.node) and not (
                isinstance(callee.node, nodes.Name) and callee.node.name == "loop"):
            self._check_method(node, callee)
        self._walk_all(node.args, args_ctx)
        self._walk_all(node.kwargs, args_ctx)
        self._walk(node.dyn_args, args_ctx)
        self._walk(node.dyn_kwargs, args_ctx)

    def _check_function(self, callee: nodes.Name) -> None:
        name = callee.name
        reg = self.spans[id(callee)][0]
        if name == "raise_exception":
            self._add("raise-exception", (
                "runtime has no `raise_exception`: the call renders \"\" and the template goes "
                "on rendering the case it meant to reject"), reg=reg)
        elif name == "caller":
            self._add("caller", (
                "runtime has no `{% call %}` blocks, so `caller()` renders \"\""), reg=reg)
        elif name == "loop":
            self._add("loop-attr", (
                "runtime has no recursive loops: `loop(...)` renders \"\""), reg=reg)
        elif name not in FUNCTIONS and name not in self.macros:
            self._add("unknown-function", (
                f"runtime has no function `{name}`: `{name}(...)` evaluates to \"\" (it knows only "
                "range, namespace, strftime_now and the template's macros)"), reg=reg)

    def _check_method(self, call: nodes.Call, callee: nodes.Getattr) -> None:
        name = callee.attr
        reg = self.spans[id(callee)][1] - 1  # the `.` of the method
        if name in SUPPORTED_METHODS:
            if name == "split" and not call.args and not call.kwargs:
                self._add("split-default", (
                    "runtime's `.split()` without a separator splits on each single space: runs of "
                    "spaces give empty strings and newlines/tabs do not split (Python splits on "
                    "whitespace runs); pass the separator explicitly"), reg=reg, after=True)
            return
        if name in DICT_METHODS:
            hint = {"items": "use `|items`", "get": "use `x[key]` / `x.key` with `is defined`",
                    "keys": "iterate the mapping itself"}.get(name, "avoid it")
            self._add("dict-method", (
                f"runtime has no dict methods: `.{name}()` evaluates to \"\" (a `for` over it "
                f"iterates nothing); {hint}"), reg=reg, after=True)
        elif name in STRING_METHODS:
            hint = {"upper": "use `|upper`", "lower": "use `|lower`", "join": "use `~`",
                    "title": "use `|capitalize` per word", "capitalize": "use `|capitalize`"}
            self._add("string-method", (
                f"runtime implements only startswith, endswith, split, strip, lstrip, rstrip and "
                f"replace on strings: `.{name}()` evaluates to \"\""
                + (f"; {hint[name]}" if name in hint else "")), reg=reg, after=True)
        else:
            self._add("method", (
                f"runtime has no `.{name}()` method: the call evaluates to \"\" and changes "
                "nothing"), reg=reg, after=True)

    def _v_Filter(self, node: nodes.Filter, ctx: _Ctx) -> None:
        self._walk(node.node, self._value(ctx)._replace(literal=ctx.literal))
        reg = self._reg(node, ("op", "|"))
        args_ctx = _Ctx(literal=ctx.literal, guards=ctx.guards)
        self._walk_all(node.args, args_ctx)
        self._walk_all(node.kwargs, args_ctx)
        self._walk(node.dyn_args, args_ctx)
        self._walk(node.dyn_kwargs, args_ctx)
        self._check_filter(node, reg, ctx)

    def _check_filter(self, node: nodes.Filter, reg: int, ctx: _Ctx) -> None:
        name = node.name
        operand = node.node
        if name in SUPPORTED_FILTERS:
            if name == "map" and node.args:
                self._add("filter", (
                    "runtime's `map` only looks up attributes: `map('f')` maps every item to its "
                    "attribute `f` (null when missing) instead of applying the filter `f`; use "
                    "`map(attribute=...)`"), reg=reg, after=True)
            elif name == "tojson" and not _is_stringy(operand):
                self._add("tojson-key-order", (
                    "runtime's `tojson` re-sorts object keys: type, function, name, description, "
                    "parameters, properties, required, enum first, then the rest alphabetically "
                    "(transformers keeps insertion order), at every nesting level"),
                    reg=reg, after=True)
            elif name == "length" and self._maybe_undefined(operand, ctx):
                def length_message(tok: _Tok | None) -> str:
                    text = self._text(operand) or "x"
                    never = " (the runtime never sets `tools`)" if text == "tools" else ""
                    return (f"runtime's `|length` of an undefined value is 1 (undefined is an "
                            f"object with one key), jinja2 gives 0: if `{text}` is "
                            f"undefined{never}, `{text}|length` is 1; test `{text} is defined` "
                            "first")

                self._add("length-undefined", length_message, reg=reg, after=True)
            return
        if name in _HARMLESS_FILTERS:
            return
        if name == "list" and (isinstance(operand, nodes.Filter) or self._listlike(operand)):
            return  # a list already in both engines
        detail = {
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
        }.get(name, "")
        self._add("filter", (
            f"runtime has no `{name}` filter: the value passes through unchanged"
            + (f" ({detail})" if detail else "")), reg=reg, after=True)

    def _v_Test(self, node: nodes.Test, ctx: _Ctx) -> None:
        self._walk(node.node, self._value(ctx)._replace(literal=ctx.literal))
        reg = self._reg(node, ("kw", "is"))
        self._walk_all(node.args, _Ctx(literal=ctx.literal))
        self._walk_all(node.kwargs, _Ctx(literal=ctx.literal))
        name = node.name
        if name not in SUPPORTED_TESTS:
            self._add("test", (
                f"runtime has no `{name}` test: `x is {name}` is always false and "
                f"`x is not {name}` always true"), reg=reg, after=True)
        elif name in ("defined", "undefined") and isinstance(node.node, nodes.Getitem) \
                and not isinstance(node.node.arg, nodes.Slice):
            self._add("subscript-defined", lambda tok: (
                f"runtime gives \"\" (which is defined) for a missing key: "
                f"`{self._text(node.node)} is {name}` is always "
                f"{str(name == 'defined').lower()}; use "
                f"attribute access (`{self._attr_form(node.node)} is {name}`)"),
                reg=reg, after=True)

    def _attr_form(self, node: nodes.Getitem) -> str:
        if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str) \
                and node.arg.value.isidentifier():
            return f"{self._text(node.node)}.{node.arg.value}"
        return "x.key"

    def _v_CondExpr(self, node: nodes.CondExpr, ctx: _Ctx) -> None:
        branch = ctx._replace(in_boolop=False)
        self._walk(node.expr1, branch._replace(guards=ctx.guards | _guards(node.test)))
        reg = self._reg(node, ("kw", "if"))
        self._walk(node.test, _Ctx(boolean=True, literal=ctx.literal, guards=ctx.guards))
        if node.expr2 is not None:
            self._walk(node.expr2, branch._replace(guards=ctx.guards | _neg_guards(node.test)))
        else:
            self._add("if-no-else", lambda tok: (
                f"runtime ignores the condition of an `if` without `else`: "
                f"`{self._text(node.expr1)} if {self._text(node.test)}` always evaluates to "
                f"`{self._text(node.expr1)}` (jinja2 gives an empty value when the condition is "
                "false); add `else \"\"`"), reg=reg)

    def _v_And(self, node, ctx):
        self._boolop(node, ctx, "and")

    def _v_Or(self, node, ctx):
        self._boolop(node, ctx, "or")

    def _boolop(self, node: nodes.BinExpr, ctx: _Ctx, op: str) -> None:
        report = not ctx.boolean and not ctx.in_boolop
        inner = ctx._replace(in_boolop=ctx.in_boolop or report)
        self._walk(node.left, inner)
        reg = self._reg(node, ("kw", op))
        right_guards = _guards(node.left) if op == "and" else _neg_guards(node.left)
        self._walk(node.right, inner._replace(guards=ctx.guards | right_guards))
        if report:
            picks = "first truthy" if op == "or" else "first falsy"
            self._add("bool-value", lambda tok: (
                f"runtime's `{op}` returns true/false, not one of its operands: "
                f"`{self._text(node)}` evaluates to `true`/`false` where jinja2 returns the "
                f"{picks} operand (or the last one); write `a if a else b` instead"), reg=reg)

    def _v_Not(self, node, ctx):
        self._walk(node.node, ctx._replace(boolean=True, in_boolop=False))

    def _v_Compare(self, node: nodes.Compare, ctx: _Ctx) -> None:
        value = self._value(ctx)
        self._walk(node.expr, value)
        for op in node.ops:
            self._walk(op.expr, value)

    def _v_arith(self, node: nodes.BinExpr, ctx: _Ctx) -> None:
        value = self._value(ctx)
        self._walk(node.left, value)
        op = _ARITH[type(node)]
        reg = self._reg(node, ("op", op))
        self._walk(node.right, value)
        if ctx.literal:
            self._add("runtime-hang", (
                f"runtime does not parse `{op}`: inside a list/dict literal its parser stops at "
                "the operator and loops forever, so rendering hangs; compute the value in a "
                "`{% set %}` without the operator"), reg=reg)
        else:
            self._add("arith-op", lambda tok: self._arith_message(tok, op), reg=reg)

    def _arith_message(self, tok: _Tok | None, op: str) -> str:
        if tok is None:
            return f"runtime does not parse `{op}`: the tag is cut at the operator"
        start = self.src.expression_start(tok)
        full = " ".join(self.src.text[start:self.src.tag_end(tok)].strip(" -+").split())
        cut = " ".join(self.src.text[start:tok.pos].split())
        return (f"runtime does not parse `{op}`: it stops at the operator and drops the rest of "
                f"the tag, so `{full}` evaluates as `{cut}`")

    def _v_List(self, node: nodes.List, ctx: _Ctx) -> None:
        self._reg(node, ("op", "["))
        self._walk_all(node.items, _Ctx(literal=True, guards=ctx.guards))

    def _v_Dict(self, node: nodes.Dict, ctx: _Ctx) -> None:
        self._reg(node, ("op", "{"))
        for pair in node.items:
            self._walk(pair.key, _Ctx(literal=True, guards=ctx.guards))
            self._walk(pair.value, _Ctx(literal=True, guards=ctx.guards))

    def _v_Tuple(self, node: nodes.Tuple, ctx: _Ctx) -> None:
        self._walk_all(node.items, self._value(ctx))
        if node.ctx != "load":
            return
        if ctx.literal:
            self._add("runtime-hang", lambda tok: (
                f"runtime has no tuples: inside a list/dict literal its parser stops at the `,` "
                f"of `({self._text(node)})` and loops forever: rendering hangs; use a list"),
                node=node)
        else:
            self._add("tuple-literal", lambda tok: (
                f"runtime has no tuples: `({self._text(node)})` evaluates as its first item "
                f"`{self._text(node.items[0]) if node.items else ''}` and the rest of the tag is "
                "dropped (`x in ('a', 'b')` becomes a substring test on 'a'); use a list"),
                node=node)

    # helpers
    def _check_print(self, expr: nodes.Node) -> None:
        kind = None
        if isinstance(expr, nodes.Const) and (expr.value is None or isinstance(expr.value, bool)):
            kind = "a boolean/none literal"
        elif isinstance(expr, (nodes.Compare, nodes.Test, nodes.Not)):
            kind = "a boolean"
        elif isinstance(expr, (nodes.List, nodes.Dict)):
            kind = "a list/dict"
        elif isinstance(expr, nodes.Getattr) and isinstance(expr.node, nodes.Name) \
                and expr.node.name == "loop" and expr.attr in ("first", "last"):
            kind = "a boolean"
        elif isinstance(expr, nodes.Filter) and expr.name in ("map", "items"):
            kind = "a list"
        elif isinstance(expr, nodes.Call) and isinstance(expr.node, nodes.Name) \
                and expr.node.name == "range":
            kind = "a list"
        if kind is None:
            return
        # `{{ True }}` prints nothing at all in the runtime: python-literal reports it.
        def prefix() -> str:  # `not x` (not `x is not y`, which is also a Not node)
            inner = self._leftmost(expr.node) if isinstance(expr, nodes.Not) else None
            if inner is None:
                return ""
            before = self.src.text[:inner.pos].rstrip()
            return "not " if re.search(r"(?<![\w.])not\Z", before) else ""

        self._add("print-value", lambda tok: None if tok is not None and tok.value in (
            "True", "False", "None") and isinstance(expr, nodes.Const) else (
            f"runtime prints non-strings as compact JSON: `{{{{ {prefix()}{self._text(expr)} }}}}` "
            f"prints "
            f"{kind} as `true`/`false`/`null`/`[1,\"a\"]` where jinja2 prints `True`/`False`/"
            "`None`/`[1, 'a']`"), node=expr)

    def _check_dict_order(self, it: nodes.Node) -> None:
        mapping = (isinstance(it, nodes.Dict)
                   or (isinstance(it, nodes.Name) and it.name in self.dict_names)
                   or (isinstance(it, nodes.Getattr) and it.attr in _DICT_ATTRS))
        if mapping:
            self._add("dict-order", lambda tok: (
                f"runtime iterates a mapping's keys in sorted order: `for ... in "
                f"{self._text(it)}` visits the keys alphabetically, jinja2 in insertion order; "
                "use `|items` (which keeps the order)"), node=it)

    def _listlike(self, node: nodes.Node) -> bool:
        if isinstance(node, (nodes.List, nodes.Tuple)):
            return True
        if isinstance(node, nodes.Name):
            return node.name in _LIST_NAMES or node.name in getattr(self, "list_names", ())
        if isinstance(node, nodes.Getattr):
            return node.attr in _LIST_ATTRS
        if isinstance(node, nodes.Getitem):
            return isinstance(node.arg, nodes.Slice) and self._listlike(node.node)
        if isinstance(node, nodes.Filter):
            return node.name in _LIST_FILTERS
        if isinstance(node, nodes.Call):
            callee = node.node
            return (isinstance(callee, nodes.Getattr) and callee.attr in ("split", "rsplit")) or (
                isinstance(callee, nodes.Name) and callee.name == "range")
        return False

    def _maybe_undefined(self, node: nodes.Node | None, ctx: _Ctx) -> bool:
        if node is None or _ekey(node) in ctx.guards:
            return False
        if isinstance(node, nodes.Name):
            return node.name not in self.bound and node.name not in _ALWAYS_DEFINED
        if isinstance(node, nodes.Getattr):
            # `loop.*` and the namespaces template lowering adds (`mtok_h1.v`) are always set
            return node.attr not in _PRESENT_ATTRS and not (
                isinstance(node.node, nodes.Name)
                and (node.node.name == "loop" or node.node.name.startswith("mtok_")))
        return False


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


def _guards(test: nodes.Node) -> frozenset:
    """Expressions that are defined (in the runtime) when ``test`` is true."""
    if isinstance(test, (nodes.Name, nodes.Getattr)):
        return frozenset({_ekey(test)})
    if isinstance(test, nodes.Test) and test.name in ("defined", "string", "sequence", "iterable",
                                                      "number", "boolean", "true", "false"):
        return frozenset({_ekey(test.node)})
    if isinstance(test, nodes.And):
        return _guards(test.left) | _guards(test.right)
    if isinstance(test, nodes.Not):
        return _neg_guards(test.node)
    if isinstance(test, nodes.Compare) and len(test.ops) == 1 and test.ops[0].op == "in" \
            and isinstance(test.expr, nodes.Const) and isinstance(test.expr.value, str):
        # `'k' in x` (true only when the key exists) guards `x.k`
        return frozenset({_ekey(nodes.Getattr(test.ops[0].expr, test.expr.value, "load"))})
    if isinstance(test, nodes.Compare) and isinstance(test.expr, nodes.Filter) \
            and test.expr.name == "length" and test.expr.node is not None:
        # `x|length > 0` guards the uses of x inside (its own |length is reported once)
        return frozenset({_ekey(test.expr.node)})
    return frozenset()


def _neg_guards(test: nodes.Node) -> frozenset:
    """Expressions that are defined (in the runtime) when ``test`` is false."""
    if isinstance(test, nodes.Not):
        return _guards(test.node)
    if isinstance(test, nodes.Test) and test.name == "undefined":
        return frozenset({_ekey(test.node)})
    if isinstance(test, nodes.Or):
        return _neg_guards(test.left) | _neg_guards(test.right)
    return frozenset()
