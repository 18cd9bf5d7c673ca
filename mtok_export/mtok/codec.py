"""The wire kinds of the `.mtok` body (spec section 2): one object per kind, its read and its write
side by side (construct's parse/build), so the two directions cannot drift and adding a kind is one
class.  `schema.py` declares the body with these objects; `file.py` walks the declaration over a
whole file.

`kind.read(r, ctx)` parses the kind's bytes at the reader's position and returns the IR value (a
`Count` returns the wire value, which the IR never holds); it checks every invariant the runtime
silently relies on (sorted tables, dense ids, known codes) and fails with a `FormatError` naming
the section and offset.  `kind.write(w, value, ctx)` lays the IR value out and refuses, with an
`UnsupportedError`, anything the runtime would misread (lowering must have removed it first).

A full read checks the vocab and merge tables (most of a file) entry by entry as it builds the IR.
A lazy read (`inspect`, `check_written`) checks them on whole arrays and returns views; a failed
check re-reads the table entry by entry, which finds the first bad entry and its offset, so both
reads fail alike."""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field
from itertools import islice, repeat
from operator import le, lt

from ..errors import FormatError, UnsupportedError
from ..ir import AddedToken, Pattern
from ..ir import models as M
from ..ir.processors import PostProgram
from ..unicode.tables import u32_array
from .constants import ALIAS_MARK, FLAG_CLEAN_UP_SPACES, MAX_U16, MAX_U32, PostOp
from .layout import Layout
from .normtable import decode_table, encode_table
from .primitives import F64, U32, Reader, Writer
from .views import IdVocab, RankedMerges, Utf8Tokens, scatter

_MAX_DEPTH = 64
_LITTLE = sys.byteorder == "little"
_U32_TYPE = u32_array(b"").typecode  # the array type whose items are 4 bytes
_MERGE_CHUNK = 1 << 15


@dataclass(slots=True)
class Context:
    """What a kind sees besides its own bytes (construct's context).  Reading and writing fill it
    differently: each names the field as its own messages do."""

    name: str = ""  # the field or section, as the spec spells it
    what: str = ""  # the field or section, as messages name it
    layout: Layout | None = None  # reading: where warnings (and the post program's form) go
    family: Family | None = None  # the component family whose field this is
    depth: int = 0  # reading: how deep the component is nested
    obj: object = None  # writing: the component whose field this is
    values: dict = field(default_factory=dict)  # reading: the component's IR attributes read so far
    wire: dict = field(default_factory=dict)  # reading: what the file holds and the IR does not
    checks: list = field(default_factory=list)  # reading: run once the whole component is read


class Kind:
    """One wire kind.  `in_ir`: the value read is an IR attribute (False: only the wire has it)."""

    in_ir = True

    def read(self, r: Reader, ctx: Context):
        raise NotImplementedError

    def write(self, w: Writer, value, ctx: Context) -> None:
        raise NotImplementedError


# ---------------------------------------------------------------- scalars and strings (spec 2.1)

class Bool(Kind):
    def read(self, r, ctx):
        return r.bool(ctx.what)

    def write(self, w, value, ctx):
        w.bool(value)


class U32Kind(Kind):
    def read(self, r, ctx):
        return r.u32(ctx.what)

    def write(self, w, value, ctx):
        if not 0 <= value <= MAX_U32:
            raise UnsupportedError(f"{ctx.what}={value} is not a u32")
        w.u32(value)


class Str(Kind):
    """u16 length + UTF-8."""

    def read(self, r, ctx):
        return r.str(ctx.what)

    def write(self, w, value, ctx):
        _str(w, value, ctx.what)


class LStr(Kind):
    """u32 length + UTF-8 (the chat template)."""

    def read(self, r, ctx):
        return r.lstr(ctx.what)

    def write(self, w, value, ctx):
        try:
            w.lstr(value, ctx.what)
        except ValueError as e:  # the message names the field already
            raise UnsupportedError(str(e)) from None


