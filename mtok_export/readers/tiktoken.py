"""tiktoken rank files (`*.tiktoken`, Llama-3's `tiktoken.model`: one `<base64 token> <rank>` per
line) -> IR as a byte-level BPE.

The ranks become a vocabulary in GPT-2 byte characters (id = rank) and merges: every split of a
token into two tokens of the file is a merge, ordered by the rank of the result, then by the ranks
of the two halves.  tiktoken merges the adjacent pair whose concatenation has the lowest rank and
looks a whole pre-token up before merging, so the model gets `ignore_merges=True`.  This is what
transformers' `TikTokenConverter` builds; the Llama-3 `tokenizer.json` in the corpus holds exactly
these merges.  Pipeline: Split(Regex(pattern), Isolated) then ByteLevel(use_regex=False), decoder
ByteLevel, post-processor ByteLevel(trim_offsets=False) (adds nothing: tiktoken adds no BOS).

A rank file holds neither the split regex nor the special tokens.  Each is taken from the first
of these that has it, and the source is recorded in `Metadata.notes`:

1. the `pattern=` / `special=` arguments (the CLI's `--pattern` / `--special`);
2. a `tokenizer.json` beside the file (its Split regex; its added tokens);
3. `tokenizer_config.json` beside the file (`added_tokens_decoder`; special tokens only);
4. `KNOWN`, the table of known vocabularies keyed by the sha256 of the rank file.

If the pattern or the special tokens are still unknown, `InputError` says which and how to give
them.  `special={}` means "no special tokens".

Known vocabularies (`KNOWN`, keyed by file sha256; nothing is keyed by size or content guesses):

| name | sha256 source | pattern / specials source |
|---|---|---|
| qwen (Qwen-1 `qwen.tiktoken`) | computed from the corpus file | `tokenization_qwen.py` (QwenLM/Qwen-Agent `qwen_agent/utils/tokenization_qwen.py`): specials from 151643; it NFC-normalizes before encoding, so the entry adds an NFC normalizer |
| llama3 (Meta-Llama-3 `tiktoken.model`) | computed from the corpus file | pattern of the corpus Llama-3 `tokenizer.json`; 256 specials from 128000 as in its `tokenizer_config.json` (Llama 3.1+ ship the same ranks with renamed reserved tokens: give their config) |
| cl100k_base, o200k_base, r50k_base, p50k_base | `expected_hash` in `tiktoken_ext/openai_public.py` (tiktoken 0.14) | same file (`p50k_base`: the `p50k_edit` FIM tokens are not included) |

| llama4 (Llama 4 `tokenizer.model`) | computed from the file in the llama-models 0.3.0 wheel on PyPI | its `llama_models/llama4/tokenizer.py`: `O200K_PATTERN`, 2048 specials from 200000 (file:line beside the entry) |
| whisper-multilingual (`multilingual.tiktoken`) | computed from the file in the openai-whisper 20250625 sdist on PyPI | its `whisper/tokenizer.py` `get_encoding()`: pattern, specials from 50257 (99 languages, its default) |

Whisper's `gpt2.tiktoken` is byte-identical to `r50k_base` (same sha256, 306cd27f...), so it reads
as r50k_base; Whisper's own special tokens for it need `special=` (or its configs).  Kimi-K2's
`tiktoken.model` is not in the table: no public copy or published hash was found, and keying it by
size or first tokens would be a guess; Kimi repositories ship `tokenizer_config.json` (special
tokens) and `tokenization_kimi.py`, whose split regex `remote_code.py` reads statically."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from ..errors import InputError
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..ir.byte_level import BYTE_CHARS, bytes_to_tokens
from ..ir.walk import members
from .finish import Parsed, collect_added, finish, read_side_files, sha256
from .hf_json import parse_tokenizer_json
from ..json_value import check_value, load_json, parse_json
from .regex_check import check_tiktoken_pattern

_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+")
FILE_NAMES = ("*.tiktoken", "tiktoken.model", "tokenizer.model")


@dataclass(frozen=True)
class KnownVocab:
    name: str
    sha256: str
    n_ranks: int
    pattern: str
    specials: tuple[tuple[str, int], ...]
    stops: tuple[str, ...] = ()
    nfc: bool = False
    source: str = ""


_QWEN_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                 r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                   r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
_R50K_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
_CL100K_PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
                   r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s""")
