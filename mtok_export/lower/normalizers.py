"""Normalizer lowering (spec 2.3, 3.1).

NFC, NFKC and SentencePiece charsmaps have three runtime forms; `Forms.normalizer_form` chooses.

* "compose" (default): the code-point rules (`code_point_rules`: the code-6 table, guarded so that
  control and zero-width characters stay what they are), then one literal Replace per canonical pair
  (base + mark -> composite).  Unlike the bare code-6 table this does not turn control and zero-width
  characters into spaces, and it composes the common pairs; on the built-in
  corpus (Qwen2.5, NFC) it matches HF on 1155/1163 strings against 1077 for the table
  (scripts/normalizer_report.py).
* "no-compose": the code-point rules only.  Decomposed input stays decomposed; everything else is
  as with "compose".
* "table": the code-6 table MNN's own exporter writes: one pass over the text, no composition,
  controls and zero-width characters become spaces.

What each costs on the device (MNN 3.6.1, `ReplaceNormalizer`, TC:1219-1233): a Replace rule copies
the text and runs `std::string::find`, which stops at every byte equal to the pattern's first byte
(and a Sequence runs each rule on every piece the added-token split leaves: a fixed cost per rule
and piece that a chat prompt multiplies).
A rule therefore costs a fixed part (a copy and a memchr of the text) plus one comparison per
occurrence of its first byte; rules anchored on an ASCII letter (`e` + U+0301) are the dear ones.
The code-6 table is one decoding pass with a binary search per code point.  Measured with
scripts/bench_device.py (CPU time of `tokenizer_encode` on its 30 KB mixed prompt, Qwen2.5
vocabulary, median of 5, best of 3 rounds; before issue 27, with one Replace per code point): without
normalizer and header list 2.38 ms; "table" 3.77 ms, "no-compose" (1,120 rules) 3.87 ms, "compose"
(2,061 rules) 5.15 ms, i.e. 1.33x "no-compose"; MNN's exporter's own file 2.62 ms.  The guarded
table needs 182 Replaces for any table (issue 27), so what exactness costs now is the 940 pairs;
scripts/bench_device.py's `exact ms` column shows it per tokenizer and prompt kind.  For a Unigram vocabulary (ChatGLM, T5) the
model's own time hides the difference.  Order does not change the cost (every rule scans the whole text).  Pruning:
a pair that holds a character the code-point rules map away can never match and is left out (12
under NFKC and charsmaps, none under NFC); for a byte-level vocabulary every other rule can change
the ids.  Patterns must be valid UTF-8 (the writer is strict), so a rule cannot be anchored on a
rarer byte than its first character's lead byte: the pairs on ASCII bases cannot be made cheaper.

Hangul: HF composes conjoining jamo (L V -> LV, LV T -> LVT).  A rule's content is whole
characters, so every composed syllable needs a rule of its own: 11,172 rules, 10,773 of them
anchored on a precomposed syllable.  No smarter encoding exists: the table and the BERT normalizer
map one code point at a time, so a syllable made from two or three input code points is the content
of a rule of its own, and for precomposed LV + T input that rule's pattern starts with the LV
syllable, which Korean text is full of.  Measured
(CPU time): 7.53 ms against 5.28 ms for "compose" on the mixed prompt, and 216 ms against 4.15 ms
on 30 KB of Korean text (52x), so it is left out and recorded (normalizer-approx).

SentencePiece charsmaps: HF's `Precompiled` replaces a whole grapheme of under 6 bytes by the
mapping of its shortest mapped prefix, so Vietnamese NFD `e` U+0302 U+0301 becomes `ê` (the acute
is lost) where sentencepiece and these rules give `ế`.  Reproducing that would take a rule per pair
and following mark (about 10^5 rules); the difference is recorded (normalizer-approx).

NFD/NFKD keep the table: their replacement lists would be 13-17k entries long."""

from __future__ import annotations

from .. import losses as L
from ..ir import Pattern
from ..ir import normalizers as N
from ..mtok.constants import TABLE_CONTROL_TO_SPACE, NormalizerCode
from ..unicode import tables, ucd
from .regex import literal_of

