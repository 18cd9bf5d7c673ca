"""Escape token strings so control, zero-width and bidi characters cannot corrupt a terminal."""

from __future__ import annotations

import unicodedata

# A backslash is shown as itself: token text and templates hold literal `\n` far more often than a
# reader needs to tell it from a newline, and doubling it made every regex and template unreadable.
_SAFE = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def show(s: str, marks: bool = False) -> str:
    """`marks=True` also escapes combining marks and non-ASCII spaces (for component parameters, where
    a lone mark would otherwise fuse with the punctuation around it).  Text that is not NFC gets the
    characters NFC would change escaped too: conjoining jamo or a decomposed accent look exactly like
    the composed text on a terminal, which hides why two strings tokenize differently."""
    out = []
    decomposed = not s.isascii() and not unicodedata.is_normalized("NFC", s)
    for c in s:
        if c in _SAFE:
            out.append(_SAFE[c])
        elif unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") or (
                marks and (unicodedata.category(c)[0] == "M" or (c != " " and unicodedata.category(c) == "Zs"))) or (
                decomposed and _changes_under_nfc(c)):
            o = ord(c)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}")
        else:
            out.append(c)
    return "".join(out)


def _changes_under_nfc(c: str) -> bool:
    """A character NFC can change or merge with a neighbour: a combining mark, a conjoining jamo, or
    one that is not NFC by itself."""
    return (unicodedata.combining(c) > 0 or "\u1100" <= c <= "\u11ff" or "\ua960" <= c <= "\ua97f"
            or "\ud7b0" <= c <= "\ud7ff" or unicodedata.normalize("NFC", c) != c)


def clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
