"""`--regex-form fold` (`lower/regex.py` `fold_form`, `lower/explicit.py` `folded`): a split regex the fold
engine misreads (o200k's case split, Kimi-K2's Han and `&&`), written for the fold engine instead of as
explicit ranges for std::wregex: as fast as MNN's own file, exact on ASCII, and a `regex-fold` loss
whose trigger is every non-ASCII code point it matches otherwise, which the gate refuses unless
accepted.  The exact default is tests/lower/test_possessive.py's."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from mtok_export import losses as L
from mtok_export.corpus import builtin_corpus
from mtok_export.errors import LossError
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.lower import Forms
from mtok_export.lower.regex import fold_form, runs_on_wregex
from mtok_export.readers.tiktoken import _O200K_PATTERN
from mtok_export.verify.runtime import run_runtime
from tests.lower.test_possessive import CASE_TEXTS, KIMI_PATTERN, RUNTIME_TEXTS, needs_corpus
from tests.support.gpt2_patterns import gpt2_with
from tests.support.marks import needs_mnn

FOLD = Forms(regex_form="fold")
# o200k on the fold engine, written out by hand: ASCII cases exact, \x01 every non-ASCII letter, \x05 marks
O200K_FOLDED = (r"[^\r\n\p{L}\p{N}]?[A-Z\x01\x05]*[a-z\x01\x05]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                r"|[^\r\n\p{L}\p{N}]?[A-Z\x01\x05]+[a-z\x01\x05]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
                r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CASED = ("Lu", "Ll", "Lt")  # o200k's classes tell these apart; the fold engine's \x01 cannot


def _points(ranges) -> set[int]:
    return {cp for a, b in ranges for cp in range(a, b + 1)}


def test_o200k_folds_to_ascii_cases_and_names_every_code_point_it_reads_otherwise():
    written, differs = fold_form(_O200K_PATTERN)
    assert written == O200K_FOLDED and not runs_on_wregex(written)
    cased = {cp for cp in range(0x80, sys.maxunicode + 1) if unicodedata.category(chr(cp)) in CASED}
    assert _points(differs) == cased


def test_kimi_folds_with_han_and_the_other_letters_alike():
    written, differs = fold_form(KIMI_PATTERN)
    assert not runs_on_wregex(written) and "&&" not in written and "Han" not in written
    got = _points(differs)
    assert {0x4E2D, 0x0416, 0x00E9} <= got and not any(cp < 0x80 for cp in got)


@pytest.mark.parametrize("pattern", [r"(?<=a)[\p{Lu}]+", r"[\p{Lu}]+\w"], ids=["lookbehind", "\\w"])
def test_no_fold_form_while_another_construct_still_runs_otherwise(pattern):
    assert fold_form(pattern) is None


@needs_corpus
def test_the_default_stays_explicit_and_the_fold_form_is_a_loss(tmp_path):
    (tmp_path / "exact").mkdir()
    (tmp_path / "fast").mkdir()
    _, _, exact = gpt2_with(tmp_path / "exact", [_O200K_PATTERN])
    _, _, fast = gpt2_with(tmp_path / "fast", [_O200K_PATTERN], FOLD)
    assert "regex-explicit" in exact.applied and "regex-fold" not in {x.code for x in exact.losses}
    codes = {x.code for x in fast.losses}
    assert "regex-fold" in codes and not codes & {"regex-stack", "regex-unicode-version", "regex-unsupported"}
    (loss,) = [x for x in fast.losses if x.kind is L.REGEX_FOLD]
    assert loss.spans("HelloWorld \u4e2d\u6587") == [] and loss.spans("a\u00e9B") == [(1, 2)]


def _cased(text: str) -> bool:
    return any(ord(c) > 127 and unicodedata.category(c) in CASED for c in text)


@needs_corpus
@needs_mnn
def test_on_the_runtime_the_fold_form_is_exact_but_on_non_ascii_cased_letters(tmp_path):
    """The real runtime against HF on the source (o200k's pattern on Qwen2.5's multilingual byte-level
    vocabulary): every text without a non-ASCII cased letter is exact (ASCII camelCase included,
    which MNN's own exporter merges); the loss's example is not."""
    hf, path, lw = gpt2_with(tmp_path, [_O200K_PATTERN], FOLD, base="qwen2.5-instruct")
    texts = RUNTIME_TEXTS + CASE_TEXTS + [s.text for s in builtin_corpus() if "\x00" not in s.text]
    plain = [t for t in texts if not _cased(t) and not any("\x01" <= c <= "\x07" for c in t)]  # regex-control
    (loss,) = [x for x in lw.losses if x.kind is L.REGEX_FOLD]
    got = run_runtime(path, texts=plain + [loss.example]).encodes
    want = [hf.encode(t, add_special_tokens=False).ids for t in plain + [loss.example]]
    assert len(plain) > 100 and [t for t, g, w in zip(plain, got, want) if g != w] == []
    assert got[-1] != want[-1]  # "mÜNCHEN": one piece on the fold engine, [m, ÜNCHEN] in HF


@needs_corpus
@needs_mnn
def test_the_gate_refuses_the_fold_form_where_it_reaches_until_it_is_accepted(tmp_path):
    """Reached (a corpus with German and French capitals after a lowercase letter), regex-fold is
    refused; accepted, the file is written and the mismatches are its own."""
    from mtok_export.api import export

    gpt2_with(tmp_path, [_O200K_PATTERN], base="qwen2.5-instruct")  # writes tmp_path/src/tokenizer.json
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"text": "Die mÜNCHEN-Seite"}\n{"text": "Le coup dÉTAT"}\n', encoding="utf-8")
    with pytest.raises(LossError) as info:
        export(tmp_path / "src", tmp_path / "refused", regex_form="fold", corpus=corpus, sweep=False,
               chat_template=NO_CHAT)
    assert [d.code for d in info.value.decisions if not d.accepted] == ["regex-fold"]
    assert not (tmp_path / "refused" / "tokenizer.mtok").exists()
    res = export(tmp_path / "src", tmp_path / "out", regex_form="fold", corpus=corpus, sweep=False, chat_template=NO_CHAT,
                 accept=["regex-fold"])
    assert res.written and res.verify.ok and res.manifest["job"]["regex_form"] == "fold"
    explained = {m.explanation for c in res.verify.checks for m in c.mismatches}
    assert explained == {("regex-fold",)}  # the corpus reaches it, and only it
