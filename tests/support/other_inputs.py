"""The corpus inputs that are not a tokenizer.json (tiktoken ranks, vocab.json + merges.txt, BERT
vocab.txt) and what their reader, legacy and parity tests share: the texts, the compared fields of a
reference result, and a file writer."""

from __future__ import annotations

from pathlib import Path

from mtok_export.corpus import builtin_corpus

TEXTS = [s.text for s in builtin_corpus()]
COMPARED = ("engine", "raw", "decoded")


def same(a, b) -> dict:
    """field -> how many texts two reference results agree on."""
    return {f: sum(x == y for x, y in zip(getattr(a, f), getattr(b, f))) for f in COMPARED}


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path
