"""wordpiece-bytes (`lower.models`): the runtime counts WordPiece's max_input_chars_per_word in bytes, HF in
characters.  Its trigger is the pattern the lowering writes: the words that can pass the limit in
characters and not in bytes, by the limit, the pre-tokenizer (a word holds spaces unless it removes
them) and the normalizer (which may decompose).  Was a fixed 21+ non-space run: the generated zoo's
`gen_zoo.FOUND['wordpiece-bytes-long-word']` (limit 20, no pre-tokenizer) ended in exit 1."""

from __future__ import annotations

import pytest

from mtok_export import losses as L
from mtok_export.ir import Tokenizer
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.lower import lower
from mtok_export.targets import DEFAULT, TARGETS

POLISH = "Zażółć gęślą jaźń."  # 18 characters, 27 bytes
VOCAB = {"[UNK]": 0, "\u00e9": 1, "a": 2, "##b": 3}


def _loss(limit, pre=None, normalizer=None):
    tok = Tokenizer(model=M.WordPiece(VOCAB, "[UNK]", "##", limit), pre_tokenizer=pre, normalizer=normalizer)
    return next(x for x in lower(tok, TARGETS[DEFAULT])[1].losses if x.kind is L.WORDPIECE_BYTES)


@pytest.mark.parametrize("limit, pre, normalizer, text, fires", [
    (20, None, None, POLISH, True),  # one word of 27 bytes: the runtime's unk, HF's tokens
    (100, None, None, POLISH, False),  # 27 bytes pass 100 either way
    (20, P.WhitespaceSplit(), None, "Zażó łć gęśl", False),  # words of 5 characters: 20 bytes at most
    (20, P.WhitespaceSplit(), None, "\u4e00" * 7, True),  # 7 characters, 21 bytes
    (100, P.WhitespaceSplit(), N.NFKD(), "\uc548\ub155\ud558\uc138\uc694\ub9cc\ub098\uc11c\ubc18\uac11\uc2b5\ub2c8\ub2e4", True),
    (100, P.WhitespaceSplit(), None, "\uc548\ub155\ud558\uc138\uc694\ub9cc\ub098\uc11c\ubc18\uac11\uc2b5\ub2c8\ub2e4", False),
])
def test_the_trigger_covers_the_words_the_limit_counts_otherwise(limit, pre, normalizer, text, fires):
    assert bool(_loss(limit, pre, normalizer).spans(text)) == fires


def test_no_loss_without_a_non_ascii_token():
    tok = Tokenizer(model=M.WordPiece({"[UNK]": 0, "a": 1}, "[UNK]", "##", 20))
    assert "wordpiece-bytes" not in {x.code for x in lower(tok, TARGETS[DEFAULT])[1].losses}
