"""The GGUF reader (`readers/gguf.py`) on llama.cpp's vocab-only files: the IR, run through HF
`tokenizers`, gives llama.cpp's expected ids (`testvectors/*.inp/.out`, produced by HF with
add_special_tokens=False); the written `.mtok` gives them on the real MNN 3.6.1 runtime; and every
malformed container or key is a clear `InputError`/`UnsupportedError`, built here with gguf-py's
writer."""

from __future__ import annotations

import importlib.util
import unicodedata
from pathlib import Path

import pytest

from mtok_export.job_options import ReadOptions
from mtok_export.errors import InputError, UnsupportedError
from mtok_export.formats import read_source
from mtok_export.lower import lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.gguf import read_gguf
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.reference_tiktoken import hf_from_ir
from tests.support.gemma4_vocab import gemma4_gguf

REPO = Path(__file__).resolve().parents[2]
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


@pytest.mark.runtime
@pytest.mark.parametrize("name", FAMILIES)
def test_ids_equal_llama_cpp_test_vectors(name, read):
    hf = hf_from_ir(read(name))
    cases = vectors(name)
    got = [hf.encode(s, add_special_tokens=False).ids for s, _ in cases]
    wrong = [(s, e, g) for (s, e), g in zip(cases, got) if e != g]
    assert not wrong, f"{len(cases) - len(wrong)}/{len(cases)}; first: {wrong[0]}"
    assert len(cases) == 46


@pytest.mark.runtime
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


@pytest.mark.runtime  # seconds: reads Phi-3's GGUF twice
def test_a_gguf_is_self_contained(tmp_path):
    """A GGUF carries its own lists and template: configs beside it are not its own (never read),
    and `--chat-template` can only replace the template it carries by a file, which provenance then
    records."""
    import shutil

    gguf = tmp_path / "vocab.gguf"
    shutil.copy(GGUF / "ggml-vocab-phi-3.gguf", gguf)
    (tmp_path / "tokenizer_config.json").write_text('{"eos_token": "<s>", "chat_template": "other"}')
    (tmp_path / "config.json").write_text('{"eos_token_id": 1}')
    tok = read_source(gguf)
    assert tok.chat.text.startswith("{{ bos_token }}") and tok.chat.eos_token == "<|endoftext|>"
    assert 1 not in tok.stop_ids and [f.path for f in tok.provenance.inputs] == [str(gguf)]
    (tmp_path / "t.jinja").write_text("{{ messages }}")
    tok = read_source(gguf, ReadOptions(str(tmp_path / "t.jinja")))
    assert tok.chat.text == "{{ messages }}" and tok.chat.source == str(tmp_path / "t.jinja")
    assert [Path(f.path).name for f in tok.provenance.inputs] == ["vocab.gguf", "t.jinja"]
    with pytest.raises(InputError, match="a GGUF file holds one template; give a UTF-8 file"):
        read_source(gguf, ReadOptions("chatml"))


@pytest.mark.runtime
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


@pytest.mark.runtime
def test_llama_bpe_ignores_merges_and_adds_bos(read):
    tok = read_gguf(GGUF / "ggml-vocab-llama-bpe.gguf")
    assert tok.model.ignore_merges is True
    assert tok.meta.add_bos_token is True and tok.prefix_ids == () and tok.post_processor.single[0].id == "<|begin_of_text|>"


@pytest.mark.runtime
def test_directory_and_file_paths_pick_the_gguf(tmp_path):
    import shutil

    shutil.copy(GGUF / "ggml-vocab-gpt-2.gguf", tmp_path / "model.bin")
    tok = read_source(tmp_path)
    assert Path(tok.provenance.inputs[0].path).name == "model.bin"


@pytest.mark.runtime
@pytest.mark.skipif(importlib.util.find_spec("MNN") is None, reason="MNN is not installed")
@pytest.mark.parametrize("name", ("gpt-2", "llama-spm", "deepseek-coder", "bert-bge"))
def test_written_mtok_gives_the_vectors_on_the_runtime(name, read, tmp_path):
    from mtok_export.verify.runtime import run_runtime

    low, _ = lower(read(name), TARGETS[DEFAULT])
    path = tmp_path / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    cases = [(s, e) for s, e in vectors(name) if "\0" not in s]
    result = run_runtime(path, texts=[s for s, _ in cases])
    prefix = list(low.prefix_ids)
    got = [ids[len(prefix):] for ids in result.encodes]
    assert [g for g in got] == [e for _, e in cases]


