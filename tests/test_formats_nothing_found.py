"""The "nothing found" error of `formats.choose` (issue 39 item 4): a folder with no source lists
every file considered, what it looks like and why each format that could have claimed it did not.
One test per reason, each on a small file made here; each reason is also held to its sniffer (the
format it names really refused the file), so a reason can never explain a file that was taken."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from mtok_export import formats as F
from mtok_export.readers.formats import sentencepiece as sentencepiece_entry
from mtok_export.errors import InputError, NothingFound


def _error(directory) -> NothingFound:
    with pytest.raises(NothingFound) as e:
        F.read_source(directory)
    return e.value


def _why(directory, name: str) -> dict[str, str]:
    """{format: why} of one file of the error's data, checked against the message and the sniffers."""
    e = _error(directory)
    entry = next(c for c in e.considered if c["file"] == name)
    why = {r["format"]: r["why"] for r in entry["rejected"]}
    text = str(e)
    assert f"\n  {name} (" in text and all(w in text for w in why.values())  # the message says the same
    head = (directory / name).read_bytes()[:F.HEAD]
    folder = F.Folder(directory)
    for fmt in why:  # a format said to reject the file did not take it (or took it and cannot read it alone)
        if not why[fmt].startswith("recognized"):
            assert not F.BY_NAME[fmt].sniff(head, directory / name, folder), (fmt, why[fmt])
    return why


def test_the_message_is_one_error_with_indented_lines(tmp_path):
    (tmp_path / "README.md").write_text("# A model\nhello\n", encoding="utf-8")
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["X"], "vocab_size": 3}), encoding="utf-8")
    e = _error(tmp_path)
    first, *rest = str(e).splitlines()
    assert first == f"{tmp_path}: no {F.listed()} found (files are recognized by content); 2 files considered:"
    assert rest[0] == "  README.md (16 B): text starting '# A model'"
    assert rest[1] == "    as tiktoken rank file: line 1 '# A model' is not '<base64 token> <rank>'"
    assert all(x.startswith("  ") for x in rest)
    assert [c["file"] for c in e.considered] == ["README.md", "config.json"]
    assert e.considered[1]["looks_like"] == "JSON with the keys architectures, vocab_size"
    assert isinstance(e, InputError) and e.exit_code == 2


