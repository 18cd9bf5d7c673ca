"""Read and write `.mtok` (MNN type 4, "pipeline") files, driven by `schema.py` (spec section 2).

`write_mtok(tok)` needs a tokenizer already lowered for MNN (every component has a code); it
refuses anything else rather than write what the runtime would misread.  `read_mtok(data)` checks
every invariant the runtime silently relies on (sorted tables, dense ids, known codes, no trailing
bytes) and returns the IR with a `Layout` of section offsets for `inspect`."""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field

from ..errors import FormatError, MtokError, UnsupportedError
from ..ir import AddedToken, ChatTemplate, Pattern, Tokenizer
from ..ir import models as M
from ..ir.processors import PostProgram
from .constants import FLAG_CLEAN_UP_SPACES, MAX_U32, FileType, ModelCode, NormalizerCode, PostOp
from .header import read_header, write_header
from .primitives import Reader, Writer
from .schema import FAMILIES, FIRST_OPTIONAL, NULL_CODE, SECTIONS, Variant

_U16, _U32, _F64 = struct.Struct("<H"), struct.Struct("<I"), struct.Struct("<d")
_BY_CODE = {fam: {v.code: v for v in vs} for fam, vs in FAMILIES.items()}
_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious")  # index = wire value
_MAX_DEPTH = 64


@dataclass
class Section:
    name: str
    offset: int
    size: int
    present: bool = True


@dataclass
class Layout:
    """Where everything is in a file: for `inspect` and for error messages."""

    size: int = 0
    header_size: int = 0
    sections: list[Section] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    legacy_program: bool = False  # post program read as the "temporary" tail-id form
    program_pad: bool = False  # one 0x00 after the program, written to avoid spec 2.9 ambiguity


# ---------------------------------------------------------------- components

def _read_component(r: Reader, family: str, layout: Layout, depth: int = 0):
    if depth > _MAX_DEPTH:
        r.fail(f"{family} nesting deeper than {_MAX_DEPTH}")
    start = r.pos
    code = r.u8(f"{family} code")
    if family in NULL_CODE and code == NULL_CODE[family]:
        return None
    if family == "normalizer" and code == NormalizerCode.NFKC_OLD:
        layout.warnings.append("normalizer code 1 (old NFKC) has an empty table: a no-op in every runtime")
        return None
    variant = _BY_CODE[family].get(code)
    if variant is None:
        r.fail(f"unknown {family} code {code} (the runtime would desynchronize here)", start)
    kwargs = dict(variant.fixed)
    for name, kind in variant.fields:
        kwargs[name] = _read_field(r, kind, family, name, kwargs, layout, depth)
    return variant.cls(**kwargs)


def _read_field(r: Reader, kind: str, family: str, name: str, done: dict, layout: Layout, depth: int):
    what = f"{family}.{name}"
    if kind in ("bool", "u8", "u32", "f64", "str"):
        return getattr(r, kind)(what)
    if kind == "pattern":
        return Pattern(r.str(what))
    if kind == "regex":
        return Pattern(r.str(what), regex=True)
    if kind == "scheme":
        return "always" if r.bool(what) else "never"
    if kind == "behavior":
        v = r.u8(what)
        if v >= len(_BEHAVIORS):
            r.fail(f"{what}: unknown Split behavior {v} (MNN writes 0, 1 or 2)", r.pos - 1)
        return _BEHAVIORS[v]
    if kind == "children":
        n = r.u32(f"{what} count")
        if n > r.remaining:
            r.fail(f"{what}: {n} children cannot fit in {r.remaining} bytes", r.pos - 4)
        children = []
        for _ in range(n):
            child = _read_component(r, family, layout, depth + 1)
            if child is None:
                layout.warnings.append(f"null {family} inside a Sequence: the runtime skips it")
            else:
                children.append(child)
        return tuple(children)
    if kind == "table" or (kind == "bert_table" and done["strip_accents"]):
        from ..unicode.tables import decode_table
        try:
            entries, r.pos = decode_table(r.buf, r.pos)
        except FormatError as e:
            raise FormatError(e.message, offset=e.offset, section=r.section, path=r.path) from None
        return entries
    if kind == "bert_table":
        return ()
    raise AssertionError(kind)