def _t5_gguf(path: Path) -> tuple[Path, Path]:
    """t5-small's spiece.model written as llama.cpp's converter writes a T5 vocabulary (model `t5`:
    pieces, scores, types, the charsmap and the normalizer flags; EOS appended, no BOS)."""
    import gguf
    from sentencepiece import sentencepiece_model_pb2 as pb

    src = REPO.parent / "shared/corpus/tokenizers/t5-small/spiece.model"
    m = pb.ModelProto()
    m.ParseFromString(src.read_bytes())
    w = gguf.GGUFWriter(str(path), "t5")
    w.add_tokenizer_model("t5")
    w.add_tokenizer_pre("default")
    w.add_token_list([p.piece for p in m.pieces])
    w.add_token_scores([p.score for p in m.pieces])
    w.add_token_types([p.type for p in m.pieces])
    w.add_add_space_prefix(m.normalizer_spec.add_dummy_prefix)
    w.add_remove_extra_whitespaces(m.normalizer_spec.remove_extra_whitespaces)
    w.add_precompiled_charsmap(m.normalizer_spec.precompiled_charsmap)
    w.add_unk_token_id(m.trainer_spec.unk_id)
    w.add_eos_token_id(m.trainer_spec.eos_id)
    w.add_pad_token_id(m.trainer_spec.pad_id)
    w.add_add_bos_token(False)
    w.add_add_eos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    return path, src


@pytest.mark.runtime
def test_t5_unigram_reads_as_its_sentencepiece_model(tmp_path):
    """A `t5` GGUF is the SentencePiece Unigram it was converted from: the same model, normalizer
    (the charsmap), pre-tokenizer and decoder as the sentencepiece reader makes of t5-small's
    spiece.model, and sentencepiece itself agrees on 447 of the 469 built-in strings (the rest are
    the sp-* differences the reader records: added-token text, the charsmap, ...)."""
    import sentencepiece as spm

    from mtok_export.corpus import builtin_corpus
    from mtok_export.readers.sentencepiece import read_sentencepiece

    path, src = _t5_gguf(tmp_path / "t5.gguf")
    tok = read_gguf(path)
    model = read_sentencepiece(src)
    assert (tok.model, tok.normalizer, tok.pre_tokenizer, tok.decoder) == \
        (model.model, model.normalizer, model.pre_tokenizer, model.decoder)
    assert tok.meta.add_eos_token and not tok.meta.add_bos_token
    assert {x.code for x in tok.meta.differences} >= {"sp-charsmap", "sp-added-token-text"}
    texts = [s.text for s in builtin_corpus() if "\0" not in s.text]
    truth = [list(x) for x in spm.SentencePieceProcessor(model_file=str(src)).encode(texts)]
    ours = [e.ids for e in hf_from_ir(tok).encode_batch(texts, add_special_tokens=False)]
    assert sum(a == b for a, b in zip(ours, truth)) >= 447
    assert hf_from_ir(tok).encode("Hello").ids == [8774, 1]  # ▁Hello </s>, as HF's T5 adds it


@pytest.mark.runtime
@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_t5_unigram_against_llama_cpp(tmp_path):
    """llama.cpp's UGM on the same file: 458 of the 469 built-in strings as our reading gives them,
    engine ids with </s> appended on both."""
    from mtok_export.corpus import builtin_corpus
    from mtok_export.verify.reference_gguf import gguf_reference

    path, _ = _t5_gguf(tmp_path / "t5.gguf")
    tok = read_gguf(path)
    texts = [s.text for s in builtin_corpus() if "\0" not in s.text]
    ref = gguf_reference(path, texts, [])
    hf = hf_from_ir(tok)
    assert sum(a == b.ids for a, b in zip(ref.raw, hf.encode_batch(texts, add_special_tokens=False))) >= 458
    assert all(e[-1:] == [1] for e in ref.engine) and all(e.ids[-1:] == [1] for e in hf.encode_batch(texts))


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
    ({"model": "rwkv"}, UnsupportedError, r"tokenizer model 'rwkv' is not supported \(gpt2, gemma4, llama, t5 and bert are\)"),
    ({"tokens": None}, InputError, "tokenizer.ggml.tokens is missing or empty"),
    ({"types": (1, 1)}, InputError, "tokenizer.ggml.token_type has 2 entries for 3 tokens"),
    ({"merges": None}, InputError, "a gpt2 tokenizer needs tokenizer.ggml.merges"),
    ({"merges": ("a c",)}, InputError, r"tokenizer.ggml.merges\[0\] = 'a c' is not two tokens"),
    ({"pre": "klingon"}, UnsupportedError, "pre-tokenizer 'klingon' is not in the table"),
    ({"extra": {"tokenizer.ggml.bos_token_id": 7}}, InputError, "bos_token_id = 7 is outside the 3 tokens"),
    ({"model": "llama"}, InputError, "needs tokenizer.ggml.scores"),
    ({"model": "t5"}, InputError, r"a t5 \(SentencePiece Unigram\) tokenizer needs tokenizer.ggml.scores"),
])
def test_malformed_keys(tmp_path, kwargs, error, message):
    with pytest.raises(error, match=message):
        read_gguf(_write(tmp_path / "t.gguf", **kwargs))


