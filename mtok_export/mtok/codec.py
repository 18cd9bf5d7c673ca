"""Read and write `.mtok` (MNN type 4, "pipeline") files, driven by `schema.py` (spec section 2).

`write_mtok(tok)` needs a tokenizer already lowered for MNN (every component has a code); it
refuses anything else rather than write what the runtime would misread.  `read_mtok(data)` checks
every invariant the runtime silently relies on (sorted tables, dense ids, known codes, no trailing
bytes) and returns the IR with a `Layout` of section offsets for `inspect`.

Both walk `schema.SECTIONS` and the schema's component families; this module holds only the wire
kinds.  A full read checks the vocab and merge tables (most of a file) entry by entry as it builds
the IR.  A lazy read (`inspect`, `check_written`) checks them on whole arrays and returns views;
a failed check re-reads the table entry by entry, which finds the first bad entry and its offset,
so both reads fail alike."""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field
from itertools import islice, repeat
from operator import attrgetter, le, lt

from ..errors import FormatError, MtokError, UnsupportedError
from ..ir import AddedToken, ChatTemplate, Metadata, Pattern, Tokenizer
from ..ir import models as M
from ..ir.processors import PostProgram
from ..unicode.tables import u32_array
from .constants import FLAG_CLEAN_UP_SPACES, MAX_U16, MAX_U32, FileType, PostOp
from .header import read_header, write_header
from .normtable import decode_table, encode_table
from .primitives import F64, U32, Reader, Writer
from .schema import BEHAVIORS, COUNT_OF, FAMILIES, FIRST_OPTIONAL, SECTIONS, Family, Variant
from .views import IdVocab, RankedMerges, Utf8Tokens, scatter

_BY_CODE = {name: {v.code: v for v in fam.variants} for name, fam in FAMILIES.items()}
_MAX_DEPTH = 64
_LITTLE = sys.byteorder == "little"
_U32_TYPE = u32_array(b"").typecode  # the array type whose items are 4 bytes
_MERGE_CHUNK = 1 << 15


@dataclass
class Section:
    name: str
    offset: int
    size: int
    present: bool = True
    doc: str = ""  # the section's layout, from the schema


@dataclass
class Layout:
    """Where everything is in a file: for `inspect` and for error messages."""

    size: int = 0
    header_size: int = 0
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    legacy_program: bool = False  # post program read as the "temporary" tail-id form
    program_pad: bool = False  # one 0x00 after the program, written to avoid spec 2.9 ambiguity


# ---------------------------------------------------------------- components and the model

def _read_component(r: Reader, family: Family, layout: Layout, depth: int = 0):
    if depth > _MAX_DEPTH:
        r.fail(f"{family.name} nesting deeper than {_MAX_DEPTH}")
    start = r.pos
    code = r.u8(family.code_what)
    if code == family.null_code:
        return None
    if code in family.noop_codes:
        layout.warnings.append(family.noop_codes[code])
        return None
    variant = _BY_CODE[family.name].get(code)
    if variant is None:
        r.fail(f"unknown {family.code_what} {code} ({family.on_unknown})", start)
    kwargs = dict(variant.fixed)
    wire: dict = {}  # what the format carries but the IR does not: counts, field offsets, tokens
    for name, kind in variant.fields:
        wire[name, "at"] = r.pos
        value = _read_field(r, kind, family, name, kwargs, wire, layout, depth)
        if kind == "count":
            wire[name] = value
        else:
            kwargs[name] = value
    for name, kind in variant.fields:
        if kind == "vocab_id" and kwargs[name] >= len(wire["tokens"]):
            r.fail(f"{name} {kwargs[name]} is outside the vocab of {len(wire['tokens'])}", wire[name, "at"])
    return variant.cls(**kwargs)


