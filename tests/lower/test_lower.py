"""Every lowering pass (each `lw.did(name, ...)` in mtok_export/lower/) against the HF behaviour it
preserves, checked on the real MNN 3.6.1 runtime.

For each pass a tiny tokenizer is built with the `tokenizers` API around the component under test
and saved as `tokenizer.json` (+ `tokenizer_config.json` where the pass reads it), then
read_model_dir -> lower(tok, "mnn-3.6") -> write_mtok -> run_runtime on strings chosen to exercise
the behaviour.  The test asserts that the pass fired, that no loss of the related code was recorded
where the pass is meant to be exact, and that the runtime's ids equal HF's:

* engine ids: `run_runtime(...).encodes[i]` (header prefix + encode) == HF
  `encode(text, add_special_tokens=True).ids`;
* raw ids: the same minus the header prefix == HF `encode(text, add_special_tokens=False).ids`.

Where MNN's own exporter (`naive_mapping.naive`) would write something else, the naive file is run as
well and must give ids different from HF's on at least one string: the pass is needed, not
decorative.  Where the naive mapping is identical, the test's docstring says so.

BPE models here are character-level vocabularies (every character of the test strings) plus a few
merges chosen so that a wrong split shows up as different ids.  They use a `Fuse` decoder, which
the lowering and the naive mapping write alike, so only the component under test differs.
One runtime process per written file, all strings in one call.
"""

from __future__ import annotations

import base64
import json
import string
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import TARGETS
from mtok_export.verify.runtime import RobustRequest, RuntimeResult, run_runtime
from tests.support.naive_mapping import naive
from tests.support.marks import MNN_MISSING, runtime

pytestmark = [runtime, MNN_MISSING]

TARGET = "mnn-3.6"
ASCII = string.ascii_letters + string.digits + string.punctuation + " "
T5_SMALL = Path(__file__).resolve().parents[2].parent / "shared/corpus/tokenizers/t5-small/tokenizer.json"


# ------------------------------------------------------------------------------------------ helpers

