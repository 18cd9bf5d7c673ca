#!/usr/bin/env python3
"""Where a default export's time goes, phase by phase, against the floor of the same encodes (issue 40).

For each model: one default export (`mtok export --path MODEL -o OUT --allow-lossy`, verification on)
in a child process whose package functions are wrapped by timers (nothing else changes: the bytes
and the verdict are the export's own), then the floor, measured in the same run on the same texts:

* `ref floor`: a process that reads the source, then times its reference library (`references.
  choose(...).raw_ids`, with the result cache switched off) encoding every text the runtime was
  given (the corpus, the vocabulary sweep, the special-token surface);
* `rt floor`: a process that runs MNN's runtime (`verify.runtime.run_runtime`: one worker, the
  file loaded once) encoding the same texts, nothing else.

Each phase is printed as a ratio to `floor = ref floor + rt floor`.  A phase's time is exclusive (a
phase called inside another is counted once, in the inner one); work on the helper thread while
the runtime runs (attribution's projections, the robustness phase's reference side) is printed in
parentheses and is not part of the wall time.  Phases:

  start     interpreter start and imports, up to the export call (the whole process minus the rest)
  read      the source read into the IR            lower   the lowering and the bytes
  write     the temporary file written              docs    the long documents loaded
  choose    the reference chosen (library loaded)  sweep   the vocabulary sweep's strings
  ref       the reference's encodes (cached by content: a warm run reads them)
  runtime   the runtime worker (encodes, decodes, chats, renders, the robustness budget)
  compare   the text checks' comparisons           explain attribution of mismatches
  vsweep    the sweep's comparisons                paths   the chat-path renders compared
  robust    the robustness phase's comparisons     other   everything else (policy, manifest, report)

Runs are warm (one unmeasured export first: the caches a second export of a model reads).
`--tree DIR` measures another checkout (a `git worktree` of an older commit) with this interpreter."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve()
CORPUS = HERE.parents[2] / "shared" / "corpus" / "tokenizers"
ZOO = Path.home() / ".cache" / "mtok-export" / "zoo"
SITE = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
MODELS = {  # name -> path (issue 40's five slow cases)
    "qwen2.5": CORPUS / "qwen2.5-instruct",
    "gemma-3": ZOO / "lenml-gemma3",
    "mistral-v3-spm": SITE / "mistral_common" / "data" / "mistral_instruct_tokenizer_240323.model.v3",
    "llama2-spm": CORPUS / "llama2-7b-hf",
    "tekken": SITE / "mistral_common" / "data" / "tekken_240911.json",
    "gemma-4-gguf": ZOO / "llama-cpp-vocab" / "ggml-vocab-gemma-4.gguf",
    "unigram-262k": Path.home() / ".cache" / "mtok-export" / "bench" / "unigram-262k.model",  # made on first use
}
SPM_UNIGRAM = CORPUS / "sp-test-models" / "test_model.model"
COLUMNS = ("start", "read", "lower", "write", "docs", "choose", "sweep", "ref", "runtime", "compare", "explain",
           "vsweep", "paths", "robust", "other")
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


# ------------------------------------------------------------------ the child: one timed export

class Timer:
    """Exclusive wall time per phase label, per thread: a wrapped call made inside another wrapped
    call stops the outer one's clock while it runs."""

    def __init__(self):
        self.main = threading.main_thread()
        self.seconds: dict[str, float] = {}
        self.local = threading.local()

    def wrap(self, owner, name: str, label: str):
        fn = getattr(owner, name, None)
        if fn is None:
            return
        timed = self.timed(fn, label)
        setattr(owner, name, staticmethod(timed) if isinstance(owner, type) and isinstance(
            owner.__dict__.get(name), staticmethod) else timed)

    def timed(self, fn, label: str):
        timer = self

        def timed(*a, **k):
            stack = timer.local.__dict__.setdefault("stack", [])
            tag = label if threading.current_thread() is timer.main else f"({label})"
            now = time.perf_counter()
            if stack:
                outer, since = stack[-1]
                timer.seconds[outer] = timer.seconds.get(outer, 0.0) + now - since
            stack.append([tag, now])
            try:
                return fn(*a, **k)
            finally:
                end = time.perf_counter()
                _, since = stack.pop()
                timer.seconds[tag] = timer.seconds.get(tag, 0.0) + end - since
                if stack:
                    stack[-1][1] = end
        return timed


