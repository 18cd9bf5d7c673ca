"""The three text lines every MNN tokenizer file starts with (spec section 1):
`430 <type>`, `<special> <stop> <prefix>` counts, then the ids of the three lists."""

from __future__ import annotations

from ..errors import FormatError, UnsupportedError
from .constants import MAGIC, MAX_U32, FileType

IdLists = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # special, stop, prefix


def read_header(buf: bytes, path=None, expect: int | None = None) -> tuple[int, IdLists, int]:
    """-> (file type, (special, stop, prefix), offset of the body).  `expect` rejects other types."""
    lines, pos = [], 0
    for n in range(3):
        end = buf.find(b"\n", pos)
        if end < 0:
            raise FormatError(f"header line {n + 1} has no newline", offset=pos, section="header", path=path)
        lines.append((pos, buf[pos:end]))
        pos = end + 1

    def ints(i):
        off, raw = lines[i]
        try:
            return [int(x) for x in raw.decode("ascii").split()]
        except (UnicodeDecodeError, ValueError):
            raise FormatError(f"header line {i + 1} must be decimal integers, got {raw[:40]!r}",
                              offset=off, section="header", path=path) from None

    first = ints(0)
    if len(first) != 2 or first[0] != MAGIC:
        raise FormatError(f"not an MNN tokenizer: line 1 must be '{MAGIC} <type>', got {lines[0][1][:40]!r}",
                          offset=0, section="header", path=path)
    kind = first[1]
    if kind not in tuple(FileType):
        raise FormatError(f"unknown tokenizer type {kind} (MNN knows 0-4)", offset=0, section="header", path=path)
    if expect is not None and kind != expect:
        what = "a legacy tokenizer.txt" if kind != FileType.PIPELINE else ".mtok"
        raise FormatError(f"type {kind} is {what}, not type {expect}", offset=0, section="header", path=path)
    counts, ids = ints(1), ints(2)
    if len(counts) != 3 or min(counts) < 0:
        raise FormatError("header line 2 must hold three counts (special stop prefix)",
                          offset=lines[1][0], section="header", path=path)
    if len(ids) != sum(counts):
        raise FormatError(f"header line 3 holds {len(ids)} ids but line 2 announces {sum(counts)}",
                          offset=lines[2][0], section="header", path=path)
    if any(not 0 <= i <= MAX_U32 for i in ids):
        raise FormatError("header ids must be u32", offset=lines[2][0], section="header", path=path)
    a, b, _ = counts
    return kind, (tuple(ids[:a]), tuple(ids[a:a + b]), tuple(ids[a + b:])), pos


def file_type(buf: bytes) -> int | None:
    """The type line 1 names (`430 <type>`, 0-4), None when line 1 is no MNN header: what a file is by
    its content, the one dispatch between `.mtok` and a legacy `tokenizer.txt` (`readers.formats.mnn.is_mtok`,
    `readers.mnn_file`), never by its name.  Line 1 ends at its first CR or LF; what follows is
    `read_header`'s to check."""
    end = min((i for i in (buf.find(b"\n"), buf.find(b"\r")) if i >= 0), default=-1)
    try:
        first = [int(x) for x in buf[:end].decode("ascii").split()] if end >= 0 else []
    except (UnicodeDecodeError, ValueError):
        return None
    return first[1] if len(first) == 2 and first[0] == MAGIC and first[1] in tuple(FileType) else None


def write_header(kind: int, lists: IdLists, trailing_space: bool = False) -> bytes:
    """`.mtok` joins ids with single spaces; MNN's legacy writer puts a space after every id."""
    for ids in lists:
        for i in ids:
            if not 0 <= i <= MAX_U32:
                raise UnsupportedError(f"header id {i} is not a u32")
    flat = [str(i) for ids in lists for i in ids]
    line3 = "".join(f"{i} " for i in flat) if trailing_space else " ".join(flat)
    return f"{MAGIC} {kind}\n{' '.join(str(len(x)) for x in lists)}\n{line3}\n".encode()
