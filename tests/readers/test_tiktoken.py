"""Readers for tiktoken rank files, vocab.json + merges.txt and BERT vocab.txt; the legacy
`tokenizer.txt` types 1-3 (round trips, refusals, malformed files, MNN 3.4.1); parity thresholds.

Offline: the corpus files are read from ../shared/corpus; MNN 3.4.1 comes from `legacy_runtime`
(a venv created on first use; those tests skip only if it cannot be created)."""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

import pytest

from tests.support import other_parity
from mtok_export import legacy
from mtok_export.corpus import builtin_corpus
from mtok_export.errors import FormatError, InputError, UnsupportedError
from mtok_export.ir import AddedToken
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir.byte_level import BYTE_CHARS, bytes_to_token, bytes_to_tokens, token_to_bytes
from mtok_export.legacy import bert_txt, hf_txt, text, tiktoken_txt
from mtok_export.lower.legacy import PLANS
from mtok_export.readers.bert_vocab import read_bert_vocab
from mtok_export.readers.gpt2_files import read_gpt2_files
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.readers.tiktoken import KNOWN, read_tiktoken
from mtok_export.verify.reference_tiktoken import hf_from_ir, hf_ir_reference, nfc, tiktoken_reference

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus/tokenizers"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")

TEXTS = [s.text for s in builtin_corpus()]
COMPARED = ("engine", "raw", "decoded")


def _same(a, b) -> dict:
    return {f: sum(x == y for x, y in zip(getattr(a, f), getattr(b, f))) for f in COMPARED}


# ------------------------------------------------------------------ fixtures (read once)


@pytest.fixture(scope="module")
def qwen():
    return read_tiktoken(CORPUS / "qwen-7b_tiktoken")


@pytest.fixture(scope="module")
def gpt2_dirs():
    return {name: read_gpt2_files(CORPUS / name) for name in ("gpt2", "roberta-base", "whisper-large-v3")}


@pytest.fixture(scope="module")
def bert():
    return read_bert_vocab(CORPUS / "bert-base-uncased")


def _write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _ranks_file(ranks: list[bytes]) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks))


SMALL_RANKS = [bytes([b]) for b in range(256)] + [b"he", b"ll", b"llo", b"hello", b" w", b"or", b" wor", b"ld",
                                                  b" world", b"xyz"]


# ------------------------------------------------------------------ tiktoken


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


def test_qwen_ir_encodes_like_tiktoken(qwen):
    pattern = qwen.pre_tokenizer.pretokenizers[0].pattern.value
    ref = tiktoken_reference(CORPUS / "qwen-7b_tiktoken/qwen.tiktoken", pattern,
                             {t.content: t.id for t in qwen.added_tokens}, TEXTS, normalize=nfc)
    assert _same(hf_ir_reference(qwen, TEXTS), ref) == {f: len(TEXTS) for f in COMPARED}


def test_llama3_rank_file_equals_its_tokenizer_json():
    a = read_tiktoken(CORPUS / "meta-llama-3-8b-instruct/tiktoken.model")
    b = read_model_dir(CORPUS / "meta-llama-3-8b-instruct")
    assert a.model == b.model  # vocab, the 280147 recovered merges, ignore_merges
    for f in ("normalizer", "pre_tokenizer", "decoder", "post_processor", "added_tokens", "special_ids", "chat"):
        assert getattr(a, f) == getattr(b, f), f
    assert "split regex from tokenizer.json (Split regex)" in a.meta.notes


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
    path = _write(tmp_path / "mine.tiktoken", _ranks_file(SMALL_RANKS))
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
    ("IQ== 0\nIg== 2\n", 2, "rank 1 is missing"),
    ("IQ== 0\nIQ== 1\n", 2, "already has rank 0"),
    ("IQ== 0\nIg== 1 x\n", 2, "expected '<base64 token> <rank>'"),
    ("IQ== 0\nIg==\n", 2, "expected '<base64 token> <rank>'"),
])
def test_rank_file_errors(tmp_path, lines, line, message):
    path = _write(tmp_path / "bad.tiktoken", lines)
    with pytest.raises(InputError) as e:
        read_tiktoken(path, pattern=".", special={})
    assert f"{path} line {line}" in str(e.value) and message in str(e.value)


