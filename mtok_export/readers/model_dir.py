"""A HuggingFace model directory (`tokenizer.json` and the configs beside it) -> IR.

Header lists are decided here from what the files say: special ids are every special added token,
longest content first (the runtime takes the first listed token that matches at a position, so
this order makes it leftmost-longest like HF); stop ids are eos from every config plus the family's
end-of-turn tokens, each with its source (`finish.stop_ids`)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..ir import AddedToken, ChatTemplate, Metadata, Tokenizer
from ..ir.models import vocab_of
from .finish import decoder_entries, provenance, stop_ids
from .hf_config import embedding_range_notes, find_templates, header_special_order, load_json, load_json_object, \
    pick_template, token_text
from .hf_json import parse_tokenizer_json


def read_model_dir(directory: Path, chat_template: str | None = None, *,
                   tokenizer_file: Path | None = None) -> Tokenizer:
    """Read `tokenizer.json` and its companions.  `chat_template` picks a named template or a file;
    `tokenizer_file` is the tokenizer.json under another name (GPT-NeoX's `20B_tokenizer.json`)."""
    directory = Path(directory)
    tj = Path(tokenizer_file) if tokenizer_file is not None else directory / "tokenizer.json"
    if not tj.is_file():
        raise InputError(f"{directory}: no tokenizer.json here")
    data = load_json(tj)
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
    for key, t in decoder_entries(tcfg):
        if key not in known:
            added.append(AddedToken(key, t["content"], t.get("single_word", False), t.get("lstrip", False),
                                    t.get("rstrip", False), t.get("normalized", True), t.get("special", False)))
            notes.append(f"added token {t['content']!r} (id {key}) is only in tokenizer_config.json's added_tokens_decoder")
    added = tuple(added)

    ids = dict(vocab_of(parts["model"]))
    ids.update({t.content: t.id for t in added})

    bos = token_text(tcfg.get("bos_token"), config_path, "bos_token")
    eos = token_text(tcfg.get("eos_token"), config_path, "eos_token")
    eos_id = (ids[eos], "tokenizer_config.json eos_token") if eos is not None and eos in ids else None
    stops = stop_ids(ids, eos_id, directory, gen, mcfg)

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
        provenance=provenance(inputs),
    )
