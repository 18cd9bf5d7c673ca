"""Fuzz targets whose inputs may take unbounded memory or time (issue 25): chat templates (rendered
by the lowering) and GGUF key/value fields (counts, types, lengths).  Unlike `fuzzing.py`'s
in-process targets, every case runs in a child process under RLIMIT_AS (`MEMORY`) and a time
limit, so a defect costs the child, never the machine: the child is restarted after it dies.

    python -m tests.support.fuzz_limited [--seconds 60] [--seed 13] [--target chat-template|gguf-fields]

Outcomes per case: accepted (exported), clean (an `MtokError`), traceback (any other exception),
hang (over `HANG_SECONDS`), OOM (a MemoryError escaped, or the child died: the memory limit's
usual ends).  `tests/acceptance/test_fuzz.py` runs each target for a few seconds; `make fuzz` longer."""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import resource
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MEMORY = 2 * 2**30  # the child's address space
HANG_SECONDS = 15  # per case: a render's own limit is 5 s, a GGUF read of a seed takes milliseconds
OUTCOMES = ("accepted", "clean", "traceback", "hang", "OOM")


@dataclass
class Stats:
    target: str
    counts: Counter = field(default_factory=Counter)
    examples: dict = field(default_factory=dict)  # outcome (and where) -> a case that shows it

    @property
    def tried(self) -> int:
        return sum(self.counts.values())

    @property
    def defects(self) -> int:
        return self.counts["traceback"] + self.counts["hang"] + self.counts["OOM"]

    def as_row(self) -> dict:
        return {"target": self.target, "tried": self.tried, **{k: self.counts[k] for k in OUTCOMES}}


# ---------------------------------------------------------------- cases