def test_not_a_tokenizer_json_first_key(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": ["X"]}', encoding="utf-8")
    assert _why(tmp_path, "config.json")["tokenizer.json"].startswith("its first key 'architectures' is none a "
                                                                      "tokenizer.json starts with")


def test_not_tekken_first_key(tmp_path):
    (tmp_path / "t.json").write_text('{"settings": {}}', encoding="utf-8")
    assert _why(tmp_path, "t.json")["tekken"] == "its first key 'settings' is neither 'config' nor 'vocab'"


def test_not_tekken_without_token_bytes(tmp_path):
    (tmp_path / "t.json").write_text('{"vocab": [{"rank": 0, "bytes": "YQ=="}]}', encoding="utf-8")
    assert _why(tmp_path, "t.json")["tekken"] == "no 'token_bytes' in its first 64 KiB"


def test_not_a_json_object(tmp_path):
    (tmp_path / "list.json").write_text('[1, 2]', encoding="utf-8")
    why = _why(tmp_path, "list.json")
    assert why["tokenizer.json"] == why["vocab.json"] == "not a JSON object with a string key first"


def test_not_vocab_json_value_not_an_id(tmp_path):
    (tmp_path / "v.json").write_text('{"a": "b"}', encoding="utf-8")
    assert _why(tmp_path, "v.json")["vocab.json"] == "the value of its first key 'a' is no integer id (not a flat " \
                                                     "token -> id object)"


def test_not_vocab_json_without_id_zero(tmp_path):
    (tmp_path / "added_tokens.json").write_text('{"<x>": 5, "<y>": 6}', encoding="utf-8")
    assert _why(tmp_path, "added_tokens.json")["vocab.json"].startswith("no token has id 0 (the shape of an "
                                                                        "added_tokens.json")


def test_not_vocab_json_invalid(tmp_path):
    (tmp_path / "v.json").write_text('{"a": 0, "b": ', encoding="utf-8")
    assert _why(tmp_path, "v.json")["vocab.json"].startswith("not valid JSON (")


def test_vocab_json_without_merges(tmp_path):
    (tmp_path / "vocab.json").write_text('{"a": 0, "b": 1}', encoding="utf-8")
    assert _why(tmp_path, "vocab.json") == {"vocab.json": "recognized, but it needs a merges file beside it "
                                                          "(merges.txt, vocab.bpe), none here"}


def test_merges_without_vocab_json(tmp_path):
    (tmp_path / "merges.txt").write_text("#version: 0.2\na b\n", encoding="utf-8")
    assert _why(tmp_path, "merges.txt") == {"merges": "recognized, but it is read only with its vocab.json file "
                                                      "(vocab.json, encoder.json), none here"}


def test_tokenizer_code_alone(tmp_path):
    (tmp_path / "tokenization_x.py").write_text("import tiktoken\n\nclass T:\n    pass\n", encoding="utf-8")
    assert _why(tmp_path, "tokenization_x.py")["remote-code"].startswith("recognized (tiktoken tokenizer code), "
                                                                         "but code is read only with the rank file")


def test_not_tiktoken_line(tmp_path):
    (tmp_path / "r.tiktoken").write_text("IQ== 0\nIg== 1\nnot a rank line\n", encoding="utf-8")
    assert _why(tmp_path, "r.tiktoken")["tiktoken"] == "line 3 'not a rank line' is not '<base64 token> <rank>'"


def test_not_tiktoken_unpadded_base64(tmp_path):
    (tmp_path / "r.tiktoken").write_text("IQ== 0\nIg 1\nIw== 2 x\n", encoding="utf-8")  # line 3: no merges either
    assert _why(tmp_path, "r.tiktoken")["tiktoken"] == ("line 2: the token 'Ig' is not padded base64 (length not a "
                                                        "multiple of 4)")


def test_not_tiktoken_tokens_without_ranks(tmp_path):
    """One base64 token a line (mnn-llm's vocabulary lists before the 430 header): named as such."""
    (tmp_path / "vocab.txt").write_text("IQ==\nIg==\n", encoding="utf-8")
    assert _why(tmp_path, "vocab.txt")["tiktoken"] == "line 1 'IQ==' is a base64 token without its rank"


def test_sizes(tmp_path):
    (tmp_path / "a.md").write_text("x" * 1023, encoding="utf-8")
    (tmp_path / "b.md").write_text("x" * 1536, encoding="utf-8")
    (tmp_path / "c.md").write_bytes(b"x" * (3 << 19))
    assert [x for x in str(_error(tmp_path)).splitlines() if x.startswith("  ") and not x.startswith("    ")] == [
        "  a.md (1023 B): text starting 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
        "  b.md (1.5 KiB): text starting 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'",
        "  c.md (1.5 MiB): text starting 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'"]


def test_not_merges_one_line(tmp_path):
    (tmp_path / "merges.txt").write_text("a b c\n", encoding="utf-8")
    assert _why(tmp_path, "merges.txt")["merges"] == "fewer than two lines and no '#version' first"


def test_not_merges_three_words(tmp_path):
    (tmp_path / "merges.txt").write_text("a b\nc d e\n", encoding="utf-8")
    assert _why(tmp_path, "merges.txt")["merges"] == "line 2 'c d e' is not 'left right' (two tokens, one space)"


def test_not_bert_vocab_space(tmp_path):
    (tmp_path / "vocab.txt").write_text("[UNK]\nhello world\n", encoding="utf-8")
    assert _why(tmp_path, "vocab.txt")["bert-vocab.txt"] == ("line 2 'hello world' holds a space (one token per "
                                                             "line has none)")


def test_not_bert_vocab_without_its_tokens(tmp_path):
    (tmp_path / "vocab.txt").write_text("a\nb\n<unk>\n", encoding="utf-8")
    assert _why(tmp_path, "vocab.txt")["bert-vocab.txt"] == "none of [UNK], [CLS], [SEP] among its lines in the " \
                                                            "first 64 KiB"


def test_not_bert_vocab_not_utf8(tmp_path):
    (tmp_path / "vocab.txt").write_bytes(b"[UNK]\n\xff\xfe\x00\x01" * 4)
    assert _why(tmp_path, "vocab.txt")["bert-vocab.txt"] == "not UTF-8 text"


def test_not_sentencepiece_first_byte(tmp_path):
    (tmp_path / "tokenizer.model").write_bytes(b"\x12\x00\x01binary")
    assert _why(tmp_path, "tokenizer.model")["sentencepiece"] == ("its first byte 0x12 is not a ModelProto's first "
                                                                  "field (0x0a)")


def test_not_sentencepiece_does_not_parse(tmp_path):
    (tmp_path / "tokenizer.model").write_bytes(b"\x0a\x05\x0a\x03abc\xff\xff\x00")
    e = _error(tmp_path)
    assert e.considered[0]["looks_like"] == "binary data starting like a protobuf message (field 1)"
    assert _why(tmp_path, "tokenizer.model")["sentencepiece"] == ("starts like a protobuf message but does not "
                                                                  "parse as a SentencePiece ModelProto")


def test_not_sentencepiece_too_large(tmp_path, monkeypatch):
    monkeypatch.setattr(sentencepiece_entry, "SPM_MAX", 1 << 20)  # the sniffer and the reason read the same limit
    (tmp_path / "tokenizer.model").write_bytes(b"\x0a\x00" + bytes(1 << 20))
    assert _why(tmp_path, "tokenizer.model")["sentencepiece"] == "too large for one (1 MiB; none is over 1 MiB): " \
                                                                 "not parsed"


def test_not_gguf(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"GGML\x00\x01\x02\x03")
    assert _why(tmp_path, "model.bin")["gguf"] == "no 'GGUF' magic (its first bytes are b'GGML')"


def test_not_clip_bad_gzip(tmp_path):
    (tmp_path / "bpe.txt.gz").write_bytes(b"\x1f\x8b\x08\x00broken")
    assert _why(tmp_path, "bpe.txt.gz")["clip-bpe-gz"] == "gzip that does not decompress (or holds nothing)"


def test_not_clip_without_version(tmp_path):
    (tmp_path / "bpe.txt.gz").write_bytes(gzip.compress(b"a b\nc d\n"))
    assert _why(tmp_path, "bpe.txt.gz")["clip-bpe-gz"] == "its decompressed first line 'a b' has no '#version'"


def test_not_clip_lines_not_merges(tmp_path):
    (tmp_path / "bpe.txt.gz").write_bytes(gzip.compress(b"#version: 0.2\na b c\n"))
    assert _why(tmp_path, "bpe.txt.gz")["clip-bpe-gz"] == ("decompressed, its lines after the first are not merges "
                                                           "('left right')")


def test_not_mtok_header(tmp_path):
    """Asked by name only (a header is text any text file could be mistaken for)."""
    (tmp_path / "tokenizer.mtok").write_text("431 4\n", encoding="utf-8")
    (tmp_path / "tokenizer.txt").write_text("430 9\n", encoding="utf-8")
    assert _why(tmp_path, "tokenizer.mtok")["mtok"] == "line 1 '431 4' is no MNN header ('430 <type>')"
    why = _why(tmp_path, "tokenizer.txt")
    assert why["legacy-txt"] == "line 1 '430 9' is no MNN header ('430 <type>')" and "mtok" not in why


def test_unreadable(tmp_path, monkeypatch):
    (tmp_path / "secret.json").write_text("{}", encoding="utf-8")
    real_open = open

    def refuse(path, *a, **k):  # as root, chmod 000 still reads: refuse this one file instead
        if os.fspath(path).endswith("secret.json"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", refuse)
    with pytest.raises(InputError, match="secret.json: cannot read"):  # in a folder scan: named, never skipped
        F.read_source(tmp_path)
    e = F.nothing_found(tmp_path)  # a file unreadable when listed (gone since the scan): said so
    assert e.considered == [{"file": "secret.json", "size": None, "looks_like": "unreadable (Permission denied)",
                             "rejected": []}]
    assert "\n  secret.json (unreadable): unreadable (Permission denied)" in str(e)


def test_an_empty_file_with_another_name(tmp_path):
    (tmp_path / "notes").write_bytes(b"")
    e = _error(tmp_path)
    assert e.considered == [{"file": "notes", "size": 0, "looks_like": "an empty file", "rejected": []}]


def test_a_long_list_is_cut_and_subfolders_named(tmp_path):
    for i in range(25):
        (tmp_path / f"f{i:02}.md").write_text("hello\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").write_text("x", encoding="utf-8")
    e = _error(tmp_path)
    lines = str(e).splitlines()
    assert lines[0].endswith("; 25 files considered:")
    assert sum(1 for x in lines if x.startswith("  f")) == 20 and "  f19.md (6 B): text starting 'hello'" in lines
    assert lines[-2:] == ["  ... and 5 more (--json lists every file)", "  1 subfolder not searched: sub/"]
    assert len(e.considered) == 25  # the data lists every file, hidden ones left out as the search leaves them


def test_an_empty_folder(tmp_path):
    e = _error(tmp_path)
    assert str(e) == f"{tmp_path}: no {F.listed()} found (files are recognized by content); it holds no file"
    assert e.considered == []


def test_json_outcome_carries_the_list(cli, tmp_path):
    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    code, out, err = cli("mtok-export", "--path", tmp_path, "--no-verify", "--json")
    data = json.loads(out)
    assert code == 2 and data["exit_code"] == 2
    assert [c["file"] for c in data["considered"]] == ["README.md"]
    assert data["considered"][0]["rejected"][0] == {"format": "tiktoken",
                                                    "why": "line 1 'hello' is not '<base64 token> <rank>'"}
    code, out, err = cli("mtok-export", "--path", tmp_path, "--no-verify")
    assert code == 2 and err.startswith("error: ") and "\n  README.md (6 B): text starting 'hello'\n" in err


def test_a_file_given_alone_says_why_too(tmp_path):
    (tmp_path / "notes.md").write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        F.read_source(tmp_path / "notes.md")
    first, *rest = str(e.value).splitlines()
    assert "notes.md: not a tokenizer file this tool recognizes" in first and first.endswith("text starting 'hello'")
    # each format a text file could be says why it is not, in the registry's order (a new one too)
    text_formats = [f.label or f.name for f in F.FORMATS if f.why_not is not None and "text" in f.kinds]
    assert [line.split(":", 1)[0] for line in rest] == [f"  as {label}" for label in text_formats]
    assert {"  as tiktoken rank file: line 1 'hello' is not '<base64 token> <rank>'",
            "  as vocab.txt: none of [UNK], [CLS], [SEP] among its lines in the first 64 KiB",
            "  as merges: fewer than two lines and no '#version' first"} <= set(rest)
