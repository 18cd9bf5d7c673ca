"""A GGUF's key/value fields read straight from the bytes, for the common case: what `gguf.GGUFReader`
gives (`fields[key].contents()`), without its cost.

`GGUFReader` builds a numpy view per part of every field: a 262,144-token vocabulary is three
arrays of 262,144 elements, 2 million views, a minute of a default export's reading (Gemma-4's
GGUF: 60 s of a 116 s export).  Here each array is one `struct` unpack and each string one slice.

Only the layout the package reads the same way is taken here: little-endian, version 2 or 3, no
tensors, no `general.alignment`, no array of arrays, every key UTF-8 and none twice.  Anything else
(a model file with tensors, a big-endian file, a malformed one) returns None and the caller uses
`GGUFReader`, so its behaviour and its errors stay the package's.  Call it after
`gguf_layout.check_layout`: every count and length here is trusted to fit in the file."""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

# value type -> struct code of a fixed-size value (7: BOOL, one byte, any non-zero byte true)
_CODE = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "B", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY, _BOOL = 8, 9, 7


class Field:
    """One key's value, as `gguf.ReaderField.contents()` returns it: a str (decoded strictly as
    UTF-8 when asked, so a bad string raises the same `UnicodeDecodeError` there), a Python number
    or bool, or a list of those."""

    __slots__ = ("_value", "_strings")

    def __init__(self, value, strings: bool):
        self._value, self._strings = value, strings

    def contents(self):
        if not self._strings:
            return self._value
        if isinstance(self._value, list):
            return [str(b, encoding="utf-8") for b in self._value]
        return str(self._value, encoding="utf-8")


class _NotHere(Exception):
    """A layout left to `GGUFReader`."""


def read_fields(path: Path) -> dict[str, Field] | None:
    """{key: Field} of `path`, or None when its layout is one left to `GGUFReader` (module docstring)."""
    with open(path, "rb") as f:
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            try:
                return _fields(memoryview(data))
            except (_NotHere, UnicodeDecodeError, struct.error, IndexError, ValueError):
                return None


def _fields(data: memoryview) -> dict[str, Field]:
    try:
        if bytes(data[:4]) != b"GGUF":
            raise _NotHere
        version, tensors, count = struct.unpack_from("<IQQ", data, 4)
        if version not in (2, 3) or tensors:
            raise _NotHere
        pos = 24
        out: dict[str, Field] = {}
        for _ in range(count):
            n = struct.unpack_from("<Q", data, pos)[0]
            key = str(data[pos + 8:pos + 8 + n], encoding="utf-8")
            pos += 8 + n
            if key in out or key == "general.alignment":
                raise _NotHere
            kind = struct.unpack_from("<I", data, pos)[0]
            pos += 4
            value, strings, pos = _value(data, kind, pos)
            out[key] = Field(value, strings)
        return out
    finally:
        data.release()


def _value(data: memoryview, kind: int, pos: int):
    """(value, holds strings, position after it)."""
    if kind == _STRING:
        n = struct.unpack_from("<Q", data, pos)[0]
        return bytes(data[pos + 8:pos + 8 + n]), True, pos + 8 + n
    code = _CODE.get(kind)
    if code is not None:
        size = struct.calcsize(code)
        v = struct.unpack_from("<" + code, data, pos)[0]
        return (v != 0 if kind == _BOOL else v), False, pos + size
    if kind != _ARRAY:
        raise _NotHere
    elem, n = struct.unpack_from("<IQ", data, pos)
    pos += 12
    if elem == _STRING:
        out = []
        for _ in range(n):
            k = struct.unpack_from("<Q", data, pos)[0]
            out.append(bytes(data[pos + 8:pos + 8 + k]))
            pos += 8 + k
        return out, True, pos
    code = _CODE.get(elem)
    if code is None:  # an array of arrays, or an unknown type
        raise _NotHere
    size = struct.calcsize(code)
    values = list(struct.unpack_from(f"<{n}{code}", data, pos))
    if elem == _BOOL:
        values = [v != 0 for v in values]
    return values, False, pos + n * size