def test_empty_rank_file(tmp_path):
    with pytest.raises(InputError, match="no ranks"):
        read_tiktoken(_write(tmp_path / "e.tiktoken", "\n"), pattern=".", special={})


# ------------------------------------------------------------------ vocab.json + merges.txt


@pytest.mark.parametrize("name", ["gpt2", "roberta-base", "whisper-large-v3"])
def test_gpt2_files_equal_tokenizer_json(gpt2_dirs, name):
    a, b = gpt2_dirs[name], read_model_dir(CORPUS / name)
    assert a.model.vocab == b.model.vocab and a.model.merges == b.model.merges
    for f in ("normalizer", "pre_tokenizer", "decoder", "post_processor", "special_ids", "stop_ids"):
        assert getattr(a, f) == getattr(b, f), f
    key = lambda t: (t.id, t.content, t.special, t.lstrip, t.rstrip, t.single_word)  # noqa: E731
    assert list(map(key, a.added_tokens)) == list(map(key, b.added_tokens))  # `normalized` is moot: no normalizer
    from mtok_export.verify.reference import hf_reference
    assert _same(hf_ir_reference(a, TEXTS), hf_reference(CORPUS / name, TEXTS, [])) == {f: len(TEXTS) for f in COMPARED}


def test_roberta_family_inferred(gpt2_dirs):
    assert any("fairseq vocabulary head" in n for n in gpt2_dirs["roberta-base"].meta.notes)
    mask = [t for t in gpt2_dirs["roberta-base"].added_tokens if t.content == "<mask>"]
    assert mask and mask[0].lstrip


def _gpt2_dir(tmp_path, vocab=None, merges="#version: 0.2\nh e\nhe l\n", config=None) -> Path:
    vocab = vocab if vocab is not None else {**{c: b for b, c in enumerate(BYTE_CHARS)}, "he": 256, "hel": 257}
    _write(tmp_path / "vocab.json", json.dumps(vocab))
    _write(tmp_path / "merges.txt", merges)
    if config is not None:
        _write(tmp_path / "tokenizer_config.json", json.dumps(config))
    return tmp_path


@pytest.mark.parametrize("case,message", [
    ("vocab-list", "vocab.json must be a JSON object"),
    ("merge-3-parts", "merges.txt line 3: expected 'left right'"),
    ("merge-unknown", "merges.txt line 2: merge 'h x' names 'hx'"),
    ("vocab-dup-id", "id 0 is used by both"),
    ("bad-json", "not valid JSON"),
])
def test_gpt2_files_errors(tmp_path, case, message):
    if case == "vocab-list":
        _write(tmp_path / "vocab.json", "[1, 2]")
        _write(tmp_path / "merges.txt", "")
    elif case == "merge-3-parts":
        _gpt2_dir(tmp_path, merges="#version: 0.2\nh e\nhe l x\n")
    elif case == "merge-unknown":
        _gpt2_dir(tmp_path, merges="#version: 0.2\nh x\n")
    elif case == "vocab-dup-id":
        _gpt2_dir(tmp_path, vocab={"a": 0, "b": 0})
    else:
        _write(tmp_path / "vocab.json", "{")
        _write(tmp_path / "merges.txt", "")
    with pytest.raises(InputError) as e:
        read_gpt2_files(tmp_path)
    assert message in str(e.value) and str(tmp_path) in str(e.value)


def test_gpt2_files_unknown_class_and_family(tmp_path):
    d = _gpt2_dir(tmp_path, config={"tokenizer_class": "XLMTokenizer"})
    with pytest.raises(UnsupportedError, match="XLMTokenizer"):
        read_gpt2_files(d)
    tok = read_gpt2_files(d, family="gpt2")
    assert tok.model.merges == (("h", "e"), ("he", "l")) and tok.post_processor.kind == "ByteLevel"
    assert read_gpt2_files(_gpt2_dir(tmp_path, config={"add_bos_token": True, "bos_token": "he",
                                                        "tokenizer_class": "GPT2Tokenizer"})).post_processor.single[0].id == "he"


