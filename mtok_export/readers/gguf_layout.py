"""Bounds of a GGUF container's header, key/value and tensor-info sections, checked before the
`gguf` package reads them.

`gguf.GGUFReader` reads every field eagerly and trusts every count: a string array whose element
type is changed to ARRAY, or an array length of 2**63, makes it allocate without bound (a segfault,
SystemError or MemoryError; 24 GB unbounded).  Here each count and string length is checked against
the bytes left before it is followed, unknown value types are refused, and arrays nest at most
`MAX_NESTING` deep, so the work is linear in the file's size and the first bad field is named by
its byte offset.  Only the section headers are touched (the file is memory-mapped): a model's
tensor data is never read.

Layout (GGUF v2/v3, little- or big-endian as the version field tells): magic `GGUF`, uint32
version, uint64 tensor count, uint64 key/value count; each key/value: string key, uint32 type,
value; a string is a uint64 length and its bytes; an array is a uint32 element type, a uint64
count and the elements; each tensor info: string name, uint32 dimension count, uint64 per
dimension, uint32 type, uint64 offset."""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

from ..errors import InputError

# value type -> size in bytes of a fixed-size value; STRING (8) and ARRAY (9) are variable
_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9
MAX_NESTING = 4  # arrays of arrays: legal, never used by a tokenizer key; deeper is refused
MAX_DIMS = 4  # GGML_MAX_DIMS
_MIN_SIZE = {**_FIXED, _STRING: 8, _ARRAY: 12}  # the fewest bytes one element of a type can take


class _Bad(Exception):
    def __init__(self, offset: int, message: str):
        self.offset, self.message = offset, message


def check_layout(path: Path) -> None:
    """Raise `InputError` (exit 2) naming the byte offset of the first count, length or type that
    cannot hold in `path`; return when the sections are well-formed."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            if size == 0:
                raise InputError(f"{path}: not a readable GGUF file (it is empty)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                _Walker(data, size).walk()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    except _Bad as e:
        raise InputError(f"{path}: not a readable GGUF file: at byte {e.offset}: {e.message}") from None


class _Walker:
    def __init__(self, data, size: int):
        self.data, self.size, self.pos = data, size, 0
        self.end = "<"

    def walk(self) -> None:
        if self.data[:4] != b"GGUF":
            raise _Bad(0, f"magic is {bytes(self.data[:4])!r}, not b'GGUF'")
        self.pos = 4
        version = self._uint(4, "version")
        swapped = struct.unpack(">I", self.data[4:8])[0]
        if version not in (2, 3) and swapped in (2, 3):  # written big-endian
            self.end, version = ">", swapped
        if version not in (2, 3):
            raise _Bad(4, f"version {version} is not supported (2 or 3)")
        tensors = self._count(8, "tensor count", 24)
        kvs = self._count(8, "key/value count", 8 + 4 + 1)  # an empty key, a type, a one-byte value
        for _ in range(kvs):
            key_at = self.pos
            self._string("key")
            kind_at = self.pos
            self._value(self._uint(4, "value type"), kind_at, 0, key_at)
        for _ in range(tensors):
            self._string("tensor name")
            at = self.pos
            dims = self._uint(4, "dimension count")
            if dims > MAX_DIMS:
                raise _Bad(at, f"tensor with {dims} dimensions (at most {MAX_DIMS})")
            self._skip(8 * dims + 4 + 8, "tensor info")

    def _value(self, kind: int, at: int, depth: int, key_at: int) -> None:
        if kind in _FIXED:
            self._skip(_FIXED[kind], "value")
        elif kind == _STRING:
            self._string("string value")
        elif kind == _ARRAY:
            if depth >= MAX_NESTING:
                raise _Bad(at, f"arrays nested more than {MAX_NESTING} deep")
            elem_at = self.pos
            elem = self._uint(4, "array element type")
            if elem not in _MIN_SIZE:
                raise _Bad(elem_at, f"unknown array element type {elem}")
            count = self._count(8, "array length", _MIN_SIZE[elem])
            if elem in _FIXED:
                self._skip(count * _FIXED[elem], "array elements")
            else:
                for _ in range(count):
                    self._value(elem, elem_at, depth + 1, key_at)
        else:
            raise _Bad(at, f"unknown value type {kind}")

    def _uint(self, width: int, what: str) -> int:
        at = self.pos
        self._skip(width, what)
        return struct.unpack_from(f"{self.end}{'I' if width == 4 else 'Q'}", self.data, at)[0]

    def _count(self, width: int, what: str, each: int) -> int:
        """A count of items of at least `each` bytes, bounded by the bytes left after it."""
        at = self.pos
        n = self._uint(width, what)
        left = self.size - self.pos
        if n * each > left:
            raise _Bad(at, f"{what} {n} cannot fit in the {left} bytes left")
        return n

    def _string(self, what: str) -> None:
        at = self.pos
        n = self._uint(8, f"{what} length")
        if n > self.size - self.pos:
            raise _Bad(at, f"{what} length {n} runs past the end of the file ({self.size - self.pos} bytes left)")
        self.pos += n

    def _skip(self, n: int, what: str) -> None:
        if n > self.size - self.pos:
            raise _Bad(self.pos, f"{what} runs past the end of the file ({self.size - self.pos} bytes left, "
                                 f"{n} needed)")
        self.pos += n
