"""`--max-word N` (`lower/pre_tokenizers.py` `max_word`): a split after the pre-tokenizers cuts every
word longer than N characters into N-character pieces, bounding MNN's BPE (quadratic in a word's
length).  The loss's projection (the same split patched into the source, run by HF) is checked
against an independent construction (HF's own ids of each N-character piece, concatenated), and on
the runtime the file is exact for every word up to N and equals the projection beyond."""

from __future__ import annotations

from mtok_export import losses as L
from mtok_export.ir import pre_tokenizers as P
from mtok_export.lower import Forms
from mtok_export.verify.runtime import run_runtime
from tests.support.gpt2_patterns import gpt2_with
from tests.support.marks import needs_mnn

GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
N = 64
CAPPED = Forms(max_word=N)


def _patched_hf(tmp_path, lw):
    """HF on the source with the loss's patch, written back as a tokenizer.json."""
    from tokenizers import Tokenizer

    from mtok_export.ir.paths import replace_at
    from mtok_export.readers.model_dir import read_model_dir
    from mtok_export.writers.hf_json import write_tokenizer_json

    (loss,) = [x for x in lw.losses if x.kind is L.MAX_WORD]
    tok = replace_at(read_model_dir(tmp_path / "src"), *loss.patch)
    return Tokenizer.from_str(write_tokenizer_json(tok).decode("utf-8"))


def test_the_cap_is_one_split_before_byte_level_and_a_loss_with_a_patch(tmp_path):
    _, _, lw = gpt2_with(tmp_path, [GPT2], CAPPED)
    (loss,) = [x for x in lw.losses if x.kind is L.MAX_WORD]
    path, value = loss.patch
    assert path == "$.pre_tokenizer" and isinstance(value, P.Sequence)
    kinds = [type(k).__name__ for k in value.pretokenizers]
    assert kinds == ["Split", "Split", "ByteLevel"] and value.pretokenizers[1].pattern.value == r"[\s\S]{1,64}"
    assert "max-word" in lw.applied and f"up to {N}" in loss.reason
    # a length below 1 is refused by the job, which checks every option once (tests/test_job.py)


def test_the_projection_is_each_n_character_piece_encoded_alone(tmp_path):
    hf, _, lw = gpt2_with(tmp_path, [GPT2], CAPPED)
    capped = _patched_hf(tmp_path, lw)
    word = ("abcdefghij" * 40)[:333]
    pieces = [word[i:i + N] for i in range(0, len(word), N)]
    want = [i for p in pieces for i in hf.encode(p, add_special_tokens=False).ids]
    assert capped.encode(word, add_special_tokens=False).ids == want
    short = "a sentence whose every word is short, 1234 and !!"
    assert capped.encode(short, add_special_tokens=False).ids == hf.encode(short, add_special_tokens=False).ids


@needs_mnn
def test_on_the_runtime_exact_up_to_n_and_the_projection_beyond(tmp_path):
    hf, path, lw = gpt2_with(tmp_path, [GPT2], CAPPED)
    capped = _patched_hf(tmp_path, lw)
    short = ["hello world", "a" * N, " " * N, "x" * (N - 1) + " y", "ünïcödé " * 20]
    long = ["a" * (N + 1), ("abcdefghij" * 3000)[:20_000], " " * 1_000, "中文" * 200, "ünïcödé" * 40]
    got = run_runtime(path, texts=short + long).encodes
    assert got[:len(short)] == [e.ids for e in hf.encode_batch(short, add_special_tokens=False)]
    assert got[len(short):] == [e.ids for e in capped.encode_batch(long, add_special_tokens=False)]
    assert got[len(short) + 1] != hf.encode(long[1], add_special_tokens=False).ids  # the loss is real