HOSTILE_SNIPPETS = [
    "{{ 'x' | center(N) }}", "{{ 'a' * N }}", "{{ messages * N }}", "{{ 'x'.ljust(N) }}", "{{ 2 ** N }}",
    "{{ '%0Nd' % 1 }}", "{{ 'a' | indent(N) }}", "{{ (messages | tojson) * N }}", "{{ range(N) | list | length }}",
    "{% for i in range(N) %}{% for j in range(N) %}{% endfor %}{% endfor %}",
    "{% set ns = namespace(s='ab') %}{% for i in range(M) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "{{ ([messages] * M) | tojson }}", "{{ (((((((((( 1 )))))))))) }}", "{{ 'a' ~ N }}", "{% raw %}{{{% endraw %}",
    "{{ messages | batch(N) | list | length }}", "{{ messages[0].content * N }}", "{{ 'x' | truncate(N) }}",
    "{{ 'x' | wordwrap(N) }}", "{{ loop }}", "{{ 'a'.replace('a', 'aaaa') }}",
]
NUMBERS = ["0", "1", "-1", "10", "1000", "99999", "100000", "4194304", "4194305", "10**6", "10**9", "2**62", "10**18"]


def template_seeds() -> list[str]:
    from mtok_export.formats import read_source

    seeds = [read_source(REPO / "samples/llama-spm").chat.text]
    corpus = REPO.parent / "shared/corpus/chat_templates"
    if corpus.is_dir():
        seeds += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(corpus.rglob("*.jinja"))[:40]]
    return [s for s in seeds if s]


def template_case(rng: random.Random, seeds: list[str]) -> tuple[str, str]:
    """-> (template, what was done to a seed)."""
    text = rng.choice(seeds)
    roll = rng.random()
    tags = [i for i in range(len(text) - 1) if text[i] == "{" and text[i + 1] in "{%"] or [0]
    at = rng.choice(tags)
    if roll < 0.6:
        snippet = rng.choice(HOSTILE_SNIPPETS).replace("N", rng.choice(NUMBERS)).replace("M", str(rng.choice([5, 20, 40, 64])))
        return text[:at] + snippet + text[at:], f"{snippet!r} inserted at {at}"
    if roll < 0.75:  # a tag repeated many times
        end = text.find("}", at) + 2
        n = rng.choice([10, 1000, 5000])
        return text[:at] + text[at:end] * n + text[end:], f"tag at {at} repeated {n} times"
    if roll < 0.9:  # one character changed
        i = rng.randrange(len(text))
        # (no lone surrogate: every reader refuses one before a template reaches the lowering)
        c = rng.choice(["{", "}", "%", "(", ")", "'", '"', "|", "*", "~", "\x00", "\ufffe", " "])
        return text[:i] + c + text[i + 1:], f"char {i} = {c!r}"
    n = rng.randrange(len(text) + 1)
    return text[:n], f"truncated at {n}"


def gguf_fields(data: bytes) -> list[tuple[int, str]]:
    """(offset, what) of every count, length and type in a well-formed little-endian GGUF's
    header and key/value section (walked here, independently of the reader)."""
    out = [(8, "tensor count"), (16, "kv count")]
    pos = 24
    kvs = struct.unpack_from("<Q", data, 16)[0]
    fixed = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    for _ in range(kvs):
        out.append((pos, "key length"))
        pos += 8 + struct.unpack_from("<Q", data, pos)[0]
        out.append((pos, "value type"))
        kind = struct.unpack_from("<I", data, pos)[0]
        pos += 4
        if kind == 8:
            out.append((pos, "string length"))
            pos += 8 + struct.unpack_from("<Q", data, pos)[0]
        elif kind == 9:
            elem, n = struct.unpack_from("<IQ", data, pos)
            out += [(pos, "element type"), (pos + 4, "array length")]
            pos += 12
            if elem == 8:
                for j in range(n):
                    if j < 50:
                        out.append((pos, "element string length"))
                    pos += 8 + struct.unpack_from("<Q", data, pos)[0]
            else:
                pos += n * fixed[elem]
        else:
            pos += fixed[kind]
    return out


def gguf_case(rng: random.Random, seeds: dict[str, bytes]) -> tuple[bytes, str]:
    name = rng.choice(sorted(seeds))
    data = bytearray(seeds[name])
    at, what = rng.choice(gguf_fields(bytes(data)))
    width = 4 if "type" in what else 8
    old = struct.unpack_from("<I" if width == 4 else "<Q", data, at)[0]
    if width == 4:
        new = rng.choice([0, 7, 8, 9, 10, 12, 13, 255, 2**31, 2**32 - 1, old ^ 1])
    else:
        new = rng.choice([0, 1, old + 1, max(old - 1, 0), old * 2, 2**31, 2**32, 2**63, 2**64 - 1,
                          len(data), len(data) * 1000])
    struct.pack_into("<I" if width == 4 else "<Q", data, at, new)
    return bytes(data), f"{name}: {what} at {at}: {old} -> {new}"


# ---------------------------------------------------------------- the child

def serve(target: str) -> None:
    """Read one case per line (JSON) from stdin, run it, write its outcome as a JSON line."""
    import dataclasses

    from mtok_export.chat.nesting import check_template
    from mtok_export.errors import MtokError
    from mtok_export.formats import read_source
    from mtok_export.readers.gguf import read_gguf
    from mtok_export.targets import build

    base = read_source(REPO / "samples/llama-spm") if target == "chat-template" else None
    # inside the parent's cache folder (MTOK_CACHE_DIR, a TemporaryDirectory it removes): the parent
    # kills this process (hangs, the end of the run), which never cleans up after itself
    tmp = Path(tempfile.mkdtemp(prefix="mtok-fuzz-", dir=os.environ.get("MTOK_CACHE_DIR")))

    def run(case: dict):
        if target == "chat-template":
            text = case["template"]
            check_template(text, "fuzz")
            build(dataclasses.replace(base, chat=dataclasses.replace(base.chat, text=text)))
        else:
            path = tmp / "model.gguf"
            path.write_bytes(base64.b64decode(case["data"]))
            build(read_gguf(path))

    def alarm(signum, frame):
        raise TimeoutError("hang")

    signal.signal(signal.SIGALRM, alarm)
    for line in sys.stdin:
        case = json.loads(line)
        signal.alarm(HANG_SECONDS)
        try:
            run(case)
            reply = {"outcome": "accepted"}
        except MtokError:
            reply = {"outcome": "clean"}
        except TimeoutError as e:
            reply = {"outcome": "hang" if str(e) == "hang" else "traceback", "where": _where(e)}
        except MemoryError as e:
            reply = {"outcome": "OOM", "where": _where(e)}
        except Exception as e:  # noqa: BLE001  what the targets must not let through
            reply = {"outcome": "traceback", "where": _where(e)}
        finally:
            signal.alarm(0)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _where(e: BaseException) -> str:
    tb = traceback.extract_tb(e.__traceback__)
    ours = [f for f in tb if "/mtok_export/" in f.filename] or tb
    f = ours[-1] if ours else None
    return f"{type(e).__name__} at {f.filename.rsplit('/mtok_export/', 1)[-1]}:{f.lineno}" if f else type(e).__name__


class _Child:
    """The limited child process, restarted after it dies or hangs."""

    def __init__(self, target: str, cache: str):
        self.target, self.cache, self.proc = target, cache, None

    def start(self):
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

        env = {**os.environ, "PYTHONPATH": str(REPO), "MTOK_CACHE_DIR": self.cache}
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", self.target], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
                                     preexec_fn=limit)

    def ask(self, case: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        try:
            self.proc.stdin.write(json.dumps(case) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        import selectors

        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if not sel.select(HANG_SECONDS + 10):  # stuck where SIGALRM cannot reach (C code)
                self.stop()
                return {"outcome": "hang", "where": "killed by the parent"}
        line = self.proc.stdout.readline()
        return json.loads(line) if line else self._died()

    def _died(self) -> dict:
        code = self.proc.wait()
        self.proc = None
        return {"outcome": "OOM", "where": f"child died ({code})"}

    def stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def fuzz(target: str, seconds: float, seed: int = 13) -> Stats:
    """Run `target` for about `seconds` (child start-up included) with a fixed seed."""
    from tests.support.fuzzing import gguf_seeds

    rng = random.Random(seed)
    stats = Stats(target)
    if target == "chat-template":
        seeds = template_seeds()
        # first each hostile snippet at its largest, so that even a short run meets the limits
        first = [(s.replace("N", "10**9").replace("M", "64") + seeds[0], "hostile snippet first")
                 for s in HOSTILE_SNIPPETS]
        make = lambda: (lambda t, w: ({"template": t}, w))(*(first.pop(0) if first  # noqa: E731
                                                           else template_case(rng, seeds)))
    else:
        gseeds = gguf_seeds()
        make = lambda: (lambda d, w: ({"data": base64.b64encode(d).decode()}, w))(*gguf_case(rng, gseeds))  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="mtok-fuzz-cache-") as cache:
        child = _Child(target, cache)
        end = time.monotonic() + seconds
        try:
            while time.monotonic() < end:
                case, what = make()
                reply = child.ask(case)
                stats.counts[reply["outcome"]] += 1
                if reply["outcome"] not in ("accepted", "clean"):
                    stats.examples.setdefault(f"{reply['outcome']}: {reply.get('where')}", what[:200])
        finally:
            child.stop()
    return stats


TARGETS = ("chat-template", "gguf-fields")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60, help="per target")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--target", action="append", choices=TARGETS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    rows = []
    for target in args.target or TARGETS:
        stats = fuzz(target, args.seconds, args.seed)
        rows.append(stats)
    cols = ["target", "tried", *OUTCOMES]
    print("  ".join(f"{c:>13}" for c in cols))
    for s in rows:
        print("  ".join(f"{v!s:>13}" for v in s.as_row().values()))
    for s in rows:
        for key, what in s.examples.items():
            print(f"{s.target}: {key}\n    case: {what}")
    return 1 if any(s.defects for s in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
