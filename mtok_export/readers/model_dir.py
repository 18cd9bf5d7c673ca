"""A HuggingFace model directory (`tokenizer.json` and the configs beside it) -> what it holds
(`finish.Parsed`; `finish.finish` decides the header lists and the template as for every format).

The added tokens are tokenizer.json's plus what the configs declare, added as transformers adds them
on load (`hf_added`: the same rule sets up the reference, so file and reference hold the same tokens;
a token only a config declares is noted)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..ir import Tokenizer
from ..ir import models as M
from .finish import Parsed, finish, read_side_files
from .hf_added import apply, declared_added
from .hf_config import load_json
from .interpretation import FolderInterpretation
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
    own = parts["added_tokens"]
    vocab = M.vocab_of(parts["model"])
    declared = declared_added(side.tcfg, side.stm, side.added_json, {t.content for t in own})
    added = apply(own, vocab, len(parts["model"].vocab), declared, notes)  # tokenizers: the model's size
    rule = f"{tj.name}'s {len(own)}" + (f", then the configs' {len(declared.first)} + {len(declared.then)} "
                                        "as transformers adds them on load" if declared else "")
    return Parsed(model=parts["model"], side=side, inputs=[tj], normalizer=parts["normalizer"],
                  pre_tokenizer=parts["pre_tokenizer"], decoder=parts["decoder"],
                  post_processor=parts["post_processor"], added=tuple(added), notes=notes,
                  interpretation=FolderInterpretation(added_tokens=rule))


def read_model_dir(directory: Path, chat_template: str | None = None, *,
                   tokenizer_file: Path | None = None) -> Tokenizer:
    """`parse_model_dir`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_model_dir(directory, tokenizer_file=tokenizer_file), chat_template)