_TABLE_LOSS = ("per-code-point table: no composition or reordering, and the runtime turns "
               "control and zero-width characters into spaces")
_COMPOSE_LOSS = ("literal replacements compose canonical pairs in input order only: no reordering of "
                 "combining marks, no Hangul jamo composition (11,172 more rules: 52x the encode time "
                 "on Korean text)")
_PAIRS_COST = "940 more passes over the text: 1-4 ms per 30 KB for Qwen2.5 on MNN 3.6.1, 9 ms on a chat transcript"  # scripts/bench_device.py, exact ms
_NO_COMPOSE_LOSS = ("normalizer form 'no-compose': decomposed input is not composed (the default form "
                    f"composes canonical pairs: {_PAIRS_COST})")
_FAST_LOSS = ("normalizer form 'table': no composition, and the runtime turns control and zero-width characters "
              f"into spaces (the default form composes canonical pairs: {_PAIRS_COST})")
_CHARSMAP_LOSS = ("; the charsmap's other multi-code-point rules are not carried, and HF maps a short grapheme by "
                  "its first mapped prefix only")


def lower_normalizer(lw, n, jp: str):
    if n is None:
        return None
    name = f"normalizer {n.kind}"
    if isinstance(n, N.Sequence):
        kids = [lower_normalizer(lw, c, f"{jp}.normalizers[{i}]") for i, c in enumerate(n.normalizers)]
        return N.Sequence(tuple(k for k in kids if k is not None))
    if isinstance(n, N.Prepend):
        meta = lw.meta
        if meta is not None and meta.legacy is False and (meta.tokenizer_class or "").startswith(("Llama", "Gemma")):
            lw.loss(L.METASPACE_FIRST, name, jp, "tokenizer_config.json sets legacy=false, so transformers adds "
                    f"no {n.prepend!r} after special tokens; the runtime prepends to every piece", "<s>Hi",
                    trigger=lw.specials)
        return n
    if isinstance(n, (N.CodepointMap, N.MnnBertNormalizer)):
        return n
    if isinstance(n, N.Strip):
        if not lw.target.reads(NormalizerCode.STRIP):
            lw.loss(L.STRIP_35, name, jp, f"{lw.target.name} has no Strip normalizer (code 8); dropped", " a ")
            return None
        lw.loss(L.STRIP_WHITESPACE, name, jp, "the runtime strips ASCII whitespace and Zs only (HF: all White_Space)", "\u2028a")
        if n.strip_right:  # written as it is: a runtime that reads the flag strips exactly (verify.emulate)
            lw.loss(L.STRIP_RIGHT, name, f"{jp}.strip_right", "MNN 3.6.1 does not strip trailing whitespace "
                    "(it reads strip_left only)", "a ")
        return n
    if isinstance(n, N.Replace):
        if not n.pattern.regex:
            return n
        lit = literal_of(n.pattern.value)
        if lit is not None and lit:
            lw.did("replace-regex-literal", f"{jp}: /{n.pattern.value}/ is the literal {lit!r}")
            return N.Replace(Pattern(lit), n.content)
        lw.loss(L.NORMALIZER_DROPPED, name, jp, f"regex Replace /{n.pattern.value}/ has no runtime form; dropped")
        return None
    if isinstance(n, (N.NFC, N.NFKC)):
        return _unicode_form(lw, tables.table(n.kind, progress=lw.progress), name, jp, n.kind, "unicode")
    if isinstance(n, (N.NFD, N.NFKD)):
        lw.did("unicode-table", f"{jp}: {n.kind} as a code-point table")
        lw.loss(L.NORMALIZER_TABLE, name, jp, _TABLE_LOSS, "\u0301\u0327")
        return N.CodepointMap(tables.table(n.kind, progress=lw.progress))
    if isinstance(n, N.Precompiled):
        return _unicode_form(lw, tables.charsmap_table(n.precompiled_charsmap), name, jp, "precompiled charsmap",
                             "charsmap", _CHARSMAP_LOSS)
    if isinstance(n, (N.BertNormalizer, N.Lowercase, N.StripAccents)):
        return _bert(lw, n, jp, name)
    lw.loss(L.NORMALIZER_DROPPED, name, jp, "no runtime normalizer does this; dropped")
    return None


