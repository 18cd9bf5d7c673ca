"""One row of a parity table: export a source directory (lowered or naive), verify it on the
runtime, and summarize k/n per check.  Shared by `scripts/parity.py` and the conformance test."""

from __future__ import annotations

from pathlib import Path

COLUMNS = ("engine ids", "raw ids", "streaming decode", "chat text", "chat ids", "chat paths", "stop ids")


def parity_rows(src: Path, out_dir: Path, *, mode: str = "lowered", target: str = "mnn-3.6",
                testvectors: Path | None = None, python=None) -> dict:
    from ..formats import read_source
    from ..lower import Lowering, lower
    from ..lower.naive import naive
    from ..mtok import write_mtok
    from .check import verify
    from .corpus import builtin_chats, builtin_corpus, testvector_corpus
    from .reference import reference_for

    tok = read_source(src)  # a directory with tokenizer.json, or any other input (GGUF, tekken, ...)
    if mode == "naive":
        from tokenizers import Tokenizer

        hf = Tokenizer.from_file(str(src / "tokenizer.json"))
        try:
            low = naive(tok, lambda s: hf.encode(s).ids, lambda i: hf.decode([i]))
        except ValueError as e:
            return {"checks": {}, "unexplained": str(e), "losses": ""}
        lw = Lowering(target)
    else:
        low, lw = lower(tok, target)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    samples = list(builtin_corpus()) + (list(testvector_corpus(testvectors)) if testvectors else [])
    report = verify(path, tok, low, lw, samples=samples, chats=list(builtin_chats()), source_dir=src, python=python,
                    reference=reference_for(tok))
    return {
        "checks": {c.name: f"{c.ok}/{c.total}" for c in report.checks if c.total},
        "unexplained": report.unexplained if mode != "naive" else "-",
        "losses": ",".join(sorted({x.code for x in lw.losses})),
        "report": report,
    }
