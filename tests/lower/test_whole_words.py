"""`ignore_merges` in its exact form (lower/whole_words.py): every vocab word the merges miss is
looked up whole on the runtime, measured against HF `tokenizers` on Llama-3 (588 such words) in
the contexts where a wrong form would show (alone, inside longer pre-tokens, after and before other
text); each part of the construction, taken away or changed, is caught by the same comparison."""

from __future__ import annotations

import importlib.util
import random
import re
from dataclasses import replace
from pathlib import Path

import pytest

from mtok_export.ir import Pattern
from mtok_export.ir import models as M
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.byte_level import token_to_bytes
from mtok_export.lower import Forms, lower, whole_words
from mtok_export.lower.models import _words_merges_miss
from mtok_export.mtok import write_mtok
from mtok_export.mtok.constants import ALIAS_MARK
from mtok_export.targets import TARGETS
from tests.support.corpus_dirs import CORPUS

LLAMA3 = CORPUS / "meta-llama-3-8b-instruct"
needs_llama3 = pytest.mark.skipif(not LLAMA3.is_dir(), reason="shared corpus not present")
needs_mnn = pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")


def test_alternation_matches_exactly_the_words():
    """The trie-factored regex accepts the words and nothing else: prefixes, extensions, neighbours
    and regex syntax characters included (Python's `re` reads this subset as ECMAScript does)."""
    rng = random.Random(5)
    alphabet = "ab.*+?()[]{}|^$\\-/\u0120\u00e1"
    words = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(300)})
    rx = re.compile(whole_words._alternation(words))
    probes = set(words) | {w[:-1] for w in words} | {w + c for w in words for c in "a)\u0120"} | {
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(3000)}
    wrong = [p for p in probes if bool(rx.fullmatch(p)) != (p in words)]
    assert not wrong
    assert "(?:" in whole_words._alternation(["ab", "ac"]) and whole_words._alternation(["ab"]) == "ab"


