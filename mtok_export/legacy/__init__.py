"""MNN's legacy `tokenizer.txt` formats ("430 0" to "430 3", spec section 5) and the pre-430
mnn-llm vocab files: reading them into the IR of what a legacy runtime (MNN <= 3.4.1) runs, and
writing the content a lowering plan (`lower.legacy`) chose."""

from __future__ import annotations

from ..errors import MtokError, UnsupportedError
from ..mtok.constants import FileType
from ..mtok.header import read_header
from .bert_txt import read_bert_txt
from .hf_txt import Type3, format_type3, read_hf_txt
from .sentencepiece_txt import Type0, format_type0, read_sentencepiece_txt
from .text import TokenLines, format_token_lines
from .tiktoken_txt import read_tiktoken_txt

READERS = {FileType.SENTENCEPIECE: read_sentencepiece_txt, FileType.TIKTOKEN: read_tiktoken_txt,
           FileType.BERT: read_bert_txt, FileType.HUGGINGFACE: read_hf_txt}
RUNS = {FileType.SENTENCEPIECE: "SentencePiece-BPE by piece score",
        FileType.TIKTOKEN: "greedy longest-prefix matching over byte tokens",
        FileType.BERT: "ASCII BERT splitting and WordPiece",
        FileType.HUGGINGFACE: "byte-level BPE behind an ASCII-only std::regex"}


def describe(kind: int) -> str:
    return f"type {int(kind)} ({FileType(kind).name}): {RUNS[kind]}"


def write_content(content) -> bytes:
    """The file holding a plan's content (`Type0`, `TokenLines` or `Type3`)."""
    if isinstance(content, Type0):
        return format_type0(content)
    if isinstance(content, Type3):
        return format_type3(content)
    if isinstance(content, TokenLines):
        return format_token_lines(content)
    raise TypeError(f"not a legacy file's content: {type(content).__name__}")


def read_legacy(data: bytes, path=None):
    kind, _, _ = read_header(data, path)
    if kind not in READERS:
        raise UnsupportedError(f"{path}: type {kind} is not a legacy tokenizer.txt")
    return READERS[kind](data, path)


def check_written(data: bytes, path=None):
    """The legacy twin of `mtok.file.check_written`: read the bytes back with the strict reader
    before the rename.  -> the IR read."""
    try:
        return read_legacy(data, path)
    except MtokError as e:
        raise UnsupportedError(f"refusing to write {path or 'the file'}: the strict reader rejects it ({e}); "
                               "the input holds a value the format cannot carry") from None
