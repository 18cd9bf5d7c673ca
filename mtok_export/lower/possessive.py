"""Possessive quantifiers (`?+ *+ ++ {m,n}+`, tiktoken's spelling of cl100k/r50k) written as
greedy ones the runtime's engines run.  Neither engine knows them: the fold engine reads the `+`
as a literal plus sign (UC `parse_quantifier`), std::wregex throws.

A possessive item never gives back what it matched; a greedy one gives back only when what
follows it fails.  So `X?+ X*+ X++ X{m,n}+` on a single-character set X is the greedy item when
* what follows can match the empty string (it never fails, so nothing is given back), or
* what follows cannot start with a character of X (after giving one back, the next character is
  in X, so what follows fails there too): `[^\\r\\n\\p{L}\\p{N}]?+\\p{L}` is `...?\\p{L}`;
and otherwise `X*+` / `X++` / `X{m,}+` is `X*(?!X)` / `X+(?!X)` / `X{m,}(?!X)`, the lookahead refusing every shorter match
(`\\s++$` is `\\s+(?!\\s)$`).  What none of these covers stays possessive (`regex.for_runtime`
reports it).

"What follows" is read to the end of the pattern through every enclosing group; inside a repeated
group or a lookaround it is not known and the item stays.  Its first characters are computed over
cells: each ASCII code point, each non-ASCII general category (U+0085 on its own: the one
whitespace Cc), and the end of the text; a construct outside that algebra (a non-ASCII literal,
`\\p{Han}`, Oniguruma's `\\w`, which is no union of categories: it has circled letters (So) and
every N, a case-insensitive group) counts as every cell, so the rewrite is only ever skipped,
never wrong."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from .regex_tree import ESCAPE, Item, parse, unparse

_CATEGORIES = tuple("Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So Zs Zl Zp Cc Cf Cs Co Cn".split())
_NEL = "U+0085"
END = "end of text"
ALL = frozenset(range(128)) | frozenset(_CATEGORIES) | {_NEL}
_ASCII_WS = frozenset((9, 10, 11, 12, 13, 32))
_SIMPLE = {"r": 13, "n": 10, "t": 9, "f": 12, "v": 11}
_GATES = {"$": frozenset({10, END}), r"\z": frozenset({END}), r"\Z": frozenset({10, END})}  # Oniguruma's
_GATES_TIKTOKEN = {**_GATES, "$": frozenset({END})}  # tiktoken's engine: `$` is the end of the text


@lru_cache(maxsize=None)
def _category(prefix: str) -> frozenset:
    """\\p{prefix}: the ASCII code points of that (major or sub) category and its non-ASCII cells."""
    cells = {c for c in range(128) if unicodedata.category(chr(c)).startswith(prefix)}
    cells |= {k for k in _CATEGORIES if k.startswith(prefix)}
    if "Cc" in cells:
        cells.add(_NEL)
    return frozenset(cells)


def _escape_cells(e: str) -> frozenset | None:
    """The cells of one escape (without its backslash) as Oniguruma reads it; None if unknown."""
    if e in _SIMPLE:
        return frozenset({_SIMPLE[e]})
    if len(e) == 3 and e[0] == "x":
        cp = int(e[1:], 16)
        return frozenset({cp}) if cp < 128 else None
    if e in ("s", "S"):
        ws = _ASCII_WS | {"Zs", "Zl", "Zp", _NEL}
        return ws if e == "s" else ALL - ws
    if e in ("d", "D"):
        d = _category("Nd")
        return d if e == "d" else ALL - d
    if e[:2] in ("p{", "P{") and e.endswith("}"):
        name = e[2:-1]
        if not (len(name) == 1 and name in "LMNPSZC" or name in _CATEGORIES):
            return None  # a script, a binary property: not in the algebra
        cells = _category(name)
        return cells if e[0] == "p" else ALL - cells
    if len(e) == 1 and e.isascii() and not e.isalnum():
        return frozenset({ord(e)})  # an escaped symbol
    return None


def cells(atom: str) -> frozenset | None:
    """The cells a single-character atom (literal, escape, `.`, class) matches; None if it is not
    one or not in the algebra."""
    if atom == ".":
        return ALL - {10}
    if atom.startswith("\\"):
        return _escape_cells(atom[1:])
    if atom.startswith("["):
        return _class_cells(atom)
    if len(atom) == 1 and atom.isascii() and atom not in "()|":
        return frozenset({ord(atom)})
    return None


def _class_cells(text: str) -> frozenset | None:
    body = text[1:-1] if text.endswith("]") and len(text) > 2 else None
    if body is None:
        return None
    negate = body.startswith("^")
    if negate:
        body = body[1:]
    out: set = set()
    i = 0
    singles: list = []  # (cells, code point or None) in order, for ranges
    while i < len(body):
        c = body[i]
        if c == "[" or body.startswith("&&", i) or not c.isascii():
            return None
        if c == "\\":
            tok = ESCAPE.match(body, i).group()
            got = _escape_cells(tok[1:])
            if got is None:
                return None
            point = next(iter(got)) if len(got) == 1 and isinstance(next(iter(got)), int) else None
            singles.append((got, point))
            i += len(tok)
        elif c == "-" and singles and singles[-1][1] is not None and i + 1 < len(body):
            lo = singles.pop()[1]
            j = i + 1
            if body[j] == "\\":
                tok = ESCAPE.match(body, j).group()
                hi_cells, j = _escape_cells(tok[1:]), j + len(tok)
            else:
                hi_cells, j = cells(body[j]), j + 1
            if hi_cells is None or len(hi_cells) != 1 or not isinstance(next(iter(hi_cells)), int):
                return None
            hi = next(iter(hi_cells))
            if hi < lo:
                return None
            singles.append((frozenset(range(lo, hi + 1)), None))
            i = j
        else:
            singles.append((frozenset({ord(c)}), ord(c)))
            i += 1
    for got, _ in singles:
        out |= got
    return ALL - out if negate else frozenset(out)


def _first(follow, gates=_GATES) -> tuple[frozenset, bool]:
    """(the cells that can come next, where what follows can succeed; whether it can match empty)."""
    acc: set = set()
    for items in follow:
        for it in items:
            if it.is_assertion:
                return frozenset(acc | gates.get(it.text, ALL | {END})), False
            lo = it.bounds()[0]
            if it.is_group and it.text in ("(", "(?:"):
                sub = [_first((b,), gates) for b in it.branches]
                acc |= set().union(*(s for s, _ in sub))
                if lo > 0 and not any(empty for _, empty in sub):
                    return frozenset(acc), False
                continue
            got = None if it.is_group else cells(it.text)
            if got is None:  # a lookaround, a flag group, a construct outside the algebra
                return ALL | {END}, False
            acc |= got
            if lo > 0:
                return frozenset(acc), False
    return frozenset(acc), True


def greedy(pattern: str, dialect: str = "oniguruma") -> str:
    """`pattern` with each possessive quantifier the module docstring covers written greedily.
    `dialect` "tiktoken" (a rank file's regex, run by tiktoken's engine) also reads `{m,n}+` as
    possessive; Oniguruma (HF) reads it as a repeated repetition, `(?:X{m,n})+`, left as it is."""
    if "+" not in pattern:
        return pattern
    tree = parse(pattern)
    _rewrite(tree, (), dialect == "tiktoken")
    return unparse(tree)


def _rewrite(branches: list[list[Item]], follow, intervals: bool) -> None:
    for b in branches:
        out: list[Item] = []
        for k, it in enumerate(b):
            out.append(it)
            rest = None if follow is None else (b[k + 1:],) + follow
            if it.is_group:
                plain = it.text in ("(", "(?:") and it.bounds()[1] == 1
                _rewrite(it.branches, rest if plain else None, intervals)
                continue
            if not it.possessive or rest is None or (it.quant.startswith("{") and not intervals):
                continue
            mine = cells(it.text)
            if mine is None:
                continue
            first, empty = _first(rest, _GATES_TIKTOKEN if intervals else _GATES)
            if empty or not first & mine:
                it.quant = it.quant[:-1]
            elif it.bounds()[1] is None:  # X{m,}+ likewise; X{m,n}+ would refuse a longer run
                it.quant = it.quant[:-1]
                out.append(Item("(?!", branches=[[Item(it.text)]]))
        b[:] = out