def char_bpe(chars, merges=(), extra=()) -> models.BPE:
    """BPE over single characters (ids in first-seen order), then `extra` tokens, then one token per merge."""
    vocab: dict[str, int] = {}
    for t in [*dict.fromkeys(chars), *extra]:
        vocab.setdefault(t, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    return models.BPE(vocab=vocab, merges=[tuple(m) for m in merges])


def bpe(chars=ASCII, merges=(), extra=(), **components) -> Tokenizer:
    tk = Tokenizer(char_bpe(chars, merges, extra))
    tk.decoder = decoders.Fuse()
    for name, value in components.items():
        setattr(tk, name, value)
    return tk


def chars_of(*texts: str) -> str:
    """Every character of `texts` and of their four normal forms, in first-seen order."""
    forms = [t for s in texts for t in (s, *(unicodedata.normalize(f, s) for f in ("NFC", "NFD", "NFKC", "NFKD")))]
    return "".join(dict.fromkeys("".join(forms)))


@dataclass
class Exported:
    hf: Tokenizer  # the saved tokenizer.json, reloaded: the reference
    src: object  # IR as read
    low: object  # IR after lower()
    lw: object  # the Lowering: .applied, .losses
    path: Path  # the written .mtok
    root: Path

    @property
    def codes(self) -> set[str]:
        return {x.code for x in self.lw.losses}

    def ids(self, text: str, special: bool = True) -> list[int]:
        return self.hf.encode(text, add_special_tokens=special).ids


def export(tmp_path: Path, tk: Tokenizer, config: dict | None = None, target: str = TARGET) -> Exported:
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    tk.save(str(src_dir / "tokenizer.json"))
    if config is not None:
        (src_dir / "tokenizer_config.json").write_text(json.dumps(config))
    src = read_model_dir(src_dir)
    low, lw = lower(src, TARGETS[target])
    path = tmp_path / "lowered.mtok"
    path.write_bytes(write_mtok(low))
    return Exported(Tokenizer.from_file(str(src_dir / "tokenizer.json")), src, low, lw, path, tmp_path)


def naive_file(ex: Exported) -> Path:
    """What MNN's own exporter writes for the same source (its prefix heuristic uses HF encode/decode)."""
    nv = naive(ex.src, lambda s: ex.hf.encode(s).ids, lambda i: ex.hf.decode([i], skip_special_tokens=False))
    path = ex.root / "naive.mtok"
    path.write_bytes(write_mtok(nv))
    return path


def assert_fired(ex: Exported, name: str):
    assert name in ex.lw.applied, f"pass {name!r} did not fire; fired: {sorted(ex.lw.applied)}"


def assert_no_loss(ex: Exported, *codes: str):
    found = [str(x) for x in ex.lw.losses if x.code in codes]
    assert not found, found


def assert_exact(ex: Exported, result: RuntimeResult, texts, suffix: tuple[int, ...] = ()):
    """Runtime engine ids == HF with specials (minus a `suffix` 3.6 cannot append); raw == HF without."""
    prefix = list(ex.low.prefix_ids)
    assert len(result.encodes) >= len(texts)
    for text, got in zip(texts, result.encodes):
        want = ex.ids(text, True)
        if suffix:
            assert want[len(want) - len(suffix):] == list(suffix)
            want = want[:len(want) - len(suffix)]
        assert got == want, f"engine ids differ from HF on {text!r}"
        assert got[:len(prefix)] == prefix
        assert got[len(prefix):] == ex.ids(text, False), f"raw ids differ from HF on {text!r}"


def assert_naive_differs(ex: Exported, texts, **kwargs) -> RuntimeResult:
    result = run_runtime(naive_file(ex), texts=texts, **kwargs)
    differing = [t for t, got in zip(texts, result.encodes) if got != ex.ids(t)]
    assert differing, "the naive mapping gives HF's ids on every string: this test does not show the pass is needed"
    return result


# ------------------------------------------------------------------------------------- normalizers

@pytest.mark.parametrize("pattern, content, texts", [
    (r"\.\.", "_", ["a..b...c", "a.b-c", "...."]),
    (" ", "\u2581", ["a b  c", "x"]),
], ids=["escaped-dots", "space"])
def test_replace_regex_literal(tmp_path, pattern, content, texts):
    """HF `Replace` with a `Regex` pattern that has no regex syntax (e.g. /\\.\\./) replaces that
    literal, non-overlapping, left to right.  The pass writes it as a literal Replace; MNN's own
    exporter writes pattern "" (a no-op), so its ids differ."""
    tk = bpe(chars_of(ASCII, content), normalizer=normalizers.Replace(Regex(pattern), content))
    ex = export(tmp_path, tk)
    assert_fired(ex, "replace-regex-literal")
    assert_no_loss(ex, "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


UNICODE_TEXTS = ["caf\u00e9", "\ufb01x", "x\u00b2", "\u212b", "\u01c4a"]


@pytest.mark.parametrize("form, pass_name, loss, extra", [
    ("NFC", "unicode-replaces", "normalizer-approx", ["cafe\u0301", "a\u200db"]),
    ("NFKC", "unicode-replaces", "normalizer-approx", ["cafe\u0301", "a\u200db"]),
    ("NFD", "unicode-table", "normalizer-table", []),
    ("NFKD", "unicode-table", "normalizer-table", []),
], ids=["NFC", "NFKC", "NFD", "NFKD"])
def test_unicode_normalizer(tmp_path, form, pass_name, loss, extra):
    """HF NFC/NFD/NFKC/NFKD: precomposed letters, ligatures, superscripts and singletons map as HF
    maps them.  NFC/NFKC become literal Replace normalizers ("unicode-replaces", which also compose
    base + mark and keep ZWJ, unlike a code-6 table); NFD/NFKD become a code-point table
    ("unicode-table").  Both are documented approximations: the recorded loss's own example must
    really differ on the runtime.  Naive differs for every form: NFD is dropped, NFKD is written as an
    NFKC table, and the NFC/NFKC tables neither compose "e\\u0301" nor keep ZWJ."""
    examples = ["\u0301\u0327", "\u1100\u1161"]
    texts = UNICODE_TEXTS + extra
    tk = bpe(chars_of(*texts, *examples, " "), normalizer=getattr(normalizers, form)())
    ex = export(tmp_path, tk)
    assert_fired(ex, pass_name)
    recorded = [x for x in ex.lw.losses if x.code == loss]
    assert recorded and recorded[0].example in examples
    result = run_runtime(ex.path, texts=texts + [recorded[0].example])
    assert_exact(ex, result, texts)
    assert result.encodes[-1] != ex.ids(recorded[0].example), "the recorded loss example does not differ"
    assert_naive_differs(ex, texts)


@pytest.mark.skipif(not T5_SMALL.is_file(), reason="shared corpus t5-small (a real precompiled_charsmap) not found")
def test_charsmap(tmp_path):
    """HF `Precompiled` (SentencePiece nmt_nfkc charsmap, taken from t5-small): full-width letters
    fold to ASCII, tab/LS/NBSP/U+2581 become a space, U+FF5E is kept (NFKC would give "~") and
    control characters are deleted (a code-6 table would turn them into spaces).  Naive writes an
    NFKC table instead of the charsmap, so it differs."""
    blob = base64.b64decode(json.loads(T5_SMALL.read_text())["normalizer"]["precompiled_charsmap"])
    texts = ["a\uff5eb", "a\u2028b", "\uff48\uff45\uff4c\uff4c\uff4f", "a\tb", "x\u2581y", "a\u00a0b", "\u2460", "\x01a",
             "\ufb01"]
    tk = bpe(chars_of(*texts, "~ "), normalizer=normalizers.Precompiled(blob))
    ex = export(tmp_path, tk)
    assert_fired(ex, "charsmap-replaces")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


BERT_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "hello", "world", "he", "##llo", "ok", "a", "b", "c", "e", "cafe", "caf",
              "##e", "caf\u00e9", "\u4e2d", "\u6587", "Hello", "WORLD", "naive", "na\u00efve", "x", "\u0301",
              "##\u0301", "\u00e9", "H\u00e9llo", "##x"]
BERT_TEXTS = ["H\u00e9llo WORLD", "\u4e2d\u6587ok", "a\tb c", "cafe\u0301 na\u00efve", "caf\u00e9", "Hello,world"]


def bert_wordpiece(normalizer) -> Tokenizer:
    tk = Tokenizer(models.WordPiece({t: i for i, t in enumerate(BERT_VOCAB)}, unk_token="[UNK]"))
    tk.normalizer = normalizer
    tk.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tk.decoder = decoders.WordPiece()
    return tk


@pytest.mark.parametrize("normalizer", [
    normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True),
    normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False),
    normalizers.Lowercase(),
    normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]),
], ids=["bert-uncased", "bert-cased", "lowercase", "nfd-lowercase-stripaccents"])
def test_bert_normalizer(tmp_path, normalizer):
    """HF BertNormalizer (clean text, CJK spacing, accent stripping through NFD, lowercasing),
    Lowercase and NFD+StripAccents: "Héllo WORLD" -> "hello world", CJK characters become words, tabs
    become spaces.  The recorded losses (bert-clean, lowercase) concern Cf/Co and İ
    characters, which these strings avoid.  Naive is IDENTICAL here: MNN's exporter maps
    BertNormalizer, Lowercase and StripAccents to the same BertNormalizer codes."""
    ex = export(tmp_path, bert_wordpiece(normalizer))
    assert_fired(ex, "bert-normalizer")
    assert_no_loss(ex, "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=BERT_TEXTS), BERT_TEXTS)


def test_bert_clean_text_deletes_what_the_strip_table_would_space(tmp_path):
    """Accent stripping runs as a code-6 table, which turns ZWJ, ZWSP, BOM, C0/C1 controls ... into
    spaces (spec 2.3.2); HF's clean_text deletes every one of them, so "a" U+200D "b" is one word
    ([UNK] here) and the emoji ZWJ sequence one [UNK].  The pass deletes them first; without the
    deletes (the table alone, as before) the runtime splits the word.  (MNN's own exporter writes
    code 7, whose stripping has other faults: `test_bert_normalizer`.)"""
    import dataclasses

    from mtok_export.ir import normalizers as IN
    from mtok_export.mtok.constants import TABLE_CONTROL_TO_SPACE

    texts = [f"a{chr(cp)}b" for cp in sorted(TABLE_CONTROL_TO_SPACE)] + ["\U0001f636\u200d\U0001f32b\ufe0f x"]
    ex = export(tmp_path, bert_wordpiece(normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                                    strip_accents=None, lowercase=True)))
    assert_fired(ex, "bert-clean-controls")
    assert ex.ids("a\u200db", False) == [0]  # HF: one word, not in the vocabulary
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    kept = tuple(c for c in ex.low.normalizer.normalizers if not isinstance(c, IN.Replace))
    assert len(kept) == 2  # the strip table and the BERT normalizer
    table_alone = tmp_path / "table-alone.mtok"
    table_alone.write_bytes(write_mtok(dataclasses.replace(ex.low, normalizer=IN.Sequence(kept))))
    got = run_runtime(table_alone, texts=texts).encodes
    assert [t for t, g in zip(texts, got) if g != ex.ids(t)] == texts


