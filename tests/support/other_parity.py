#!/usr/bin/env python3
"""Parity tables for the inputs that are not a `tokenizer.json`: tiktoken rank files, GPT-2 style
vocab.json + merges.txt, BERT vocab.txt.

(a) `.mtok` (target mnn-3.6) on MNN 3.6.1 against the reference;
(b) legacy `tokenizer.txt` (types 1/2/3 as applicable) on MNN 3.4.1 against the same reference.

References: the `tiktoken` package on the rank file (tiktoken inputs; Qwen-1 NFC-normalizes
first, as its tokenizer does), HF `tokenizers` on the corpus directory's own `tokenizer.json`
(vocab.json/merges.txt and vocab.txt inputs: an independent check of the readers too).
Columns: raw ids, engine ids (header prefix included), streaming decode (concatenated single-id
decodes of the reference's raw ids), each k/n over the built-in corpus (samples with NUL left out:
the MNN binding passes C strings).

Every mismatch is given a class:
* `.mtok`: the lowering loss code that explains it (`verify.check`'s attribution), or `UNEXPLAINED`;
* `.txt`: the legacy type's documented runtime behaviours that change this sample, found by running
  HF on each step of the projection chain (`projection_steps_*`) and keeping the steps whose
  output differs from the previous one (joined with `+`); `UNEXPLAINED` if the runtime does not do
  what the projection (the runtime-faithful IR) does.

A test harness of `tests/acceptance/test_other_parity.py`, and the tables when run:

    python -m tests.support.other_parity [--only NAME] [--mnn341 PYTHON] [--json FILE]

The MNN 3.4.1 interpreter defaults to the one the tool finds (`make setup` creates it; `legacy_runtime`)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from tests.support.legacy_runtime import installed_mnn341
from tests.support.verify_jobs import CORPUS_ONLY

from mtok_export.corpus import builtin_corpus
from mtok_export.ir import normalizers as N
from mtok_export.legacy import write_content
from mtok_export.lower import lower
from mtok_export.lower.legacy import PLANS
from mtok_export.lower.processors import single_prefix
from mtok_export.mtok import write_mtok
from mtok_export.readers.bert_vocab import read_bert_vocab
from mtok_export.readers.gpt2_files import read_gpt2_files
from mtok_export.readers.tiktoken import read_tiktoken
from mtok_export.targets import TARGETS
from mtok_export.verify.check import TEXT_CHECKS, Check, VerifyJob, compare_texts, verify
from mtok_export.verify.reference import hf_reference
from mtok_export.verify.references import Chosen
from mtok_export.verify.reference_tiktoken import hf_from_ir, nfc, tiktoken_reference
from mtok_export.verify.runtime import run_runtime

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared/corpus/tokenizers"

# name -> (reader, path under the corpus, reference kind, legacy types)
INPUTS = {
    "qwen-7b_tiktoken/qwen.tiktoken": ("tiktoken", "qwen-7b_tiktoken/qwen.tiktoken", (1, 3)),
    "meta-llama-3-8b-instruct/tiktoken.model": ("tiktoken", "meta-llama-3-8b-instruct/tiktoken.model", (1, 3)),
    "gpt2 vocab.json+merges.txt": ("gpt2", "gpt2", (3,)),
    "roberta-base vocab.json+merges.txt": ("gpt2", "roberta-base", (3,)),
    "whisper-large-v3 vocab.json+merges.txt": ("gpt2", "whisper-large-v3", (3,)),
    "bert-base-uncased vocab.txt": ("bert", "bert-base-uncased", (2,)),
}


@dataclass
class Row:
    input: str
    file: str
    runtime: str
    checks: dict  # check -> [ok, total]
    classes: dict = field(default_factory=dict)  # "check: class" -> count
    examples: dict = field(default_factory=dict)  # "check: class" -> first sample id
    losses: list = field(default_factory=list)  # loss codes of the file
    seconds: float = 0.0


def samples():
    return [s for s in builtin_corpus() if "\x00" not in s.text]


def read_input(name: str):
    kind, rel, _ = INPUTS[name]
    path = CORPUS / rel
    return {"tiktoken": read_tiktoken, "gpt2": read_gpt2_files, "bert": read_bert_vocab}[kind](path)


def reference(name: str, ir, texts):
    kind, rel, _ = INPUTS[name]
    if kind == "tiktoken":
        pattern = ir.pre_tokenizer.pretokenizers[0].pattern.value
        specials = {t.content: t.id for t in ir.added_tokens}
        return tiktoken_reference(CORPUS / rel, pattern, specials, texts,
                                  normalize=nfc if isinstance(ir.normalizer, N.NFC) else None)
    return hf_reference(CORPUS / rel, texts, [])


def _summarize(row: Row, checks) -> Row:
    """The text checks' counts and mismatch classes (joined loss codes, or UNEXPLAINED) into `row`."""
    for c in checks:
        if c.name in TEXT_CHECKS:
            row.checks[c.name] = [c.ok, c.total]
            for m in c.mismatches:
                key = f"{c.name}: {'+'.join(m.explanation) or 'UNEXPLAINED'}"
                row.classes[key] = row.classes.get(key, 0) + 1
                row.examples.setdefault(key, m.sample)
    return row


