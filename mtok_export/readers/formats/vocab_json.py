"""GPT-2's pair of files: a flat vocabulary JSON (`vocab.json`, `encoder.json`: token -> id) and its
merges (`merges.txt`, OpenAI's `vocab.bpe`), read together by `readers.gpt2_files` whichever of
the two is given, verified with the transformers class they were written for.  The merges file is
a companion: never chosen in a directory itself, a vocabulary JSON is a candidate only beside one."""

from __future__ import annotations

import json
from pathlib import Path

from ...errors import InputError
from . import NOT_OBJECT, TJ_KEYS, TRANSFORMERS, Format, first_key, lines, numbered_lines, show


def is_vocab_json(head: bytes, path: Path, folder=None) -> bool:
    """A flat JSON object token -> integer id (vocab.json, encoder.json; added_tokens.json too)."""
    key = first_key(head)
    return key is not None and key[1][:1].isdigit() and key[0] not in TJ_KEYS and _has_id_zero(path)


def _has_id_zero(path: Path) -> bool:
    """A vocabulary holds id 0; added_tokens.json (same shape) does not.  Parsed only for files whose
    head already looks like a flat token -> id object."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # the reader then says what is wrong
        return False
    return isinstance(data, dict) and 0 in data.values()


def why_not_vocab_json(head: bytes, path: Path) -> str:
    key = first_key(head)
    if key is None:
        return NOT_OBJECT
    if not key[1][:1].isdigit():
        return (f"the value of its first key {key[0].decode('utf-8', 'replace')!r} is no integer id "
                "(not a flat token -> id object)")
    if key[0] in TJ_KEYS:
        return f"its first key {key[0].decode()!r} is a tokenizer.json's"
    try:
        json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as e:
        return f"not valid JSON ({e})"
    return "no token has id 0 (the shape of an added_tokens.json, which lists tokens beyond a vocabulary)"


def is_merges(head: bytes, path: Path, folder=None) -> bool:
    """`#version` then `left right` lines (merges.txt, OpenAI's vocab.bpe)."""
    found = lines(head)
    if found and found[0].startswith(b"#version"):
        return True
    return len(found) > 1 and all(len(x.split(b" ")) == 2 and all(x.split(b" ")) for x in found[:100])


def why_not_merges(head: bytes, path: Path) -> str:
    found = numbered_lines(head)
    if len(found) < 2:
        return "fewer than two lines and no '#version' first"
    for n, x in found[:100]:
        words = x.split(b" ")
        if len(words) != 2 or not all(words):
            return f"line {n} {show(x)} is not 'left right' (two tokens, one space)"
    return "its lines are merges, yet it was not taken: report it"


def _read_vocab_json(path: Path, o, folder):
    from ..gpt2_files import parse_gpt2_files  # on first use: the reader of the one format read

    merges = folder.of(MERGES)
    if merges is None:
        raise InputError(f"{path}: a vocabulary JSON needs a merges file beside it (merges.txt or vocab.bpe)")
    return parse_gpt2_files(path, family=o.family, merges_path=merges)


def _read_merges(path: Path, o, folder):
    vocab = folder.of(VOCAB_JSON)
    if vocab is None:
        raise InputError(f"{path}: a merges file needs its vocabulary JSON beside it (vocab.json or encoder.json)")
    return _read_vocab_json(vocab, o, folder)


# a merges file stands for its pair: read through the vocabulary JSON beside it, never chosen itself
MERGES = Format("merges", is_merges, _read_merges, TRANSFORMERS, ("merges.txt", "vocab.bpe"), options=("family",),
                kinds=("text",), why_not=why_not_merges)
VOCAB_JSON = Format("vocab.json", is_vocab_json, _read_vocab_json, TRANSFORMERS, ("vocab.json", "encoder.json"),
                    priority=60, partner=MERGES, options=("family",), label="vocab.json/encoder.json + merges",
                    kinds=("json",), why_not=why_not_vocab_json)
FORMATS = (VOCAB_JSON, MERGES)
