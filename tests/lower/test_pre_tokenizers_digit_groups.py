"""Numeric runs then groups of n ASCII digits (Falcon: `Digits(individual_digits=False)` then
`Split([0-9][0-9][0-9])`) as one Split (`lower.pre_tokenizers._digit_groups`): HF's own pre-tokenizers
split the same, the two steps as the source has them and the one written, on numerals of every kind
(ASCII, superscripts and fractions a ByteLevel string holds, Arabic-Indic, fullwidth) among other text;
the spellings that drop a part of it are caught by the same comparison.  The runtime's side: Falcon's
default export (verified on MNN 3.6.1 by the export itself, the output digests pin its bytes)."""

from __future__ import annotations

import random

import pytest
from tokenizers import Regex
from tokenizers.pre_tokenizers import Digits, Sequence, Split

from mtok_export.ir import Pattern
from mtok_export.ir import pre_tokenizers as P
from mtok_export.lower import Lowering, lower
from mtok_export.lower.pre_tokenizers import _digit_groups, _NUMERIC_RUNS
from mtok_export.targets import DEFAULT, TARGETS

ALPHABET = list("0123456789") * 4 + ["\u00b2", "\u00bd", "\u0663", "\uff11", "\u2163", "a", " ", "\u0120", "\u00d0", "-", "."]


def _texts(n: int = 3000) -> list[str]:
    rng = random.Random(40)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 24))) for _ in range(n)]


def _pieces(pre, text: str) -> list[str]:
    return [p for p, _ in pre.pre_tokenize_str(text)]


def _one(n: int) -> str:
    lw = Lowering(TARGETS[DEFAULT])
    [split] = _digit_groups(lw, [_NUMERIC_RUNS, P.Split(Pattern("[0-9]" * n, True), "Isolated")], "$")
    return split.pattern.value


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_one_split_is_the_two_steps(n):
    source = Sequence([Digits(individual_digits=False), Split(Regex("[0-9]" * n), "isolated")])
    written = Split(Regex(_one(n)), "isolated")
    wrong = [t for t in _texts() if _pieces(written, t) != _pieces(source, t)]
    assert not wrong


@pytest.mark.parametrize("mutant", [r"[0-9]{3}|\p{N}+", r"[0-9]{3}|\p{N}", r"[0-9]{3}|(?:(?![0-9]{2})\p{N})+",
                                    r"[0-9]{3}|(?:(?![0-9]{3})[0-9])+"])
def test_the_comparison_catches_a_wrong_spelling(mutant):
    source = Sequence([Digits(individual_digits=False), Split(Regex("[0-9][0-9][0-9]"), "isolated")])
    assert any(_pieces(Split(Regex(mutant), "isolated"), t) != _pieces(source, t) for t in _texts())


def test_only_that_pair_is_joined():
    """Other neighbours stay two steps: an inverted or Removed second step, a class that is not ASCII
    digits, individual digits first."""
    lw = Lowering(TARGETS[DEFAULT])
    for second in (P.Split(Pattern("[0-9]{3}", True), "Removed"), P.Split(Pattern("[0-9]{3}", True), "Isolated", True),
                   P.Split(Pattern(r"\d{3}", True), "Isolated"), P.Split(Pattern("[0-9]+", True), "Isolated")):
        assert len(_digit_groups(lw, [_NUMERIC_RUNS, second], "$")) == 2
    single = P.Split(Pattern(r"\p{N}", True), "Isolated")
    assert len(_digit_groups(lw, [single, P.Split(Pattern("[0-9]{3}", True), "Isolated")], "$")) == 2
    assert _one(3) == "[0-9]{3}|(?:(?![0-9]{3})\\p{N})+" and "digit-groups" not in lw.applied


def test_falcon_is_written_with_one_split():
    from tests.support.corpus_dirs import CORPUS

    d = CORPUS / "falcon-7b"
    if not d.is_dir():
        pytest.skip("shared corpus not present")
    from mtok_export.formats import read_source

    low, lw = lower(read_source(d), TARGETS[DEFAULT])
    assert low.pre_tokenizer.pretokenizers[-1].pattern.value == "[0-9]{3}|(?:(?![0-9]{3})\\p{N})+"
    assert len(low.pre_tokenizer.pretokenizers) == 3 and "digit-groups" in lw.applied
