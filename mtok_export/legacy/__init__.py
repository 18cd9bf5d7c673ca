"""MNN's legacy `tokenizer.txt` formats ("430 0" to "430 3", spec section 5) and the pre-430
mnn-llm vocab files: readers that build the IR from them and writers that refuse, with a reason,
what a legacy runtime (MNN <= 3.4.1) cannot represent."""

from __future__ import annotations

import importlib

from ..errors import MtokError, UnsupportedError
from ..mtok.constants import FileType

# type -> (module, writer, losses, projection, reader, what it runs)
_TYPES = {
    FileType.SENTENCEPIECE: ("sentencepiece_txt", "write_sentencepiece_txt", "type0_losses", "project_type0",
                             "read_sentencepiece_txt", "SentencePiece-BPE by piece score"),
    FileType.TIKTOKEN: ("tiktoken_txt", "write_tiktoken_txt", "losses_tiktoken_txt", "project_tiktoken",
                        "read_tiktoken_txt", "greedy longest-prefix matching over byte tokens"),
    FileType.BERT: ("bert_txt", "write_bert_txt", "losses_bert_txt", "project_bert", "read_bert_txt",
                    "ASCII BERT splitting and WordPiece"),
    FileType.HUGGINGFACE: ("hf_txt", "write_hf_txt", "losses_hf_txt", "project_hf", "read_hf_txt",
                           "byte-level BPE behind an ASCII-only std::regex"),
}


def _fn(kind: int, index: int):
    module = importlib.import_module(f".{_TYPES[kind][0]}", __package__)
    return getattr(module, _TYPES[kind][index])


def choose_type(tok) -> tuple[int, str]:
    """The legacy type for a model family, and why; `UnsupportedError` when none can carry it."""
    from ..ir import decoders as D
    from ..ir import models as M
    from ..ir import pre_tokenizers as P

    m, pre, dec = tok.model, tok.pre_tokenizer, tok.decoder
    parts = lambda x, f: getattr(x, f, None) or (x,)  # noqa: E731
    byte_level = any(isinstance(p, P.ByteLevel) for p in parts(pre, "pretokenizers")) or \
        any(isinstance(d, D.ByteLevel) for d in parts(dec, "decoders"))
    if isinstance(m, M.WordPiece):
        return FileType.BERT, "a WordPiece model: type 2 (BERT)"
    if isinstance(m, M.BPE) and byte_level:
        return FileType.HUGGINGFACE, ("a byte-level BPE: type 3 runs its merges (type 1, TIKTOKEN, would only "
                                      "match greedily)")
    if isinstance(m, (M.BPE, M.Unigram)):
        return FileType.SENTENCEPIECE, f"a SentencePiece-style {m.kind}: type 0 (SENTENCEPIECE)"
    raise UnsupportedError(f"no legacy tokenizer.txt type can carry a {m.kind} model (types: 0 SentencePiece, "
                           "1 tiktoken, 2 BERT WordPiece, 3 byte-level BPE); export .mtok instead")


def describe(kind: int) -> str:
    return f"type {int(kind)} ({FileType(kind).name}): {_TYPES[kind][5]}"


def legacy_losses(tok, kind: int) -> list:
    return list(_fn(kind, 2)(tok))


def write_legacy(tok, kind: int) -> bytes:
    """The file; the caller has decided about `legacy_losses` already."""
    return _fn(kind, 1)(tok, allow_lossy=True)


def project_legacy(tok, kind: int):
    """The IR of what the legacy runtime does with `write_legacy(tok, kind)`."""
    return _fn(kind, 3)(tok)


def read_legacy(data: bytes, path=None):
    from ..mtok.header import read_header

    kind, _, _ = read_header(data, path)
    if kind not in _TYPES:
        raise UnsupportedError(f"{path}: type {kind} is not a legacy tokenizer.txt")
    return _fn(kind, 4)(data, path)


def check_written(data: bytes, path=None):
    """The legacy twin of `mtok.codec.check_written`: read the bytes back with the strict reader
    before the rename.  -> the IR read."""
    try:
        return read_legacy(data, path)
    except MtokError as e:
        raise UnsupportedError(f"refusing to write {path or 'the file'}: the strict reader rejects it ({e}); "
                               "the input holds a value the format cannot carry") from None
