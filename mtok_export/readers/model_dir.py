"""A HuggingFace model directory (`tokenizer.json` and the configs beside it) -> IR.

Header lists are decided here from what the files say: special ids are every special added token,
longest content first (the runtime takes the first listed token that matches at a position, so
this order makes it leftmost-longest like HF); stop ids are eos from every config plus the family's
end-of-turn tokens, each with its source."""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

from .. import __version__
from ..errors import InputError, UnsupportedError
from ..ir import ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir.models import vocab_of
from .hf_config import (embedding_range_notes, find_templates, header_special_order, id_list, load_json_object,
                        pick_template, token_text)
from .hf_json import parse_tokenizer_json

# End-of-turn tokens of common chat families: stop ids when present.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<end_of_turn>", "<|end_of_turn|>",
               "<turn|>", "<|return|>", "<|endofturn|>")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def read_model_dir(directory: Path, chat_template: str | None = None, *,
                   tokenizer_file: Path | None = None) -> Tokenizer:
    """Read `tokenizer.json` and its companions.  `chat_template` picks a named template or a file;
    `tokenizer_file` is the tokenizer.json under another name (GPT-NeoX's `20B_tokenizer.json`)."""
    directory = Path(directory)
    tj = Path(tokenizer_file) if tokenizer_file is not None else directory / "tokenizer.json"
    if not tj.is_file():
        raise InputError(f"{directory}: no tokenizer.json here")
    try:
        data = json.loads(tj.read_bytes())
    except (OSError, ValueError) as e:
        raise InputError(f"{tj}: not valid JSON ({e})") from e
    parts, notes = parse_tokenizer_json(data, str(tj))
    inputs = [tj]

    def optional(name: str) -> dict:
        p = directory / name
        if p.is_file():
            inputs.append(p)
            return load_json_object(p)
        return {}

    config_path = directory / "tokenizer_config.json"
    tcfg, gen, mcfg = optional("tokenizer_config.json"), optional("generation_config.json"), optional("config.json")

    added = list(parts["added_tokens"])
    known = {t.id for t in added}
    from ..ir import AddedToken
    decoder = tcfg.get("added_tokens_decoder") or {}
    if not isinstance(decoder, dict) or not all(k.isdigit() and isinstance(v, dict) for k, v in decoder.items()):
        raise UnsupportedError("added_tokens_decoder must map decimal ids to token objects",
                               json_path="$.added_tokens_decoder", path=str(config_path))
    for key, t in sorted(decoder.items(), key=lambda kv: int(kv[0])):
        if int(key) not in known and isinstance(t.get("content"), str):
            added.append(AddedToken(int(key), t["content"], t.get("single_word", False), t.get("lstrip", False),
                                    t.get("rstrip", False), t.get("normalized", True), t.get("special", False)))
            notes.append(f"added token {t['content']!r} (id {key}) is only in tokenizer_config.json's added_tokens_decoder")
    added = tuple(added)

    ids = dict(vocab_of(parts["model"]))
    ids.update({t.content: t.id for t in added})

    bos = token_text(tcfg.get("bos_token"), config_path, "bos_token")
    eos = token_text(tcfg.get("eos_token"), config_path, "eos_token")
    stops: dict[int, str] = {}

    def stop(i: int, source: str):
        stops.setdefault(i, source)

    if eos is not None and eos in ids:
        stop(ids[eos], "tokenizer_config.json eos_token")
    for i in id_list(gen.get("eos_token_id"), directory / "generation_config.json", "eos_token_id"):
        stop(i, "generation_config.json eos_token_id")
    for i in id_list(mcfg.get("eos_token_id"), directory / "config.json", "eos_token_id"):
        stop(i, "config.json eos_token_id")
    for text in END_OF_TURN:
        if text in ids:
            stop(ids[text], f"end-of-turn token {text}")

    special_ids = header_special_order(added)
    text, name, source, others = pick_template(find_templates(directory, tcfg, config_path), directory,
                                               config_path, chat_template, inputs)

    vocab_size = mcfg.get("vocab_size") if isinstance(mcfg.get("vocab_size"), int) else None
    notes.extend(embedding_range_notes(mcfg, [*ids.values(), *stops]))

    return Tokenizer(
        model=parts["model"], normalizer=parts["normalizer"], pre_tokenizer=parts["pre_tokenizer"],
        decoder=parts["decoder"], post_processor=parts["post_processor"], added_tokens=added,
        special_ids=special_ids, stop_ids=tuple(stops),
        chat=ChatTemplate(text, bos or "", eos or "", tcfg.get("clean_up_tokenization_spaces") is True,
                          others, name=name, source=source),
        meta=Metadata(add_bos_token=tcfg.get("add_bos_token"), add_eos_token=tcfg.get("add_eos_token"),
                      model_vocab_size=vocab_size, stop_sources=tuple(stops.items()), notes=tuple(notes),
                      tokenizer_class=tcfg.get("tokenizer_class"), legacy=tcfg.get("legacy")),
        provenance=Provenance(tuple(InputFile(str(p), sha256(p)) for p in inputs), __version__,
                              unicodedata.unidata_version),
    )