def _variant_for(family: str, obj) -> Variant:
    for v in FAMILIES[family]:
        if type(obj) is v.cls and (v.when is None or v.when(obj)):
            return v
    raise UnsupportedError(f"the .mtok format has no code for {family} {getattr(obj, 'kind', type(obj).__name__)}"
                           " (lower the tokenizer for MNN first)")


def _check_fixed(family: str, obj, v: Variant):
    for k, want in v.fixed.items():
        got = getattr(obj, k)
        if got != want:
            raise UnsupportedError(f"the .mtok format cannot carry {family} {obj.kind} with {k}={got!r} "
                                   f"(only {want!r}); lower the tokenizer for MNN first")


def _write_component(w: Writer, family: str, obj):
    if obj is None:
        if family not in NULL_CODE:
            raise UnsupportedError(f"the .mtok format has no 'none' {family} (code 0 is ByteLevel)")
        w.u8(NULL_CODE[family])
        return
    v = _variant_for(family, obj)
    _check_fixed(family, obj, v)
    w.u8(v.code)
    for name, kind in v.fields:
        _write_field(w, kind, family, obj, name)


def _write_field(w: Writer, kind: str, family: str, obj, name: str):
    value, what = getattr(obj, name), f"{family} {obj.kind}.{name}"
    if kind in ("bool", "u8", "u32", "f64"):
        if kind == "u32" and not 0 <= value <= MAX_U32:
            raise UnsupportedError(f"{what}={value} is not a u32")
        getattr(w, kind)(value)
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
        if value not in _BEHAVIORS:
            raise UnsupportedError(f"{what}={value!r}: the runtime has only {', '.join(_BEHAVIORS)}")
        w.u8(_BEHAVIORS.index(value))
    elif kind == "children":
        w.u32(len(value))
        for child in value:
            _write_component(w, family, child)
    elif kind == "table" or (kind == "bert_table" and obj.strip_accents):
        from ..unicode.tables import encode_table
        try:
            w.raw(encode_table(value))
        except ValueError as e:
            raise UnsupportedError(f"{what}: {e}") from None
    elif kind == "bert_table":
        if value:
            raise UnsupportedError(f"{what}: an NFD table is only written when strip_accents is set")
    else:
        raise AssertionError(kind)


def _str(w: Writer, s: str, what: str):
    try:
        w.str(s, what)
    except UnicodeEncodeError as e:
        raise UnsupportedError(f"{what}: not valid Unicode ({e.reason})") from None
    except ValueError as e:  # the message names `what` already
        raise UnsupportedError(str(e)) from None


# ---------------------------------------------------------------- model (spec 2.5)

def _read_model(r: Reader, layout: Layout):
    start = r.pos
    code = r.u8("model type")
    variant = _BY_CODE["model"].get(code)
    if variant is None:
        r.fail(f"unknown model type {code} (the runtime would crash on encode)", start)
    n = r.u32("vocab_size")
    kwargs = dict(variant.fixed)
    for name, kind in variant.fields:
        kwargs[name] = _read_field(r, kind, "model", name, kwargs, layout, 0)
    n_merges = r.u32("merge_size") if code == ModelCode.BPE else 0
    per_entry = 14 if code == ModelCode.UNIGRAM else 6  # smallest entry: empty string
    if n * per_entry > r.remaining:
        r.fail(f"vocab_size {n} cannot fit in the {r.remaining} bytes left", start + 1)
    tokens, scores = _read_vocab(r, n, with_score=code == ModelCode.UNIGRAM)
    if code == ModelCode.UNIGRAM:
        if kwargs["unk_id"] >= n:
            r.fail(f"unk_id {kwargs['unk_id']} is outside the vocab of {n}", start + 5)
        return M.Unigram(vocab=tuple(zip(tokens, scores)), **kwargs)
    vocab = {t: i for i, t in enumerate(tokens)}
    if code == ModelCode.WORDPIECE:
        return M.WordPiece(vocab=vocab, **kwargs)
    return M.BPE(vocab=vocab, merges=_read_merges(r, n_merges, tokens), **kwargs)


