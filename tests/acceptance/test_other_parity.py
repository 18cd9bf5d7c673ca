"""Parity of the inputs that are not a tokenizer.json (tiktoken ranks, vocab.json + merges.txt, BERT
vocab.txt; `tests/support/other_parity.py`): `.mtok` on MNN 3.6.1 and legacy `.txt` on MNN 3.4.1
against the reference, at least the measured shares, every mismatch explained."""

from __future__ import annotations

import pytest

from mtok_export.readers.bert_vocab import read_bert_vocab
from mtok_export.readers.gpt2_files import read_gpt2_files
from mtok_export.readers.tiktoken import read_tiktoken

from tests.support import other_parity
from tests.support.corpus_dirs import CORPUS

pytestmark = [pytest.mark.runtime,  # every input on MNN 3.6.1 and 3.4.1
              pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")]


@pytest.fixture(scope="module")
def sources():
    """The corpus inputs the legacy types are written from, read once."""
    gpt2 = {name: read_gpt2_files(CORPUS / name) for name in ("gpt2", "roberta-base", "whisper-large-v3")}
    return {**gpt2, "bert": read_bert_vocab(CORPUS / "bert-base-uncased"), "qwen": read_tiktoken(CORPUS / "qwen-7b_tiktoken")}


# Minimum share of matching samples (raw ids, engine ids, streaming decode), from the measured
# counts on the built-in corpus (469 samples without NUL) rounded down: .mtok gpt2 469/469/469,
# bert 437/0/40, qwen 461/461/469; .txt gpt2 type 3 395/395/469, bert type 2 287/0/104, qwen
# type 1 303/303/469.  Every mismatch must be explained (no UNEXPLAINED class).
MTOK_PARITY = {
    "gpt2 vocab.json+merges.txt": ("gpt2", (1.0, 1.0, 1.0)),
    "bert-base-uncased vocab.txt": ("bert", (0.93, 0.0, 0.085)),
    "qwen-7b_tiktoken/qwen.tiktoken": ("qwen", (0.98, 0.98, 1.0)),
}
TXT_PARITY = {
    ("gpt2 vocab.json+merges.txt", 3): ("gpt2", (0.84, 0.84, 1.0)),
    ("bert-base-uncased vocab.txt", 2): ("bert", (0.61, 0.0, 0.22)),
    ("qwen-7b_tiktoken/qwen.tiktoken", 1): ("qwen", (0.64, 0.64, 1.0)),
}


def _check_row(row, minimum):
    n = len(other_parity.samples())
    assert all(row.checks[c][1] == n for c in row.checks), row.checks
    got = tuple(row.checks[c][0] / n for c in ("raw ids", "engine ids", "streaming decode"))
    assert all(g >= m for g, m in zip(got, minimum)), (row.input, row.file, got, minimum)
    assert not [k for k in row.classes if "UNEXPLAINED" in k], row.classes


def test_parity_mtok(sources):
    for name, (src, minimum) in MTOK_PARITY.items():
        _check_row(other_parity.parity_mtok(name, sources[src]), minimum)


def test_parity_legacy(sources, mnn341_python):
    for (name, kind), (src, minimum) in TXT_PARITY.items():
        row = other_parity.parity_txt(name, kind, mnn341_python, sources[src])
        _check_row(row, minimum)
        assert row.runtime == "3.4.1"
