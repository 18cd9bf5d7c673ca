"""CLIP's `bpe_simple_vocab_16e6.txt.gz`: gzip holding a merges list (first line a version), read
by `readers.openai_bpe`, verified with OpenAI CLIP's own SimpleTokenizer."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from . import HEAD, Format, Reference, show
from .vocab_json import is_merges


def gunzip_head(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") as f:
            return f.read(HEAD)
    except (OSError, EOFError, zlib.error):
        return b""


def is_clip_merges(head: bytes, path: Path, folder=None) -> bool:
    if head[:2] != b"\x1f\x8b":
        return False
    inner = gunzip_head(path)
    first = inner.split(b"\n", 1)[0]
    return b"#version" in first and is_merges(inner.split(b"\n", 1)[-1], path)


def why_not_clip(head: bytes, path: Path) -> str:
    if head[:2] != b"\x1f\x8b":
        return "not gzip-compressed"
    inner = gunzip_head(path)
    if not inner:
        return "gzip that does not decompress (or holds nothing)"
    first = inner.split(b"\n", 1)[0]
    if b"#version" not in first:
        return f"its decompressed first line {show(first)} has no '#version'"
    return "decompressed, its lines after the first are not merges ('left right')"


def _read(path: Path, o, folder):
    from ..openai_bpe import parse_clip_merges  # on first use: the reader of the one format read

    return parse_clip_merges(path)


CLIP_TOKENIZER = Reference("clip", "OpenAI CLIP's own `SimpleTokenizer` on its merges .gz (`openai-clip`, or "
                           "`clip-anytorch`; loaded without torch)",
                           "mtok_export.verify.references:choose_clip")
CLIP = Format("clip-bpe-gz", is_clip_merges, _read, CLIP_TOKENIZER, ("bpe_simple_vocab_16e6.txt.gz",),
              priority=70, label="CLIP bpe .gz", kinds=("gzip",), why_not=why_not_clip)
FORMATS = (CLIP,)
