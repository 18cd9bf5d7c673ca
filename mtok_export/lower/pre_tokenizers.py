"""Pre-tokenizer lowering (spec 2.4, 3.2, 3.3): what the format lacks becomes a Split pattern the
runtime's regex engine runs, or a recorded loss."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import replace
from functools import lru_cache

from .. import losses as L
from ..ir import Pattern
from ..ir import normalizers as N
from ..ir.paths import REMOVE
from ..ir import pre_tokenizers as P
from ..unicode import classes as C
from .regex import BOUND, bounded, escape, fold_form, for_runtime, runs_on_wregex
from .possessive import greedy
from .regex_tree import parse

# HF Whitespace is /\w+|[^\w\s]+/ with Oniguruma's \w, which includes marks; the runtime's does not.
WORD = r"[\w\p{M}]+|[^\w\p{M}\s]+"


@lru_cache(maxsize=1)
def word_class_diff() -> tuple[str, ...]:
    """Characters where the runtime's \\w and Oniguruma's disagree even with marks added."""
    circled = [(0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189)]
    out = ["\u200c", "\u200d"]
    out += [chr(cp) for cp in range(0x80, 0x110000) if unicodedata.category(chr(cp)) in ("No", "Pc")]
    out += [chr(cp) for lo, hi in circled for cp in range(lo, hi + 1)]
    return tuple(out)


# HF `is_punctuation`: Unicode P* plus ASCII punctuation and symbols.
# One class, not an alternation: a run of it is `[...]+`, which the fold engine matches in one loop (issue 27:
# `(?:[...]|\p{P})+` cost Falcon's file 0.4-1.3 ms per 30 KB).  Ranges only between plain characters: the
# runtime misreads `\[-`.
PUNCT = r"[!-/:-@\[\\\]^_`{-~\p{P}]"


def lower_pre_tokenizer(lw, p, jp: str):
    if p is None:
        return None
    name = f"pre_tokenizer {p.kind}"
    if isinstance(p, P.Sequence):
        kids = [lower_pre_tokenizer(lw, c, f"{jp}.pretokenizers[{i}]") for i, c in enumerate(p.pretokenizers)]
        return P.Sequence(_digit_groups(lw, [k for k in kids if k is not None], jp))
    if isinstance(p, P.BertPreTokenizer):
        lw.loss(L.WHITESPACE_CLASS, name, jp, "the runtime's BERT splitting does not treat U+0085, U+2028 or U+2029 "
                "as whitespace, which HF does", "a\u2028b", trigger=("\x85", "\u2028", "\u2029"))
        return p
    if isinstance(p, P.ByteLevel):
        if p.add_prefix_space:
            lw.loss(L.PREFIX_SPACE, name, jp, "add_prefix_space: HF adds a space before the first word, the runtime never does",
                    "Hello", patch=(jp, replace(p, add_prefix_space=False)))
        return P.ByteLevel(False, True, p.use_regex)
    if isinstance(p, P.Metaspace):
        return _metaspace(lw, p, jp, name)
    if isinstance(p, P.Split):
        return _split(lw, p, jp, name)
    if isinstance(p, (P.WhitespaceSplit, P.Whitespace)):
        lw.loss(L.WHITESPACE_CLASS, name, jp, "the runtime's \\s does not match U+0085, U+2028 or U+2029, "
                "which HF treats as whitespace", "a\x85b", trigger=("\x85", "\u2028", "\u2029"))
    if isinstance(p, P.WhitespaceSplit):
        lw.did("whitespace-split", f"{jp}: WhitespaceSplit as Split(/\\s+/, Removed)")
        return P.Split(Pattern(r"\s+", True), "Removed")
    if isinstance(p, P.Whitespace):
        lw.did("whitespace", f"{jp}: Whitespace as Split(/{WORD}/, Removed, invert)")
        lw.loss(L.WHITESPACE_WORD, name, jp, "the runtime's \\w matches every number (HF: not No, e.g. \u00b2) and no "
                "non-ASCII Pc, ZWNJ/ZWJ or circled letters (HF: it does)", "x\u00b2", trigger=word_class_diff())
        return P.Split(Pattern(WORD, True), "Removed", invert=True)
    if isinstance(p, P.Digits):
        pat = r"\p{N}" if p.individual_digits else r"\p{N}+"
        lw.did("digits", f"{jp}: Digits(individual={p.individual_digits}) as Split(/{pat}/, Isolated)")
        return P.Split(Pattern(pat, True), "Isolated")
    if isinstance(p, P.Punctuation):
        return _split(lw, P.Split(Pattern(PUNCT, True), p.behavior), jp, name, "punctuation")
    if isinstance(p, P.CharDelimiterSplit):
        lw.did("char-delimiter", f"{jp}: CharDelimiterSplit({p.delimiter!r}) as Split(Removed)")
        return P.Split(Pattern(escape(p.delimiter), True), "Removed")
    lw.loss(L.PRE_TOKENIZER_DROPPED, name, jp, "no runtime pre-tokenizer does this; dropped", patch=(jp, REMOVE))
    return None


_NUMERIC_RUNS = P.Split(Pattern(r"\p{N}+", True), "Isolated")  # Digits(individual_digits=False), lowered
_DIGIT_GROUP = re.compile(r"(?:\[0-9\])+|\[0-9\]\{([1-9][0-9]?)\}")


def _digit_groups(lw, kids: list, jp: str) -> tuple:
    r"""`Digits` (numeric runs) followed by a Split isolating groups of n ASCII digits (Falcon:
    `[0-9][0-9][0-9]`) as ONE Split: /[0-9]{n}|(?:(?![0-9]{n})\p{N})+/.  The same pieces: the second
    step only cuts inside a numeric run (ASCII digits are numeric), leftmost; its gaps there are the
    numeric characters before the next n digits, which the second alternative takes whole; outside
    the runs neither alternative matches, as neither step cut.  One pass over every pre-token less
    on the device (MNN 3.6.1, Falcon, 30 KB: 8.9 ms instead of 11.2 on the mixed prompt, 12.4
    instead of 16.3 on JSON logs; MNN's exporter's file, which drops both steps' work, 8.8 and 10.3)."""
    out = list(kids)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if a != _NUMERIC_RUNS or not isinstance(b, P.Split) or b.behavior != "Isolated" or b.invert:
            continue
        m = _DIGIT_GROUP.fullmatch(b.pattern.value) if b.pattern.regex else None
        if m is None:
            continue
        n = int(m.group(1)) if m.group(1) else b.pattern.value.count("[0-9]")
        out[i] = P.Split(Pattern(f"[0-9]{{{n}}}|(?:(?![0-9]{{{n}}})\\p{{N}})+", True), "Isolated")
        out[i + 1] = None
        lw.did("digit-groups", f"{jp}.pretokenizers: numeric runs, then groups of {n} digits, as one "
               f"Split(/{out[i].pattern.value}/, Isolated)")
    return tuple(k for k in out if k is not None)


def _metaspace(lw, p, jp: str, name: str):
    scheme = p.prepend_scheme
    if scheme == "first":
        lw.loss(L.METASPACE_FIRST_PRE, name, jp, "prepend_scheme 'first': the runtime also prepends after special tokens",
                "<s>Hi", patch=(jp, replace(p, prepend_scheme="always")))
        scheme = "always"
    out = P.Metaspace(p.replacement, scheme, split=False)
    if not p.split:
        return out
    # HF splits on the replacement, keeping it at the start of each piece (MergedWithNext): pieces
    # /▁?[^▁]+|▁/.  A pattern holding ▁ runs on std::wregex, whose matcher recurses per character
    # matched, so that pattern crashed the runtime on a long word (about 1,000 letters on a 256 KiB
    # thread stack).  The runtime's own Split does the same with one-character matches: each ▁ is
    # a match, which invert turns into the start of a new piece, and MergedWithPrevious appends the
    # text after it (the leading text, before any ▁, is a piece of its own).
    r = escape(p.replacement)
    lw.did("metaspace-split", f"{jp}: Metaspace split as a following Split(/{r}/, MergedWithPrevious, invert): "
           f"each {p.replacement!r} starts a piece")
    return P.Sequence((out, P.Split(Pattern(r, True), "MergedWithPrevious", invert=True)))


def replacement_as_space(lw, pre, normalizer, added_tokens):
    """HF's Metaspace prepends the replacement unless the piece already starts with it (after
    spaces became the replacement); the runtime's prepends unless the piece starts with a space, so
    a piece starting with a literal U+2581 gets a second one there (`▁` encodes as two ids).  A last
    normalizer writing the replacement as a space makes both tests the same and changes nothing
    else: Metaspace turns that space back into the replacement before anything else sees it.  Only
    when Metaspace is the first pre-tokenizer (an earlier one would see the space) and no normalized
    added token holds the replacement (it would no longer match)."""
    first = pre
    while isinstance(first, P.Sequence) and first.pretokenizers:  # Sequence[Metaspace] lowers to nested ones
        first = first.pretokenizers[0]
    if not isinstance(first, P.Metaspace) or first.prepend_scheme == "never":
        later = next((m for m in _flat_pre(pre) if isinstance(m, P.Metaspace) and m.prepend_scheme != "never"), None)
        if later is not None and later.replacement:
            lw.loss(L.METASPACE_LITERAL, "pre_tokenizer Metaspace", "$.pre_tokenizer", f"a piece that starts with a "
                    f"literal {later.replacement!r} gets a second one (the pre-tokenizer before Metaspace keeps the "
                    "space-for-replacement rewrite out)", later.replacement, trigger=(later.replacement,))
        return normalizer
    r = first.replacement
    if not r or any(t.normalized and r in t.content for t in added_tokens):
        if r:
            lw.loss(L.METASPACE_LITERAL, "pre_tokenizer Metaspace", "$.pre_tokenizer", f"a piece that starts with a "
                    f"literal {r!r} gets a second one (an added token holds it)", r, trigger=(r,))
        return normalizer
    lw.did("metaspace-replacement", f"$.normalizer: a literal {r!r} written as a space, so the runtime's Metaspace "
           "prepends exactly where HF's does (not before a piece that starts with it)")
    rule = N.Replace(Pattern(r), " ")
    if normalizer is None:
        return rule
    kids = normalizer.normalizers if isinstance(normalizer, N.Sequence) else (normalizer,)
    return N.Sequence((*kids, rule))


def _flat_pre(p) -> list:
    if p is None:
        return []
    return [x for c in p.pretokenizers for x in _flat_pre(c)] if isinstance(p, P.Sequence) else [p]


# scripts/bench_device.py, MiniMax-M3 on MNN 3.6.1: the explicit form over the fold form, per 30 KB prompt
# o200k's pieces [m, ÜNCHEN] and [d, ÉTAT] are one piece each on the fold engine: other ids for Qwen2.5's
# vocabulary (the first) and MiniMax-M3's (the second) on MNN 3.6.1 (tests/lower/test_regex_fold.py)
_FOLD_EXAMPLE = "m\u00dcNCHEN d\u00c9TAT"
_EXPLICIT_COST = "4-6x the encode time on MNN 3.6.1 (MiniMax-M3: 11-14 ms more per 30 KB of prose or code)"


def _count(s: C.Ranges) -> int:
    return sum(b - a + 1 for a, b in s)


def _categories(s: C.Ranges) -> str:
    cats = Counter(unicodedata.category(chr(cp)) for a, b in s for cp in range(a, b + 1))
    return ", ".join(f"{c} {n:,}" for c, n in cats.most_common())


def _oniguruma_class(s: C.Ranges) -> str:
    """`s` as an Oniguruma class (a loss's trigger pattern, run by HF's engine)."""
    return "[" + "".join(f"\\x{{{a:x}}}" + (f"-\\x{{{b:x}}}" if b > a else "") for a, b in s) + "]"


def _one_class(pattern: str) -> bool:
    """Is `pattern` one unquantified class (a run of it needs no group)?"""
    tree = parse(pattern)
    return len(tree) == 1 and len(tree[0]) == 1 and tree[0][0].text.startswith("[") and not tree[0][0].quant


def _split(lw, p, jp: str, name: str, pass_name: str = "split"):
    pattern = p.pattern.value if p.pattern.regex else escape(p.pattern.value)
    if not p.pattern.regex:
        lw.did("split-string", f"{jp}: String pattern {p.pattern.value!r} as the escaped regex /{pattern}/")
    behavior = p.behavior
    if behavior == "Contiguous" and not p.invert:
        pattern, behavior = (f"{pattern}+" if _one_class(pattern) else f"(?:{pattern})+"), "Isolated"
        lw.did(pass_name, f"{jp}: Contiguous as Isolated runs /{pattern}/")
    elif pass_name == "punctuation":
        lw.did(pass_name, f"{jp}: Punctuation as Split(/{pattern}/, {behavior})")
    if behavior in ("MergedWithNext", "Contiguous"):
        lw.loss(L.SPLIT_BEHAVIOR, name, jp, f"behavior {behavior} has no runtime form (it would delete the matches)",
                "a-b", patch=(jp, REMOVE))
        return None
    if behavior == "MergedWithPrevious":
        lw.loss(L.MERGED_WITH_PREVIOUS, name, jp, "MergedWithPrevious merges consecutive matches differently in the runtime",
                "a-b--c-", pattern=pattern)
    dialect = lw.meta.regex_dialect if lw.meta is not None else "oniguruma"
    written, whys = for_runtime(pattern, dialect)
    explicit = runs_on_wregex(written) and not runs_on_wregex(pattern)
    fast = fold_form(pattern, dialect) if explicit and lw.forms.regex_form == "fold" else None
    if fast is not None:
        written, whys = fast[0], []
        lw.did("regex-fold", f"{jp}: /{pattern}/ in the fold engine's form /{written}/ (regex form 'fold')")
        lw.loss(L.REGEX_FOLD, name, jp, f"pattern /{pattern}/ written for the fold engine: {_count(fast[1]):,} "
                f"non-ASCII code points ({_categories(fast[1])}) match otherwise; the default regex form "
                f"'bounded' (explicit ranges, capped) is exact on everyday text and costs {_EXPLICIT_COST}", _FOLD_EXAMPLE
                if C.contains(fast[1], 0xDC) else "", pattern=_oniguruma_class(fast[1]))
    elif explicit:
        lw.did("regex-explicit", f"{jp}: /{pattern}/ with its classes as explicit code-point ranges "
               f"({len(written):,} characters), which std::wregex runs exactly")
        lw.loss(L.REGEX_UNICODE_VERSION, name, jp, f"its ranges are Unicode {unicodedata.unidata_version}'s: a "
                "character assigned later is in none of the pattern's classes", "\U0001FAE8")
    elif written != pattern:
        lw.did("regex-rewrite", f"{jp}: /{pattern}/ written as /{written}/ (the same matches on the runtime's engine)")
    capped = bounded(written) if lw.forms.regex_form == "bounded" and runs_on_wregex(written) else None
    source_capped = bounded(greedy(pattern, dialect)) if capped is not None else None
    if source_capped is not None:
        written = capped
        lw.did("regex-bound", f"{jp}: /{pattern}/ with every repetition capped at {BOUND} (regex form 'bounded')")
        lw.loss(L.REGEX_BOUND, name, jp, f"pattern /{pattern}/ runs on std::wregex with its repetitions capped at "
                f"{BOUND}: a run of more than {BOUND} characters of one repeated class (a word, a run of CJK, of "
                f"spaces) is cut into pieces of at most {BOUND}, each merged alone; no crash, and every input with "
                f"no such run is exact", patch=(jp, P.Split(Pattern(source_capped, True), behavior, p.invert)))
    elif runs_on_wregex(written):
        lw.wregex.append(pattern)
        if explicit:
            lw.loss(L.REGEX_STACK, name, jp, f"pattern /{pattern}/ now runs on std::wregex, which recurses per "
                    "character: one piece of about 33,000 characters on an 8 MiB main-thread stack, about 4,000 on "
                    "Android's 1 MiB worker-thread stack, crashes the runtime", pattern=r"\S{4000,}|\s{4000,}")
    for why in whys:
        lw.loss(L.REGEX_UNSUPPORTED, name, jp, f"pattern /{pattern}/: {why}", pattern=pattern)
    if re.search(r"(?<!\\)(?:\\\\)*\\[sS]", written.replace("[\\s\\S]", "")):  # [\s\S]: every character
        lw.loss(L.WHITESPACE_CLASS, name, jp, "the runtime's \\s does not match U+0085, U+2028 or U+2029, which "
                "Oniguruma's does", "a\u2028b", trigger=("\x85", "\u2028", "\u2029"))
    return P.Split(Pattern(written, True), behavior, p.invert)


def _capped(p, cap: P.Split):
    """`p` (a pre-tokenizer or None) with `cap` run after it: before the first ByteLevel that only
    maps bytes (so the cap counts characters), else last."""
    kids = list(p.pretokenizers) if isinstance(p, P.Sequence) else [p] if p is not None else []
    at = next((i for i, k in enumerate(kids) if isinstance(k, P.ByteLevel) and not k.use_regex), len(kids))
    return P.Sequence(tuple(kids[:at] + [cap] + kids[at:]))


def max_word(lw, source, lowered, n: int):
    """--max-word N: a Split(/[\\s\\S]{1,N}/, Isolated) after the pre-tokenizers cuts every word
    longer than N characters into N-character pieces, so MNN's BPE, quadratic in a word's length,
    costs at most O(N^2) per N characters.  Every word up to N characters is as before.  The loss's
    patch is the same split in the source, which HF runs (the projection is exact)."""
    cap = P.Split(Pattern(r"[\s\S]{1,%d}" % n, True), "Isolated")
    lw.did("max-word", f"$.pre_tokenizer: words longer than {n:,} characters cut by Split(/{cap.pattern.value}/, Isolated)")
    lw.loss(L.MAX_WORD, "pre_tokenizer (--max-word)", "$.pre_tokenizer",
            f"--max-word {n}: a word (a piece after the pre-tokenizers) longer than {n:,} characters is cut into "
            f"{n:,}-character pieces before BPE, each merged alone: its ids differ from the source's (a long run "
            f"of one class: letters, digits, spaces, a base64 blob); every word up to {n:,} characters is exact",
            patch=("$.pre_tokenizer", _capped(source, cap)))
    return _capped(lowered, cap)


def uses_fold_engine(p) -> bool:
    """Whether a (lowered) pre-tokenizer runs a regex on the runtime's fold engine (std::wregex, which
    sees the real code points, has no fold markers)."""
    if isinstance(p, P.Sequence):
        return any(uses_fold_engine(c) for c in p.pretokenizers)
    if isinstance(p, P.Split):
        return not runs_on_wregex(p.pattern.value)
    return isinstance(p, P.ByteLevel) and p.use_regex


def regex_gaps(lw, p, jp: str):
    """The runtime's fold engine folds every non-ASCII code point to a byte in \\x01-\\x07, so those
    input bytes collide with the fold markers (spec 3.3)."""
    if uses_fold_engine(p):
        lw.loss(L.REGEX_CONTROL, "pre_tokenizer (regex)", jp,
                "input characters \\x01-\\x07 collide with the runtime regex engine's category markers",
                "\x01ctrl")
