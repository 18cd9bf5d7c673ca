"""The robustness phase of verification: what a file does on the inputs users paste, not only on
short strings.  One run of each character class at growing lengths and three long documents go
through the real runtime, last in its process (`runtime.RobustRequest`): each encode on a thread
with a small stack, so that a matcher recursing per character (std::wregex, which MNN runs a split
regex holding non-ASCII ranges on; libstdc++'s matcher recurses per character consumed, GCC bug
86164) crashes at a few hundred characters here instead of tens of thousands on a main thread;
under an address-space limit and a time budget.  For each input: its ids against the reference's
(where it finished), its time (the encoding thread's CPU time, so that a shared machine's load does
not count), a crash.  The growth of the encode time with the length (linear, or quadratic: MNN's
BPE is quadratic in a pre-tokenized word's length) is measured from the lengths the budget allowed,
and the cost of a 20,000-character word is extrapolated from it when that length did not run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from .runtime import RobustRequest, RobustRun

# One run of each class: the unit repeated (cut) to the length.  ASCII letters are cycled, not one
# letter repeated, so the BPE meets many pairs (a base64 blob, a DNA string, a long identifier).
CLASSES = {
    "letters": "abcdefghijklmnopqrstuvwxyz",
    "mixed case": "aBcDeFgHiJkLmNoPqRsTuVwXyZ",
    "digits": "0123456789",
    "spaces": " ",
    "newlines": "\n",
    "punctuation": "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "CJK": "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事成",
    "token repeated": "hello",  # a vocabulary word without separators: one long word of one token
}
LENGTHS = (250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000)
WORD = 20_000  # the length the verdict quotes the cost of ("a 20,000-character word")
DOCUMENT_CHARS = 100_000
STACK = 256 * 1024  # a quarter of Android's usual 1 MiB thread stack: a per-character recursion shows early
_DATA = Path(__file__).resolve().parents[1] / "compare" / "data"  # the stats slices, text written for this project



@dataclass(frozen=True)
class Input:
    group: str  # a class name, or "document: <kind>"
    text: str


def inputs(lengths=LENGTHS) -> list[Input]:
    """The robustness inputs in the order they run: every class at each length before the next
    length (a crash shows at the shortest length on every class first), the documents after the
    classes' 2,000-character round (real text, before the long runs the budget may not reach)."""
    out = []
    for n in lengths:
        out += [Input(name, _cut(unit, n)) for name, unit in CLASSES.items()]
        if n == 2_000:
            out += [Input(f"document: {kind}", text) for kind, text in documents().items()]
    return out


