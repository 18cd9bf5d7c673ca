"""A GGUF model file (its tokenizer metadata): the `GGUF` magic, read by `readers.gguf`, verified
with llama.cpp's view of the file."""

from __future__ import annotations

from pathlib import Path

from . import Format, Reference


def is_gguf(head: bytes, path: Path, folder=None) -> bool:
    return head[:4] == b"GGUF"


def why_not_gguf(head: bytes, path: Path) -> str:
    return f"no 'GGUF' magic (its first bytes are {head[:4]!r})"


def _read(path: Path, o, folder):
    from ..gguf import parse_gguf  # on first use: the reader of the one format read

    return parse_gguf(path)


LLAMA_CPP = Reference("gguf", "llama.cpp on the GGUF file (`llama-cpp-python`, vocabulary only)",
                      "mtok_export.verify.references:choose_gguf")
GGUF = Format("gguf", is_gguf, _read, LLAMA_CPP, priority=40, label="GGUF", kinds=("binary",), why_not=why_not_gguf)
FORMATS = (GGUF,)
