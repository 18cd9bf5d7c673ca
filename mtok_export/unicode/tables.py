"""Per-code-point normalization tables for the `.mtok` code-6 / code-7 normalizers.

A *table* is a tuple of ``(codepoint, replacement)`` pairs, strictly increasing by code point,
listing only the code points whose replacement differs from the character itself (spec section 6).

* `build_table` walks U+0000..U+10FFFF with `ucd.normalize_each`: the reference's Unicode version (HF
  tokenizers' 9.0.0), from a pinned data package, not the running Python's `unicodedata` (uncached).
* `table` is the cached version: in memory, plus a small binary file per form and Unicode version
  under `cache_dir()`.
* The `.mtok` NormTable codec that writes these tables is `mtok/normtable.py`.
* `charsmap_rules` / `charsmap_table` read a SentencePiece ``precompiled_charsmap`` blob.

The library never prints; a cold build reports through the optional ``progress`` callback.
"""

from __future__ import annotations

import os
import struct
import sys
import tempfile
import threading
import zlib
from array import array
from collections.abc import Callable
from itertools import islice
from operator import le, lt
from pathlib import Path

from ..errors import FormatError
from ..io import cache_dir
from . import ucd

__all__ = [
    "FORMS", "MAX_CODEPOINT", "CACHE_FORMAT_VERSION", "Entry", "Table", "Progress",
    "build_table", "table", "cache_dir", "cache_path", "clear_memory_cache",
    "charsmap_rules", "charsmap_table",
]

Entry = tuple[int, str]
Table = tuple[Entry, ...]
Progress = Callable[[int, int], None]

FORMS = ("NFC", "NFKC", "NFD", "NFKD", "NFD-Mn")  # NFD-Mn: NFD, then nonspacing marks removed (HF's
# BertNormalizer strip_accents)
MAX_CODEPOINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
_TOTAL = MAX_CODEPOINT + 1
_CHUNK = 0x10000
_CHARSMAP_SECTION = "precompiled_charsmap"
_TRIE_SIZE = struct.Struct("<I")  # the charsmap blob's leading u32


def _check_form(form: str) -> str:
    if form not in FORMS:
        raise ValueError(f"unknown normalization form {form!r}; expected one of {', '.join(FORMS)}")
    return form


def _u32_typecode() -> str:
    for code in ("I", "L"):
        if array(code).itemsize == 4:
            return code
    raise RuntimeError("no 4-byte unsigned array type on this platform")  # pragma: no cover


_U32 = _u32_typecode()
_BIG_ENDIAN = sys.byteorder == "big"


def u32_array(data) -> array:
    """Little-endian u32 bytes -> array of ints (host order); also the `.mtok` codec's."""
    out = array(_U32)
    out.frombytes(data)
    if _BIG_ENDIAN:  # pragma: no cover
        out.byteswap()
    return out


def _u32_bytes(values) -> bytes:
    out = array(_U32, values)
    if _BIG_ENDIAN:  # pragma: no cover
        out.byteswap()
    return out.tobytes()


# --------------------------------------------------------------------------------------------------
# Building

def build_table(form: str, *, progress: Progress | None = None) -> Table:
    """Walk every code point U+0000..U+10FFFF (surrogates skipped) in ascending order and keep
    ``(cp, ucd.normalize_each(form, [chr(cp)])[0])`` where the result differs from ``chr(cp)``.

    ``progress(done, total)`` is called every 65536 code points (``total`` = 0x110000)."""
    _check_form(form)
    out: list[Entry] = []
    if progress is not None:
        progress(0, _TOTAL)
    for lo in range(0, _TOTAL, _CHUNK):
        hi = lo + _CHUNK
        if lo <= SURROGATES[0] < hi:
            cps = [*range(lo, SURROGATES[0]), *range(SURROGATES[1] + 1, hi)]
        else:
            cps = range(lo, hi)
        chars = list(map(chr, cps))
        out.extend([(cp, n) for cp, c, n in zip(cps, chars, ucd.normalize_each(form, chars)) if n is not c and n != c])
        if progress is not None:
            progress(hi, _TOTAL)
    return tuple(out)


# --------------------------------------------------------------------------------------------------
# Caching

CACHE_FORMAT_VERSION = 1
_CACHE_MAGIC = b"MTOKUTB\0"
# magic, format version, count, pool chars, pool bytes, crc32 of everything after the header
_CACHE_HEADER = struct.Struct("<8sIIIII")

_memory: dict[tuple[str, str], Table] = {}
_lock = threading.Lock()