def _str(w: Writer, s: str, what: str):
    try:
        w.str(s, what)
    except UnicodeEncodeError as e:
        raise UnsupportedError(f"{what}: not valid Unicode ({e.reason})") from None
    except ValueError as e:  # the message names `what` already
        raise UnsupportedError(str(e)) from None


class PatternKind(Kind):
    """A str holding an HF `Pattern`: a literal `String` or, with `regex`, an Oniguruma `Regex`
    (the component's code says which; the file does not)."""

    def __init__(self, regex: bool):
        self.regex = regex

    def read(self, r, ctx):
        return Pattern(r.str(ctx.what), regex=self.regex)

    def write(self, w, value, ctx):
        if value.regex != self.regex:
            need = "a regex" if self.regex else "a literal string"
            raise UnsupportedError(f"{ctx.what} must be {need} here; lower the tokenizer for MNN first")
        _str(w, value.value, ctx.what)


class Scheme(Kind):
    """A bool `add_prefix_space` holding a Metaspace `prepend_scheme` (the runtime has two of HF's three)."""

    def read(self, r, ctx):
        return "always" if r.bool(ctx.what) else "never"

    def write(self, w, value, ctx):
        if value not in ("always", "never"):
            raise UnsupportedError(f"{ctx.what}={value!r}: the format has only always/never")
        w.bool(value == "always")


class Choice(Kind):
    """A u8 indexing `names` (the Split behaviors, spec 2.4)."""

    def __init__(self, names: tuple[str, ...]):
        self.names = names

    def read(self, r, ctx):
        v = r.u8(ctx.what)
        if v >= len(self.names):
            r.fail(f"{ctx.what}: unknown Split behavior {v} (MNN writes 0, 1 or 2)", r.pos - 1)
        return self.names[v]

    def write(self, w, value, ctx):
        if value not in self.names:
            raise UnsupportedError(f"{ctx.what}={value!r}: the runtime has only {', '.join(self.names)}")
        w.u8(self.names.index(value))


# ---------------------------------------------------------------- components (spec 2.3, 2.4, 2.6)

@dataclass(frozen=True)
class Variant:
    """One component code and its IR class: `fields` are the (IR attribute, kind) pairs in file
    order; `fixed` the values of the IR attributes the format does not carry (the reader fills
    them in, the writer refuses anything else)."""

    code: int
    cls: type
    fields: tuple[tuple[str, Kind], ...] = ()
    fixed: dict = field(default_factory=dict)
    when: object = None  # predicate on the IR value when several codes share a class


