"""Tests for mtok_export.unicode.tables (per-code-point tables, cache, charsmaps) and the `.mtok`
NormTable codec that writes them (mtok_export.mtok.normtable)."""

from __future__ import annotations

import base64
import json
import os
import struct
import unicodedata
from pathlib import Path

import pytest

from mtok_export.errors import FormatError
from mtok_export.mtok.normtable import decode_table, encode_table
from mtok_export.unicode import tables as T
from mtok_export.unicode import (
    build_table, cache_path, charsmap_rules, charsmap_table, clear_memory_cache, table,
)

CORPUS = Path(__file__).parents[2] / "../shared/corpus"
TOKENIZERS = CORPUS / "tokenizers"
ALL_CPS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never touch the user's cache: every test gets a shared per-session cache dir."""
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "mtok-cache"))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty cache dir and an empty in-memory cache; returns the dir."""
    d = tmp_path / "cache"
    monkeypatch.setenv("MTOK_CACHE_DIR", str(d))
    clear_memory_cache()
    yield d
    clear_memory_cache()


# ------------------------------------------------------------------------------------------------
# Tables against the reference (HF tokenizers' normalizers), every code point

def _reference(form: str) -> dict[int, str]:
    """cp -> what HF tokenizers makes of it alone, for every code point but U+0000 (the separator:
    a starter that composes with nothing, so each piece normalizes as if alone)."""
    from tokenizers import normalizers as HN

    norm = {"NFC": HN.NFC(), "NFKC": HN.NFKC(), "NFD": HN.NFD(), "NFKD": HN.NFKD(),
            "NFD-Mn": HN.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                        lowercase=False)}[form]
    cps = ALL_CPS[1:]
    out = norm.normalize_str("\0".join(map(chr, cps)) + "\0").split("\0")[:-1]
    assert len(out) == len(cps)
    return dict(zip(cps, out))


# strip_accents' nonspacing marks are Unicode 8.0's (unicode/ucd.py); these changed category since.
MARKS_CHANGED_SINCE_8 = [0x1734, 0x1885, 0x1886, 0xA9BD, 0x111C9, 0x1171E]


@pytest.mark.runtime
@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD", "NFD-Mn"])
def test_every_code_point_matches_the_reference(form):
    entries = table(form)
    mapping = dict(entries)
    assert len(mapping) == len(entries) and 0 not in mapping
    ref = _reference(form)
    bad = [cp for cp, want in ref.items() if mapping.get(cp, chr(cp)) != want]
    assert bad == (MARKS_CHANGED_SINCE_8 if form == "NFD-Mn" else []), \
        f"{len(bad)} code points differ, first: {[hex(c) for c in bad[:10]]}"
    # only real changes are recorded, surrogates never, and the order is strictly increasing
    assert all(rep != chr(cp) for cp, rep in entries)
    assert not any(0xD800 <= cp <= 0xDFFF for cp in mapping)
    cps = [cp for cp, _ in entries]
    assert cps == sorted(set(cps))


@pytest.mark.runtime
def test_tables_do_not_follow_the_running_python():
    """Python 3.11's unicodedata (14.0) maps code points HF tokenizers (9.0) leaves alone."""
    nfkc, ref = dict(table("NFKC")), _reference("NFKC")
    for cp in (0x1F16C, 0x1FBF1, 0xA7F2):  # assigned in 12.0, 13.0, 14.0
        assert ref[cp] == chr(cp) and cp not in nfkc
        if unicodedata.unidata_version >= "14.0.0":
            assert unicodedata.normalize("NFKC", chr(cp)) != chr(cp)


@pytest.mark.runtime
def test_build_is_deterministic_and_reports_progress():
    calls = []
    a = build_table("NFC", progress=lambda done, total: calls.append((done, total)))
    assert a == build_table("NFC")
    assert calls[0] == (0, 0x110000) and calls[-1] == (0x110000, 0x110000)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) == 18  # start + one per 65536 code points


def test_unknown_form():
    with pytest.raises(ValueError, match="unknown normalization form 'NFX'"):
        build_table("NFX")
    with pytest.raises(ValueError):
        table("nfc")


# ------------------------------------------------------------------------------------------------
# NormTable codec (spec 2.3.1)

GOLDEN = bytes([
    0x02, 0x00, 0x00, 0x00,  # 0x00 u32 count = 2
    0xA0, 0x00, 0x00, 0x00,  # 0x04 u32 codepoint U+00A0 NO-BREAK SPACE
    0x01, 0x00,              # 0x08 u16 utf8_len = 1
    0x20,                    # 0x0A " "
    0x2B, 0x21, 0x00, 0x00,  # 0x0B u32 codepoint U+212B ANGSTROM SIGN
    0x02, 0x00,              # 0x0F u16 utf8_len = 2
    0xC3, 0x85,              # 0x11 "\u00c5" LATIN CAPITAL LETTER A WITH RING ABOVE
])                           # 0x13 end
GOLDEN_ENTRIES = ((0x00A0, " "), (0x212B, "\u00c5"))


