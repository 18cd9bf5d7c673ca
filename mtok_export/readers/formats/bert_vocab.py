"""BERT's `vocab.txt`: one token per line, none with a space, and [UNK]/[CLS]/[SEP] among them, read
by `readers.bert_vocab`, verified with the transformers class it was written for."""

from __future__ import annotations

from pathlib import Path

from . import TRANSFORMERS, Format, lines, numbered_lines, show


def is_bert_vocab(head: bytes, path: Path, folder=None) -> bool:
    try:
        text = [x.decode("utf-8") for x in lines(head)]
    except UnicodeDecodeError:
        return False
    return bool(text) and not any(" " in x for x in text) and bool({"[UNK]", "[CLS]", "[SEP]"} & set(text))


def why_not_bert_vocab(head: bytes, path: Path) -> str:
    try:
        text = [(n, x.decode("utf-8")) for n, x in numbered_lines(head)]
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if not text:
        return "no complete line"
    spaced = next(((n, x) for n, x in text if " " in x), None)
    if spaced is not None:
        return f"line {spaced[0]} {show(spaced[1].encode())} holds a space (one token per line has none)"
    return "none of [UNK], [CLS], [SEP] among its lines in the first 64 KiB"


def _read(path: Path, o, folder):
    from ..bert_vocab import parse_bert_vocab  # on first use: the reader of the one format read

    return parse_bert_vocab(path)


BERT_VOCAB = Format("bert-vocab.txt", is_bert_vocab, _read, TRANSFORMERS, ("vocab.txt",), priority=80,
                    label="vocab.txt", kinds=("text",), why_not=why_not_bert_vocab)
FORMATS = (BERT_VOCAB,)
