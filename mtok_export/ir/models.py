"""Models (HF `tokenizers` models).  Vocabularies are plain dicts/tuples: the biggest values in
the IR, kept in the shapes the readers already have so nothing is copied twice."""

from __future__ import annotations

from .base import component

_m = component("model")


@_m
class BPE:
    vocab: dict[str, int]
    merges: tuple[tuple[str, str], ...] = ()  # rank = index
    dropout: float | None = None
    unk_token: str | None = None
    continuing_subword_prefix: str | None = None
    end_of_word_suffix: str | None = None
    fuse_unk: bool = False
    byte_fallback: bool = False
    ignore_merges: bool = False
    # MNN only: the model maps raw bytes to GPT-2 characters itself (spec 2.5 `byte_level`).
    mnn_byte_level: bool = False


@_m
class WordPiece:
    vocab: dict[str, int]
    unk_token: str = "[UNK]"
    continuing_subword_prefix: str = "##"
    max_input_chars_per_word: int = 100


@_m
class WordLevel:
    vocab: dict[str, int]
    unk_token: str | None = None


@_m
class Unigram:
    vocab: tuple[tuple[str, float], ...]  # id = index
    unk_id: int | None = None
    byte_fallback: bool = False


def vocab_of(model) -> dict[str, int]:
    """token -> id for any model."""
    if isinstance(model, Unigram):
        return {piece: i for i, (piece, _) in enumerate(model.vocab)}
    return model.vocab
