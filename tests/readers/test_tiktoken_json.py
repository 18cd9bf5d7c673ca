"""The tiktoken ranks JSON reader (`readers/tiktoken_json.py`): both forms of `bpe_ranks`, its checks
(each on a small made file), the reference's own reading (`reference_tiktoken.js_ranks`) held to the
reader's, and the real files npm `tiktoken` 1.0.22 and `js-tiktoken` 1.0.21 (as ES modules) ship
(the zoo: `make zoo-fetch`): they are
OpenAI's cl100k_base / o200k_base ranks (the hashes tiktoken itself pins), and their export
verifies on the runtime and encodes as tiktoken's own definition of those encodings."""

from __future__ import annotations

import base64
import json

import pytest

from mtok_export import formats as F
from mtok_export.readers.formats.tiktoken_json import TIKTOKEN_JSON
from mtok_export.readers.formats.tokenizer_json import TOKENIZER_JSON
from mtok_export.errors import InputError
from mtok_export.ir.tokenizer import NO_CHAT
from mtok_export.readers.finish import finish
from mtok_export.readers.tiktoken import KNOWN
from mtok_export.readers.tiktoken_json import decode_bpe_ranks, parse_tiktoken_json, rank_file_digest
from mtok_export.verify.reference_tiktoken import hf_ir_reference, js_ranks, tiktoken_reference

from tests.support.other_inputs import COMPARED, same, write
from tests.support.zoo_sources import zoo_file

BYTES = [bytes([b]) for b in range(256)]
SMALL = BYTES + [b"he", b"ll", b"llo", b"hello", b" w", b"or", b" wor", b"ld", b" world"]
PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
TEXTS = ["hello world", "hello<|end|> world!!", "x\u00e9 12", "  hello\n\nworld  "]


def _b64(t: bytes) -> str:
    return base64.b64encode(t).decode()


def compressed(tokens: list[bytes], per_line: int = 100, offset: int = 0) -> str:
    """`bpe_ranks` in js-tiktoken's compressed form: `! <offset> tok tok ...` lines."""
    lines = []
    for start in range(0, len(tokens), per_line):
        chunk = tokens[start:start + per_line]
        lines.append(" ".join(["!", str(offset + start), *map(_b64, chunk)]))
    return "\n".join(lines)


def _json(tmp_path, bpe_ranks: str, special=None, name="enc.json", **extra):
    data = {"pat_str": PATTERN, "special_tokens": {"<|end|>": len(SMALL)} if special is None else special,
            "bpe_ranks": bpe_ranks, **extra}
    return write(tmp_path / name, json.dumps(data))


def test_both_forms_read_the_same_ranks(tmp_path):
    plain = "".join(f"{_b64(t)} {i}\n" for i, t in enumerate(SMALL))
    want = {t: i for i, t in enumerate(SMALL)}
    assert decode_bpe_ranks(compressed(SMALL, per_line=7), "x") == want
    assert decode_bpe_ranks(plain, "x") == want
    # the digest is the rank file's own sha256: what KNOWN is keyed by
    import hashlib
    assert rank_file_digest(want) == hashlib.sha256(plain.encode()).hexdigest()


def test_the_reference_reads_as_the_reader(tmp_path):
    """js_ranks (the reference's lenient reading, as js-tiktoken's) and the reader's strict one agree
    on a good file; on a file the JS loader reads differently (a token given twice: the later rank
    wins there) the reader refuses instead of choosing."""
    path = _json(tmp_path, compressed(SMALL, per_line=50))
    ranks, pattern, specials = js_ranks(path)
    assert ranks == decode_bpe_ranks(compressed(SMALL, per_line=50), "x") and pattern == PATTERN
    twice = compressed(SMALL) + "\n! " + str(len(SMALL)) + " " + _b64(b"he")
    bad = _json(tmp_path, twice, name="twice.json")
    assert js_ranks(bad)[0][b"he"] == len(SMALL)  # the JS reading: the later one
    with pytest.raises(InputError, match="already has rank 256"):
        parse_tiktoken_json(bad)


def test_read_and_encoded_as_tiktoken_does(tmp_path):
    path = _json(tmp_path, compressed(SMALL, per_line=30))
    assert F.classify(path) is TIKTOKEN_JSON
    tok = finish(parse_tiktoken_json(path), None)
    assert [(t.content, t.id) for t in tok.added_tokens] == [("<|end|>", len(SMALL))]
    assert tok.pre_tokenizer.pretokenizers[0].pattern.value == PATTERN
    assert tok.meta.notes[:2] == ("split regex from enc.json pat_str", "special tokens from enc.json special_tokens")
    ranks, pattern, specials = js_ranks(path)
    ref = tiktoken_reference(path, pattern, specials, TEXTS, ranks=ranks)
    assert same(hf_ir_reference(tok, TEXTS), ref) == {f: len(TEXTS) for f in COMPARED}


