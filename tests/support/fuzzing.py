"""A small fuzzer for every reader (issue 13), shared by `tests/acceptance/test_fuzz.py` (a few seconds per
reader, in the suite) and `fuzz_readers.py` (`make fuzz`, minutes).

Each target (tokenizer.json, SentencePiece, tiktoken, legacy .txt, .mtok, GGUF) starts from
valid seed inputs built from `samples/`, mutates them with a seeded
`random.Random`, and runs the reader, then (when it reads) the lowering and the `.mtok` writer,
and reads the written bytes back with the strict reader.  Every input ends in one of:

* ok: read (and, for source formats, written and read back);
* clean: an `MtokError` (exit 2/3 in the CLI), the only acceptable failure;
* other: any other exception, a defect (type and the line that raised it are recorded);
* hang: more than `HANG_SECONDS` on one input (SIGALRM), a defect;
* bad output: the writer produced bytes our own strict reader rejects, a defect (it would have
  written a file that `inspect` or MNN reads differently).

The mutations are structure-aware for JSON (any node replaced by a wrongly typed, out-of-range,
deeply nested or invalid-Unicode value, or deleted), line-aware for text formats, and byte-level
for binary ones."""

from __future__ import annotations

import base64
import json
import random
import shutil
import signal
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mtok_export.errors import MtokError
from mtok_export.formats import read_source
from mtok_export.targets import build
from mtok_export.legacy import read_legacy
from mtok_export.mtok import read_mtok, write_mtok
from mtok_export.readers.gguf import read_gguf
from mtok_export.readers.model_dir import read_model_dir
from mtok_export.readers.sentencepiece import read_sentencepiece
from mtok_export.readers.tiktoken import read_tiktoken

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"
HANG_SECONDS = 5

# JSON values that broke readers before (issue 13), and their relatives.  Strings in _RAW are
# spliced into the JSON text as written, for numbers and escapes `json.dumps` cannot produce.
_RAW = {"__INF__": "1e400", "__NEGINF__": "-1e400", "__NAN__": "NaN", "__BIGINT__": "1" + "0" * 400,
        "__SURROGATE__": '"\\ud800"', "__SURROGATE_IN__": '"a\\udc00b"',
        "__DEEP__": "[" * 1200 + "]" * 1200}  # deeper than json.dumps can write
_VALUES = [True, False, None, 0, -1, 1, 2 ** 31, 2 ** 32, 2 ** 64, 0.5, "", "x", "²", "\u0000", "<|im_end|>",
           [], {}, [1, 2], {"a": 1}, {"type": "Sequence"}, {"type": 1}, ["a", "b"], [["a", 1.0]], *_RAW]


class Hang(Exception):
    pass


@dataclass
class Stats:
    """What one target saw."""

    reader: str
    tried: int = 0
    ok: int = 0
    clean: int = 0
    other: Counter = field(default_factory=Counter)  # "Type at file:line" -> count
    hangs: int = 0
    bad_outputs: int = 0
    written: int = 0
    examples: dict = field(default_factory=dict)  # defect key -> a short description of an input

    @property
    def defects(self) -> int:
        return sum(self.other.values()) + self.hangs + self.bad_outputs

    def as_row(self) -> dict:
        return {"reader": self.reader, "tried": self.tried, "ok": self.ok, "clean errors": self.clean,
                "other exceptions": sum(self.other.values()), "hangs": self.hangs,
                "outputs written": self.written, "written but rejected by the strict reader": self.bad_outputs}


# ---------------------------------------------------------------- running one input

def _alarm(signum, frame):
    raise Hang


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    ours = [f for f in tb if "/mtok_export/" in f.filename] or tb
    f = ours[-1]
    return f"{type(e).__name__} at {f.filename.rsplit('/mtok_export/', 1)[-1]}:{f.lineno}"


def _write_and_check(tok, stats: Stats, what: str):
    """Lower and write like `mtok-export --allow-lossy` (`build` leaves the policy to the caller), then read the bytes back strictly."""
    _check_output(build(tok)[0], stats, what)


