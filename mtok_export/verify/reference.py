"""The reference side of verification: HF `tokenizers` on the source `tokenizer.json` with the added
tokens its folder's configs declare, added as transformers adds them on load (`hf_tokenizer`: a HF
folder's reference, defined once; ids with and without special tokens, decode), and transformers'
`apply_chat_template` (text and ids)."""

# function-local imports: tokenizers (~10 ms) and transformers (~0.7 s) load only when a reference is
# computed (not when the cache answers), and only the one a format needs: verify.references imports
# every format's reference module

from __future__ import annotations

import importlib.util
import io
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import cache
from ..chat.render import TemplateLimitError, bounded
from ..readers import hf_added
from .budget import STOP
from .reference_drift import drift

# What `AutoTokenizer.from_pretrained` may read is small; weights are skipped (and never hashed).
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".onnx", ".h5", ".msgpack", ".mnn", ".weight")
_MAX_HASHED = 256 << 20


class ReferenceUnavailable(Exception):
    """The independent reference of an input cannot run here (its library is missing, it needs
    remote code, ...): verification of that input is a self-check only, which the policy refuses
    by default.  `why`: one line; `install`: how to make it run (a pip command, an option)."""

    def __init__(self, why: str, install: str = ""):
        self.why, self.install = why, install
        super().__init__(why)


@dataclass
class Reference:
    engine: list[list[int]]  # add_special_tokens=True
    raw: list[list[int]]  # add_special_tokens=False
    decoded: list[str]  # decode(raw, skip_special_tokens=False)
    chat_text: list[str | None]  # None: transformers raised (e.g. raise_exception)
    chat_ids: list[list[int] | None]
    normalize: object  # str -> str, HF's normalizer (identity when none)
    drift: dict | None = None  # transformers' AutoTokenizer gives other ids than the file (`reference_drift`)
    # () -> `spm_unigram.Lattice`: the library's own Unigram pieces, where the reference is the
    # sentencepiece library on a Unigram model (attribution's `sp-float32-viterbi` evidence); else None
    unigram: object = None


def hf_reference(src_dir: Path, texts: list[str], chats: list, template: str | None = None,
                 tokenizer_file: Path | None = None) -> Reference:
    """`template`: the chat template the export chose (a named one, or `--chat-template FILE`)
    [default: the source's default]; `tokenizer_file`: the tokenizer.json read, whatever its name
    [default: `src_dir/tokenizer.json`]."""
    tokenizer_file = Path(tokenizer_file) if tokenizer_file is not None else Path(src_dir) / "tokenizer.json"
    files = [f for f in sorted(Path(src_dir).iterdir())
             if f.is_file() and not f.name.endswith(_WEIGHTS) and f.stat().st_size <= _MAX_HASHED]
    digest = cache.key("reference", list(texts), template, tokenizer_file.name,
                       [[c.id, list(c.messages), c.add_generation_prompt, c.tools] for c in chats],
                       # the derivation's source too (this module, the drift comparison): an entry written
                       # by another version (how transformers is loaded, how a conversation is tokenized)
                       # must not answer for this one
                       files=[*files, Path(__file__), Path(__file__).with_name("reference_drift.py"),
                              Path(hf_added.__file__)],
                       dists=("tokenizers", "transformers"), dated=bool(chats))
    fresh: list[Reference] = []  # computed here: its normalizer is already loaded

    def compute() -> dict:
        tk = hf_tokenizer(tokenizer_file)
        ref = run_hf(tk, texts)
        auto = _auto_tokenizer(src_dir, required=bool(chats))
        if chats:  # rendered by transformers, tokenized by the file's engine like every other check
            ref.chat_text, ref.chat_ids = _chats(src_dir, chats, template, tok=auto,
                                                 encode=lambda s: tk.encode(s, add_special_tokens=False).ids)
        if auto is not _NO_AUTO and tokenizer_file.name == "tokenizer.json":  # the file AutoTokenizer reads
            ref.drift = drift(auto, tk, texts, ref.raw, ref.engine)
        fresh.append(ref)
        return {k: getattr(ref, k) for k in _CACHED}

    value = cache.computed("reference", digest, compute, valid=lambda v: isinstance(v, dict) and set(v) == set(_CACHED))
    if fresh:
        return fresh[0]
    return Reference(*(value[k] for k in _CACHED[:5]), _LazyNormalizer(tokenizer_file), value["drift"])


