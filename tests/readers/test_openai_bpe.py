"""OpenAI's original BPE layouts: GPT-2's encoder.json + vocab.bpe (recognized by content, read
like vocab.json + merges.txt) and CLIP's bpe_simple_vocab_16e6.txt.gz (from the installed
open_clip_torch, which `make setup` installs) against open_clip's own
SimpleTokenizer; one test per malformed-file error."""

from __future__ import annotations

import gzip
import importlib.util
import shutil
import sys
import types
from pathlib import Path

import pytest

from mtok_export.errors import InputError
from mtok_export.formats import choose, classify, read_source
from mtok_export.readers.openai_bpe import CLIP_MERGES, read_clip_merges
from mtok_export.corpus import builtin_corpus
from mtok_export.verify.reference_tiktoken import hf_from_ir

from tests.support.installed import import_installed, package_file

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
TEXTS = [s.text for s in builtin_corpus()]


@pytest.mark.runtime
@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_gpt2_encoder_json_and_vocab_bpe(tmp_path):
    from tokenizers import Tokenizer

    shutil.copy(CORPUS / "gpt2/vocab.json", tmp_path / "encoder.json")
    shutil.copy(CORPUS / "gpt2/merges.txt", tmp_path / "vocab.bpe")
    file, fmt, _ = choose(tmp_path)
    assert (file.name, fmt.name) == ("encoder.json", "vocab.json")
    tok = read_source(tmp_path)
    assert "no tokenizer_class: GPT-2 post-processing (adds nothing) assumed" in tok.meta.notes
    ours, ref = hf_from_ir(tok), Tokenizer.from_file(str(CORPUS / "gpt2/tokenizer.json"))
    assert [e.ids for e in ours.encode_batch(TEXTS)] == [e.ids for e in ref.encode_batch(TEXTS)]


@pytest.fixture(scope="module")
def clip():
    """(path of CLIP's merges .gz, open_clip's SimpleTokenizer on it)."""
    gz = package_file("open_clip_torch", "open_clip/bpe_simple_vocab_16e6.txt.gz")
    source = package_file("open_clip_torch", "open_clip/tokenizer.py")
    import_installed("ftfy")
    import_installed("regex")
    stub = types.ModuleType("torch")  # the module imports torch only for the tensors __call__ returns
    stub.LongTensor = stub.Tensor = object
    saved = sys.modules.get("torch")
    sys.modules["torch"] = stub
    try:
        spec = importlib.util.spec_from_file_location("open_clip_tokenizer", source)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved
    return gz, module


@pytest.mark.runtime
def test_clip_ids_equal_open_clip(clip):
    gz, oc = clip
    assert classify(gz).name == "clip-bpe-gz"
    tok = read_source(gz)
    assert len(tok.model.vocab) == 49408 and tok.model.vocab["<|endoftext|>"] == 49407
    hf = hf_from_ir(tok)
    ref = oc.SimpleTokenizer(str(gz))
    # Left out, each a recorded difference: text ftfy/html.unescape change, special-token text,
    # and capital sigma (Python's lower() picks the final form by context, HF's Lowercase does not).
    same = [t for t in TEXTS if oc.whitespace_clean(oc.basic_clean(t)) == oc.whitespace_clean(t)
            and "oftext|>" not in t.lower() and "Σ" not in t]
    assert len(same) >= 390
    assert [hf.encode(t, add_special_tokens=False).ids for t in same] == [ref.encode(t) for t in same]
    assert hf.encode("a photo of a cat").ids == [49406, 320, 1125, 539, 320, 2368, 49407]


def _gz(tmp_path, text: str) -> Path:
    p = tmp_path / "bpe.txt.gz"
    p.write_bytes(gzip.compress(text.encode("utf-8")))
    return p


@pytest.mark.parametrize("body, message", [
    ("no header\n", "line 1: expected the '#version' header"),
    ("#version: 0.2\nh e\n", f"CLIP needs {CLIP_MERGES} merges after the header"),
])
def test_clip_malformed(tmp_path, body, message):
    with pytest.raises(InputError, match=message):
        read_clip_merges(_gz(tmp_path, body))


@pytest.mark.runtime
def test_clip_bad_merge_lines(clip, tmp_path):
    lines = gzip.decompress(clip[0].read_bytes()).decode("utf-8").split("\n")
    bad = lines.copy()
    bad[5] = "one"
    with pytest.raises(InputError, match="line 6: expected 'left right'"):
        read_clip_merges(_gz(tmp_path, "\n".join(bad)))
    bad = lines.copy()
    bad[5] = "q @@none@@"
    with pytest.raises(InputError, match="line 6: merge .q @@none@@. names a token no line makes"):
        read_clip_merges(_gz(tmp_path, "\n".join(bad)))


def test_clip_truncated_gzip(clip, tmp_path):
    p = tmp_path / "cut.gz"
    p.write_bytes(clip[0].read_bytes()[:4000])
    with pytest.raises(InputError, match="cut.gz: truncated or corrupt gzip data"):
        read_clip_merges(p)
    p.write_bytes(b"plain text, not gzip")
    with pytest.raises(InputError, match="not a readable gzip file"):
        read_clip_merges(p)