def test_bert_strip_table_without_clean_text_keeps_the_spacing_loss(tmp_path):
    """Without clean_text HF keeps U+200D, and the table still spaces it: recorded, not patched."""
    ex = export(tmp_path, bert_wordpiece(normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True,
                                                                    strip_accents=True, lowercase=True)))
    assert "bert-clean-controls" not in ex.lw.applied
    [loss] = [x for x in ex.lw.losses if x.code == "normalizer-table"]
    assert "zero-width characters into spaces" in loss.reason
    assert run_runtime(ex.path, texts=["a\u200db"]).encodes[0] == [8, 9] != ex.ids("a\u200db", False)


def test_bert_normalizer_strip_accents_alone(tmp_path):
    """HF StripAccents on its own removes combining marks (Mn, Mc, Me) but decomposes nothing:
    "Héllo" keeps its precomposed é, "cafe\\u0301" loses the mark.  Naive is identical (the same bug)."""
    ex = export(tmp_path, bert_wordpiece(normalizers.StripAccents()))
    assert_fired(ex, "bert-normalizer")
    assert_exact(ex, run_runtime(ex.path, texts=BERT_TEXTS), BERT_TEXTS)


# ---------------------------------------------------------------------------------- pre-tokenizers

def test_whitespace_split(tmp_path):
    """HF WhitespaceSplit splits on runs of whitespace (ASCII, NBSP, ideographic space) and drops
    them.  Naive is IDENTICAL: MNN's exporter writes the same Split(/\\s+/, Removed)."""
    texts = ["a  b\tc\n d", " a b ", "x\u3000y\u00a0z"]
    tk = bpe(chars_of(ASCII, "\t\n\u3000\u00a0"), merges=[("a", " "), ("x", "\u3000")],
             pre_tokenizer=pre_tokenizers.WhitespaceSplit())
    ex = export(tmp_path, tk)
    assert_fired(ex, "whitespace-split")
    assert_no_loss(ex, "regex-unsupported", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)


