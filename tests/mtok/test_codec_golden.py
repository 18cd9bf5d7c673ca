"""Golden bytes for `.mtok` (spec sections 1, 2 and the 2.10 worked example).

Every expected byte string below was written by hand from the spec, one field per line, with the
offset of the line's first byte as a label; `hx()` checks each label against the running length, so
the annotations cannot drift from the bytes.  Each fixture is asserted both ways:
`write_mtok(ir) == bytes` and `read_mtok(bytes)[0] == ir` (plus the section layout)."""

from __future__ import annotations

import pytest

from mtok_export.ir import AddedToken, ChatTemplate, Pattern, Tokenizer
from mtok_export.ir import decoders as D
from mtok_export.ir import models as M
from mtok_export.ir import normalizers as N
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.processors import PostProgram
from mtok_export.mtok import read_mtok, write_mtok

from tests.support.spec_example import SPEC_2_10, hx


def check(ir: Tokenizer, expected: bytes):
    assert write_mtok(ir).hex(" ") == expected.hex(" ")
    got, layout = read_mtok(expected)
    assert got == ir
    assert layout.size == len(expected)
    return layout


def sections(layout) -> list[tuple[str, int, int]]:
    return [(s.name, s.offset, s.size) for s in layout.sections if s.present]


EMPTY_TAIL = """
    00000000        # added tokens: 0
    00000000        # chat template: ""
    0000            # eos ""
    00              # flags 0
    0000            # bos ""
    0000            # post program: 0 ops
"""

# ------------------------------------------------------------------ spec 2.10, byte for byte

SPEC_2_10_IR = Tokenizer(
    model=M.BPE({"a": 0, "b": 1, "ab": 2, "<s>": 3}, (("a", "b"),)),
    decoder=D.ByteLevel(),
    post_processor=PostProgram((3, None)),
    added_tokens=(AddedToken(3, "<s>", normalized=False, special=True),),
    special_ids=(3,), stop_ids=(3,),
    chat=ChatTemplate("{{x}}", bos_token="<s>", eos_token="</s>", clean_up_tokenization_spaces=True),
)


def test_spec_2_10_worked_example():
    layout = check(SPEC_2_10_IR, SPEC_2_10)
    assert layout.header_size == 0x10
    assert sections(layout) == [
        ("normalizer", 0x10, 1), ("pre_tokenizer", 0x11, 1), ("model", 0x12, 0x36), ("decoder", 0x48, 1),
        ("added_tokens", 0x49, 16), ("chat_template", 0x59, 9), ("eos", 0x62, 6), ("flags", 0x68, 1),
        ("bos", 0x69, 5), ("post_program", 0x6e, 8),
    ]
    assert not layout.warnings and not layout.program_pad and not layout.legacy_program


def test_crlf_header_is_accepted():
    # Spec 1: a header written in text mode on Windows has CRLF; the runtime's `>>` ignores the \r.
    data = SPEC_2_10.replace(b"430 4\n1 1 0\n3 3\n", b"430 4\r\n1 1 0\r\n3 3\r\n", 1)
    tok, layout = read_mtok(data)
    assert tok == SPEC_2_10_IR and layout.header_size == 0x13


# ------------------------------------------------------------------ everything at once

EVERYTHING_IR = Tokenizer(
    normalizer=N.Sequence((
        N.Prepend("\u2581"),
        N.Replace(Pattern(" "), "\u2581"),
        N.Strip(True, False),
        N.CodepointMap(((0x41, "a"), (0x2126, "\u03a9"))),
    )),
    pre_tokenizer=P.Sequence((
        P.Split(Pattern(r"\s+", regex=True), "Isolated", invert=False),
        P.Metaspace("\u2581", "always", split=False),
        P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
        P.Digits(True),
        P.BertPreTokenizer(),
    )),
    model=M.BPE({"a": 0, "b": 1, "ab": 2, "<s>": 3, "</s>": 4, "\u00e9": 5},
                (("b", "\u00e9"), ("a", "b")), byte_fallback=True),
    decoder=D.Sequence((
        D.Replace(Pattern("\u2581"), " "),
        D.ByteFallback(),
        D.Fuse(),
        D.Strip(" ", 1, 0),
        D.Metaspace("\u2581", "always", split=True),
        D.WordPiece("##", True),
    )),
    post_processor=PostProgram((3, None, 4)),
    added_tokens=(AddedToken(3, "<s>", normalized=False, special=True),
                  AddedToken(4, "</s>", lstrip=True, rstrip=True, normalized=False, special=True)),
    special_ids=(3, 4), stop_ids=(4,), prefix_ids=(3,),
    chat=ChatTemplate("{{x}}", bos_token="<s>", eos_token="</s>", clean_up_tokenization_spaces=True),
)