def _bpe_tok(pre):
    from mtok_export.ir import Tokenizer

    m = M.BPE({"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5}, (("b", "c"), ("a", "b")), ignore_merges=True)
    return Tokenizer(model=m, pre_tokenizer=pre)


@pytest.mark.parametrize("pre, why", [
    (P.Metaspace(), "does not end by mapping bytes"),
    (P.Sequence((P.ByteLevel(False, True, False), P.Metaspace())), "does not end by mapping bytes"),
    (None, "does not end by mapping bytes"),
])
def test_the_loss_stays_where_the_form_does_not_hold(pre, why):
    """A pre-token that may hold a space (or no pre-tokenizer at all) cannot be marked: the loss stays,
    naming why; after a ByteLevel pre-tokenizer the words are looked up whole."""
    _, lw = lower(_bpe_tok(pre), TARGETS["mnn-3.6"])
    [loss] = [x for x in lw.losses if x.code == "ignore-merges"]
    assert why in loss.reason and "1 vocab word(s)" in loss.reason
    low, lw = lower(_bpe_tok(P.ByteLevel(False, True, False)), TARGETS["mnn-3.6"])
    assert "ignore-merges" not in {x.code for x in lw.losses} and "ignore-merges-exact" in lw.applied
    fast, lw_fast = lower(_bpe_tok(P.ByteLevel(False, True, False)), TARGETS["mnn-3.6"],
                          forms=Forms(ignore_merges_form="merge"))
    [loss] = [x for x in lw_fast.losses if x.code == "ignore-merges"]
    assert "--ignore-merges-form merge" in loss.reason and len(fast.model.vocab) == 6
    assert low.model.vocab[ALIAS_MARK + whole_words.CHAIN_MARK + "abc"] == 5
    assert low.model.merges[-1] == (ALIAS_MARK, whole_words.CHAIN_MARK + "abc")


def test_the_marks_are_in_no_bytelevel_text():
    """The marks never reach a pre-token after ByteLevel (it maps every byte to a printable GPT-2
    character), and the alias mark sorts before all of them (so the runtime keeps each id's text)."""
    from mtok_export.ir.byte_level import bytes_to_token

    chars = {bytes_to_token(bytes([b])) for b in range(256)}
    assert ALIAS_MARK not in chars and whole_words.CHAIN_MARK not in chars and whole_words.CUT_MARK not in chars
    assert all(ALIAS_MARK.encode() < c.encode() for c in chars)


# ---------------------------------------------------------------- on the runtime, against HF


def _texts(words: list[str]) -> list[str]:
    """Each missed word as text, alone and where a form that ignored the pre-token's ends would show."""
    out = ["C\u1eeda Vi\u1ec7t", "Ti\u1ebfng Vi\u1ec7t c\u00f3 nhi\u1ec1u d\u1ea5u thanh."]
    for w in words:
        b = token_to_bytes(w)
        try:
            t = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        out += [t, t + t, "x" + t, t + "x", "(" + t + ")", t + " " + t, t.strip() + "s", "a" + t.strip(), t[:-1]]
    return out


@pytest.fixture(scope="module")
def llama3():
    from mtok_export.formats import read_source

    tok = read_source(LLAMA3)
    low, lw = lower(tok, TARGETS["mnn-3.6"])
    return tok, low, lw


@pytest.fixture(scope="module")
def reference(llama3):
    from tokenizers import Tokenizer

    hf = Tokenizer.from_file(str(LLAMA3 / "tokenizer.json"))
    texts = _texts([w for w, _ in _words_merges_miss(llama3[0].model)])
    return texts, [e.ids for e in hf.encode_batch(texts, add_special_tokens=True)]


def _differences(low, reference, tmp_path: Path, check: bool = True) -> list[str]:
    from mtok_export.verify.runtime import run_runtime

    texts, want = reference
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    got = run_runtime(path, texts=texts, check=check).encodes
    return [t for t, a, b in zip(texts, got, want) if a != b]


@needs_llama3
@needs_mnn
@pytest.mark.runtime
def test_llama3_on_the_runtime_as_hf(llama3, reference, tmp_path):
    """Every one of Llama-3's 588 words in every context: the runtime's ids are HF's; and each word's
    id decodes to the word (the alias does not replace its text)."""
    from mtok_export.verify.runtime import run_runtime

    tok, low, lw = llama3
    assert "ignore-merges" not in {x.code for x in lw.losses}
    assert "588 vocab word(s)" in lw.applied["ignore-merges-exact"][0]
    assert len(reference[0]) > 4000
    assert _differences(low, reference, tmp_path) == []
    ids = [tok.model.vocab[w] for w, _ in _words_merges_miss(tok.model)]
    decodes = run_runtime(tmp_path / "tokenizer.mtok", decode_ids=ids).decodes
    assert [decodes[i] for i in ids] == [token_to_bytes(w) for w, _ in _words_merges_miss(tok.model)]


def _mutants(low):
    marks = ALIAS_MARK + whole_words.CHAIN_MARK
    pres = low.pre_tokenizer.pretokenizers
    cut = pres[-2].pattern.value
    m = low.model
    n_final = sum(1 for a, _ in m.merges if a == ALIAS_MARK)
    yield "marks never taken off", replace(low, pre_tokenizer=P.Sequence(pres[:-1])), True
    yield "no word cut (no word marked)", replace(low, pre_tokenizer=P.Sequence((*pres[:-2], pres[-1]))), True
    yield "no end anchor (a word's extensions marked)", replace(low, pre_tokenizer=P.Sequence(
        (*pres[:-2], P.Split(Pattern(cut.removesuffix("$"), True), "Isolated"), pres[-1]))), True
    yield "marks taken off words too", replace(low, pre_tokenizer=P.Sequence(
        (*pres[:-1], P.Split(Pattern(f"^{whole_words.CUT_MARK}?{marks}", True), "Removed")))), True
    yield "no final merges (the chain's tokens leak)", replace(low, model=replace(m, merges=m.merges[:-n_final])), True


@needs_llama3
@needs_mnn
@pytest.mark.runtime
def test_each_part_is_needed(llama3, reference, tmp_path):
    """The comparison above catches every part of the construction taken away or changed."""
    _, low, _ = llama3
    for name, mutant, check in _mutants(low):
        assert _differences(mutant, reference, tmp_path, check), name


@needs_llama3
@needs_mnn
@pytest.mark.runtime
def test_merges_alone_fire_inside_longer_words(llama3, reference, tmp_path):
    """The counter-example to merges without marks: chains from each word's first piece to the word
    (new ids in between, ranked after every merge of the source) make the words, but also fire where
    their pieces stand inside a longer pre-token, where HF keeps the pieces."""
    tok, _, _ = llama3
    low, lw = lower(replace(tok, model=replace(tok.model, ignore_merges=False)), TARGETS["mnn-3.6"])
    assert "ignore-merges-exact" not in lw.applied
    vocab, fresh, chain = low.model.vocab, {}, {}
    for w, pieces in _words_merges_miss(tok.model):
        left = pieces[0]
        for p in pieces[1:]:
            chain[(left, p)] = None
            left += p
            if left not in vocab and left not in fresh:
                fresh[left] = len(vocab) + len(fresh)
    merged = replace(low, model=replace(low.model, vocab={**vocab, **fresh}, merges=(*low.model.merges, *chain)))
    wrong = _differences(merged, reference, tmp_path)
    # e.g. `iyesi` (i + yes + i) comes out whole, `iyesix` (HF: i + yes + ix) gets iyesi + x
    assert "iyesix" in wrong and "iyesi" not in wrong and "C\u1eeda Vi\u1ec7t" not in wrong
    assert len(wrong) > 1000  # of 5,294 texts


def test_hf_equivalent_is_hfs_own_ignore_merges():
    """`undo` (what `hf_equivalent` runs first) takes the form out of a lowered IR and sets
    ignore_merges: the source's vocab, merges and pre-tokenizer again; an IR without it is unchanged."""
    from mtok_export.lower.hf_equivalent import hf_equivalent

    src = _bpe_tok(P.ByteLevel(False, True, False))
    low, _ = lower(src, TARGETS["mnn-3.6"])
    back = whole_words.undo(low)
    assert back.model == replace(src.model, ignore_merges=True) and back.pre_tokenizer == src.pre_tokenizer
    assert whole_words.undo(back) == back
    assert hf_equivalent(low).model.ignore_merges
    plain, _ = lower(replace(src, model=replace(src.model, ignore_merges=False)), TARGETS["mnn-3.6"])
    assert whole_words.undo(plain) == plain
    # the lookahead form earlier versions wrote (two steps) reads back the same
    marks = ALIAS_MARK + whole_words.CHAIN_MARK
    old = replace(low, pre_tokenizer=P.Sequence((*low.pre_tokenizer.pretokenizers[:-3], P.Metaspace(marks, "always", False),
                                                  P.Split(Pattern(f"^{marks}(?!abc$)", True), "Removed", False))))
    assert whole_words.undo(old) == back


def test_the_steps_are_the_cut_form():
    """What makes the form cheap on the device (module docstring): the words' pattern matches only a
    word (no lookahead, no match on any other pre-token); the marks come off in a step of their own."""
    low, _ = lower(_bpe_tok(P.ByteLevel(False, True, False)), TARGETS["mnn-3.6"])
    meta, cut, drop = low.pre_tokenizer.pretokenizers[-3:]
    marks = ALIAS_MARK + whole_words.CHAIN_MARK
    assert meta == P.Metaspace(whole_words.CUT_MARK + marks, "always", False)
    assert cut == P.Split(Pattern(f"{marks}abc$", True), "Isolated", False) and "(?" not in cut.pattern.value
    assert drop == P.Split(Pattern(f"^{whole_words.CUT_MARK}(?:{marks})?", True), "Removed", False)