def _read_field(r: Reader, kind: str, family: Family, name: str, done: dict, wire: dict, layout: Layout,
                depth: int):
    what = f"{family.name}.{name}"
    if kind in ("bool", "u8", "u32", "f64", "str"):
        return getattr(r, kind)(what)
    if kind == "vocab_id":  # checked against the vocab once it is read
        return r.u32(what)
    if kind == "count":  # named as the spec names it: vocab_size, merge_size
        return r.u32(name)
    if kind == "pattern":
        return Pattern(r.str(what))
    if kind == "regex":
        return Pattern(r.str(what), regex=True)
    if kind == "scheme":
        return "always" if r.bool(what) else "never"
    if kind == "behavior":
        v = r.u8(what)
        if v >= len(BEHAVIORS):
            r.fail(f"{what}: unknown Split behavior {v} (MNN writes 0, 1 or 2)", r.pos - 1)
        return BEHAVIORS[v]
    if kind == "children":
        n = r.u32(f"{what} count")
        if n > r.remaining:
            r.fail(f"{what}: {n} children cannot fit in {r.remaining} bytes", r.pos - 4)
        children = []
        for _ in range(n):
            child = _read_component(r, family, layout, depth + 1)
            if child is None:
                layout.warnings.append(f"null {family.name} inside a Sequence: the runtime skips it")
            else:
                children.append(child)
        return tuple(children)
    if kind == "table" or (kind == "bert_table" and done["strip_accents"]):
        try:
            entries, r.pos = decode_table(r.buf, r.pos)
        except FormatError as e:
            raise FormatError(e.message, offset=e.offset, section=r.section, path=r.path) from None
        return entries
    if kind == "bert_table":
        return ()
    if kind in ("vocab", "scored_vocab"):
        n = wire["vocab_size"]
        per_entry = 14 if kind == "scored_vocab" else 6  # smallest entry: empty string
        if n * per_entry > r.remaining:
            r.fail(f"vocab_size {n} cannot fit in the {r.remaining} bytes left", wire["vocab_size", "at"])
        tokens, scores = _read_vocab(r, n, with_score=kind == "scored_vocab")
        wire["tokens"] = tokens
        if scores is not None:
            return tuple(zip(tokens, scores))
        return IdVocab(tokens) if r.lazy else dict(zip(tokens, range(n)))
    if kind == "merges":
        return _read_merges(r, wire["merge_size"], wire["tokens"])
    raise AssertionError(kind)


def _variant_for(family: Family, obj) -> Variant:
    for v in family.variants:
        if type(obj) is v.cls and (v.when is None or v.when(obj)):
            return v
    raise UnsupportedError(f"the .mtok format has no code for {family.name} "
                           f"{getattr(obj, 'kind', type(obj).__name__)} (lower the tokenizer for MNN first)")


def _check_fixed(family: Family, obj, v: Variant):
    for k, want in v.fixed.items():
        got = getattr(obj, k)
        if got != want:
            raise UnsupportedError(f"the .mtok format cannot carry {family.name} {obj.kind} with {k}={got!r} "
                                   f"(only {want!r}); lower the tokenizer for MNN first")


def _write_component(w: Writer, family: Family, obj):
    if obj is None:
        if family.null_code is None:
            raise UnsupportedError(f"the .mtok format has no 'none' {family.name} "
                                   f"(code 0 is {family.variants[0].cls.__name__})")
        w.u8(family.null_code)
        return
    v = _variant_for(family, obj)
    _check_fixed(family, obj, v)
    w.u8(v.code)
    for name, kind in v.fields:
        _write_field(w, kind, family, obj, name)


