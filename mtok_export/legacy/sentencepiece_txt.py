"""Legacy `tokenizer.txt` type 0 ("430 0", SENTENCEPIECE; spec section 5) <-> IR, and the pre-430
mnn-llm vocab files.

File: the three header lines (`mtok.header`, every id followed by a space), then the piece count,
then one line per id: `<base64(piece UTF-8)> <score> <type>`.  Scores are Python `repr(float)`
(the runtime parses them with `strtof`, so float32 precision is what counts); types are
`PieceType` 1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE.

What the type-0 runtime (`Sentencepiece`, MNN <= 3.4.1 and still in HEAD) does with a file:

* encode: split at header *special* ids (their `decode` text, first listed match wins), then per
  chunk `'▁' + chunk` with every `' '` -> `'▁'` (no normalizer, no whitespace clean-up), then
  SentencePiece BPE: repeatedly merge the adjacent pair whose concatenation is a NORMAL piece of
  highest score, leftmost on ties; UNUSED pieces are re-split into the pieces that made them;
  a symbol that is no piece becomes its UTF-8 bytes as `<0xHH>` pieces (byte fallback is always
  on), or the last UNKNOWN piece per byte when there is no such byte piece.  CONTROL, USER_DEFINED,
  UNKNOWN and BYTE pieces are never merge results; they are only found by exact lookup.  Header
  *prefix* ids are prepended.
* decode(id): the piece as it is, except that the *first* `'▁'` becomes `' '` (and when that `'▁'`
  is not at the start the runtime also deletes the bytes after it: `replace(pos, pos + 3, " ")`);
  `Llm::tokenizer_decode` turns a 6-character `<0xHH>` piece into its byte.

MNN's own writer replaces every `'▁'` in the pieces with a space, which makes every space encode
as three byte tokens; `write_sentencepiece_txt` keeps `'▁'`.  `read_sentencepiece_txt` repairs
files written that way (`repair_spaces`).

**The projection** (what type 0 carries, `project_type0`; `read(write(ir)) == project_type0(ir)`):

* model: a SentencePiece-BPE `BPE` over the dense vocabulary (model vocab, then added tokens that
  extend it), merges regenerated from the pieces' scores and types (`sp_merges`), `byte_fallback`
  iff `<0xHH>` byte pieces exist, `unk_token` = the unknown piece, `fuse_unk=True`.  Scores written
  for BPE are recomputed from the merge ranks (a piece's score is -(rank of the first merge that
  makes it) - 1, 0 for pieces no merge makes), so merges in SentencePiece's shape (every split of
  a piece into two normal pieces, grouped by result piece) survive exactly; Unigram scores are
  written as they are (and run as BPE scores: lossy).
* piece types from the IR: `unk` -> UNKNOWN; added tokens -> CONTROL (special) or USER_DEFINED
  (not special); `<0xHH>` with byte fallback -> BYTE; the rest NORMAL.  UNUSED is never written.
* normalizer `Sequence[Prepend('▁'), Replace(' ', '▁')]`, no pre-tokenizer, decoder
  `Sequence[Replace('▁', ' '), ByteFallback (with byte pieces), Fuse, Strip(' ', 1, 0)]`: fixed by
  the format.
* added tokens: every CONTROL / USER_DEFINED piece and every header special id, `normalized=False`,
  no lstrip/rstrip/single_word; header special = the IR's special ids, then the other added tokens
  (the runtime matches added tokens only through that list); `special_ids` = those that are not
  USER_DEFINED.  stop ids as they are.
* post-processor: the header prefix as `TemplateProcessing` (`<s> $A`); a suffix is lost.
* no chat template (legacy runtimes take it from `llm_config.json`), no metadata.

`lower.legacy.type0` plans the rows (`Type0`) for an IR, and refuses what type 0 cannot represent
at all (WordPiece/WordLevel, byte-level BPE, non-dense ids); `format_type0` writes them.

The pre-430 mnn-llm files (`read_mnn_legacy_vocab`) are one base64 token per line, line index =
id, nothing else: no scores, merges, piece types, normalizer or special ids.  They give an
id -> bytes table (to decode, or to cross-check another source), not a tokenizer, and no IR is
built from them.  What the three shared files are:

* `Llama2_7b_vocab.txt`: Llama 2's 32,000 SentencePiece pieces with '▁' written as ' ', then
  `<pad>` (id 32000).  For a SentencePiece BPE the id order is the score order, so a BPE could be
  guessed (score = -id; Llama's '▁▁' at id 259, scored -1e9, is the exception), but control/byte/unknown
  types only from the piece shapes;
* `Chatglm2_6b_vocab.txt`: 65,024 lines, 238 of them the placeholder `<id>` (returned as b"");
* `Qwen_7b_vocab.txt`: exactly the 151,643 `qwen.tiktoken` tokens in rank order (the ranks
  without the special tokens): a tiktoken BPE's mergeable ranks."""

