"""Source positions of a chat template: its jinja2 tokens with offsets, and the map from AST nodes
back to line and column.

jinja2 nodes carry only a line number.  :class:`SourceMap` lexes the template and gives each token
that introduces a node (its operator, keyword, name or literal) a *key* such as ``("op", ".")`` or
``("ident", "x")``.  While walking the AST, :class:`NodePositions` registers the key each node
expects; :meth:`NodePositions.resolve` then pairs registrations and tokens of the same key in
source order, line by line.  The result is deterministic; in rare multi-line constructs the column
may point at a neighbouring token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from jinja2 import nodes

from .environment import LEX_ENV

__all__ = ["KeptWhitespace", "NodePositions", "SourceMap", "Token", "marker_end"]

_TAG_BEGINS = ("block_begin", "variable_begin", "comment_begin", "raw_begin")
_TAG_ENDS = ("block_end", "variable_end", "comment_end", "raw_end")
# Block tags that need an end tag (a `set` without `=` too).
_BLOCK_TAGS = frozenset({"for", "if", "macro", "call", "filter", "with", "block", "autoescape",
                         "generation", "trans"})
# Tags whose names are not variables (template names, block names).
_NO_IDENT_TAGS = frozenset({"include", "import", "from", "extends", "block", "endblock",
                            "endmacro"})
_EXPR_KEYWORDS = frozenset({"not", "in", "is", "else", "recursive", "elif", "endif"})
_CONST_NAMES = frozenset({"true", "false", "none", "True", "False", "None"})
# Operators that introduce a node (attribute, subscript, literal, filter, arithmetic).
_KEY_OPERATORS = frozenset({".", "[", "{", "|", "*", "/", "//", "%", "**"})


@dataclass
class Token:
    index: int
    pos: int
    line: int  # 1-based, like col
    col: int
    type: str
    value: str
    tag: int = -1  # index of the *_begin token of the enclosing tag


def marker_end(end: Token) -> int:
    """Offset just after the closing delimiter of an end token (its value may hold trimmed
    whitespace, and a raw_end holds the whole `{% endraw %}`)."""
    for marker in ("%}", "}}", "#}"):
        k = end.value.find(marker)
        if k >= 0:
            return end.pos + k + 2
    return end.pos + len(end.value)


class KeptWhitespace(NamedTuple):
    """Whitespace around a comment that jinja2's lstrip_blocks/trim_blocks remove and the runtime
    keeps (it applies them to `{% %}` tags only)."""

    indent: str  # the spaces/tabs before the comment on its line ("" if none is removed)
    newline: int | None  # offset of the newline after the comment (None if none is removed)
    end: Token | None  # the comment_end token


class SourceMap:
    """The normalised source and its jinja2 tokens, each with its offset, line and column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.toks: list[Token] = []
        self.keyed: dict[tuple, list[Token]] = {}  # node key -> its tokens in source order
        self.hang_braces: list[Token] = []  # `}` of a `}}` that ends a `{{ }}` tag early
        self._tokenize()
        self._classify()

    # lines and columns
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

    # tokens
    def _tokenize(self) -> None:
        cursor = 0
        tag = -1
        for _lineno, typ, value in LEX_ENV.lexer.tokeniter(self.text, None):
            if not value:
                continue
            pos = self.text.find(value, cursor)
            if pos < 0:
                pos = cursor
            line, col = self.line_col(pos)
            tok = Token(len(self.toks), pos, line, col, typ, value)
            if typ in ("block_begin", "variable_begin"):
                tag = tok.index
            tok.tag = tag
            if typ in ("block_end", "variable_end"):
                tag = -1
            self.toks.append(tok)
            cursor = pos + len(value)

    def has_assign(self, i: int) -> bool:
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
        expect_keyword = False  # in a block tag, before its keyword
        tag_kw = ""
        stack: list[str] = []  # open block tags
        prev: Token | None = None
        prev2: Token | None = None
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
                expect_keyword = state == "block"
                tag_kw = ""
                prev = prev2 = None
                continue
            if typ in ("block_end", "variable_end"):
                state = None
                continue
            key: tuple | None = None
            if typ == "name" and expect_keyword:
                expect_keyword = False
                tag_kw = value
                key = ("tag", self._open_tag(tok, stack))
            elif typ == "name":
                key = self._name_key(value, prev, prev2, tag_kw)
            elif typ in ("string", "integer", "float"):
                key = ("const",)
            elif typ == "operator":
                if value in _KEY_OPERATORS:
                    key = ("op", value)
                elif (value == "}" and state == "variable"
                      and self.text.startswith("}}", tok.pos)):
                    self.hang_braces.append(tok)
            if key is not None:
                self.keyed.setdefault(key, []).append(tok)
            prev2, prev = prev, tok

    def _open_tag(self, tok: Token, stack: list[str]) -> str:
        """The key of a block tag's keyword (``else`` of a ``for`` is ``for-else``); keeps
        ``stack``, the open block tags, up to date."""
        value = tok.value
        if value == "else":
            return "for-else" if stack and stack[-1] == "for" else "else"
        if value.startswith("end"):
            if stack and stack[-1] == value[3:]:
                stack.pop()
        elif value in _BLOCK_TAGS or (value == "set" and not self.has_assign(tok.index)):
            stack.append(value)
        return value

    @staticmethod
    def _name_key(value: str, prev: Token | None, prev2: Token | None,
                  tag_kw: str) -> tuple | None:
        """The key of a name inside a tag, None for names that introduce no node of their own."""
        if prev is not None and prev.type == "operator" and prev.value in (".", "|"):
            return None  # attribute or filter name
        if prev is not None and prev.type == "name" and (
                prev.value == "is" or (prev.value == "not" and prev2 is not None
                                       and prev2.type == "name" and prev2.value == "is")):
            return None  # test name
        if prev is not None and prev2 is None and prev.value in ("macro", "filter", "block"):
            return None  # macro / filter / block name after the tag keyword
        if value in ("and", "or", "if", "is"):
            return ("kw", value)
        if value in _CONST_NAMES:
            return ("const",)
        if value in _EXPR_KEYWORDS or tag_kw in _NO_IDENT_TAGS:
            return None
        return ("ident", value)

    def next_sig(self, tok: Token, skip: Iterable[str] = ()) -> Token | None:
        """The next non-whitespace token after ``tok`` in the same tag (skipping names in skip)."""
        for nxt in self.toks[tok.index + 1:]:
            if nxt.type == "whitespace" or (nxt.type == "name" and nxt.value in skip):
                continue
            if nxt.type in ("block_end", "variable_end"):
                return None
            return nxt
        return None

    def expression_start(self, tok: Token) -> int:
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

    def tag_end(self, tok: Token) -> int:
        for t in self.toks[tok.index:]:
            if t.type in ("block_end", "variable_end"):
                return t.pos
        return len(self.text)

    def prev_tag_end(self, i: int) -> Token | None:
        """The end token of the tag just before token ``i`` (None if ``i`` is inside a tag)."""
        for t in reversed(self.toks[:i]):
            if t.type in _TAG_ENDS:
                return t
            if t.type in _TAG_BEGINS:
                return None
        return None

    def next_tag_begin(self, i: int) -> Token | None:
        for t in self.toks[i + 1:]:
            if t.type in _TAG_BEGINS:
                return t
        return None

    def kept_whitespace(self, i: int) -> KeptWhitespace:
        """For the comment opened by token ``i``: the whitespace around it that jinja2 removes
        and the runtime keeps, unless a ``-`` on it or on the neighbouring tag removes it in
        both engines (or ``{#+`` keeps the indentation in both)."""
        tok = self.toks[i]
        end = next((t for t in self.toks[i:] if t.type == "comment_end"), None)
        indent = ""
        if not tok.value.endswith(("-", "+")):
            before = self.text[self.line_starts[tok.line - 1]:tok.pos]
            prev_end = self.prev_tag_end(i)
            trimmed = prev_end is not None and prev_end.value.startswith("-") and \
                not self.text[marker_end(prev_end):tok.pos].strip()
            if before and not before.strip(" \t") and not trimmed:
                indent = before
        newline = None
        if end is not None and not end.value.startswith("-"):
            after = end.pos + 2
            if self.text.startswith("\n", after):
                nxt = self.next_tag_begin(end.index)
                trimmed = nxt is not None and nxt.value.endswith("-") and \
                    not self.text[after:nxt.pos].strip()
                if not trimmed:
                    newline = after
        return KeptWhitespace(indent, newline, end)