def _write_field(w: Writer, kind: str, family: Family, obj, name: str):
    if kind == "count":
        w.u32(len(getattr(obj, COUNT_OF[name])))
        return
    value, what = getattr(obj, name), f"{family.name} {obj.kind}.{name}"
    if kind == "vocab_id" and value is None:
        raise UnsupportedError(f"{obj.kind} model without {name}: the format needs one")
    if kind in ("bool", "u8", "u32", "f64", "vocab_id"):
        if kind in ("u32", "vocab_id") and not 0 <= value <= MAX_U32:
            raise UnsupportedError(f"{what}={value} is not a u32")
        getattr(w, "u32" if kind == "vocab_id" else kind)(value)
    elif kind == "str":
        _str(w, value, what)
    elif kind in ("pattern", "regex"):
        if value.regex != (kind == "regex"):
            need = "a regex" if kind == "regex" else "a literal string"
            raise UnsupportedError(f"{what} must be {need} here; lower the tokenizer for MNN first")
        _str(w, value.value, what)
    elif kind == "scheme":
        if value not in ("always", "never"):
            raise UnsupportedError(f"{what}={value!r}: the format has only always/never")
        w.bool(value == "always")
    elif kind == "behavior":
        if value not in BEHAVIORS:
            raise UnsupportedError(f"{what}={value!r}: the runtime has only {', '.join(BEHAVIORS)}")
        w.u8(BEHAVIORS.index(value))
    elif kind == "children":
        w.u32(len(value))
        for child in value:
            _write_component(w, family, child)
    elif kind == "table" or (kind == "bert_table" and obj.strip_accents):
        try:
            w.raw(encode_table(value))
        except ValueError as e:
            raise UnsupportedError(f"{what}: {e}") from None
    elif kind == "bert_table":
        if value:
            raise UnsupportedError(f"{what}: an NFD table is only written when strip_accents is set")
    elif kind == "vocab":
        w.raw(_encode_vocab(*_dense_sorted(value), None))
    elif kind == "scored_vocab":  # a list of (piece, score): the id is the position
        order = sorted(range(len(value)), key=lambda i: value[i][0])
        w.raw(_encode_vocab([value[i][0] for i in order], order, [value[i][1] for i in order]))
    elif kind == "merges":
        w.raw(_encode_merges(obj))
    else:
        raise AssertionError(kind)


def _str(w: Writer, s: str, what: str):
    try:
        w.str(s, what)
    except UnicodeEncodeError as e:
        raise UnsupportedError(f"{what}: not valid Unicode ({e.reason})") from None
    except ValueError as e:  # the message names `what` already
        raise UnsupportedError(str(e)) from None


# ---------------------------------------------------------------- vocab and merges (spec 2.5)
# Each reader validates whole arrays at once; when a check fails, the entry-by-entry reader runs
# instead, so the message, its offset and the lenient reader's warnings come from one place.

def _read_vocab(r: Reader, n: int, with_score: bool):
    """-> (tokens by id, scores by id or None).  A full read builds the IR as it checks, in one
    loop (measured fastest when every entry becomes an object anyway); a lazy read checks whole
    arrays and builds nothing it can leave to the views."""
    if not r.lazy or with_score:  # a Unigram vocab is a tuple of (piece, score) either way
        return _read_vocab_entries(r, n, with_score)
    buf, first = r.buf, r.pos
    tail = 4
    step = 2 + tail
    pos = first
    try:  # the token bytes of each entry, walking the u16 lengths (IndexError: a length past the end)
        raw = [buf[pos + 2:(pos := pos + step + (buf[pos] | buf[pos + 1] << 8)) - tail] for _ in range(n)]
    except IndexError:
        return _read_vocab_entries(r, n, with_score)
    end = pos
    if n == 0:
        return [], None
    if end > len(buf):
        return _read_vocab_entries(r, n, with_score)
    # the ids in one unpack: skip each length and token, then read the id
    ids = struct.unpack_from(_entries_format("2x{}xI", list(map(len, raw))), buf, first)
    if not (all(map(lt, raw, islice(raw, 1, None))) and max(ids) < n):
        return _read_vocab_entries(r, n, with_score)
    by_id = scatter(raw, ids, n)
    if None in by_id:  # n ids below n leave a hole exactly when one repeats
        return _read_vocab_entries(r, n, with_score)
    try:  # one decode checks all: NUL is ASCII, so the join is valid UTF-8 iff every token is
        b"\x00".join(by_id).decode("utf-8")
    except UnicodeDecodeError:
        return _read_vocab_entries(r, n, with_score)
    r.pos = end
    return Utf8Tokens(by_id), None


