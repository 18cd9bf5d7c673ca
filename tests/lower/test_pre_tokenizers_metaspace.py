"""Metaspace + Unigram (no byte fallback), normalizer Replace(String `\\s` -> " "), pre-tokenizer and
decoder Metaspace("▁", prepend_scheme="always", split=true): the input "▁" is one id in HF and was
two on MNN 3.6.1.  The cause is the runtime: HF prepends the replacement unless the piece already
starts with it, the runtime unless the piece starts with a space (TC MetaspacePreTokenizer).  The
lowering writes a literal "▁" as a space last in the normalizer (`pre_tokenizers.replacement_as_space`),
which makes both tests agree; shown on the runtime, with the rule taken out as the control."""

from __future__ import annotations

import string
from dataclasses import replace
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

from mtok_export.ir import normalizers as N
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.runtime import run_runtime

from tests.support.marks import needs_mnn


TEXTS = ["\u2581", "\u2581Hello", "\u2581\u2581x", "a\u2581b", " \u2581", "Hello world", " Hello", "\\s", "x \\s y",
         "\u2581 \u2581", "<unk>\u2581a"]


def metaspace_unigram(directory: Path, prepend: str = "always") -> Tokenizer:
    chars = string.ascii_letters + string.digits + string.punctuation
    words = ["\u2581Hello", "\u2581world", "\u2581the", "ing", "\u2581is", "er", "\u2581to"]
    vocab = [("<unk>", 0.0), ("\u2581", -2.0)] + [(w, -3.0 - i / 10) for i, w in enumerate(words)] \
        + [(c, -8.0) for c in chars] + [("\u2581" + c, -9.0) for c in chars]
    tok = Tokenizer(models.Unigram(vocab, unk_id=0, byte_fallback=False))
    tok.add_special_tokens(["<unk>"])
    tok.normalizer = normalizers.Replace("\\s", " ")  # a String pattern: the two characters backslash, s
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme=prepend, split=True)
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme=prepend, split=True)
    directory.mkdir()
    tok.save(str(directory / "tokenizer.json"))
    return tok


def test_a_literal_replacement_is_written_as_a_space(tmp_path):
    metaspace_unigram(tmp_path / "src")
    low, lw = lower(read_model_dir(tmp_path / "src"), TARGETS[DEFAULT])
    assert "metaspace-replacement" in lw.applied
    assert low.normalizer.normalizers[-1] == N.Replace(N.Pattern("\u2581"), " ")


def test_no_rule_without_a_prepend(tmp_path):
    metaspace_unigram(tmp_path / "src", prepend="never")
    _, lw = lower(read_model_dir(tmp_path / "src"), TARGETS[DEFAULT])
    assert "metaspace-replacement" not in lw.applied


@needs_mnn
def test_the_replacement_encodes_as_hf_on_the_runtime(tmp_path):
    hf = metaspace_unigram(tmp_path / "src")
    assert hf.encode("\u2581").ids == [1]
    low, _ = lower(read_model_dir(tmp_path / "src"), TARGETS[DEFAULT])
    want = [hf.encode(t).ids for t in TEXTS]
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    assert run_runtime(path, texts=TEXTS).encodes == want
    # the control: the same file without the rule is what the runtime did before
    seq = low.normalizer.normalizers
    path.write_bytes(write_mtok(replace(low, normalizer=N.Sequence(seq[:-1]))))
    got = run_runtime(path, texts=TEXTS).encodes
    assert got[0] == [1, 1]
    # every piece that starts with the replacement, also the one after a special token
    starts = [t for t in TEXTS if t.startswith("\u2581") or t.startswith("<unk>\u2581")]
    assert [t for t, g, w in zip(TEXTS, got, want) if g != w] == starts


def _ir(pre):
    from mtok_export.ir import Tokenizer as IR
    from mtok_export.ir import models as M

    return IR(model=M.Unigram((("<unk>", 0.0), ("\u2581", -1.0), ("a", -2.0)), unk_id=0), pre_tokenizer=pre)


def test_sequence_of_metaspace_gets_the_rule_too():
    """Sequence[Metaspace] lowers to nested Sequences: the rule looked only one level down, so '▁'
    was two ids there (generated zoo: `gen_zoo.FOUND['metaspace-in-sequence']`, exit 1)."""
    from mtok_export.ir import pre_tokenizers as P

    meta = P.Metaspace("\u2581", "always", True)
    for pre in (meta, P.Sequence((meta,)), P.Sequence((P.Sequence((meta,)),))):
        low, lw = lower(_ir(pre), TARGETS[DEFAULT])
        assert "metaspace-replacement" in lw.applied, pre
        assert "metaspace-literal" not in {x.code for x in lw.losses}


def test_metaspace_after_another_pre_tokenizer_declares_the_literal_replacement():
    """An earlier pre-tokenizer would see the space the rule writes: no rule, a named edge loss whose
    trigger is the replacement itself."""
    from mtok_export import losses as L
    from mtok_export.ir import pre_tokenizers as P

    pre = P.Sequence((P.Punctuation("Removed"), P.Metaspace("\u2581", "first", True)))
    low, lw = lower(_ir(pre), TARGETS[DEFAULT])
    assert "metaspace-replacement" not in lw.applied
    loss = next(x for x in lw.losses if x.kind is L.METASPACE_LITERAL)
    assert loss.spans("a \u2581b") == [(2, 3)] and loss.spans("a b") == []
    never = P.Sequence((P.Punctuation("Removed"), P.Metaspace("\u2581", "never", True)))
    assert "metaspace-literal" not in {x.code for x in lower(_ir(never), TARGETS[DEFAULT])[1].losses}