def cache_path(form: str) -> Path:
    """The on-disk cache file for ``form`` under the tables' Unicode version and data."""
    return cache_dir() / f"unicode-{_check_form(form)}-{ucd.tables_id()}-v{CACHE_FORMAT_VERSION}.bin"


def clear_memory_cache() -> None:
    """Forget the in-memory tables (the on-disk cache is untouched)."""
    with _lock:
        _memory.clear()


def table(form: str, *, progress: Progress | None = None) -> Table:
    """`build_table(form)`, cached in memory and on disk (keyed by form, Unicode version and cache
    format version).  A missing, corrupt or stale cache file is rebuilt; an unwritable cache
    directory just means the table is built in memory.  ``progress`` is only called on a build."""
    key = (_check_form(form), ucd.tables_id())
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            return hit
        path = cache_path(form)
        entries = _load_cache(path, form)
        if entries is None:
            entries = build_table(form, progress=progress)
            _store_cache(path, form, entries)
        _memory[key] = entries
        return entries


def _cache_key_bytes(form: str) -> bytes:
    f, v = form.encode("ascii"), ucd.tables_id().encode("ascii")
    return bytes((len(f),)) + f + bytes((len(v),)) + v


def _serialize_cache(form: str, entries: Table) -> bytes:
    cps = [cp for cp, _ in entries]
    offsets = [0]
    total = 0
    for _, rep in entries:
        total += len(rep)
        offsets.append(total)
    pool = "".join(rep for _, rep in entries).encode("utf-8", "surrogatepass")
    body = _cache_key_bytes(form) + _u32_bytes(cps) + _u32_bytes(offsets) + pool
    header = _CACHE_HEADER.pack(_CACHE_MAGIC, CACHE_FORMAT_VERSION, len(entries), total, len(pool),
                                zlib.crc32(body))
    return header + body


def _deserialize_cache(data: bytes, form: str) -> Table | None:
    """Parse a cache file; None if it is anything but a complete, intact file for this key."""
    hs = _CACHE_HEADER.size
    if len(data) < hs:
        return None
    magic, version, count, nchars, nbytes, crc = _CACHE_HEADER.unpack_from(data)
    if magic != _CACHE_MAGIC or version != CACHE_FORMAT_VERSION:
        return None
    key = _cache_key_bytes(form)
    cps_at = hs + len(key)
    offs_at = cps_at + 4 * count
    pool_at = offs_at + 4 * (count + 1)
    if len(data) != pool_at + nbytes or data[hs:cps_at] != key:
        return None
    if zlib.crc32(memoryview(data)[hs:]) != crc:
        return None
    cps = u32_array(data[cps_at:offs_at])
    offs = u32_array(data[offs_at:pool_at])
    try:
        pool = data[pool_at:].decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    # The checksum catches damage; these checks make a crafted file harmless as well.  Offsets may
    # repeat: an empty replacement deletes its code point (NFD-Mn drops nonspacing marks).
    if (len(pool) != nchars or offs[0] != 0 or offs[-1] != nchars
            or not all(map(le, offs, islice(offs, 1, None))) or not all(map(lt, cps, islice(cps, 1, None)))
            or (count and cps[-1] > MAX_CODEPOINT)):
        return None
    reps = [pool[a:b] for a, b in zip(offs, islice(offs, 1, None))]
    return tuple(zip(cps, reps))


def _load_cache(path: Path, form: str) -> Table | None:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return _deserialize_cache(data, form)