EVERYTHING = hx("""
0000: 34 33 30 20 34 0a               # "430 4\\n"
0006: 32 20 31 20 31 0a               # "2 1 1\\n": 2 special, 1 stop, 1 prefix
000c: 33 20 34 20 34 20 33 0a         # "3 4 4 3\\n": special 3 4, stop 4, prefix 3
# normalizer
0014: 04 04000000                     # Sequence of 4
0019: 02 0300 e29681                  #   Prepend "\u2581"
001f: 03 0100 20 0300 e29681          #   Replace " " -> "\u2581"
0028: 08 01 00                        #   Strip left=1 right=0
002b: 06 02000000                     #   code-point table, 2 entries
0030: 41000000 0100 61                #     U+0041 -> "a"
0037: 26210000 0200 cea9              #     U+2126 -> U+03A9
# pre-tokenizer
003f: 06 05000000                     # Sequence of 5
0044: 04 0300 5c732b 00 00            #   Split /\\s+/, invert 0, behavior 0 = Isolated
004c: 03 0300 e29681 01               #   Metaspace "\u2581", add_prefix_space 1
0053: 01 00                           #   ByteLevel use_regex 0
0055: 02 01                           #   Digits individual_digits 1
0057: 05                              #   BertPreTokenizer
# model
0058: 00 06000000 01 00 02000000      # BPE, vocab 6, byte_fallback 1, byte_level 0, 2 merges
0063: 0400 3c2f733e 04000000          # "</s>" -> 4   ('/' 0x2f < 's' 0x73)
006d: 0300 3c733e   03000000          # "<s>"  -> 3
0076: 0100 61       00000000          # "a"    -> 0
007d: 0200 6162     02000000          # "ab"   -> 2
0085: 0100 62       01000000          # "b"    -> 1
008c: 0200 c3a9     05000000          # "\u00e9" -> 5   (0xc3 sorts last)
0094: 00000000 01000000 01000000      # merge (a, b) = (0, 1) rank 1: sorted by (id1<<32)|id2,
00a0: 01000000 05000000 00000000      # merge (b, \u00e9) = (1, 5) rank 0   not by rank
# decoder
00ac: 07 06000000                     # Sequence of 6
00b1: 05 0300 e29681 0100 20          #   Replace "\u2581" -> " "
00ba: 01                              #   ByteFallback
00bb: 04                              #   Fuse
00bc: 06 0100 20 01000000 00000000    #   Strip " " start 1 stop 0
00c8: 02 0300 e29681 01               #   Metaspace "\u2581", add_prefix_space 1
00cf: 03 0200 2323 01                 #   WordPiece "##" cleanup 1
# added tokens
00d5: 02000000                        # 2 added tokens
00d9: 03000000 01 00 00 0300 3c733e   #   id 3 special "<s>"
00e5: 04000000 01 01 01 0400 3c2f733e #   id 4 special lstrip rstrip "</s>"
# optional sections
00f2: 05000000 7b7b787d7d             # chat template "{{x}}"
00fb: 0400 3c2f733e                   # eos "</s>"
0101: 01                              # flags: clean_up_tokenization_spaces
0102: 0300 3c733e                     # bos "<s>"
0107: 0300 01 03000000 00 01 04000000 # post program [SPECIAL 3, SEQUENCE_A, SPECIAL 4]
0114:
""")


def test_everything_golden():
    layout = check(EVERYTHING_IR, EVERYTHING)
    assert layout.header_size == 0x14
    assert sections(layout) == [
        ("normalizer", 0x14, 0x2b), ("pre_tokenizer", 0x3f, 0x19), ("model", 0x58, 0x54),
        ("decoder", 0xac, 0x29), ("added_tokens", 0xd5, 0x1d), ("chat_template", 0xf2, 9),
        ("eos", 0xfb, 6), ("flags", 0x101, 1), ("bos", 0x102, 5), ("post_program", 0x107, 13),
    ]
    assert all(s.present for s in layout.sections)
    # ids 3 and 4 are in the model vocab, so nothing to warn about
    assert layout.warnings == []


def test_everything_sections_tile_the_file():
    _, layout = read_mtok(EVERYTHING)
    pos = layout.header_size
    for s in layout.sections:
        assert s.offset == pos
        pos += s.size
    assert pos == len(EVERYTHING)


# ------------------------------------------------------------------ one model or component each

HEADER_EMPTY = "34 33 30 20 34 0a 30 20 30 20 30 0a 0a   # \"430 4\\n\" \"0 0 0\\n\" \"\\n\"\n"


