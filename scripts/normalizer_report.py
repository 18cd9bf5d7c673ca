#!/usr/bin/env python3
"""How far each runtime representation of a Unicode normalizer is from the real one, on the
verify corpus (built-in + llama.cpp strings): per representation, strings normalized exactly as
HF does, and the mismatches split by cause.  The lowering uses the best row (see
mtok_export/lower/normalizers.py).  Emulates the runtime (mtok_export/verify/emulate.py); the
conformance test checks the chosen form on the real runtime."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from mtok_export.corpus import builtin_corpus, testvector_corpus
from mtok_export.ir import normalizers as N
from mtok_export.lower.normalizers import as_replaces
from mtok_export.unicode.tables import charsmap_table, table
from mtok_export.verify import emulate

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

CONTROL = emulate._CONTROL


def cause(text: str) -> str:
    if any(ord(c) in CONTROL for c in text):
        return "control/zero-width"
    if any(0x1100 <= ord(c) <= 0x11FF for c in text):
        return "hangul jamo"
    if unicodedata.normalize("NFD", text) != text or any(unicodedata.combining(c) for c in text):
        return "composition/reordering"
    return "other"


def main():
    texts = [s.text for s in builtin_corpus()]
    if (CORPUS / "testvectors").is_dir():
        texts += [s.text for s in testvector_corpus(CORPUS / "testvectors")]
    texts = [t for t in texts if "\x00" not in t]
    normalizers = {"NFC": lambda t: unicodedata.normalize("NFC", t),
                   "NFKC": lambda t: unicodedata.normalize("NFKC", t)}
    charsmaps = {}
    t5 = CORPUS / "tokenizers" / "t5-small" / "tokenizer.json"
    if t5.is_file():
        import base64
        import json

        from tokenizers.normalizers import Precompiled

        blob = base64.b64decode(json.loads(t5.read_bytes())["normalizer"]["precompiled_charsmap"])
        normalizers["t5 Precompiled"] = Precompiled(blob).normalize_str
        charsmaps["t5 Precompiled"] = charsmap_table(blob)
    print(f"{len(texts)} strings; columns: exact, then mismatches by cause")
    for name, ref in normalizers.items():
        entries = charsmaps.get(name) or table(name)
        reps = {"none (dropped)": None, "code-6 table": N.CodepointMap(entries),
                "replaces (chosen)": as_replaces(entries)}
        want = [ref(t) for t in texts]
        for rep, n in reps.items():
            causes: dict[str, int] = {}
            ok = 0
            for t, w in zip(texts, want):
                if emulate.normalize(n, t) == w:
                    ok += 1
                else:
                    causes[cause(t)] = causes.get(cause(t), 0) + 1
            size = len(getattr(n, "normalizers", ())) or len(getattr(n, "entries", ()))
            detail = ", ".join(f"{k} {v}" for k, v in sorted(causes.items()))
            print(f"  {name:15} {rep:18} {ok:5}/{len(texts)}  ({size} entries)  {detail}")


if __name__ == "__main__":
    main()
