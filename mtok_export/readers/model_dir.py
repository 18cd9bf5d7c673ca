"""A HuggingFace model directory (`tokenizer.json` and the configs beside it) -> what it holds
(`finish.Parsed`; `finish.finish` decides the header lists and the template as for every format).

The added tokens are tokenizer.json's, plus any `added_tokens_decoder` entry of tokenizer_config.json
for an id tokenizer.json does not have (noted: the two files usually agree)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..ir import Tokenizer
from .finish import Parsed, decoder_entries, decoder_token, finish, read_side_files
from .hf_config import load_json
from .hf_json import parse_tokenizer_json


def parse_model_dir(directory: Path, *, tokenizer_file: Path | None = None) -> Parsed:
    """Read `tokenizer.json` and its companions; `tokenizer_file` is the tokenizer.json under another
    name (GPT-NeoX's `20B_tokenizer.json`)."""
    directory = Path(directory)
    tj = Path(tokenizer_file) if tokenizer_file is not None else directory / "tokenizer.json"
    if not tj.is_file():
        raise InputError(f"{directory}: no tokenizer.json here")
    parts, notes = parse_tokenizer_json(load_json(tj), str(tj))
    side = read_side_files(directory)
    added = list(parts["added_tokens"])
    known = {t.id for t in added}
    for key, t in decoder_entries(side.tcfg):
        if key not in known:
            added.append(decoder_token(key, t))
            notes.append(f"added token {t['content']!r} (id {key}) is only in tokenizer_config.json's added_tokens_decoder")
    return Parsed(model=parts["model"], side=side, inputs=[tj], normalizer=parts["normalizer"],
                  pre_tokenizer=parts["pre_tokenizer"], decoder=parts["decoder"],
                  post_processor=parts["post_processor"], added=tuple(added), notes=notes)


def read_model_dir(directory: Path, chat_template: str | None = None, *,
                   tokenizer_file: Path | None = None) -> Tokenizer:
    """`parse_model_dir`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_model_dir(directory, tokenizer_file=tokenizer_file), chat_template)