class _Registration(NamedTuple):
    key: tuple
    lineno: int


class NodePositions:
    """Where each AST node stands in the source.

    The walker registers, in source order, the key of each token a node introduces
    (:meth:`register`) and records the registrations made while walking each node (its *span*).
    :meth:`resolve` pairs the registrations of each key with that key's tokens: the first token
    on or after the node's line that no earlier registration took.
    """

    def __init__(self, src: SourceMap) -> None:
        self.src = src
        self.regs: list[_Registration] = []
        self.by_key: dict[tuple, list[int]] = {}
        self.spans: dict[int, tuple[int, int]] = {}  # id(node) -> its registrations [lo, hi)
        self.resolved: dict[int, Token] = {}

    def register(self, node: nodes.Node, key: tuple) -> int:
        idx = len(self.regs)
        self.regs.append(_Registration(key, node.lineno))
        self.by_key.setdefault(key, []).append(idx)
        return idx

    def mark(self) -> int:
        """The index of the next registration (to record spans)."""
        return len(self.regs)

    def resolve(self) -> None:
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

    def _tokens(self, node: nodes.Node) -> list[Token]:
        lo, hi = self.spans.get(id(node), (0, 0))
        return [self.resolved[i] for i in range(lo, hi) if i in self.resolved]

    def leftmost(self, node: nodes.Node) -> Token | None:
        toks = self._tokens(node)
        return min(toks, key=lambda t: t.pos) if toks else None

    def text(self, node: nodes.Node) -> str:
        """Best-effort source text of an expression node."""
        toks = self._tokens(node)
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

    def anchor(self, reg: int, node: nodes.Node | None) -> Token | None:
        """The token of registration ``reg``, else the leftmost token of ``node``."""
        if reg >= 0:
            return self.resolved.get(reg)
        return self.leftmost(node) if node is not None else None

    def place(self, tok: Token | None, reg: int, node: nodes.Node | None,
              after: bool = False) -> tuple[int, int]:
        """Line and column of a finding anchored at ``tok`` (or at the name after it when
        ``after``); without a token, the first column of the node's line."""
        if tok is not None and after:
            tok = self.src.next_sig(tok, skip=("not",)) or tok
        if tok is not None:
            return tok.line, tok.col
        line = node.lineno if node is not None else self.regs[reg].lineno
        return line, self.src.first_col(line)