def test_t5_charsmap_must_be_bytes(tmp_path):
    import gguf

    w = gguf.GGUFWriter(str(tmp_path / "t.gguf"), "t5")
    w.add_tokenizer_model("t5")
    w.add_token_list(["<unk>", "a"])
    w.add_token_scores([0.0, -1.0])
    w.add_token_types([2, 1])
    w.add_array("tokenizer.ggml.precompiled_charsmap", [1, 300])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(InputError, match="tokenizer.ggml.precompiled_charsmap must be bytes"):
        read_gguf(tmp_path / "t.gguf")


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


# ------------------------------------------------------------------ token types as llama.cpp gives them on load

_LLAMA_CPP_MISSING = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                        reason="llama-cpp-python is not installed")


def needs_llama_cpp(test):
    """llama.cpp, the GGUF reference: its load takes seconds, out of the quick loop."""
    return pytest.mark.runtime(_LLAMA_CPP_MISSING(test))


def test_control_looking_tokens_become_control():
    from mtok_export.readers.gguf_types import llama_cpp_types

    tokens = ["a", "</s>", "<|im_end|>", "[PAD]", "<|channel|>", "<|end|>", "<|return|>", "<|call|>"]
    types, notes = llama_cpp_types(tokens, [1] * len(tokens), keys=set())
    assert types == [1, 3, 3, 3, 4, 4, 3, 3]  # gpt-oss: <|channel|> rendered, <|end|> no end of generation
    assert "'</s>' (1)" in notes[0] and "'a'" not in notes[0]
    # a FIM token is looked for only when the file sets no id for it; the end-of-generation list always
    types, _ = llama_cpp_types(tokens, [1] * len(tokens), keys={"fim_pad"})
    assert types[3] == 1 and types[1] == 3
    # gemma4 / plamo: </s> stays ordinary
    assert llama_cpp_types(["</s>", "<|tool_response>"], [1, 1], set())[0] == [1, 3]


def test_phi3_specials_strip_by_the_model_name():
    from mtok_export.readers.gguf_types import rstrip_ids

    tokens, types = ["<unk>", "<s>", "</s>", "<|end|>", "<|endoftext|>", "x"], [2, 3, 1, 3, 3, 1]
    assert rstrip_ids("Phi-3 Mini", tokens, types) == {2, 3}
    assert rstrip_ids("llama", tokens, types) == set()


@needs_llama_cpp
@pytest.mark.parametrize("name, texts", [
    ("qwen2", ['  "</s>"\n', "a</s>b"]),  # an ordinary </s> that llama.cpp makes one control id
    ("phi-3", ["<|end|>\nHi", "x [PAD32011] y", "<|user|>\n  Hello</s>\n"]),  # rstrip; an UNKNOWN pad matched whole
])
def test_ids_equal_llama_cpp_where_it_retypes(name, texts, read):
    """Before, these read other ids than llama.cpp: "</s>" as `</` `s` `>`, the newline after
    Phi-3's specials kept, `[PAD32011]` as pieces."""
    from mtok_export.verify.reference_gguf import gguf_reference

    ref = gguf_reference(GGUF / f"ggml-vocab-{name}.gguf", texts, [])
    hf = hf_from_ir(read(name))
    assert [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)] == ref.raw



def _bert_probe_texts() -> list[str]:
    """Every mark, format, control and space character of Python's Unicode tables, and the blocks
    of Indic scripts, Thai, Hangul jamo and the first syllables, each alone and inside a word; the
    C0/C1 controls between letters; words of 100 and 101 characters; and plain text the departures
    must leave alone."""
    blocks = [(0x0900, 0x0980), (0x0980, 0x0A00), (0x0B80, 0x0C00), (0x0C80, 0x0D00), (0x0D80, 0x0E00),
              (0x0E00, 0x0E80), (0x1100, 0x1200), (0xAC00, 0xAC40)]
    cps = sorted({c for a, b in blocks for c in range(a, b) if unicodedata.category(chr(c)) != "Cn"}
                 | {c for c in range(0x110000) if unicodedata.category(chr(c))[0] in "MZ"
                    or unicodedata.category(chr(c)) in ("Cc", "Cf")})
    texts = [chr(c) for c in cps] + [f"k{chr(c)}a" for c in cps]
    texts += [f"a{chr(c)}b" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)]]
    texts += ["a" * 100, "a" * 101, "hello world", "naïve café", "Grüße, Jürgen!", "東京 2024", "a\tb\nc"]
    return texts


