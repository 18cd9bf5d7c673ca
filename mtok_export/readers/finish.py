"""The one finishing of every reader that reads a tokenizer's source (all but the two files MNN loads,
whose header carries these lists): a reader returns what it parsed (`Parsed`), and `finish` builds
the `Tokenizer` from it the same way for every format (`formats.read_source` runs it):

* the added tokens are the reader's (`Parsed.added`: each format decides which config entries apply,
  as transformers' class for it does); an `added_tokens_decoder` entry always becomes the same
  `AddedToken` (`decoder_token`), and `collect_added` is the rule of the formats that have only side
  files (vocab.json, vocab.txt, a rank file with a tokenizer_config.json);
* special ids: every special added token, longest content first (`hf_config.header_special_order`);
* stop ids: eos (the file's own, else the configs' role), the eos ids of generation_config.json and
  config.json, the format's own stop tokens, then the family end-of-turn tokens, each with its source;
* the chat template and its source: `chat_source.choose` (`--no-chat`, `--chat-template`, the one a
  self-contained file carries, the directory's, a port of a Python encoder, mistral_common's);
* metadata from tokenizer_config.json / config.json, and provenance (every file read, hashed).

`SideFiles` are the JSON files beside a vocabulary; a reader reads them itself because its parse may
depend on them (a class's BOS/EOS default, `do_lower_case`, ...)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import UnsupportedError
from ..ir import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir import models as M
from ..ir import processors as R
from ..unicode import ucd
from .chat_source import choose, split_controls
from .hf_config import embedding_range_notes, header_special_order, id_list, load_json_object, token_text
from .interpretation import Decision, FolderInterpretation, decide_usage

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


def decoder_token(i: int, entry: dict) -> AddedToken:
    """An `added_tokens_decoder` entry as transformers loads it (`AddedToken(**entry)`): a flag it
    does not give is False, except `normalized`, which is `not special` (tokenizers' default)."""
    special = entry.get("special", False)
    return AddedToken(i, entry["content"], entry.get("single_word", False), entry.get("lstrip", False),
                      entry.get("rstrip", False), entry.get("normalized", not special), special)


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
        found = self.role_from(name)
        return found[0] if found else None

    def role_from(self, name: str) -> tuple[str, str] | None:
        """(text, "file role") of a special-token role, for messages and stop sources."""
        for data, fname in ((self.tcfg, "tokenizer_config.json"), (self.stm, "special_tokens_map.json")):
            if data.get(name) is not None:
                text = token_text(data[name], (self.directory or Path(".")) / fname, name)
                return (text, f"{fname} {name}") if text is not None else None
        return None

    def role_flags(self, name: str) -> dict[str, bool]:
        """The AddedToken flags a role's object form gives (`{"content": "<mask>", "lstrip": true, ...}`),
        which transformers builds the token with; a plain string gives none."""
        for data in (self.tcfg, self.stm):
            if data.get(name) is not None:
                value = data[name]
                return {k: value[k] for k in ("single_word", "lstrip", "rstrip")
                        if isinstance(value, dict) and isinstance(value.get(k), bool)}
        return {}

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
    for content, i in side.added_json.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise UnsupportedError("ids must be non-negative integers", json_path=f"$[{content!r}]",
                                   path=str(directory / "added_tokens.json"))
    return side


def collect_added(side: SideFiles, vocab: dict[str, int], roles: dict[str, str | None], notes: list[str],
                  flags: dict[str, dict] | None = None) -> tuple[AddedToken, ...]:
    """Added tokens as transformers builds them from the side files: `added_tokens_decoder` (with its
    flags), then `added_tokens.json`, then every special-token role and additional special token
    (special, not normalized).  A special token found nowhere gets the next free id, as HF does.
    `roles` gives the family defaults used when the configs name no token for a role; a role's
    flags are those its object form in the configs gives (`SideFiles.role_flags`), else `flags`
    (by content)."""
    flags = dict(flags or {})
    for r in SPECIAL_ROLES:
        if side.role(r) and side.role_flags(r):
            flags[side.role(r)] = side.role_flags(r)
    by_id: dict[int, AddedToken] = {}
    for i, t in decoder_entries(side.tcfg):
        by_id[i] = decoder_token(i, t)
    specials = [v for v in (side.role(r) or roles.get(r) for r in SPECIAL_ROLES) if v]
    specials += side.additional()
    special_set = set(specials)
    for content, i in side.added_json.items():
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


@dataclass
class Parsed:
    """What a reader found: the pipeline, its added tokens, the configs beside it, and the facts only
    the file itself knows (its BOS/EOS text, stop tokens, embedded template, policy).  `finish`
    makes the `Tokenizer` of every format from it."""

    model: object
    side: SideFiles  # the configs beside the file (`SideFiles(None)`: a self-contained file, e.g. GGUF)
    inputs: list[Path]  # the files the reader read, main file first (the side files follow them)
    normalizer: object = None
    pre_tokenizer: object = None
    decoder: object = None
    post_processor: object = None
    added: tuple[AddedToken, ...] = ()
    notes: list[str] = field(default_factory=list)
    bos: str | None = None  # None: the configs' bos_token role ("": none)
    eos: str | None = None  # None: the configs' eos_token role ("": none)
    eos_source: str = ""  # where `eos` came from (for its stop id)
    extra_stops: tuple[tuple[str, str], ...] = ()  # (text, source): the format's own stop tokens
    template: tuple[str, str] | None = None  # (text, source) carried by a self-contained file; None: the directory's
    mistral_file: Path | None = None  # a file mistral_common generates the chat template from (tekken, *.model.vN)
    add_bos_token: bool | None = None  # None: tokenizer_config.json's
    add_eos_token: bool | None = None
    differences: tuple = ()  # `Loss` values: where the IR knowingly differs from the source's library
    regex_dialect: str = "oniguruma"
    interpretation: FolderInterpretation = FolderInterpretation()  # the reader's decisions (casing, class, ...)


def finish(p: Parsed, chat_template: str | None = None) -> Tokenizer:
    """The `Tokenizer` of what a reader parsed (see the module docstring); `chat_template` picks a
    named template or a file (`--chat-template`)."""
    side, notes, inputs = p.side, list(p.notes), [*p.inputs, *p.side.inputs]
    ids = dict(M.vocab_of(p.model))
    ids.update({t.content: t.id for t in p.added})
    bos, bos_source = (p.bos, "the source file") if p.bos is not None else side.role_from("bos_token") or (None, "")
    eos, eos_source = p.eos, p.eos_source
    if eos is None:
        eos, eos_source = side.role_from("eos_token") or (None, "")
    interpretation = p.interpretation.with_(bos=Decision(bos or "", bos_source or "none declared"),
                                            eos=Decision(eos or "", eos_source or "none declared"),
                                            usage=_usage(p))
    stops = stop_ids(ids, (ids[eos], eos_source or "eos_token") if eos and eos in ids else None,
                     side.directory or Path("."), side.gen, side.mcfg, p.extra_stops)
    chat = _chat(p, bos or "", eos or "", chat_template, inputs)
    notes.extend(embedding_range_notes(side.mcfg, [*ids.values(), *stops]))
    tcfg = side.tcfg
    return Tokenizer(
        model=p.model, normalizer=p.normalizer, pre_tokenizer=p.pre_tokenizer, decoder=p.decoder,
        post_processor=p.post_processor, added_tokens=p.added, special_ids=header_special_order(p.added),
        stop_ids=tuple(stops), chat=chat,
        meta=Metadata(add_bos_token=tcfg.get("add_bos_token") if p.add_bos_token is None else p.add_bos_token,
                      add_eos_token=tcfg.get("add_eos_token") if p.add_eos_token is None else p.add_eos_token,
                      model_vocab_size=side.mcfg.get("vocab_size"), stop_sources=tuple(stops.items()),
                      notes=tuple(notes), tokenizer_class=tcfg.get("tokenizer_class"), legacy=tcfg.get("legacy"),
                      differences=split_controls(tuple(p.differences), chat), regex_dialect=p.regex_dialect,
                      interpretation=interpretation),
        provenance=provenance(inputs),
    )


def _chat(p: Parsed, bos: str, eos: str, choice: str | None, inputs: list) -> ChatTemplate:
    """The template and where it came from: `chat_source.choose`, the one place that decides it."""
    side = p.side
    return choose(directory=side.directory, tcfg=side.tcfg, config_path=side.config_path, carried=p.template,
                  main=Path(p.inputs[0]), mistral_file=p.mistral_file, choice=choice, bos=bos, eos=eos,
                  inputs=inputs, encoder_only=_encoder_only(p))


def _usage(p: Parsed) -> Decision:
    clip = isinstance(p.model, M.BPE) and getattr(p.model, "end_of_word_suffix", None) == "</w>"
    return decide_usage(p.side.directory, p.side.mcfg, p.side.tcfg, wordpiece=isinstance(p.model, M.WordPiece),
                        encoder_post=_encoder_post(p), clip=clip)


def _encoder_post(p: Parsed) -> str:
    """The name of BERT's or RoBERTa's [CLS] ... [SEP] post-processor when the pipeline has one ("")."""
    steps = getattr(p.post_processor, "processors", None) or (p.post_processor,)
    return next((type(x).__name__ for x in steps if isinstance(x, (R.BertProcessing, R.RobertaProcessing))), "")


def _encoder_only(p: Parsed) -> str:
    """Why the tokenizer is an encoder model's, which does not chat ("": nothing says so): WordPiece
    (BERT's family) or BERT's / RoBERTa's [CLS] ... [SEP] post-processor."""
    if isinstance(p.model, M.WordPiece):
        return "a WordPiece vocabulary (an encoder model's)"
    post = _encoder_post(p)
    return f"the {post} post-processor (an encoder model's)" if post else ""
