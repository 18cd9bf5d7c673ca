"""The reference side of verification: HF `tokenizers` on the source `tokenizer.json` (ids with and
without special tokens, decode) and transformers' `apply_chat_template` (text and ids)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Reference:
    engine: list[list[int]]  # add_special_tokens=True
    raw: list[list[int]]  # add_special_tokens=False
    decoded: list[str]  # decode(raw, skip_special_tokens=False)
    chat_text: list[str | None]  # None: transformers raised (e.g. raise_exception)
    chat_ids: list[list[int] | None]
    normalize: object  # str -> str, HF's normalizer (identity when none)


def hf_reference(src_dir: Path, texts: list[str], chats: list) -> Reference:
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(Path(src_dir) / "tokenizer.json"))
    tk.no_truncation()
    tk.no_padding()
    engine = [e.ids for e in tk.encode_batch(texts, add_special_tokens=True)]
    raw = [e.ids for e in tk.encode_batch(texts, add_special_tokens=False)]
    decoded = tk.decode_batch(raw, skip_special_tokens=False)
    norm = tk.normalizer.normalize_str if tk.normalizer is not None else (lambda s: s)
    chat_text: list = [None] * len(chats)
    chat_ids: list = [None] * len(chats)
    if chats:
        chat_text, chat_ids = _chats(src_dir, chats)
    return Reference(engine, raw, decoded, chat_text, chat_ids, norm)


def reference_for(tok):
    """The reference for an IR not read from a tokenizer.json: `f(texts, chats) -> Reference`
    (sentencepiece for a .model, tiktoken for rank files, HF built from the IR otherwise), or
    None when HF on the source's tokenizer.json applies."""
    inputs = [Path(f.path) for f in tok.provenance.inputs]
    if not inputs or inputs[0].name == "tokenizer.json":
        return None
    from ..readers.sentencepiece import is_sentencepiece

    if is_sentencepiece(inputs[0]):
        from .reference_spm import spm_reference

        meta = tok.meta
        return lambda texts, chats: spm_reference(inputs[0], texts, add_bos=bool(meta.add_bos_token),
                                                  add_eos=bool(meta.add_eos_token), chats=chats, tok=tok)
    from .reference_tiktoken import reference_for as other
    return other(tok)


def _chats(src_dir: Path, chats: list):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(src_dir))
    texts, ids = [], []
    for chat in chats:
        try:
            text = tok.apply_chat_template(list(chat.messages), tokenize=False,
                                           add_generation_prompt=chat.add_generation_prompt,
                                           tools=chat.tools)
            texts.append(text)
            ids.append(tok(text, add_special_tokens=False)["input_ids"])
        except Exception:  # noqa: BLE001  templates raise on shapes they reject; not our failure
            texts.append(None)
            ids.append(None)
    return texts, ids
