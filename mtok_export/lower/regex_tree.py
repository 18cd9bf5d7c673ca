"""A split pattern as a tree (alternation of branches, each a sequence of quantified items), for
the rewrites that need to see what follows a construct (`possessive.py`).  `unparse(parse(p)) == p`
for every pattern: the tree keeps each token's text as written.

Tokens are Oniguruma's: an escape, a class (nested classes and `&&` kept whole), a group opening,
a quantifier with its lazy `?` / possessive `+` suffix."""

from __future__ import annotations

import re
from dataclasses import dataclass

ESCAPE = re.compile(r"\\(?:[pP]\{[^}]*\}|x\{[^}]*\}|x[0-9A-Fa-f]{0,2}|u[0-9A-Fa-f]{4}|.|$)", re.S)  # $: a trailing backslash
GROUP = re.compile(r"\((?:\?(?:<[=!]|<|P<|=|!|>|[A-Za-z-]+[:)]|:)?)?")
QUANT = re.compile(r"(?:[*+?]|\{\d*(?:,\d*)?\})([?+]?)")
ASSERTIONS = frozenset({"$", "^", r"\z", r"\Z", r"\b", r"\B", r"\A", r"\G"})


@dataclass
class Item:
    """One atom and its quantifier (`quant` as written, "" for none).  `text` is the atom's text;
    a group's `text` is its opening (`(`, `(?:`, `(?i:`, `(?!`...) and `branches` its content."""
    text: str
    quant: str = ""
    branches: list[list[Item]] | None = None
    close: str = ")"  # "" for a group left unterminated

    @property
    def is_group(self) -> bool:
        return self.branches is not None

    @property
    def is_assertion(self) -> bool:
        return self.text in ASSERTIONS

    def bounds(self) -> tuple[int, int | None]:
        """(min, max) repetitions; max None = unbounded."""
        q = self.quant[:-1] if len(self.quant) > 1 and self.quant[-1] in "?+" else self.quant  # no lazy/possessive mark
        if q == "":
            return 1, 1
        if q in "*+?":
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[q]
        lo, _, hi = q[1:-1].partition(",")
        lo_n = int(lo) if lo else 0
        if "," not in q:
            return lo_n, lo_n
        return lo_n, (int(hi) if hi else None)

    @property
    def possessive(self) -> bool:
        return len(self.quant) > 1 and self.quant.endswith("+")


def class_end(pattern: str, i: int) -> int:
    """The index after the class starting at pattern[i] == '[' (nested classes counted); len(pattern)
    when unterminated."""
    depth, j = 0, i
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += len(ESCAPE.match(pattern, j).group())
            continue
        if c == "[":
            depth += 1
            j += 1
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):  # a leading ']' is a literal
                j += 1
            continue
        if c == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def parse(pattern: str) -> list[list[Item]]:
    """The top-level branches of `pattern`."""
    branches, i = _alternation(pattern, 0)
    if i < len(pattern):  # an unbalanced ')': the rest as one literal item, so unparse still round-trips
        branches[-1].append(Item(pattern[i:]))
    return branches


def _alternation(pattern: str, i: int) -> tuple[list[list[Item]], int]:
    branches: list[list[Item]] = [[]]
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == ")":
            return branches, i
        if c == "|":
            branches.append([])
            i += 1
            continue
        if c == "(":
            opening = GROUP.match(pattern, i).group()
            if opening.endswith(")"):  # an inline flag such as (?i): a token, not a group
                item, i = Item(opening), i + len(opening)
            else:
                inner, i = _alternation(pattern, i + len(opening))
                item = Item(opening, branches=inner, close=pattern[i:i + 1])
                i += len(item.close)
        elif c == "[":
            j = class_end(pattern, i)
            item, i = Item(pattern[i:j]), j
        elif c == "\\":
            tok = ESCAPE.match(pattern, i).group()
            item, i = Item(tok), i + len(tok)
        else:
            item, i = Item(c), i + 1
        m = QUANT.match(pattern, i)
        if m is not None and not item.is_assertion:
            item.quant = m.group()
            i = m.end()
        branches[-1].append(item)
    return branches, i


def unparse(branches: list[list[Item]]) -> str:
    return "|".join("".join(_item(it) for it in b) for b in branches)


def _item(it: Item) -> str:
    if it.is_group:
        return f"{it.text}{unparse(it.branches)}{it.close}{it.quant}"
    return it.text + it.quant