def child(model: str, out: str, record: str) -> None:
    started = time.perf_counter()
    import importlib

    C = importlib.import_module("mtok_export.verify.check")
    try:
        V = importlib.import_module("mtok_export.verify.pipeline")
    except ModuleNotFoundError:  # a checkout from before the move (issue 42)
        V = importlib.import_module("mtok_export.verification")
    from mtok_export import documents, job
    from mtok_export.verify import attribution, references

    t = Timer()
    t.wrap(job.Job, "read_source", "read")
    t.wrap(job.Job, "lower", "lower")
    t.wrap(documents, "load", "docs")
    t.wrap(V, "read_file", "write")
    texts: list = []
    keep = {}
    run_runtime = C.run_runtime

    def recording(mtok_path, **k):
        texts.extend(k.get("texts") or ())
        keep["mtok"] = Path(mtok_path).read_bytes()
        return run_runtime(mtok_path, **k)
    C.run_runtime = recording
    t.wrap(C, "run_runtime", "runtime")
    t.wrap(C, "sweep_texts", "sweep")
    t.wrap(C, "compare_texts", "compare")
    t.wrap(C, "_sweep", "vsweep")
    t.wrap(C, "_chat_paths", "paths")
    t.wrap(C, "_robustness", "robust")
    t.wrap(C, "_name_components", "explain")
    t.wrap(C, "_stop_checks", "other")
    t.wrap(references.Chosen, "raw_ids", "ref")
    try:  # the reference in its memory-bounded child: the parent waits for it there
        t.wrap(importlib.import_module("mtok_export.verify.bounded"), "run", "ref")
    except ModuleNotFoundError:  # a checkout from before the bound: the reference runs in-process
        pass
    choose = V.choose_or_self_check

    def chosen(tok):
        c = choose(tok)
        return dataclasses.replace(c, run=t.timed(c.run, "ref"))
    V.choose_or_self_check = chosen
    t.wrap(V, "choose_or_self_check", "choose")
    for name in ("raw", "engine", "stream", "chat_text", "chat_ids", "component", "base_decode", "warm", "save",
                 "project_raw"):
        t.wrap(attribution.Attribution, name, "explain")
    from mtok_export import export as E

    t.wrap(E, "atomic_write", "write")
    from mtok_export.cli import app  # noqa: F401  the CLI as `python -m mtok_export` runs it
    from mtok_export import cli

    sys.argv = ["mtok", "--quiet", "export", "--path", model, "-o", out, "--allow-lossy"]
    begin = time.perf_counter()
    code = 0
    try:
        cli.main()
    except SystemExit as e:
        code = e.code or 0
    total = time.perf_counter() - begin
    Path(record).write_text(json.dumps({"seconds": t.seconds, "call": total, "imports": begin - started,
                                        "exit": code, "texts": texts}))
    Path(record + ".mtok").write_bytes(keep.get("mtok", b""))


def floor_ref(model: str, texts_file: str) -> None:
    """Seconds the reference library takes for the texts, uncached, after the source is read."""
    from mtok_export import cache
    from mtok_export.formats import read_source
    from mtok_export.verify.references import choose_or_self_check

    texts = json.loads(Path(texts_file).read_text())["texts"]
    tok = read_source(Path(model))
    cache.load = lambda kind, digest: None
    cache.store = lambda kind, digest, value: None
    start = time.perf_counter()
    ref = choose_or_self_check(tok)
    ref.raw_ids(texts)
    print(json.dumps({"seconds": time.perf_counter() - start}))


def floor_rt(mtok: str, texts_file: str) -> None:
    from mtok_export.verify.runtime import run_runtime

    texts = json.loads(Path(texts_file).read_text())["texts"]
    texts = [x for x in texts if "\x00" not in x]
    start = time.perf_counter()
    run_runtime(mtok, texts=texts, decode_ids=[], chats=[], check=False)
    print(json.dumps({"seconds": time.perf_counter() - start}))


# ------------------------------------------------------------------ the parent

