"""Content checks below the readers: whether a file is a remote-code tokenizer module (used by
`formats` to classify files and by `readers.remote_code` to find them, without loading the readers),
and what an unrecognized input file is not and what it looks like, for the error of `formats.choose`
when no reader takes it (issue 13: "no tokenizer.json ... found" for a random file told the user
nothing about the file they gave)."""

from __future__ import annotations

import re
from pathlib import Path

# Leading bytes of formats people hand us by mistake.
_MAGIC = ((b"GGUF", "a GGUF file"),
          (b"\x1f\x8b", "gzip-compressed data (decompress it first)"),
          (b"PK\x03\x04", "a zip archive (a PyTorch checkpoint or a packed model directory?)"),
          (b"\x7fELF", "an ELF executable or library"),
          (b"\x89PNG", "a PNG image"),
          (b"MNN", "possibly an MNN model, not a tokenizer"),
          (b"\x80\x02", "a Python pickle"), (b"\x80\x04", "a Python pickle"))


def is_tiktoken_code(head: bytes) -> bool:
    """Python source that imports tiktoken and defines something: a remote-code tokenizer module."""
    return re.search(rb"^\s*(import tiktoken|from tiktoken)", head, re.M) is not None and \
        re.search(rb"^\s*(def|class) ", head, re.M) is not None


def not_a_tokenizer(path: Path, formats: str) -> str:
    """One line for a file no reader takes, with none beside it: `formats` lists what it is not."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        return f"{path}: cannot read ({e.strerror or e})"
    return (f"{path}: not a tokenizer file this tool recognizes (not {formats}), and none is beside it; "
            f"it looks like {looks_like(head)}")


def shape(head: bytes) -> str:
    """The coarse kind of a file from its first bytes: "empty", "gzip", "json", "text" or "binary"
    (which formats could have claimed a file no format took: `formats.considered`)."""
    if not head:
        return "empty"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.lstrip()[:1] in (b"{", b"["):
        return "json"
    if b"\x00" in head:
        return "binary"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # not just a character cut at the end of the head
            return "binary"
    return "text"


def looks_like(head: bytes) -> str:
    """A short description of a file from its first bytes."""
    if not head:
        return "an empty file"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    if len(head) >= 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < 1 << 27:
        return "a safetensors file (model weights)"
    if head[:1] == b"\x0a" and shape(head) == "binary":  # field 1, length-delimited: SentencePiece's pieces
        return "binary data starting like a protobuf message (field 1)"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        keys = _json_keys(stripped)
        if "model" in keys:
            return "a tokenizer.json without a valid model (see the readers' checks)"
        return "JSON" + (f" with the keys {', '.join(keys[:6])}" if keys else "")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 3:  # not just a character cut at the 4096-byte boundary
            return "binary data"
        text = head[:e.start].decode("utf-8")
    first = text.splitlines()[0] if text.strip() else ""
    return f"text starting {first[:60]!r}" if first else "whitespace"


def _json_keys(head: bytes) -> list[str]:
    """Top-level keys visible in the first bytes of a JSON object (a cheap look, not a parse)."""
    if not head.startswith(b"{"):
        return []
    depth, keys = 0, []
    for m in re.finditer(rb'"((?:[^"\\]|\\.)*)"(\s*:)?|[{}\[\]]', head):  # strings whole, so "[" in one is text
        tok = m.group(0)
        if tok in (b"{", b"["):
            depth += 1
        elif tok in (b"}", b"]"):
            depth -= 1
        elif depth == 1 and m.group(2):
            keys.append(m.group(1).decode("utf-8", "replace"))
    return keys
