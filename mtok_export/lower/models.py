"""Model and added-token lowering (spec 2.5, 2.7): fields the runtime ignores become losses;
added tokens outside the model vocab join it so the runtime can decode them."""

from __future__ import annotations

import math
import unicodedata
from array import array
from dataclasses import replace
from itertools import chain

from .. import cache
from .. import losses as L
from ..chat.render import renders
from ..corpus import builtin_chats
from ..ir import Pattern
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir.byte_level import bytes_to_token
from ..ir.sentencepiece import BYTE_PIECE, TRAILING_SPACE
from . import unigram_viterbi
from . import whole_words

# A Unigram score the runtime's Viterbi treats as no piece at all: any path through it sums to at most
# -1e17, which TC UnigramModel::tokenize takes as unreachable (and then falls back to unk as it does
# where no piece ends).
UNREACHABLE = -1e18


def lower_model(lw, tok):
    m, jp = tok.model, "$.model"
    name = f"model {m.kind}"
    if isinstance(m, M.BPE):
        for field, code, why, example in (
            ("dropout", L.BPE_FIELD, "BPE dropout is not applied", ""),
            ("continuing_subword_prefix", L.BPE_FIELD, "continuing_subword_prefix is not applied", ""),
            ("end_of_word_suffix", L.BPE_FIELD, "end_of_word_suffix (e.g. CLIP's </w>) is not applied", "hello"),
        ):
            if getattr(m, field) not in (None, "", 0.0, False):
                patch = (f"{jp}.{field}", None)
                if field == "continuing_subword_prefix":
                    # HF builds a merge's token as a + b without b's prefix: with the prefix gone it
                    # would not load ('##h##e' is no token); the runtime joins a + b, so a merge whose
                    # concatenation is no token never applies there
                    patch = (jp, replace(m, continuing_subword_prefix=None,
                                         merges=tuple((a, b) for a, b in m.merges if a + b in m.vocab)))
                lw.loss(code, name, f"{jp}.{field}", why, example, patch=patch)
        if m.ignore_merges:
            _ignore_merges(lw, tok, m, jp, name)
        if m.unk_token is not None and not m.byte_fallback:
            lowered = _unk_table(lw, tok, m, jp)
            if lowered is None:
                lw.loss(L.UNK_DROP, name, f"{jp}.unk_token", "characters outside the vocab are dropped, not mapped "
                        "to unk", "\U0001fae0", patch=(f"{jp}.unk_token", None))
            else:
                m, tok = lowered[0], replace(tok, normalizer=lowered[1])
        m = replace(m, dropout=None, unk_token=None, continuing_subword_prefix=None,
                    end_of_word_suffix=None, fuse_unk=False, ignore_merges=False)
    elif isinstance(m, M.WordPiece):
        if m.unk_token not in m.vocab:
            tok = _no_unk(lw, tok, m, jp, name)
        if m.max_input_chars_per_word > 0x7FFFFFFF:  # the runtime keeps it in an int: 2**31+ makes every word unk
            lw.did("wordpiece-limit", f"{jp}.max_input_chars_per_word: {m.max_input_chars_per_word} written as "
                   "2147483647 (the runtime reads it into an int)")
            m = replace(m, max_input_chars_per_word=0x7FFFFFFF)
        if m.max_input_chars_per_word < 1 << 30 and any(ord(c) > 127 for t in m.vocab for c in t[:1]):
            # where it can act: a word of more than N bytes has more than N/4 characters; a normalizer
            # may decompose them first (a Hangul syllable: 3 jamo of 3 bytes), a byte-level step
            # doubles the bytes (one character per byte, up to 2 bytes each); a word is a run without
            # whitespace only where the pre-tokenizer removes it (else a line or the whole text)
            n = m.max_input_chars_per_word
            pres = _flat(tok.pre_tokenizer, P.Sequence, "pretokenizers")
            words = r"\S" if set(" \t\n\r") <= _removed_alone(pres) else r"[\s\S]"
            norms = _flat(tok.normalizer, N.Sequence, "normalizers")
            per_char = (9 if norms else 4) * (2 if any(type(x).__name__ == "ByteLevel" for x in (*pres, *norms)) else 1)
            lw.loss(L.WORDPIECE_BYTES, name, f"{jp}.max_input_chars_per_word",
                    f"the runtime counts the word limit ({n}) in bytes, HF in characters",
                    "\u4e00" * (n // 3 + 1), pattern=f"{words}{{{n // per_char + 1},}}")
    elif isinstance(m, M.Unigram):
        m = _hf_scores(lw, m, jp)
        lw.loss(L.UNIGRAM_TIES, name, f"{jp}.vocab", "segmentations with exactly equal total score are broken "
                "differently (HF keeps the longest last piece, the runtime's Viterbi the shortest); for the same "
                "pieces in another order no score in the file can change that "
                "(tests/lower/test_models_unigram_ties.py)", "77777")
        if m.unk_id is None:
            # projected as HF with unk_id 0 (HF without one raises where the runtime gives 0)
            lw.loss(L.UNIGRAM_UNK, name, f"{jp}.unk_id", "no unk_id: the format needs one; using 0",
                    patch=(f"{jp}.unk_id", 0))
            m = replace(m, unk_id=0)
        if m.byte_fallback:
            m = _byte_piece_scores(lw, m, jp)
    elif isinstance(m, M.WordLevel):
        # WordPiece whose continuation prefix can never match is exactly WordLevel: the whole
        # pre-token is looked up, anything else is unk.
        lw.did("wordlevel-as-wordpiece", f"{jp}: WordLevel as WordPiece with an unmatchable prefix")
        m = M.WordPiece(m.vocab, m.unk_token or "[UNK]", "\x00\x00", 1 << 30)
    return replace(tok, model=m)


_NOT_IN_UTF8 = {0xC0, 0xC1, *range(0xF5, 0x100)}  # bytes no text holds


def _no_unk(lw, tok, m, jp: str, name: str):
    """WordPiece whose unk token is no token (a legacy type 1's greedy matching, read as WordPiece):
    a word it cannot cover has no id, which the runtime writes as -1, where type 1 skipped each byte
    no token starts with.  Over a byte-level vocabulary those bytes are the whole difference; when
    none of them is inside a token, greedy matching never runs through one, so removing the ASCII
    ones by a split is exactly skipping them.  -> tok (with that split first in its pre-tokenizer);
    what is left is a `wordpiece-no-unk` loss (trigger: those bytes)."""
    pres = tok.pre_tokenizer.pretokenizers if isinstance(tok.pre_tokenizer, P.Sequence) else (tok.pre_tokenizer,)
    if not any(isinstance(x, P.ByteLevel) for x in pres):
        lw.loss(L.WORDPIECE_NO_UNK, name, f"{jp}.unk_token", f"unk token {m.unk_token!r} is not in the vocabulary")
        return tok
    starts = {t[:1] for t in m.vocab}
    missing = [b for b in range(256) if bytes_to_token(bytes([b])) not in starts]
    marks = {bytes_to_token(bytes([b])) for b in missing}
    inside = any(c in marks for t in m.vocab for c in t[1:])
    skipped = [b for b in missing if b < 0x80] if not inside else []
    if skipped:
        # The non-ASCII lookahead (always true) keeps the pattern on std::wregex (`lower.regex`),
        # where \x01-\x07 are those characters, not the fold engine's category markers.
        pattern = "(?!\uffff)[" + "".join(f"\\x{b:02X}" for b in skipped) + "]"
        tok = replace(tok, pre_tokenizer=P.Sequence((P.Split(Pattern(pattern, True), "Removed"), *pres)))
        lw.did("wordpiece-skip-bytes", f"{jp}.unk_token: no token starts with byte(s) "
               f"{', '.join(f'{b:#04x}' for b in skipped)}: split out and removed, as type 1 skips them")
    left = [b for b in missing if b not in skipped and b not in _NOT_IN_UTF8]
    if left:
        lw.loss(L.WORDPIECE_NO_UNK, name, f"{jp}.unk_token", f"unk token {m.unk_token!r} is not in the vocabulary "
                f"and no token starts with byte(s) {', '.join(f'{b:#04x}' for b in left[:8])}"
                + (f" (+{len(left) - 8})" if len(left) > 8 else ""),
                next((chr(b) for b in left if b < 0x80), ""), trigger=tuple(map(chr, left)))
    return tok


def _ignore_merges(lw, tok, m, jp: str, name: str):
    """HF with ignore_merges takes a pre-token that is a vocab word as it is; the runtime always merges.
    They differ exactly on the vocab words the merges do not rebuild (none: the flag changes nothing).
    Those are looked up whole by `whole_words` (its docstring says how) wherever the pre-tokenizer
    ends in ByteLevel; the pass runs last (`lw.whole_words`), once every real id is in the vocab.
    Elsewhere the loss stays: merges alone cannot do it (`whole_words` says why)."""
    missed = _words_merges_miss(m)
    if not missed:
        lw.did("ignore-merges-moot", f"{jp}.ignore_merges: every vocab word is rebuilt by its merges (no effect)")
        return
    why = whole_words.blocked(tok) or ("--ignore-merges-form merge" if lw.forms.ignore_merges_form == "merge" else "")
    if not why:
        lw.whole_words = [(w, pieces) for w, pieces in missed]
        return
    lw.loss(L.IGNORE_MERGES, name, f"{jp}.ignore_merges", f"ignore_merges: the runtime never looks up a whole word "
            f"first ({why}); {len(missed)} vocab word(s) are merged into other tokens (e.g. {missed[0][0]!r})",
            patch=(f"{jp}.ignore_merges", False))


def _words_merges_miss(m) -> list[list]:
    """The vocab words BPE without ignore_merges does not turn into themselves, shortest first, each
    with the pieces it does make ([word, [piece, ...]]).
    Cached by the vocabulary and merges (about 1 s for Llama-3's 128k words, 0.02 s to hash)."""
    blobs = (cache.strings_blob(m.vocab), array("q", m.vocab.values()).tobytes(),
             cache.strings_blob(chain.from_iterable(m.merges)))
    digest = cache.key("bpe-missed-words", blobs=blobs, files=(__file__,), dists=("tokenizers",))
    return cache.computed("bpe-missed-words", digest, lambda: _merges_miss(m),
                          valid=lambda v: isinstance(v, list) and all(isinstance(x, list) and len(x) == 2 for x in v))


def _merges_miss(m) -> list[list]:
    from tokenizers.models import BPE  # tokenizers (~10 ms): only when not cached (a warm export loads none)

    bpe = BPE(vocab=dict(m.vocab), merges=[tuple(x) for x in m.merges], ignore_merges=False)
    pieces = ((w, [t.value for t in bpe.tokenize(w)]) for w in m.vocab if len(w) > 1)
    return sorted(([w, p] for w, p in pieces if p != [w]), key=lambda x: (len(x[0]), x[0]))


UNK_MARKS = ("\u2047", "\ufffd")  # what the unk token is written as: the first not in the alphabet
UNK_COLLAPSE_PASSES = 16  # Replace(PP, P) halves a run: 16 passes fuse runs up to 65,536 unknown characters


def _unk_table(lw, tok, m, jp: str):
    """BPE with an unk token and no byte fallback: the runtime drops a character that is not in the
    vocab (spec 2.5), HF emits unk (fused with its unknown neighbours when `fuse_unk`).  Lowered as:
    the unk token is written as one character U outside the alphabet, and a code-point table at the
    end of the normalizer maps every character of planes 0-1 and every assigned one (`L.unk_table_gap`)
    outside the alphabet to U; the space the
    table makes of control/format characters becomes U too (when the space is not itself known), and
    with `fuse_unk` runs of U collapse to one.  The runtime's BPE then finds U in the vocab as the
    unk id.  -> (model, normalizer), or None where this does not hold (byte-level BPE, a merge that
    makes the unk token, a pre-tokenizer that may split between unknown characters of a fused run)."""
    pres = _flat(tok.pre_tokenizer, P.Sequence, "pretokenizers")
    unk = m.unk_token
    if unk not in m.vocab or m.mnn_byte_level or any(isinstance(x, P.ByteLevel) for x in pres):
        return None
    if any(a + b == unk for a, b in m.merges):
        return None
    splits_words = any(not (isinstance(x, P.Metaspace) and not x.split) and not _trailing_space(x) for x in pres)
    if m.fuse_unk and splits_words:
        return None
    known = {t for t in m.vocab if len(t) == 1 and t != unk}
    if any(isinstance(x, P.Metaspace) and x.replacement in known for x in pres):
        known.add(" ")  # the pre-tokenizer turns it into a known character
    mark = next((u for u in UNK_MARKS if u not in known), None)
    if mark is None:
        return None
    removed = _removed_alone(pres)
    entries = tuple((cp, mark) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and chr(cp) not in known
                    and chr(cp) != mark and not L.unk_table_gap(chr(cp)) and chr(cp) not in removed)
    steps = [N.CodepointMap(entries)]
    if " " not in known and " " not in removed:
        steps.append(N.Replace(Pattern(" "), mark))
    if m.fuse_unk:
        steps += [N.Replace(Pattern(mark * 2), mark)] * UNK_COLLAPSE_PASSES
    normalizer = N.Sequence((*_flat(tok.normalizer, N.Sequence, "normalizers"), *steps))
    lw.did("unk-table", f"{jp}.unk_token: {unk!r} written as {mark!r}; a table maps {len(entries):,} code points "
           f"outside the alphabet of {len(known)} to it" + (", runs fused" if m.fuse_unk else "")
           + (f"; not the {len(removed - known)} the pre-tokenizer removes (whitespace)" if removed - known else ""))
    lw.loss(L.UNK_TABLE_GAPS, f"model {m.kind}", f"{jp}.unk_token", "characters outside the unk table (unassigned "
            f"in Unicode {unicodedata.unidata_version} or private use, beyond plane 1) are dropped, and control/format "
            "characters become spaces before the table" + (" (then unk)" if " " not in known | removed else
                                                           " (which the pre-tokenizer removes: HF gives unk)"
                                                           if " " in removed else ""), "\U000e0080")
    lw.loss(L.UNK_SURFACE, "decoder", f"{jp}.unk_token", f"the unk token is written as {mark!r}: decode shows "
            f"{mark!r} for it, not {unk!r}", trigger=(unk,))
    vocab = {(mark if t == unk else t): i for t, i in m.vocab.items()}
    return replace(m, vocab=vocab), normalizer


def _removed_alone(pres) -> frozenset[str]:
    """The whitespace and Latin-1 characters a pre-tokenizer of `pres` removes when it stands alone
    (HF's own pre-tokenizers run the lowered Splits: a Whitespace or WhitespaceSplit is one by now).
    HF never hands them to the model, so they must not become the unk character before the split:
    a Whitespace pre-tokenizer over a vocabulary without ' ' otherwise turns every space into an unk
    id (the runtime drops what reaches its BPE outside the vocab, as HF removed it)."""
    # tokenizers (~10 ms): only for the lowerings that run HF's pre-tokenizers (WordPiece limits, unk marks)
    from tokenizers import Regex
    from tokenizers import pre_tokenizers as hf

    stages = []
    for x in pres:
        try:
            if isinstance(x, P.Split) and x.behavior == "Removed":
                pattern = Regex(x.pattern.value) if x.pattern.regex else x.pattern.value
                stages.append(hf.Split(pattern, "removed", invert=x.invert))
            elif isinstance(x, P.BertPreTokenizer):
                stages.append(hf.BertPreTokenizer())
        except Exception:  # noqa: BLE001 (a pattern Oniguruma does not compile removes nothing here)
            continue
    if not stages:
        return frozenset()
    chars = {chr(cp) for cp in range(0x100)} | {chr(cp) for cp in range(0x110000) if chr(cp).isspace()}
    return frozenset(c for c in chars if any(not st.pre_tokenize_str(c) for st in stages))


def _flat(x, seq, field: str) -> tuple:
    if x is None:
        return ()
    return tuple(getattr(x, field)) if isinstance(x, seq) else (x,)


def _trailing_space(x) -> bool:
    """The SentencePiece reader's Split that drops one trailing space: it never splits a run."""
    return isinstance(x, P.Split) and x.behavior == "Removed" and x.pattern.value == TRAILING_SPACE


def hf_f64(score: float) -> float:
    """The f64 HF `tokenizers` holds for `score` read from JSON: serde_json (without its
    float_roundtrip feature) takes the decimal digits as an integer, rounds that to f64, then divides
    by the power of ten, so it can land one ulp off the correctly rounded value Python reads.  The
    digits are Python's shortest repr, which is also what serde_json and ryu write.  A whole number
    below 1e14 (SentencePiece BPE scores are -rank) is written `N.0`: 10N and the division by ten
    are exact, so it is its own value, without the digits' round trip (0.2 s for 130k pieces)."""
    if type(score) is float and score.is_integer() and -1e14 < score < 1e14:
        return score
    return _serde_f64(score)


def _serde_f64(score: float) -> float:
    """`hf_f64` from the decimal digits."""
    text = repr(score)
    if not math.isfinite(score):
        return score
    mantissa, _, exp = text.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    f, e = float(int(whole + frac)), (int(exp) if exp else 0) - len(frac)
    f = f * float(10 ** e) if e >= 0 else f / float(10 ** -e)
    return -f if text.startswith("-") else f


def _hf_scores(lw, m, jp: str):
    """Scores as HF `tokenizers` holds them in memory (`hf_f64`).  The runtime adds the file's f64
    scores in the order HF does (best up to the start + the piece), so with HF's own values every
    comparison of two paths comes out as in HF, ties (equal f64 sums) included; only an exact tie is
    then broken differently (HF keeps the longest last piece, the runtime the shortest).  No other scores
    can break those ties HF's way: pieces that commute tie whatever their scores, and where rounding
    separates the two orders, its direction changes with the text before them (a file that fixes
    `77777` breaks `b77777`; tests/lower/test_models_unigram_ties.py)."""
    vocab = tuple((p, hf_f64(s)) for p, s in m.vocab)
    changed = sum(1 for a, b in zip(vocab, m.vocab) if a[1] != b[1])
    if changed:
        lw.did("unigram-hf-scores", f"{jp}.vocab: {changed} score(s) written as the f64 HF parses from their "
               "JSON digits (one ulp from Python's), so path sums compare as in HF")
    return replace(m, vocab=vocab)


def unigram_unk_nodes(lw, tok) -> None:
    """MNN 3.6.1 `UnigramModel::tokenize` (transformers/llm/engine/src/tokenizer/tokenizer.cpp) adds
    an unk node for the character ending at byte i only `if (best_scores[i] <= -1e17)`, i.e. where
    no piece ends at i, scored `scores_[unk_token_id_]`; HF adds one wherever no one-character piece
    starts, scored min_score - 10 (`lower.unigram_viterbi`).  They differ only at a character with no
    one-character piece that ends a longer piece (or lies in one, where the unk scores differ).  No
    file can close it: a piece carrying unk's id is skipped by that loop, any other id is not unk.
    Recorded only where the vocabulary has such a character (the loss's trigger: those characters),
    on the model as written: after `lower_added_tokens` (control pieces `UNREACHABLE`), and without
    the pieces the added-token pass splits out before either model sees them (`</s>`)."""
    m, jp, name = tok.model, "$.model", "model Unigram"
    if not isinstance(m, M.Unigram):
        return
    # HF's min score is the source's: the pieces made UNREACHABLE here were controls, scored 0 there
    hf_min = min((s for _, s in m.vocab if s > UNREACHABLE / 10), default=0.0)
    found = unigram_viterbi.differing_chars(m, hf_min, split_out={t.content for t in tok.added_tokens})
    if not found:
        return
    rt = replace(unigram_viterbi.Pieces.of(m), min_score=hf_min)
    # a piece the two loops segment differently, alone or after the word-start mark (SentencePiece's
    # prepended one); an ASCII one first: a normalizer (NFKC) may turn the others into spaces
    shows = sorted((not t.isascii(), i) for i, (t, s) in enumerate(m.vocab) if len(t) > 1 and i != m.unk_id
                   and t[-1] in found and any(unigram_viterbi.runtime_ids(rt, x) != unigram_viterbi.hf_ids(rt, x)
                                              for x in (t, "\u2581" + t)))
    example = m.vocab[shows[0][1]][0] if shows else ""
    shown = ", ".join(f"U+{ord(c):04X}" for c in sorted(found)[:8])
    shown += f" (+{len(found) - 8})" if len(found) > 8 else ""
    lw.loss(L.UNIGRAM_UNK_NODE, name, f"{jp}.vocab", f"character(s) {shown} have no piece of their own but are in "
            "longer pieces: the runtime adds an unk node only where no piece ends (HF: wherever no one-character "
            "piece starts), scored as the unk piece", example.replace("\u2581", " "), trigger=tuple(sorted(found)))


def _byte_piece_scores(lw, m, jp: str):
    """The runtime's Viterbi offers every single byte that is not itself a piece as its <0xHH> piece,
    scored with that piece's own score (TC UnigramModel::tokenize), so with SentencePiece's usual
    0.0 (the best score there is) every non-ASCII character becomes byte pieces.  HF (and
    SentencePiece) fall back to bytes only where no piece covers a character.  Scoring the byte
    pieces at the lowest other score makes any real piece win and leaves HF's unk penalty
    (min score - 10) unchanged."""
    others = [s for p, s in m.vocab if not BYTE_PIECE.fullmatch(p)]
    floor = min(others) if others else -10.0
    vocab = tuple((p, floor) if BYTE_PIECE.fullmatch(p) and s > floor else (p, s) for p, s in m.vocab)
    changed = sum(1 for a, b in zip(vocab, m.vocab) if a != b)
    if changed:
        lw.did("unigram-byte-scores", f"{jp}.vocab: {changed} <0xHH> byte piece(s) scored {floor:g} (the lowest "
               "piece score) so the runtime uses them only where no piece covers a character")
    return replace(m, vocab=vocab)


def sentencepiece_controls(lw, tok):
    """A bare SentencePiece model's reference is the sentencepiece library, which never produces a
    control piece from text (`sp-control-text`, recorded by the reader): `<s>` typed by a user is
    text.  The file follows it: those pieces leave the added-token section and the header list (so
    neither split matches their text), a Unigram model scores them `UNREACHABLE` (its Viterbi would
    otherwise match the text, at score 0), and the decoder drops them as sentencepiece's decode does.
    Their ids stay stop ids (a separate list).  `is_special()` is false for them: the header list
    is the only place it reads, and every name in it is matched in the input."""
    found = next((x for x in lw.losses if x.kind is L.SP_CONTROL_TEXT), None)
    if found is None:
        return tok
    texts = set(found.trigger)
    ids = {t.id: t.content for t in tok.added_tokens if t.special and t.content in texts}
    m = tok.model
    if isinstance(m, M.Unigram):
        m = replace(m, vocab=tuple((p, UNREACHABLE) if i in ids else (p, s) for i, (p, s) in enumerate(m.vocab)))
    pieces = [p for p, i in M.vocab_of(m).items() if i not in ids]
    # the decoder replaces within each token: only where no other piece holds the control text
    # (one search in all pieces joined by NUL, which no control text holds: a match cannot span two
    # pieces; a piece-by-piece search was controls x vocabulary, minutes for 1,000 controls in 262k)
    joined = "\0".join(pieces)
    drop = [c for i, c in sorted(ids.items())
            if not ((bool(pieces) and c in joined) if "\0" not in c else any(c in p for p in pieces))]
    steps = tuple(D.Replace(Pattern(c), "") for c in drop)
    old = tok.decoder.decoders if isinstance(tok.decoder, D.Sequence) else (tok.decoder,) if tok.decoder else ()
    lw.losses.remove(found)
    lw.did("sentencepiece-controls", f"$.added_tokens: {len(ids)} control piece(s) ({', '.join(sorted(texts))}) "
           "encoded as text, as sentencepiece does: not split out, "
           + ("never matched by the Unigram model, " if isinstance(m, M.Unigram) else "")
           + f"dropped by decode ({len(drop)} decoder Replace step(s)); not is_special()")
    return replace(tok, model=m, added_tokens=tuple(t for t in tok.added_tokens if t.id not in ids),
                   special_ids=tuple(i for i in tok.special_ids if i not in ids),
                   decoder=D.Sequence(steps + old) if steps else tok.decoder)


def lower_added_tokens(lw, tok):
    tok = sentencepiece_controls(lw, tok)
    m = tok.model
    vocab = M.vocab_of(m)
    added, special = [], list(tok.special_ids)
    for i, t in enumerate(tok.added_tokens):
        jp = f"$.added_tokens[{i}]"
        if t.single_word:
            lw.loss(L.SINGLE_WORD, f"added token {t.content!r}", f"{jp}.single_word",
                    "single_word is not checked by the runtime", f"x{t.content}", trigger=t.content,
                    patch=(f"{jp}.single_word", False))
        if t.normalized and tok.normalizer is not None:
            lw.loss(L.ADDED_NORMALIZED, f"added token {t.content!r}", f"{jp}.normalized",
                    "HF matches this token in normalized text; the runtime matches it before normalization",
                    f"a{t.content}b", trigger=t.content, patch=(f"{jp}.normalized", False))
        if t.lstrip or t.rstrip:
            if t.id in special:
                # The header split ignores lstrip/rstrip; the added-token split applies them.
                special.remove(t.id)
                lw.did("strip-tokens-not-header-special", f"{jp}: {t.content!r} split by the added-token "
                       "pass, which applies lstrip/rstrip (not listed as a header special)")
            lw.loss(L.ADDED_STRIP_ASCII, f"added token {t.content!r}", f"{jp}.lstrip/rstrip",
                    "the runtime strips only ASCII whitespace next to the token (HF: all Unicode whitespace)",
                    f"{t.content}\u3000x", trigger=t.content)
        added.append(replace(t, single_word=False, normalized=False))
    missing = sorted((t.id, t.content) for t in tok.added_tokens if vocab.get(t.content) != t.id)
    if missing:
        m = _extend_vocab(lw, m, vocab, missing)
    return replace(tok, model=m, added_tokens=tuple(added), special_ids=tuple(special))


GAP_TEXT = "<mtok-gap-{}>"  # a gap filler's text (id), see `fill_id_gaps`
# Fillers beyond the vocabulary's own size are only filled up to this many: real gaps are a few
# reserved ids (cl100k 15, o200k 18); an id of 2**31 would otherwise take the machine's memory.
MAX_GAP_FILL = 65536


def fill_id_gaps(lw, tok):
    """A BPE vocab whose ids skip some (OpenAI's cl100k as tokenizer.json: <|endofprompt|> at 100276
    after a gap) cannot be written as it is: the runtime indexes id_to_token by id (spec 2.5).  Each
    missing id gets a filler entry no input can produce: the runtime's BPE starts from single
    characters (or bytes, or `<0xHH>` pieces) and only ever builds the concatenation of a merge's two
    tokens, which is a source vocab word (HF refuses merges whose result is not), so a text of several
    characters that is neither a vocab word, an added token nor a `<0xHH>` piece is unreachable.  It is
    printable ASCII (its own surface under ByteLevel and Metaspace decoders, so `decode(id)` of a gap
    id shows what it is); HF decodes a gap id to ''.  The vocabulary sweep types every filler's text
    (`gap_fillers`): it must encode as the reference encodes it, never to a gap id."""
    m = tok.model
    if not isinstance(m, M.BPE) or not m.vocab:
        return tok
    fill = gap_filled(m.vocab, {t.content for t in tok.added_tokens})
    if not fill:
        return tok
    gaps, top = sorted(fill.values()), max(m.vocab.values())
    lw.did("id-gaps-filled", f"$.model.vocab: {len(gaps)} missing id(s) ({_id_ranges(gaps)}) filled with "
           f"unreachable entries {GAP_TEXT.format('N')!r} (the runtime needs ids 0..{top} dense)")
    return replace(tok, model=replace(m, vocab={**m.vocab, **fill}))


def gap_filled(vocab: dict, taken=frozenset()) -> dict[str, int]:
    """The filler entries (text -> id) for the ids 0..max that `vocab` lacks (`fill_id_gaps`): each
    text several characters long, neither a vocab word, one of `taken` (added tokens) nor a `<0xHH>`
    piece.  None when more ids are missing than the vocabulary holds (and over `MAX_GAP_FILL`)."""
    used = set(vocab.values())
    if not used or len(used) == max(used) + 1:
        return {}
    if max(used) + 1 - len(used) > max(len(used), MAX_GAP_FILL):
        return {}  # ids far past the vocabulary (a corrupt file): not filled; the writer names the id
    taken = set(vocab) | set(taken)
    fill = {}
    for i in range(max(used) + 1):
        if i not in used:
            text = GAP_TEXT.format(i)
            while text in taken or BYTE_PIECE.fullmatch(text):
                text += "~"
            fill[text] = i
    return fill


def gap_fillers(source, lowered) -> dict[int, str]:
    """id -> text of the entries the lowering added to fill id gaps (`fill_id_gaps`): the lowered
    vocab's ids that are neither the source's vocab nor its added tokens."""
    if not isinstance(lowered.model, M.BPE):
        return {}
    real = set(M.vocab_of(source.model).values()) | {t.id for t in source.added_tokens}
    return {i: t for t, i in lowered.model.vocab.items() if i not in real}


def _id_ranges(ids: list[int]) -> str:
    """'3, 7..9' for [3, 7, 8, 9]."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(f"{a}" if a == b else f"{a}..{b}" for a, b in runs)


def header_specials(lw, tok, turn_mark: bool = True):
    """The one special token the header list needs (spec section 1): the chat template's turn mark.

    MNN 3.6.1 compares every header special at every byte of the input (TC:197-214, about 6 ns a
    byte and token: GLM-4.7's 18 specials made encode 1.6x slower on prose, 3.8x on whitespace runs
    than MNN's exporter's file, whose specials decode to '' and so are never compared).  The engine
    reads the list for nothing else: `is_special()` serves only `decode(vector)`, which it never
    calls (stop and prefix ids are lists of their own).  The body's added-token pass splits every
    added token the same (leftmost-longest, as HF), but after each match it searches the rest of the
    text for every added token again: on a prompt dense in special tokens that is quadratic (GLM-4.7,
    30 KB chat transcript: 14 ms without a header special, 4 ms with one).  One token in the header
    that the template renders in every turn cuts a prompt into turns before that pass, and costs one
    comparison a byte.  Kept: the special token the template renders most often over the built-in
    conversations (else EOS, else BOS), unless another added token overlaps it (the header split
    would then cut where HF matches the other); the others are split by the body only, recorded as an
    edge loss (`--header-specials all` keeps them; `none` keeps not even the turn mark: as MNN's
    exporter's file, one comparison a byte less, quadratic on prompts dense in special tokens)."""
    content = {t.id: t.content for t in tok.added_tokens}
    specials = [i for i in tok.special_ids if i in content]
    counts = _rendered_specials(tok, {content[i] for i in specials})
    candidates = sorted((i for i in specials if counts.get(content[i])), key=lambda i: (-counts[content[i]], i))
    candidates += [i for role in (tok.chat.eos_token, tok.chat.bos_token) for i in specials if content[i] == role]
    others = [t.content for t in tok.added_tokens]
    keep = next(((i,) for i in candidates if turn_mark and _splits_alike(content[i], others)), ())
    dropped = len(tok.special_ids) - len(keep)
    if not dropped:
        return tok
    lw.did("header-specials", f"$.added_tokens: {len(keep)} of {len(tok.special_ids)} special tokens in the header "
           "list" + (f" ({content[keep[0]]!r}, " + ("the template's turn mark)" if counts.get(content[keep[0]])
                                                     else "the EOS/BOS token)") if keep else "")
           + "; the rest are split out by the added-token pass")
    example = next(content.get(i, str(i)) for i in tok.special_ids if i not in keep)
    lw.loss(L.SPECIAL_NOT_IN_HEADER, "added tokens", "$.added_tokens",
            f"{dropped} special token(s) (e.g. {example!r}) are not header specials: encode splits "
            "them the same, but is_special() is false for them and decode(vector) keeps them; "
            "--header-specials all keeps them (slower encode)", example)
    return replace(tok, special_ids=keep)


def _splits_alike(s: str, tokens: list[str]) -> bool:
    """Whether splitting at `s` before the added-token pass cuts where HF's leftmost-longest match over
    all `tokens` does: no other token holds `s` or ends with a beginning of it."""
    return not any(t != s and (s in t or any(t.endswith(s[:k]) for k in range(1, len(s)))) for t in tokens)


def _rendered_specials(tok, specials: set[str]) -> dict[str, int]:
    """How often the chat template itself renders each of `specials` over the built-in conversations."""
    if not tok.chat.text:
        return {}
    out: dict[str, int] = {}
    chats = builtin_chats()
    for chat, text in zip(chats, renders(tok.chat.text, chats, bos_token=tok.chat.bos_token,
                                         eos_token=tok.chat.eos_token)):
        if text is None:  # the template rejects the shape
            continue
        contents = "".join(str(m.get("content", "")) for m in chat.messages)
        for s in specials:
            if s in text and s not in contents:
                out[s] = out.get(s, 0) + text.count(s)
    return out


def _extend_vocab(lw, m, vocab: dict, missing: list):
    """Add (id, content) pairs to the model vocab so the runtime can decode them: appended densely, or
    (a dict vocab, ChatGLM3's config-declared [gMASK] 64790 after [MASK] 64789) at their ids, the ids
    between then filled by `fill_id_gaps`."""
    used = set(vocab.values())
    n = max(used) + 1 if used else 0  # the vocab's size when it is dense
    # beyond the vocab, or in a gap of it (p50k_base leaves 50256 to <|endoftext|>)
    new = [(i, c) for i, c in missing if c not in vocab and (i >= n or i not in used)]
    ids = [i for i, _ in new]
    dense = ids == list(range(n, n + len(new)))
    if not new or (not dense and (isinstance(m, M.Unigram) or used & set(ids) or len(set(ids)) < len(ids))):
        lw.loss(L.ADDED_NOT_DECODABLE, "added tokens", "$.added_tokens",
                f"{len(missing)} added token(s) are not in the model vocab and cannot be appended densely; "
                "the runtime decodes them to ''", missing[0][1])
        return m
    lw.did("added-tokens-in-vocab", f"$.added_tokens: {len(new)} token(s) " + (
        f"appended to the vocab as ids {n}..{ids[-1]}" if dense else f"put in the vocab at their ids ({_id_ranges(ids)})"))
    if isinstance(m, M.Unigram):
        return replace(m, vocab=m.vocab + tuple((c, -1e9) for _, c in new))
    return replace(m, vocab={**m.vocab, **{c: i for i, c in new}})