def _check_output(data: bytes, stats: Stats, what: str):
    stats.written += 1
    try:
        read_mtok(data, "written", strict=True)
    except MtokError as e:
        stats.bad_outputs += 1
        stats.examples.setdefault(f"bad output: {e}"[:160], what)


def run_one(stats: Stats, what: str, action) -> None:
    """Run `action()` under the hang alarm and file the outcome in `stats`."""
    stats.tried += 1
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        action()
        stats.ok += 1
    except MtokError:
        stats.clean += 1
    except Hang:
        stats.hangs += 1
        stats.examples.setdefault("hang", what)
    except RecursionError as e:  # counted as a defect like any other, but keep the message short
        key = _where(e)
        stats.other[key] += 1
        stats.examples.setdefault(key, what)
    except Exception as e:  # noqa: BLE001 - the point is to catch what readers let through
        key = _where(e)
        stats.other[key] += 1
        stats.examples.setdefault(key, what)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- mutations

def mutate_json(value, rng: random.Random):
    """A copy of `value` with one node replaced, deleted or nested deeply."""
    value = json.loads(json.dumps(value))
    parents = []  # (container, key) of every node

    def walk(v, depth=0):
        if depth > 12:
            return
        if isinstance(v, dict):
            for k in list(v)[:200]:
                parents.append((v, k))
                walk(v[k], depth + 1)
        elif isinstance(v, list):
            for i in range(min(len(v), 40)):
                parents.append((v, i))
                walk(v[i], depth + 1)
    walk(value)
    if not parents:
        return value, "root"
    container, key = rng.choice(parents)
    roll = rng.random()
    if roll < 0.15 and isinstance(container, dict):
        del container[key]
        return value, f"deleted {key!r}"
    if roll < 0.25:
        depth = rng.choice([70, 200, 1200])
        if depth > 200:
            container[key] = "__DEEP__"
            return value, f"{key!r} nested {depth} deep"
        nested: object = 1
        for _ in range(depth):
            nested = [nested] if rng.random() < 0.5 else {"type": "Sequence", "normalizers": [nested]}
        container[key] = nested
        return value, f"{key!r} nested {depth} deep"
    if roll < 0.35 and isinstance(container[key], str) and container[key]:
        s = container[key]
        i = rng.randrange(len(s))
        container[key] = s[:i] + rng.choice(["\ud800", "\x00", "{{ " + "(" * 3000, "\u1100\u1161", "\\"]) + s[i:]
        return value, f"{key!r} string spliced"
    if roll < 0.45 and isinstance(container[key], list) and container[key]:
        container[key].append(rng.choice(container[key]))
        return value, f"{key!r} element repeated"
    new = rng.choice(_VALUES)
    container[key] = new
    return value, f"{key!r} = {new!r:.40}"


def write_json_text(path: Path, value):
    text = json.dumps(value, ensure_ascii=True)  # ASCII: lone surrogates become \ud800 escapes
    for marker, raw in _RAW.items():
        text = text.replace(json.dumps(marker), raw)
    path.write_text(text, encoding="utf-8")


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    roll = rng.random()
    if roll < 0.1:
        n = rng.randrange(len(b) + 1)
        return bytes(b[:n]), f"truncated at {n}"
    if roll < 0.2:
        i = rng.randrange(len(b) + 1)
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        return bytes(b[:i] + junk + b[i:]), f"{len(junk)} bytes inserted at {i}"
    if roll < 0.3 and len(b) > 1:
        i = rng.randrange(len(b))
        n = rng.randint(1, 16)
        return bytes(b[:i] + b[i + n:]), f"{n} bytes deleted at {i}"
    k = rng.choice([1, 1, 2, 4, 8])
    where = []
    for _ in range(k):
        i = rng.randrange(len(b))
        b[i] = rng.choice([0, 0xFF, 0x80, 0x7F, rng.randrange(256), b[i] ^ (1 << rng.randrange(8))])
        where.append(i)
    return bytes(b), f"bytes changed at {where}"


