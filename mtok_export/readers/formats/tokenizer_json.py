"""HF `tokenizer.json` (whatever its name): recognized by a tokenizer.json's first key, read with
the rest of its model folder (`readers.model_dir`), verified with HF `tokenizers`."""

from __future__ import annotations

from pathlib import Path

from . import NOT_OBJECT, TJ_KEYS, Format, Reference, first_key


def is_tokenizer_json(head: bytes, path: Path, folder=None) -> bool:
    key = first_key(head)
    return key is not None and key[0] in TJ_KEYS


def why_not_tokenizer_json(head: bytes, path: Path) -> str:
    key = first_key(head)
    if key is None:
        return NOT_OBJECT
    return (f"its first key {key[0].decode('utf-8', 'replace')!r} is none a tokenizer.json starts with "
            "(model, version, added_tokens, normalizer...)")


def _read(path: Path, o, folder):
    from ..model_dir import parse_model_dir  # on first use: the reader of the one format read

    return parse_model_dir(path.parent, tokenizer_file=path)


TOKENIZERS = Reference("tokenizers", "HF `tokenizers` on the tokenizer.json; chats: transformers' `apply_chat_template`",
                       "mtok_export.verify.references:choose_tokenizers")
TOKENIZER_JSON = Format("tokenizer.json", is_tokenizer_json, _read, TOKENIZERS, ("tokenizer.json",), priority=10,
                        label="tokenizer.json", kinds=("json",), why_not=why_not_tokenizer_json)
FORMATS = (TOKENIZER_JSON,)
