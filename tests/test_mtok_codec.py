"""The wire kinds of `mtok/codec.py`, one at a time: each kind's write gives the bytes written by
hand from the spec and its read gives the value back, ending where the bytes end (construct's
`common(format, data, obj)`); each refuses on write what the format cannot carry, with the
message.  Whole files, the components and the model body are in test_mtok_golden.py and their
errors in test_mtok_errors.py; the schema is shown here to be made of these objects only."""

from __future__ import annotations

import inspect

import pytest

from mtok_export.errors import FormatError, UnsupportedError
from mtok_export.ir import AddedToken, Pattern
from mtok_export.ir.processors import PostProgram
from mtok_export.mtok import Layout, codec
from mtok_export.mtok import schema as S
from mtok_export.mtok.primitives import Reader, Writer

PREFIX = b"\xee"  # a kind never reads at offset 0 in a file


def common(kind, data: bytes, value, name="f"):
    w = Writer()
    kind.write(w, value, codec.Context(name, name))
    assert w.getvalue().hex(" ") == data.hex(" ")
    r = Reader(PREFIX + data, len(PREFIX))
    layout = Layout()
    assert kind.read(r, codec.Context(name, name, layout)) == value
    assert r.remaining == 0
    return layout


@pytest.mark.parametrize("kind, data, value", [
    (S.BOOL, b"\x01", True),
    (S.BOOL, b"\x00", False),
    (S.U32, bytes.fromhex("78563412"), 0x12345678),
    (S.STR, bytes.fromhex("0300") + "é!".encode(), "é!"),  # u16 length counts UTF-8 bytes
    (S.STR, bytes.fromhex("0000"), ""),
    (codec.LStr(), bytes.fromhex("02000000") + b"hi", "hi"),  # u32 length
    (S.PATTERN, bytes.fromhex("0100") + b" ", Pattern(" ")),
    (S.REGEX, bytes.fromhex("0300") + rb"\s+", Pattern(r"\s+", regex=True)),
    (S.SCHEME, b"\x01", "always"),
    (S.SCHEME, b"\x00", "never"),
    (S.BEHAVIOR, b"\x00", "Isolated"),
    (S.BEHAVIOR, b"\x02", "MergedWithPrevious"),
    (S.TABLE, bytes.fromhex("01000000" "c0000000" "0100") + b"A", ((0xC0, "A"),)),  # U+00C0 -> "A"
])
def test_kind_both_ways(kind, data, value):
    common(kind, data, value)


def test_flags_both_ways():
    """The reader gives the byte: `file.py` checks the other bits once every section is read."""
    for value, byte in ((True, 1), (False, 0)):
        w = Writer()
        S.FLAGS.write(w, value, codec.Context("flags", "flags"))
        assert w.getvalue() == bytes((byte,))
    assert S.FLAGS.read(Reader(b"\x03"), codec.Context("flags", "flags")) == 3


def test_added_tokens_both_ways():
    common(codec.AddedTokens(), bytes.fromhex(
        "01000000"  # 1 token
        "07000000"  # id 7
        "01 00 01"  # special, lstrip, rstrip
        "0300") + b"<s>",
        (AddedToken(7, "<s>", rstrip=True, normalized=False, special=True),))


def test_program_both_ways():
    data = bytes.fromhex("0300" "01 05000000" "00" "01 06000000")  # 3 ops: [5] A [6]
    assert not common(codec.Program(), data, PostProgram((5, None, 6))).program_pad
    common(codec.Program(), bytes.fromhex("0000"), None)


@pytest.mark.parametrize("kind, value, message", [
    (S.U32, -1, "f=-1 is not a u32"),
    (S.U32, 1 << 32, "f=4294967296 is not a u32"),
    (S.STR, "x" * 65536, "f is 65536 bytes; the format's u16 length allows 65535"),
    (S.STR, "\ud800", "f: not valid Unicode (surrogates not allowed)"),
    (S.PATTERN, Pattern("a", regex=True), "f must be a literal string here; lower the tokenizer for MNN first"),
    (S.REGEX, Pattern("a"), "f must be a regex here; lower the tokenizer for MNN first"),
    (S.SCHEME, "first", "f='first': the format has only always/never"),
    (S.BEHAVIOR, "Contiguous", "f='Contiguous': the runtime has only Isolated, Removed, MergedWithPrevious"),
    (S.TABLE, ((0x42, "b"), (0x41, "a")),
     "f: NormTable code points must be strictly increasing: U+0041 after U+0042"),
    (codec.Program(), PostProgram((None, 1 << 32)), "post program id 4294967296 is not a u32"),
    (codec.AddedTokens(), (AddedToken(1, "x", normalized=True),),
     "added token 'x': the format cannot carry normalized=True; lower the tokenizer for MNN first"),
])
def test_kind_refuses_on_write(kind, value, message):
    with pytest.raises(UnsupportedError) as e:
        kind.write(Writer(), value, codec.Context("f", "f"))
    assert str(e.value) == message


@pytest.mark.parametrize("kind, data, message, offset", [
    (S.BOOL, b"\x02", "f: boolean byte must be 0 or 1, got 2", 1),
    (S.BEHAVIOR, b"\x03", "f: unknown Split behavior 3 (MNN writes 0, 1 or 2)", 1),
    (S.STR, bytes.fromhex("0200") + b"\xc3(", "f: invalid UTF-8 (invalid continuation byte)", 3),
    (S.TABLE, bytes.fromhex("01000000" "00d80000" "0000"), "entry 0: code point U+D800 is a surrogate", 5),
])
def test_kind_read_fails_at_the_offset(kind, data, message, offset):
    r = Reader(PREFIX + data, len(PREFIX))
    r.section = "sect"
    with pytest.raises(FormatError) as e:
        kind.read(r, codec.Context("f", "f", Layout()))
    assert (e.value.message, e.value.offset, e.value.section) == (message, offset, "sect")


def _schema_kinds():
    for family in S.FAMILIES.values():
        for v in family.variants:
            yield from (kind for _, kind in v.fields)
    yield from (spec.kind for spec in S.SECTIONS)


def test_the_schema_is_made_of_kinds_and_uses_every_kind():
    """No field is a string any more, and no kind class is declared but never used."""
    used = list(_schema_kinds())
    assert all(isinstance(k, codec.Kind) for k in used)
    declared = {c for _, c in inspect.getmembers(codec, inspect.isclass)
                if issubclass(c, codec.Kind) and c is not codec.Kind}
    assert declared == {type(k) for k in used}
