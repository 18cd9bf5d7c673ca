"""One test per `FormatError` of the `.mtok` reader (hand-made bytes, exact message, offset and
section), the writer's `UnsupportedError`s, and a mutation fuzz proving that no malformed input
escapes as `struct.error`, `IndexError`, `UnicodeDecodeError` or anything but a `FormatError`."""

from __future__ import annotations

import struct

import pytest

from mtok_export.errors import FormatError, UnsupportedError
from mtok_export.ir import AddedToken, ChatTemplate, Pattern, Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.processors import PostProgram
from mtok_export.mtok import read_mtok, write_mtok

# ---------------------------------------------------------------- hand-made building blocks
# Offsets in the comments are those of a file starting with H (13 bytes, body at 0x0d).

H = b"430 4\n0 0 0\n\n"                      # 0x00..0x0c
NONE2 = bytes.fromhex("00 00")                # 0x0d normalizer none, 0x0e pre-tokenizer none


def u32(*v): return struct.pack(f"<{len(v)}I", *v)
def u16(v): return struct.pack("<H", v)
def s16(b: bytes): return u16(len(b)) + b


def bpe(*entries, merges=b"", n_merges=0, size=None):
    """BPE model section: 11-byte header, then the given (token, id) entries, then raw merges."""
    size = len(entries) if size is None else size
    out = b"\x00" + u32(size) + b"\x00\x00" + u32(n_merges)
    return out + b"".join(s16(t) + u32(i) for t, i in entries) + merges


MODEL_A = bpe((b"a", 0))                      # 0x0f..0x20 (18 bytes)
DEC = b"\x04"                                 # 0x21 decoder Fuse
ADDED0 = u32(0)                               # 0x22 no added tokens
CHAT0 = u32(0)                                # 0x26 empty template
TAIL = CHAT0 + u16(0) + b"\x00" + u16(0) + u16(0)   # eos 0x2a, flags 0x2c, bos 0x2d, program 0x2f
VALID = H + NONE2 + MODEL_A + DEC + ADDED0 + TAIL    # 0x31 bytes
UPTO_ADDED = H + NONE2 + MODEL_A + DEC               # added tokens at 0x22


def test_building_blocks_are_valid():
    tok, layout = read_mtok(VALID)
    assert tok == Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse())
    assert len(VALID) == 0x31


