"""Split patterns for MNN's two regex engines (spec 3.3).

The runtime picks the engine from the pattern text (`use_wregex`, UC:582-593): a pattern with a
non-ASCII character and no `\\p{`/`\\P{` runs under `std::wregex` (ECMAScript over code points);
any other runs on its own fold engine, which sees each non-ASCII character only as one of seven
category bytes.  `for_runtime` keeps the engine the pattern already selects and rewrites the
constructs whose meaning differs from Oniguruma's into forms that engine runs as Oniguruma does:

| construct | Oniguruma (HF) | fold engine | std::wregex | written as |
|---|---|---|---|---|
| `$` | before `\\n` or at the end (tiktoken's engine: at the end) | the literal `$` | at the end only | `(?![^\\n])` (both) |
| `\\z` / `\\Z` | end / end or before a final `\\n` | drops the branch / the literal `z` | an error | negative lookaheads (both) |
| `\\s` `\\S` | Unicode White_Space (25 code points) | ASCII + Zs (no U+0085/2028/2029) | the C++ locale's, ASCII only | wregex: the 25 code points spelled out |
| `.` | all but `\\n` | all but `\\n` | also not `\\r` `\\u2028` `\\u2029` | wregex: `[^\\n]` |
| `X?+` `X*+` `X++` | possessive | a literal `+` follows | an error | greedy, where equivalent (`possessive.py`) |

What has no exact form stays and is reported (`problems`), per construct and with the reason:
* fold engine: a non-ASCII literal or range is matched as its whole category (`！` = every
  punctuation mark), so a set of code points that is not a union of whole categories cannot be
  written at all; `\\d`/`\\w` are the fold categories (all N; L+N+_), not Nd / L+M+Nd+Pc;
  `\\p{Lu}` is `\\p{L}`; lookbehind, positive lookahead, anchors, back-references, lazy
  quantifiers drop or change a branch;
* wregex: `\\d \\w \\b` and POSIX classes follow the C library's classes (`\\d` ASCII only), `(?i:`, lookbehind,
  named and atomic groups and possessive quantifiers are not ECMAScript (the runtime throws).
* both: `^` (line start) needs a look at the previous character, which neither engine can.

An ASCII pattern with `\\s` could move to std::wregex (spelling `\\s` out adds non-ASCII
characters) and be exact on U+0085/2028/2029 there, but libstdc++'s std::regex matches
recursively, one frame per character: on MNN 3.6.1 a match of about 40,000 characters (a run of
spaces under `[...]+`) kills the process with SIGSEGV, where the fold engine's loop does not
(tests/lower/test_regex.py).  The fold engine's edge loss is the better trade.

The one exception: a pattern the fold engine cannot run exactly at all (o200k's sub-categories,
Kimi-K2's `\\p{Han}` and `&&`) is written with explicit code-point ranges (`explicit.py`) when
that form has no problem left; it then runs on std::wregex (or, all ASCII, still on the fold
engine), and the caller records what that costs (the stack and the Unicode version).  std::wregex
runs such a pattern 4-6x slower than the fold engine runs MNN's exporter's spelling, whatever the
class sizes (scripts/bench_device.py); `fold_form` is the fast alternative (`--regex-form fold`).

No exact form of such a pattern avoids the recursion: `bounded` is the crash-free one that is exact
up to a length (`--regex-form bounded`).  Why none is exact at every length, on MNN 3.6.1: a Split
decides each boundary from the text at and after the position where the iterator stands (ECMAScript
has no lookbehind, and the behaviours the format stores, Isolated, Removed and MergedWithPrevious,
only keep, drop or glue what the matches and gaps already cut); so a split whose boundaries depend
on where a long run started (`[一-龥]+` Isolated: a boundary where the class changes) or on what
follows a long run (o200k: `ʰ` before `ÀÀ…À` is its own piece unless a lowercase letter ends the run)
needs one match, or one lookahead, over the whole run, and libstdc++ recurses once per character of
either; the fold engine, which loops, cannot tell the classes apart.  Pre-tokenizer stages only
refine the previous stage's pieces, so no sequence of them can glue chunks cut shorter."""

from __future__ import annotations

import re

from ..unicode import classes as C
from .explicit import explicit, folded
from .possessive import greedy
from .regex_tree import ESCAPE as _ESCAPE, GROUP as _GROUP, QUANT as _QUANT, parse, unparse

SPECIAL = set(r"\.^$|?*+()[]{}")

# Oniguruma's \s: Unicode White_Space (checked against HF on every code point in the tests).
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
# The same set inside an ECMAScript class: ASCII controls escaped, the rest literal (a non-ASCII
# character is what keeps the pattern on std::wregex).
_WS_CLASS = r"\t\n\v\f\r " + "\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"

_EOL = r"(?![^\n])"  # Oniguruma's $: the next character is not one other than \n
_END = r"(?![^\n]|\n)"  # \z: no next character
_END_NL = r"(?!\n?[^\n]|\n\n)"  # \Z: at the end, or before a final \n

