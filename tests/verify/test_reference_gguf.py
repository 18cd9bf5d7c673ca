"""The GGUF reference (`verify/reference_gguf.py`: llama.cpp through llama-cpp-python) against the
truth that is independent of both it and our reader: llama.cpp's test vectors
(`testvectors/ggml-vocab-*.gguf.inp/.out`, HF's ids for the model each GGUF was converted from).
The k/n per file is printed after the run.  The tests that need llama.cpp skip without
llama-cpp-python; the refusals (library missing, tokenizer llama.cpp cannot load, file that is no
GGUF) run everywhere."""

from __future__ import annotations

import importlib.util
import struct
import sys
from pathlib import Path

import pytest

from mtok_export.corpus import Chat, testvector_corpus
from mtok_export.errors import InputError
from mtok_export.verify.reference import ReferenceUnavailable
from mtok_export.verify.reference_gguf import _metadata, gguf_reference

REPO = Path(__file__).resolve().parents[2]
GGUF = REPO.parent / "shared/corpus/gguf"
VECTORS = REPO.parent / "shared/corpus/testvectors"
WITH_VECTORS = sorted(p.name[len("ggml-vocab-"):-len(".gguf")] for p in GGUF.glob("*.gguf")
                      if (VECTORS / f"{p.name}.inp").is_file())
HAS_LLAMA = importlib.util.find_spec("llama_cpp") is not None
needs_llama = pytest.mark.skipif(not HAS_LLAMA, reason="llama-cpp-python is not installed")
pytestmark = pytest.mark.skipif(not GGUF.is_dir(), reason="shared corpus not present")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "cache"))


def vectors(name: str) -> tuple[list[str], list[list[int]]]:
    path = VECTORS / f"ggml-vocab-{name}.gguf.inp"
    texts = [s.text for s in testvector_corpus(path)]
    lines = path.with_suffix(".out").read_text(encoding="utf-8").split("\n")
    return texts, [[int(x) for x in line.split()] for line in lines[:len(texts)]]


_REPORTED: list[str] = []


def _report(line: str) -> None:
    from tests.support.summary import SUMMARY

    if not _REPORTED:
        SUMMARY.extend(["", "GGUF reference (llama.cpp) on llama.cpp's test vectors, k/n equal"])
    _REPORTED.append(line)
    SUMMARY.append(line)


def test_every_corpus_gguf_but_one_has_vectors():
    assert len(WITH_VECTORS) == 12 and "gpt-neox" not in WITH_VECTORS


@pytest.mark.runtime
@needs_llama
@pytest.mark.parametrize("name", WITH_VECTORS)
def test_raw_ids_equal_the_test_vectors(name):
    texts, want = vectors(name)
    ref = gguf_reference(GGUF / f"ggml-vocab-{name}.gguf", texts, [])
    k = sum(a == b for a, b in zip(ref.raw, want))
    _report(f"  {name:15} {k}/{len(texts)}")
    wrong = [(t, w, g) for t, w, g in zip(texts, want, ref.raw) if w != g]
    assert not wrong, f"{k}/{len(texts)}; first: {wrong[0]!r:.300}"


@pytest.mark.runtime
@needs_llama
@pytest.mark.parametrize("name, prefix, suffix", [
    ("llama-spm", [1], []),  # <s>
    ("phi-3", [1], []),
    ("llama-bpe", [128000], []),  # <|begin_of_text|>
    ("bert-bge", [101], [102]),  # [CLS] ... [SEP]
    ("gpt-2", [], []),
    ("qwen2", [], []),
])
def test_engine_ids_add_what_the_model_adds(name, prefix, suffix):
    texts, want = vectors(name)
    ref = gguf_reference(GGUF / f"ggml-vocab-{name}.gguf", texts, [])
    assert ref.engine == [prefix + w + suffix for w in want]