@needs_llama_cpp
def test_bert_departures_of_llama_cpp_are_exactly_where_the_reader_says(read):
    """`gguf-wpm` (the GGUF BERT reader's recorded difference) explains a mismatch only where its
    pattern fires: on each probe where llama.cpp's ids differ from BERT's on the IR (HF), the
    pattern must fire, so no departure is hidden and none is explained elsewhere."""
    from mtok_export.verify.reference_gguf import gguf_reference

    tok = read("bert-bge")
    (loss,) = [d for d in tok.meta.differences if d.code == "gguf-wpm"]
    texts = _bert_probe_texts()
    ref = gguf_reference(GGUF / "ggml-vocab-bert-bge.gguf", texts, [])
    hf = [e.ids for e in hf_from_ir(tok).encode_batch(texts, add_special_tokens=False)]
    departs = [t for t, want, got in zip(texts, ref.raw, hf) if want != got]
    assert len(departs) > 100  # the probes reach the departures
    assert [t for t in departs if not loss.spans(t)] == []
    # and the pattern is not a blanket: plain text and most of the probes are outside it
    assert not any(loss.spans(t) for t in ("hello world", "naïve café", "Grüße, Jürgen!", "東京 2024"))



@needs_llama_cpp
@pytest.mark.parametrize("name", ["deepseek-coder", "deepseek-llm", "llama-bpe"])
def test_user_tokens_llama_cpp_prints_otherwise_are_the_trigger(name, read):
    """`gguf-user-text` fires on exactly the user-defined tokens whose piece llama.cpp prints
    differs from their byte-level decode (HF on the IR, the runtime): every such token, no other."""
    from mtok_export.verify.reference_gguf import _Vocab

    tok = read(name)
    users = [t for t in tok.added_tokens if not t.special]
    hf = hf_from_ir(tok)
    with _Vocab(GGUF / f"ggml-vocab-{name}.gguf", {}) as v:
        differ = {t.content for t in users if v.stream([t.id]) != hf.decode([t.id], skip_special_tokens=False)}
    loss = [d for d in tok.meta.differences if d.code == "gguf-user-text"]
    assert set(loss[0].trigger if loss else ()) == differ
    assert bool(differ) == name.startswith("deepseek")  # llama-bpe's user tokens print alike


# ------------------------------------------------------------------ gemma4 (Gemma-4's SentencePiece-style BPE)

GEMMA4_TEXTS = ["hello world", "hello\n\nworld", "\n\n\n", "héllo wörld", " hello", "hello  world ", "x\ny",
                "<eos>hello", "world<bos>", "", " ", "\n", "lower held"]


def test_gemma4_reads_as_spm_style_bpe(tmp_path):
    tok = read_gguf(gemma4_gguf(tmp_path / "g4.gguf"))
    hf = hf_from_ir(tok)
    v = tok.model.vocab
    assert hf.encode("hello world", add_special_tokens=False).ids == [v["hello"], v["\u2581world"]]
    assert hf.encode("é", add_special_tokens=False).ids == [v["<0xC3>"], v["<0xA9>"]]  # byte fallback
    assert hf.encode("hello").ids[0] == 2  # BOS always
    assert hf.decode(hf.encode("hello world", add_special_tokens=False).ids) == "hello world"


@needs_llama_cpp
def test_gemma4_against_llama_cpp(tmp_path):
    """llama.cpp's gemma4 tokenizer on the same file: raw ids, engine ids (BOS) and the streamed pieces."""
    from mtok_export.verify.reference_gguf import gguf_reference

    path = gemma4_gguf(tmp_path / "g4.gguf")
    ref = gguf_reference(path, GEMMA4_TEXTS, [])
    hf = hf_from_ir(read_gguf(path))
    assert [e.ids for e in hf.encode_batch(GEMMA4_TEXTS, add_special_tokens=False)] == ref.raw
    assert [e.ids for e in hf.encode_batch(GEMMA4_TEXTS)] == ref.engine
    assert all(e[:1] == [2] for e in ref.engine)
    streamed = [hf.decode(r, skip_special_tokens=False) for r in ref.raw]
    assert streamed == ref.decoded
