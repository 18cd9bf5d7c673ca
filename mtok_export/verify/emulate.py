"""Python models of what the runtime's lowered normalizers do (spec 2.3), used only to explain
mismatches: if the runtime normalizes a text differently from HF, a normalizer loss explains it."""

from __future__ import annotations

import unicodedata
from bisect import bisect_left

from ..ir import normalizers as N
from ..mtok.constants import TABLE_CONTROL_TO_SPACE as _CONTROL


def normalize(n, text: str) -> str:
    if n is None:
        return text
    if isinstance(n, N.Sequence):
        for c in n.normalizers:
            text = normalize(c, text)
        return text
    if isinstance(n, N.Prepend):
        return n.prepend + text if text else text
    if isinstance(n, N.Replace):
        return text.replace(n.pattern.value, n.content) if n.pattern.value else text
    if isinstance(n, N.Strip):
        ws = lambda c: c in " \t\n\r\f\v" or unicodedata.category(c) == "Zs"  # noqa: E731
        i, j = 0, len(text)
        while n.strip_left and i < j and ws(text[i]):
            i += 1
        while n.strip_right and j > i and ws(text[j - 1]):
            j -= 1
        return text[i:j]
    if isinstance(n, N.CodepointMap):
        return _table(n.entries, text)
    if isinstance(n, N.MnnBertNormalizer):
        out = []
        for c in text:
            cat = unicodedata.category(c)
            if n.clean_text and (c in "\x00\ufffd" or (cat == "Cc" and c not in "\t\n\r")):
                continue
            if n.clean_text and (c in "\t\n\r" or cat == "Zs"):
                c = " "
            if n.handle_chinese_chars and _cjk(ord(c)):
                c = f" {c} "
            out.append(c)
        text = "".join(out)
        if n.strip_accents and n.nfd_table is not None:
            text = "".join(c for c in _table(n.nfd_table, text, control=False) if not unicodedata.category(c).startswith("M"))
        if n.lowercase:
            text = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
        return text
    return text


def _table(entries, text: str, control: bool = True) -> str:
    keys = [cp for cp, _ in entries]
    out = []
    for c in text:
        o = ord(c)
        if control and entries and o in _CONTROL:
            out.append(" ")
            continue
        i = bisect_left(keys, o)
        out.append(entries[i][1] if i < len(keys) and keys[i] == o else c)
    return "".join(out)


def _cjk(cp: int) -> bool:
    return any(a <= cp <= b for a, b in ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
                                          (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)))