_SUBCATEGORY = re.compile(r"(?:L[ultmo]|N[dlo]|P[cdseifo]|S[mcko]|Z[slp]|M[nce]|C[cfson])")
_MARKER_ESCAPE = re.compile(r"\\x0[1-7]")  # the fold engine's category markers, escaped


def runs_on_wregex(pattern: str) -> bool:
    """The runtime's engine choice (UC `use_wregex`)."""
    return any(ord(c) > 127 for c in pattern) and "\\p{" not in pattern and "\\P{" not in pattern


def for_runtime(pattern: str, dialect: str = "oniguruma") -> tuple[str, list[str]]:
    """`pattern` in the form the runtime's engine for it runs as Oniguruma does, and the reasons it
    still runs differently (empty: exact).  The rewrite never moves a pattern to the other engine
    (see the module docstring: std::wregex overflows its stack on long runs).  `dialect`: the
    source's engine, "oniguruma" (HF) or "tiktoken" (`possessive.greedy`)."""
    pattern = greedy(pattern, dialect)
    out, why = _for_engine(pattern, dialect)
    if why and not runs_on_wregex(pattern):  # explicit ranges: std::wregex, or ASCII classes the fold engine runs
        spelled = explicit(pattern)
        if spelled is not None:
            spelled_out, spelled_why = _for_engine(spelled, dialect)
            if not spelled_why:
                return spelled_out, []
    return out, why


def _for_engine(pattern: str, dialect: str) -> tuple[str, list[str]]:
    wide = runs_on_wregex(pattern)
    out, why = [], []

    def problem(text: str):
        if text not in why:
            why.append(text)

    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            tok = _ESCAPE.match(pattern, i).group()
            out.append(_escape_outside(tok, wide, problem))
            i += len(tok)
        elif c == "[":
            tok, i = _class(pattern, i, wide, problem)
            out.append(tok)
        elif c == "(":
            g = _GROUP.match(pattern, i).group()
            _group(g, wide, problem)
            out.append(g)
            i += len(g)
        elif c in "*+?{":
            m = _QUANT.match(pattern, i)
            if m is None:  # a '{' that is no quantifier is a literal in Oniguruma; escaped for both engines
                out.append("\\{")
                i += 1
                continue
            if m.group(1) == "+" and m.group().startswith("{") and dialect != "tiktoken":
                problem("{m,n}+: Oniguruma repeats the repetition (tiktoken's engine reads it as possessive)")
            elif m.group(1) == "+":
                problem("possessive quantifier")
            elif m.group(1) == "?" and not wide:
                problem("lazy quantifier (run greedily)")
            out.append(m.group())
            i = m.end()
        elif c == "$":
            out.append(_END if dialect == "tiktoken" else _EOL)
            i += 1
        elif c == "^":
            problem("^ (line start) anchor: neither engine can look at the previous character")
            out.append(c)
            i += 1
        elif c == "." and wide:
            out.append(r"[^\n]")
            i += 1
        else:
            if ord(c) > 127 and not wide:
                problem(f"non-ASCII {c!r} runs on the fold engine as its whole Unicode category")
            out.append(c)
            i += 1
    return "".join(out), why


def _escape_outside(tok: str, wide: bool, problem) -> str:
    e = tok[1:]
    if e == "z":
        return _END
    if e == "Z":
        return _END_NL
    if wide and e == "s":
        return f"[{_WS_CLASS}]"
    if wide and e == "S":
        return f"[^{_WS_CLASS}]"
    _escape_check(tok, wide, problem)
    return tok


def _escape_check(tok: str, wide: bool, problem) -> None:
    """Report an escape the engine reads differently from Oniguruma (kept as written)."""
    e = tok[1:]
    if e and not e[0].isascii() and not wide:
        problem(f"non-ASCII {e[0]!r} runs on the fold engine as its whole Unicode category")
    if not e or not (e[0].isascii() and e[0].isalnum()):
        return  # an escaped symbol is that character on both engines
    if e in ("r", "n", "t", "f", "v") or re.fullmatch(r"x[0-9A-Fa-f]{2}", e):
        return
    if not wide and e in ("s", "S"):
        return  # the caller records the whitespace-class loss
    if not wide and e[0] in "pP":
        sub = e[2:-1]
        if _SUBCATEGORY.fullmatch(sub):
            problem("Unicode sub-category (only the first letter counts: \\p{Lu} = \\p{L})")
        elif sub[:1] not in ("L", "N", "M", "P", "S", "Z") or len(sub) > 1:
            problem(f"\\{e[0]}{{{sub}}} is not a category the fold engine knows")
        return
    if wide and (re.fullmatch(r"u[0-9A-Fa-f]{4}", e) or e[0] in "123456789"):
        return  # ECMAScript reads \uHHHH and back-references as Oniguruma does
    if e[0] in "bBAG":
        problem("anchor \\b \\B \\A \\G")
    elif e[0] in "123456789":
        problem("back-reference")
    elif e[0] in "dDwW":
        problem(f"\\{e[0]} is " + ("the C library's class under std::wregex (\\d: ASCII digits; \\w: iswalnum and _)"
                                    if wide else "the fold engine's class (\\d: every number; \\w: letters, numbers, _)")
                + ", not Oniguruma's (\\d: Nd; \\w: letters, marks, Nd, Pc)")
    else:
        problem(f"escape \\{e} means something else (or nothing) to the runtime's engine")