def _read_vocab(r: Reader, n: int, with_score: bool):
    buf, pos, end = r.buf, r.pos, len(r.buf)
    first = pos
    tail = 12 if with_score else 4
    by_id: list = [None] * n
    scores = [0.0] * n if with_score else None
    prev = None
    unpack_u32, unpack_f64 = _U32.unpack_from, _F64.unpack_from
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
    start = r.need(12 * n, f"{n} merges")
    flat = struct.unpack_from(f"<{3 * n}I", r.buf, start)
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


def _write_model(w: Writer, model):
    v = _variant_for("model", model)
    _check_fixed("model", model, v)
    if isinstance(model, M.Unigram):
        if model.unk_id is None:
            raise UnsupportedError("Unigram model without unk_id: the format needs one")
        order = sorted(range(len(model.vocab)), key=lambda i: model.vocab[i][0])
        tokens = [model.vocab[i][0] for i in order]
        ids = order
    else:
        tokens, ids = _dense_sorted(model.vocab)
    w.u8(v.code)
    w.u32(len(tokens))
    for name, kind in v.fields:
        _write_field(w, kind, "model", model, name)
    if isinstance(model, M.BPE):
        w.u32(len(model.merges))
    w.raw(_encode_vocab(tokens, ids, [model.vocab[i][1] for i in ids] if isinstance(model, M.Unigram) else None))
    if isinstance(model, M.BPE):
        w.raw(_encode_merges(model))


def _encode_vocab(tokens: list[str], ids: list[int], scores) -> bytes:
    """Entries in the given (sorted) order: str token, u32 id [, f64 score]."""
    try:
        encoded = [t.encode("utf-8") for t in tokens]
    except UnicodeEncodeError:
        bad = next(t for t in tokens if not _encodable(t))
        raise UnsupportedError(f"vocab token {bad!r} is not valid Unicode (a lone surrogate?)") from None
    if scores is not None:  # Unigram lists can repeat a piece; dict vocabs cannot
        for b, t, prev in zip(encoded[1:], tokens[1:], encoded):
            if b == prev:
                raise UnsupportedError(f"vocab token {t!r} appears twice")
    if encoded and max(map(len, encoded)) > 0xFFFF:
        i = next(k for k, b in enumerate(encoded) if len(b) > 0xFFFF)
        raise UnsupportedError(f"vocab token id {ids[i]} is {len(encoded[i])} bytes; the format allows 65535")
    pack_h, pack_i, pack_d = _U16.pack, _U32.pack, _F64.pack
    if scores is None:
        return b"".join([pack_h(len(b)) + b + pack_i(i) for b, i in zip(encoded, ids)])
    return b"".join([pack_h(len(b)) + b + pack_i(i) + pack_d(s) for b, i, s in zip(encoded, ids, scores)])


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
    try:
        left = [vocab[a] for a, _ in merges]
        right = [vocab[b] for _, b in merges]
    except KeyError:
        rank, (a, b) = next((r, m) for r, m in enumerate(merges) if m[0] not in vocab or m[1] not in vocab)
        missing = a if a not in vocab else b
        raise UnsupportedError(f"merge {rank} ({a!r} {b!r}) names {missing!r}, which is not in the vocab") from None
    keys = [x << 32 | y for x, y in zip(left, right)]
    order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: equal pairs keep rank order
    out = array("I", bytes(12 * len(keys)))
    out[0::3] = array("I", [left[k] for k in order])
    out[1::3] = array("I", [right[k] for k in order])
    out[2::3] = array("I", order)
    if sys.byteorder == "big":
        out.byteswap()
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