def _store_cache(path: Path, form: str, entries: Table) -> bool:
    """Write atomically (temp file in the same directory + os.replace).  False if not writable."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as fh:
            fh.write(_serialize_cache(form, entries))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False


# --------------------------------------------------------------------------------------------------
# SentencePiece precompiled_charsmap: u32 trie_bytes, darts-clone double array, NUL-separated pool

_MAX_KEY_BYTES = 256
_MAX_NODES = 1 << 22


def _split_charsmap(blob) -> tuple[array, bytes]:
    data = bytes(blob)
    if len(data) < 4:
        raise FormatError(f"truncated: need 4 bytes for the trie size, {len(data)} present",
                          offset=0, section=_CHARSMAP_SECTION)
    (size,) = _TRIE_SIZE.unpack_from(data, 0)
    if size % 4:
        raise FormatError(f"trie size {size} is not a multiple of 4", offset=0, section=_CHARSMAP_SECTION)
    if size == 0 or 4 + size > len(data):
        raise FormatError(f"trie size {size} does not fit in a {len(data)}-byte blob",
                          offset=0, section=_CHARSMAP_SECTION)
    return u32_array(data[4:4 + size]), data[4 + size:]


def _utf8_len(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if 0xC2 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF5 else 0


def _charsmap_raw(units: array, single_char: bool = False) -> list[tuple[bytes, int]]:
    """Every (key bytes, pool offset) stored in the darts-clone trie, in byte order.  With
    ``single_char``, only keys of at most one UTF-8 character are explored (much faster).

    darts-clone unit: bit 8 = has_leaf, bit 31 = is_leaf, label = unit & 0x800000FF (a leaf never
    matches a byte), offset = (unit >> 10) << ((unit & 0x200) >> 6), value = unit & 0x7FFFFFFF.
    Following byte c from a node whose children start at ``base`` lands on unit ``base ^ c``, valid
    iff its label is c; that unit's children start at ``(base ^ c) ^ offset``, and if it has a leaf,
    the leaf is the unit at that new base.  Children of ``base`` are therefore exactly the units q
    with label c != 0 and ``q ^ c == base``, which lets us index them in one pass."""
    n = len(units)
    children: dict[int, list[int]] = {}
    for q, u in enumerate(units):
        lab = u & 0x800000FF
        if 0 < lab < 256:
            children.setdefault(q ^ lab, []).append(q)

    def offset(u: int) -> int:
        return (u >> 10) << ((u & 0x200) >> 6)

    out: list[tuple[bytes, int]] = []
    stack: list[tuple[int, bytes]] = [(offset(units[0]), b"")]
    visited = 0
    while stack:
        base, prefix = stack.pop()
        visited += 1
        if visited > _MAX_NODES:
            raise FormatError("trie has too many nodes (cyclic?)", section=_CHARSMAP_SECTION)
        kids = children.get(base)
        if not kids:
            continue
        if len(prefix) >= _MAX_KEY_BYTES:
            raise FormatError(f"trie key longer than {_MAX_KEY_BYTES} bytes (cyclic?)", section=_CHARSMAP_SECTION)
        nodes: list[tuple[int, bytes]] = []
        for q in kids:
            u = units[q]
            key = prefix + bytes((u & 0xFF,))
            nb = q ^ offset(u)
            if (u >> 8) & 1:
                if nb >= n:
                    raise FormatError(f"leaf for key {key!r} at unit {nb} is outside the {n}-unit trie",
                                      offset=4 + 4 * q, section=_CHARSMAP_SECTION)
                out.append((key, units[nb] & 0x7FFFFFFF))
            if not single_char or len(key) < _utf8_len(key[0]):
                nodes.append((nb, key))
        stack.extend(nodes)
    out.sort()
    return out


def _pool_string(pool: bytes, value: int, key: bytes) -> str:
    if value >= len(pool):
        raise FormatError(f"value {value} for key {key!r} is outside the {len(pool)}-byte string pool",
                          section=_CHARSMAP_SECTION)
    stop = pool.find(b"\0", value)
    raw = pool[value:] if stop < 0 else pool[value:stop]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"replacement for key {key!r} is not valid UTF-8: {raw!r}",
                          section=_CHARSMAP_SECTION) from None


def charsmap_rules(blob) -> dict[str, str]:
    """All rewrite rules in a SentencePiece ``precompiled_charsmap``: ``{source: replacement}``,
    including sources of several code points (which a per-code-point table cannot represent).
    Keys are in UTF-8 byte order."""
    units, pool = _split_charsmap(blob)
    rules: dict[str, str] = {}
    for key, value in _charsmap_raw(units):
        try:
            src = key.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"trie key {key!r} is not valid UTF-8", section=_CHARSMAP_SECTION) from None
        rules[src] = _pool_string(pool, value, key)
    return rules


def charsmap_table(precompiled_charsmap) -> Table:
    """The per-code-point table of a ``precompiled_charsmap``: every single-code-point rule whose
    replacement differs from the character, sorted by code point.  This is what HF
    ``Precompiled`` (and SentencePiece) do to a lone character."""
    units, pool = _split_charsmap(precompiled_charsmap)
    out = []
    for key, value in _charsmap_raw(units, single_char=True):
        try:
            src = key.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError(f"trie key {key!r} is not valid UTF-8", section=_CHARSMAP_SECTION) from None
        if len(src) == 1:
            rep = _pool_string(pool, value, key)
            if rep != src:
                out.append((ord(src), rep))
    out.sort()
    return tuple(out)