def test_byte_map_round_trips():
    assert len(set(BYTE_CHARS)) == 256 and BYTE_CHARS[ord(" ")] == "\u0120" and BYTE_CHARS[ord("A")] == "A"
    raw = bytes(range(256))
    assert token_to_bytes(bytes_to_token(raw)) == raw and token_to_bytes("\u4e2d") is None
    # the bulk form: one token per byte value, the empty token, NULs, every byte in one token
    toks = [bytes([b]) for b in range(256)] + [b"", b"\x00\x00", b"\xff\x00a", raw, b""]
    assert bytes_to_tokens(toks) == [bytes_to_token(t) for t in toks] and bytes_to_tokens([]) == []


# ------------------------------------------------------------------ BERT vocab.txt


def test_bert_vocab_equals_tokenizer_json(bert):
    b = read_model_dir(CORPUS / "bert-base-uncased")
    for f in ("model", "normalizer", "pre_tokenizer", "decoder", "post_processor", "added_tokens",
              "special_ids", "stop_ids", "chat"):
        assert getattr(bert, f) == getattr(b, f), f
    from mtok_export.verify.reference import hf_reference
    assert _same(hf_ir_reference(bert, TEXTS), hf_reference(CORPUS / "bert-base-uncased", TEXTS, [])) == \
        {f: len(TEXTS) for f in COMPARED}


def test_bert_vocab_config_and_errors(tmp_path):
    _write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n")
    _write(tmp_path / "tokenizer_config.json", json.dumps({"do_lower_case": False, "tokenize_chinese_chars": False}))
    tok = read_bert_vocab(tmp_path)
    assert tok.normalizer == N.BertNormalizer(True, False, None, False)
    assert tok.model.vocab["##s"] == 6 and tok.post_processor.single[0].id == "[CLS]"
    _write(tmp_path / "vocab.txt", "")
    with pytest.raises(InputError, match="vocab.txt is empty"):
        read_bert_vocab(tmp_path)
    _write(tmp_path / "vocab.txt", "[UNK]\n\nhello\n")
    with pytest.raises(InputError, match=r"vocab.txt line 2: blank line"):
        read_bert_vocab(tmp_path)
    _write(tmp_path / "vocab.txt", b"[UNK]\n\xff\n")
    with pytest.raises(InputError, match=r"vocab.txt line 2: not UTF-8"):
        read_bert_vocab(tmp_path)


# ------------------------------------------------------------------ legacy tokenizer.txt

READ = {1: tiktoken_txt.read_tiktoken_txt, 2: bert_txt.read_bert_txt, 3: hf_txt.read_hf_txt}


def _api(kind: int, what: str):
    """The legacy type's plan (`lower.legacy`) and format (`legacy`) functions, one per verb."""
    return {"write": lambda tok: legacy.write_content(PLANS[kind](tok).content), "read": READ[kind],
            "losses": lambda tok: PLANS[kind](tok).losses, "project": lambda tok: PLANS[kind](tok).projection,
            "steps": lambda tok: PLANS[kind](tok).steps}[what]


@pytest.fixture(scope="module")
def sources(gpt2_dirs, bert, qwen):
    return {**gpt2_dirs, "bert": bert, "qwen": qwen}


ROUND_TRIPS = [  # (type, source, loss codes of the source)
    (1, "gpt2", {"legacy-greedy"}),
    (1, "qwen", {"legacy-greedy", "legacy-normalizer"}),
    (2, "bert", {"legacy-bert-normalizer", "suffix-not-appended", "legacy-bert-split", "legacy-bert-wordpiece",
                 "legacy-bert-decode", "legacy-bert-unk"}),
    (3, "gpt2", {"legacy-hf-regex"}),
    (3, "roberta-base", {"legacy-hf-regex", "suffix-not-appended", "legacy-added-flags"}),
    (3, "whisper-large-v3", {"legacy-hf-regex", "suffix-not-appended"}),
]