_CACHED = ("engine", "raw", "decoded", "chat_text", "chat_ids", "drift")


class _LazyNormalizer:
    """HF's normalizer of a tokenizer.json, loaded on the first call (a cached reference rarely needs it)."""

    def __init__(self, path: Path):
        self.path, self.fn = path, None

    def __call__(self, text: str) -> str:
        if self.fn is None:
            from tokenizers import Tokenizer

            n = Tokenizer.from_file(str(self.path)).normalizer
            self.fn = n.normalize_str if n is not None else (lambda s: s)
        return self.fn(text)


CHUNK = 8192  # texts per library call where a reference tells how far it is (a batch call says nothing until done)


def hf_raw_ids(tokenizer_file: Path, texts: list[str], tell=None) -> list[list[int]]:
    """Only the ids without special tokens (the vocabulary sweep's question), cached by content;
    `tell(done, total)` told between batches of `CHUNK` texts."""
    configs = [tokenizer_file.parent / n for n in CONFIGS if (tokenizer_file.parent / n).is_file()]
    digest = cache.key("reference-raw", files=[tokenizer_file, *configs, Path(hf_added.__file__)],
                       dists=("tokenizers",), blobs=(cache.strings_blob(texts),))

    def compute() -> list:
        tk = hf_tokenizer(tokenizer_file)
        tk.no_truncation()
        tk.no_padding()
        out: list = []
        for k in range(0, len(texts), CHUNK):
            if tell is not None and tell(k, len(texts)) == STOP:  # the budget: the texts done so far
                break
            out += [e.ids for e in tk.encode_batch(list(texts[k:k + CHUNK]), add_special_tokens=False)]
        return out

    return cache.computed("reference-raw", digest, compute, valid=lambda v: isinstance(v, list) and len(v) == len(texts))


# The configs whose added tokens transformers adds to a tokenizer.json on load.
CONFIGS = ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json")


def _json_object(path: Path) -> dict:
    try:
        data = json.loads(path.read_bytes()) if path.is_file() else {}
    except ValueError:  # a config transformers cannot read either: it adds nothing from it
        return {}
    return data if isinstance(data, dict) else {}


def hf_tokenizer(tokenizer_file: Path):
    """The reference of a tokenizer.json: `tokenizers.Tokenizer.from_file`, then the two calls
    transformers' fast tokenizer makes on load with the added tokens the folder's configs declare
    (`readers.hf_added`: which tokens, with which flags; `tokenizers` itself gives their ids), so
    the reference holds what the model's users run."""
    from tokenizers import AddedToken, Tokenizer

    tokenizer_file = Path(tokenizer_file)
    tk = Tokenizer.from_file(str(tokenizer_file))
    existing = {t.content for t in tk.get_added_tokens_decoder().values()}
    declared = hf_added.declared_added(*(_json_object(tokenizer_file.parent / n) for n in CONFIGS), existing)
    if declared:
        tk.add_tokens([AddedToken(t.content, **t.flags()) for t in declared.first])
        tk.add_special_tokens([AddedToken(t.content, **t.flags()) for t in declared.then])
    return tk


def hf_encode_seconds(tokenizer_file: Path, text: str) -> float:
    """Seconds HF tokenizers takes to encode `text` without special tokens, the file loaded first
    (not counted); the best of two runs.  Never cached: it is a timing."""
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(tokenizer_file))
    best = float("inf")
    for _ in range(2):
        start = time.perf_counter()
        tk.encode(text, add_special_tokens=False)
        best = min(best, time.perf_counter() - start)
    return best


def run_hf(tk, texts) -> Reference:
    """Ids with and without special tokens, decode and the normalizer of an HF `Tokenizer` (no chat)."""
    tk.no_truncation()
    tk.no_padding()
    texts = list(texts)
    engine = [e.ids for e in tk.encode_batch(texts, add_special_tokens=True)]
    raw = [e.ids for e in tk.encode_batch(texts, add_special_tokens=False)]
    decoded = tk.decode_batch(raw, skip_special_tokens=False)
    norm = tk.normalizer.normalize_str if tk.normalizer is not None else (lambda s: s)
    return Reference(engine, raw, decoded, [], [], norm)