def unigram_262k(path: Path) -> None:
    """A 262,144-piece SentencePiece Unigram (the size of the registry package's that stalled the
    sweep for twenty minutes, issue 40), made from the corpus's small Unigram model (its normalizer
    and special pieces) and Gemma-3's pieces (then Gemini's), each scored lower than the one before: a shape, not a
    trained model, so only the timing is meaningful."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    m = pb.ModelProto()
    m.ParseFromString(SPM_UNIGRAM.read_bytes())
    seen = {p.piece for p in m.pieces[:3]}
    jitter = random.Random(262144)
    del m.pieces[3:]
    pieces = []
    for source in ("lenml-gemma3", "lenml-gemini"):  # Gemma-3's pieces, then Gemini's to fill the count
        vocab = json.loads((ZOO / source / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
        pieces += sorted(vocab, key=vocab.get)
    for piece in pieces:
        if len(m.pieces) == 262144:
            break
        if piece and piece not in seen and not (piece.startswith("<") and piece.endswith(">")):
            seen.add(piece)
            # a seeded jitter: linear scores alone make many segmentations tie exactly, where
            # sentencepiece and HF break ties differently (a trained model's scores do not)
            m.pieces.add(piece=piece, score=-1.0 - len(m.pieces) / 1000.0 - jitter.random() / 1000.0, type=1)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(m.SerializeToString())
    tmp.replace(path)


def spawn(tree: Path, *args: str, timeout: float) -> tuple[float, str]:
    env = {**ENV, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    p = subprocess.run([sys.executable, str(HERE), *args], cwd=tree, env=env, capture_output=True, text=True,
                       timeout=timeout)
    if p.returncode:
        raise SystemExit(f"{' '.join(args)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return time.perf_counter() - start, p.stdout


def measure(tree: Path, model: Path, tmp: Path, timeout: float, warm: bool) -> dict:
    out, record = tmp / "out", tmp / "record.json"
    if warm:
        spawn(tree, "--child", str(model), str(out), str(record), timeout=timeout)
    wall, _ = spawn(tree, "--child", str(model), str(out), str(record), timeout=timeout)
    r = json.loads(record.read_text())
    s = r["seconds"]
    phases = {k: v for k, v in s.items()}
    phases["start"] = wall - r["call"]
    phases["other"] = phases.get("other", 0.0) + r["call"] - sum(v for k, v in s.items() if not k.startswith("("))
    ref = json.loads(spawn(tree, "--floor-ref", str(model), str(record), timeout=timeout)[1])["seconds"]
    rt = json.loads(spawn(tree, "--floor-rt", str(record) + ".mtok", str(record), timeout=timeout)[1])["seconds"]
    return {"wall": wall, "phases": phases, "ref floor": ref, "rt floor": rt, "texts": len(r["texts"]),
            "exit": r["exit"]}


def row(name: str, tag: str, m: dict) -> str:
    floor = m["ref floor"] + m["rt floor"]
    p = m["phases"]
    cells = [f"{p.get(c, 0.0) / floor:5.2f}" for c in COLUMNS]
    par = [f"{k}{v / floor:.2f}" for k, v in sorted(p.items()) if k.startswith("(")]
    return (f"{name:15} {tag:6} {m['texts']:7,} {m['ref floor']:6.1f} {m['rt floor']:6.1f} {m['wall']:7.1f} "
            f"{m['wall'] / floor:6.2f}x " + " ".join(cells) + ("  " + " ".join(par) if par else "") + f"  exit {m['exit']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", choices=sorted(MODELS), help="models (default: all)")
    ap.add_argument("--tree", action="append", default=[],
                    help="a checkout to measure (repeat for an A/B in the same run: rows interleave); default: this one")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds per process")
    ap.add_argument("--cold", action="store_true", help="no warm-up export before the measured one")
    ap.add_argument("--json", type=Path, help="also write the measurements there")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--floor-ref", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--floor-rt", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(*args.child)
    if args.floor_ref:
        return floor_ref(*args.floor_ref)
    if args.floor_rt:
        return floor_rt(*args.floor_rt)
    trees = [Path(t).resolve() for t in args.tree] or [HERE.parents[1]]
    tags = [t.name[-6:] for t in trees]
    print("ratios to floor = ref floor + rt floor (seconds); (x): on the helper thread while the runtime runs")
    print(f"{'model':15} {'tree':6} {'texts':>7} {'ref fl':>6} {'rt fl':>6} {'wall s':>7} {'wall':>7} "
          + " ".join(f"{c[:5]:>5}" for c in COLUMNS))
    results = {}
    if not MODELS["unigram-262k"].exists() and "unigram-262k" in (args.only or MODELS):
        unigram_262k(MODELS["unigram-262k"])
    for name in args.only or list(MODELS):
        for tree, tag in zip(trees, tags):
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    m = measure(tree, MODELS[name], Path(tmp), args.timeout, not args.cold)
                except subprocess.TimeoutExpired:  # a stall is a result: say how long it was given
                    print(f"{name:15} {tag:6} did not finish within --timeout {args.timeout:g} s", flush=True)
                    results.setdefault(name, {})[str(tree)] = {"timeout": args.timeout}
                    continue
            results.setdefault(name, {})[str(tree)] = m
            print(row(name, tag, m), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
