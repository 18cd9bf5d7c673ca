"""Every written corpus/sample `.mtok` (lowered with --allow-lossy semantics) loads in the real MNN
3.6.1 runtime and encodes text without crashing (spec section 11: always in a subprocess)."""

from __future__ import annotations


import pytest

from mtok_export.ir.models import vocab_of
from mtok_export.verify.runtime import run_runtime

from tests.support.marks import MNN_MISSING, runtime

pytestmark = [runtime, MNN_MISSING]

TEXTS = ["Hello world", "123 你好"]


@pytest.fixture(scope="module")
def written(lowered_corpus, tmp_path_factory):
    """name -> path of the written file; one file per tokenizer, written on first use."""
    root = tmp_path_factory.mktemp("mtok")
    cache = {}

    def get(name):
        if name not in cache:
            path = root / (name.replace("/", "__") + ".mtok")
            path.write_bytes(lowered_corpus[name].data)
            cache[name] = path
        return cache[name]
    return get


def test_runtime_loads_and_encodes(tokenizer_name, written, lowered_corpus):
    low = lowered_corpus[tokenizer_name].lowered
    result = run_runtime(written(tokenizer_name), texts=TEXTS)
    assert result.version.startswith("3.6")
    assert len(result.encodes) == len(TEXTS)
    known = set(vocab_of(low.model).values()) | {t.id for t in low.added_tokens}
    prefix = list(low.prefix_ids)
    for text, ids in zip(TEXTS, result.encodes):
        assert ids[:len(prefix)] == prefix, text      # 3.6 adds the header prefix, nothing else
        assert len(ids) > len(prefix), text           # the text itself produced ids
        assert all(isinstance(i, int) and i in known for i in ids), (text, ids)
