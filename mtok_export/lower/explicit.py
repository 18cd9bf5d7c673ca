"""A split pattern the fold engine cannot run exactly, written for std::wregex instead: every class
and property as explicit code-point ranges (`unicode/classes.py`), so sub-categories (o200k's
`[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]`), scripts (`\\p{Han}`) and class intersection (Kimi-K2's
`[...&&[^\\p{Han}]]`) become plain ECMAScript classes, and `(?i:...)` becomes explicit case classes
(with Oniguruma's folds onto ASCII letters: `ſ` is an `s`, the Kelvin sign a `k`).

`folded(pattern)` is the fast form for the fold engine instead (`--regex-form fold`): each class or
property the fold engine misreads as its ASCII members exactly plus the marker of every fold
category it has a non-ASCII member of, so o200k's case split stays exact on ASCII and reads
non-ASCII letters as both cases; it also returns the non-ASCII code points it matches differently.

`explicit(pattern)` is None when a construct has no such form: Oniguruma's `\\w` (no union of
categories), POSIX classes, a case-insensitive non-ASCII letter or class, a multi-character fold
(`ﬆ` matches `(?i:st)`), anything else `regex.for_runtime` reports for std::wregex.  The ranges are
those of this Python's Unicode version: a character assigned later is in no class here
(`regex-unicode-version`, an edge loss)."""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from ..unicode import classes as C
from .regex_tree import ESCAPE, Item, parse, unparse

_ASCII_ESC = {"r": 13, "n": 10, "t": 9, "f": 12, "v": 11}
_MAJOR = "LMNPSZC"
_SPECIAL_IN_CLASS = set("\\]^-[")


class _NoForm(Exception):
    pass


def explicit(pattern: str) -> str | None:
    try:
        tree = parse(pattern)
        _items(tree, icase=False, atom=_atom)
    except _NoForm:
        return None
    return unparse(tree)


# what the fold engine misreads in a class or property: a sub-category or script, `&&`, a nested class
_MISREAD = re.compile(r"\\[pP]\{\^?(?![LMNPSZC]\})|&&|(?<!\\)\[")


def folded(pattern: str) -> tuple[str, C.Ranges] | None:
    """`pattern` with what the fold engine misreads written for it (see the module docstring), and the
    non-ASCII code points the written form matches differently from `pattern`; None when a class
    has no form.  Everything else stays as written (`regex.fold_form` checks it)."""
    differs: list[C.Ranges] = []

    def atom(text: str, icase: bool) -> str | None:
        if not text.startswith(("[", "\\")) or not _MISREAD.search(text, text.startswith("[")):
            return None
        s = C.intersect(_class(text) if text.startswith("[") else _escape(text[1:]), C.complement(C.SURROGATES))
        groups = C.fold_groups()
        markers = [k for k, g in groups.items() if C.intersect(s, g)]
        ascii_part = C.intersect(s, ((0, 0x7F),), C.complement(((1, 7),)))  # 1-7 now say the markers
        reads = C.union(ascii_part, *(groups[k] for k in markers))
        differs.append(C.intersect(C.union(C.intersect(s, C.complement(reads)), C.intersect(reads, C.complement(s))),
                                   ((0x80, C.MAX),)))
        return "[" + "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in ascii_part) \
            + "".join(f"\\x{k:02x}" for k in markers) + "]"

    try:
        tree = parse(pattern)
        _items(tree, icase=False, atom=atom, keep_icase=True)
    except _NoForm:
        return None
    return unparse(tree), C.union(*differs)


def _items(branches: list[list[Item]], icase: bool, atom, keep_icase: bool = False) -> None:
    """Rewrite each atom of `branches` in place with `atom(text, icase)` (None: keep it); `(?i:` groups
    become explicit case classes, or stay for the fold engine's own ASCII folding (`keep_icase`)."""
    for b in branches:
        out: list[Item] = []
        for it in b:
            if it.is_group:
                if it.text == "(?i:" and not keep_icase:
                    it.text = "(?:"
                    _items(it.branches, True, atom)
                elif it.text in ("(", "(?:", "(?!", "(?=") or it.text == "(?i:":
                    _items(it.branches, icase, atom, keep_icase)
                else:
                    raise _NoForm(it.text)
                out.append(it)
                continue
            out.append(it)
            if it.is_assertion or it.text in (".",) or it.text.startswith("(?"):
                if it.text.startswith("(?"):
                    raise _NoForm(it.text)
                continue
            got = atom(it.text, icase)
            if got is not None:
                it.text = got
        if icase:
            _check_multi_folds(b)
        b[:] = out


def _check_multi_folds(branch: list[Item]) -> None:
    """Runs of unquantified literal letters in a case-insensitive branch must hold no string a single
    character folds to (checked on the written items: `[sSſ]` is an s)."""
    run = ""
    for it in branch + [Item("")]:
        letter = it.text[1] if len(it.text) > 2 and it.text.startswith("[") and it.text[1].isalpha() else ""
        if letter and not it.quant:
            run += letter.lower()
            continue
        if any(f in run for f in multi_folds()):
            raise _NoForm("a multi-character case fold")
        run = ""


def _atom(text: str, icase: bool) -> str | None:
    """The explicit form of one atom, or None to keep it as written."""
    if text.startswith("["):
        return _emit(_fold(_class(text), icase))
    if text.startswith("\\"):
        e = text[1:]
        if e in _ASCII_ESC or (len(e) == 3 and e[0] == "x") or (len(e) == 1 and not e.isalnum()):
            return _literal(_point(e), icase)
        return _emit(_fold(_escape(e), icase))
    if len(text) == 1:
        return _literal(ord(text), icase)
    raise _NoForm(text)