@pytest.mark.parametrize("kind,name,codes", ROUND_TRIPS, ids=[f"type{k}-{n}" for k, n, _ in ROUND_TRIPS])
def test_legacy_round_trip(sources, kind, name, codes):
    """read(write(ir)) == project(ir): the runtime-faithful IR of the file.  Writing what was read
    gives the same bytes, and an IR read from a file has no losses left (type 2 keeps the one
    behaviour HF cannot express)."""
    ir = sources[name]
    data = _api(kind, "write")(ir)
    back = _api(kind, "read")(data, f"{name}.txt", strict=True)
    assert back == _api(kind, "project")(ir)
    assert _api(kind, "write")(back) == data
    assert {x.code for x in _api(kind, "losses")(ir)} == codes
    assert [x.code for x in _api(kind, "losses")(back)] == (["legacy-bert-unk"] if kind == 2 else [])
    assert data.startswith(f"430 {kind}\n".encode())
    special = data.split(b"\n")[2]
    assert special.endswith(b" ") or special == b""  # legacy header: a space after every id


@pytest.mark.parametrize("kind,name", [(1, "gpt2"), (2, "bert"), (3, "roberta-base")])
def test_representation_step_changes_no_behaviour(sources, kind, name):
    """The last projection step only re-spells the IR (added tokens in the vocab, prefix template):
    HF runs it exactly like the step before."""
    steps = _api(kind, "steps")(sources[name])
    assert steps[-1][1] == _api(kind, "project")(sources[name])
    if steps[-1][0] != "representation":  # nothing to re-spell (type 2: the decoder step already is it)
        return
    before, after = hf_ir_reference(steps[-2][1], TEXTS), hf_ir_reference(steps[-1][1], TEXTS)
    assert _same(before, after) == {f: len(TEXTS) for f in COMPARED}


def test_legacy_writers_refuse(sources):
    gpt2, bert = sources["gpt2"], sources["bert"]
    with pytest.raises(UnsupportedError, match="byte-level"):
        PLANS[1](bert)
    with pytest.raises(UnsupportedError, match="WordPiece"):
        PLANS[2](gpt2)
    with pytest.raises(UnsupportedError, match="BPE"):
        PLANS[3](bert)
    with pytest.raises(UnsupportedError, match="empty token"):  # Whisper's id 50256 is ''
        PLANS[1](sources["whisper-large-v3"])
    sparse = dataclasses.replace(gpt2, model=dataclasses.replace(gpt2.model, vocab={
        t: i for t, i in gpt2.model.vocab.items() if i != 300}))
    with pytest.raises(UnsupportedError, match="id 300 has no token"):
        PLANS[3](sparse)
    wp = dataclasses.replace(bert, model=dataclasses.replace(bert.model, continuing_subword_prefix="@@"))
    with pytest.raises(UnsupportedError, match="hard-codes"):
        PLANS[2](wp)


def test_type3_refuses_missing_byte(tmp_path):
    vocab = {c: b for b, c in enumerate(BYTE_CHARS) if b != 0x7F}
    vocab = {t: i for i, t in enumerate(vocab)}
    _write(tmp_path / "vocab.json", json.dumps(vocab))
    _write(tmp_path / "merges.txt", "")
    tok = read_gpt2_files(tmp_path)
    with pytest.raises(UnsupportedError, match="byte 0x7f .*std::out_of_range"):
        PLANS[3](tok)


def _t1(lines: list[str], count: int | None = None, header: str = "430 1\n0 0 0\n\n") -> bytes:
    return (header + f"{len(lines) if count is None else count}\n" + "".join(f"{x}\n" for x in lines)).encode()