WHITESPACE_MERGES = [("o", ","), ("o,", " "), ("d", "!"), ("r", "_"), ("\u00e9", " "), ("x", "\u4e2d"), ("b", "\u3000"),
                     ("e", "\u0301"), ("x", "\u00b2"), ("a", "\u203f")]
WHITESPACE_CHARS = chars_of(ASCII, "\u00e9\u4e2d\u00a0\u3000\u0301\u00b2\u203f")


def test_whitespace(tmp_path):
    """HF Whitespace = /\\w+|[^\\w\\s]+/: words and punctuation runs are pieces, whitespace is
    dropped ("hello, world!!" -> hello , world !!).  Naive drops the pre-tokenizer, so merges cross
    the boundaries and its ids differ."""
    texts = ["hello, world!! foo_bar 42", "caf\u00e9 x", "x\u4e2d y", "a\u00a0b\u3000c", "a->b"]
    tk = bpe(WHITESPACE_CHARS, WHITESPACE_MERGES, pre_tokenizer=pre_tokenizers.Whitespace())
    ex = export(tmp_path, tk)
    assert_fired(ex, "whitespace")
    assert_no_loss(ex, "regex-unsupported", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


def test_whitespace_word_class(tmp_path):
    """HF's \\w (Oniguruma) = letters, marks, Nd/Nl, Pc: "cafe\\u0301" is one word, "x²" is two
    pieces (² is No), "a‿b" one word.  A mismatch is acceptable only when a recorded loss's trigger
    occurs in the string."""
    texts = ["cafe\u0301 x", "x\u00b2", "a\u203fb"]
    tk = bpe(WHITESPACE_CHARS, WHITESPACE_MERGES, pre_tokenizer=pre_tokenizers.Whitespace())
    ex = export(tmp_path, tk)
    result = run_runtime(ex.path, texts=texts)
    triggers = [t for x in ex.lw.losses for t in ([x.trigger] if isinstance(x.trigger, str) else x.trigger) if t]
    unexplained = [t for t, got in zip(texts, result.encodes)
                   if got != ex.ids(t) and not any(trig in t for trig in triggers)]
    assert not unexplained


@pytest.mark.parametrize("individual", [False, True], ids=["runs", "individual"])
def test_digits(tmp_path, individual):
    """HF Digits splits numeric characters (Nd, Nl, No, not only ASCII) from the rest: as runs
    ("abc123def" -> abc 123 def) or one per digit.  Naive differs: MNN's Digits(individual=false) does
    nothing, and Digits(individual=true) splits only ASCII digits ("x٣٤y" keeps ٣٤ merged)."""
    texts = ["abc123def 4567", "x\u0663\u0664y", "x\u00b2\u00bd", "\u2160\u2160"]
    merges = [("c", "1"), ("1", "2"), ("12", "3"), ("3", "d"), ("\u0663", "\u0664"), ("x", "\u00b2"),
              ("\u00b2", "\u00bd"), ("x", "\u0663")]
    tk = bpe(chars_of(ASCII, "\u0663\u0664\u00b2\u00bd\u2160"), merges,
             pre_tokenizer=pre_tokenizers.Digits(individual_digits=individual))
    ex = export(tmp_path, tk)
    assert_fired(ex, "digits")
    assert_no_loss(ex, "regex-unsupported", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


@pytest.mark.parametrize("behavior", ["isolated", "contiguous", "removed"])
def test_punctuation(tmp_path, behavior):
    """HF Punctuation splits at ASCII punctuation/symbols and Unicode P* (not at S* such as € ©):
    isolated "a->b!!c" -> a - > b ! ! c; contiguous -> a -> b !! c; removed -> a b c.  Contiguous has no
    runtime behavior and becomes Isolated runs /(?:...)+/.  Naive drops the pre-tokenizer (ids differ)."""
    texts = ["a->b!!c", "hi, there... ok?", "x\u00ab\u00bbx", "a-$b", "a\u20acb\u00a9c", "a^`b|~{}[]\\c"]
    merges = [("a", "-"), ("b", "!"), ("-", ">"), ("!", "!"), ("\u00ab", "\u00bb"), ("x", "\u00ab"), ("a", "\u20ac"),
              ("b", "\u00a9")]
    tk = bpe(chars_of(ASCII, "\u00ab\u00bb\u20ac\u00a9"), merges, pre_tokenizer=pre_tokenizers.Punctuation(behavior))
    ex = export(tmp_path, tk)
    assert_fired(ex, "punctuation")
    assert_no_loss(ex, "regex-unsupported", "split-behavior", "merged-with-previous", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


@pytest.mark.parametrize("delimiter", ["-", ".", "|"])
def test_char_delimiter(tmp_path, delimiter):
    """HF CharDelimiterSplit(d) splits at d and drops it: "a-b--c" -> a b c.  The pass escapes regex
    characters ('.' must not match everything).  Naive drops the pre-tokenizer (ids differ)."""
    d = delimiter
    texts = [f"a{d}b{d}{d}c", f"{d}a{d}", f"x{d}y"]
    tk = bpe(ASCII, [("a", d), (d, d), ("b", d), ("x", d)], pre_tokenizer=pre_tokenizers.CharDelimiterSplit(d))
    ex = export(tmp_path, tk)
    assert_fired(ex, "char-delimiter")
    assert_no_loss(ex, "regex-unsupported", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


@pytest.mark.parametrize("pattern, behavior, naive_differs", [
    (".", "removed", True),
    (".", "isolated", True),
    ("||", "isolated", False),
], ids=["dot-removed", "dot-isolated", "pipes-isolated"])
def test_split_string(tmp_path, pattern, behavior, naive_differs):
    """HF Split with a String pattern matches it literally: "a.b.c" with '.' -> a b c.  The pass
    escapes it; naive compiles '.' as a regex, which matches every character (removed: nothing is
    left; isolated: "ab" is never merged).  For '||' naive happens to give HF's ids on these strings."""
    texts = ["a.b.c", "ab..c", "a||b|c||||", "ab|"]
    tk = bpe(ASCII, [("a", "b"), ("a", "."), ("b", "."), ("|", "|"), ("a", "|")],
             pre_tokenizer=pre_tokenizers.Split(pattern, behavior))
    ex = export(tmp_path, tk)
    assert_fired(ex, "split-string")
    assert_no_loss(ex, "regex-unsupported", "split-behavior", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    if naive_differs:
        assert_naive_differs(ex, texts)


@pytest.mark.parametrize("pattern, texts", [
    ("-", ["a--b-c", "--x", "x"]),
    ("[0-9]", ["ab12c3", "9x"]),
    ("ab|c", ["xabcaby", "cc"]),
], ids=["dash", "digit-class", "alternation"])
def test_split_contiguous(tmp_path, pattern, texts):
    """HF Split(behavior=contiguous) keeps consecutive matches together as one piece: "a--b-c" on
    /-/ -> a -- b - c.  The runtime has no Contiguous; the pass writes Isolated /(?:pat)+/.  Naive
    writes behavior 1 (= Removed), which deletes the matches."""
    tk = bpe(ASCII, [("-", "-"), ("a", "-"), ("1", "2"), ("b", "1"), ("a", "b"), ("ab", "c"), ("c", "c"), ("x", "a")],
             pre_tokenizer=pre_tokenizers.Split(Regex(pattern), "contiguous"))
    ex = export(tmp_path, tk)
    assert_fired(ex, "split")
    assert_no_loss(ex, "regex-unsupported", "split-behavior", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


@pytest.mark.parametrize("scheme", ["always", "never"])
def test_metaspace_split(tmp_path, scheme):
    """HF Metaspace(split=True) replaces spaces by ▁ and splits before each ▁ (MergedWithNext):
    "a b  c" -> ▁a ▁b ▁ ▁c, so merges never cross words.  The runtime's Metaspace never splits; the
    pass adds Split(/▁/, MergedWithPrevious, invert): each ▁ starts a piece, with one-character
    matches (std::wregex recurses per character matched).  Naive drops `split`, so "▁▁" and "a▁"
    merge across words.  A typed ▁ splits too, as in HF."""
    texts = ["a b  c", "abc  ", "ab c", " a", "a▁▁b", "▁▁", "ab▁", "c" * 3000 + " a"]
    merges = [("\u2581", "\u2581"), ("\u2581", "a"), ("\u2581", "b"), ("\u2581", "c"), ("a", "\u2581")]
    tk = bpe("\u2581abc", merges, pre_tokenizer=pre_tokenizers.Metaspace("\u2581", scheme, split=True),
             decoder=decoders.Metaspace("\u2581", scheme, split=True))
    ex = export(tmp_path, tk)
    assert_fired(ex, "metaspace-split")
    assert_no_loss(ex, "metaspace-first", "regex-unsupported", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)
    # one long word on a 64 KiB thread stack: /▁?[^▁]+|▁/ crashed here (std::wregex recursion)
    word = RobustRequest(["c" * 20_000], ["letters"], 30.0, 64 * 1024)
    assert run_runtime(ex.path, robust=word).robust.crashed is None


# -------------------------------------------------------------------------- models and added tokens

def test_wordlevel_as_wordpiece(tmp_path):
    """HF WordLevel looks each pre-token up whole; anything else is the unk token, even when a
    prefix is in the vocab ("hellos" -> [UNK], although "hell" is a token).  The format has no
    WordLevel; the pass writes WordPiece with an unmatchable continuation prefix.  Naive cannot
    write it at all (MNN's exporter emits no model section: a corrupt file)."""
    vocab = {"[UNK]": 0, "hello": 1, "hell": 2, "world": 3, "o": 4}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    texts = ["hello world", "hellos o", "hell", "he", "world  hello x"]
    ex = export(tmp_path, tk)
    assert_fired(ex, "wordlevel-as-wordpiece")
    assert_no_loss(ex, "wordpiece-bytes", "dropped")
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    with pytest.raises(ValueError, match="WordLevel"):
        naive_file(ex)


def test_added_tokens_in_vocab(tmp_path):
    """Added tokens outside the model vocab (special or not) encode as single ids and decode to
    their text in HF.  The pass appends them to the model vocab (dense ids), so the runtime decodes
    them too; encode is unchanged.  Naive encodes identically but decodes those ids to ""."""
    tk = bpe("abcxy <>/")
    tk.add_tokens(["<x>", AddedToken("hello", special=False)])
    tk.add_special_tokens(["<s>", "</s>"])
    added = {i: t.content for i, t in tk.get_added_tokens_decoder().items()}
    texts = ["a<x>b", "xhelloy <s>a</s>", "<x><x>"]
    ex = export(tmp_path, tk)
    assert_fired(ex, "added-tokens-in-vocab")
    assert_no_loss(ex, "added-not-decodable")
    ids = list(range(tk.get_vocab_size(with_added_tokens=True)))
    result = run_runtime(ex.path, texts=texts, decode_ids=ids)
    assert_exact(ex, result, texts)
    assert {i: result.decodes[i].decode() for i in ids} == {i: ex.hf.decode([i], skip_special_tokens=False) for i in ids}
    naive_result = run_runtime(naive_file(ex), texts=texts, decode_ids=ids)
    assert naive_result.encodes == result.encodes  # naive encode is the same...
    assert all(naive_result.decodes[i] == b"" for i in added)  # ...but the added tokens decode to ""


def test_strip_tokens_not_header_special(tmp_path):
    """HF added tokens with lstrip/rstrip swallow the whitespace next to them: "x <tok> y" ->
    x <tok> y.  The runtime's header special split ignores lstrip/rstrip, so the pass leaves such
    tokens out of the header list and lets the added-token split (which applies them) handle them.
    Naive lists the in-vocab special in the header: the spaces become tokens."""
    tk = bpe("abcxy ", extra=["<tok>", "<n>"])
    tk.add_special_tokens([AddedToken("<tok>", lstrip=True, rstrip=True)])
    tk.add_tokens([AddedToken("<n>", lstrip=True, rstrip=False, special=False)])
    texts = ["x <tok> y", "x  <tok>  y", "<tok>a <tok>", "a <n> b"]
    ex = export(tmp_path, tk)
    assert_fired(ex, "strip-tokens-not-header-special")
    assert tk.token_to_id("<tok>") not in ex.low.special_ids
    assert_exact(ex, run_runtime(ex.path, texts=texts), texts)
    assert_naive_differs(ex, texts)


# ---------------------------------------------------------------------- post-processors and BOS

BOS_ONCE = ("{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{% endif %}")
BOS_PER_USER = ("{% for m in messages %}{% if m['role'] == 'user' %}{{ bos_token }}{% endif %}"
                "[{{ m['role'] }}]{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}")
CHAT = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "ok"}]


def render(template: str, bos: str) -> str:
    """transformers' chat rendering (jinja2 sandbox, trim/lstrip blocks); MNN always adds the generation prompt."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    return env.from_string(template).render(messages=CHAT, bos_token=bos, eos_token="</s>", add_generation_prompt=True)


def bos_tokenizer(bos: str) -> Tokenizer:
    tk = bpe(ASCII, extra=[bos, "</s>"])
    tk.add_special_tokens([bos, "</s>"])
    tk.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, tk.token_to_id(bos))])
    return tk


@pytest.mark.parametrize("bos", [
    "<bos>",
    pytest.param("<s>"),
])
def test_bos_field_cleared(tmp_path, bos):
    """HF: `<bos> $A` adds BOS to plain encode, and a chat template that renders {{ bos_token }}
    once at the start gives BOS once in the chat ids (encoded without specials).  The pass keeps BOS
    in the header prefix and clears the embedded bos_token, so the runtime renders no BOS and its
    encode adds it once.  Naive keeps both: the chat path gets BOS twice."""
    tk = bos_tokenizer(bos)
    bos_id = tk.token_to_id(bos)
    ex = export(tmp_path, tk, {"bos_token": bos, "eos_token": "</s>", "chat_template": BOS_ONCE})
    assert_fired(ex, "bos-field-cleared")
    assert_fired(ex, "post-processor-prefix")
    assert_no_loss(ex, "bos-template", "bos-inner", "bos-none")
    assert ex.low.chat.bos_token == "" and ex.low.prefix_ids == (bos_id,)
    hf_chat = render(BOS_ONCE, bos)
    hf_chat_ids = ex.ids(hf_chat, False)
    assert hf_chat_ids.count(bos_id) == 1
    runtime_chat = render(BOS_ONCE, "")  # what the runtime renders with an empty bos_token
    texts = ["hi", "a b"]
    result = run_runtime(ex.path, texts=texts + [runtime_chat], chats=[CHAT])
    assert result.chats[0] == runtime_chat
    assert result.encodes[-1] == hf_chat_ids  # chat path: engine encode of the runtime's chat text
    assert_exact(ex, result, texts)
    naive_result = run_runtime(naive_file(ex), texts=[hf_chat], chats=[CHAT])
    assert naive_result.chats[0] == hf_chat
    assert naive_result.encodes[0] != hf_chat_ids and naive_result.encodes[0][:2] == [bos_id, bos_id]


def test_bos_from_template(tmp_path):
    """HF: a template that renders BOS before every user turn puts BOS inside the conversation, so
    the prefix cannot also be added on the chat path.  The pass leaves the header prefix out and keeps
    bos_token, so runtime chat text and chat ids equal HF's; plain encode no longer adds BOS, which
    is recorded as the loss bos-template (and checked here).  Naive keeps the prefix: BOS twice."""
    bos = "<s>"
    tk = bos_tokenizer(bos)
    bos_id = tk.token_to_id(bos)
    ex = export(tmp_path, tk, {"bos_token": bos, "eos_token": "</s>", "chat_template": BOS_PER_USER})
    assert_fired(ex, "bos-from-template")
    assert "bos-template" in ex.codes
    assert ex.low.prefix_ids == () and ex.low.chat.bos_token == bos
    hf_chat = render(BOS_PER_USER, bos)
    hf_chat_ids = ex.ids(hf_chat, False)
    assert hf_chat_ids.count(bos_id) == 2
    result = run_runtime(ex.path, texts=["hi", hf_chat], chats=[CHAT])
    assert result.chats[0] == hf_chat
    assert result.encodes[1] == hf_chat_ids
    assert result.encodes[0] == ex.ids("hi", False) != ex.ids("hi", True)  # the recorded loss
    naive_result = run_runtime(naive_file(ex), texts=[hf_chat], chats=[CHAT])
    assert naive_result.chats[0] == hf_chat
    assert naive_result.encodes[0] != hf_chat_ids and naive_result.encodes[0][:2] == [bos_id, bos_id]


def _ids(tk, *names):
    return [(n, tk.token_to_id(n)) for n in names]


POST_PROCESSORS = {
    # name: (processor factory, suffix token or None, naive differs, extra components)
    "template": (lambda tk: processors.TemplateProcessing(single="<s> $A", special_tokens=_ids(tk, "<s>")),
                 None, False, {}),
    "template-two": (lambda tk: processors.TemplateProcessing(single="[CLS] <s> $A", special_tokens=_ids(tk, "<s>", "[CLS]")),
                     None, False, {}),
    "sequence-bytelevel-template": (lambda tk: processors.Sequence([
        processors.ByteLevel(), processors.TemplateProcessing(single="<s> $A", special_tokens=_ids(tk, "<s>"))]),
        None, False, {}),
    "template-uncased": (lambda tk: processors.TemplateProcessing(single="<s> $A", special_tokens=_ids(tk, "<s>")),
                         None, True, {"normalizer": normalizers.Lowercase()}),
    "bert": (lambda tk: processors.BertProcessing(("[SEP]", tk.token_to_id("[SEP]")), ("[CLS]", tk.token_to_id("[CLS]"))),
             "[SEP]", True, {}),
    "roberta": (lambda tk: processors.RobertaProcessing(("</s>", tk.token_to_id("</s>")), ("<s>", tk.token_to_id("<s>"))),
                "</s>", True, {}),
}


def post_tokenizer(name: str) -> tuple[Tokenizer, str | None, bool]:
    factory, suffix, naive_differs, components = POST_PROCESSORS[name]
    specials = ["<s>", "</s>", "[CLS]", "[SEP]"]
    tk = bpe(ASCII, extra=specials, **components)
    tk.add_special_tokens(specials)
    tk.post_processor = factory(tk)
    return tk, suffix, naive_differs


@pytest.mark.parametrize("name", list(POST_PROCESSORS))
def test_post_processor_prefix(tmp_path, name):
    """HF post-processors that put special tokens before $A (TemplateProcessing `<s> $A`, a Sequence
    holding one, Bert/RobertaProcessing's CLS) add them to every encode with specials; the pass writes
    them as the header prefix list, which every runtime prepends.  Naive is IDENTICAL for prefix-only
    templates whose "A" is one token (MNN's encode("A") heuristic finds the prefix); it differs when
    "A" is not ("template-uncased": lowercased to "a") and for Bert/Roberta (no prefix at all).  A
    suffix ([SEP], </s>) is not appended by 3.6 (loss suffix-not-appended, see the next test)."""
    tk, suffix, naive_differs = post_tokenizer(name)
    texts = ["hi", "", "A", "a b"]
    ex = export(tmp_path, tk)
    assert_fired(ex, "post-processor-prefix")
    assert_no_loss(ex, "post-dropped", "bos-none", "bos-template")
    assert ex.low.prefix_ids and ex.ids("", True)[:len(ex.low.prefix_ids)] == list(ex.low.prefix_ids)
    result = run_runtime(ex.path, texts=texts)
    assert_exact(ex, result, texts, suffix=(tk.token_to_id(suffix),) if suffix else ())
    if naive_differs:
        assert_naive_differs(ex, texts)


@pytest.mark.parametrize("single", ["$A </s>", "<s> $A </s>", "bert"])
def test_post_processor_program(tmp_path, single):
    """HF appends the template's suffix (`$A </s>`, BERT's [SEP]).  The pass writes it as the
    post-processor program, which MNN HEAD applies; MNN 3.6 ignores the program, so the runtime
    output LACKS the suffix and the loss suffix-not-appended is recorded (for mnn-head it is not).
    Naive is IDENTICAL for "$A </s>" on 3.6 (it writes a program too, also ignored); it differs where
    there is a prefix, which it does not write."""
    specials = ["<s>", "</s>", "[CLS]", "[SEP]"]
    tk = bpe(ASCII, extra=specials)
    tk.add_special_tokens(specials)
    if single == "bert":
        tk.post_processor = processors.BertProcessing(("[SEP]", tk.token_to_id("[SEP]")), ("[CLS]", tk.token_to_id("[CLS]")))
        suffix = tk.token_to_id("[SEP]")
    else:
        tk.post_processor = processors.TemplateProcessing(single=single, special_tokens=_ids(tk, "<s>", "</s>"))
        suffix = tk.token_to_id("</s>")
    texts = ["hi", "", "a b"]
    ex = export(tmp_path, tk)
    assert_fired(ex, "post-processor-program")
    assert "suffix-not-appended" in ex.codes
    assert ex.low.post_processor.ops == (None, suffix)
    result = run_runtime(ex.path, texts=texts)
    for text, got in zip(texts, result.encodes):
        assert ex.ids(text, True)[-1] == suffix and suffix not in got
    assert_exact(ex, result, texts, suffix=(suffix,))
    head, head_lw = lower(ex.src, TARGETS["mnn-head"])
    assert "post-processor-program" in head_lw.applied
    assert "suffix-not-appended" not in {x.code for x in head_lw.losses}
    assert head.post_processor.ops == (None, suffix)
    if single != "$A </s>":
        assert_naive_differs(ex, texts)
