"""GPT-2 style `vocab.json` + `merges.txt` (with `added_tokens.json`, `special_tokens_map.json`,
`tokenizer_config.json`) -> IR, matching what the `tokenizer.json` of GPT-2 / RoBERTa / Whisper holds.

Also home of two things the other non-`tokenizer.json` readers share (`tiktoken.py`,
`bert_vocab.py`) and the legacy `.txt` codecs use:

* the GPT-2 byte <-> character map (`BYTE_CHARS`, `bytes_to_token`, `token_to_bytes`);
* `SideFiles` / `assemble`: the JSON files beside a vocabulary and the common finishing of an IR
  (added tokens, special/stop ids, chat template, metadata, provenance), following
  `model_dir.read_model_dir` so every reader decides header lists the same way.

Which post-processor a vocab.json/merges.txt pair gets is decided from `tokenizer_config.json`
`tokenizer_class`, conservatively (what transformers' slow->fast converters build):

| tokenizer_class (without `Fast`) | family | post-processor |
|---|---|---|
| GPT2Tokenizer, CodeGenTokenizer | gpt2 | ByteLevel(trim_offsets=False); TemplateProcessing(bos $A) if `add_bos_token` |
| RobertaTokenizer, BartTokenizer, LongformerTokenizer, LEDTokenizer, MvpTokenizer | roberta | RobertaProcessing(`</s>`, `<s>`) |
| WhisperTokenizer | whisper | TemplateProcessing(`<|startoftranscript|>` [lang] [task] [`<|notimestamps|>`] $A eos) |
| anything else (e.g. CLIPTokenizer, which needs `</w>`) | - | UnsupportedError: pass `family=` |
| missing | roberta if vocab.json starts with fairseq's `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3, else gpt2 (noted) | as above |

The pre-tokenizer is always ByteLevel(add_prefix_space from the config, default False), the
decoder ByteLevel, the model BPE with `continuing_subword_prefix=""`, `end_of_word_suffix=""`
(as the converters write them)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__
from ..errors import InputError, UnsupportedError
from ..ir import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from .hf_config import (Templates, embedding_range_notes, find_templates, header_special_order, id_list, load_json,
                        load_json_object, pick_template, token_text)
from .model_dir import END_OF_TURN, sha256

# ------------------------------------------------------------------ GPT-2 byte map


def _byte_chars() -> tuple[str, ...]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    out = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in out:
            out[b] = chr(0x100 + extra)
            extra += 1
    return tuple(out[b] for b in range(256))


BYTE_CHARS: tuple[str, ...] = _byte_chars()  # byte value -> GPT-2 character
CHAR_BYTES: dict[str, int] = {c: b for b, c in enumerate(BYTE_CHARS)}
_TO_CHARS = {b: c for b, c in enumerate(BYTE_CHARS)}  # str.translate table over latin-1 text
# The inverse; characters below U+0100 that are no GPT-2 character become U+0100 so that the
# final latin-1 encode rejects them (translate does not re-map its own output).
_FROM_CHARS = {**{cp: "\u0100" for cp in range(256)}, **{ord(c): chr(b) for b, c in enumerate(BYTE_CHARS)}}


def bytes_to_token(b: bytes) -> str:
    """Raw bytes -> the GPT-2 byte-level vocabulary string."""
    return b.decode("latin-1").translate(_TO_CHARS)


def token_to_bytes(token: str) -> bytes | None:
    """GPT-2 byte-level vocabulary string -> raw bytes, or None if it is not byte-level."""
    try:
        return token.translate(_FROM_CHARS).encode("latin-1")
    except UnicodeEncodeError:
        return None


# ------------------------------------------------------------------ side files and assembly

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
    decoder = side.tcfg.get("added_tokens_decoder") or {}
    if not isinstance(decoder, dict):
        raise UnsupportedError("added_tokens_decoder must be an object", json_path="$.added_tokens_decoder",
                               path=str(side.config_path))
    for key, t in decoder.items():
        jp = f"$.added_tokens_decoder[{key!r}]"
        if not (key.isdigit() and isinstance(t, dict) and isinstance(t.get("content"), str)):
            raise UnsupportedError("entries must be 'id': {content, ...}", json_path=jp, path=str(side.config_path))
        by_id[int(key)] = AddedToken(int(key), t["content"], bool(t.get("single_word", False)),
                                     bool(t.get("lstrip", False)), bool(t.get("rstrip", False)),
                                     bool(t.get("normalized", not t.get("special", False))),
                                     bool(t.get("special", False)))
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
    """The finishing every reader shares (same rules as `read_model_dir`): special ids are the special
    added tokens, longest content first; stop ids are eos from every config, the family's end-of-turn
    tokens and `extra_stops` ((text, source) pairs), each with its source; the chat template comes
    from the directory (chat_template.jinja / .json / tokenizer_config.json)."""
    directory = side.directory
    ids = dict(M.vocab_of(model))
    ids.update({t.content: t.id for t in added})
    bos = bos if bos is not None else side.role("bos_token")
    eos = eos if eos is not None else side.role("eos_token")
    stops: dict[int, str] = {}
    if eos is not None and eos in ids:
        stops.setdefault(ids[eos], "eos_token")
    if directory is not None:
        for i in id_list(side.gen.get("eos_token_id"), directory / "generation_config.json", "eos_token_id"):
            stops.setdefault(i, "generation_config.json eos_token_id")
        for i in id_list(side.mcfg.get("eos_token_id"), directory / "config.json", "eos_token_id"):
            stops.setdefault(i, "config.json eos_token_id")
    for text, source in extra_stops:
        if text in ids:
            stops.setdefault(ids[text], source)
    for text in END_OF_TURN:
        if text in ids:
            stops.setdefault(ids[text], f"end-of-turn token {text}")
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
        provenance=Provenance(tuple(InputFile(str(p), sha256(p)) for p in dict.fromkeys(inputs)), __version__,
                              unicodedata.unidata_version),
    )


# ------------------------------------------------------------------ vocab.json + merges.txt

FAMILIES = ("gpt2", "roberta", "whisper")
_CLASS_FAMILY = {
    "GPT2Tokenizer": "gpt2", "CodeGenTokenizer": "gpt2",
    "RobertaTokenizer": "roberta", "BartTokenizer": "roberta", "LongformerTokenizer": "roberta",
    "LEDTokenizer": "roberta", "MvpTokenizer": "roberta",
    "WhisperTokenizer": "whisper",
}
_FAIRSEQ_HEAD = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
# Special-token defaults of the slow tokenizer classes (used when no config names a role).
_ROLE_DEFAULTS = {
    "gpt2": {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"},
    "whisper": {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"},
    "roberta": {"bos_token": "<s>", "eos_token": "</s>", "sep_token": "</s>", "cls_token": "<s>",
                "unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>"},
}


def read_vocab_json(path: Path) -> dict[str, int]:
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: vocab.json must be a JSON object token -> id, got {type(data).__name__}")
    seen: dict[int, str] = {}
    for token, i in data.items():
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise InputError(f"{path}: id of {token!r} must be a non-negative integer, got {i!r:.40}")
        if i in seen:
            raise InputError(f"{path}: id {i} is used by both {seen[i]!r} and {token!r}")
        seen[i] = token
    if not data:
        raise InputError(f"{path}: vocab.json is empty")
    return data


def read_merges_txt(path: Path, vocab: dict[str, int]) -> tuple[tuple[str, str], ...]:
    """`merges.txt`: an optional `#version` first line, then `left right` per line (rank = order).
    Blank lines are skipped (files end with one); every other line must be exactly two tokens of
    the vocabulary whose concatenation is in the vocabulary, as HF's BPE builder requires."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 at byte {e.start}") from e
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line or (lineno == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise InputError(f"{path} line {lineno}: expected 'left right' (two tokens and one space), "
                             f"got {len(parts)} part(s): {line[:60]!r}")
        a, b = parts
        for t in (a, b, a + b):
            if t not in vocab:
                raise InputError(f"{path} line {lineno}: merge {line[:60]!r} names {t!r}, which is not in vocab.json")
        out.append((a, b))
    return tuple(out)


def _family(side: SideFiles, vocab: dict[str, int], family: str | None, notes: list[str], path: Path) -> str:
    if family is not None:
        if family not in FAMILIES:
            raise InputError(f"unknown family {family!r} (known: {', '.join(FAMILIES)})")
        notes.append(f"post-processing of family {family!r}, as requested")
        return family
    cls = side.tcfg.get("tokenizer_class")
    if isinstance(cls, str):
        base = cls[:-4] if cls.endswith("Fast") else cls
        if base in _CLASS_FAMILY:
            return _CLASS_FAMILY[base]
        raise UnsupportedError(f"tokenizer_class {cls!r}: the vocab.json/merges.txt reader only knows "
                               f"{', '.join(sorted(_CLASS_FAMILY))}; pass a family ({', '.join(FAMILIES)}) "
                               "if its pipeline is one of those", json_path="$.tokenizer_class",
                               path=str(side.config_path))
    if all(vocab.get(t) == i for t, i in _FAIRSEQ_HEAD.items()):
        notes.append("no tokenizer_class: RoBERTa post-processing (<s> $A </s>) inferred from the fairseq "
                     "vocabulary head <s>=0 <pad>=1 </s>=2 <unk>=3")
        return "roberta"
    notes.append("no tokenizer_class: GPT-2 post-processing (adds nothing) assumed")
    return "gpt2"


def read_gpt2_files(path: Path, *, family: str | None = None, chat_template: str | None = None,
                    merges_path: Path | None = None) -> Tokenizer:
    """`path` is a directory holding vocab.json and merges.txt, or the vocab JSON itself (OpenAI's
    `encoder.json` too); `merges_path` names the merges file when it is not `merges.txt` beside it
    (OpenAI's `vocab.bpe`)."""
    path = Path(path)
    vocab_path = path / "vocab.json" if path.is_dir() else path
    directory = vocab_path.parent
    merges_path = Path(merges_path) if merges_path is not None else directory / "merges.txt"
    for p in (vocab_path, merges_path):
        if not p.is_file():
            raise InputError(f"{p}: no such file (a GPT-2 style tokenizer needs vocab.json and merges.txt)")
    notes: list[str] = []
    vocab = read_vocab_json(vocab_path)
    merges = read_merges_txt(merges_path, vocab)
    side = read_side_files(directory)
    fam = _family(side, vocab, family, notes, vocab_path)
    aps = side.tcfg.get("add_prefix_space", False)
    if not isinstance(aps, bool):
        raise UnsupportedError("must be a boolean", json_path="$.add_prefix_space", path=str(side.config_path))
    flags = {"<mask>": {"lstrip": True}} if fam == "roberta" else {}
    added = collect_added(side, vocab, _ROLE_DEFAULTS[fam], notes, flags)
    ids = {**vocab, **{t.content: t.id for t in added}}

    def id_of(role: str) -> tuple[str, int]:
        text = side.role(role) or _ROLE_DEFAULTS[fam].get(role)
        if text is None or text not in ids:
            raise UnsupportedError(f"the {fam} post-processor needs {role} ({text!r}), which is not in the vocabulary",
                                   json_path=f"$.{role}", path=str(side.config_path))
        return text, ids[text]

    if fam == "roberta":
        post = R.RobertaProcessing(sep=id_of("sep_token"), cls=id_of("cls_token"), trim_offsets=True,
                                   add_prefix_space=aps)
    elif fam == "whisper":
        post = _whisper_template(side, ids, id_of("eos_token"))
    elif side.tcfg.get("add_bos_token") is True:
        bos, bos_id = id_of("bos_token")
        post = R.TemplateProcessing(single=(R.Piece(bos, 0, True), R.Piece("A")),
                                    pair=(R.Piece(bos, 0, True), R.Piece("A"), R.Piece("B", 1)),
                                    special_tokens=(R.SpecialToken(bos, (bos_id,), (bos,)),))
    else:
        post = R.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True)
    missing_bytes = [b for b, c in enumerate(BYTE_CHARS) if c not in vocab]
    if missing_bytes:
        notes.append(f"{len(missing_bytes)} byte(s) have no single-byte token (e.g. 0x{missing_bytes[0]:02x}): "
                     "text holding them loses those bytes")
    model = M.BPE(vocab=vocab, merges=merges, continuing_subword_prefix="", end_of_word_suffix="")
    return assemble(side=side, model=model, added=added, inputs=[vocab_path, merges_path, *side.inputs],
                    notes=notes, pre_tokenizer=P.ByteLevel(add_prefix_space=aps, trim_offsets=True, use_regex=True),
                    decoder=D.ByteLevel(), post_processor=post, chat_template=chat_template)