def mutate_lines(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    lines = data.split(b"\n")
    i = rng.randrange(len(lines))
    roll = rng.random()
    if roll < 0.2:
        del lines[i]
        what = f"line {i} deleted"
    elif roll < 0.35:
        lines.insert(i, lines[rng.randrange(len(lines))])
        what = f"a line repeated at {i}"
    elif roll < 0.5:
        lines[i] = rng.choice([b"", b" ", b"\r", b"-1", b"99999999999999999999", b"\xff\xfe", b"a b c", b"=== 1",
                               b"430 9", b"0 0 0", lines[i] + b" 1"])
        what = f"line {i} replaced"
    else:
        data2, what = mutate_bytes(lines[i] or b"x", rng)
        lines[i] = data2
        what = f"line {i}: {what}"
    return b"\n".join(lines), what


# ---------------------------------------------------------------- targets

def _tokenizer_json(rng, stats, seconds):
    seeds = [d for d in sorted(SAMPLES.iterdir()) if (d / "tokenizer.json").is_file()]
    parsed = {d: {n: json.loads((d / n).read_text(encoding="utf-8")) for n in
                  ("tokenizer.json", "tokenizer_config.json") if (d / n).is_file()} for d in seeds}
    with tempfile.TemporaryDirectory(prefix="mtok-fuzz-") as tmp:
        work = Path(tmp) / "model"
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            seed = rng.choice(seeds)
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(seed, work)
            name = rng.choice(sorted(parsed[seed]))
            value, what = mutate_json(parsed[seed][name], rng)
            write_json_text(work / name, value)
            desc = f"{seed.name}/{name}: {what}"

            def action():
                _write_and_check(read_model_dir(work), stats, desc)
            run_one(stats, desc, action)


def _binary_files(rng, stats, seconds, seeds: dict[str, bytes], file_name: str, read):
    """Byte-mutate `seeds` (name -> bytes), write each mutant as `file_name` and read it with `read`."""
    names = sorted(seeds)
    with tempfile.TemporaryDirectory(prefix="mtok-fuzz-") as tmp:
        path = Path(tmp) / file_name
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            name = rng.choice(names)
            data, what = mutate_bytes(seeds[name], rng)
            path.write_bytes(data)
            desc = f"{name}: {what}"
            run_one(stats, desc, lambda: _write_and_check(read(path), stats, desc))


def _sentencepiece(rng, stats, seconds):
    models = (SAMPLES / "llama-spm/tokenizer.model", SAMPLES / "t5-unigram/spiece.model")
    seeds = {p.name: p.read_bytes() for p in models}
    _binary_files(rng, stats, seconds, seeds, "tokenizer.model", read_sentencepiece)


def tiktoken_seed() -> bytes:
    """A small valid rank file: the 256 bytes, then a few merges of them (ranks dense from 0)."""
    tokens = [bytes([i]) for i in range(256)] + [b"th", b"he", b"the", b" t", b" the", b"in", b"ing", b"er"]
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens))


def _tiktoken(rng, stats, seconds):
    seed = tiktoken_seed()
    with tempfile.TemporaryDirectory(prefix="mtok-fuzz-") as tmp:
        path = Path(tmp) / "ranks.tiktoken"
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            data, what = mutate_lines(seed, rng) if rng.random() < 0.7 else mutate_bytes(seed, rng)
            path.write_bytes(data)
            special = rng.choice([{}, {"<|endoftext|>": 264}, ["<|endoftext|>"], {"\ud800": 264}, {"x": True}])

            def action():
                _write_and_check(read_tiktoken(path, pattern=r"\w+| ?[^\s\w]+|\s+", special=special), stats, what)
            run_one(stats, f"{what}; special={special!r}", action)


