"""What MNN's regex engine (spec 3.3) cannot run as Oniguruma does.  Used to decide whether a
Split pattern can be written as it is."""

from __future__ import annotations

import re

# Constructs that drop a whole top-level branch (or crash the runtime when all branches go).
_UNSUPPORTED = (
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\(\?="), "positive lookahead"),
    (re.compile(r"\(\?<[A-Za-z]|\(\?P<"), "named group"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[bBAZzG]"), "anchor \\b \\B \\A \\Z \\G"),
    (re.compile(r"(?<!\\)(?:\\\\)*\\[1-9]"), "back-reference"),
    (re.compile(r"(?<![\\(])[*+?}]\?"), "lazy quantifier (run greedily)"),
    (re.compile(r"\\[pP]\{(?:L[ultmo]|N[dlo]|P[cdseifo]|S[mcko]|Z[slp]|M[nce]|C[cfson])\}"),
     "Unicode sub-category (only the first letter counts: \\p{Lu} = \\p{L})"),
    (re.compile(r"\(\?[a-hj-z]"), "inline flag other than (?i:"),
)

SPECIAL = set(r"\.^$|?*+()[]{}")


def problems(pattern: str) -> list[str]:
    """Reasons the runtime would run `pattern` differently; empty when it runs it as written."""
    out = [why for rx, why in _UNSUPPORTED if rx.search(pattern)]
    if any(ord(c) > 127 for c in pattern) and "\\p{" not in pattern and "\\P{" not in pattern:
        out.append("non-ASCII pattern runs under std::wregex (ECMAScript), not Oniguruma")
    return out


def escape(literal: str) -> str:
    """A regex matching `literal` exactly, escaping only what the runtime's parser treats as syntax."""
    return "".join("\\" + c if c in SPECIAL else c for c in literal)


def literal_of(pattern: str) -> str | None:
    """The literal a regex matches when it has no syntax at all (e.g. `Replace` with `{"Regex": " "}`)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in SPECIAL:
            out.append(pattern[i + 1])
            i += 2
        elif c in SPECIAL:
            return None
        else:
            out.append(c)
            i += 1
    return "".join(out)
