"""Compression and cost statistics of a tokenizer, per domain slice (`mtok stats`).

Definitions (all on ids *without* special tokens, as the reference engine encodes the text):

* tokens per byte / character / word: total tokens of the slice over its total UTF-8 bytes,
  code points, or whitespace-separated words (`str.split()`; scripts without spaces count a
  whole sentence as one word, so compare per-word figures only across tokenizers).
* expansion of one sample: its tokens per UTF-8 byte.  Mean, P50, P95, P99 over the slice's
  samples; percentiles by the nearest-rank method (the ceil(p/100 * n)-th smallest value).
* byte-fallback rate: share of tokens that are `<0xNN>` byte pieces of a model with
  `byte_fallback`; unknown rate: share of tokens that are the model's unknown token.
* fixed overheads: `bos_eos` is what encode() adds around a text (ids with minus ids without
  special tokens, on "Hello world"); `chat_empty` the tokens of the chat template rendered over
  no messages, `chat_turn` over one empty user message, both with the generation prompt (None
  when there is no template or it rejects the conversation).

The built-in slices live in `compare/data/<slice>.txt` (samples separated by a `~~~` line); a
user corpus is JSONL with `text` and `slice` on every record."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ..chat.render import render
from ..errors import InputError
from ..ir import models as M
from .engines import run_reference

SLICES = ("prose-en", "prose-de", "prose-fr", "prose-es", "prose-tr", "prose-vi", "prose-ru", "prose-el",
          "prose-ar", "prose-he", "prose-hi", "prose-th", "prose-zh", "prose-ja", "prose-ko", "code", "math",
          "csv", "urls-paths", "logs", "json", "emoji", "rare-scripts")
SEPARATOR = "\n~~~\n"
PROBE = "Hello world"
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


@dataclass(frozen=True)
class Sample:
    slice: str
    text: str


@dataclass
class SliceStats:
    slice: str
    samples: int = 0
    bytes: int = 0
    chars: int = 0
    words: int = 0
    tokens: int = 0
    byte_fallback: int = 0
    unknown: int = 0
    expansions: list[float] = field(default_factory=list)  # per sample, tokens per byte

    # ratios of the totals (0.0 for an empty slice)
    per_byte = property(lambda self: _ratio(self.tokens, self.bytes))
    per_char = property(lambda self: _ratio(self.tokens, self.chars))
    per_word = property(lambda self: _ratio(self.tokens, self.words))
    byte_fallback_rate = property(lambda self: _ratio(self.byte_fallback, self.tokens))
    unknown_rate = property(lambda self: _ratio(self.unknown, self.tokens))
    mean = property(lambda self: _ratio(sum(self.expansions), len(self.expansions)))

    def percentile(self, p: float) -> float:
        return percentile(sorted(self.expansions), p)

    def to_json(self) -> dict:
        return {"slice": self.slice, "samples": self.samples, "bytes": self.bytes, "chars": self.chars,
                "words": self.words, "tokens": self.tokens, "tokens_per_byte": self.per_byte,
                "tokens_per_char": self.per_char, "tokens_per_word": self.per_word,
                "expansion_mean": self.mean, "expansion_p50": self.percentile(50),
                "expansion_p95": self.percentile(95), "expansion_p99": self.percentile(99),
                "byte_fallback_tokens": self.byte_fallback, "byte_fallback_rate": self.byte_fallback_rate,
                "unknown_tokens": self.unknown, "unknown_rate": self.unknown_rate}


@dataclass
class TokenizerStats:
    name: str
    engine: str
    slices: list[SliceStats]
    total: SliceStats
    bos_eos: int
    chat_empty: int | None
    chat_turn: int | None

    def to_json(self) -> dict:
        return {"name": self.name, "engine": self.engine, "bos_eos_tokens": self.bos_eos,
                "chat_empty_tokens": self.chat_empty, "chat_user_turn_tokens": self.chat_turn,
                "total": self.total.to_json(), "slices": [s.to_json() for s in self.slices]}


def _ratio(n: float, d: float) -> float:
    return n / d if d else 0.0


def percentile(values: list[float], p: float) -> float:
    """Nearest rank: the ceil(p/100 * n)-th smallest of sorted `values` (0.0 for none)."""
    if not values:
        return 0.0
    return values[max(1, math.ceil(p / 100 * len(values))) - 1]


def slice_stats(name: str, texts: list[str], ids: list[list[int]], fallback_ids: frozenset[int] = frozenset(),
                unk_id: int | None = None) -> SliceStats:
    """The statistics of one slice from its texts and their token ids (pure; see the module doc)."""
    s = SliceStats(name, samples=len(texts))
    for text, seq in zip(texts, ids):
        n = len(text.encode("utf-8"))
        s.bytes += n
        s.chars += len(text)
        s.words += len(text.split())
        s.tokens += len(seq)
        s.byte_fallback += sum(1 for i in seq if i in fallback_ids)
        s.unknown += sum(1 for i in seq if i == unk_id)
        if n:
            s.expansions.append(len(seq) / n)
    return s


def fallback_ids(tok) -> frozenset[int]:
    """Ids of the `<0xNN>` byte pieces, when the model falls back to them."""
    if not getattr(tok.model, "byte_fallback", False):
        return frozenset()
    return frozenset(i for t, i in M.vocab_of(tok.model).items() if _BYTE_PIECE.fullmatch(t))


def unknown_id(tok) -> int | None:
    m = tok.model
    if isinstance(m, M.Unigram):
        return m.unk_id
    unk = getattr(m, "unk_token", None)
    return M.vocab_of(m).get(unk) if unk else None


def tokenizer_stats(name: str, tok, samples: list[Sample]) -> TokenizerStats:
    """Run `tok`'s reference engine over `samples` and the overhead probes, and aggregate."""
    chats = _chat_renders(tok)
    texts = [s.text for s in samples] + [PROBE] + [c for c in chats if c is not None]
    run = run_reference(tok, texts, views=False)
    n = len(samples)
    fb, unk = fallback_ids(tok), unknown_id(tok)
    by_slice: dict[str, tuple[list[str], list[list[int]]]] = {}
    for s, ids in zip(samples, run.raw[:n]):
        ts, xs = by_slice.setdefault(s.slice, ([], []))
        ts.append(s.text)
        xs.append(ids)
    slices = [slice_stats(k, ts, xs, fb, unk) for k, (ts, xs) in by_slice.items()]
    total = slice_stats("all", [s.text for s in samples], run.raw[:n], fb, unk)
    rendered = iter(run.raw[n + 1:])
    counts = [None if c is None else len(next(rendered)) for c in chats]
    return TokenizerStats(name, run.engine, slices, total, len(run.ids[n]) - len(run.raw[n]), *counts)