def _literal(cp: int, icase: bool) -> str | None:
    if not icase or not chr(cp).isalpha():
        return None
    if cp > 127:
        raise _NoForm("a case-insensitive non-ASCII letter")
    return _emit(_fold(((cp, cp),), True))


@lru_cache(maxsize=1)
def _folds() -> dict[int, tuple[int, ...]]:
    """ASCII letter -> every code point Oniguruma's case folding matches it with (both cases, plus
    the non-ASCII characters whose folding is that single letter)."""
    out: dict[int, list[int]] = {}
    for c in map(chr, range(sys.maxunicode + 1)):
        if 0xD800 <= ord(c) <= 0xDFFF:
            continue
        f = c.casefold()
        if len(f) == 1 and "a" <= f <= "z":
            out.setdefault(ord(f), []).append(ord(c))
    return {k: tuple(v) for k, v in out.items()}


@lru_cache(maxsize=1)
def multi_folds() -> tuple[str, ...]:
    """ASCII strings some single character folds to (ﬆ -> st): a case-insensitive literal run holding one
    matches that character too, which no class can say."""
    return tuple(sorted({f for c in map(chr, range(0x80, sys.maxunicode + 1)) if not 0xD800 <= ord(c) <= 0xDFFF
                         for f in [c.casefold()] if len(f) > 1 and f.isascii()}))


def _fold(s: C.Ranges, icase: bool) -> C.Ranges:
    if not icase:
        return s
    if s and s[-1][1] > 127:
        raise _NoForm("a case-insensitive class with non-ASCII characters")
    extra = [cp for letter, cps in _folds().items() for cp in cps
             if C.contains(s, letter) or C.contains(s, ord(chr(letter).upper()))]
    return C.union(s, C.ranges_of(extra))


def _point(e: str) -> int:
    if e in _ASCII_ESC:
        return _ASCII_ESC[e]
    if e[0] == "x" and len(e) == 3:
        return int(e[1:], 16)
    if e[0] == "u" and len(e) == 5:
        return int(e[1:], 16)
    return ord(e)


def _escape(e: str) -> C.Ranges:
    if e in ("s", "S"):
        return C.WHITE_SPACE if e == "s" else C.complement(C.WHITE_SPACE)
    if e in ("d", "D"):
        return C.category("Nd") if e == "d" else C.complement(C.category("Nd"))
    if e[:2] in ("p{", "P{") and e.endswith("}"):
        name = e[2:-1]
        neg = name.startswith("^")
        name = name.lstrip("^")
        if name == "Han":
            got = C.han()
        elif (len(name) == 1 and name in _MAJOR) or (len(name) == 2 and name[0] in _MAJOR):
            got = C.category(name)
        else:
            raise _NoForm(f"\\p{{{name}}}")
        return C.complement(got) if (e[0] == "P") != neg else got
    if e in _ASCII_ESC or (len(e) == 3 and e[0] == "x") or (len(e) == 5 and e[0] == "u") or (len(e) == 1 and not e.isalnum()):
        cp = _point(e)
        return ((cp, cp),)
    raise _NoForm(f"\\{e}")


def _class(text: str) -> C.Ranges:
    """An Oniguruma class (nested classes, `&&`) as ranges."""
    got, end = _class_at(text, 0)
    if end != len(text):
        raise _NoForm("unterminated class")
    return got


def _class_at(text: str, i: int) -> tuple[C.Ranges, int]:
    assert text[i] == "["
    i += 1
    neg = text.startswith("^", i)
    i += neg
    operands: list[C.Ranges] = []
    parts: list[C.Ranges] = []
    first = True
    prev: int | None = None  # the last single code point, for a range
    while i < len(text):
        c = text[i]
        if c == "]" and not first:
            operands.append(C.union(*parts))
            got = C.intersect(*operands)
            return (C.complement(got) if neg else got), i + 1
        first = False
        if text.startswith("&&", i):
            operands.append(C.union(*parts))
            parts, prev, i = [], None, i + 2
            continue
        if c == "[":
            if text.startswith("[:", i):
                raise _NoForm("POSIX class")
            sub, i = _class_at(text, i)
            parts.append(sub)
            prev = None
            continue
        if c == "-" and prev is not None and i + 1 < len(text) and text[i + 1] != "]":
            j = i + 1
            if text[j] == "\\":
                tok = ESCAPE.match(text, j).group()
                hi_set, j = _escape(tok[1:]), j + len(tok)
                if len(hi_set) != 1 or hi_set[0][0] != hi_set[0][1]:
                    raise _NoForm("a range ending in a class")
                hi = hi_set[0][0]
            elif text[j] == "[":
                raise _NoForm("a range ending in a class")
            else:
                hi, j = ord(text[j]), j + 1
            if hi < prev:
                raise _NoForm("an empty range")
            parts.append(((prev, hi),))
            prev, i = None, j
            continue
        if c == "\\":
            tok = ESCAPE.match(text, i).group()
            got = _escape(tok[1:])
            i += len(tok)
        else:
            got, i = ((ord(c), ord(c)),), i + 1
        parts.append(got)
        prev = got[0][0] if len(got) == 1 and got[0][0] == got[0][1] else None
    raise _NoForm("unterminated class")


def _emit(s: C.Ranges) -> str:
    """An ECMAScript class of `s` (surrogates left out: no UTF-8 text holds them)."""
    s = C.intersect(s, C.complement(C.SURROGATES))
    if not s:
        raise _NoForm("an empty class")
    return "[" + "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in s) + "]"


def _char(cp: int) -> str:
    if cp < 0x20 or cp == 0x7F:
        return f"\\x{cp:02x}"
    c = chr(cp)
    return "\\" + c if c in _SPECIAL_IN_CLASS else c