def test_wordpiece_model():
    ir = Tokenizer(model=M.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, "[UNK]", "##", 100), decoder=D.Fuse())
    expected = hx(HEADER_EMPTY + """
000d: 00 00                         # no normalizer, no pre-tokenizer
000f: 01 03000000                   # WordPiece, vocab_size 3
0014: 0500 5b554e4b5d               # unk_token "[UNK]"
001b: 0200 2323                     # continuing_subword_prefix "##"
001f: 64000000                      # max_input_chars_per_word 100
0023: 0300 232362 02000000          # "##b"   -> 2
002c: 0500 5b554e4b5d 00000000      # "[UNK]" -> 0
0037: 0100 61 01000000              # "a"     -> 1
003e: 04                            # decoder Fuse
""" + EMPTY_TAIL)
    layout = check(ir, expected)
    assert sections(layout)[2] == ("model", 0x0f, 0x3e - 0x0f)


def test_unigram_model_f64_scores():
    ir = Tokenizer(model=M.Unigram((("<unk>", 0.0), ("a", -1.5), ("\u2581", -0.1)), unk_id=0, byte_fallback=True),
                   decoder=D.Metaspace("\u2581", "never", True))
    expected = hx(HEADER_EMPTY + """
000d: 00 00                                 # no normalizer, no pre-tokenizer
000f: 02 03000000 00000000 01               # Unigram, vocab 3, unk_id 0, byte_fallback 1
0019: 0500 3c756e6b3e 00000000 0000000000000000   # "<unk>" id 0 score 0.0
002c: 0100 61         01000000 000000000000f8bf   # "a"     id 1 score -1.5
003b: 0300 e29681     02000000 9a9999999999b9bf   # "\u2581" id 2 score -0.1
004c: 02 0300 e29681 00                     # decoder Metaspace, add_prefix_space 0 (never)
""" + EMPTY_TAIL)
    check(ir, expected)
    assert read_mtok(expected)[0].model.vocab[2][1] == -0.1  # exact binary64, no float32 rounding


def test_bert_normalizer_code_5():
    # Code 5 has no NFD table; strip_accents is carried even though the runtime then cannot strip.
    ir = Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(),
                   normalizer=N.MnnBertNormalizer(True, False, True, True, None))
    expected = hx(HEADER_EMPTY + """
000d: 05 01 00 01 01            # BertNormalizer: clean_text 1, chinese 0, strip_accents 1, lowercase 1
0012: 00                        # no pre-tokenizer
0013: 00 01000000 00 00 00000000  0100 61 00000000   # BPE "a" -> 0, no merges
0025: 04                        # decoder Fuse
""" + EMPTY_TAIL)
    check(ir, expected)


def test_bert_normalizer_code_7_with_nfd_table():
    table = ((0xC0, "A\u0300"), (0xE9, "e\u0301"))
    ir = Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(),
                   normalizer=N.MnnBertNormalizer(False, True, True, False, table))
    expected = hx(HEADER_EMPTY + """
000d: 07 00 01 01 00            # BertNormalizer+NFD: clean 0, chinese 1, strip_accents 1, lowercase 0
0012: 02000000                  # NFD table: 2 entries
0016: c0000000 0300 41cc80      #   U+00C0 -> "A" U+0300
001f: e9000000 0300 65cc81      #   U+00E9 -> "e" U+0301
0028: 00                        # no pre-tokenizer
0029: 00 01000000 00 00 00000000  0100 61 00000000   # BPE "a" -> 0
003b: 04                        # decoder Fuse
""" + EMPTY_TAIL)
    layout = check(ir, expected)
    assert sections(layout)[0] == ("normalizer", 0x0d, 0x28 - 0x0d)


def test_bert_normalizer_code_7_without_strip_has_no_table():
    # Spec 2.3: code 7 carries its NormTable only when strip_accents != 0.
    ir = Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(),
                   normalizer=N.MnnBertNormalizer(True, True, False, True, ()))
    expected = hx(HEADER_EMPTY + """
000d: 07 01 01 00 01            # code 7, strip_accents 0: no table follows
0012: 00
0013: 00 01000000 00 00 00000000  0100 61 00000000
0025: 04
""" + EMPTY_TAIL)
    check(ir, expected)


def test_split_behaviors_and_invert():
    ir = Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(), pre_tokenizer=P.Sequence((
        P.Split(Pattern("x", True), "Removed", True), P.Split(Pattern("y", True), "MergedWithPrevious", False))))
    expected = hx(HEADER_EMPTY + """
000d: 00                        # no normalizer
000e: 06 02000000               # Sequence of 2
0013: 04 0100 78 01 01          #   Split /x/ invert 1, behavior 1 = Removed
0019: 04 0100 79 00 02          #   Split /y/ invert 0, behavior 2 = MergedWithPrevious
001f: 00 01000000 00 00 00000000  0100 61 00000000
0031: 04
""" + EMPTY_TAIL)
    check(ir, expected)