def _unicode_form(lw, entries, name: str, jp: str, what: str, pass_name: str, extra: str = ""):
    """A per-code-point normalization (NFC/NFKC table or charsmap) in the chosen form."""
    form = lw.forms.normalizer_form
    if form == "table":
        lw.did(f"{pass_name}-table", f"{jp}: {what} as a code-point table (normalizer form 'table')")
        lw.loss(L.NORMALIZER_TABLE, name, jp, _FAST_LOSS + extra, "e\u0301\u200d")
        return N.CodepointMap(entries)
    out = as_replaces(entries, compose=form == "compose")
    lw.did(f"{pass_name}-replaces", f"{jp}: {what} as a guarded code-point table and {len(out.normalizers) - 1} "
           "literal Replace normalizers (" + (f"code points, then canonical pairs: {_PAIRS_COST})"
                                              if form == "compose" else "code points only: normalizer form 'no-compose')"))
    lw.loss(L.NORMALIZER_APPROX, name, jp, (_COMPOSE_LOSS if form == "compose" else _NO_COMPOSE_LOSS) + extra,
            "\u1100\u1161" if form == "compose" else "e\u0301")
    return out


def _bert(lw, n, jp: str, name: str):
    if isinstance(n, N.Lowercase):
        clean, chinese, strip, lower = False, False, False, True
    elif isinstance(n, N.StripAccents):
        clean, chinese, strip, lower = False, False, True, False
    else:
        clean, chinese, lower = n.clean_text, n.handle_chinese_chars, n.lowercase
        strip = lower if n.strip_accents is None else n.strip_accents
    if clean:
        lw.loss(L.BERT_CLEAN, name, jp, "clean_text keeps format (Cf) and private-use (Co) characters that HF removes, and line/paragraph "
                "separators that HF turns into spaces",
                "a\u200bb")
    if lower:
        lw.loss(L.LOWERCASE, name, jp, "the runtime lowercases one code point to one (HF uses full lowercasing)", "\u0130")
    table = None
    if strip and isinstance(n, N.StripAccents):
        # HF StripAccents drops marks (Mn, Mc, Me, as the runtime does) and decomposes nothing; the
        # runtime strips only when it has a table, so it gets one that maps nothing away.
        table = ((0x41, "A"),)
    elif strip:
        # The runtime's accent stripping also drops spacing marks (Mc: Devanagari vowel signs) and
        # skips CJK characters; HF's is NFD then dropping Mn.  A code-point table of exactly that
        # runs first: before lowercasing, as in HF (İ strips to I, then lowercases to i).
        lw.did("bert-strip-accents-table", f"{jp}: strip_accents as a NFD-then-drop-Mn code-point table before "
               "the BERT normalizer (the runtime's own stripping drops Mc marks too)")
        table = N.CodepointMap(tables.table("NFD-Mn", progress=lw.progress))
        if not clean:
            lw.loss(L.NORMALIZER_TABLE, name, jp, _TABLE_LOSS, "a\u200bb")
            lw.did("bert-normalizer", f"{jp}: {n.kind} as MNN BertNormalizer")
            return N.Sequence((table, N.MnnBertNormalizer(clean, chinese, False, lower, None)))
        # The table would turn ZWJ, ZWSP, BOM, C1 controls ... (TABLE_CONTROL_TO_SPACE) into spaces,
        # splitting words HF's clean_text joins: it removes them all (every one is category C), so
        # literal Replaces delete them first (😶 U+200D 🌫 stays one word: one [UNK], not two).
        lw.loss(L.NORMALIZER_TABLE, name, jp, "per-code-point table: no canonical reordering of the marks it keeps",
                "a\U0001d16d\U0001d165")
        lw.did("bert-clean-controls", f"{jp}: clean_text as {len(TABLE_CONTROL_TO_SPACE)} literal Replaces deleting "
               "what the strip table would turn into spaces")
        lw.did("bert-normalizer", f"{jp}: {n.kind} as MNN BertNormalizer")
        deletes = tuple(N.Replace(Pattern(chr(cp)), "") for cp in sorted(TABLE_CONTROL_TO_SPACE))
        return N.Sequence(deletes + (table, N.MnnBertNormalizer(clean, chinese, False, lower, None)))
    lw.did("bert-normalizer", f"{jp}: {n.kind} as MNN BertNormalizer" + (" + NFD table" if strip else ""))
    return N.MnnBertNormalizer(clean, chinese, strip, lower, table)


