"""GPT-2 style `vocab.json` + `merges.txt` (with `added_tokens.json`, `special_tokens_map.json`,
`tokenizer_config.json`) -> IR, matching what the `tokenizer.json` of GPT-2 / RoBERTa / Whisper holds.

The side files and the finishing of the IR are `finish.py`'s; the byte map is `ir.byte_level`.

Which post-processor a vocab.json/merges.txt pair gets is decided from `tokenizer_config.json`
`tokenizer_class`, conservatively (what transformers' slow->fast converters build):

| tokenizer_class (without `Fast`) | family | post-processor |
|---|---|---|
| GPT2Tokenizer, CodeGenTokenizer | gpt2 | ByteLevel(trim_offsets=False); TemplateProcessing(bos $A) if `add_bos_token` |
| RobertaTokenizer, BartTokenizer, LongformerTokenizer, LEDTokenizer, MvpTokenizer | roberta | RobertaProcessing(`</s>`, `<s>`) |
| WhisperTokenizer | whisper | TemplateProcessing(`<|startoftranscript|>` [lang] [task] [`<|notimestamps|>`] $A eos) |
| CLIPTokenizer | clip | CLIP's whole pipeline (`openai_bpe.clip_tokenizer`: lowercasing, whitespace cleanup, `</w>`) |
| anything else | - | UnsupportedError: pass `family=` |
| missing | clip if the vocabulary's tokens end in `</w>`; roberta if vocab.json starts with fairseq's `<s>`=0 `<pad>`=1 `</s>`=2 `<unk>`=3; else gpt2 (noted) | as above |

Except for CLIP, the pre-tokenizer is ByteLevel(add_prefix_space from the config, default False), the
decoder ByteLevel, the model BPE with `continuing_subword_prefix=""`, `end_of_word_suffix=""`
(as the converters write them)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError, UnsupportedError
from ..ir import Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..ir.byte_level import BYTE_CHARS
from .finish import Parsed, SideFiles, collect_added, finish, read_side_files
from .interpretation import FAIRSEQ_HEAD
from .hf_config import load_json
from .openai_bpe import clip_tokenizer

# ------------------------------------------------------------------ vocab.json + merges.txt

FAMILIES = ("gpt2", "roberta", "whisper", "clip")
_CLASS_FAMILY = {
    "GPT2Tokenizer": "gpt2", "CodeGenTokenizer": "gpt2",
    "RobertaTokenizer": "roberta", "BartTokenizer": "roberta", "LongformerTokenizer": "roberta",
    "LEDTokenizer": "roberta", "MvpTokenizer": "roberta",
    "WhisperTokenizer": "whisper",
    "CLIPTokenizer": "clip",
}
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
    if any(t.endswith("</w>") for t in vocab):
        notes.append("no tokenizer_class: CLIP's pipeline inferred from the vocabulary's </w> tokens")
        return "clip"
    if all(vocab.get(t) == i for t, i in FAIRSEQ_HEAD.items()):
        notes.append("no tokenizer_class: RoBERTa post-processing (<s> $A </s>) inferred from the fairseq "
                     "vocabulary head <s>=0 <pad>=1 </s>=2 <unk>=3")
        return "roberta"
    notes.append("no tokenizer_class: GPT-2 post-processing (adds nothing) assumed")
    return "gpt2"


def read_gpt2_files(path: Path, *, family: str | None = None, chat_template: str | None = None,
                    merges_path: Path | None = None) -> Tokenizer:
    """`parse_gpt2_files`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_gpt2_files(path, family=family, merges_path=merges_path), chat_template)


def parse_gpt2_files(path: Path, *, family: str | None = None, merges_path: Path | None = None) -> Parsed:
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
    if fam == "clip":
        return clip_tokenizer(vocab, merges, side=side, inputs=[vocab_path, merges_path], notes=notes)
    aps = side.tcfg.get("add_prefix_space", False)
    if not isinstance(aps, bool):
        raise UnsupportedError("must be a boolean", json_path="$.add_prefix_space", path=str(side.config_path))
    # RoBERTa's <mask> gets lstrip only where a config's object form says so: transformers 5's
    # RobertaTokenizer builds it from a plain string (4.x's slow class forced lstrip=True)
    added = collect_added(side, vocab, _ROLE_DEFAULTS[fam], notes)
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
    return Parsed(model=model, side=side, inputs=[vocab_path, merges_path], added=added, notes=notes,
                  pre_tokenizer=P.ByteLevel(add_prefix_space=aps, trim_offsets=True, use_regex=True),
                  decoder=D.ByteLevel(), post_processor=post)


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