@pytest.mark.runtime
@needs_llama
@pytest.mark.parametrize("name", ["gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "falcon"])
def test_byte_level_stream_gives_the_text_back(name):
    """A byte-level BPE's pieces are the text's bytes: the stream of the vectors' ids is the text
    (split multi-byte characters joined), spaces before punctuation kept ("you 😁 ?", which
    llama.cpp's whole-text decode would tidy to "you 😁?")."""
    texts, want = vectors(name)
    ref = gguf_reference(GGUF / f"ggml-vocab-{name}.gguf", texts, [])
    assert ref.decoded == texts
    assert ref.normalize("Ä x") == "Ä x"


@needs_llama
@pytest.mark.parametrize("name", ["llama-spm", "phi-3"])
def test_sentencepiece_stream_keeps_the_prefix_space(name):
    """SentencePiece pieces stream with the space the dummy prefix added ("▁Hello" -> " Hello"),
    as the runtime's decode(int) does; only a whole-text decode drops it."""
    texts, want = vectors(name)
    ref = gguf_reference(GGUF / f"ggml-vocab-{name}.gguf", texts, [])
    assert ref.decoded == [" " + t if t else t for t in texts]


@needs_llama
def test_special_token_text_is_one_id_in_raw_and_engine():
    ref = gguf_reference(GGUF / "ggml-vocab-phi-3.gguf", ["<|user|>hi<|end|>"], [])
    assert ref.raw[0][0] == 32010 and ref.raw[0][-1] == 32007
    assert ref.engine[0] == [1] + ref.raw[0]


@needs_llama
def test_chat_renders_the_files_own_template():
    """Phi-3's GGUF template: `{{ bos_token }}<|user|>\\n...<|end|>\\n<|assistant|>\\n`, BOS as
    llama.cpp names it.  The ids are what HF gives on Phi-3's own tokenizer.json (its special
    tokens strip the newline after them: rstrip)."""
    chats = [Chat("hi", ({"role": "user", "content": "Hi"},)),
             Chat("no-prompt", ({"role": "user", "content": "Hi"},), add_generation_prompt=False)]
    ref = gguf_reference(GGUF / "ggml-vocab-phi-3.gguf", ["x"], chats)
    assert ref.chat_text == ["<s><|user|>\nHi<|end|>\n<|assistant|>\n", None]
    assert ref.chat_ids == [[1, 32010, 6324, 32007, 32001], None]


@needs_llama
def test_no_template_no_chats():
    chats = [Chat("hi", ({"role": "user", "content": "Hi"},))]
    ref = gguf_reference(GGUF / "ggml-vocab-gpt-2.gguf", ["x"], chats)
    assert ref.chat_text == [None] and ref.chat_ids == [None]


@needs_llama
def test_cached_by_content(tmp_path, monkeypatch):
    """A second run is answered from the cache (llama.cpp is not loaded: hidden, it would refuse);
    another file content is computed afresh."""
    path = tmp_path / "v.gguf"
    path.write_bytes((GGUF / "ggml-vocab-gpt-2.gguf").read_bytes())
    first = gguf_reference(path, ["Hello world"], [])
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    assert gguf_reference(path, ["Hello world"], []).raw == first.raw == [[15496, 995]]
    path.write_bytes((GGUF / "ggml-vocab-gpt-neox.gguf").read_bytes())
    with pytest.raises(ReferenceUnavailable):
        gguf_reference(path, ["Hello world"], [])


@needs_llama
def test_loading_and_tokenizing_print_nothing(capfd):
    """llama.cpp logs on load, and warns when a text starting with BOS gets another one."""
    gguf_reference(GGUF / "ggml-vocab-refact.gguf", ["x"], [])
    gguf_reference(GGUF / "ggml-vocab-llama-spm.gguf", ["<s>Hi"], [])
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# ------------------------------------------------------------------ refusals


def test_library_missing_is_reference_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with pytest.raises(ReferenceUnavailable) as info:
        gguf_reference(GGUF / "ggml-vocab-gpt-2.gguf", ["x"], [])
    assert "llama-cpp-python is not installed" in info.value.why
    assert info.value.install.startswith("pip install 'mtok-export[gguf-reference]'")


def _write(path: Path, *, model="gpt2", pre="gpt-2") -> Path:
    import gguf

    w = gguf.GGUFWriter(str(path), "llama")
    w.add_tokenizer_model(model)
    w.add_tokenizer_pre(pre)
    w.add_token_list(["a", "b", "ab"])
    w.add_token_types([1, 1, 1])
    w.add_token_merges(["a b"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path


@needs_llama
def test_tiny_handmade_file_loads(tmp_path):
    ref = gguf_reference(_write(tmp_path / "t.gguf"), ["ab", "ba"], [])
    assert ref.raw == [[2], [1, 0]]


@needs_llama
@pytest.mark.parametrize("kwargs, named", [
    ({"model": "klingon"}, "tokenizer.ggml.model 'klingon'"),
    ({"pre": "klingon"}, "pre 'klingon'"),
])
def test_tokenizer_llama_cpp_cannot_load_is_reference_unavailable(tmp_path, kwargs, named):
    with pytest.raises(ReferenceUnavailable) as info:
        gguf_reference(_write(tmp_path / "t.gguf", **kwargs), ["x"], [])
    assert named in info.value.why and "t.gguf" in info.value.why
    assert "klingon" in info.value.why.partition(")")[2]  # llama.cpp's own reason follows
    assert info.value.install == "pip install -U llama-cpp-python"


def _header(version=3, n_kv=1) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, 0, n_kv)


def _kv(key: bytes, kind: int, payload: bytes) -> bytes:
    return struct.pack("<Q", len(key)) + key + struct.pack("<I", kind) + payload


@pytest.mark.parametrize("data, message", [
    (b"", "not a GGUF file"),
    (b"GGML" + bytes(20), r"not a GGUF file \(no GGUF magic at offset 0\)"),
    (_header(version=1), "GGUF version 1"),
    (_header()[:20], "GGUF metadata ends at offset 0x8: 16 more bytes needed, the file has 20"),
    (_header() + _kv(b"k", 8, struct.pack("<Q", 99) + b"abc"),
     "GGUF metadata ends at offset 0x2d: 99 more bytes needed, the file has 48"),
    (_header() + _kv(b"k", 13, b""), r"k: unknown GGUF value type 13 at offset 0x21"),
    (_header() + _kv(b"k", 9, struct.pack("<IQ", 4, 1 << 40)), "GGUF metadata ends at offset 0x31"),
    (_header() + _kv(b"k", 9, struct.pack("<IQ", 8, 1 << 40)), "GGUF metadata ends at offset 0x31"),
])
def test_unreadable_metadata_is_input_error(tmp_path, data, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message):
        gguf_reference(path, ["x"], [])


def test_missing_file_is_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read"):
        gguf_reference(tmp_path / "none.gguf", ["x"], [])


def test_cache_key_bytes_stop_before_the_tensors(tmp_path):
    """The key hashes the header and key-value section only: what follows it (the tensor table and
    data of a model file) does not count, every key-value byte does."""
    src = (GGUF / "ggml-vocab-gpt-2.gguf").read_bytes()
    path = tmp_path / "m.gguf"
    path.write_bytes(src + b"\0" * 4096)
    header, strings = _metadata(path)
    assert header == src and strings["tokenizer.ggml.model"] == "gpt2" and strings["tokenizer.ggml.pre"] == "gpt-2"
    nested = _header(n_kv=2) + _kv(b"n", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 2) + bytes(8)) \
        + _kv(b"s", 8, struct.pack("<Q", 2) + b"ok")
    path.write_bytes(nested + b"tensors")
    assert _metadata(path) == (nested, {"s": "ok"})


def test_metadata_is_walked_once_per_file_and_again_when_it_changes(tmp_path, monkeypatch):
    """`_metadata` remembers the last file by its identity (one verification asks for it four
    times; a 262k vocabulary's walk is seconds), and a file rewritten in place is walked again: a
    stale memo would hand the old template to llama.cpp's renders (the second assertion)."""
    import os

    from mtok_export.verify import reference_gguf as G
    from tests.readers.test_gguf_layout import container, kv_string, kv_strings

    f = tmp_path / "v.gguf"
    f.write_bytes(container([kv_string("tokenizer.chat_template", "one"), kv_strings("tokenizer.ggml.tokens", ["a", "b"])]))
    walks = []
    real = G._walk
    monkeypatch.setattr(G, "_walk", lambda m, path: walks.append(1) or real(m, path))
    first = G._metadata(f)
    assert G._metadata(f) == first and walks == [1] and first[1]["tokenizer.chat_template"] == "one"
    f.write_bytes(container([kv_string("tokenizer.chat_template", "two!"), kv_strings("tokenizer.ggml.tokens", ["a"])]))
    os.utime(f, ns=(1, 1))
    assert G._metadata(f)[1]["tokenizer.chat_template"] == "two!" and walks == [1, 1]
