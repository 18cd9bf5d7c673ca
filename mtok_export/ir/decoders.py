"""Decoders (HF `tokenizers` decoders)."""

from __future__ import annotations

from .base import Pattern, component

_d = component("decoder")


@_d
class BPEDecoder:
    suffix: str = "</w>"


@_d
class ByteFallback:
    pass


@_d
class ByteLevel:
    add_prefix_space: bool = True
    trim_offsets: bool = True
    use_regex: bool = True


@_d
class CTC:
    pad_token: str = "<pad>"
    word_delimiter_token: str = "|"
    cleanup: bool = True


@_d
class Fuse:
    pass


@_d
class Metaspace:
    replacement: str = "\u2581"
    prepend_scheme: str = "always"
    split: bool = True


@_d
class Replace:
    pattern: Pattern = Pattern("")
    content: str = ""


@_d
class Strip:
    content: str = " "
    start: int = 0
    stop: int = 0


@_d
class WordPiece:
    prefix: str = "##"
    cleanup: bool = True


@_d
class Sequence:
    decoders: tuple = ()
