"""GGUF containers whose counts, lengths or types cannot hold (issue 25): exit 2 naming the byte
offset, checked by `readers/gguf_layout.py` before `gguf.GGUFReader` (which trusts every count:
a string array's element type changed to ARRAY grew without bound, an array length of 2**63 was a
MemoryError traceback).

The files are built here byte by byte (independently of gguf-py's writer and of the checker), so
each bad field's offset is known; the real llama.cpp vocabularies must all pass."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.support.limits import export_cli, limited
from mtok_export.errors import InputError
from mtok_export.readers.gguf import read_gguf
from mtok_export.readers.gguf_layout import check_layout

GGUF = Path(__file__).resolve().parents[3] / "shared/corpus/gguf"
STRING, ARRAY, UINT32 = 8, 9, 4


def s(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def kv_string(key: str, value: str) -> bytes:
    return s(key) + struct.pack("<I", STRING) + s(value)


def kv_strings(key: str, values) -> bytes:
    return s(key) + struct.pack("<IIQ", ARRAY, STRING, len(values)) + b"".join(s(v) for v in values)


def kv_uint32s(key: str, values) -> bytes:
    return s(key) + struct.pack("<IIQ", ARRAY, UINT32, len(values)) + struct.pack(f"<{len(values)}I", *values)


def container(kvs: list[bytes], tensors: int = 0, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", version, tensors, len(kvs)) + b"".join(kvs)


TOKENS = ["a", "b", "ab"]
KVS = [kv_string("tokenizer.ggml.model", "gpt2"), kv_string("tokenizer.ggml.pre", "gpt-2"),
       kv_strings("tokenizer.ggml.tokens", TOKENS), kv_uint32s("tokenizer.ggml.token_type", [1, 1, 1]),
       kv_strings("tokenizer.ggml.merges", ["a b"])]
GOOD = container(KVS)
TOKENS_AT = 24 + len(KVS[0]) + len(KVS[1])  # the tokens key/value
TOKENS_ELEM_AT = TOKENS_AT + 8 + len("tokenizer.ggml.tokens") + 4  # its array element type
TOKENS_COUNT_AT = TOKENS_ELEM_AT + 4


def patched(data: bytes, at: int, fmt: str, value) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def refused(tmp_path: Path, data: bytes, offset: int, *words: str) -> str:
    f = tmp_path / "t.gguf"
    f.write_bytes(data)
    with pytest.raises(InputError) as info:
        read_gguf(f)
    msg = str(info.value)
    assert msg.startswith(f"{f}: not a readable GGUF file: at byte {offset}: "), msg
    for w in words:
        assert w in msg, msg
    return msg


def test_the_handmade_container_reads(tmp_path):
    f = tmp_path / "t.gguf"
    f.write_bytes(GOOD)
    tok = read_gguf(f)
    assert tok.model.vocab == {"a": 0, "b": 1, "ab": 2} and tok.model.merges == (("a", "b"),)


@pytest.mark.skipif(not GGUF.is_dir(), reason="shared corpus not present")
@pytest.mark.parametrize("name", sorted(p.name for p in GGUF.glob("*.gguf")) if GGUF.is_dir() else [])
def test_every_llama_cpp_vocabulary_passes(name):
    check_layout(GGUF / name)


def test_string_array_as_array_of_arrays(tmp_path):
    # the 8 -> 9 element type: each token's length is read as an element type and count
    data = patched(GOOD, TOKENS_ELEM_AT, "<I", ARRAY)
    # first element: type = low half of len("a") = 1 (INT8), count = the next 8 bytes ("a" + "b"'s length)
    count = struct.unpack_from("<Q", data, TOKENS_COUNT_AT + 8 + 4)[0]
    refused(tmp_path, data, TOKENS_COUNT_AT + 8 + 4, f"array length {count} cannot fit")


def test_array_length_2_63(tmp_path):
    refused(tmp_path, patched(GOOD, TOKENS_COUNT_AT, "<Q", 2**63), TOKENS_COUNT_AT,
            f"array length {2**63} cannot fit in the")


def test_array_of_unknown_element_type(tmp_path):
    refused(tmp_path, patched(GOOD, TOKENS_ELEM_AT, "<I", 13), TOKENS_ELEM_AT, "unknown array element type 13")


def test_unknown_value_type(tmp_path):
    refused(tmp_path, patched(GOOD, TOKENS_ELEM_AT - 4, "<I", 99), TOKENS_ELEM_AT - 4, "unknown value type 99")


def test_string_length_past_the_end(tmp_path):
    at = TOKENS_COUNT_AT + 8  # the first token's length
    refused(tmp_path, patched(GOOD, at, "<Q", 2**40), at, f"string value length {2**40} runs past the end")


def test_key_length_past_the_end(tmp_path):
    refused(tmp_path, patched(GOOD, 24, "<Q", 2**64 - 1), 24, "key length")


@pytest.mark.parametrize("at,what", [(8, "tensor count"), (16, "key/value count")])
def test_section_counts_bounded_by_the_file(tmp_path, at, what):
    refused(tmp_path, patched(GOOD, at, "<Q", 2**62), at, f"{what} {2**62} cannot fit")


def test_arrays_nested_too_deep(tmp_path):
    nested = struct.pack("<I", ARRAY) + struct.pack("<Q", 1)
    value = struct.pack("<I", ARRAY) + nested * 5 + struct.pack("<IQ", UINT32, 0)
    data = container([s("x") + value])
    refused(tmp_path, data, 24 + 9 + 4 + 3 * 12, "arrays nested more than 4 deep")  # the 5th array's type


def test_version_and_magic(tmp_path):
    refused(tmp_path, patched(GOOD, 4, "<I", 7), 4, "version 7 is not supported")
    refused(tmp_path, b"GGUX" + GOOD[4:], 0, "magic")


def test_big_endian_container_is_walked_as_such(tmp_path):
    be = (b"GGUF" + struct.pack(">IQQ", 3, 0, 1) + struct.pack(">Q", 1) + b"k" + struct.pack(">IIQ", ARRAY, UINT32, 2)
          + struct.pack(">II", 7, 8))
    f = tmp_path / "be.gguf"
    f.write_bytes(be)
    check_layout(f)
    f.write_bytes(be[:-1])
    with pytest.raises(InputError, match="at byte 41: array length 2 cannot fit in the 7 bytes left"):
        check_layout(f)


@pytest.mark.runtime
def test_every_truncation_is_a_clean_error(tmp_path):
    f = tmp_path / "t.gguf"
    for n in range(len(GOOD)):
        f.write_bytes(GOOD[:n])
        with pytest.raises(InputError, match="not a readable GGUF file"):
            check_layout(f)


@pytest.mark.runtime
@pytest.mark.parametrize("case", ["array-of-arrays", "length-2**63"])
def test_cli_exit_2_under_a_memory_limit(tmp_path, case):
    # formerly: unbounded growth (segfault, or `internal error: SystemError` under a 4 GB limit)
    # and a MemoryError traceback
    data = (patched(GOOD, TOKENS_ELEM_AT, "<I", ARRAY) if case == "array-of-arrays"
            else patched(GOOD, TOKENS_COUNT_AT, "<Q", 2**63))
    f = tmp_path / "t.gguf"
    f.write_bytes(data)
    run = limited(export_cli("--path", str(f), "--no-verify", "-o", str(tmp_path / "out")))
    assert run.code == 2, run.err
    assert run.err.startswith(f"error: {f}: not a readable GGUF file: at byte "), run.err
    assert "Traceback" not in run.err
    assert run.seconds < 30 and run.peak_mib < 300, (run.seconds, run.peak_mib)
    assert not (tmp_path / "out").exists()