@pytest.mark.parametrize("data,reader,line,message", [
    (_t1(["IQ==", "Ig=="], 3), "tiktoken", 7, "file ends before token 2 of 3"),
    (_t1(["IQ==", "Ig=="], None).replace(b"\n2\n", b"\ntwo\n"), "tiktoken", 4, "must be 1 decimal integer"),
    (_t1(["IQ==", "Ig==", "Iw=="], 2), "tiktoken", 7, "unexpected content after the 2 token lines"),
    (_t1(["IQ==", ""], 2), "tiktoken", 6, "token 1 is empty"),
    (_t1(["IQ==", "Ig"], 2), "tiktoken-strict", 6, "not canonical base64"),
    (_t1(["IQ=="]).replace(b"430 1", b"430 3"), "tiktoken", None, "type 3 is a legacy tokenizer.txt, not type 1"),
    (b"430 3\n0 0 0\n\n2 1\na\nb\nab\n", "hf", 7, "has no space"),
    (b"430 3\n0 0 0\n\n2 1\na\nb\na b\n", "hf", 7, "names 'ab'"),
    (b"430 3\n0 0 0\n\n3 1\na\nb\n", "hf", 7, "file ends before token 2 of 3"),
    (b"430 2\n0 0 0\n\n1\nW1VOS10=\nZXh0cmE=\n", "bert", 6, "unexpected content"),
    (b"430 2\n2 0 0\n0\n1\nW1VOS10=\n", "bert", None, "header line 3 holds 1 ids but line 2 announces 2"),
])
def test_legacy_read_errors(data, reader, line, message):
    read = {"tiktoken": tiktoken_txt.read_tiktoken_txt, "hf": hf_txt.read_hf_txt, "bert": bert_txt.read_bert_txt,
            "tiktoken-strict": lambda d, p: tiktoken_txt.read_tiktoken_txt(d, p, strict=True)}[reader]
    with pytest.raises(FormatError) as e:
        read(data, "t.txt")
    assert message in str(e.value) and "t.txt" in str(e.value)
    if line is not None:
        assert f"line {line}" in str(e.value)


def test_legacy_lenient_base64_is_noted():
    tok = tiktoken_txt.read_tiktoken_txt(_t1(["IQ", "I g=="]), "t.txt")  # unpadded; a space inside
    assert text.b64decode_mnn(b"I g==") == b'"' and '"' in tok.model.vocab
    assert any("not canonical base64 (first: line 5)" in n for n in tok.meta.notes)


def test_legacy_header_ids_kept():
    data = b"430 1\n1 1 1\n2 2 1 \n3\nIQ==\nIg==\nPGVvcz4=\n"
    tok = tiktoken_txt.read_tiktoken_txt(data)
    assert tok.special_ids == (2,) and tok.stop_ids == (2,)
    assert tok.added_tokens == (AddedToken(2, "<eos>", normalized=False, special=True),)
    assert [p.id for p in tok.post_processor.single] == ['"', "A"]  # prefix id 1 is the token '"'
    assert _api(1, "write")(tok) == data


# ------------------------------------------------------------------ MNN 3.4.1


HELLO = [  # (type, source, "Hello world" on MNN 3.4.1)
    (1, "gpt2", [15496, 995]),
    (1, "qwen", [9707, 1879]),
    (2, "bert", [101, 7592, 2088]),  # [CLS] hello world; no [SEP]: the legacy header has no suffix
    (3, "gpt2", [15496, 995]),
    (3, "roberta-base", [0, 31414, 232]),
]


def test_legacy_files_load_in_mnn341(sources, mnn341_python, tmp_path):
    from mtok_export.verify.runtime import run_runtime

    for kind, name, want in HELLO:
        path = tmp_path / f"{name}-{kind}" / "tokenizer.txt"
        _write(path, _api(kind, "write")(sources[name]))
        rt = run_runtime(path, texts=["Hello world"], decode_ids=want, python=mnn341_python)
        assert rt.version == "3.4.1"
        assert rt.encodes == [want], (kind, name)
        assert hf_from_ir(_api(kind, "project")(sources[name])).encode("Hello world").ids == want
        decoded = b"".join(rt.decodes[i] for i in want)
        assert decoded.endswith(b"world"), (kind, name, decoded)


# ------------------------------------------------------------------ parity (other_parity.py)


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

