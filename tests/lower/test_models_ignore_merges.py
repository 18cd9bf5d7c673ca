"""BPE `ignore_merges` (lower/models.py): HF takes a pre-token that is a vocab word as it is, the
runtime always merges.  Measured on Llama-3: which vocab words differ, that no appended merge can
rebuild them, that the runtime shows the difference without the exact form (lower/whole_words.py,
tested in test_whole_words.py), and that the flag is no loss where every vocab word is rebuilt by
its merges anyway."""

from __future__ import annotations

import importlib.util
import json
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from mtok_export.formats import read_source
from mtok_export.lower import lower
from mtok_export.lower.models import _words_merges_miss
from mtok_export.mtok import write_mtok
from mtok_export.targets import TARGETS
from mtok_export.verify.runtime import run_runtime

CORPUS = Path(__file__).resolve().parents[2].parent / "shared/corpus/tokenizers"
LLAMA3 = CORPUS / "meta-llama-3-8b-instruct"
pytestmark = pytest.mark.skipif(not LLAMA3.is_dir(), reason="shared corpus not present")


@pytest.fixture(scope="module")
def llama3():
    return read_source(LLAMA3)


@pytest.mark.runtime
def test_llama3_words_the_merges_miss(llama3):
    missed = dict(_words_merges_miss(llama3.model))
    assert len(missed) == 588 and missed["\u0120Vi\u00e1\u00bb\u0129t"] == ["\u0120Vi", "\u00e1\u00bb\u0129", "t"]
    _, lw = lower(llama3, TARGETS["mnn-3.6"])
    assert "ignore-merges" not in {x.code for x in lw.losses}  # the exact form: lower/whole_words.py
    assert "588 vocab word(s)" in lw.applied["ignore-merges-exact"][0]


def test_no_appended_merge_rebuilds_them(llama3):
    """Merges appended after the others fire only once BPE is done, on its final pieces; for every
    missed word no binary tree over those pieces has all its nodes in the vocab (each merge needs its
    result to be a token), so no appended merges can build it."""
    from functools import lru_cache

    from tokenizers.models import BPE

    m = llama3.model
    bpe = BPE(vocab=dict(m.vocab), merges=[tuple(x) for x in m.merges], ignore_merges=False)
    for w, pieces in _words_merges_miss(m):
        assert pieces == [t.value for t in bpe.tokenize(w)]

        @lru_cache(maxsize=None)
        def buildable(i: int, j: int) -> bool:
            return j - i == 1 or ("".join(pieces[i:j]) in m.vocab and
                                  any(buildable(i, k) and buildable(k, j) for k in range(i + 1, j)))
        assert len(pieces) > 1 and not buildable(0, len(pieces)), w


@pytest.mark.runtime
@pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")
def test_runtime_merges_the_vocab_word(llama3):
    """Without the exact form (the file of the source with ignore_merges off), "Cửa Việt" gets on the
    runtime the ids of HF without ignore_merges, not HF's own; with it, HF's own."""
    text = "C\u1eeda Vi\u1ec7t"
    hf = Tokenizer.from_file(str(LLAMA3 / "tokenizer.json"))
    tj = json.loads((LLAMA3 / "tokenizer.json").read_text(encoding="utf-8"))
    tj["model"]["ignore_merges"] = False
    merged = Tokenizer.from_str(json.dumps(tj))
    without, _ = lower(replace(llama3, model=replace(llama3.model, ignore_merges=False)), TARGETS["mnn-3.6"])
    exact, _ = lower(llama3, TARGETS["mnn-3.6"])
    with tempfile.TemporaryDirectory() as d:
        got = []
        for low in (without, exact):
            path = Path(d) / "tokenizer.mtok"
            path.write_bytes(write_mtok(low))
            got += run_runtime(path, texts=[text]).encodes
    want, runtime_like = (t.encode(text, add_special_tokens=False).ids for t in (hf, merged))
    assert want != runtime_like
    assert got[0][-len(runtime_like):] == runtime_like
    assert got[1][-len(want):] == want


@pytest.mark.runtime
def test_flag_without_effect_is_no_loss():
    """Qwen-1's vocabulary is rebuilt by its merges word for word: ignore_merges changes nothing."""
    tok = read_source(CORPUS / "qwen-7b_tiktoken")
    assert tok.model.ignore_merges and not _words_merges_miss(tok.model)
    _, lw = lower(tok, TARGETS["mnn-3.6"])
    assert "ignore-merges-moot" in lw.applied
    assert "ignore-merges" not in {x.code for x in lw.losses}