_O200K_PATTERN = "|".join((
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
))


def _numbered(start: int, names: Sequence[str]) -> tuple[tuple[str, int], ...]:
    return tuple((n, start + i) for i, n in enumerate(names))


_LLAMA3_SPECIALS = _numbered(128000, [
    "<|begin_of_text|>", "<|end_of_text|>", *(f"<|reserved_special_token_{i}|>" for i in range(4)),
    "<|start_header_id|>", "<|end_header_id|>", "<|reserved_special_token_4|>", "<|eot_id|>",
    *(f"<|reserved_special_token_{i}|>" for i in range(5, 251))])

# Whisper's language tokens in its order (openai-whisper `whisper/tokenizer.py` LANGUAGES); its
# get_encoding() uses the first 99 by default (large-v3 models use 100, adding "yue").
_WHISPER_LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la "
    "mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be "
    "tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su").split()
_WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_WHISPER_SPECIALS = _numbered(50257, [
    "<|endoftext|>", "<|startoftranscript|>", *(f"<|{lang}|>" for lang in _WHISPER_LANGUAGES),
    "<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>",
    *(f"<|{i * 0.02:.2f}|>" for i in range(1501))])


def _llama4_reserved(name: str, count: int, start: int = 0) -> list[str]:
    return [f"<|{name}_reserved_special_token_{i}|>" for i in range(start, start + count)]


# Llama 4's special tokens as llama-models 0.3.0 (PyPI) defines them in llama_models/llama4/tokenizer.py:
# BASIC_SPECIAL_TOKENS (:104-110), then LLAMA4_SPECIAL_TOKENS (:100-102), the text post-train (:48-65),
# vision (:68-84) and reasoning (:87-98) lists (get_reserved_special_tokens, :43-44), then
# <|reserved_special_token_i|> up to num_reserved_special_tokens = 2048 (:120, :149-152), numbered from
# the 200,000 ranks (:154); stop tokens eos, eom, eot (:175-179).
_LLAMA4_NAMED = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
    "<|header_start|>", "<|header_end|>", "<|eom|>", "<|eot|>", "<|step|>", *_llama4_reserved("text_post_train", 6),
    "<|python_start|>", "<|python_end|>", "<|finetune_right_pad|>", *_llama4_reserved("text_post_train", 61, 8),
    "<|image_start|>", "<|image_end|>", *_llama4_reserved("vision", 2), "<|tile_x_separator|>",
    "<|tile_y_separator|>", *_llama4_reserved("vision", 4, 2), "<|image|>", *_llama4_reserved("vision", 1, 6),
    "<|patch|>", *_llama4_reserved("vision", 1041, 7),
    *_llama4_reserved("reasoning", 8), "<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
_LLAMA4_SPECIALS = _numbered(200000, [*_LLAMA4_NAMED, *(f"<|reserved_special_token_{i}|>"
                                                        for i in range(2048 - len(_LLAMA4_NAMED)))])