@pytest.mark.parametrize("bpe_ranks,message", [
    ("! 0 IQ== not*base64", "bpe_ranks line 1, token 1: 'not*base64' is not valid base64"),
    ("! 0 IQ== Ig==\n! 1 Iw==", "bpe_ranks line 2, token 0: rank 1 is already given (line 1, token 1)"),
    ("! 0 IQ== IQ==", "bpe_ranks line 1, token 1: b'!' already has rank 0 (line 1, token 0)"),
    ("! 0 IQ==\n! 2 Ig==", "ranks must be 0..2 without gaps, but rank 1 is missing and no special token has that id"),
    ("! x IQ==", "bpe_ranks line 1: expected '! <offset> <base64 token>...'"),
    ("!", "bpe_ranks line 1: expected '! <offset> <base64 token>...'"),
    ("! 0", "bpe_ranks holds no token"),
    ("IQ== 0\nIg== 2\n", "rank 1 is missing"),  # the plain form: a rank file's own checks
])
def test_bpe_ranks_errors(tmp_path, bpe_ranks, message):
    path = _json(tmp_path, bpe_ranks, special={})
    with pytest.raises(InputError) as e:
        parse_tiktoken_json(path)
    assert str(path) in str(e.value) and message in str(e.value)


@pytest.mark.parametrize("data,message", [
    ([1], "is an object, not list"),
    ({"pat_str": ".", "bpe_ranks": "! 0 IQ=="}, "special_tokens missing"),
    ({"pat_str": ".", "special_tokens": {}, "bpe_ranks": "! 0 IQ==", "extra": 1}, "unknown key(s) extra"),
    ({"pat_str": "", "special_tokens": {}, "bpe_ranks": "! 0 IQ=="}, "pat_str must be a non-empty string"),
    ({"pat_str": ".", "special_tokens": {}, "bpe_ranks": ["IQ=="]}, "bpe_ranks must be a string"),
    ({"pat_str": ".", "special_tokens": {"<e>": "1"}, "bpe_ranks": "! 0 IQ=="}, "special_tokens must be an object"),
    ({"pat_str": ".", "special_tokens": {"<e>": 1}, "bpe_ranks": "! 0 IQ==", "explicit_n_vocab": 3},
     "explicit_n_vocab 3 is not the 1 ranks and 1 special token(s)"),
    ({"pat_str": ".", "special_tokens": {"<e>": 5}, "bpe_ranks": "! 0 IQ==", "explicit_n_vocab": 2},
     "explicit_n_vocab 2 is not"),
])
def test_object_errors(tmp_path, data, message):
    path = write(tmp_path / "enc.json", json.dumps(data))
    with pytest.raises(InputError) as e:
        parse_tiktoken_json(path)
    assert message in str(e.value)


def test_explicit_n_vocab_that_fits_is_taken(tmp_path):
    path = _json(tmp_path, compressed(SMALL), explicit_n_vocab=len(SMALL) + 1)
    assert len(parse_tiktoken_json(path).model.vocab) == len(SMALL)


@pytest.mark.parametrize("wrapper", ["export default {};", "module.exports = {};\n", "export default {}"])
def test_js_tiktoken_modules(tmp_path, wrapper):
    """js-tiktoken's ranks/*.js (ES) and *.cjs (CommonJS) wrap the same object."""
    obj = json.dumps({"pat_str": PATTERN, "special_tokens": {"<|end|>": len(SMALL)}, "bpe_ranks": compressed(SMALL)})
    path = write(tmp_path / "enc.js", wrapper.replace("{}", obj))
    assert F.classify(path) is TIKTOKEN_JSON
    assert parse_tiktoken_json(path).model.vocab == parse_tiktoken_json(_json(tmp_path, compressed(SMALL))).model.vocab
    assert js_ranks(path)[1] == PATTERN


def test_js_module_with_more_than_the_object_is_refused(tmp_path):
    obj = json.dumps({"pat_str": PATTERN, "special_tokens": {}, "bpe_ranks": compressed(SMALL)})
    path = write(tmp_path / "enc.js", f"export default {obj};\nconsole.log(1);\n")
    assert F.classify(path) is TIKTOKEN_JSON  # by its head
    with pytest.raises(InputError, match="is 'export default {...};' or 'module.exports = {...};' and nothing else"):
        parse_tiktoken_json(path)