def as_replaces(entries, compose: bool = True) -> N.Sequence:
    """The code-point rules (`code_point_rules`), then (with `compose`) Replaces composing canonical
    pairs (shortest composites first, so multi-step composites build up).  Safe in sequence: outputs
    never contain a later key.  A pair is left out when it can never match: one of its characters is
    mapped away by the code-point rules and no rule before it writes that character (NFKC: `ſ` +
    U+0307; 12 of the 941 pairs under NFKC and the T5 charsmap, none under NFC)."""
    reps = list(code_point_rules(entries))
    if compose:
        keys = {chr(cp) for cp, _ in entries}
        written = {c for _, to in entries for c in to}
        for a, b in composition_pairs():
            if all(c not in keys or c in written for c in a):
                reps.append(N.Replace(Pattern(a), b))
                written.update(b)
    return N.Sequence(tuple(reps))


def code_point_rules(entries) -> tuple:
    """Normalizers mapping each code point of `entries` to its replacement, and nothing else.

    One Replace per entry is exact but costs the device a pass over the text each (1,120 under NFC);
    the code-6 table maps them all in one pass but turns the control and zero-width characters
    (`TABLE_CONTROL_TO_SPACE`, 91) into spaces.  So the table runs guarded: each such character c is
    first replaced by a sentinel s_c, a code point the table maps anyway (a CJK compatibility
    ideograph where there are enough), and the table maps s_c back to c (or to c's own replacement);
    the sentinels' own occurrences are replaced before that, by their replacements, so none reaches
    the table.  182 Replaces and a table instead of 1,120 Replaces, with the same output on every
    input the runtime decodes as UTF-8 (tests/lower/test_normalizers.py runs both over every code
    point).  Without enough sentinels whose replacement holds no control character (which rule B
    would turn into a sentinel), one Replace per entry."""
    mapping = dict(entries)
    controls = sorted(TABLE_CONTROL_TO_SPACE)
    free = lambda to: not any(ord(ch) in TABLE_CONTROL_TO_SPACE or ord(ch) in mapping for ch in to)  # noqa: E731
    pool = sorted((cp for cp, to in entries if cp not in TABLE_CONTROL_TO_SPACE and free(to)),
                  key=lambda cp: (not 0xF900 <= cp <= 0xFAFF, cp))
    if len(pool) < len(controls) or len(entries) <= 2 * len(controls) or not all(free(mapping.get(c, "")) for c in controls):
        return tuple(N.Replace(Pattern(chr(cp)), to) for cp, to in entries)
    sentinel = dict(zip(controls, pool))
    own = tuple(N.Replace(Pattern(chr(s)), mapping[s]) for s in sentinel.values())
    guard = tuple(N.Replace(Pattern(chr(c)), chr(s)) for c, s in sentinel.items())
    back = {s: mapping.get(c, chr(c)) for c, s in sentinel.items()}
    return own + guard + (N.CodepointMap(tuple(sorted((cp, back.get(cp, to)) for cp, to in entries))),)


_PAIRS: list = []


def composition_pairs() -> list[tuple[str, str]]:
    """(base + combining mark, primary composite) for every canonical pair NFC composes (in the
    reference's Unicode version, as the tables)."""
    if not _PAIRS:
        found = []
        for cp, full in tables.table("NFD"):
            c = chr(cp)
            d = ucd.decomposition(c)
            if not d or d.startswith("<"):
                continue
            parts = "".join(chr(int(x, 16)) for x in d.split())
            if len(parts) == 2 and ucd.nfc(parts) == c:
                found.append((len(full), parts, c))
        _PAIRS.extend((a, b) for _, a, b in sorted(found))
    return _PAIRS