def _with_program(ops) -> Tokenizer:
    return Tokenizer(model=M.BPE({"a": 0}), decoder=D.Fuse(), post_processor=PostProgram(ops))


PROGRAM_PREFIX = HEADER_EMPTY + """
000d: 00 00
000f: 00 01000000 00 00 00000000  0100 61 00000000
0021: 04
0022: 00000000 00000000 0000 00 0000   # no added tokens, empty template/eos, flags 0, empty bos
"""


def test_ambiguous_program_gets_a_pad_byte():
    # n0 = 1, n1 = 3: 1 + 5*3 = 16 = 4*(1+3) bytes, which HEAD would read as 4 legacy tail ids.
    expected = hx(PROGRAM_PREFIX + """
002f: 0400                       # 4 ops
0031: 01 03000000 01 04000000 01 05000000 00   # SPECIAL 3, SPECIAL 4, SPECIAL 5, SEQUENCE_A
0041: 00                         # pad: 17 bytes left != 4*4
""")
    ir = _with_program((3, 4, 5, None))
    assert write_mtok(ir) == expected
    tok, layout = read_mtok(expected)
    assert tok == ir and layout.program_pad and not layout.legacy_program


def test_ambiguous_program_without_pad_reads_as_legacy_tail_ids():
    # What HEAD does with the unpadded bytes (spec 2.9): SEQUENCE_A then the 16 bytes as 4 u32 ids.
    data = hx(PROGRAM_PREFIX + """
002f: 0400 01 03000000 01 04000000 01 05000000 00
""")
    tok, layout = read_mtok(data)
    assert layout.legacy_program and not layout.program_pad
    assert tok.post_processor == PostProgram((None, 0x00000301, 0x00040100, 0x05010000, 0))


def test_unambiguous_program_has_no_pad():
    expected = hx(PROGRAM_PREFIX + """
002f: 0300 00 01 07000000 01 08000000     # SEQUENCE_A, SPECIAL 7, SPECIAL 8: n1 != 3*n0
""")
    ir = _with_program((None, 7, 8))
    assert write_mtok(ir) == expected
    tok, layout = read_mtok(expected)
    assert tok == ir and not layout.program_pad
    assert any("beyond the model vocab" in w for w in layout.warnings)  # ids 7, 8 > vocab of 1


def test_no_program_is_zero_ops():
    assert write_mtok(_with_program(())).endswith(bytes.fromhex("0000"))
    data = hx(PROGRAM_PREFIX + "002f: 0000")
    assert read_mtok(data)[0].post_processor is None


def test_file_ending_after_added_tokens_still_reads():
    # Spec 2.2: older writers stop early; sections 6-10 are optional to the reader.
    data = hx(PROGRAM_PREFIX.split("0022:")[0] + "0022: 00000000")
    tok, layout = read_mtok(data)
    assert tok.chat == ChatTemplate() and tok.post_processor is None
    assert [s.name for s in layout.sections if not s.present] == [
        "chat_template", "eos", "flags", "bos", "post_program"]


def test_null_child_in_sequence_is_skipped_with_warning():
    data = hx(HEADER_EMPTY + """
000d: 04 02000000 00 02 0100 78      # normalizer Sequence[none, Prepend "x"]
0017: 00
0018: 00 01000000 00 00 00000000  0100 61 00000000
002a: 04
""" + EMPTY_TAIL)
    tok, layout = read_mtok(data)
    assert tok.normalizer == N.Sequence((N.Prepend("x"),))
    assert any("null normalizer inside a Sequence" in w for w in layout.warnings)


def test_normalizer_code_1_reads_as_none_with_warning():
    data = hx(HEADER_EMPTY + """
000d: 01                             # old NFKC: an empty-table no-op
000e: 00
000f: 00 01000000 00 00 00000000  0100 61 00000000
0021: 04
""" + EMPTY_TAIL)
    tok, layout = read_mtok(data)
    assert tok.normalizer is None
    assert any("code 1" in w for w in layout.warnings)


@pytest.mark.parametrize("ir", [SPEC_2_10_IR, EVERYTHING_IR], ids=["spec-2.10", "everything"])
def test_golden_irs_rewrite_identically(ir):
    data = write_mtok(ir)
    assert write_mtok(read_mtok(data)[0]) == data