def legacy_seeds() -> dict[str, bytes]:
    """A legacy tokenizer.txt of each type the samples give (0 SentencePiece, 2 BERT, 3 byte-level BPE)."""
    out = {}
    for d in ("llama-spm", "bert-wordpiece", "qwen-bpe"):
        out[d] = build(read_source(SAMPLES / d), "txt")[0]
    return out


def _legacy_txt(rng, stats, seconds):
    seeds = legacy_seeds()
    end = time.monotonic() + seconds
    names = sorted(seeds)
    while time.monotonic() < end:
        name = rng.choice(names)
        data, what = mutate_lines(seeds[name], rng) if rng.random() < 0.6 else mutate_bytes(seeds[name], rng)
        desc = f"{name}.txt: {what}"
        run_one(stats, desc, lambda: _write_and_check(read_legacy(data, "fuzz.txt"), stats, desc))


def mtok_seeds() -> dict[str, bytes]:
    return {d: build(read_source(SAMPLES / d))[0]
            for d in ("llama-spm", "bert-wordpiece", "qwen-bpe", "t5-unigram")}


def _mtok(rng, stats, seconds):
    seeds = mtok_seeds()
    names = sorted(seeds)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        name = rng.choice(names)
        data, what = mutate_bytes(seeds[name], rng)
        desc = f"{name}.mtok: {what}"

        def action():
            read_mtok(data, "fuzz.mtok", strict=False)  # inspect's lenient path
            tok, _ = read_mtok(data, "fuzz.mtok", strict=True)
            _check_output(write_mtok(tok), stats, desc)  # what reads strictly must write and read back
        run_one(stats, desc, action)


def gguf_seeds() -> dict[str, bytes]:
    """Small GGUF files written with the `gguf` package: a WordPiece ("bert") and a byte-level BPE
    ("gpt2", qwen2 pre-tokenizer) from the samples, so one read takes milliseconds, not seconds."""
    import gguf

    bert_tokens = (SAMPLES / "bert-wordpiece/vocab.txt").read_text(encoding="utf-8").splitlines()[:400]
    tj = json.loads((SAMPLES / "qwen-bpe/tokenizer.json").read_text(encoding="utf-8"))
    bpe_tokens = [t for t, _ in sorted(tj["model"]["vocab"].items(), key=lambda kv: kv[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    out = {}
    with tempfile.TemporaryDirectory(prefix="mtok-fuzz-") as tmp:
        for name, arch, model, tokens in (("bert", "bert", "bert", bert_tokens), ("bpe", "qwen2", "gpt2", bpe_tokens)):
            path = Path(tmp) / f"{name}.gguf"
            w = gguf.GGUFWriter(str(path), arch=arch)
            w.add_tokenizer_model(model)
            w.add_token_list(tokens)
            w.add_token_types([3 if t.startswith("[") and model == "bert" else 1 for t in tokens])
            if model == "bert":
                w.add_unk_token_id(tokens.index("[UNK]"))
                w.add_sep_token_id(tokens.index("[SEP]"))
                w.add_bos_token_id(tokens.index("[CLS]"))
            else:
                w.add_tokenizer_pre("qwen2")
                w.add_token_merges(merges)
                w.add_eos_token_id(len(tokens) - 1)
            w.write_header_to_file()
            w.write_kv_data_to_file()
            w.write_tensors_to_file()
            w.close()
            out[name] = path.read_bytes()
    return out


def _gguf(rng, stats, seconds):
    _binary_files(rng, stats, seconds, {f"{k}.gguf": v for k, v in gguf_seeds().items()}, "model.gguf", read_gguf)


TARGETS = {"tokenizer.json": _tokenizer_json, "sentencepiece": _sentencepiece, "tiktoken": _tiktoken,
           "legacy-txt": _legacy_txt, "mtok": _mtok, "gguf": _gguf}


def fuzz(reader: str, seconds: float, seed: int = 13) -> Stats:
    """Fuzz one reader for about `seconds` with a fixed seed."""
    stats = Stats(reader)
    TARGETS[reader](random.Random(seed), stats, seconds)
    return stats
