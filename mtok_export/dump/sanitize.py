"""Escape token strings so control, zero-width and bidi characters cannot corrupt a terminal."""

from __future__ import annotations

import unicodedata

_SAFE = {"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show(s: str, marks: bool = False) -> str:
    """`marks=True` also escapes combining marks and non-ASCII spaces (for component parameters, where
    a lone mark would otherwise fuse with the punctuation around it)."""
    out = []
    for c in s:
        if c in _SAFE:
            out.append(_SAFE[c])
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or (
                marks and (unicodedata.category(c)[0] == "M" or (c != " " and unicodedata.category(c) == "Zs"))):
            o = ord(c)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
        else:
            out.append(c)
    return "".join(out)


def clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