CASES = {
    # header (spec 1)
    "wrong-magic": (b"431 4\n0 0 0\n\n", 0, "header",
                    "not an MNN tokenizer: line 1 must be '430 <type>', got b'431 4'"),
    "legacy-type": (b"430 1\n0 0 0\n\n3\n", 0, "header", "type 1 is a legacy tokenizer.txt, not type 4"),
    "unknown-type": (b"430 9\n0 0 0\n\n", 0, "header", "unknown tokenizer type 9 (MNN knows 0-4)"),
    "header-line1-not-int": (b"MNN 4\n0 0 0\n\n", 0, "header", "header line 1 must be decimal integers, got b'MNN 4'"),
    "header-line2-not-int": (b"430 4\n1 x 0\n\n", 6, "header", "header line 2 must be decimal integers, got b'1 x 0'"),
    "header-line3-None": (b"430 4\n1 0 0\nNone\n", 12, "header", "header line 3 must be decimal integers, got b'None'"),
    "header-two-counts": (b"430 4\n1 1\n3 3\n", 6, "header", "header line 2 must hold three counts (special stop prefix)"),
    "header-count-mismatch": (b"430 4\n1 1 0\n3\n", 12, "header", "header line 3 holds 1 ids but line 2 announces 2"),
    "header-negative-id": (b"430 4\n1 0 0\n-1\n", 12, "header", "header ids must be u32"),
    "header-no-newline-1": (b"430 4", 0, "header", "header line 1 has no newline"),
    "header-no-newline-2": (b"430 4\n0 0 0", 6, "header", "header line 2 has no newline"),
    "header-no-newline-3": (b"430 4\n0 0 0\n", 12, "header", "header line 3 has no newline"),
    # truncation inside required sections
    "trunc-normalizer-code": (H, 0x0d, "normalizer", "truncated: normalizer code needs 1 byte(s), 0 left"),
    "trunc-string-length": (H + b"\x02\x05", 0x0e, "normalizer",
                            "truncated: normalizer.prepend length needs 2 byte(s), 1 left"),
    "trunc-string": (H + b"\x02" + u16(5) + b"ab", 0x10, "normalizer",
                     "truncated: normalizer.prepend needs 5 byte(s), 2 left"),
    "trunc-pre-tokenizer-code": (H + b"\x00", 0x0e, "pre_tokenizer",
                                 "truncated: pre_tokenizer code needs 1 byte(s), 0 left"),
    "trunc-model-header": (H + NONE2 + b"\x00\x01\x00", 0x10, "model", "truncated: vocab_size needs 4 byte(s), 2 left"),
    "vocab-size-cannot-fit": (H + NONE2 + bpe(size=1000), 0x10, "model", "vocab_size 1000 cannot fit in the 0 bytes left"),
    "trunc-vocab-entry": (H + NONE2 + bpe((b"abcdefghij", 0))[:-8], 0x1a, "model", "truncated vocab entry"),
    "trunc-merges": (H + NONE2 + bpe((b"a", 0), merges=u32(0, 0), n_merges=1), 0x21, "model",
                     "truncated: 1 merges needs 12 byte(s), 8 left"),
    "trunc-decoder-code": (H + NONE2 + MODEL_A, 0x21, "decoder", "truncated: decoder code needs 1 byte(s), 0 left"),
    "trunc-added-count": (UPTO_ADDED + b"\x01\x00", 0x22, "added_tokens",
                          "truncated: added token count needs 4 byte(s), 2 left"),
    "added-cannot-fit": (UPTO_ADDED + u32(2) + u32(5) + b"\x01\x00\x00" + s16(b"x"), 0x22, "added_tokens",
                         "2 added tokens cannot fit in 10 bytes"),
    "trunc-added-content": (UPTO_ADDED + u32(1) + u32(5) + b"\x01\x00\x00" + u16(5) + b"ab", 0x2f, "added_tokens",
                            "truncated: added token content needs 5 byte(s), 2 left"),
    # optional sections partly present
    "trunc-chat-length": (UPTO_ADDED + ADDED0 + b"\x00\x00", 0x26, "chat_template",
                          "truncated: chat_template length needs 4 byte(s), 2 left"),
    "trunc-chat-text": (UPTO_ADDED + ADDED0 + u32(100) + b"abc", 0x2a, "chat_template",
                        "truncated: chat_template needs 100 byte(s), 3 left"),
    "trunc-eos": (UPTO_ADDED + ADDED0 + CHAT0 + b"\x00", 0x2a, "eos", "truncated: eos length needs 2 byte(s), 1 left"),
    "trunc-bos": (UPTO_ADDED + ADDED0 + CHAT0 + u16(0) + b"\x00" + b"\x03", 0x2d, "bos",
                  "truncated: bos length needs 2 byte(s), 1 left"),
    "trunc-program-count": (VALID[:-1], 0x2f, "post_program", "truncated: op count needs 2 byte(s), 1 left"),
    "trunc-program-id": (VALID[:-2] + u16(1) + b"\x01\x03\x00", 0x32, "post_program",
                         "truncated: post op token id needs 4 byte(s), 2 left"),
    # unknown codes
    "unknown-normalizer": (H + b"\x09", 0x0d, "normalizer",
                           "unknown normalizer code 9 (the runtime would desynchronize here)"),
    "unknown-normalizer-in-sequence": (H + b"\x04" + u32(1) + b"\x09", 0x12, "normalizer",
                                       "unknown normalizer code 9 (the runtime would desynchronize here)"),
    "unknown-pre-tokenizer": (H + b"\x00\x07", 0x0e, "pre_tokenizer",
                              "unknown pre_tokenizer code 7 (the runtime would desynchronize here)"),
    "unknown-model": (H + NONE2 + b"\x03" + u32(0), 0x0f, "model",
                      "unknown model type 3 (the runtime would crash on encode)"),
    "unknown-decoder": (H + NONE2 + MODEL_A + b"\x08", 0x21, "decoder",
                        "unknown decoder code 8 (the runtime would desynchronize here)"),
    "unknown-split-behavior": (H + b"\x00\x04" + s16(b"x") + b"\x00\x03", 0x13, "pre_tokenizer",
                               "pre_tokenizer.behavior: unknown Split behavior 3 (MNN writes 0, 1 or 2)"),
    "non-boolean-byte": (H + b"\x08\x02\x00", 0x0e, "normalizer",
                         "normalizer.strip_left: boolean byte must be 0 or 1, got 2"),
    "non-boolean-added-flag": (UPTO_ADDED + u32(1) + u32(0) + b"\x00\x00\x07" + s16(b"a"), 0x2c, "added_tokens",
                               "rstrip: boolean byte must be 0 or 1, got 7"),
    "invalid-utf8-string": (H + b"\x02" + s16(b"\xff"), 0x10, "normalizer",
                            "normalizer.prepend: invalid UTF-8 (invalid start byte)"),
    "invalid-utf8-chat": (UPTO_ADDED + ADDED0 + u32(2) + b"\xc3\x28", 0x2a, "chat_template",
                          "chat_template: invalid UTF-8 (invalid continuation byte)"),
    # vocab invariants (entries at 0x1a, 7 bytes each for 1-byte tokens)
    "unsorted-vocab": (H + NONE2 + bpe((b"b", 0), (b"a", 1)), 0x21, "model",
                       "vocab not sorted by UTF-8 bytes: b'a' after b'b' (the runtime's binary search would miss tokens)"),
    "prefix-sorts-first": (H + NONE2 + bpe((b"ab", 0), (b"a", 1)), 0x22, "model",
                           "vocab not sorted by UTF-8 bytes: b'a' after b'ab' (the runtime's binary search would miss tokens)"),
    "duplicate-vocab-token": (H + NONE2 + bpe((b"a", 0), (b"a", 1)), 0x21, "model", "duplicate vocab token b'a'"),
    "vocab-id-beyond-size": (H + NONE2 + bpe((b"a", 5)), 0x1d, "model",
                             "vocab id 5 is beyond vocab_size 1 (ids must be dense 0..vocab_size-1)"),
    "duplicate-vocab-id": (H + NONE2 + bpe((b"a", 0), (b"b", 0)), 0x24, "model",
                           "vocab id 0 is used twice (ids must be dense 0..vocab_size-1)"),
    # merges (vocab a=0 b=1; merges at 0x28, 12 bytes each)
    "unsorted-merges": (H + NONE2 + bpe((b"a", 0), (b"b", 1), merges=u32(1, 0, 0, 0, 1, 1), n_merges=2), 0x34, "model",
                        "merges not sorted by (id1<<32)|id2 (the runtime's binary search would miss them)"),
    "merge-id-beyond-vocab": (H + NONE2 + bpe((b"a", 0), (b"b", 1), merges=u32(0, 7, 0), n_merges=1), 0x28, "model",
                              "merge (0, 7) names an id beyond vocab_size 2"),
    "repeated-merge-rank": (H + NONE2 + bpe((b"a", 0), (b"b", 1), merges=u32(0, 1, 0, 1, 0, 0), n_merges=2), 0x3c,
                            "model", "merge rank 0 is out of range or repeated (ranks must be 0..1)"),
    "merge-rank-out-of-range": (H + NONE2 + bpe((b"a", 0), (b"b", 1), merges=u32(0, 1, 5), n_merges=1), 0x30, "model",
                                "merge rank 5 is out of range or repeated (ranks must be 0..0)"),
    "unigram-unk-id-out-of-range": (H + NONE2 + b"\x02" + u32(1, 5) + b"\x00" + s16(b"a") + u32(0) + bytes(8), 0x14,
                                    "model", "unk_id 5 is outside the vocab of 1"),
    # normalizer tables
    "norm-table-cannot-fit": (H + b"\x06" + u32(1000), 0x0e, "normalizer",
                              "truncated NormTable: 1000 entries need at least 6000 bytes, 0 left"),
    "norm-table-unsorted": (H + b"\x06" + u32(2, 0x42) + u16(0) + u32(0x41) + u16(0), 0x18, "normalizer",
                            "entry 1: code points not strictly increasing (U+0041 after U+0042)"),
    "norm-table-surrogate": (H + b"\x06" + u32(1, 0xD800) + u16(0), 0x12, "normalizer",
                             "entry 0: code point U+D800 is a surrogate"),
    # tail
    "unknown-post-op": (VALID[:-2] + u16(1) + b"\x02", 0x31, "post_program",
                        "unknown post-processor op 2 (the runtime stops parsing the program here)"),
    "unknown-flag-bits": (UPTO_ADDED + ADDED0 + CHAT0 + u16(0) + b"\x02" + u16(0) + u16(0), 0x2c, "flags",
                          "unknown flag bits 0x02"),
    "trailing-garbage": (VALID + b"xy", 0x31, None, "2 trailing byte(s) after the last section"),
    "nesting-too-deep": (H + (b"\x04" + u32(1)) * 70 + b"\x00" * 8, 0x0d + 65 * 5, "normalizer",
                         "normalizer nesting deeper than 64"),
    "children-cannot-fit": (H + b"\x04" + u32(3) + b"\x00\x00", 0x0e, "normalizer",
                            "normalizer.normalizers: 3 children cannot fit in 2 bytes"),
    "decoder-children-cannot-fit": (H + NONE2 + MODEL_A + b"\x07" + u32(0xFFFFFFFF), 0x22, "decoder",
                                    "decoder.decoders: 4294967295 children cannot fit in 0 bytes"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_format_error(name):
    data, offset, section, message = CASES[name]
    with pytest.raises(FormatError) as info:
        read_mtok(data)
    e = info.value
    where = " ".join(x for x in (f"section {section}" if section else "", f"at 0x{offset:08x}") if x)
    assert (e.message, e.offset, e.section) == (message, offset, section)
    assert str(e) == f"{where}: {message}"


def test_format_error_names_the_file():
    with pytest.raises(FormatError) as info:
        read_mtok(b"431 4\n0 0 0\n\n", path="dir/x.mtok")
    assert str(info.value).startswith("dir/x.mtok section header at 0x00000000: not an MNN tokenizer")
    assert info.value.path == "dir/x.mtok"


def test_invalid_utf8_vocab_token_message():
    data = H + NONE2 + bpe((b"a", 0), (b"\xff", 1))
    with pytest.raises(FormatError, match=r"vocab token b'\\xff' is not valid UTF-8$") as info:
        read_mtok(data)
    assert info.value.section == "model"


def test_invalid_utf8_vocab_token_offset_points_at_the_entry():
    data = H + NONE2 + bpe((b"a", 0), (b"\xff", 1))   # second entry at 0x21
    with pytest.raises(FormatError) as info:
        read_mtok(data)
    assert info.value.offset == 0x21


def test_invalid_utf8_after_unsorted_vocab_in_the_lenient_reader():
    # issue 13: `inspect` reads leniently; the unsorted-vocab warning moved the position the offset
    # search started from, which then ran past the entries (IndexError).
    data = H + NONE2 + bpe((b"\xfe", 0), (b"a", 1))   # entries at 0x1a, 0x21; "a" after 0xfe is unsorted
    with pytest.raises(FormatError, match=r"vocab token b'\\xfe' is not valid UTF-8$") as info:
        read_mtok(data, strict=False)
    assert info.value.offset == 0x1a


def test_null_child_skipped_but_null_decoder_code_is_bytelevel():
    # Decoder 0 is ByteLevel, not "none" (spec 2.6): a Sequence child 0 is a real component.
    data = H + NONE2 + MODEL_A + b"\x07" + u32(1) + b"\x00" + ADDED0 + TAIL
    assert read_mtok(data)[0].decoder == D.Sequence((D.ByteLevel(),))


# ---------------------------------------------------------------- writer errors

def _tok(**kw):
    base = dict(model=M.BPE({"a": 0}), decoder=D.Fuse())
    return Tokenizer(**{**base, **kw})


WRITER_CASES = {
    "string-too-long": (_tok(normalizer=N.Prepend("x" * 65536)), ["65536 bytes", "65535"]),
    "token-too-long": (_tok(model=M.BPE({"x" * 65536: 0})), ["65536 bytes", "65535"]),
    "added-content-too-long": (_tok(added_tokens=(AddedToken(0, "\u00e9" * 40000, normalized=False),)),
                               ["80000 bytes", "65535"]),
    "eos-too-long": (_tok(chat=ChatTemplate(eos_token="x" * 70000)), ["eos token", "70000 bytes"]),
    "non-dense-ids": (_tok(model=M.BPE({"a": 0, "b": 2})), ["vocab id 2 ('b') is outside 0..1", "dense"]),
    "duplicate-ids": (_tok(model=M.BPE({"a": 0, "b": 0})), ["vocab id 0 is used by both 'a' and 'b'"]),
    "negative-id": (_tok(model=M.BPE({"a": -1})), ["vocab id -1 ('a') is outside 0..0", "dense"]),
    "non-int-id": (_tok(model=M.BPE({"a": "0"})), ["vocab id '0' ('a')"]),
    "unigram-duplicate-piece": (_tok(model=M.Unigram((("a", 0.0), ("a", -1.0)), unk_id=0)), ["'a' appears twice"]),
    "merge-unknown-token": (_tok(model=M.BPE({"a": 0, "b": 1}, (("a", "b"), ("a", "z")))),
                            ["merge 1 ('a' 'z') names 'z', which is not in the vocab"]),
    "unlowered-nfc": (_tok(normalizer=N.NFC()), ["no code for normalizer NFC", "lower the tokenizer"]),
    "unlowered-in-sequence": (_tok(pre_tokenizer=P.Sequence((P.Whitespace(),))), ["pre_tokenizer Whitespace"]),
    "unlowered-wordlevel": (_tok(model=M.WordLevel({"a": 0})), ["no code for model WordLevel"]),
    "metaspace-first": (_tok(pre_tokenizer=P.Metaspace("\u2581", "first", False)),
                        ["prepend_scheme='first'", "always/never"]),
    "metaspace-split": (_tok(pre_tokenizer=P.Metaspace("\u2581", "always", True)), ["split=True"]),
    "bytelevel-prefix-space": (_tok(pre_tokenizer=P.ByteLevel(True)), ["add_prefix_space=True"]),
    "split-merged-with-next": (_tok(pre_tokenizer=P.Split(Pattern("x", True), "MergedWithNext")),
                               ["'MergedWithNext'"]),
    "split-literal-pattern": (_tok(pre_tokenizer=P.Split(Pattern("x"), "Isolated")), ["must be a regex"]),
    "replace-regex": (_tok(normalizer=N.Replace(Pattern("a+", True), "b")), ["must be a literal string"]),
    "no-decoder": (_tok(decoder=None), ["no 'none' decoder"]),
    "bpe-unk-token": (_tok(model=M.BPE({"a": 0}, unk_token="a")), ["unk_token='a'"]),
    "unigram-no-unk": (_tok(model=M.Unigram((("a", 0.0),))), ["unk_id"]),
    "lone-surrogate-token": (_tok(model=M.BPE({"\ud800": 0})), ["is not valid Unicode"]),
    "lone-surrogate-string": (_tok(normalizer=N.Prepend("\udfff")), ["normalizer Prepend.prepend"]),
    "added-single-word": (_tok(added_tokens=(AddedToken(0, "a", single_word=True, normalized=False),)),
                          ["single_word=True"]),
    "added-normalized": (_tok(added_tokens=(AddedToken(0, "a"),)), ["normalized=True"]),
    "header-id-not-u32": (_tok(special_ids=(2**32,)), ["header id 4294967296"]),
    "strip-start-not-u32": (_tok(decoder=D.Strip(" ", -1, 0)), ["Strip.start=-1"]),
    "bert-table-without-strip": (_tok(normalizer=N.MnnBertNormalizer(True, True, False, True, ((0xE9, "e"),))),
                                 ["only written when strip_accents"]),
}


def test_writer_unlowered_post_processor_is_unsupported():
    from mtok_export.ir.processors import BertProcessing

    with pytest.raises(UnsupportedError, match="BertProcessing"):
        write_mtok(_tok(post_processor=BertProcessing()))


@pytest.mark.parametrize("name", list(WRITER_CASES))
def test_writer_error(name):
    tok, fragments = WRITER_CASES[name]
    with pytest.raises(UnsupportedError) as info:
        write_mtok(tok)
    for f in fragments:
        assert f in str(info.value)


@pytest.mark.parametrize("entries", [((0x42, "b"), (0x41, "a")), ((0xD800, "x"),), ((0x110000, "x"),)],
                         ids=["unsorted", "surrogate", "beyond-10ffff"])
def test_writer_bad_codepoint_table_is_unsupported(entries):
    with pytest.raises(UnsupportedError, match="NormTable"):
        write_mtok(_tok(normalizer=N.CodepointMap(entries)))


@pytest.mark.parametrize("op", [-1, 2**32])
def test_writer_post_program_id_not_u32(op):
    with pytest.raises(UnsupportedError, match="u32"):
        write_mtok(_tok(post_processor=PostProgram((None, op))))


# ---------------------------------------------------------------- fuzz: only FormatError may escape

FUZZ_IRS = {
    "bpe-everything": Tokenizer(
        normalizer=N.Sequence((N.Prepend("\u2581"), N.Replace(Pattern(" "), "\u2581"), N.Strip(False, True),
                               N.CodepointMap(((0x41, "a"), (0x2126, "\u03a9"))),
                               N.MnnBertNormalizer(True, True, True, True, ((0xE9, "e\u0301"),)),
                               N.MnnBertNormalizer(False, False, False, True, None))),
        pre_tokenizer=P.Sequence((P.Split(Pattern(r"\s+", True), "MergedWithPrevious", True),
                                  P.Metaspace("\u2581", "never", False), P.ByteLevel(False, True, True),
                                  P.Digits(False), P.BertPreTokenizer())),
        model=M.BPE({"a": 0, "b": 1, "ab": 2, "<s>": 3, "\u4e2d": 4}, (("a", "b"), ("ab", "\u4e2d"))),
        decoder=D.Sequence((D.Replace(Pattern("\u2581"), " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 1),
                            D.Metaspace("\u2581", "always", True), D.WordPiece("##", False), D.ByteLevel())),
        post_processor=PostProgram((3, None, 3)),
        added_tokens=(AddedToken(3, "<s>", lstrip=True, normalized=False, special=True),),
        special_ids=(3,), stop_ids=(3, 4), prefix_ids=(3,),
        chat=ChatTemplate("{{ bos_token }}{{x}}", "<s>", "</s>", True)),
    "wordpiece": Tokenizer(model=M.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}), decoder=D.WordPiece(),
                           post_processor=PostProgram((7, 8, 9, None))),
    "unigram": Tokenizer(model=M.Unigram((("<unk>", 0.0), ("a", -1.5), ("\u2581b", -2.0)), unk_id=0),
                         decoder=D.Metaspace(), pre_tokenizer=P.Metaspace("\u2581", "always", False),
                         chat=ChatTemplate("t", "", "e")),
}


def _parse(data: bytes) -> bool:
    try:
        read_mtok(data)
        return True
    except FormatError:
        return False


@pytest.mark.parametrize("name", list(FUZZ_IRS))
def test_fuzz_truncation_at_every_offset(name):
    data = write_mtok(FUZZ_IRS[name])
    _, layout = read_mtok(data)
    optional_starts = {s.offset for s in layout.sections
                       if s.name in ("chat_template", "eos", "flags", "bos", "post_program")}
    if layout.program_pad:  # without its pad byte an ambiguous program is a valid legacy tail
        optional_starts.add(len(data) - 1)
    clean = {n for n in range(len(data)) if _parse(data[:n])}
    # A cut parses cleanly exactly where an older writer could have stopped (spec 2.2).
    assert clean <= optional_starts
    assert max(optional_starts) in clean


@pytest.mark.parametrize("name", list(FUZZ_IRS))
def test_fuzz_byte_mutations(name):
    data = write_mtok(FUZZ_IRS[name])
    for i in range(min(len(data), 300)):
        for new in {data[i] ^ 0xFF, data[i] ^ 0x01, data[i] ^ 0x80, 0x00, 0x7F}:
            mutated = data[:i] + bytes((new,)) + data[i + 1:]
            _parse(mutated)                              # anything but FormatError fails the test
            _parse(mutated + b"\x00")                    # and the same with one extra byte


@pytest.mark.runtime
def test_fuzz_real_file(lowered_corpus):
    """The smallest corpus/sample file: mutate its first 300 bytes, cut it at 400 spread offsets."""
    from tests.support.corpus_dirs import TOKENIZER_DIRS

    if not TOKENIZER_DIRS:
        pytest.skip("no corpus")
    name = min(TOKENIZER_DIRS, key=lambda n: (TOKENIZER_DIRS[n] / "tokenizer.json").stat().st_size)
    data = lowered_corpus[name].data
    for i in range(min(len(data), 300)):
        _parse(data[:i] + bytes((data[i] ^ 0xFF,)) + data[i + 1:])
    step = max(1, len(data) // 400)
    for n in range(0, len(data), step):
        _parse(data[:n])
