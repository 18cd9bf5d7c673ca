"""Read and write whole `.mtok` (MNN type 4, "pipeline") files: the header, then `schema.SECTIONS`
in order, each read and written by its wire kind (spec sections 1 and 2).

`write_mtok(tok)` needs a tokenizer already lowered for MNN (every component has a code); it
refuses anything else rather than write what the runtime would misread.  `read_mtok(data)` checks
every invariant the runtime silently relies on (sorted tables, dense ids, known codes, no trailing
bytes) and returns the IR with a `Layout` of section offsets for `inspect`."""

from __future__ import annotations

from operator import attrgetter

from ..errors import FormatError, MtokError, UnsupportedError
from ..ir import ChatTemplate, Metadata, Tokenizer
from .codec import Context
from .constants import FLAG_CLEAN_UP_SPACES, FileType
from .header import read_header, write_header
from .layout import Layout, Section
from .primitives import Reader, Writer
from .schema import FIRST_OPTIONAL, FLAGS, SECTIONS

_GET = {spec.attr: attrgetter(spec.attr) for spec in SECTIONS}
_FLAGS = next(spec.attr for spec in SECTIONS if spec.kind is FLAGS)


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
        values[spec.attr] = spec.kind.read(r, Context(spec.name, spec.name, layout))
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
        spec.kind.write(w, _GET[spec.attr](tok), Context(spec.name, spec.what))
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