def _cut(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def documents(chars: int = DOCUMENT_CHARS) -> dict[str, str]:
    """Three long real documents (prose in many languages, code, a chat transcript) of at least
    `chars` characters each, built deterministically from the package's stats slices."""
    def samples(*names: str) -> list[str]:
        return [s.strip("\n") for n in names
                for s in (_DATA / f"{n}.txt").read_text(encoding="utf-8").split("\n~~~\n") if s.strip()]

    prose = samples(*sorted(p.stem for p in _DATA.glob("prose-*.txt")))
    code = samples("code", "json", "logs", "csv", "urls-paths")
    turns = []
    i = 0
    while sum(map(len, turns)) < chars:  # a user asks about a sample, the assistant answers with another
        ask, answer = prose[i % len(prose)], code[i % len(code)] if i % 3 == 2 else prose[(i * 7 + 3) % len(prose)]
        turns.append(f"<|user|>\nPlease look at this:\n{ask}\n<|assistant|>\nHere it is:\n\n{answer}\n")
        i += 1
    return {"prose": _fill(prose, chars, "\n\n"), "code": _fill(code, chars, "\n\n"), "chat": "".join(turns)}


def _fill(parts: list[str], chars: int, sep: str) -> str:
    """`parts` joined in a fixed shuffled order, again and again, until `chars` characters."""
    out, total, k = [], 0, 0
    while total < chars:
        p = parts[(k * 7919) % len(parts)]
        out.append(p)
        total += len(p) + len(sep)
        k += 1
    return sep.join(out)


def request(seconds: float, stack: int = STACK, lengths=LENGTHS) -> tuple[list[Input], RobustRequest]:
    items = inputs(lengths)
    return items, RobustRequest([x.text for x in items], [x.group for x in items], seconds, stack)


def growth(points: list[tuple[int, float]], floor: float = 0.002) -> float | None:
    """The exponent k of seconds ~ length**k, least squares on logs over the (up to) three longest
    points slower than `floor` seconds (shorter ones are start-up noise); None with fewer than two."""
    pts = sorted((n, t) for n, t in points if t >= floor and n > 0)[-3:]
    if len(pts) < 2 or pts[0][0] == pts[-1][0]:
        return None
    xs, ys = [math.log(n) for n, _ in pts], [math.log(t) for _, t in pts]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def growth_name(k: float | None) -> str:
    if k is None:
        return "unmeasured (too fast at the lengths run)"
    return "linear" if k < 1.5 else "quadratic" if k < 2.5 else "worse than quadratic"


def cost_at(points: list[tuple[int, float]], n: int) -> tuple[float | None, bool]:
    """(seconds at length `n`, whether it is extrapolated): measured when `n` ran, else from the
    longest point and the growth exponent; None when neither (every point too fast to fit)."""
    for m, t in points:
        if m == n:
            return t, False
    if not points:
        return None, True
    k = growth(points)
    if k is None:  # every point too fast to fit: no honest extrapolation
        return None, True
    m, t = max(points)
    return t * (n / m) ** k, True


@dataclass
class Robustness:
    """The phase's result (`to_json` goes into the report and the manifest, `verdict` is the line)."""

    stack: int
    seconds: float  # the budget
    groups: dict[str, dict] = field(default_factory=dict)  # per group: lengths run, CPU seconds, skipped, crash
    crash: dict | None = None  # {"group", "length", "status"} of the input the runtime died on
    word_seconds: float | None = None  # a WORD-character word (letters) on the runtime
    word_estimated: bool = True
    word_reference_seconds: float | None = None
    growth: float | None = None  # the exponent on the letters run
    max_length: int = 0  # every class ran without a crash up to this length
    mismatches: int = 0  # finished inputs whose ids differ from the reference's

    def to_json(self) -> dict:
        return {"verdict": self.verdict(), "max_length": self.max_length, "crash": self.crash,
                "word_chars": WORD, "word_seconds": _round(self.word_seconds), "word_estimated": self.word_estimated,
                "word_reference_seconds": _round(self.word_reference_seconds), "growth": growth_name(self.growth),
                "growth_exponent": _round(self.growth), "thread_stack": self.stack, "budget_seconds": self.seconds,
                "mismatches": self.mismatches, "groups": self.groups}

    def verdict(self) -> str:
        stack = f"{self.stack // 1024} KiB thread stack"
        if self.crash:
            head = (f"CRASH: the runtime crashed ({signal_name(self.crash['status'])}) on {self.crash['group']} "
                    f"of {self.crash['length']:,} characters ({stack}; the inputs after it did not run)")
        else:
            docs = sum(1 for g, r in self.groups.items() if g.startswith("document") and r["lengths"])
            head = f"no crash up to {self.max_length:,} characters of one class ({len(CLASSES)} classes, {stack})"
            head += f" and on {docs} document{'s' if docs > 1 else ''} of {DOCUMENT_CHARS // 1000} KB" if docs else ""
        if self.word_seconds is None:
            cost = f"the cost of a {WORD:,}-character word was not measured (too few lengths ran)"
        else:
            how = " (estimated from the growth)" if self.word_estimated else ""
            ref = (f"; reference: {_seconds(self.word_reference_seconds)}" if self.word_reference_seconds is not None
                   else "")
            cost = f"a {WORD:,}-character word costs {_seconds(self.word_seconds)} CPU on the runtime{how}{ref}"
        return f"{head}; {cost}; growth {growth_name(self.growth)}"


def signal_name(status: str) -> str:
    """"was killed by SIGSEGV" -> "SIGSEGV"; other endings as they are."""
    return status.rsplit(" ", 1)[-1] if status.startswith("was killed by") else status


def _seconds(x: float) -> str:
    return f"{x:.2f} s" if x >= 0.1 else f"{x:.4f} s"


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def summarize(items: list[Input], run: RobustRun, seconds: float, stack: int) -> Robustness:
    """The per-group table and the headline of one run (ids are compared by the caller)."""
    out = Robustness(stack, seconds)
    for x, r in zip(items, run.results):
        g = out.groups.setdefault(x.group, {"lengths": [], "seconds": [], "skipped": None, "error": None,
                                            "crash": None})
        if r is None:
            continue
        if "seconds" in r:  # the encoding thread's CPU time where the worker measured it (a shared machine)
            g["lengths"].append(len(x.text))
            g["seconds"].append(round(r.get("cpu", r["seconds"]), 5))
        elif "skipped" in r and g["skipped"] is None:
            g["skipped"] = f"{r['skipped']} from {len(x.text):,} characters"
        elif "error" in r:
            g["error"] = r["error"]
    if run.crashed is not None:
        x = items[run.crashed]
        if "SIGALRM" in run.status:  # the worker's own hard stop: a time-out, not a crash
            out.groups[x.group]["skipped"] = f"time limit at {len(x.text):,} characters"
        else:
            out.crash = {"group": x.group, "length": len(x.text), "status": run.status}
            out.groups[x.group]["crash"] = run.status
    for g in out.groups.values():
        g["growth"] = growth_name(growth(list(zip(g["lengths"], g["seconds"])))) if len(g["lengths"]) > 1 else None
    runs = [g for name, g in out.groups.items() if name in CLASSES]
    out.max_length = min((max(g["lengths"], default=0) for g in runs), default=0)
    letters = out.groups.get("letters", {"lengths": [], "seconds": []})
    points = list(zip(letters["lengths"], letters["seconds"]))
    out.growth = growth(points)
    out.word_seconds, out.word_estimated = cost_at(points, WORD)
    return out


# The robustness inputs whose ids are compared (and a mismatch explained): up to 5,000 characters;
# longer ones (the 20,000-character word among them) are timed and watched for a crash.  Explaining a
# mismatch runs HF on the source IR, which took minutes on one long word (a SentencePiece-style BPE
# has no pre-tokenizer: it reads a whole 100 KB document as one word).
IDS_MAX = 5_000


def reference_ahead(items: list[Input], reference) -> dict:
    """What the reference gives before the runtime has run (it is independent of it): the raw ids of
    every input up to `IDS_MAX` characters (the ones compared; cached by content), and the seconds it
    takes on a WORD-character letters word (`timer`).  An error here is left for the caller's own
    call to name."""
    texts = list(dict.fromkeys(x.text for x in items if len(x.text) <= IDS_MAX))
    out: dict = {}
    try:
        out["ids"] = dict(zip(texts, reference.raw_ids(texts)))
        if reference.timer is not None:
            out["word_seconds"] = reference.timer(_cut(CLASSES["letters"], WORD))
    except Exception:  # noqa: BLE001  the reference's error is raised again, and named, after the run
        pass
    return out
