"""What the four legacy `tokenizer.txt` types share (spec section 5): the body's lines with line
numbers and offsets for errors, MNN 3.4.1's lenient base64, the base64 token lines of types 1 and 2,
and the IR every legacy file reads to (header special ids as special added tokens, prefix ids as a
TemplateProcessing, stop ids kept).  The types' own modules hold their layouts."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from .. import __version__
from ..errors import FormatError
from ..ir import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir import processors as R
from ..mtok.header import write_header
from ..unicode import ucd

# WordPiece `max_input_chars_per_word` meaning "no limit": the largest value MNN's `.mtok` runtime
# reads correctly (it keeps the u32 in an `int`, so 2**31 and above make every word unk).
NO_LIMIT = 0x7FFFFFFF


_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


_B64_VALUE = {c: i for i, c in enumerate(_B64)}


def b64decode_mnn(line: bytes) -> bytes:
    """MNN 3.4.1's base64 decoder: skip every byte outside the alphabet, drop leftover bits."""
    out = bytearray()
    val, bits = 0, -8
    for c in line:
        d = _B64_VALUE.get(c)
        if d is None:
            continue
        val = ((val << 6) + d) & 0xFFFFFF
        bits += 6
        if bits >= 0:
            out.append((val >> bits) & 0xFF)
            bits -= 8
    return bytes(out)


def b64_canonical(line: bytes) -> bool:
    try:
        return base64.b64encode(base64.b64decode(line, validate=True)) == line
    except (binascii.Error, ValueError):
        return False


class Body:
    """The text lines after the header, with line numbers and byte offsets for errors."""

    def __init__(self, data: bytes, offset: int, path, kind: str):
        self.data, self.pos, self.path, self.kind = data, offset, path, kind
        self.lineno = data[:offset].count(b"\n")  # lines consumed so far

    def fail(self, msg: str, lineno: int | None = None, offset: int | None = None):
        raise FormatError(msg, offset=self.pos if offset is None else offset,
                          section=f"{self.kind} line {lineno or self.lineno + 1}", path=self.path)

    def line(self, what: str) -> bytes:
        if self.pos >= len(self.data):
            self.fail(f"file ends before {what}")
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            end = len(self.data)
        raw = self.data[self.pos:end]
        self.start = self.pos
        self.pos = end + 1
        self.lineno += 1
        return raw

    def ints(self, what: str, n: int) -> list[int]:
        raw = self.line(what)
        parts = raw.split()
        if len(parts) != n or not all(p.isdigit() for p in parts):
            self.fail(f"{what} must be {n} decimal integer(s), got {raw[:40]!r}", self.lineno, self.start)
        return [int(p) for p in parts]

    def end(self, what: str):
        rest = self.data[self.pos:]
        if rest.strip(b"\r\n"):
            self.fail(f"unexpected content after the {what}: {rest[:40]!r}")


def prefix_template(prefix: tuple[int, ...], names: dict[int, str]):
    """TemplateProcessing that puts the header prefix ids before $A (None without a prefix)."""
    if not prefix:
        return None
    used: dict[str, int] = {}
    pieces, specials = [], {}
    for i in prefix:
        name = names.get(i) or f"<id {i}>"
        if name in used and used[name] != i:
            name = f"{name}@{i}"
        used[name] = i
        pieces.append(R.Piece(name, 0, True))
        specials[name] = R.SpecialToken(name, (i,), (name,))
    single = (*pieces, R.Piece("A"))
    return R.TemplateProcessing(single=single, pair=(*single, R.Piece("B", 1)),
                                special_tokens=tuple(specials[n] for n in sorted(specials)))


def added_from_header(special: tuple[int, ...], contents: dict[int, bytes], notes: list[str]) -> tuple[AddedToken, ...]:
    out = {}
    for i in special:
        b = contents.get(i)
        if not b:
            notes.append(f"header special id {i} has no token: the runtime does not split it out")
            continue
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError:
            notes.append(f"header special id {i} is not UTF-8 ({b[:20]!r}): not representable as an added token")
            continue
        out[i] = AddedToken(i, text, normalized=False, special=True)
    return tuple(out[i] for i in sorted(out))


def token_names(contents: dict[int, bytes]) -> dict[int, str]:
    """id -> the token's text, for naming the prefix tokens in a TemplateProcessing."""
    out = {}
    for i, b in contents.items():
        try:
            out[i] = b.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return out


def finish(*, model, normalizer, pre_tokenizer, decoder, header, added, notes, names=None, path=None, data=None):
    """The Tokenizer of a legacy file; `names` (id -> text) names the header prefix tokens."""
    special, stop, prefix = header
    names = {**(names or {}), **{t.id: t.content for t in added}}
    return Tokenizer(model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoder,
                     post_processor=prefix_template(prefix, names), added_tokens=added, special_ids=tuple(special),
                     stop_ids=tuple(stop), chat=ChatTemplate(),
                     meta=Metadata(stop_sources=tuple((i, "legacy header") for i in stop), notes=tuple(notes)),
                     provenance=provenance(path, data))


def provenance(path, data: bytes | None) -> Provenance:
    """The file a legacy tokenizer was read from (what verification runs its reference on); empty
    for bytes read without a path."""
    if path is None or data is None:
        return Provenance()
    return Provenance((InputFile(str(path), hashlib.sha256(data).hexdigest()),), __version__, ucd.VERSION)


def read_b64_lines(body, n: int, strict: bool, notes: list[str], allow_empty: bool) -> list[bytes]:
    """Lines 5.. of types 1 and 2: `n` base64 tokens, decoded as MNN 3.4.1 decodes them."""
    tokens, loose = [], []
    for i in range(n):
        raw = body.line(f"token {i} of {n}")
        if raw and not b64_canonical(raw):
            if strict:
                body.fail(f"token {i} is not canonical base64: {raw[:40]!r}", body.lineno, body.start)
            loose.append(body.lineno)
        b = b64decode_mnn(raw)
        if not b and not allow_empty:
            body.fail(f"token {i} is empty: the runtime's trie would match it everywhere and never finish encoding",
                      body.lineno, body.start)
        tokens.append(b)
    body.end(f"{n} token lines")
    if loose:
        notes.append(f"{len(loose)} line(s) are not canonical base64 (first: line {loose[0]}); decoded as MNN 3.4.1 "
                     "does (characters outside the alphabet skipped)")
    return tokens


@dataclass(frozen=True)
class TokenLines:
    """The content of a type-1 or type-2 file: one token per id, and the header lists
    (special, stop, prefix)."""

    kind: int  # FileType.TIKTOKEN or FileType.BERT
    tokens: tuple[bytes, ...]
    header: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def format_token_lines(body: TokenLines) -> bytes:
    """Types 1 and 2: the header, the count, then the standard base64 of each token."""
    lines = [str(len(body.tokens)).encode()] + [base64.b64encode(b) for b in body.tokens]
    return write_header(body.kind, body.header, trailing_space=True) + b"\n".join(lines) + b"\n"
