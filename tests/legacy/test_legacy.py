"""The legacy `tokenizer.txt` types 1-3 (`legacy/`, planned by `lower/legacy`): round trips, the
representation step, refusals, malformed files, and the files loaded by MNN 3.4.1 (the `mnn341_python`
fixture: `make setup` makes it)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from mtok_export import legacy
from mtok_export.errors import FormatError, UnsupportedError
from mtok_export.ir import AddedToken
from mtok_export.ir.byte_level import BYTE_CHARS
from mtok_export.legacy import bert_txt, hf_txt, text, tiktoken_txt
from mtok_export.lower.legacy import PLANS
from mtok_export.readers.bert_vocab import read_bert_vocab
from mtok_export.readers.gpt2_files import read_gpt2_files
from mtok_export.readers.tiktoken import read_tiktoken
from mtok_export.verify.reference_tiktoken import hf_from_ir, hf_ir_reference

from tests.support.corpus_dirs import CORPUS
from tests.support.other_inputs import COMPARED, TEXTS, same, write

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


READ = {1: tiktoken_txt.read_tiktoken_txt, 2: bert_txt.read_bert_txt, 3: hf_txt.read_hf_txt}


def _api(kind: int, what: str):
    """The legacy type's plan (`lower.legacy`) and format (`legacy`) functions, one per verb."""
    return {"write": lambda tok: legacy.write_content(PLANS[kind](tok).content), "read": READ[kind],
            "losses": lambda tok: PLANS[kind](tok).losses, "project": lambda tok: PLANS[kind](tok).projection,
            "steps": lambda tok: PLANS[kind](tok).steps}[what]


@pytest.fixture(scope="module")
def sources():
    """The corpus inputs the legacy types are written from, read once."""
    gpt2 = {name: read_gpt2_files(CORPUS / name) for name in ("gpt2", "roberta-base", "whisper-large-v3")}
    return {**gpt2, "bert": read_bert_vocab(CORPUS / "bert-base-uncased"), "qwen": read_tiktoken(CORPUS / "qwen-7b_tiktoken")}


ROUND_TRIPS = [  # (type, source, loss codes of the source)
    (1, "gpt2", {"legacy-greedy"}),
    (1, "qwen", {"legacy-greedy", "legacy-normalizer"}),
    (2, "bert", {"legacy-bert-normalizer", "suffix-not-appended", "legacy-bert-split", "legacy-bert-wordpiece",
                 "legacy-bert-decode", "legacy-bert-unk"}),
    (3, "gpt2", {"legacy-hf-regex"}),
    (3, "roberta-base", {"legacy-hf-regex", "suffix-not-appended"}),  # vocab.json: <mask> without lstrip
    (3, "whisper-large-v3", {"legacy-hf-regex", "suffix-not-appended"}),
]


@pytest.mark.runtime
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


@pytest.mark.runtime
@pytest.mark.parametrize("kind,name", [(1, "gpt2"), (2, "bert"), (3, "roberta-base")])
def test_representation_step_changes_no_behaviour(sources, kind, name):
    """The last projection step only re-spells the IR (added tokens in the vocab, prefix template):
    HF runs it exactly like the step before."""
    steps = _api(kind, "steps")(sources[name])
    assert steps[-1][1] == _api(kind, "project")(sources[name])
    if steps[-1][0] != "representation":  # nothing to re-spell (type 2: the decoder step already is it)
        return
    before, after = hf_ir_reference(steps[-2][1], TEXTS), hf_ir_reference(steps[-1][1], TEXTS)
    assert same(before, after) == {f: len(TEXTS) for f in COMPARED}


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
    write(tmp_path / "vocab.json", json.dumps(vocab))
    write(tmp_path / "merges.txt", "")
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


@pytest.mark.runtime
def test_legacy_files_load_in_mnn341(sources, mnn341_python, tmp_path):
    from mtok_export.verify.runtime import run_runtime

    for kind, name, want in HELLO:
        path = tmp_path / f"{name}-{kind}" / "tokenizer.txt"
        write(path, _api(kind, "write")(sources[name]))
        rt = run_runtime(path, texts=["Hello world"], decode_ids=want, python=mnn341_python)
        assert rt.version == "3.4.1"
        assert rt.encodes == [want], (kind, name)
        assert hf_from_ir(_api(kind, "project")(sources[name])).encode("Hello world").ids == want
        decoded = b"".join(rt.decodes[i] for i in want)
        assert decoded.endswith(b"world"), (kind, name, decoded)