def test_golden_bytes():
    assert encode_table(GOLDEN_ENTRIES) == GOLDEN
    assert decode_table(GOLDEN, 0) == (GOLDEN_ENTRIES, 0x13)
    nfkc = dict(table("NFKC"))
    assert all(nfkc[cp] == rep for cp, rep in GOLDEN_ENTRIES)  # real NFKC entries


def test_empty_table():
    assert encode_table(()) == b"\0\0\0\0"
    assert decode_table(b"\0\0\0\0") == ((), 4)


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD"])
def test_round_trip(form):
    entries = table(form)
    blob = encode_table(entries)
    assert decode_table(blob, 0) == (entries, len(blob))
    # at an offset, with trailing data, from other buffer types
    framed = b"xyz" + blob + b"tail"
    assert decode_table(framed, 3) == (entries, 3 + len(blob))
    assert decode_table(bytearray(framed), 3) == (entries, 3 + len(blob))
    assert decode_table(memoryview(framed), 3) == (entries, 3 + len(blob))


def test_round_trip_edge_values():
    entries = ((0, "\x00"), (0x41, ""), (0xD7FF, "\U0010FFFF" * 3), (0xE000, "x" * 0xFFFF), (0x10FFFF, "\u00e9"))
    blob = encode_table(entries)
    assert decode_table(blob) == (entries, len(blob))


def entry(cp: int, rep: bytes) -> bytes:
    return struct.pack("<IH", cp, len(rep)) + rep


def count(n: int) -> bytes:
    return struct.pack("<I", n)


FORMAT_CASES = [
    # id, buffer, offset of error, message
    ("count-truncated", b"\x01\x00", 0, "truncated NormTable: need 4 bytes for the entry count, 2 left"),
    ("count-past-end", count(2) + entry(0x41, b"a"), 0,
     "truncated NormTable: 2 entries need at least 12 bytes, 7 left"),
    ("entry-header-truncated", count(2) + entry(0x41, b"abc") + b"\x42\x00\x00", 0x0D,
     "truncated NormTable entry 1: need 6 bytes, 3 left"),
    ("replacement-truncated", count(1) + struct.pack("<IH", 0x41, 5) + b"ab", 0x0A,
     "truncated NormTable entry 0 (U+0041): replacement of 5 bytes, 2 left"),
    ("unsorted", count(2) + entry(0x42, b"b") + entry(0x41, b"a"), 0x0B,
     "entry 1: code points not strictly increasing (U+0041 after U+0042)"),
    ("duplicate", count(2) + entry(0x41, b"a") + entry(0x41, b"b"), 0x0B,
     "entry 1: duplicate code point U+0041"),
    ("above-max", count(1) + entry(0x110000, b"a"), 0x04, "entry 0: code point 0x110000 is above U+10FFFF"),
    ("surrogate", count(1) + entry(0xD800, b"a"), 0x04, "entry 0: code point U+D800 is a surrogate"),
    ("surrogate-high", count(1) + entry(0xDFFF, b"a"), 0x04, "entry 0: code point U+DFFF is a surrogate"),
    ("bad-utf8", count(1) + entry(0x41, b"ok\xff"), 0x0C,
     "entry 0: replacement for U+0041 is not valid UTF-8 (invalid start byte at byte 2)"),
    ("utf8-encoded-surrogate", count(1) + entry(0x41, b"\xed\xa0\x80"), 0x0A,
     "entry 0: replacement for U+0041 is not valid UTF-8 (invalid continuation byte at byte 0)"),
    ("utf8-cut-short", count(1) + entry(0x41, b"\xc3"), 0x0A,
     "entry 0: replacement for U+0041 is not valid UTF-8 (unexpected end of data at byte 0)"),
]


@pytest.mark.parametrize("buf,offset,message", [c[1:] for c in FORMAT_CASES], ids=[c[0] for c in FORMAT_CASES])
def test_decode_format_errors(buf, offset, message):
    with pytest.raises(FormatError) as ei:
        decode_table(buf, 0)
    err = ei.value
    assert err.message == message
    assert err.section == "NormTable"
    assert err.offset == offset
    assert str(err) == f"section NormTable at 0x{offset:08x}: {message}"
    # the same error, shifted, when the table sits inside a larger buffer
    with pytest.raises(FormatError) as ei2:
        decode_table(b"\xee" * 5 + buf, 5)
    assert ei2.value.message == message and ei2.value.offset == offset + 5


def test_decode_offset_past_end():
    with pytest.raises(FormatError, match="need 4 bytes for the entry count, 0 left"):
        decode_table(GOLDEN, len(GOLDEN))


