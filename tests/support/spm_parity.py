#!/usr/bin/env python3
"""Parity of SentencePiece models exported for MNN, against the `sentencepiece` library itself
(a test harness of `tests/readers/test_sentencepiece.py`, and a table when run).

For each model: read -> lower -> `.mtok`, run by MNN 3.6.1 (this interpreter), and read -> legacy
type-0 `tokenizer.txt` (lossy allowed), run by MNN 3.4.1 (`--mnn341 PYTHON`, default the venv the
tests make), on the built-in
corpus.  Columns: raw ids (no BOS/EOS), engine ids (what `tokenizer_encode` returns vs
SentencePiece with the config's BOS/EOS policy), streaming decode (concatenated single-id decodes
vs `sp.decode`), the same with the kept leading space ignored, the IR run by HF `tokenizers`
(reader fidelity), and the number of mismatches no loss or reader class explains; then every
mismatch class.

    python -m tests.support.spm_parity [--mnn341 PYTHON] [--only NAME]

`.mtok` mismatches are attributed by `verify` itself; the type-0 file's by the type-0 losses'
documented runtime differences and the reader's `sp-*` classes (`reader_classifier`)."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from tests.support.legacy_runtime import installed_mnn341
from tests.support.verify_jobs import CORPUS_ONLY

from mtok_export.corpus import builtin_corpus
from mtok_export.ir import models as M
from mtok_export.ir import pre_tokenizers as P
from mtok_export.ir.sentencepiece import SPACE, TRAILING_SPACE
from mtok_export.ir.walk import members
from mtok_export.legacy.sentencepiece_txt import format_type0, read_sentencepiece_txt
from mtok_export.lower import lower
from mtok_export.lower.legacy.type0 import plan
from mtok_export.lower.processors import single_parts
from mtok_export.mtok import write_mtok
from mtok_export.readers.sentencepiece import read_sentencepiece
from mtok_export.targets import TARGETS
from mtok_export.verify.check import TEXT_CHECKS, Check, VerifyJob, compare_texts, verify
from mtok_export.verify.references import choose
from mtok_export.verify.reference_spm import charsmap_normalizer, spm_reference
from mtok_export.verify.runtime import run_runtime
from mtok_export.writers.hf_json import to_tokenizer_json

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "tokenizers"

MODELS = [
    ("llama2-7b-hf", CORPUS / "llama2-7b-hf/tokenizer.model"),
    ("mistral-7b-v0.1", CORPUS / "mistral-7b-v0.1_mistral-common/tokenizer.model.v1"),
    ("t5-small", CORPUS / "t5-small/spiece.model"),
    ("sp-test_model", CORPUS / "sp-test-models/test_model.model"),
    ("sp-test_ja_model", CORPUS / "sp-test-models/test_ja_model.model"),
    ("chatglm-6b", CORPUS / "chatglm-6b/ice_text.model"),
    ("samples/llama-spm", REPO / "samples/llama-spm/tokenizer.model"),
    ("samples/t5-unigram", REPO / "samples/t5-unigram/spiece.model"),
]


@dataclass
class Parity:
    model: str
    file: str
    runtime: str  # MNN version that ran it
    checks: dict  # name -> check.Check
    losses: list  # lower.Loss (or type-0 losses)
    ir_raw: tuple[int, int] | None = None  # the IR under HF `tokenizers` vs SentencePiece (ok, total)
    notes: list = field(default_factory=list)

    def classes(self) -> dict[tuple[str, tuple[str, ...]], int]:
        out: dict = {}
        for c in self.checks.values():
            for m in c.mismatches:
                out[(c.name, m.explanation)] = out.get((c.name, m.explanation), 0) + 1
        return out

    @property
    def unexplained(self) -> int:
        return sum(1 for c in self.checks.values() for m in c.mismatches if not m.explanation)

    def cell(self, name: str) -> str:
        c = self.checks[name]
        return f"{c.ok}/{c.total}"

    def stream_but_lead_space(self) -> str:
        """Streaming decode k/n when the one leading space the runtime keeps (the dummy prefix of
        the first piece) is ignored."""
        c = self.checks["streaming decode"]
        extra = sum(1 for m in c.mismatches if isinstance(m.got, str) and m.got == " " + m.expected)
        return f"{c.ok + extra}/{c.total}"


def reader_classifier(tok, sp_norm):
    """text -> the `sp-*` loss code that explains an IR-vs-SentencePiece difference, or None."""
    added = [t.content for t in tok.added_tokens if t.content]
    m = tok.model
    reserved = []
    if isinstance(m, M.Unigram):
        reserved = [p for i, (p, _) in enumerate(m.vocab)
                    if i == m.unk_id or (m.byte_fallback and len(p) == 6 and p.startswith("<0x") and p.endswith(">"))]
    strips = any(isinstance(k, P.Split) and k.pattern.value == TRAILING_SPACE for k in members(tok.pre_tokenizer))

    def classify(text: str) -> str | None:
        if any(t in text for t in added):
            return "sp-added-token-text"
        if reserved and any(p in text for p in reserved):
            return "sp-reserved-piece-text"
        if strips:
            normalized = sp_norm(text)
            if normalized.rstrip(" " + SPACE) != normalized.rstrip(" "):
                return "sp-trailing-u2581"
        return None

    return classify


def _samples(samples):
    samples = list(builtin_corpus() if samples is None else samples)
    usable = [s for s in samples if "\x00" not in s.text]  # the MNN binding passes a C string
    return usable, len(samples) - len(usable)


def _notes(left_out: int) -> list[str]:
    return [f"{left_out} sample(s) with NUL left out (the MNN binding passes a C string)"] if left_out else []


def ir_parity(model_path, tok, samples=None) -> tuple[int, int]:
    """Raw ids of the IR run by HF `tokenizers` vs SentencePiece: how faithful the reader is."""
    import sentencepiece as spm
    from tokenizers import Tokenizer

    usable, _ = _samples(samples)
    hf = Tokenizer.from_str(json.dumps(to_tokenizer_json(tok)))
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    texts = [s.text for s in usable]
    got = [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    want = sp.encode(texts)
    return sum(a == b for a, b in zip(got, want)), len(texts)


def spm_parity(model_path, out_dir, *, target: str = "mnn-3.6", python=None, samples=None, config_dir=None,
               timeout: float = 300.0, with_ir: bool = True) -> Parity:
    """read -> lower(target) -> write_mtok -> MNN runtime, against SentencePiece on the corpus (the same
    `verify` as every export: reader differences and lowering losses explain only what they reproduce)."""
    model_path = Path(model_path)
    tok = read_sentencepiece(model_path, config_dir)
    low, lw = lower(tok, TARGETS[target])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tokenizer.mtok"
    path.write_bytes(write_mtok(low))
    usable, left_out = _samples(samples)
    job = VerifyJob(tok, low, lw, usable, [], replace(CORPUS_ONLY, python=python), timeout=timeout)
    report = verify(job, path, choose(tok))
    checks = {c.name: c for c in report.checks if c.name in TEXT_CHECKS}
    p = Parity(str(model_path), str(path), report.runtime, checks, list(lw.losses), notes=_notes(left_out))
    if with_ir:
        p.ir_raw = ir_parity(model_path, tok, samples)
    return p


def _explain_type0(codes, text: str, raw, sp_normalize, unk: int) -> str | None:
    """Type-0 runtime differences (see `legacy.sentencepiece_txt`), the first that shows in `text`."""
    if "type0-normalizer" in codes and text and sp_normalize(text) != SPACE + text.replace(" ", SPACE):
        return "type0-normalizer"
    if "type0-unk" in codes and unk in raw:
        return "type0-unk"
    for code in ("type0-unigram", "type0-merges"):
        if code in codes:
            return code
    return None


def spm_parity_txt(model_path, out_dir, *, python, samples=None, config_dir=None, timeout: float = 300.0) -> Parity:
    """read -> legacy type-0 `tokenizer.txt` (lossy allowed) -> an MNN runtime (3.4.1), against
    SentencePiece.  Mismatches are explained by the reader's `sp-*` classes, then by the type-0 losses."""
    import sentencepiece as spm

    model_path = Path(model_path)
    tok = read_sentencepiece(model_path, config_dir)
    planned = plan(tok)
    rows, losses = planned.content, planned.losses
    data = format_type0(rows)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tokenizer.txt"
    path.write_bytes(data)
    read_sentencepiece_txt(data, path)  # the file must read back

    usable, left_out = _samples(samples)
    texts = [s.text for s in usable]
    pre_ids, post_ids = single_parts(tok.post_processor)[0] or ((), ())
    ref = spm_reference(model_path, texts, add_bos=bool(pre_ids), add_eos=bool(post_ids),
                        bos_id=pre_ids[0] if pre_ids else None, eos_id=post_ids[0] if post_ids else None, tok=tok)
    sp = spm.SentencePieceProcessor(model_file=str(model_path))
    classify = reader_classifier(tok, charsmap_normalizer(model_path))
    rt = run_runtime(path, texts=texts, decode_ids=sorted({i for r in ref.raw for i in r}), python=python,
                     timeout=timeout)
    codes = {x.code for x in losses}
    unk = sp.unk_id()

    def one(code):
        return (code,) if code else ()

    def explain_raw(j, raw, got_raw):
        return one(classify(texts[j]) or _explain_type0(codes, texts[j], raw, sp.normalize, unk))

    def explain_engine(j, eng, raw, got, got_raw, raw_why):
        if got_raw != raw:
            return explain_raw(j, raw, got_raw)
        return one("type0-suffix" if "type0-suffix" in codes and eng[len(got):] and eng[:len(got)] == got else None)

    def explain_stream(j, raw, dec, stream):
        if unk >= 0 and unk in raw and "\u2047" in dec:
            return ("sp-unk-surface",)
        return one("type0-decode" if "type0-decode" in codes else None)

    checks = {n: Check(n) for n in TEXT_CHECKS}
    compare_texts(checks, usable, rt, ref, rows.prefix, explain_raw=explain_raw, explain_engine=explain_engine,
                  explain_stream=explain_stream)
    return Parity(str(model_path), str(path), rt.version, checks, list(losses), notes=_notes(left_out))


