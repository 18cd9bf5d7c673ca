"""The bytes every writer produces for every input of the shared corpus, its GGUF files and
`samples/`: `.mtok`, legacy `.txt` and HF `tokenizer.json`, as sha256 (or the error's type when the
writer refuses).  `tests/acceptance/test_output_bytes.py` compares them with `tests/golden/output-digests.tsv`,
the table main wrote before a refactoring; regenerate it on purpose only, with

    .venv/bin/python -m tests.support.output_digests > tests/golden/output-digests.tsv"""

from __future__ import annotations

import hashlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared/corpus"
GOLDEN = REPO / "tests/golden/output-digests.tsv"


def inputs() -> list[tuple[str, Path]]:
    """Each corpus/sample directory, each SentencePiece model of a directory holding several, each
    GGUF file."""
    out = []
    for prefix, root in (("corpus", SHARED / "tokenizers"), ("samples", REPO / "samples")):
        for d in sorted(p for p in root.iterdir() if p.is_dir() and p.name != "accept"):
            models = sorted(d.glob("*.model"))
            if len(models) > 1 and not (d / "tokenizer.json").is_file():
                out += [(f"{prefix}/{d.name}/{m.name}", m) for m in models]
            else:
                out.append((f"{prefix}/{d.name}", d))
    out += [(f"gguf/{g.name}", g) for g in sorted((SHARED / "gguf").glob("*.gguf"))]
    return out


def digests(path: Path) -> dict[str, str]:
    from mtok_export.errors import MtokError
    from mtok_export.formats import read_source
    from mtok_export.targets import build
    from mtok_export.lower.hf_equivalent import hf_equivalent
    from mtok_export.writers.hf_json import write_tokenizer_json

    tok = read_source(path)
    row = {}
    for fmt, make in (("mtok", lambda: build(tok, "mtok")[0]), ("txt", lambda: build(tok, "txt")[0]),
                      ("hf", lambda: write_tokenizer_json(hf_equivalent(tok)))):
        try:
            row[fmt] = hashlib.sha256(make()).hexdigest()
        except MtokError as e:
            row[fmt] = type(e).__name__
    return row


def load_golden() -> dict[str, dict[str, str]]:
    rows = {}
    for line in GOLDEN.read_text().splitlines():
        if line and not line.startswith("#"):
            name, *cells = line.split("\t")
            rows[name] = dict(c.split("=", 1) for c in cells)
    return rows


if __name__ == "__main__":
    print("# name\tmtok=sha256\ttxt=sha256\thf=sha256 (tests/support/output_digests.py)")
    for name, path in inputs():
        print(name, *(f"{k}={v}" for k, v in digests(path).items()), sep="\t", flush=True)
