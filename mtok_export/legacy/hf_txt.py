"""Legacy `tokenizer.txt` type 3 (HUGGINGFACE: byte-level BPE), spec section 5.

Layout after the three header lines: line 4 `<vocab_len> <merge_len>`, then `vocab_len` lines
holding each token as its raw GPT-2 byte-level string (not base64; line index = id), then
`merge_len` lines `left right` (rank = line index).  MNN's own writer copies merges.txt verbatim,
`#version` line included (the runtime reads it as an inert merge); this writer writes only the
merges, so rank = merge index.

What MNN 3.4.1 does with it (`HuggingfaceTokenizer`, tokenizer.cpp at tag 3.4.1):

* header special ids are split out first (as for every legacy type);
* each chunk is pre-tokenized by a fixed `std::regex` (ECMAScript, C locale, icase) over bytes,
  whatever the source's pattern was:
  `('s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n[:alpha:][:digit:]]?[[:alpha:]]+|[[:digit:]]| ?[^\\s[:alpha:][:digit:]]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`
  — Qwen's pattern with ASCII-only letters, digits and spaces: every non-ASCII byte counts as
  punctuation, digits are single, contractions match in any case;
* each piece's bytes are mapped to GPT-2 characters and merged by classic BPE (lowest rank first,
  leftmost on ties; no `ignore_merges`, no prefix space); a result missing from the vocabulary
  makes `encoder_.at` throw `std::out_of_range`, which aborts the process;
* `decode(id)` maps the line's characters back to bytes, dropping characters outside the map.

Runtime-faithful IR (`read_hf_txt`): BPE(vocab lines, merges) behind Sequence[Split(`RUNTIME_REGEX`,
Isolated), ByteLevel(use_regex=False)] with a ByteLevel decoder.  `RUNTIME_REGEX` is the Oniguruma
form of the C++ pattern on characters: ASCII classes spelled out, and the optional prefix of a
letter run limited to ASCII (on bytes it can only be a one-byte character in valid UTF-8, because
no match ends inside a multi-byte character).  HF runs it exactly as MNN 3.4.1 runs the file
(checked on the built-in corpus for GPT-2, RoBERTa, Whisper, Qwen-1 and Llama-3 vocabularies).  Header special ids become special added tokens
(content = the line's bytes, as `decode` gives them), the prefix ids a TemplateProcessing.
Duplicate vocabulary lines keep the first id, duplicate merges the first rank (as the runtime's
`emplace` does); a merge line without a space, or naming a token or result missing from the
vocabulary (the runtime would abort), is a `FormatError` naming the line, as are missing lines and
wrong counts.  Only a `#version` first merge line is skipped.

Writing: `format_type3` of what `lower.legacy.type3` plans."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir.byte_level import CHAR_BYTES, token_to_bytes
from ..mtok.constants import FileType
from ..mtok.header import read_header, write_header
from .text import Body, added_from_header, finish, token_names

CPP_REGEX = (r"""('s|'t|'re|'ve|'m|'ll|'d)|[^\r\n[:alpha:][:digit:]]?[[:alpha:]]+|[[:digit:]]"""
             r"""| ?[^\s[:alpha:][:digit:]]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
_S = r"\t\n\x0B\f\r "
# The letter-run prefix is "ASCII except CR, LF, letters, digits": control characters one by one,
# ranges only between plain characters (MNN's own regex engine, for a `.mtok` made from this IR,
# misreads ranges with escaped ends and `\x{...}`).  In that engine non-ASCII characters fold to
# \x01-\x07, so the lowering leaves those members out there (`lower.regex`; input \x01-\x07 is
# then its `regex-control` loss).
_ASCII_PUNCT_CTRL = ("[" + "".join(f"\\x{c:02X}" for c in range(0x20) if c not in (0x0A, 0x0D))
                     + r" -/:-@\[\\\]^_`{-~\x7F]")
RUNTIME_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|" + _ASCII_PUNCT_CTRL + r"?[A-Za-z]+|[0-9]"
                 rf"| ?[^{_S}A-Za-z0-9]+[\r\n]*|[{_S}]*[\r\n]+|[{_S}]+(?![^{_S}])|[{_S}]+")
RUNTIME_PRE = P.Sequence((P.Split(Pattern(RUNTIME_REGEX, regex=True), "Isolated"),
                          P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)))


@dataclass(frozen=True)
class Type3:
    """The content of a type-3 file: one byte-level token string per id, the merges in rank order,
    and the header lists (special, stop, prefix)."""

    lines: tuple[str, ...]
    merges: tuple[tuple[str, str], ...]
    header: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def format_type3(content: Type3) -> bytes:
    body = [f"{len(content.lines)} {len(content.merges)}", *content.lines, *(f"{a} {b}" for a, b in content.merges)]
    return write_header(FileType.HUGGINGFACE, content.header, trailing_space=True) + \
        ("\n".join(body) + "\n").encode("utf-8")


def runtime_decode(token: str) -> bytes:
    """What `HuggingfaceTokenizer::decode` returns for a vocabulary line."""
    return bytes(CHAR_BYTES[c] for c in token if c in CHAR_BYTES)


def first_ids(lines) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, t in enumerate(lines):
        out.setdefault(t, i)
    return out


def read_hf_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    """`strict` is accepted for symmetry with types 1 and 2 (type 3 has no base64)."""
    kind, header, offset = read_header(data, path, expect=FileType.HUGGINGFACE)
    body = Body(data, offset, path, "type 3")
    n, k = body.ints("line 4 (vocabulary size and merge count)", 2)
    lines: list[str] = []
    for i in range(n):
        raw = body.line(f"token {i} of {n}")
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            body.fail(f"token {i} is not UTF-8: {raw[:40]!r}", body.lineno, body.start)
    vocab = first_ids(lines)
    notes: list[str] = []
    if len(vocab) != n:
        notes.append(f"{n - len(vocab)} vocabulary line(s) repeat an earlier one: encode uses the first id")
    odd = [i for i, t in enumerate(lines) if token_to_bytes(t) is None]
    if odd:
        notes.append(f"{len(odd)} token(s) are not byte-level strings (e.g. id {odd[0]}): the runtime drops their "
                     "characters outside the byte map when decoding, HF keeps them")
    merges, seen = [], set()
    for r in range(k):
        raw = body.line(f"merge {r} of {k}")
        line = raw.decode("utf-8", "replace")
        if r == 0 and line.startswith("#version"):
            continue
        a, sep, b = line.partition(" ")
        if not sep:
            body.fail(f"merge line {line[:40]!r} has no space", body.lineno, body.start)
        for t in (a, b, a + b):
            if t not in vocab:
                body.fail(f"merge {line[:40]!r} names {t!r}, which is not in the vocabulary (the runtime "
                          "would abort when this merge fires)", body.lineno, body.start)
        if (a, b) in seen:
            notes.append(f"merge {line[:40]!r} (line {body.lineno}) repeats: the runtime keeps the first rank")
            continue
        seen.add((a, b))
        merges.append((a, b))
    body.end(f"{k} merge lines")
    special, stop, prefix = header
    for i in (*special, *stop, *prefix):
        if i >= n:
            notes.append(f"header id {i} is beyond the {n} tokens: decodes to ''")
    added = added_from_header(special, {i: runtime_decode(lines[i]) for i in special if i < n}, notes)
    return finish(model=M.BPE(vocab, tuple(merges)), normalizer=None, pre_tokenizer=RUNTIME_PRE,
                  decoder=D.ByteLevel(), header=header, added=added, notes=notes,
                  names=token_names({i: runtime_decode(lines[i]) for i in prefix if i < n}), path=path, data=data)