# ----------------------------------------------------------------------- the table


def table(title: str, rows) -> str:
    head = (f"{'model':20} {'MNN':6} {'raw ids':>9} {'engine ids':>10} {'stream':>8} {'stream*':>8} "
            f"{'IR(HF)':>8} {'unexpl':>6}")
    out = [title, head, "-" * len(head)]
    for name, p in rows:
        ir = f"{p.ir_raw[0]}/{p.ir_raw[1]}" if p.ir_raw else "-"
        out.append(f"{name:20} {p.runtime:6} {p.cell('raw ids'):>9} {p.cell('engine ids'):>10} "
                   f"{p.cell('streaming decode'):>8} {p.stream_but_lead_space():>8} {ir:>8} {p.unexplained:>6}")
    out.append("(stream* = streaming decode ignoring the one leading space the runtime keeps)")
    for name, p in rows:
        classes = sorted(p.classes().items(), key=lambda kv: (kv[0][0], -kv[1]))
        if classes:
            out.append(f"  {name}: " + "; ".join(f"{check} {'+'.join(why) or 'UNEXPLAINED'} x{n}"
                                                for (check, why), n in classes))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mnn341", default=installed_mnn341(),
                    help="python with MNN 3.4.1 for the type-0 table (default: the tests' MNN 3.4.1 venv, if made)")
    ap.add_argument("--only", help="models whose name contains this")
    args = ap.parse_args()
    models = [(n, p) for n, p in MODELS if p.is_file() and (not args.only or args.only in n)]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [(n, spm_parity(p, Path(tmp) / "mtok" / n.replace("/", "_"))) for n, p in models]
        print(table(".mtok (read -> lower mnn-3.6 -> write_mtok) on MNN 3.6.1 vs sentencepiece", rows))
        print()
        if args.mnn341:
            rows = [(n, spm_parity_txt(p, Path(tmp) / "txt" / n.replace("/", "_"), python=args.mnn341))
                    for n, p in models]
            print(table("legacy type 0 tokenizer.txt on MNN 3.4.1 vs sentencepiece", rows))
        else:
            print("(no MNN 3.4.1 interpreter: pass --mnn341 PYTHON)")
    print(f"\n{time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