def _whisper_template(side: SideFiles, ids: dict[str, int], eos: tuple[str, int]):
    """transformers' WhisperTokenizer prefix: <|startoftranscript|>, the language and task tokens when
    the config sets them, <|notimestamps|> unless predict_timestamps; then $A and eos."""
    names = ["<|startoftranscript|>"]
    language, task = side.tcfg.get("language"), side.tcfg.get("task")
    if language is not None:
        names.append(f"<|{language}|>")
    if task is not None:
        names.append(f"<|{task}|>")
    if not side.tcfg.get("predict_timestamps", False):
        names.append("<|notimestamps|>")
    for n in names:
        if n not in ids:
            raise UnsupportedError(f"Whisper prefix token {n!r} is not in the vocabulary "
                                   "(language must be a code such as 'en')", path=str(side.config_path))
    eos_name, _ = eos
    pieces = tuple(R.Piece(n, 0, True) for n in names)
    single = pieces + (R.Piece("A"), R.Piece(eos_name, 0, True))
    pair = pieces + (R.Piece("A"), R.Piece("B", 1), R.Piece(eos_name, 1, True))
    specials = tuple(R.SpecialToken(n, (ids[n],), (n,)) for n in sorted(set(names) | {eos_name}))
    return R.TemplateProcessing(single=single, pair=pair, special_tokens=specials)