from __future__ import annotations

import base64
import binascii
import math
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import FormatError, InputError, UnsupportedError
from ..ir import AddedToken, ChatTemplate, Metadata, Tokenizer
from ..ir import models as M
from ..mtok.constants import FileType
from ..mtok.header import read_header, write_header
from ..ir.sentencepiece import BYTE_PIECE, SPACE, PieceType, bos_eos_template, sp_decoder, sp_merges, sp_normalizer
from .text import provenance

_TYPES = {str(int(t)).encode(): t for t in PieceType}


@dataclass(frozen=True)
class Type0:
    """Everything a type-0 file holds."""

    pieces: tuple[tuple[str, float, PieceType], ...]  # id = index
    special: tuple[int, ...] = ()
    stop: tuple[int, ...] = ()
    prefix: tuple[int, ...] = ()


# ----------------------------------------------------------------------- rows -> bytes

def format_type0(rows: Type0) -> bytes:
    out = [write_header(FileType.SENTENCEPIECE, (rows.special, rows.stop, rows.prefix), trailing_space=True),
           f"{len(rows.pieces)}\n".encode()]
    for piece, score, kind in rows.pieces:
        if not math.isfinite(score):
            raise UnsupportedError(f"piece {piece!r} has a non-finite score {score!r}")
        out.append(base64.b64encode(piece.encode("utf-8")) + f" {score!r} {int(kind)}\n".encode())
    return b"".join(out)


# ----------------------------------------------------------------------- rows -> IR