@dataclass(frozen=True, eq=False)
class Family(Kind):
    """A component of one family: a u8 code, then the fields of its variant."""

    name: str
    variants: tuple[Variant, ...]
    code_what: str  # the code byte, as error messages name it
    on_unknown: str  # why an unknown code is fatal
    null_code: int | None = None  # the code meaning "no component" (the decoder's 0 is ByteLevel)
    noop_codes: dict = field(default_factory=dict)  # code -> warning; read as "no component"
    by_code: dict = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "by_code", {v.code: v for v in self.variants})

    def read(self, r, ctx):
        return self.read_component(r, ctx.layout, ctx.depth)

    def write(self, w, value, ctx):
        self.write_component(w, value)

    def read_component(self, r: Reader, layout: Layout, depth: int):
        if depth > _MAX_DEPTH:
            r.fail(f"{self.name} nesting deeper than {_MAX_DEPTH}")
        start = r.pos
        code = r.u8(self.code_what)
        if code == self.null_code:
            return None
        if code in self.noop_codes:
            layout.warnings.append(self.noop_codes[code])
            return None
        variant = self.by_code.get(code)
        if variant is None:
            r.fail(f"unknown {self.code_what} {code} ({self.on_unknown})", start)
        ctx = Context(layout=layout, family=self, depth=depth, values=dict(variant.fixed))
        for name, kind in variant.fields:
            ctx.name, ctx.what = name, f"{self.name}.{name}"
            ctx.wire[name, "at"] = r.pos
            value = kind.read(r, ctx)
            (ctx.values if kind.in_ir else ctx.wire)[name] = value
        for check in ctx.checks:
            check()
        return variant.cls(**ctx.values)

    def write_component(self, w: Writer, obj) -> None:
        if obj is None:
            if self.null_code is None:
                raise UnsupportedError(f"the .mtok format has no 'none' {self.name} "
                                       f"(code 0 is {self.variants[0].cls.__name__})")
            w.u8(self.null_code)
            return
        v = self._variant_for(obj)
        for k, want in v.fixed.items():
            got = getattr(obj, k)
            if got != want:
                raise UnsupportedError(f"the .mtok format cannot carry {self.name} {obj.kind} with {k}={got!r} "
                                       f"(only {want!r}); lower the tokenizer for MNN first")
        w.u8(v.code)
        ctx = Context(family=self, obj=obj)
        for name, kind in v.fields:
            ctx.name = name
            if kind.in_ir:
                ctx.what = f"{self.name} {obj.kind}.{name}"
                kind.write(w, getattr(obj, name), ctx)
            else:
                kind.write(w, None, ctx)

    def _variant_for(self, obj) -> Variant:
        for v in self.variants:
            if type(obj) is v.cls and (v.when is None or v.when(obj)):
                return v
        raise UnsupportedError(f"the .mtok format has no code for {self.name} "
                               f"{getattr(obj, 'kind', type(obj).__name__)} (lower the tokenizer for MNN first)")


class Children(Kind):
    """u32 count + components of the enclosing component's family (a Sequence's)."""

    def read(self, r, ctx):
        family, what = ctx.family, ctx.what
        n = r.u32(f"{what} count")
        if n > r.remaining:
            r.fail(f"{what}: {n} children cannot fit in {r.remaining} bytes", r.pos - 4)
        children = []
        for _ in range(n):
            child = family.read_component(r, ctx.layout, ctx.depth + 1)
            if child is None:
                ctx.layout.warnings.append(f"null {family.name} inside a Sequence: the runtime skips it")
            else:
                children.append(child)
        return tuple(children)

    def write(self, w, value, ctx):
        w.u32(len(value))
        for child in value:
            ctx.family.write_component(w, child)


class Table(Kind):
    """A NormTable (spec 2.3.1; `normtable.py` is its codec)."""

    def read(self, r, ctx):
        try:
            entries, r.pos = decode_table(r.buf, r.pos)
        except FormatError as e:  # the table's codec knows offsets, not the section or the file
            raise FormatError(e.message, offset=e.offset, section=r.section, path=r.path) from None
        return entries

    def write(self, w, value, ctx):
        try:
            w.raw(encode_table(value))
        except ValueError as e:
            raise UnsupportedError(f"{ctx.what}: {e}") from None


class BertTable(Table):
    """The BERT normalizer's NFD table: present exactly when `strip_accents` is set."""

    def read(self, r, ctx):
        return super().read(r, ctx) if ctx.values["strip_accents"] else ()

    def write(self, w, value, ctx):
        if ctx.obj.strip_accents:
            super().write(w, value, ctx)
        elif value:
            raise UnsupportedError(f"{ctx.what}: an NFD table is only written when strip_accents is set")


# ---------------------------------------------------------------- the model body (spec 2.5)
# The counts come first, the tables they count last: a `Count` records where it was for the
# table's messages, and is computed on write (construct's `Rebuild`), never stored in the IR.

class Count(Kind):
    """u32 length of the field `of` names."""

    in_ir = False

    def __init__(self, of: str):
        self.of = of

    def read(self, r, ctx):
        at = r.pos
        n = r.u32(ctx.name)  # named as the spec names it: vocab_size, merge_size
        ctx.wire["count of", self.of] = ctx.name, n, at
        return n

    def write(self, w, value, ctx):
        w.u32(len(getattr(ctx.obj, self.of)))


