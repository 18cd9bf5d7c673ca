"""Little-endian readers and writers with mirrored methods (spec 2.1).  Every read is
bounds-checked and fails with a `FormatError` naming the section and byte offset, never with an
exception from `struct`."""

from __future__ import annotations

import struct

from ..errors import FormatError
from .constants import MAX_U16, MAX_U32

# The format's fixed-size fields; every module packing or unpacking them uses these.
U16 = struct.Struct("<H")
U32 = struct.Struct("<I")
F64 = struct.Struct("<d")


class Reader:
    def __init__(self, buf: bytes, pos: int = 0, path: str | None = None):
        self.buf, self.pos, self.path = buf, pos, path
        self.section = None
        self.strict = True  # False: recoverable problems go to warn() instead of failing
        self.lazy = False  # True: the vocab and merges come back as views (mtok/views.py)
        self.warn = lambda msg: None

    def fail(self, msg: str, offset: int | None = None):
        raise FormatError(msg, offset=self.pos if offset is None else offset,
                          section=self.section, path=self.path)

    def need(self, n: int, what: str) -> int:
        pos = self.pos
        if pos + n > len(self.buf):
            self.fail(f"truncated: {what} needs {n} byte(s), {len(self.buf) - pos} left")
        self.pos = pos + n
        return pos

    @property
    def remaining(self) -> int:
        return len(self.buf) - self.pos

    def u8(self, what="u8") -> int:
        return self.buf[self.need(1, what)]

    def bool(self, what="bool") -> bool:
        v = self.u8(what)
        if v > 1:
            self.fail(f"{what}: boolean byte must be 0 or 1, got {v}", self.pos - 1)
        return v == 1

    def u16(self, what="u16") -> int:
        return U16.unpack_from(self.buf, self.need(2, what))[0]

    def u32(self, what="u32") -> int:
        return U32.unpack_from(self.buf, self.need(4, what))[0]

    def f64(self, what="f64") -> float:
        return F64.unpack_from(self.buf, self.need(8, what))[0]

    def _text(self, n: int, what: str) -> str:
        start = self.need(n, what)
        try:
            return self.buf[start:start + n].decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"{what}: invalid UTF-8 ({e.reason})", start + e.start)

    def str(self, what="string") -> str:
        return self._text(self.u16(f"{what} length"), what)

    def lstr(self, what="string") -> str:
        return self._text(self.u32(f"{what} length"), what)


class Writer:
    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def raw(self, b: bytes):
        self.parts.append(b)
        self.size += len(b)

    def u8(self, v: int):
        self.raw(bytes((v,)))

    def bool(self, v: bool):
        self.raw(b"\x01" if v else b"\x00")

    def u16(self, v: int):
        self.raw(U16.pack(v))

    def u32(self, v: int):
        self.raw(U32.pack(v))

    def f64(self, v: float):
        self.raw(F64.pack(v))

    def str(self, s: str, what="string"):
        b = s.encode("utf-8")
        if len(b) > MAX_U16:
            raise ValueError(f"{what} is {len(b)} bytes; the format's u16 length allows {MAX_U16}")
        self.raw(U16.pack(len(b)) + b)

    def lstr(self, s: str, what="string"):
        b = s.encode("utf-8")
        if len(b) > MAX_U32:
            raise ValueError(f"{what} is {len(b)} bytes; more than a u32 length allows")
        self.raw(U32.pack(len(b)) + b)

    def getvalue(self) -> bytes:
        return b"".join(self.parts)