KNOWN: dict[str, KnownVocab] = {v.sha256: v for v in (
    KnownVocab("qwen", "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186", 151643, _QWEN_PATTERN,
               _numbered(151643, ["<|endoftext|>", "<|im_start|>", "<|im_end|>",
                                  *(f"<|extra_{i}|>" for i in range(205))]),
               stops=("<|endoftext|>", "<|im_end|>"), nfc=True,
               source="Qwen-1 tokenization_qwen.py (PAT_STR, SPECIAL_START_ID 151643, NFC before encoding)"),
    KnownVocab("llama3", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55", 128000, _LLAMA3_PATTERN,
               _LLAMA3_SPECIALS, stops=("<|end_of_text|>", "<|eot_id|>"),
               source="Meta-Llama-3 tokenizer.json / tokenizer_config.json (specials from 128000)"),
    # llama-models 0.3.0 llama_models/llama4/tokenizer.model (sha256 computed from the wheel's file); its
    # pattern is that file's Tokenizer.O200K_PATTERN (:122), o200k_base's; no NFC (it encodes as given)
    KnownVocab("llama4", "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed", 200000, _O200K_PATTERN,
               _LLAMA4_SPECIALS, stops=("<|end_of_text|>", "<|eom|>", "<|eot|>"),
               source="llama-models 0.3.0 llama_models/llama4/tokenizer.py (O200K_PATTERN, specials from 200000)"),
    KnownVocab("whisper-multilingual", "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126", 50257,
               _WHISPER_PATTERN, _WHISPER_SPECIALS, stops=("<|endoftext|>",),
               source="openai-whisper 20250625 whisper/assets/multilingual.tiktoken and get_encoding() "
                      "(99 languages; large-v3 has 100: give its config or --special)"),
    KnownVocab("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7", 100256,
               _CL100K_PATTERN, (("<|endoftext|>", 100257), ("<|fim_prefix|>", 100258), ("<|fim_middle|>", 100259),
                                 ("<|fim_suffix|>", 100260), ("<|endofprompt|>", 100276)),
               stops=("<|endoftext|>",), source="tiktoken_ext.openai_public.cl100k_base"),
    KnownVocab("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d", 199998,
               _O200K_PATTERN, (("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)),
               stops=("<|endoftext|>",), source="tiktoken_ext.openai_public.o200k_base"),
    KnownVocab("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930", 50256,
               _R50K_PATTERN, (("<|endoftext|>", 50256),), stops=("<|endoftext|>",),
               source="tiktoken_ext.openai_public.r50k_base"),
    KnownVocab("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069", 50280,
               _R50K_PATTERN, (("<|endoftext|>", 50256),), stops=("<|endoftext|>",),
               source="tiktoken_ext.openai_public.p50k_base"),
)}


# ------------------------------------------------------------------ the rank file


def looks_like_tiktoken(path: Path) -> bool:
    """True if the first non-blank line of `path` is `<base64> <rank>` (content, not name)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    for line in head.split(b"\n"):
        line = line.strip()
        if line:
            return bool(_LINE.fullmatch(line))
    return False


def find_rank_file(directory: Path) -> Path | None:
    for pattern in FILE_NAMES:
        for p in sorted(directory.glob(pattern)):
            if p.is_file() and looks_like_tiktoken(p):
                return p
    return None


def parse_ranks(data: bytes, path) -> dict[bytes, int]:
    """Strictly parse a rank file: every non-blank line is `<base64 token> <rank>` with canonical
    base64, a decimal rank, no token or rank twice.  One empty token (`=`, Whisper's placeholder at
    50256) is kept, as tiktoken's loader and HF's tokenizer.json do.  A rank missing below the
    highest must be a special token's id (p50k_base leaves 50256 to <|endoftext|>): `parse_ranks_with`
    checks that, once the specials are known."""
    ranks: dict[bytes, int] = {}
    line_of_rank: dict[int, int] = {}
    for lineno, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        parts = line.split()  # any whitespace, as tiktoken's loader splits
        where = f"{path} line {lineno}"
        if len(parts) != 2:
            raise InputError(f"{where}: expected '<base64 token> <rank>', got {line[:60]!r}")
        tok64, rank_text = parts
        try:
            token = b"" if tok64 == b"=" else base64.b64decode(tok64, validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{where}: token {tok64[:40].decode('latin-1')!r} is not valid base64") from None
        if not rank_text.isdigit():
            raise InputError(f"{where}: rank {rank_text[:20].decode('latin-1')!r} is not a non-negative integer")
        rank = int(rank_text)
        if token in ranks:
            raise InputError(f"{where}: token {token!r:.40} already has rank {ranks[token]} "
                             f"(line {line_of_rank[ranks[token]]})")
        if rank in line_of_rank:
            raise InputError(f"{where}: rank {rank} is already used on line {line_of_rank[rank]}")
        ranks[token] = rank
        line_of_rank[rank] = lineno
    if not ranks:
        raise InputError(f"{path}: no ranks (empty file)")
    return ranks


def rank_gaps(ranks: Mapping[bytes, int]) -> list[int]:
    """The ids below the highest rank that no token has."""
    top = max(ranks.values(), default=-1)
    if top == len(ranks) - 1:
        return []
    have = set(ranks.values())
    return [r for r in range(top) if r not in have]


def ranks_to_bpe(ranks: dict[bytes, int]) -> tuple[dict[str, int], tuple[tuple[str, str], ...], int]:
    """-> (vocab in GPT-2 characters, id = rank, merges, number of multi-byte tokens no merge
    produces).  A gap in the ranks stays a gap in the vocabulary (a special token's id).  The merges
    are cached by the ranks' content: finding them tries every split of every token (0.4 s for 150k
    tokens); a hit reads them back in a tenth."""
    by_rank = sorted(ranks, key=ranks.__getitem__)
    chars = bytes_to_tokens(by_rank)  # by rank
    ids = [ranks[t] for t in by_rank]
    vocab = dict(zip(chars, ids))
    char_of = dict(zip(ids, chars))
    gapped = (cache.strings_blob([str(i) for i in ids]),) if ids[-1] != len(ids) - 1 else ()  # else: 0..n-1
    digest = cache.key("tiktoken-merges", blobs=(cache.strings_blob(by_rank), *gapped), files=(__file__,))
    found = cache.computed("tiktoken-merges", digest, lambda: _merge_ranks(by_rank, ranks),
                           valid=lambda v: isinstance(v, dict) and isinstance(v.get("pairs"), list))
    pairs = found["pairs"]
    merges = tuple(zip(map(char_of.__getitem__, pairs[0::2]), map(char_of.__getitem__, pairs[1::2])))
    return vocab, merges, found["unreachable"]


def _merge_ranks(by_rank: list[bytes], ranks: dict[bytes, int]) -> dict:
    """Every split of every token into two tokens, as the merge (left rank, right rank) at the
    token's rank, in rank order: {"pairs": [a0, b0, a1, b1, ...], "unreachable": count}."""
    found = []
    unreachable = 0
    get = ranks.get
    for token in by_rank:
        rank = ranks[token]
        n = len(token)
        if n <= 1:  # a byte, or Whisper's empty placeholder token "=" (as HF's tokenizer.json keeps it)
            continue
        local = [(rank, a, b) for k in range(1, n)
                 if (a := get(token[:k])) is not None and (b := get(token[k:])) is not None]
        if not local:
            unreachable += 1
        found.extend(local)
    found.sort()
    return {"pairs": [x for _, a, b in found for x in (a, b)], "unreachable": unreachable}


# ------------------------------------------------------------------ sources of pattern and specials


def _beside_tokenizer_json(directory: Path):
    """(pattern, added tokens, normalizer, path, model vocab size) of a tokenizer.json beside the rank
    file (pattern and added tokens None when it has none; all None without the file)."""
    p = directory / "tokenizer.json"
    if not p.is_file():
        return None, None, None, None, None
    data = load_json(p)
    parts, _ = parse_tokenizer_json(data, str(p))
    pattern = None
    pre = parts["pre_tokenizer"]
    splits = [k for k in members(pre) if isinstance(k, P.Split) and k.pattern.regex]
    if len(splits) == 1:
        pattern = splits[0].pattern.value
    return pattern, (parts["added_tokens"] or None), parts["normalizer"], p, len(M.vocab_of(parts["model"]))


def parse_special_arg(value: str) -> dict[str, int]:
    """The CLI's `--special`: a JSON object {token: id} or a JSON list of tokens (ids then follow the
    ranks), given inline or as the path of a file holding it.  -> the parsed value for `special=`."""
    text = value
    p = Path(value)
    if not value.lstrip().startswith(("{", "[")) and p.is_file():
        text = p.read_text(encoding="utf-8")
    try:
        return parse_json(text, "--special")
    except InputError as e:
        raise InputError(f"{e}; expected a JSON object {{token: id}} or list of tokens, or a file holding one") from None


def _special_map(special, n: int, where: str) -> dict[str, int]:
    if isinstance(special, Mapping):
        out = dict(special)
    elif isinstance(special, Sequence) and not isinstance(special, str):
        out = {t: n + i for i, t in enumerate(special)}
    else:
        raise InputError(f"{where}: special tokens must be {{token: id}} or a list of tokens")
    for t, i in out.items():
        if not isinstance(t, str) or not t or not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise InputError(f"{where}: special token {t!r} -> {i!r} must be a non-empty string and a non-negative id")
    check_value(out, where)  # valid Unicode: a dict from Python is not checked by the JSON loader
    return out


def read_tiktoken(path: Path, *, pattern: str | None = None, special=None,
                  chat_template: str | None = None) -> Tokenizer:
    """`parse_tiktoken`, finished; `chat_template` picks a named template or a file."""
    return finish(parse_tiktoken(path, pattern=pattern, special=special), chat_template)


def _found_specials(tj_added, tj_path, side, vocab, known, notes) -> tuple[tuple[AddedToken, ...] | None, str | None]:
    """(special tokens, where from) when none are given: a tokenizer.json beside the file, then
    tokenizer_config.json's added_tokens_decoder, then the known vocabulary's; (None, None) if none."""
    if tj_added is not None:
        return tuple(sorted(tj_added, key=lambda t: t.id)), f"{tj_path.name} added_tokens"
    if side.tcfg.get("added_tokens_decoder"):
        return collect_added(side, vocab, {}, notes), "tokenizer_config.json added_tokens_decoder"
    if known is not None:
        return (tuple(AddedToken(i, t, normalized=False, special=True) for t, i in known.specials),
                f"known vocabulary {known.name} ({known.source})")
    return None, None


def parse_tiktoken(path: Path, *, pattern: str | None = None, special=None, pattern_src: str | None = None,
                   special_src: str | None = None) -> Parsed:
    """A rank file (or a directory holding one) -> IR.  See the module docstring for where the split
    pattern and the special tokens come from; `pattern_src`/`special_src` say where a given
    `pattern`/`special` was found (e.g. `remote_code.py`'s file:line), for the notes."""
    path = Path(path)
    if path.is_dir():
        found = find_rank_file(path)
        if found is None:
            raise InputError(f"{path}: no tiktoken rank file here (looked for {', '.join(FILE_NAMES)})")
        path = found
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from e
    return parse_ranks_with(path, parse_ranks(data, path), sha256(path), pattern=pattern, special=special,
                            pattern_src=pattern_src, special_src=special_src)


def parse_ranks_with(path: Path, ranks: dict[bytes, int], digest: str, *, pattern: str | None = None, special=None,
                     pattern_src: str | None = None, special_src: str | None = None,
                     stops_of_known: bool = False) -> Parsed:
    """The IR of ranks read from `path` (a rank file, or a ranks JSON: `tiktoken_json`), `digest`
    the sha256 of their rank-file form (`KNOWN`'s key); pattern and specials as `parse_tiktoken`.
    A known vocabulary's stop tokens are taken when its specials are (`stops_of_known`: also when
    the specials come from the source itself and hold them)."""
    n = len(ranks)
    known = KNOWN.get(digest)
    directory = path.parent
    side = read_side_files(directory)
    notes: list[str] = []
    tj_pattern, tj_added, tj_norm, tj_path, tj_size = _beside_tokenizer_json(directory)
    vocab, merges, unreachable = ranks_to_bpe(ranks)
    inputs = [path, *([tj_path] if tj_path else [])]

    if pattern is not None:
        pattern_src = pattern_src or "the pattern argument"
    elif tj_pattern is not None:
        pattern, pattern_src = tj_pattern, f"{tj_path.name} (Split regex)"
    elif known is not None:
        pattern, pattern_src = known.pattern, f"known vocabulary {known.name} ({known.source})"
    else:
        pattern_src = None
    if special is not None:
        sp = _special_map(special, max(ranks.values()) + 1, "special")  # a list follows the ranks
        added = tuple(AddedToken(i, t, normalized=False, special=True) for t, i in sorted(sp.items(), key=lambda x: x[1]))
        special_src = special_src or "the special argument"
    else:
        added, special_src = _found_specials(tj_added, tj_path, side, vocab, known, notes)

    missing = [what for what, src in (("the split regex (pattern=, CLI --pattern)", pattern_src),
                                       ("the special tokens (special=, CLI --special; {} for none)", special_src))
               if src is None]
    if missing:
        if (directory / "tokenizer_config.json").is_file():  # a config never holds the regex
            beside = "tokenizer_config.json beside it holds no split regex" + (
                "" if special_src else " and no special tokens (added_tokens_decoder)")
        else:
            beside = "no tokenizer.json / tokenizer_config.json beside it"
        raise InputError(f"{path}: a tiktoken file holds only ranks; unknown vocabulary (sha256 {digest[:16]}..., "
                         f"{n} ranks) and {beside}, so give " + " and ".join(missing))
    check_tiktoken_pattern(pattern, f"{path} ({pattern_src})")
    if tj_path is not None and tj_size != n:
        notes.append(f"{tj_path.name} beside it has {tj_size} model tokens, the rank file {n}: "
                     "check that they belong together")
    notes.append(f"split regex from {pattern_src}")
    notes.append(f"special tokens from {special_src}")
    if known is not None and known.n_ranks != n:  # cannot happen for a matching hash; guards the table
        raise InputError(f"{path}: known vocabulary {known.name} should have {known.n_ranks} ranks, found {n}")
    by_rank = {r: tok for tok, r in ranks.items()}
    for t in added:
        if t.id in by_rank and by_rank[t.id] != t.content.encode("utf-8"):
            raise InputError(f"{path}: special token {t.content!r} has id {t.id}, which is rank "
                             f"{by_rank[t.id]!r:.40} of the file ({special_src})")
    gaps = rank_gaps(ranks)
    if gaps:  # each must be a special token's id (p50k_base: 50256 is <|endoftext|>)
        taken = {t.id for t in added}
        missing = [r for r in gaps if r not in taken]
        if missing:
            raise InputError(f"{path}: ranks must be 0..{max(by_rank)} without gaps, but rank {missing[0]} is "
                             f"missing and no special token has that id ({special_src})")
        notes.append(f"{len(gaps)} id(s) between the ranks are special tokens' (e.g. {gaps[0]})")

    if unreachable:
        notes.append(f"{unreachable} multi-byte token(s) are not the concatenation of two tokens: only a whole "
                     "pre-token can produce them")
    missing_bytes = [b for b in range(256) if BYTE_CHARS[b] not in vocab]
    if missing_bytes:
        notes.append(f"{len(missing_bytes)} byte(s) have no single-byte rank (e.g. 0x{missing_bytes[0]:02x}): "
                     "tiktoken fails on text holding them")
    normalizer = None
    if tj_path is not None:
        normalizer = tj_norm
    elif known is not None and known.nfc:
        normalizer = N.NFC()
        notes.append(f"NFC normalizer: {known.name}'s tokenizer normalizes to NFC before encoding")
    model = M.BPE(vocab=vocab, merges=merges, ignore_merges=True)
    pre = P.Sequence((P.Split(Pattern(pattern, regex=True), "Isolated"),
                      P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)))
    stops = ()
    if known is not None and (special_src.startswith("known") or stops_of_known):
        held = {t.content for t in added}  # the stop tokens the specials chosen hold
        stops = tuple((s, f"known vocabulary {known.name}") for s in known.stops if s in held)
    return Parsed(model=model, side=side, inputs=inputs, added=added, notes=notes, normalizer=normalizer,
                  pre_tokenizer=pre, decoder=D.ByteLevel(),
                  post_processor=R.ByteLevel(add_prefix_space=True, trim_offsets=False, use_regex=True),
                  extra_stops=stops, regex_dialect="tiktoken")  # tiktoken runs the regex