def _chats(src_dir: Path, chats: list, template: str | None = None, *, tok=None, encode=None):
    """transformers' renders of `chats` and their ids: `encode(text)` [default: the transformers
    tokenizer's own, without special tokens].  `tok`: that tokenizer, already loaded."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    tok = tok if tok is not None else _chat_tokenizer(src_dir)
    if encode is None:
        renumbered = getattr(tok, "mtok_declared_ids", {})  # the generic fallback's ids -> the declared ones
        encode = lambda text: [renumbered.get(i, i) for i in tok(text, add_special_tokens=False)["input_ids"]]  # noqa: E731
    texts, ids = [], []
    for chat in chats:
        try:
            with bounded():  # transformers' render too: memory and time bounded, TemplateLimitError past them
                text = tok.apply_chat_template(list(chat.messages), tokenize=False,
                                               add_generation_prompt=chat.add_generation_prompt,
                                               tools=chat.tools, chat_template=template or None)
            texts.append(text)
            ids.append(list(encode(text)))
        except TemplateLimitError:
            raise
        except Exception:  # noqa: BLE001  templates raise on shapes they reject; not our failure
            texts.append(None)
            ids.append(None)
    return texts, ids


_NO_AUTO = object()  # transformers is not installed, or cannot load the folder (and no chat needs it)


def _auto_tokenizer(src_dir: Path, *, required: bool):
    """What `AutoTokenizer` loads from `src_dir` (`_chat_tokenizer`); where it cannot and nothing
    `required` it (no chat to render), `_NO_AUTO`: the disagreement is then not measured."""
    if not required and importlib.util.find_spec("transformers") is None:
        return _NO_AUTO
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        return _chat_tokenizer(src_dir)
    except Exception:  # noqa: BLE001  a folder transformers cannot read: only the chat checks need it
        if required:
            raise
        return _NO_AUTO


def _chat_tokenizer(src_dir: Path):
    """transformers' tokenizer for the chat reference, never running the repo's code and never asking
    (a CI tool must not prompt: `trust_remote_code=False`, and stdin is no terminal while loading).
    A repo whose tokenizer class is remote code (ChatGLM3's `auto_map`) falls back to the fast
    tokenizer of its tokenizer.json with its tokenizer_config.json (template, special tokens)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    stdin, sys.stdin = sys.stdin, io.StringIO()
    try:
        try:
            return AutoTokenizer.from_pretrained(str(src_dir), trust_remote_code=False)
        except ValueError as e:
            if "custom code" not in str(e) and "trust_remote_code" not in str(e):
                raise
        try:
            fallback = PreTrainedTokenizerFast.from_pretrained(str(src_dir), trust_remote_code=False)
        except Exception as e:  # noqa: BLE001  whatever the generic class cannot read
            raise ReferenceUnavailable(f"{src_dir}: the chat reference needs the repository's own tokenizer code "
                                       f"(auto_map), which is never run, and the generic fast tokenizer cannot "
                                       f"load it ({e.__class__.__name__}: {e})") from e
        fallback.mtok_declared_ids = _declared_ids(src_dir, fallback)
        return fallback
    finally:
        sys.stdin = stdin


def _declared_ids(src_dir: Path, tk) -> dict[int, int]:
    """The generic fast tokenizer's id -> the id tokenizer_config.json's `added_tokens_decoder` declares,
    where they differ.  `tokenizers` gives an added token outside the model's vocabulary the next free
    id, not its own: ChatGLM3 declares [gMASK] 64790, sop 64792, <|user|> 64795, <|assistant|> 64796
    (after 64789 SentencePiece pieces; its own code numbers them so), the fallback makes them
    64789..64792.  The repository's code, which is never run, uses the declared ids, as the file does.
    A folder with a tokenizer.json is read as tokenizers reads it, next free ids included (the reader
    follows the same rule): nothing to map there."""
    if (src_dir / "tokenizer.json").is_file():
        return {}
    try:
        decoder = json.loads((src_dir / "tokenizer_config.json").read_bytes()).get("added_tokens_decoder") or {}
        declared = {t["content"]: int(i) for i, t in decoder.items() if isinstance(t, dict) and isinstance(t.get("content"), str)}
    except (OSError, ValueError, AttributeError):
        return {}
    out = {}
    for content, i in declared.items():
        got = tk.convert_tokens_to_ids(content)
        if isinstance(got, int) and got != i and got != tk.unk_token_id:
            out[got] = i
    return out
