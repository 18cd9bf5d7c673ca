"""The GGUF reader (`readers/gguf.py`) on llama.cpp's vocab-only files: the IR, run through HF
`tokenizers`, gives llama.cpp's expected ids (`testvectors/*.inp/.out`, produced by HF with
add_special_tokens=False); the written `.mtok` gives them on the real MNN 3.6.1 runtime; and every
malformed container or key is a clear `InputError`/`UnsupportedError`, built here with gguf-py's
writer."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from mtok_export.errors import InputError, UnsupportedError
from mtok_export.formats import read_source
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.gguf import read_gguf
from mtok_export.verify.reference_tiktoken import hf_from_ir

REPO = Path(__file__).resolve().parents[1]
GGUF = REPO.parent / "shared/corpus/gguf"
VECTORS = REPO.parent / "shared/corpus/testvectors"
pytestmark = pytest.mark.skipif(not GGUF.is_dir(), reason="shared corpus not present")

# BPE byte-level (gpt-2, falcon, deepseek-coder, mpt, refact), SentencePiece (llama-spm, phi-3),
# WordPiece (bert-bge); llama-bpe, qwen2, qwen35 and deepseek-llm pass too but cost 4-9 s each.
FAMILIES = ("gpt-2", "falcon", "deepseek-coder", "mpt", "refact", "llama-spm", "phi-3", "bert-bge")


def vectors(name: str) -> list[tuple[str, list[int]]]:
    inp = (VECTORS / f"ggml-vocab-{name}.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    if inp[-1] == "":
        inp.pop()
    out = (VECTORS / f"ggml-vocab-{name}.gguf.out").read_text(encoding="utf-8").split("\n")
    return [(s, [int(x) for x in o.split()]) for s, o in zip(inp, out)]


@pytest.fixture(scope="module")
def read():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = read_gguf(GGUF / f"ggml-vocab-{name}.gguf")
        return cache[name]
    return get


@pytest.mark.parametrize("name", FAMILIES)
def test_ids_equal_llama_cpp_test_vectors(name, read):
    hf = hf_from_ir(read(name))
    cases = vectors(name)
    got = [hf.encode(s, add_special_tokens=False).ids for s, _ in cases]
    wrong = [(s, e, g) for (s, e), g in zip(cases, got) if e != g]
    assert not wrong, f"{len(cases) - len(wrong)}/{len(cases)}; first: {wrong[0]}"
    assert len(cases) == 46


@pytest.mark.parametrize("name, hf_dir", [("gpt-2", "gpt2"), ("falcon", "falcon-7b"), ("bert-bge", "bert-base-uncased")])
def test_ids_equal_the_corpus_tokenizer_json_of_the_same_model(name, hf_dir, read):
    """Where the corpus holds the HF tokenizer the GGUF was converted from (bge-small shares
    bert-base-uncased's vocabulary), the built-in corpus encodes identically."""
    from tokenizers import Tokenizer

    from mtok_export.corpus import builtin_corpus

    texts = [s.text for s in builtin_corpus()]
    ref = Tokenizer.from_file(str(REPO.parent / "shared/corpus/tokenizers" / hf_dir / "tokenizer.json"))
    ours = hf_from_ir(read(name))
    assert [e.ids for e in ours.encode_batch(texts, add_special_tokens=False)] == \
        [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]


def test_keys_reach_the_ir(read):
    spm = read("llama-spm")
    assert spm.meta.add_bos_token is True and spm.meta.add_eos_token is False
    assert (spm.chat.bos_token, spm.chat.eos_token) == ("<s>", "</s>")
    assert spm.stop_ids == (2,)
    assert spm.model.byte_fallback and spm.model.vocab["<0x0A>"] == 13
    phi = read("phi-3")
    assert phi.chat.text.startswith("{{ bos_token }}{% for message in messages %}")
    assert "tokenizer.chat_template" in phi.chat.source
    assert 32007 in phi.stop_ids  # <|end|>, llama.cpp's EOT text
    gpt2 = read("gpt-2")
    assert len(gpt2.model.vocab) == 50257 and len(gpt2.model.merges) == 50000
    assert gpt2.model.merges[0] == ("Ġ", "t")
    bert = read("bert-bge")
    assert bert.model.vocab["##s"] == 2015 and bert.model.vocab["the"] == 1996  # ▁the / s restored
    assert [t.content for t in bert.added_tokens] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def test_llama_bpe_ignores_merges_and_adds_bos(read):
    tok = read_gguf(GGUF / "ggml-vocab-llama-bpe.gguf")
    assert tok.model.ignore_merges is True
    assert tok.meta.add_bos_token is True and tok.prefix_ids == () and tok.post_processor.single[0].id == "<|begin_of_text|>"


def test_directory_and_file_paths_pick_the_gguf(tmp_path):
    import shutil

    shutil.copy(GGUF / "ggml-vocab-gpt-2.gguf", tmp_path / "model.bin")
    tok = read_source(tmp_path)
    assert Path(tok.provenance.inputs[0].path).name == "model.bin"


@pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")
@pytest.mark.parametrize("name", ("gpt-2", "llama-spm", "deepseek-coder", "bert-bge"))
def test_written_mtok_gives_the_vectors_on_the_runtime(name, read, tmp_path):
    from mtok_export.verify.runtime import run_runtime

    low, _ = lower(read(name))
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    cases = [(s, e) for s, e in vectors(name) if "\0" not in s]
    result = run_runtime(path, texts=[s for s, _ in cases])
    prefix = list(low.prefix_ids)
    got = [ids[len(prefix):] for ids in result.encodes]
    assert [g for g in got] == [e for _, e in cases]


# ------------------------------------------------------------------ malformed files


def _write(path: Path, *, model="gpt2", tokens=("a", "b", "ab"), types=(1, 1, 1), merges=("a b",), pre="gpt-2",
           extra=None) -> Path:
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    if model is not None:
        w.add_tokenizer_model(model)
    if pre is not None:
        w.add_tokenizer_pre(pre)
    if tokens is not None:
        w.add_token_list(list(tokens))
    if types is not None:
        w.add_token_types(list(types))
    if merges is not None:
        w.add_token_merges(list(merges))
    for key, value in (extra or {}).items():
        w.add_uint32(key, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path


def test_tiny_handmade_file_reads(tmp_path):
    tok = read_gguf(_write(tmp_path / "t.gguf"))
    assert tok.model.vocab == {"a": 0, "b": 1, "ab": 2} and tok.model.merges == (("a", "b"),)
    assert hf_from_ir(tok).encode("ab ba", add_special_tokens=False).ids == [2, 1, 0]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"model": None}, InputError, "no tokenizer.ggml.model key"),
    ({"model": "rwkv"}, UnsupportedError, "tokenizer model 'rwkv' is not supported"),
    ({"tokens": None}, InputError, "tokenizer.ggml.tokens is missing or empty"),
    ({"types": (1, 1)}, InputError, "tokenizer.ggml.token_type has 2 entries for 3 tokens"),
    ({"merges": None}, InputError, "a gpt2 tokenizer needs tokenizer.ggml.merges"),
    ({"merges": ("a c",)}, InputError, r"tokenizer.ggml.merges\[0\] = 'a c' is not two tokens"),
    ({"pre": "klingon"}, UnsupportedError, "pre-tokenizer 'klingon' is not in the table"),
    ({"extra": {"tokenizer.ggml.bos_token_id": 7}}, InputError, "bos_token_id = 7 is outside the 3 tokens"),
    ({"model": "llama"}, InputError, "needs tokenizer.ggml.scores"),
])
def test_malformed_keys(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        read_gguf(_write(tmp_path / "t.gguf", **kwargs))


def test_truncated_container(tmp_path):
    data = (GGUF / "ggml-vocab-gpt-2.gguf").read_bytes()
    (tmp_path / "t.gguf").write_bytes(data[:5000])
    with pytest.raises(InputError, match="t.gguf: not a readable GGUF file"):
        read_gguf(tmp_path / "t.gguf")


def test_cli_error_is_one_line_exit_2(tmp_path, monkeypatch, capsys):
    import sys

    from mtok_export.cli import export_main

    _write(tmp_path / "t.gguf", pre="klingon")
    monkeypatch.setattr(sys, "argv", ["mtok-export", "--path", str(tmp_path / "t.gguf"), "--no-verify"])
    with pytest.raises(SystemExit) as info:
        export_main()
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.startswith("error: ") and "Traceback" not in err
