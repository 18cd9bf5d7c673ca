"""The tiktoken rank-file reader (`readers/tiktoken.py`): the Qwen ranks against tiktoken itself,
the known-vocabulary table, unknown rank files that need a pattern and specials, malformed files."""

from __future__ import annotations

import base64
import json

import pytest

from mtok_export.errors import InputError
from mtok_export.ir import AddedToken
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.readers.tiktoken import KNOWN, read_tiktoken
from mtok_export.verify.reference_tiktoken import hf_ir_reference, nfc, tiktoken_reference

from tests.support.corpus_dirs import CORPUS
from tests.support.other_inputs import COMPARED, TEXTS, same, write

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


@pytest.fixture(scope="module")
def qwen():
    return read_tiktoken(CORPUS / "qwen-7b_tiktoken")


def _ranks_file(ranks: list[bytes]) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks))


SMALL_RANKS = [bytes([b]) for b in range(256)] + [b"he", b"ll", b"llo", b"hello", b" w", b"or", b" wor", b"ld",
                                                  b" world", b"xyz"]


@pytest.mark.runtime
def test_qwen_rank_file(qwen):
    m = qwen.model
    assert isinstance(m, M.BPE) and m.ignore_merges
    assert len(m.vocab) == 151643 and len(m.merges) == 294166
    assert m.vocab["Hello"] == 9707 and m.vocab["\u0120world"] == 1879
    assert m.merges[:3] == (("\u0120", "\u0120"), ("\u0120", "\u0120\u0120\u0120"), ("\u0120\u0120", "\u0120\u0120"))
    assert [t.id for t in qwen.added_tokens] == list(range(151643, 151643 + 208))
    assert [t.content for t in qwen.added_tokens[:3]] == ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    assert qwen.added_tokens[-1].content == "<|extra_204|>" and all(t.special for t in qwen.added_tokens)
    assert qwen.stop_ids == (151643, 151645)
    assert isinstance(qwen.normalizer, N.NFC)
    assert qwen.pre_tokenizer.pretokenizers[0].pattern.value == KNOWN[
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"].pattern
    assert any("known vocabulary qwen" in n for n in qwen.meta.notes)


@pytest.mark.runtime
def test_qwen_ir_encodes_like_tiktoken(qwen):
    pattern = qwen.pre_tokenizer.pretokenizers[0].pattern.value
    ref = tiktoken_reference(CORPUS / "qwen-7b_tiktoken/qwen.tiktoken", pattern,
                             {t.content: t.id for t in qwen.added_tokens}, TEXTS, normalize=nfc)
    assert same(hf_ir_reference(qwen, TEXTS), ref) == {f: len(TEXTS) for f in COMPARED}


@pytest.mark.runtime
def test_llama3_rank_file_equals_its_tokenizer_json():
    a = read_tiktoken(CORPUS / "meta-llama-3-8b-instruct/tiktoken.model")
    b = read_model_dir(CORPUS / "meta-llama-3-8b-instruct")
    assert a.model == b.model  # vocab, the 280147 recovered merges, ignore_merges
    for f in ("normalizer", "pre_tokenizer", "decoder", "post_processor", "added_tokens", "special_ids", "chat"):
        assert getattr(a, f) == getattr(b, f), f
    assert "split regex from tokenizer.json (Split regex)" in a.meta.notes


@pytest.mark.runtime
def test_llama3_bare_rank_file_uses_known_table(tmp_path):
    (tmp_path / "tiktoken.model").symlink_to(CORPUS / "meta-llama-3-8b-instruct/tiktoken.model")
    a = read_tiktoken(tmp_path)
    cfg = json.loads((CORPUS / "meta-llama-3-8b-instruct/tokenizer_config.json").read_text())
    assert [(t.id, t.content) for t in a.added_tokens] == sorted(
        (int(k), v["content"]) for k, v in cfg["added_tokens_decoder"].items())
    assert a.stop_ids == (128001, 128009)  # <|end_of_text|>, <|eot_id|>
    assert any("known vocabulary llama3" in n for n in a.meta.notes)


def test_known_table_matches_tiktoken_ext(monkeypatch):
    public = pytest.importorskip("tiktoken_ext.openai_public")
    hashes = {}
    monkeypatch.setattr(public, "load_tiktoken_bpe", lambda url, expected_hash=None: hashes.setdefault(url, expected_hash) and {})
    by_name = {v.name: v for v in KNOWN.values()}
    for name in ("cl100k_base", "o200k_base", "r50k_base", "p50k_base"):
        spec = getattr(public, name)()
        entry = by_name[name]
        assert entry.pattern == spec["pat_str"]
        assert dict(entry.specials) == spec["special_tokens"]
        assert entry.sha256 in hashes.values()


def test_unknown_rank_file_needs_pattern_and_specials(tmp_path):
    path = write(tmp_path / "mine.tiktoken", _ranks_file(SMALL_RANKS))
    with pytest.raises(InputError) as e:
        read_tiktoken(path)
    assert "split regex" in str(e.value) and "special tokens" in str(e.value) and str(path) in str(e.value)
    pattern = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    tok = read_tiktoken(path, pattern=pattern, special=["<|end|>"])
    assert tok.added_tokens == (AddedToken(len(SMALL_RANKS), "<|end|>", normalized=False, special=True),)
    assert tok.model.merges == (("h", "e"), ("l", "l"), ("ll", "o"), ("he", "llo"), ("\u0120", "w"), ("o", "r"),
                                ("\u0120w", "or"), ("l", "d"), ("\u0120wor", "ld"))
    assert any("1 multi-byte token(s) are not the concatenation" in n for n in tok.meta.notes)  # b"xyz"
    assert tok.meta.notes[:2] == ("split regex from the pattern argument", "special tokens from the special argument")
    texts = ["hello world", "hello<|end|> world!!", "x\u00e9 12", "xyz xyzxyz"]
    ref = tiktoken_reference(path, pattern, {"<|end|>": len(SMALL_RANKS)}, texts)
    assert hf_ir_reference(tok, texts).raw == ref.raw


@pytest.mark.parametrize("lines,line,message", [
    ("IQ== 0\nnot*base64 1\n", 2, "not valid base64"),
    ("IQ== 0\nIg== one\n", 2, "not a non-negative integer"),
    ("IQ== 0\nIg== 0\n", 2, "rank 0 is already used on line 1"),
    ("IQ== 0\nIQ== 1\n", 2, "already has rank 0"),
    ("IQ== 0\nIg== 1 x\n", 2, "expected '<base64 token> <rank>'"),
    ("IQ== 0\nIg==\n", 2, "expected '<base64 token> <rank>'"),
])
def test_rank_file_errors(tmp_path, lines, line, message):
    path = write(tmp_path / "bad.tiktoken", lines)
    with pytest.raises(InputError) as e:
        read_tiktoken(path, pattern=".", special={})
    assert f"{path} line {line}" in str(e.value) and message in str(e.value)


def test_empty_rank_file(tmp_path):
    with pytest.raises(InputError, match="no ranks"):
        read_tiktoken(write(tmp_path / "e.tiktoken", "\n"), pattern=".", special={})


def test_a_rank_gap_must_be_a_special_tokens_id(tmp_path):
    """p50k_base leaves 50256 to <|endoftext|>: a gap a special token fills is read (ids kept as the
    ranks give them), any other is refused."""
    path = write(tmp_path / "gap.tiktoken", "".join(f"{base64.b64encode(t).decode()} {i + (i >= 256)}\n"
                                                    for i, t in enumerate(SMALL_RANKS)))
    with pytest.raises(InputError) as e:
        read_tiktoken(path, pattern=".", special={})
    assert str(e.value) == (f"{path}: ranks must be 0..{len(SMALL_RANKS)} without gaps, but rank 256 is missing and "
                            "no special token has that id (the special argument)")
    tok = read_tiktoken(path, pattern=r"\S+|\s+", special={"<|end|>": 256})
    assert tok.model.vocab["he"] == 257 and 256 not in tok.model.vocab.values()
    assert tok.model.merges[0] == ("h", "e")  # the merges follow the ranks, not the positions
    assert any("1 id(s) between the ranks are special tokens' (e.g. 256)" in n for n in tok.meta.notes)
    texts = ["hello world", "hello<|end|> world xyz"]
    ranks = {t: i + (i >= 256) for i, t in enumerate(SMALL_RANKS)}
    import tiktoken
    enc = tiktoken.Encoding("gap", pat_str=r"\S+|\s+", mergeable_ranks=ranks, special_tokens={"<|end|>": 256})
    assert hf_ir_reference(tok, texts).raw == [enc.encode(t, allowed_special="all") for t in texts]
