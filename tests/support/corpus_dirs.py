"""Where the tokenizers under test live: the shared corpus beside the checkout and `samples/`."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared/corpus"
CORPUS = SHARED / "tokenizers"
SAMPLES = REPO / "samples"
TARGET = "mnn-3.6"


def find_tokenizer_dirs() -> dict[str, Path]:
    """name -> directory, for every corpus/sample directory with a tokenizer.json."""
    out = {}
    for prefix, root in (("corpus", CORPUS), ("samples", SAMPLES)):
        if root.is_dir():
            for d in sorted(p for p in root.iterdir() if (p / "tokenizer.json").is_file()):
                out[f"{prefix}/{d.name}"] = d
    return out


TOKENIZER_DIRS = find_tokenizer_dirs()


def corpus_templates() -> list[tuple[str, str]]:
    """(name, text) of every chat template in the shared corpus (its chat_templates/ and tokenizers/)."""
    from mtok_export.chat.sources import iter_templates

    out = []
    for sub in ("chat_templates", "tokenizers"):
        if (SHARED / sub).is_dir():
            out += [(f"{sub}/{name}", text) for name, text, _ in iter_templates(SHARED / sub)]
    return out


CORPUS_TEMPLATES = corpus_templates()