def _chat_renders(tok) -> list[str | None]:
    """The template over no messages and over one empty user message (None: no template, or it raised)."""
    chat = tok.chat
    out = []
    for messages in ([], [{"role": "user", "content": ""}]):
        if not chat.text:
            out.append(None)
            continue
        try:
            out.append(render(chat.text, messages, bos_token=chat.bos_token, eos_token=chat.eos_token,
                              add_generation_prompt=True))
        except Exception:  # noqa: BLE001  templates reject conversations they do not expect; not our failure
            out.append(None)
    return out


# ------------------------------------------------------------------ corpora

def builtin_samples() -> list[Sample]:
    data = resources.files("mtok_export.compare").joinpath("data")
    out = []
    for name in SLICES:
        text = data.joinpath(f"{name}.txt").read_bytes().decode("utf-8")
        out += [Sample(name, t.strip("\n")) for t in text.split(SEPARATOR) if t.strip()]
    return out


def load_slices(path: Path) -> list[Sample]:
    """A user corpus: JSONL, one object per line with string `text` and `slice` (blank lines skipped)."""
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").split("\n")
    except OSError as e:
        raise InputError(f"{path}: cannot read corpus file ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not valid UTF-8 (byte offset {e.start})") from None
    out = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{lineno}: not valid JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise InputError(f"{path}:{lineno}: JSON nested too deeply") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or not isinstance(obj.get("slice"), str) \
                or not obj["slice"]:
            raise InputError(f'{path}:{lineno}: expected an object with a string "text" and a non-empty string "slice"')
        out.append(Sample(obj["slice"], obj["text"]))
    if not out:
        raise InputError(f"{path}: corpus file contains no samples")
    return out