def _read_vocab_entries(r: Reader, n: int, with_score: bool):
    """Entry by entry, stopping at the first broken one with its offset (lenient: warning on an
    unsorted entry and going on)."""
    buf, pos, end = r.buf, r.pos, len(r.buf)
    first = pos
    tail = 12 if with_score else 4
    by_id: list = [None] * n
    scores = [0.0] * n if with_score else None
    prev = None
    unpack_u32, unpack_f64 = U32.unpack_from, F64.unpack_from
    for _ in range(n):
        if pos + 2 > end:
            r.pos = pos
            r.fail("truncated vocab entry")
        s = pos + 2
        e = s + (buf[pos] | buf[pos + 1] << 8)
        if e + tail > end:
            r.pos = pos
            r.fail("truncated vocab entry")
        tok = buf[s:e]
        if prev is not None and tok <= prev:
            r.pos = pos
            if tok == prev or r.strict:
                r.fail(f"vocab not sorted by UTF-8 bytes: {tok!r} after {prev!r} "
                       "(the runtime's binary search would miss tokens)" if tok != prev
                       else f"duplicate vocab token {tok!r}")
            r.warn(f"vocab not sorted by UTF-8 bytes at 0x{pos:08x} ({tok!r} after {prev!r}): "
                   "the runtime's binary search will miss tokens")
        i = unpack_u32(buf, e)[0]
        if i >= n or by_id[i] is not None:
            r.pos = e
            r.fail(f"vocab id {i} is " + ("beyond vocab_size %d" % n if i >= n else "used twice")
                   + " (ids must be dense 0..vocab_size-1)")
        by_id[i] = tok
        if with_score:
            scores[i] = unpack_f64(buf, e + 4)[0]
        prev = tok
        pos = e + tail
    try:
        tokens = [b.decode("utf-8") for b in by_id]
    except UnicodeDecodeError:
        at = first  # find the entry again, for its offset (r.pos moved with the lenient warnings)
        while _is_utf8(buf[at + 2:at + 2 + (buf[at] | buf[at + 1] << 8)]):
            at += 2 + (buf[at] | buf[at + 1] << 8) + tail
        r.fail(f"vocab token {buf[at + 2:at + 2 + (buf[at] | buf[at + 1] << 8)]!r} is not valid UTF-8", at)
    r.pos = pos
    return tokens, scores


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _read_merges(r: Reader, n: int, tokens: list[str]) -> tuple:
    """The merges by rank: checked in one loop that builds the pairs (full read), or on whole
    arrays, returning a view (lazy read); see `_read_vocab`."""
    start = r.need(12 * n, f"{n} merges")
    if n == 0:
        return ()
    flat = u32_array(r.buf[start:start + 12 * n])
    if not r.lazy:
        return _read_merge_entries(r, start, flat, n, tokens)
    first, second, ranks = flat[0::3], flat[1::3], flat[2::3]
    size = len(tokens)
    # (id1 << 32) | id2 as one u64 per merge: the two u32 halves side by side in host order
    halves = array(_U32_TYPE, bytes(8 * n))
    halves[0::2], halves[1::2] = (second, first) if _LITTLE else (first, second)
    keys = array("Q")
    keys.frombytes(halves.tobytes())
    # sorted keys first: then the largest id1 is the last one; n distinct ranks below n are 0..n-1
    if not (all(map(le, keys, islice(keys, 1, None))) and first[-1] < size and max(second) < size
            and max(ranks) < n and len(set(ranks)) == n):
        return _read_merge_entries(r, start, flat, n, tokens)
    return RankedMerges(tokens, first, second, ranks)


def _read_merge_entries(r: Reader, start: int, flat, n: int, tokens: list[str]) -> tuple:
    """Merge by merge, stopping at the first broken one with its offset (lenient: warning on an
    unsorted merge and going on)."""
    size = len(tokens)
    out: list = [None] * n
    prev = -1
    for k in range(0, 3 * n, 3):
        a, b, rank = flat[k], flat[k + 1], flat[k + 2]
        key = a << 32 | b
        off = start + 4 * k
        if key < prev:
            if r.strict:
                r.fail("merges not sorted by (id1<<32)|id2 (the runtime's binary search would miss them)", off)
            r.warn(f"merges not sorted by (id1<<32)|id2 at 0x{off:08x}: the runtime's binary search will miss them")
        if a >= size or b >= size:
            r.fail(f"merge ({a}, {b}) names an id beyond vocab_size {size}", off)
        if rank >= n or out[rank] is not None:
            r.fail(f"merge rank {rank} is out of range or repeated (ranks must be 0..{n - 1})", off + 8)
        out[rank] = (tokens[a], tokens[b])
        prev = key
    return tuple(out)