def _class(pattern: str, i: int, wide: bool, problem) -> tuple[str, int]:
    """The class starting at pattern[i] == '[', rewritten; and the index after it."""
    out = ["["]
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    first = True
    while j < len(pattern):
        c = pattern[j]
        if c == "]" and not first:
            if len(out) == 1 + (out[1:2] == ["^"]):  # only fold markers: kept (an empty class is no class)
                return pattern[i:j + 1], j + 1
            out.append("]")
            return "".join(out), j + 1
        first = False
        if not wide and _fold_marker_member(pattern, j, out):
            # On the fold engine \x01-\x07 are also every non-ASCII character of a category (spec 3.3):
            # as a class member it admits them all.  Dropped, it differs only on input \x01-\x07, which
            # collides with the markers anyway (`regex_gaps` records that edge loss for every fold pattern).
            j += 1 if c != "\\" else len(_ESCAPE.match(pattern, j).group())
            continue
        if c == "\\":
            tok = _ESCAPE.match(pattern, j).group()
            j += len(tok)
            if wide and tok == "\\s":
                out.append(_WS_CLASS)
                continue
            if wide and tok in ("\\S", "\\z", "\\Z"):
                problem(f"{tok} inside a class")
            elif tok in ("\\z", "\\Z"):
                problem(f"{tok} inside a class")
            else:
                _escape_check(tok, wide, problem)
            out.append(tok)
            continue
        if c == "[":
            problem("nested class, POSIX class or class operation (Oniguruma only)")
        elif c == "&" and pattern.startswith("&&", j):
            problem("class intersection && (Oniguruma only)")
        elif ord(c) > 127 and not wide:
            problem(f"non-ASCII {c!r} runs on the fold engine as its whole Unicode category")
        out.append(c)
        j += 1
    problem("unterminated class")
    return "".join(out), j


def _fold_marker_member(pattern: str, j: int, out: list[str]) -> bool:
    """Is pattern[j] a single class member \\x01-\\x07 (literal or escaped), not a range's end?"""
    if pattern[j] == "\\":
        m = _MARKER_ESCAPE.match(pattern, j)
        end = m.end() if m else None
    else:
        end = j + 1 if "\x01" <= pattern[j] <= "\x07" else None
    if end is None or (out[-1] == "-" and len(out) > 2 + (out[1:2] == ["^"])):  # "-" after a member: a range
        return False
    return not (pattern.startswith("-", end) and not pattern.startswith("-]", end))


def _group(opening: str, wide: bool, problem) -> None:
    kind = opening[2:]
    if not opening.startswith("(?") or kind in (":", "!"):
        return
    if kind in ("<=", "<!"):
        problem("lookbehind")
    elif kind in ("<", "P<"):
        problem("named group")
    elif kind == "=":
        if not wide:
            problem("positive lookahead")
    elif kind == ">":
        problem("atomic group")
    elif kind == "i:" and not wide:
        return  # ASCII case folding, as Oniguruma's on every input but U+017F (long s) and U+212A (Kelvin)
    else:
        problem(f"inline flag {opening}" + (" (not ECMAScript)" if wide else " other than (?i:"))


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


def fold_form(pattern: str, dialect: str = "oniguruma") -> tuple[str, C.Ranges] | None:
    """The fast form of a pattern `for_runtime` writes with explicit ranges for std::wregex: on the fold
    engine, with what it misreads approximated by whole fold categories (`explicit.folded`), and the
    non-ASCII code points matched differently; None when something else keeps it from running exactly."""
    out, _ = _for_engine(greedy(pattern, dialect), dialect)
    got = folded(out)
    if got is None or runs_on_wregex(got[0]) or _for_engine(got[0], dialect)[1]:
        return None
    return got


BOUND = 256  # `bounded`'s cap: a match of 256 characters stays far inside a 256 KiB thread stack


def bounded(pattern: str, n: int = BOUND) -> str | None:
    """`pattern` with every unbounded repetition (`*`, `+`, `{m,}`, lookaheads' included) capped at
    `n`, so std::wregex recurses at most about `n` frames deep per match.  Exact wherever no repeated
    item would run over more than `n` characters (a longer run is cut into pieces of at most `n`).
    A cap reads alike in ECMAScript and Oniguruma, so the source's pattern capped the same way is
    the loss's patch, which HF runs.  None when nothing is unbounded, or a possessive quantifier is
    left (`{m,n}+` repeats the repetition in Oniguruma instead)."""
    tree = parse(pattern)
    items = list(_items(tree))
    if any(it.possessive for it in items) or all(it.bounds()[1] is not None for it in items):
        return None
    for it in items:
        lo, hi = it.bounds()
        if hi is None:
            it.quant = f"{{{lo},{max(lo, n)}}}" + ("?" if it.quant.endswith("?") else "")
    return unparse(tree)


def _items(branches):
    for branch in branches:
        for it in branch:
            yield it
            if it.is_group:
                yield from _items(it.branches)