class VocabId(Kind):
    """u32 that must name a vocab entry (checked once the vocab, later in the model, is read)."""

    def read(self, r, ctx):
        at, name, wire = r.pos, ctx.name, ctx.wire
        value = r.u32(ctx.what)

        def check():
            if value >= len(wire["tokens"]):
                r.fail(f"{name} {value} is outside the vocab of {len(wire['tokens'])}", at)

        ctx.checks.append(check)
        return value

    def write(self, w, value, ctx):
        if value is None:
            raise UnsupportedError(f"{ctx.obj.kind} model without {ctx.name}: the format needs one")
        if not 0 <= value <= MAX_U32:
            raise UnsupportedError(f"{ctx.what}={value} is not a u32")
        w.u32(value)


class Vocab(Kind):
    """{str token, u32 id} x its count, sorted by token bytes; a dict token -> id in the IR."""

    scored = False
    smallest = 6  # bytes of an entry with an empty token

    def read(self, r, ctx):
        count, n, at = ctx.wire["count of", ctx.name]
        if n * self.smallest > r.remaining:
            r.fail(f"{count} {n} cannot fit in the {r.remaining} bytes left", at)
        tokens, scores = _read_vocab(r, n, with_score=self.scored)
        aliases = ()
        if isinstance(tokens, tuple):  # a BPE vocab with aliases (`_read_vocab_entries`)
            tokens, aliases = tokens
        ctx.wire["tokens"] = tokens
        if aliases:  # aliases first: inverting the dict keeps each id's own text, as the runtime does
            return {**dict(aliases), **dict(zip(tokens, range(len(tokens))))}
        return self.value(r, tokens, scores)

    def value(self, r, tokens, scores):
        return IdVocab(tokens) if r.lazy else dict(zip(tokens, range(len(tokens))))

    def write(self, w, value, ctx):
        w.raw(_encode_vocab(*_dense_sorted(value), None))


class ScoredVocab(Vocab):
    """{str token, u32 id, f64 score} x its count; in the IR a list of (piece, score), the id its
    position."""

    scored = True
    smallest = 14

    def value(self, r, tokens, scores):
        return tuple(zip(tokens, scores))

    def write(self, w, value, ctx):
        order = sorted(range(len(value)), key=lambda i: value[i][0])
        w.raw(_encode_vocab([value[i][0] for i in order], order, [value[i][1] for i in order]))


class Merges(Kind):
    """{u32 id1, u32 id2, u32 rank} x its count; the pairs in rank order in the IR."""

    def read(self, r, ctx):
        return _read_merges(r, ctx.wire["count of", ctx.name][1], ctx.wire["tokens"])

    def write(self, w, value, ctx):
        w.raw(_encode_merges(ctx.obj))


# ---------------------------------------------------------------- vocab and merge tables (spec 2.5)
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


_ALIAS = ALIAS_MARK.encode()