def _encode_vocab(tokens: list[str], ids: list[int], scores) -> bytes:
    """Entries in the given (sorted) order: str token, u32 id [, f64 score]."""
    n = len(tokens)
    try:  # one encode for all, split at the NULs we joined with (unless a token holds one)
        encoded = "\x00".join(tokens).encode("utf-8").split(b"\x00") if n else []
    except UnicodeEncodeError:
        bad = next(t for t in tokens if not _encodable(t))
        raise UnsupportedError(f"vocab token {bad!r} is not valid Unicode (a lone surrogate?)") from None
    if len(encoded) != n:
        encoded = [t.encode("utf-8") for t in tokens]
    if scores is not None and any(map(bytes.__eq__, encoded, islice(encoded, 1, None))):
        # Unigram lists can repeat a piece; dict vocabs cannot
        k = next(k for k in range(1, n) if encoded[k] == encoded[k - 1])
        raise UnsupportedError(f"vocab token {tokens[k]!r} appears twice")
    lengths = list(map(len, encoded))
    if n and max(lengths) > MAX_U16:
        i = next(k for k, b in enumerate(lengths) if b > MAX_U16)
        raise UnsupportedError(f"vocab token id {ids[i]} is {lengths[i]} bytes; the format allows 65535")
    # One pack call for the whole table: `<` means no padding, so this is the entries back to back.
    fields: list = [None] * ((4 if scores is not None else 3) * n)
    step = len(fields) // n if n else 1
    fields[0::step], fields[1::step], fields[2::step] = lengths, encoded, ids
    if scores is not None:
        fields[3::step] = scores
    return struct.pack(_entries_format("H{}sId" if scores is not None else "H{}sI", lengths), *fields)


def _entries_format(per_entry: str, lengths: list[int]) -> str:
    """The struct format of a whole table whose entries differ only in their string's length
    (`per_entry` has one `{}` for it); each distinct length is formatted once."""
    piece = {k: per_entry.format(k) for k in set(lengths)}
    return "<" + "".join(map(piece.__getitem__, lengths))


def _encodable(t: str) -> bool:
    try:
        t.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _dense_sorted(vocab: dict) -> tuple[list[str], list[int]]:
    """Tokens in UTF-8 byte order (== code point order for valid text) and their ids, which must
    be dense 0..n-1: the runtime writes id_to_token[id] unchecked."""
    n = len(vocab)
    tokens = sorted(vocab)
    ids = list(map(vocab.__getitem__, tokens))
    if n and (len(set(ids)) != n or min(ids) != 0 or max(ids) != n - 1
              or set(map(type, ids)) != {int}):
        seen: dict = {}
        for t, i in zip(tokens, ids):
            if type(i) is not int or not 0 <= i < n:
                raise UnsupportedError(f"vocab id {i!r} ({t!r}) is outside 0..{n - 1}: ids must be dense "
                                       "(the runtime writes id_to_token[id] unchecked)")
            if i in seen:
                raise UnsupportedError(f"vocab id {i} is used by both {seen[i]!r} and {t!r}")
            seen[i] = t
    return tokens, ids


def _encode_merges(model: M.BPE) -> bytes:
    """(id1, id2, rank) sorted by (id1<<32)|id2, ties in rank order (spec 2.5)."""
    vocab, merges = model.vocab, model.merges
    # One int per merge, id1 | id2 | rank from the high bits down: sorting the ints sorts by
    # (id1<<32)|id2 with ties in rank order, and their 12 big-endian bytes are the three fields.
    try:
        packed = [(vocab[a] << 32 | vocab[b]) << 32 | r for r, (a, b) in enumerate(merges)]
    except KeyError:
        rank, (a, b) = next((r, m) for r, m in enumerate(merges) if m[0] not in vocab or m[1] not in vocab)
        missing = a if a not in vocab else b
        raise UnsupportedError(f"merge {rank} ({a!r} {b!r}) names {missing!r}, which is not in the vocab") from None
    packed.sort()
    out = array(_U32_TYPE)
    for i in range(0, len(packed), _MERGE_CHUNK):  # in chunks: a bytes object per merge only for a chunk's time
        out.frombytes(b"".join(map(int.to_bytes, packed[i:i + _MERGE_CHUNK], repeat(12), repeat("big"))))
    out.byteswap()  # each 4-byte field reversed: big-endian -> little-endian, whatever the host
    return out.tobytes()


# ---------------------------------------------------------------- added tokens, chat, program

