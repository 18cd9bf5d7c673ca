"""The finishing every reader shares: the JSON files beside a vocabulary (`SideFiles`), the added
tokens transformers would build from them, stop ids with their sources, the chat template, and
provenance.  `assemble` does all of it for the readers that have only side files (vocab.json,
vocab.txt, tiktoken, OpenAI BPE, tekken, GGUF); `read_model_dir` and `read_sentencepiece`, whose
added tokens and BOS/EOS come from their own files, use the pieces (`stop_ids`, `decoder_entries`,
`provenance`) so every reader decides the header lists the same way."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import UnsupportedError
from ..ir import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir import models as M
from ..unicode import ucd
from .hf_config import (Templates, embedding_range_notes, find_templates, header_special_order, id_list,
                        load_json_object, pick_template, token_text)

# End-of-turn tokens of common chat families: stop ids when present.
END_OF_TURN = ("<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>", "<end_of_turn>", "<|end_of_turn|>",
               "<turn|>", "<|return|>", "<|endofturn|>")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def provenance(inputs) -> Provenance:
    """Every file read (each once, in reading order) with its SHA-256, this tool's version and the
    Unicode version of the normalization tables (the reference's, `unicode.ucd`)."""
    return Provenance(tuple(InputFile(str(p), sha256(p)) for p in dict.fromkeys(inputs)), __version__,
                      ucd.VERSION)


def decoder_entries(tcfg: dict) -> list[tuple[int, dict]]:
    """tokenizer_config.json's `added_tokens_decoder` as (id, entry) by id.  `load_json_object`
    has checked its shape (decimal keys, string content, boolean flags) when the file was read."""
    decoder = tcfg.get("added_tokens_decoder") or {}
    return sorted(((int(k), t) for k, t in decoder.items()), key=lambda it: it[0])


def stop_ids(ids: dict[str, int], eos: tuple[int, str] | None, directory: Path, gen: dict, mcfg: dict,
             extra: tuple[tuple[str, str], ...] = ()) -> dict[int, str]:
    """Stop id -> where it came from, first source wins: the eos token (`eos` = (id, source)), the
    eos ids of generation_config.json (`gen`) and config.json (`mcfg`) in `directory`, `extra`
    (text, source) pairs, then the family end-of-turn tokens present in `ids`."""
    stops: dict[int, str] = {}
    if eos is not None:
        stops.setdefault(*eos)
    for i in id_list(gen.get("eos_token_id"), directory / "generation_config.json", "eos_token_id"):
        stops.setdefault(i, "generation_config.json eos_token_id")
    for i in id_list(mcfg.get("eos_token_id"), directory / "config.json", "eos_token_id"):
        stops.setdefault(i, "config.json eos_token_id")
    for text, source in extra:
        if text in ids:
            stops.setdefault(ids[text], source)
    for text in END_OF_TURN:
        if text in ids:
            stops.setdefault(ids[text], f"end-of-turn token {text}")
    return stops


SPECIAL_ROLES = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


@dataclass
class SideFiles:
    """The JSON files that may sit beside a vocabulary file (each `{}` when absent)."""

    directory: Path | None
    tcfg: dict = field(default_factory=dict)  # tokenizer_config.json
    stm: dict = field(default_factory=dict)  # special_tokens_map.json
    added_json: dict = field(default_factory=dict)  # added_tokens.json
    gen: dict = field(default_factory=dict)  # generation_config.json
    mcfg: dict = field(default_factory=dict)  # config.json
    inputs: list[Path] = field(default_factory=list)

    @property
    def config_path(self) -> Path:
        return (self.directory or Path(".")) / "tokenizer_config.json"

    def role(self, name: str) -> str | None:
        """A special-token role (`bos_token`, ...) from tokenizer_config.json, else special_tokens_map.json."""
        for data, fname in ((self.tcfg, "tokenizer_config.json"), (self.stm, "special_tokens_map.json")):
            if data.get(name) is not None:
                return token_text(data[name], (self.directory or Path(".")) / fname, name)
        return None

    def additional(self) -> list[str]:
        for data, fname in ((self.tcfg, "tokenizer_config.json"), (self.stm, "special_tokens_map.json")):
            value = data.get("additional_special_tokens")
            if value:
                if not isinstance(value, list):
                    raise UnsupportedError("must be a list", json_path="$.additional_special_tokens",
                                           path=str((self.directory or Path(".")) / fname))
                return [token_text(v, (self.directory or Path(".")) / fname, "additional_special_tokens") for v in value]
        return []


def read_side_files(directory: Path | None) -> SideFiles:
    side = SideFiles(directory)
    if directory is None:
        return side
    for attr, name in (("tcfg", "tokenizer_config.json"), ("stm", "special_tokens_map.json"),
                       ("added_json", "added_tokens.json"), ("gen", "generation_config.json"),
                       ("mcfg", "config.json")):
        p = directory / name
        if p.is_file():
            setattr(side, attr, load_json_object(p))
            side.inputs.append(p)
    return side


def collect_added(side: SideFiles, vocab: dict[str, int], roles: dict[str, str | None], notes: list[str],
                  flags: dict[str, dict] | None = None) -> tuple[AddedToken, ...]:
    """Added tokens as transformers builds them from the side files: `added_tokens_decoder` (with its
    flags), then `added_tokens.json`, then every special-token role and additional special token
    (special, not normalized).  A special token found nowhere gets the next free id, as HF does.
    `roles` gives the family defaults used when the configs name no token for a role; `flags`
    overrides default flags by content (e.g. RoBERTa's `<mask>` has lstrip)."""
    flags = flags or {}
    by_id: dict[int, AddedToken] = {}
    for i, t in decoder_entries(side.tcfg):
        by_id[i] = AddedToken(i, t["content"], t.get("single_word", False), t.get("lstrip", False),
                              t.get("rstrip", False), t.get("normalized", not t.get("special", False)),
                              t.get("special", False))
    specials = [v for v in (side.role(r) or roles.get(r) for r in SPECIAL_ROLES) if v]
    specials += side.additional()
    special_set = set(specials)
    added_path = (side.directory or Path(".")) / "added_tokens.json"
    for content, i in side.added_json.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise UnsupportedError("ids must be non-negative integers", json_path=f"$[{content!r}]", path=str(added_path))
        if i not in by_id:
            special = content in special_set
            by_id[i] = AddedToken(i, content, normalized=not special, special=special)
    contents = {t.content: t.id for t in by_id.values()}
    next_id = max([*vocab.values(), *by_id, -1]) + 1
    for content in dict.fromkeys(specials):
        if content in contents:
            t = by_id[contents[content]]
            if not t.special:  # a role names it: transformers marks it special
                by_id[t.id] = AddedToken(t.id, t.content, t.single_word, t.lstrip, t.rstrip, False, True)
            continue
        extra = flags.get(content, {})
        if content in vocab:
            i = vocab[content]
        else:
            i = next_id
            next_id += 1
            notes.append(f"special token {content!r} is not in the vocabulary: added as id {i}, as transformers does")
        by_id[i] = AddedToken(i, content, normalized=False, special=True, **extra)
        contents[content] = i
    return tuple(by_id[i] for i in sorted(by_id))


def assemble(*, side: SideFiles, model, added: tuple[AddedToken, ...], inputs: list[Path], notes: list[str],
             normalizer=None, pre_tokenizer=None, decoder=None, post_processor=None,
             extra_stops: tuple[tuple[str, str], ...] = (), chat_template: str | None = None,
             bos: str | None = None, eos: str | None = None) -> Tokenizer:
    """The whole finishing of the readers built on side files (vocab.json, vocab.txt, tiktoken,
    OpenAI BPE, tekken, GGUF): special ids are the special
    added tokens, longest content first; stop ids are eos from every config, the family's end-of-turn
    tokens and `extra_stops` ((text, source) pairs), each with its source; the chat template comes
    from the directory (chat_template.jinja / .json / tokenizer_config.json)."""
    directory = side.directory
    ids = dict(M.vocab_of(model))
    ids.update({t.content: t.id for t in added})
    bos = bos if bos is not None else side.role("bos_token")
    eos = eos if eos is not None else side.role("eos_token")
    stops = stop_ids(ids, (ids[eos], "eos_token") if eos is not None and eos in ids else None,
                     directory or Path("."), side.gen, side.mcfg, extra_stops)
    special_ids = header_special_order(added)
    templates = find_templates(directory, side.tcfg, side.config_path) if directory is not None else Templates()
    text, name, source, others = pick_template(templates, directory or Path("."), side.config_path,
                                               chat_template, inputs)

    vocab_size = side.mcfg.get("vocab_size") if isinstance(side.mcfg.get("vocab_size"), int) else None
    notes.extend(embedding_range_notes(side.mcfg, [*ids.values(), *stops]))
    return Tokenizer(
        model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoder,
        post_processor=post_processor, added_tokens=added, special_ids=special_ids, stop_ids=tuple(stops),
        chat=ChatTemplate(text, bos or "", eos or "", side.tcfg.get("clean_up_tokenization_spaces") is True,
                          others, name=name, source=source),
        meta=Metadata(add_bos_token=side.tcfg.get("add_bos_token"), add_eos_token=side.tcfg.get("add_eos_token"),
                      model_vocab_size=vocab_size, stop_sources=tuple(stops.items()), notes=tuple(notes)),
        provenance=provenance(inputs),
    )