@pytest.mark.parametrize("entries,message", [
    (((0x42, "b"), (0x41, "a")), "strictly increasing: U\\+0041 after U\\+0042"),
    (((0x41, "b"), (0x41, "a")), "strictly increasing: U\\+0041 after U\\+0041"),
    (((0x110000, "a"),), "0x110000 is not a Unicode scalar value"),
    (((0xD800, "a"),), "0xD800 is not a Unicode scalar value"),
    (((0x41, "a" * 0x10000),), "replacement for U\\+0041 is 65536 bytes"),
])
def test_encode_rejects(entries, message):
    with pytest.raises(ValueError, match=message):
        encode_table(entries)


# ------------------------------------------------------------------------------------------------
# Cache

def test_cache_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("MTOK_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert T.cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("MTOK_CACHE_DIR")
    assert T.cache_dir() == tmp_path / "xdg" / "mtok-export"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert T.cache_dir() == tmp_path / "home" / ".cache" / "mtok-export"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert T.cache_dir() == tmp_path / "home" / ".cache" / "mtok-export"
    name = cache_path("NFD").name
    assert "NFD" in name and "9.0.0" in name and f"v{T.CACHE_FORMAT_VERSION}" in name


@pytest.mark.runtime
@pytest.mark.parametrize("form", T.FORMS)  # NFD-Mn has empty replacements: its cache once never loaded
def test_cold_build_writes_cache_then_warm_load(fresh_cache, monkeypatch, form):
    calls = []
    cold = table(form, progress=lambda d, t: calls.append(d))
    assert calls and calls[-1] == 0x110000
    path = cache_path(form)
    assert path.parent == fresh_cache and path.is_file()
    assert [p.name for p in fresh_cache.iterdir()] == [path.name]  # no temp files left behind
    assert cold == build_table(form)
    assert table(form) is cold  # in-memory hit

    clear_memory_cache()

    def no_build(*a, **k):
        raise AssertionError("warm load must not rebuild")

    monkeypatch.setattr(T, "build_table", no_build)
    calls.clear()
    warm = table(form, progress=lambda d, t: calls.append(d))
    assert warm == cold and calls == []


def corrupt_truncate(b: bytes) -> bytes:
    return b[: len(b) // 2]


def corrupt_flip_pool(b: bytes) -> bytes:
    return b[:-3] + bytes([b[-3] ^ 0x01]) + b[-2:]


def corrupt_flip_codepoint(b: bytes) -> bytes:
    i = T._CACHE_HEADER.size + 12  # inside the code point array
    return b[:i] + bytes([b[i] ^ 0x10]) + b[i + 1:]


def corrupt_magic(b: bytes) -> bytes:
    return b"XXXXXXXX" + b[8:]


def corrupt_version(b: bytes) -> bytes:
    return b[:8] + struct.pack("<I", 999) + b[12:]


def corrupt_count(b: bytes) -> bytes:
    (n,) = struct.unpack_from("<I", b, 12)
    return b[:12] + struct.pack("<I", n + 1) + b[16:]


def corrupt_extra(b: bytes) -> bytes:
    return b + b"\0"


@pytest.mark.runtime
@pytest.mark.parametrize("corrupt", [
    corrupt_truncate, corrupt_flip_pool, corrupt_flip_codepoint, corrupt_magic, corrupt_version,
    corrupt_count, corrupt_extra, lambda b: b"", lambda b: b"garbage" * 100,
], ids=["truncated", "flip-pool", "flip-codepoint", "magic", "version", "count", "extra-byte", "empty", "garbage"])
def test_corrupt_cache_is_rebuilt(fresh_cache, corrupt):
    good = table("NFC")
    path = cache_path("NFC")
    original = path.read_bytes()
    path.write_bytes(corrupt(original))
    clear_memory_cache()
    calls = []
    rebuilt = table("NFC", progress=lambda d, t: calls.append(d))
    assert calls, "a corrupt cache file must not be trusted"
    assert rebuilt == good
    assert path.read_bytes() == original  # and it is rewritten


@pytest.mark.runtime
def test_cache_for_other_form_is_rejected(fresh_cache):
    table("NFC")
    nfc_file = cache_path("NFC").read_bytes()
    cache_path("NFKC").write_bytes(nfc_file)  # right format, wrong key
    clear_memory_cache()
    assert table("NFKC") == build_table("NFKC")


@pytest.mark.runtime
def test_unwritable_cache_dir_still_works(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    monkeypatch.setenv("MTOK_CACHE_DIR", str(blocker / "cache"))  # mkdir fails, even as root
    clear_memory_cache()
    try:
        assert table("NFC") == build_table("NFC")
    finally:
        clear_memory_cache()
    assert blocker.read_text() == "x"


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a non-root POSIX user")
def test_read_only_cache_dir_still_works(tmp_path, monkeypatch):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    monkeypatch.setenv("MTOK_CACHE_DIR", str(d))
    clear_memory_cache()
    try:
        assert table("NFC") == build_table("NFC")
        assert list(d.iterdir()) == []
    finally:
        d.chmod(0o700)
        clear_memory_cache()


# ------------------------------------------------------------------------------------------------
# SentencePiece precompiled_charsmap

def _t5_blob() -> bytes:
    path = TOKENIZERS / "t5-small" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path.resolve()}")
    normalizer = json.loads(path.read_text(encoding="utf-8"))["normalizer"]
    assert normalizer["type"] == "Precompiled"
    return base64.b64decode(normalizer["precompiled_charsmap"])


def _model_blob(rel: str) -> bytes:
    path = TOKENIZERS / rel
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path.resolve()}")
    pb = pytest.importorskip("sentencepiece.sentencepiece_model_pb2")
    m = pb.ModelProto()
    m.ParseFromString(path.read_bytes())
    return m.normalizer_spec.precompiled_charsmap


@pytest.mark.runtime
@pytest.mark.parametrize("source", ["t5-small/tokenizer.json", "sp-test-models/test_model.model"])
def test_charsmap_table_matches_hf_precompiled_every_code_point(source):
    normalizers = pytest.importorskip("tokenizers.normalizers")
    blob = _t5_blob() if source.endswith(".json") else _model_blob(source)
    entries = charsmap_table(blob)
    mapping = dict(entries)
    cps = [cp for cp, _ in entries]
    assert cps == sorted(set(cps)) and all(rep != chr(cp) for cp, rep in entries)
    hf = normalizers.Precompiled(blob).normalize_str
    bad = [cp for cp in ALL_CPS if mapping.get(cp, chr(cp)) != hf(chr(cp))]
    assert bad == [], f"{len(bad)} code points differ from HF Precompiled, first: {[hex(c) for c in bad[:10]]}"
    assert len(entries) > 4000


@pytest.mark.runtime
def test_charsmap_rules_t5():
    blob = _t5_blob()
    rules = charsmap_rules(blob)
    single = {ord(k): v for k, v in rules.items() if len(k) == 1 and v != k}
    assert single == dict(charsmap_table(blob))
    multi = {k: v for k, v in rules.items() if len(k) > 1}
    assert len(multi) > 0
    assert rules["\uff21"] == "A"             # FULLWIDTH LATIN CAPITAL LETTER A
    assert rules["<\u0338"] == "\u226e"        # composition NOT LESS-THAN: a 2-code-point key
    assert rules["\u3000"] == " "


@pytest.mark.runtime
def test_charsmap_rules_match_sentencepiece():
    spm = pytest.importorskip("sentencepiece")
    path = TOKENIZERS / "t5-small" / "spiece.model"
    blob = _model_blob("t5-small/spiece.model")
    rules = charsmap_rules(blob)
    norm = spm.SentencePieceNormalizer(model_file=str(path), add_dummy_prefix=False,
                                       remove_extra_whitespaces=False, escape_whitespaces=False).normalize
    # whitespace-only keys are subject to SentencePiece's whitespace handling, not just the charsmap
    bad = [k for k, v in rules.items() if k.strip() == k and norm(k) != v]
    assert bad == []


@pytest.mark.parametrize("blob,message", [
    (b"\x04\x00", "truncated: need 4 bytes for the trie size, 2 present"),
    (struct.pack("<I", 6) + b"\0" * 8, "trie size 6 is not a multiple of 4"),
    (struct.pack("<I", 16) + b"\0" * 8, "trie size 16 does not fit in a 12-byte blob"),
    (struct.pack("<I", 0), "trie size 0 does not fit in a 4-byte blob"),
])
def test_charsmap_format_errors(blob, message):
    for fn in (charsmap_table, charsmap_rules):
        with pytest.raises(FormatError) as ei:
            fn(blob)
        assert ei.value.message == message and ei.value.section == "precompiled_charsmap"


def test_charsmap_tiny_hand_built_trie():
    # A darts-clone trie holding one key "a" -> pool offset 0:
    #   unit 0 (root): offset 1                        -> children at base 1
    #   unit 1^0x61 = 0x60: label 0x61, has_leaf, offset 0x60^0x70=0x10 -> leaf at unit 0x70
    #   unit 0x70: leaf, value 0
    units = [0] * 0x80
    units[0] = 1 << 10
    units[0x60] = (0x10 << 10) | (1 << 8) | 0x61
    units[0x70] = (1 << 31) | 0
    trie = struct.pack(f"<{len(units)}I", *units)
    blob = struct.pack("<I", len(trie)) + trie + "b\u00e9\0".encode()
    assert charsmap_rules(blob) == {"a": "b\u00e9"}
    assert charsmap_table(blob) == ((0x61, "b\u00e9"),)