def _read_added(r: Reader) -> tuple[AddedToken, ...]:
    n = r.u32("added token count")
    if n * 9 > r.remaining:
        r.fail(f"{n} added tokens cannot fit in {r.remaining} bytes", r.pos - 4)
    out = []
    for _ in range(n):
        i = r.u32("added token id")
        special, lstrip, rstrip = r.bool("special"), r.bool("lstrip"), r.bool("rstrip")
        out.append(AddedToken(i, r.str("added token content"), lstrip=lstrip, rstrip=rstrip,
                              normalized=False, special=special))
    return tuple(out)


def _write_added(w: Writer, added):
    w.u32(len(added))
    for t in added:
        if t.single_word or t.normalized:
            flag = "single_word" if t.single_word else "normalized"
            raise UnsupportedError(f"added token {t.content!r}: the format cannot carry {flag}=True; "
                                   "lower the tokenizer for MNN first")
        if not 0 <= t.id <= MAX_U32:
            raise UnsupportedError(f"added token {t.content!r}: id {t.id} is not a u32")
        w.u32(t.id)
        w.bool(t.special)
        w.bool(t.lstrip)
        w.bool(t.rstrip)
        _str(w, t.content, f"added token {t.id}")


def _program_is_ambiguous(ops) -> bool:
    """Spec 2.9: n0 + 5*n1 == 4*(n0+n1) exactly when n1 == 3*n0."""
    n0 = sum(1 for op in ops if op is None)
    return bool(ops) and len(ops) - n0 == 3 * n0


def _read_program(r: Reader, layout: Layout):
    n = r.u16("op count")
    if n and r.remaining == 4 * n:  # the runtime's legacy "temporary" tail-id form
        layout.legacy_program = True
        ids = [r.u32("tail id") for _ in range(n)]
        layout.warnings.append(f"post program read as the legacy tail-id form (HEAD appends {ids})")
        return PostProgram((None, *ids))
    ops = []
    for _ in range(n):
        op = r.u8("post op")
        if op == PostOp.SEQUENCE_A:
            ops.append(None)
        elif op == PostOp.SPECIAL_TOKEN:
            ops.append(r.u32("post op token id"))
        else:
            r.fail(f"unknown post-processor op {op} (the runtime stops parsing the program here)", r.pos - 1)
    if _program_is_ambiguous(ops) and r.remaining == 1 and r.buf[r.pos] == 0:
        r.pos += 1
        layout.program_pad = True
    return PostProgram(tuple(ops)) if ops else None


def _write_program(w: Writer, program):
    if not isinstance(program, (PostProgram, type(None))):
        raise UnsupportedError(f"post-processor {program.kind} has no .mtok form; lower the tokenizer first")
    ops = () if program is None else program.ops
    if len(ops) > 0xFFFF:
        raise UnsupportedError(f"post program has {len(ops)} ops; the format allows 65535")
    w.u16(len(ops))
    for op in ops:
        if op is None:
            w.u8(PostOp.SEQUENCE_A)
        else:
            if type(op) is not int or not 0 <= op <= MAX_U32:
                raise UnsupportedError(f"post program id {op!r} is not a u32")
            w.u8(PostOp.SPECIAL_TOKEN)
            w.u32(op)
    if _program_is_ambiguous(ops):
        w.u8(0)  # breaks the byte-count equality that makes HEAD read it as legacy tail ids


# ---------------------------------------------------------------- whole file

def _read_section(r: Reader, kind: str, name: str, layout: Layout):
    if kind in FAMILIES:
        return _read_component(r, FAMILIES[kind], layout)
    if kind == "added_tokens":
        return _read_added(r)
    if kind == "program":
        return _read_program(r, layout)
    if kind == "flags":  # the bits are checked once every section is read
        return r.u8(name)
    return getattr(r, kind)(name)  # str, lstr


def _write_section(w: Writer, kind: str, what: str, value):
    if kind in FAMILIES:
        _write_component(w, FAMILIES[kind], value)
    elif kind == "added_tokens":
        _write_added(w, value)
    elif kind == "program":
        _write_program(w, value)
    elif kind == "flags":
        w.u8(FLAG_CLEAN_UP_SPACES if value else 0)
    elif kind == "lstr":
        try:
            w.lstr(value, what)
        except ValueError as e:
            raise UnsupportedError(str(e)) from None
    else:
        _str(w, value, what)