def parity_mtok(name: str, ir=None, ref=None, python: str | None = None) -> Row:
    """(a): lower for mnn-3.6, write .mtok, run MNN 3.6.1 (this interpreter unless `python`); the
    mismatches are attributed by `verify` itself (reproduction by the recorded losses)."""
    start = time.perf_counter()
    ss = samples()
    texts = [s.text for s in ss]
    ir = ir or read_input(name)
    ref = ref or reference(name, ir, texts)
    low, lw = lower(ir, TARGETS["mnn-3.6"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.mtok"
        path.write_bytes(write_mtok(low))
        report = verify(VerifyJob(ir, low, lw, ss, [], replace(CORPUS_ONLY, python=python), timeout=600), path,
                        Chosen(lambda t, c: ref, "parity", "the parity table's reference", ()))
    row = _summarize(Row(name, ".mtok", report.runtime, {}, losses=sorted({x.code for x in lw.losses})),
                     report.checks)
    row.seconds = round(time.perf_counter() - start, 1)
    return row




def parity_txt(name: str, kind: int, python: str, ir=None, ref=None) -> Row:
    """(b): write the legacy type, run MNN 3.4.1 (`python`), attribute mismatches by projection steps."""
    start = time.perf_counter()
    ss = samples()
    texts = [s.text for s in ss]
    ir = ir or read_input(name)
    ref = ref or reference(name, ir, texts)
    plan = PLANS[kind](ir)
    data, losses, steps = write_content(plan.content), plan.losses, plan.steps
    final = steps[-1][1] if steps else ir
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tokenizer.txt"
        path.write_bytes(data)
        ids = sorted({i for r in ref.raw for i in r})
        rt = run_runtime(path, texts=texts, decode_ids=ids, python=python, timeout=600)
    prefix = single_prefix(final.post_processor)

    # Find the mismatching samples first, then run the projection chain on those samples only.
    probe = {n: Check(n) for n in TEXT_CHECKS}
    compare_texts(probe, ss, rt, ref, prefix, explain_raw=lambda *a: (), explain_engine=lambda *a: (),
                  explain_stream=lambda *a: ())
    index = {s.id: j for j, s in enumerate(ss)}
    js = sorted({index[m.sample] for c in probe.values() for m in c.mismatches})
    chain_out = {}
    if js:
        sub = [texts[j] for j in js]
        for code, step_ir in steps:
            hf = hf_from_ir(step_ir)
            eng = [e.ids for e in hf.encode_batch(sub, add_special_tokens=True)]
            raw = [e.ids for e in hf.encode_batch(sub, add_special_tokens=False)]
            dec = hf.decode_batch([ref.raw[j] for j in js], skip_special_tokens=False)
            for k, j in enumerate(js):
                chain_out.setdefault(j, []).append((code, {"engine ids": eng[k], "raw ids": raw[k],
                                                           "streaming decode": dec[k]}))
    unk_codes = {x.code for x in losses} & {"legacy-bert-unk"}

    def explain(check, j, want, have) -> tuple[str, ...]:
        """The chain steps whose output changes `check` on sample `j`; UNEXPLAINED appended when
        the last step still differs from the runtime."""
        prev, causes = want, []
        for code, out in chain_out.get(j, []):
            if out[check] != prev:
                if code != "representation":
                    causes.append(code)
                prev = out[check]
        if prev != have:
            if unk_codes and check != "streaming decode":
                return (*causes, "legacy-bert-unk")
            return (*causes, "UNEXPLAINED") if causes else ()
        return tuple(dict.fromkeys(causes))

    checks = {n: Check(n) for n in TEXT_CHECKS}
    compare_texts(checks, ss, rt, ref, prefix,
                  explain_raw=lambda j, raw, got_raw: explain("raw ids", j, raw, got_raw),
                  explain_engine=lambda j, eng, raw, got, got_raw, raw_why: explain("engine ids", j, eng, got),
                  explain_stream=lambda j, raw, dec, stream: explain("streaming decode", j, dec, stream))
    row = _summarize(Row(name, f"tokenizer.txt type {kind}", rt.version, {}, losses=[x.code for x in losses]),
                     checks.values())
    row.seconds = round(time.perf_counter() - start, 1)
    return row


def render(rows: list[Row]) -> str:
    out = ["| input | file | runtime | raw ids | engine ids | streaming decode | mismatch classes (count, first sample) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        cols = [f"{r.checks.get(c, [0, 0])[0]}/{r.checks.get(c, [0, 0])[1]}"
                for c in ("raw ids", "engine ids", "streaming decode")]
        classes = "; ".join(f"{k} ({v}, {r.examples[k]})" for k, v in sorted(r.classes.items())) or "-"
        out.append(f"| {r.input} | {r.file} | {r.runtime} | {' | '.join(cols)} | {classes} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="substring of the input names to run")
    ap.add_argument("--mnn341", default=installed_mnn341(),
                    help="python with MNN 3.4.1 for the .txt table (default: the tests' MNN 3.4.1 venv, if made)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()
    texts = [s.text for s in samples()]
    mtok_rows, txt_rows = [], []
    for name in INPUTS:
        if args.only and args.only not in name:
            continue
        ir = read_input(name)
        ref = reference(name, ir, texts)
        mtok_rows.append(parity_mtok(name, ir, ref))
        print(f"{name}: .mtok done ({mtok_rows[-1].seconds}s)", file=sys.stderr)
        if args.mnn341:
            for kind in INPUTS[name][2]:
                txt_rows.append(parity_txt(name, kind, args.mnn341, ir, ref))
                print(f"{name}: type {kind} done ({txt_rows[-1].seconds}s)", file=sys.stderr)
    print("(a) .mtok on MNN 3.6.1\n")
    print(render(mtok_rows))
    print("\n(b) legacy tokenizer.txt on MNN 3.4.1\n")
    print(render(txt_rows) if txt_rows else "(no MNN 3.4.1 interpreter: pass --mnn341)")
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in mtok_rows + txt_rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