def test_sniffed_by_its_keys_not_its_name(tmp_path):
    path = _json(tmp_path, compressed(SMALL), name="anything.txt")
    assert F.classify(path) is TIKTOKEN_JSON
    first = write(tmp_path / "first.json", json.dumps({"bpe_ranks": compressed(SMALL), "pat_str": ".",
                                                       "special_tokens": {}}))
    assert F.classify(first) is TIKTOKEN_JSON
    # a JSON with a pat_str and no bpe_ranks is none; a tokenizer.json is still one
    assert F.classify(write(tmp_path / "p.json", '{"pat_str": "x", "other": 1}')) is None
    assert F.classify(write(tmp_path / "t.json", '{"model": {"type": "BPE"}, "bpe_ranks": ""}')) is TOKENIZER_JSON


# ------------------------------------------------------------------ the real files (the zoo)

OPENAI = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "r50k_base": "r50k_base",
          "gpt2": "r50k_base", "p50k_base": "p50k_base"}


PACKAGES = {"npm-tiktoken": ".json", "js-tiktoken": ".js"}  # zoo archive -> its files' suffix


@pytest.mark.parametrize("archive", sorted(PACKAGES))
@pytest.mark.parametrize("name", sorted(OPENAI))
def test_npm_files_are_openais_ranks(name, archive):
    """Their ranks, written as a rank file, have the sha256 tiktoken pins for OpenAI's file
    (`KNOWN`, itself held to tiktoken_ext's expected_hash by test_tiktoken.py); their pattern and
    specials are the package's own."""
    path = zoo_file(archive, name + PACKAGES[archive])
    ranks, pattern, specials = js_ranks(path)
    known = KNOWN[rank_file_digest(ranks)]
    assert known.name == OPENAI[name] and len(ranks) == known.n_ranks
    assert specials == dict(known.specials)
    assert F.classify(path) is TIKTOKEN_JSON


@pytest.mark.parametrize("name", ["p50k_base", "p50k_edit"])
def test_p50k_files_fill_their_gap_with_a_special(name):
    """p50k_base's ranks skip 50256, <|endoftext|>'s id: read, the gap left to the special."""
    path = zoo_file("npm-tiktoken", f"{name}.json")
    ranks, _, specials = js_ranks(path)
    assert KNOWN[rank_file_digest(ranks)].name == "p50k_base"
    parsed = parse_tiktoken_json(path)
    assert 50256 not in parsed.model.vocab.values() and max(parsed.model.vocab.values()) == 50280
    assert {t.content: t.id for t in parsed.added} == specials


def _openai_encoding(name: str, ranks: dict[bytes, int], monkeypatch):
    """tiktoken's own definition of `name` (tiktoken_ext.openai_public: pattern, specials), its ranks
    served from `ranks` after checking they are the file tiktoken would download (its expected_hash)."""
    import tiktoken
    public = pytest.importorskip("tiktoken_ext.openai_public")

    def load(url, expected_hash=None):
        assert expected_hash == rank_file_digest(ranks), url
        return ranks

    monkeypatch.setattr(public, "load_tiktoken_bpe", load)
    return tiktoken.Encoding(**getattr(public, name)())


@pytest.mark.runtime
@pytest.mark.parametrize("archive,name,options", [
    ("npm-tiktoken", "cl100k_base", {}),
    ("npm-tiktoken", "p50k_base", {}),  # its ranks skip 50256, <|endoftext|>'s id
    # o200k's split crashes std::wregex on long letter runs: the crash-free form, exact on the corpus
    ("npm-tiktoken", "o200k_base", {"regex_form": "bounded", "accept": ["regex-bound"]}),
    ("js-tiktoken", "cl100k_base", {}),  # its own pattern: ('s|'S|'t|...) for (?i:'s|'t|...)
])
def test_npm_file_exports_verified_and_encodes_as_openais(archive, name, options, tmp_path, monkeypatch):
    from mtok_export import api
    from mtok_export.verify.runtime import run_runtime

    from tests.support.other_inputs import TEXTS as CORPUS_TEXTS

    path = zoo_file(archive, name + PACKAGES[archive])
    result = api.export(path, tmp_path / "out", chat_template=NO_CHAT, **options)  # an encoding has no chat
    assert result.written and result.verify.ok and "js-tiktoken" in result.verify.reference["detail"]
    ranks, _, _ = js_ranks(path)
    enc = _openai_encoding(name, ranks, monkeypatch)
    texts = [t for t in CORPUS_TEXTS if "\x00" not in t]  # the MNN binding passes C strings
    got = run_runtime(result.path, texts=texts).encodes
    want = [enc.encode(t, allowed_special="all") for t in texts]
    assert sum(a == b for a, b in zip(got, want)) == len(texts)