_GET = {spec.attr: attrgetter(spec.attr) for spec in SECTIONS}
_FLAGS = next(spec.attr for spec in SECTIONS if spec.kind == "flags")


def read_mtok(data: bytes, path: str | None = None, strict: bool = True,
              lazy: bool = False) -> tuple[Tokenizer, Layout]:
    """`strict=False` (for `inspect`) reports unsorted vocab and merges as warnings instead of errors.
    `lazy=True` (for `inspect`) checks everything as well, but returns the BPE and WordPiece vocab
    and the merges as views (`mtok/views.py`) that build entries when asked."""
    data = bytes(data)  # slices of the whole-array checks must compare as bytes
    _, (special, stop, prefix), pos = read_header(data, path, expect=FileType.PIPELINE)
    r = Reader(data, pos, path)
    r.strict, r.lazy = strict, lazy
    r.warn = lambda msg: None if msg in layout.warnings else layout.warnings.append(msg)
    layout = Layout(size=len(data), header_size=pos)
    values: dict = {}  # IR attribute (`chat.<field>` for the chat template's) -> value
    optional = False
    for spec in SECTIONS:
        optional = optional or spec.name == FIRST_OPTIONAL
        start = r.pos
        r.section = spec.name
        if optional and r.remaining == 0:
            layout.sections.append(Section(spec.name, start, 0, present=False, doc=spec.doc))
            continue
        values[spec.attr] = _read_section(r, spec.kind, spec.name, layout)
        layout.sections.append(Section(spec.name, start, r.pos - start, doc=spec.doc))
    if r.remaining:
        r.section = None
        r.fail(f"{r.remaining} trailing byte(s) after the last section")
    flags = values.get(_FLAGS, 0)
    if flags & ~FLAG_CLEAN_UP_SPACES:
        raise FormatError(f"unknown flag bits 0x{flags:02x}", offset=_offset(layout, "flags"),
                          section="flags", path=path)
    values[_FLAGS] = bool(flags & FLAG_CLEAN_UP_SPACES)
    chat = ChatTemplate(**{k[5:]: v for k, v in values.items() if k.startswith("chat.")}, source=str(path or ""))
    tok = Tokenizer(**{k: v for k, v in values.items() if not k.startswith("chat.")},
                    special_ids=special, stop_ids=stop, prefix_ids=prefix, chat=chat,
                    meta=Metadata(stop_sources=tuple((i, "mtok header") for i in stop)))
    layout.warnings.extend(_id_warnings(tok))
    return tok, layout


def _offset(layout: Layout, name: str) -> int:
    return next(s.offset for s in layout.sections if s.name == name)


def _id_warnings(tok: Tokenizer) -> list[str]:
    n = len(tok.model.vocab)  # every model's vocab has one entry per id (a Unigram's is its piece list)
    out = []
    for what, ids in (("special", tok.special_ids), ("stop", tok.stop_ids), ("prefix", tok.prefix_ids),
                      ("added token", [t.id for t in tok.added_tokens]),
                      ("post program", [i for i in getattr(tok.post_processor, "ops", ()) if i is not None])):
        beyond = sorted({i for i in ids if i >= n})
        if beyond:
            out.append(f"{what} id(s) {beyond[:8]} are beyond the model vocab ({n}): "
                       "the runtime decodes them to an empty string")
    return out


def write_mtok(tok: Tokenizer) -> bytes:
    w = Writer()
    w.raw(write_header(FileType.PIPELINE, (tok.special_ids, tok.stop_ids, tok.prefix_ids)))
    for spec in SECTIONS:
        _write_section(w, spec.kind, spec.what, _GET[spec.attr](tok))
    return w.getvalue()


def check_written(data: bytes, path=None) -> Tokenizer:
    """Read bytes about to be written back with the strict reader, so nothing reaches the disk
    that `inspect` (or MNN) would reject or misread; call before the rename.  -> the IR read (its
    vocab and merges as views: every check runs, the tables are not rebuilt)."""
    try:
        return read_mtok(data, path, strict=True, lazy=True)[0]
    except MtokError as e:
        raise UnsupportedError(f"refusing to write {path or 'the file'}: the strict reader rejects it ({e}); "
                               "the input holds a value the format cannot carry") from None
