"""A SentencePiece `ModelProto` (tokenizer.model, spiece.model...): field 1 first, then a full parse
(protobuf is loaded only for a file that may be one), read by `readers.sentencepiece`, verified with
`sentencepiece`."""

from __future__ import annotations

from pathlib import Path

from . import Format, Reference

SPM_MAX = 256 << 20  # no SentencePiece model is this big; weights files are not parsed to find out


def is_sentencepiece(head: bytes, path: Path, folder=None) -> bool:
    if head[:1] != b"\x0a" or path.stat().st_size >= SPM_MAX:
        return False
    from ..sentencepiece import is_sentencepiece as parses  # protobuf: only for a file that may be one

    return parses(path)


def why_not_sentencepiece(head: bytes, path: Path) -> str:
    if head[:1] != b"\x0a":
        return f"its first byte 0x{head[0]:02x} is not a ModelProto's first field (0x0a)" if head else "empty"
    size = path.stat().st_size
    if size >= SPM_MAX:
        return f"too large for one ({size >> 20} MiB; none is over {SPM_MAX >> 20} MiB): not parsed"
    return "starts like a protobuf message but does not parse as a SentencePiece ModelProto"


def _read(path: Path, o, folder):
    from ..sentencepiece import parse_sentencepiece  # on first use: the reader of the one format read

    return parse_sentencepiece(path)


SENTENCEPIECE_LIB = Reference("sentencepiece", "`sentencepiece` on the model file",
                              "mtok_export.verify.references:choose_sentencepiece")
SENTENCEPIECE = Format("sentencepiece", is_sentencepiece, _read, SENTENCEPIECE_LIB,
                       ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "ice_text.model"), priority=30,
                       label="SentencePiece model", kinds=("binary",), why_not=why_not_sentencepiece)
FORMATS = (SENTENCEPIECE,)
