"""The `.mtok` NormTable (spec 2.3.1), the code-point table of the code-6 and code-7 normalizers:
`u32 count`, then count x `{u32 code point, u16 UTF-8 length, UTF-8 bytes}`, code points strictly
increasing.  `unicode/tables.py` builds the tables; this module is their only codec."""

from __future__ import annotations

import struct
from collections.abc import Iterable

from ..errors import FormatError
from ..unicode.tables import MAX_CODEPOINT, SURROGATES, Entry, Table
from .primitives import U32

_NORM_SECTION = "NormTable"
_ENTRY_HEAD = struct.Struct("<IH")


def encode_table(entries: Iterable[Entry]) -> bytes:
    """Serialize a table as a `.mtok` NormTable.  Raises ValueError for entries that the reader
    could not use: code points not strictly increasing, outside U+0000..U+10FFFF or surrogates,
    or a replacement longer than 65535 UTF-8 bytes."""
    pack = _ENTRY_HEAD.pack
    parts = [b""]
    prev = -1
    for cp, rep in entries:
        if cp <= prev:
            raise ValueError(f"NormTable code points must be strictly increasing: U+{cp:04X} after U+{prev:04X}")
        if cp > MAX_CODEPOINT or SURROGATES[0] <= cp <= SURROGATES[1]:
            raise ValueError(f"NormTable code point 0x{cp:X} is not a Unicode scalar value")
        b = rep.encode("utf-8")
        if len(b) > 0xFFFF:
            raise ValueError(f"NormTable replacement for U+{cp:04X} is {len(b)} bytes (max 65535)")
        parts.append(pack(cp, len(b)))
        parts.append(b)
        prev = cp
    parts[0] = U32.pack((len(parts) - 1) // 2)
    return b"".join(parts)


def decode_table(buf, offset: int = 0) -> tuple[Table, int]:
    """Parse a NormTable at ``buf[offset:]``; returns ``(entries, offset just past the table)``.

    Raises `FormatError` (section ``NormTable``, with the byte offset of the bad field) on
    truncation, code points that are not strictly increasing, code points above U+10FFFF or in the
    surrogate range, and replacements that are not valid UTF-8."""
    mv = memoryview(buf).cast("B") if not isinstance(buf, bytes) else buf
    end = len(mv)
    pos = offset
    if pos < 0 or pos + 4 > end:
        raise FormatError(f"truncated NormTable: need 4 bytes for the entry count, {max(end - pos, 0)} left",
                          offset=pos, section=_NORM_SECTION)
    (count,) = U32.unpack_from(mv, pos)
    pos += 4
    if count * 6 > end - pos:
        raise FormatError(f"truncated NormTable: {count} entries need at least {count * 6} bytes, "
                          f"{end - pos} left", offset=pos - 4, section=_NORM_SECTION)
    unpack = _ENTRY_HEAD.unpack_from
    out: list[Entry] = []
    append = out.append
    prev = -1
    for i in range(count):
        if pos + 6 > end:
            raise FormatError(f"truncated NormTable entry {i}: need 6 bytes, {end - pos} left",
                              offset=pos, section=_NORM_SECTION)
        cp, n = unpack(mv, pos)
        if cp <= prev or cp > MAX_CODEPOINT or SURROGATES[0] <= cp <= SURROGATES[1]:
            if cp > MAX_CODEPOINT:
                msg = f"entry {i}: code point 0x{cp:X} is above U+10FFFF"
            elif SURROGATES[0] <= cp <= SURROGATES[1]:
                msg = f"entry {i}: code point U+{cp:04X} is a surrogate"
            elif cp == prev:
                msg = f"entry {i}: duplicate code point U+{cp:04X}"
            else:
                msg = f"entry {i}: code points not strictly increasing (U+{cp:04X} after U+{prev:04X})"
            raise FormatError(msg, offset=pos, section=_NORM_SECTION)
        pos += 6
        stop = pos + n
        if stop > end:
            raise FormatError(f"truncated NormTable entry {i} (U+{cp:04X}): replacement of {n} bytes, "
                              f"{end - pos} left", offset=pos, section=_NORM_SECTION)
        try:
            rep = str(mv[pos:stop], "utf-8")
        except UnicodeDecodeError as e:
            raise FormatError(f"entry {i}: replacement for U+{cp:04X} is not valid UTF-8 ({e.reason} at byte "
                              f"{e.start})", offset=pos + e.start, section=_NORM_SECTION) from None
        append((cp, rep))
        prev = cp
        pos = stop
    return tuple(out), pos
