"""Code-point sets for regex classes written out as explicit ranges (`lower/explicit.py`): general
categories, White_Space and the Han script, from the Unicode data this Python pins
(`unicodedata.unidata_version`), as sorted lists of inclusive `(lo, hi)` ranges with set arithmetic.

Python has no script property, so Han is read from character names: every CJK unified or
compatibility ideograph, CJK and Kangxi radical, and the few other Han characters of Scripts.txt
(iteration marks, Hangzhou numerals, the ideographic zero, the Old Chinese and Vietnamese marks),
checked against the `regex` module's `\\p{Han}` on every code point assigned here (tests)."""

from __future__ import annotations

import sys
import unicodedata
from functools import lru_cache

Ranges = tuple[tuple[int, int], ...]
MAX = sys.maxunicode
SURROGATES: Ranges = ((0xD800, 0xDFFF),)
WHITE_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                       (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000))
_HAN_NAMES = ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH", "CJK RADICAL ", "KANGXI RADICAL ",
              "HANGZHOU NUMERAL ", "OLD CHINESE ", "VIETNAMESE ALTERNATE READING MARK ")
_HAN_ALSO = (0x3005, 0x3007, 0x303B)  # ideographic iteration mark, number zero, vertical iteration mark


def ranges_of(points) -> Ranges:
    """Sorted code points (any iterable) -> merged ranges."""
    out: list[list[int]] = []
    for cp in sorted(set(points)):
        if out and cp == out[-1][1] + 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return tuple((a, b) for a, b in out)


def union(*sets: Ranges) -> Ranges:
    merged: list[list[int]] = []
    for a, b in sorted(r for s in sets for r in s):
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return tuple((a, b) for a, b in merged)


def complement(s: Ranges) -> Ranges:
    out, at = [], 0
    for a, b in union(s):
        if a > at:
            out.append((at, a - 1))
        at = b + 1
    if at <= MAX:
        out.append((at, MAX))
    return tuple(out)


def intersect(*sets: Ranges) -> Ranges:
    """A ∩ B = ¬(¬A ∪ ¬B)."""
    return complement(union(*(complement(s) for s in sets)))


@lru_cache(maxsize=1)
def _by_category() -> dict[str, Ranges]:
    points: dict[str, list[int]] = {}
    for cp in range(MAX + 1):
        points.setdefault(unicodedata.category(chr(cp)), []).append(cp)
    return {cat: ranges_of(cps) for cat, cps in points.items()}


def category(name: str) -> Ranges:
    """A general category (`Lu`) or a major class (`L`: every L*); surrogates excluded."""
    table = _by_category()
    return union(*(r for cat, r in table.items() if cat.startswith(name) and cat != "Cs"))


@lru_cache(maxsize=1)
def han() -> Ranges:
    return ranges_of(cp for cp in range(0x2E80, MAX + 1)
                     if cp in _HAN_ALSO or unicodedata.name(chr(cp), "").startswith(_HAN_NAMES))


def contains(s: Ranges, cp: int) -> bool:
    return any(a <= cp <= b for a, b in s)


@lru_cache(maxsize=1)
def fold_groups() -> dict[int, Ranges]:
    """MNN's fold engine sees a non-ASCII code point only as one of seven bytes (`fold_text`, UC:77-106):
    marker -> the non-ASCII code points folded to it (letters 1, numbers 2, Zs 3, marks 5, punctuation
    6, symbols 7, the rest 4)."""
    non_ascii = ((0x80, MAX),)
    groups = {1: category("L"), 2: category("N"), 3: category("Zs"), 5: category("M"), 6: category("P"),
              7: category("S")}
    groups[4] = complement(union(*groups.values(), SURROGATES, ((0, 0x7F),)))
    return {k: intersect(v, non_ascii) for k, v in sorted(groups.items())}
