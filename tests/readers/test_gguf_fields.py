"""`readers/gguf_fields.py` against the `gguf` package's own reader (`GGUFReader.fields[k].contents()`),
the reference it replaces for speed: the same keys in the same order, the same values of the same
Python types, on every llama.cpp vocabulary of the shared corpus and on handmade containers with
each value type; the layouts it leaves to the package (tensors, big-endian, arrays of arrays,
duplicate keys, general.alignment) return None; a string that is not UTF-8 raises where the
package's does.  Mutants of the fast reader (a bool read as its byte, a signed type read unsigned,
float32 read as float64) are caught by the same comparison."""

from __future__ import annotations

import struct
from pathlib import Path

import gguf
import pytest

from mtok_export.readers import gguf_fields
from mtok_export.readers.gguf_fields import read_fields
from tests.readers.test_gguf_layout import ARRAY, GOOD, STRING, container, kv_string, kv_strings, kv_uint32s, s

GGUF = Path(__file__).resolve().parents[3] / "shared/corpus/gguf"

# value type -> (struct code, values) for one scalar key and one array key of each fixed-size type
TYPED = {0: ("B", [0, 255]), 1: ("b", [-128, 127]), 2: ("H", [0, 65535]), 3: ("h", [-32768, 5]),
         4: ("I", [0, 2**32 - 1]), 5: ("i", [-(2**31), 7]), 6: ("f", [0.1, -2.5]), 7: ("B", [0, 2]),
         10: ("Q", [0, 2**64 - 1]), 11: ("q", [-(2**63), 9]), 12: ("d", [0.1, 1e300])}


def every_type() -> bytes:
    kvs = []
    for kind, (code, values) in TYPED.items():
        kvs.append(s(f"scalar.{kind}") + struct.pack(f"<I{code}", kind, values[-1]))
        kvs.append(s(f"array.{kind}") + struct.pack(f"<IIQ{len(values)}{code}", ARRAY, kind, len(values), *values))
    kvs += [kv_string("text", "héllo ▁"), kv_strings("texts", ["", "a", "ü"]), kv_strings("none", []),
            s("empty.numbers") + struct.pack("<IIQ", ARRAY, 4, 0)]
    return container(kvs)


def same_as_gguf(path: Path) -> None:
    fast, ref = read_fields(path), gguf.GGUFReader(str(path), "r").fields
    assert fast is not None
    keys = [k for k in ref if not k.startswith("GGUF.")]  # the package's own header pseudo-fields
    assert list(fast) == keys
    for k in keys:
        a, b = fast[k].contents(), ref[k].contents()
        assert a == b and type(a) is type(b), k
        if isinstance(a, list):
            assert [type(x) for x in a] == [type(x) for x in b], k


def test_every_value_type_as_the_package_reads_it(tmp_path):
    f = tmp_path / "t.gguf"
    f.write_bytes(every_type())
    same_as_gguf(f)
    assert read_fields(f)["scalar.7"].contents() is True  # a bool byte of 2 is true, as numpy's bool_ view


def test_the_handmade_tokenizer_container(tmp_path):
    f = tmp_path / "t.gguf"
    f.write_bytes(GOOD)
    same_as_gguf(f)


@pytest.mark.skipif(not GGUF.is_dir(), reason="shared corpus not present")
@pytest.mark.parametrize("name", sorted(p.name for p in GGUF.glob("*.gguf")) if GGUF.is_dir() else [])
def test_every_llama_cpp_vocabulary(name):
    same_as_gguf(GGUF / name)


@pytest.mark.parametrize("case", ["tensors", "big-endian", "nested", "duplicate", "alignment", "bad key"])
def test_layouts_left_to_the_package(tmp_path, case):
    kvs = [kv_string("a", "x")]
    data = {"tensors": container(kvs, tensors=1),
            "big-endian": b"GGUF" + struct.pack(">IQQ", 3, 0, 1) + kvs[0],
            "nested": container([s("n") + struct.pack("<IIQ", ARRAY, ARRAY, 1) + struct.pack("<IQ", 4, 1)
                                 + struct.pack("<I", 5)]),
            "duplicate": container(kvs + kvs),
            "alignment": container([s("general.alignment") + struct.pack("<II", 4, 32)]),
            "bad key": container([s(b"\xff") + struct.pack("<I", STRING) + s("x")])}[case]
    f = tmp_path / "t.gguf"
    f.write_bytes(data)
    assert read_fields(f) is None


def test_a_string_not_utf8_raises_where_the_package_does(tmp_path):
    f = tmp_path / "t.gguf"
    f.write_bytes(container([s("t") + struct.pack("<I", STRING) + s(b"\xff\xfe")]))
    with pytest.raises(UnicodeDecodeError):
        gguf.GGUFReader(str(f), "r").fields["t"].contents()
    with pytest.raises(UnicodeDecodeError):
        read_fields(f)["t"].contents()


@pytest.mark.parametrize("mutant", [
    {7: "B"},  # a bool returned as its byte (the bool mapping skipped: the code table alone)
    {1: "B"},  # INT8 read unsigned
    {6: "d"},  # FLOAT32 read as FLOAT64
])
def test_mutants_are_caught(tmp_path, monkeypatch, mutant):
    f = tmp_path / "t.gguf"
    f.write_bytes(every_type())
    monkeypatch.setattr(gguf_fields, "_CODE", {**gguf_fields._CODE, **mutant})
    if 7 in mutant:
        monkeypatch.setattr(gguf_fields, "_BOOL", -1)
    with pytest.raises((AssertionError, struct.error)):
        same_as_gguf(f)