def read_mtok(data: bytes, path: str | None = None, strict: bool = True) -> tuple[Tokenizer, Layout]:
    """`strict=False` (for `inspect`) reports unsorted vocab and merges as warnings instead of errors."""
    _, (special, stop, prefix), pos = read_header(data, path, expect=FileType.PIPELINE)
    r = Reader(data, pos, path)
    r.strict = strict
    r.warn = lambda msg: None if msg in layout.warnings else layout.warnings.append(msg)
    layout = Layout(size=len(data), header_size=pos)
    values: dict = {}
    optional = False
    for name, kind, _doc in SECTIONS:
        optional = optional or name == FIRST_OPTIONAL
        start = r.pos
        r.section = name
        if optional and r.remaining == 0:
            layout.sections.append(Section(name, start, 0, present=False))
            continue
        if kind == "component":
            values[name] = _read_component(r, name, layout)
        elif kind == "model":
            values[name] = _read_model(r, layout)
        elif kind == "added_tokens":
            values[name] = _read_added(r)
        elif kind == "program":
            values[name] = _read_program(r, layout)
        else:
            values[name] = getattr(r, kind)(name)
        layout.sections.append(Section(name, start, r.pos - start))
    if r.remaining:
        r.section = None
        r.fail(f"{r.remaining} trailing byte(s) after the last section")
    flags = values.get("flags", 0)
    if flags & ~FLAG_CLEAN_UP_SPACES:
        raise FormatError(f"unknown flag bits 0x{flags:02x}", offset=_offset(layout, "flags"),
                          section="flags", path=path)
    chat = ChatTemplate(values.get("chat_template", ""), values.get("bos", ""), values.get("eos", ""),
                        bool(flags & FLAG_CLEAN_UP_SPACES), source=str(path or ""))
    tok = Tokenizer(model=values["model"], normalizer=values["normalizer"],
                    pre_tokenizer=values["pre_tokenizer"], decoder=values["decoder"],
                    post_processor=values.get("post_program"), added_tokens=values["added_tokens"],
                    special_ids=special, stop_ids=stop, prefix_ids=prefix, chat=chat)
    layout.warnings.extend(_id_warnings(tok))
    return tok, layout


def _offset(layout: Layout, name: str) -> int:
    return next(s.offset for s in layout.sections if s.name == name)


def _id_warnings(tok: Tokenizer) -> list[str]:
    n = len(M.vocab_of(tok.model))
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
    _write_component(w, "normalizer", tok.normalizer)
    _write_component(w, "pre_tokenizer", tok.pre_tokenizer)
    _write_model(w, tok.model)
    _write_component(w, "decoder", tok.decoder)
    _write_added(w, tok.added_tokens)
    chat = tok.chat
    try:
        w.lstr(chat.text, "chat template")
    except ValueError as e:
        raise UnsupportedError(str(e)) from None
    _str(w, chat.eos_token, "eos token")
    w.u8(FLAG_CLEAN_UP_SPACES if chat.clean_up_tokenization_spaces else 0)
    _str(w, chat.bos_token, "bos token")
    _write_program(w, tok.post_processor)
    return w.getvalue()


def check_written(data: bytes, path=None) -> Tokenizer:
    """Read bytes about to be written back with the strict reader, so nothing reaches the disk
    that `inspect` (or MNN) would reject or misread; call before the rename.  -> the IR read."""
    try:
        return read_mtok(data, path, strict=True)[0]
    except MtokError as e:
        raise UnsupportedError(f"refusing to write {path or 'the file'}: the strict reader rejects it ({e}); "
                               "the input holds a value the format cannot carry") from None