def _read_vocab_entries(r: Reader, n: int, with_score: bool):
    """Entry by entry, stopping at the first broken one with its offset (lenient: warning on an
    unsorted entry and going on)."""
    buf, pos, end = r.buf, r.pos, len(r.buf)
    first = pos
    tail = 12 if with_score else 4
    by_id: list = [None] * n
    aliases: list = []
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
        if i >= n or (by_id[i] is not None and (with_score or not by_id[i].startswith(_ALIAS))):
            r.pos = e
            r.fail(f"vocab id {i} is " + ("beyond vocab_size %d" % n if i >= n else "used twice")
                   + " (ids must be dense 0..vocab_size-1)")
        if by_id[i] is not None:  # an alias (`aliased_vocab`): the runtime keeps the later text for the id
            aliases.append((by_id[i], i))
        by_id[i] = tok
        if with_score:
            scores[i] = unpack_f64(buf, e + 4)[0]
        prev = tok
        pos = e + tail
    if aliases:  # k aliases leave exactly k id slots unused: they must be the top ones
        k = len(aliases)
        if any(b is None for b in by_id[:n - k]):
            r.pos = first
            r.fail(f"vocab ids are not dense: {k} text(s) share an id and id {by_id.index(None)} has none "
                   "(aliases leave only the top ids unused)")
        by_id = by_id[:n - k]
    try:
        tokens = [b.decode("utf-8") for b in by_id]
        if aliases:
            aliases = [(b.decode("utf-8"), i) for b, i in aliases]
    except UnicodeDecodeError:
        at = first  # find the entry again, for its offset (r.pos moved with the lenient warnings)
        while _is_utf8(buf[at + 2:at + 2 + (buf[at] | buf[at + 1] << 8)]):
            at += 2 + (buf[at] | buf[at + 1] << 8) + tail
        r.fail(f"vocab token {buf[at + 2:at + 2 + (buf[at] | buf[at + 1] << 8)]!r} is not valid UTF-8", at)
    r.pos = pos
    return ((tokens, tuple(aliases)) if aliases else tokens), scores


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
    be dense 0..n-1: the runtime writes id_to_token[id] unchecked.  A BPE vocab may give one id
    several texts (aliases, `lower.whole_words`): the runtime keeps the last in this order as the
    id's text and looks each up as its id; the ids stay dense 0..k-1, and the k entries more than
    ids leave the top k ids of vocab_size without a text (decoded as '')."""
    n = len(vocab)
    tokens = sorted(vocab)
    ids = list(map(vocab.__getitem__, tokens))
    distinct = len(set(ids))
    if distinct != n:
        last = {i: t for t, i in zip(tokens, ids)}
        bad = next(((t, i) for t, i in zip(tokens, ids) if last[i] != t and not t.startswith(ALIAS_MARK)), None)
        if bad is not None:
            raise UnsupportedError(f"vocab id {bad[1]} is used by both {bad[0]!r} and {last[bad[1]]!r}")
    if n and (min(ids) != 0 or max(ids) != distinct - 1 or set(map(type, ids)) != {int}):
        for t, i in zip(tokens, ids):
            if type(i) is not int or not 0 <= i < n:
                raise UnsupportedError(f"vocab id {i!r} ({t!r}) is outside 0..{n - 1}: ids must be dense "
                                       "(the runtime writes id_to_token[id] unchecked)")
        gap = min(set(range(distinct)) - set(ids))
        raise UnsupportedError(f"vocab id {gap} has no text: ids must be dense (the runtime writes "
                               "id_to_token[id] unchecked)")
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


# ---------------------------------------------------------------- added tokens, flags, post program

class AddedTokens(Kind):
    """u32 n x {u32 id, bool special, bool lstrip, bool rstrip, str content} (spec 2.7)."""

    def read(self, r, ctx):
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

    def write(self, w, value, ctx):
        w.u32(len(value))
        for t in value:
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


class Flags(Kind):
    """u8 holding the bool `clean_up_tokenization_spaces` in bit 0.  The reader returns the byte:
    `file.py` checks its other bits once every section is read."""

    def read(self, r, ctx):
        return r.u8(ctx.what)

    def write(self, w, value, ctx):
        w.u8(FLAG_CLEAN_UP_SPACES if value else 0)


class Program(Kind):
    """u16 n x {u8 op [u32 id]}: the post-processor as MNN runs it (spec 2.9)."""

    def read(self, r, ctx):
        layout = ctx.layout
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

    def write(self, w, value, ctx):
        if not isinstance(value, (PostProgram, type(None))):
            raise UnsupportedError(f"post-processor {value.kind} has no .mtok form; lower the tokenizer first")
        ops = () if value is None else value.ops
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


def _program_is_ambiguous(ops) -> bool:
    """Spec 2.9: n0 + 5*n1 == 4*(n0+n1) exactly when n1 == 3*n0."""
    n0 = sum(1 for op in ops if op is None)
    return bool(ops) and len(ops) - n0 == 3 * n0