def parse_type0(data: bytes, path=None) -> Type0:
    """Strict: every problem is a `FormatError` with the line and byte offset."""
    _, (special, stop, prefix), pos = read_header(data, path, expect=FileType.SENTENCEPIECE)
    line_no = 4

    def fail(msg, at):
        raise FormatError(f"line {line_no}: {msg}", offset=at, section="pieces", path=path)

    def next_line():
        nonlocal pos
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        start, pos = pos, end + 1
        raw = data[start:end].removesuffix(b"\r")
        return start, raw

    if pos >= len(data):
        fail("missing the piece count", pos)
    start, raw = next_line()
    try:
        count = int(raw.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        fail(f"the piece count must be a decimal integer, got {raw[:40]!r}", start)
    if count < 0:
        fail("negative piece count", start)
    pieces = []
    for i in range(count):
        line_no += 1
        if pos >= len(data):
            fail(f"the file ends after {i} of {count} pieces", len(data))
        start, raw = next_line()
        fields = raw.split(b" ")
        if len(fields) != 3:
            fail(f"piece {i}: expected '<base64> <score> <type>', got {raw[:60]!r}", start)
        b64, score_s, type_s = fields
        try:
            piece = base64.b64decode(b64, validate=True).decode("utf-8")
        except (binascii.Error, ValueError):
            fail(f"piece {i}: {b64[:40]!r} is not base64 of UTF-8 text", start)
        try:
            score = float(score_s.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            fail(f"piece {i}: score {score_s[:40]!r} is not a number", start + len(b64) + 1)
        if not math.isfinite(score):
            fail(f"piece {i}: score {score_s[:40]!r} is not finite", start + len(b64) + 1)
        kind = _TYPES.get(type_s)
        if kind is None:
            fail(f"piece {i}: type {type_s[:10]!r} is not 1-6 (NORMAL..BYTE)", start + len(b64) + len(score_s) + 2)
        pieces.append((piece, score, kind))
    rest = data[pos:]
    if rest.strip(b"\r\n"):
        extra = rest.rstrip(b"\n").count(b"\n") + 1
        line_no += 1
        fail(f"{extra} line(s) after the {count} pieces the count announces", pos)
    n = len(pieces)
    for name, ids in (("special", special), ("stop", stop), ("prefix", prefix)):
        bad = [i for i in ids if i >= n]
        if bad:
            raise FormatError(f"header {name} id {bad[0]} is not a piece ({n} pieces)", offset=0,
                              section="header", path=path)
    seen: dict[str, int] = {}
    for i, (p, _, _) in enumerate(pieces):
        if p in seen:
            raise FormatError(f"piece {p!r} appears twice (ids {seen[p]} and {i}, lines {seen[p] + 5} and {i + 5})",
                              section="pieces", path=path)
        seen[p] = i
    return Type0(tuple(pieces), special, stop, prefix)


def tokenizer_from_type0(rows: Type0, notes=()) -> Tokenizer:
    pieces = list(rows.pieces)
    types = [t for _, _, t in pieces]
    has_bytes = PieceType.BYTE in types
    unk = max((i for i, t in enumerate(types) if t == PieceType.UNKNOWN), default=None)  # the runtime keeps the last
    model = M.BPE({p: i for i, (p, _, _) in enumerate(pieces)}, sp_merges(pieces),
                  unk_token=pieces[unk][0] if unk is not None else None, fuse_unk=True, byte_fallback=has_bytes)
    normalizer, pre = sp_normalizer(b"", add_dummy_prefix=True, remove_extra_whitespaces=False, escape_whitespaces=True)
    header_special = set(rows.special)
    added = tuple(AddedToken(i, p, normalized=False, special=t != PieceType.USER_DEFINED)
                  for i, (p, _, t) in enumerate(pieces)
                  if t in (PieceType.CONTROL, PieceType.USER_DEFINED) or i in header_special)
    post = bos_eos_template([(pieces[i][0], i) for i in rows.prefix])
    return Tokenizer(
        model=model, normalizer=normalizer, pre_tokenizer=pre, decoder=sp_decoder(byte_fallback=has_bytes),
        post_processor=post, added_tokens=added,
        special_ids=tuple(i for i in rows.special if types[i] != PieceType.USER_DEFINED),
        stop_ids=rows.stop, chat=ChatTemplate(),
        meta=Metadata(add_bos_token=bool(rows.prefix), add_eos_token=False,
                      stop_sources=tuple((i, "legacy header") for i in rows.stop), notes=tuple(notes)),
    )


def read_sentencepiece_txt(data: bytes, path=None, *, repair_spaces: bool = True) -> Tokenizer:
    """A type-0 `tokenizer.txt` -> the canonical SentencePiece-BPE IR (see the projection above)."""
    rows = parse_type0(data, path)
    notes = []
    if repair_spaces and not any(SPACE in p for p, _, _ in rows.pieces) \
            and any(" " in p for p, _, t in rows.pieces if t == PieceType.NORMAL):
        fixed = [p.replace(" ", SPACE) for p, _, _ in rows.pieces]
        if len(set(fixed)) == len(fixed):
            rows = replace(rows, pieces=tuple((f, s, t) for f, (_, s, t) in zip(fixed, rows.pieces)))
            notes.append("pieces hold ' ' where SentencePiece has '▁' (MNN's writer replaces it): restored '▁'; "
                         "the MNN runtime itself encodes every space of this file as byte pieces")
    return replace(tokenizer_from_type0(rows, notes), provenance=provenance(path, data))


# ----------------------------------------------------------------------- pre-430 mnn-llm vocab

def read_mnn_legacy_vocab(path) -> list[bytes]:
    """One base64 token per line (line index = id), as the 2023 mnn-llm exporter wrote them.  A line
    `<N>` with N equal to its own id is that exporter's placeholder for a token it could not export
    (ChatGLM2's specials): returned as b"".  Anything else that is not base64 is a `FormatError`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from e
    if data[:4] in (b"430 ", b"430\t"):
        raise FormatError("this is a 430-format tokenizer.txt, not a pre-430 vocab list", offset=0, path=str(path))
    out: list[bytes] = []
    pos = 0
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for i, raw in enumerate(lines):
        line = raw.removesuffix(b"\r")
        if line == f"<{i}>".encode():
            out.append(b"")
        else:
            try:
                out.append(base64.b64decode(line, validate=True))
            except binascii.Error:
                raise FormatError(f"line {i + 1} (id {i}): {line[:40]!r} is not base64", offset=pos,
                                  path=str(path)) from None
        pos += len(raw) + 1
    return out
