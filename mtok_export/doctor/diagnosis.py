"""`mtok doctor`'s library side: what is wrong with a deployed tokenizer file (or MNN model folder),
how much it matters, and why.

Without a source: the strict reader (exit 2 with the offset), then `static.check`.  With one: the
file this tool would write for that source (the manifest's job when the file is one of ours, else
the defaults, in the deployed file's own format), diffed layer by layer against the deployed one,
and the deployed file run on the MNN runtime against the source's reference (`verify.pipeline.run`,
the engine's llm_config included).  A runtime mismatch is wrong only when the file this tool writes
would not have it too (the honest lowering's losses reproduce the runtime's ceiling); each one is
tied to the static layers of the component it points at, which name its cause."""

from __future__ import annotations

import dataclasses
import json
import shlex
import unicodedata
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..dump.layer_diff import diff_layers
from ..corpus import builtin_chats, builtin_corpus, slice_of
from ..dump.sanitize import clip, show
from ..errors import InputError, RuntimeEngineError
from ..hub import fetch as fetch_hub
from ..hub import parse_repo_id
from ..job import Job, VerifyOptions
from ..losses import RUNTIME_CRASH
from ..manifest import read_manifest
from ..model_folder import find
from ..policy import decide
from ..readers.mnn_file import read_mnn_bytes
from ..verify.pipeline import output_format, read_file, run
from ..verify import surface
from ..verify.check import CHAT_CHECKS
from ..verify.robust import signal_name
from . import static
from .causes import COMPONENT_LAYERS, COMPONENT_WORDS, layer_cause, normalize, normalizer_cause
from .finding import CRASH, EDGE, EVERYDAY, HEALTHY, STATIC_WARNINGS, VERDICT_CODE, Finding


@dataclass
class Diagnosis:
    path: Path  # what was asked about: a file or a model folder
    file: Path  # the tokenizer file the engine loads
    source: Path | None  # what it was measured against
    verdict: str
    findings: list[Finding]
    repair: str = ""  # the one command that repairs it ("" when healthy or nothing can)
    seconds: float = 0.0
    measured: dict = field(default_factory=dict)  # totals and counts of the runtime run
    identical: bool | None = None  # the file is byte for byte what this tool writes for the source
    report: object = None  # the `verify.check.Report` (with a source)
    surface: list = field(default_factory=list)  # `verify.surface.Special` rows
    job: Job | None = None  # the job that writes the healthy file (with a source)

    @property
    def exit_code(self) -> int:
        return VERDICT_CODE[self.verdict]

    def to_json(self) -> dict:
        return {"path": str(self.path), "file": str(self.file), "source": str(self.source) if self.source else None,
                "verdict": self.verdict, "exit_code": self.exit_code, "identical": self.identical,
                "repair": self.repair, "seconds": round(self.seconds, 2), "measured": self.measured,
                "findings": [f.to_json() for f in self.findings],
                "special_tokens": [r.to_json() for r in self.surface]}


def resolve_source(against: str | Path) -> Path:
    """A local path, else a Hub repository id `org/name[@revision]` fetched into the Hub cache."""
    p = Path(against)
    if p.exists():
        return p
    repo = parse_repo_id(str(against))
    if repo is None:
        raise InputError(f"--against {against}: no such file or folder, and not a Hub repository id (org/name)")
    return fetch_hub(*repo).path


def diagnose(path: str | Path, against: str | Path | None = None, *, python: Path | None = None,
             robust: float | None = 1.0, sweep: bool = True, regex_form: str | None = None,
             progress: Callable[[str], None] | None = None) -> Diagnosis:
    """The diagnosis of `path` (a `.mtok`, a legacy `tokenizer.txt` or an MNN model folder);
    `against`: the source to measure it against (a path or a Hub id); `python`: an interpreter with
    MNN; `robust`: the robustness phase's seconds (None: off); `sweep`: every token's own text too;
    `regex_form`: the form the file this tool writes gives its split regex (`--regex-form`)."""
    started = time.perf_counter()
    path = Path(path)
    folder = None
    if path.is_dir():
        folder = find(path)
        if folder is None:
            raise InputError(f"{path}: not an MNN model folder (no config.json with tokenizer_file, no "
                             "llm_config.json); pass the tokenizer file")
        file = folder.tokenizer_path
        if not file.is_file():
            raise InputError(f"{path}: the engine would load {folder.tokenizer_file!r}, which is not there")
    else:
        file = path
    checked = read_file(file)  # the strict reader: a malformed file is exit 2 with its offset
    data, have = checked
    fmt = output_format(data)
    findings = static.check(have, folder, legacy=fmt == "txt")
    if against is None:
        if progress:
            progress("the special-token surface")
        try:
            rows = _surface_findings(surface.measure(file, have, template=static.template_of(have, folder)[0],
                                                     python=python), findings)
        except RuntimeEngineError as e:  # no runtime here, or it cannot load the file: the static checks stand
            rows = []
            findings.append(Finding("special tokens", "info", f"not measured: the MNN runtime did not run the "
                                    f"file ({clip(str(e), 200)})"))
        bad = any(f.level == "warning" for f in findings)
        d = Diagnosis(path, file, None, STATIC_WARNINGS if bad else HEALTHY, findings,
                      seconds=time.perf_counter() - started, surface=rows)
        d.repair = f"mtok doctor {shlex.quote(str(path))} --against SOURCE --fix" if bad else ""
        return d
    source = resolve_source(against)
    if progress:
        progress("reading the source and lowering it")
    job = Job.from_manifest(read_manifest(file) or {}, source, fmt=fmt)
    if regex_form is not None:
        job = dataclasses.replace(job, forms=dataclasses.replace(job.forms, regex_form=regex_form))
    tok = job.read_source()
    expected, low, lw = job.lower(tok)
    want = read_mnn_bytes(expected, f"{file.name} as the source gives it", strict=True)[0]
    layers = [x for x in diff_layers(have, want) if not x.equal]
    llm_config = folder.engine_llm_config() if folder is not None else None
    if progress:
        progress("running the file on the MNN runtime")
    report = run(file, tok, low, lw, VerifyOptions(python=python, sweep=sweep, robust=robust), progress=progress,
                 llm_config=llm_config, checked=checked)
    rows = _surface_findings(report.surface or [], findings)  # measured by the verification, with the source
    jinja_differs = _jinja_differs(folder, low)
    raw_wrong = {m.sample for c in report.checks if c.name == "raw ids" for m in c.mismatches if not m.explanation}
    measured, groups = _measure(report, _attribution(have, want, {x.name for x in layers}, raw_wrong))
    findings = [f for f in findings if f.what not in ("template", "stop ids", "bos") or f.level == "ok"] \
        if not layers and not groups else findings  # a file the runtime proves right: the static doubts are moot
    findings += _causes(groups, layers, have, want, jinja_differs, measured["totals"], fmt == "txt", measured["crash"])
    verdict = _verdict(groups, report)
    d = Diagnosis(path, file, source, verdict, findings, measured=measured, identical=data == expected, report=report,
                  job=job, surface=rows)
    if verdict != HEALTHY or jinja_differs:
        # the losses the repaired file keeps (the runtime's own limits) that the policy would refuse: named
        # in the command, so it is the one that repairs (the deployed file has them too, or worse)
        # (`runtime-crash` is this file's crash, recorded by the robustness phase: the repaired file's own
        # verification measures its own)
        refused = sorted(x.code for x in decide(lw.losses, job.policy, report.reach())
                         if not x.accepted and x.code != RUNTIME_CRASH.code)
        form = ""
        if ("regex-stack" in refused or verdict == CRASH) and job.forms.regex_form != "bounded":
            # a split regex that crashes (or crashed) the runtime: its bounded form never recurses deep
            bounded = dataclasses.replace(job, forms=dataclasses.replace(job.forms, regex_form="bounded"))
            refused = sorted(x.code for x in decide(bounded.lower(tok)[2].losses, job.policy, report.reach())
                             if not x.accepted and x.code != RUNTIME_CRASH.code)
            form = " --regex-form bounded"
        d.repair = (f"mtok doctor {shlex.quote(str(path))} --against {shlex.quote(str(against))} --fix{form}"
                    + (f" --accept {','.join(refused)}" if refused else ""))
        if refused:
            d.findings.append(Finding("repair", "info", f"the file this tool writes keeps {len(refused)} known "
                                      f"loss(es) of the runtime ({', '.join(refused)}), which the default policy "
                                      "refuses: the repair accepts them (`mtok losses CODE` says what each does)"))
    d.seconds = time.perf_counter() - started
    return d


def _surface_findings(rows: list, findings: list[Finding]) -> list:
    """`rows` (the special-token surface, `verify.surface`), and its findings added to `findings`: how
    much of it the runtime matches inside user text, and where the source's library differs."""
    if not rows:
        return rows
    matched = [r for r in rows if r.runtime]
    ends = [r.text for r in matched if r.role == "turn end"]
    findings.append(Finding("special tokens", "info", f"the runtime matches {len(matched)} of {len(rows)} special/added "
                            "token(s) typed inside user text" + (f", among them turn ends ({', '.join(ends[:3])}): "
                                                                  "an app must escape them in user input" if ends else "")))
    for r in rows:
        if r.source is not None and r.source != r.runtime:
            findings.append(Finding("special tokens", "warning", f"{r.text!r} (id {r.id}): "
                                    + ("the runtime splits it out of user text, the source's library keeps it as text"
                                       if r.runtime else "the source's library splits it out of user text, the "
                                       "runtime keeps it as text")))
    return rows


def _jinja_differs(folder, low) -> bool:
    """The folder's llm_config.json jinja block (which the engine renders instead of the embedded
    template) says another template or EOS than the file this tool writes embeds."""
    jinja = folder.jinja if folder is not None else None
    return jinja is not None and (jinja.get("chat_template") != low.chat.text or jinja.get("eos") != low.chat.eos_token)


# The component of a mismatch the attribution left unnamed, by its check.
_BY_CHECK = {"streaming decode": "decoder", "full decode": "decoder", "stop ids": "bos/eos", "chat text": "template",
             "chat ids": "template", "chat paths": "template"}


def _kind(m) -> str:
    """Which group of inputs a mismatch counts in: chats, stop ids, the vocabulary sweep, or the
    corpus slice of its string."""
    if m.check == "chat paths":  # tool calls, reasoning, several turns: conversations of their own
        return "chat paths"
    if m.check in CHAT_CHECKS:  # a chat with text not in NFC is an edge input, as such a string is (`slice_of`)
        everyday = m.slice == "everyday" and all(unicodedata.is_normalized("NFC", c) for c in _contents(m.text))
        return "chats" if everyday else "edge chats"
    if m.check == "stop ids":
        return "stop ids"
    if m.check == "vocab sweep":
        return "tokens"
    if m.check == "robustness":
        return "long"
    return m.slice


def _attribution(have, want, differing: set[str], raw_wrong: set[str]) -> Callable:
    """The component one unexplained mismatch of the deployed file points at, from the layers where
    it differs from the file this tool writes: its normalizer output on the text (emulated as the
    runtime normalizes), an added token the text holds, else what the verification named, else the
    split, else the model's tables.  `raw_wrong`: the samples whose raw ids (without the ids put
    around the text) are wrong: an engine-ids mismatch of another sample is the BOS/EOS."""
    added = {t.content for t in have.added_tokens} ^ {t.content for t in want.added_tokens}
    changed = {t.content for t in have.added_tokens if t not in set(want.added_tokens)} | added

    def component(m, rendered_same: bool = False) -> str:
        text = m.text if isinstance(m.text, str) else ""
        if m.check == "chat ids" and rendered_same:  # the prompt renders right: its text tokenizes wrong
            text = " ".join(_contents(text))
        elif m.check in _BY_CHECK and m.check != "streaming decode":
            return _BY_CHECK[m.check]
        elif m.check == "engine ids" and m.sample not in raw_wrong:
            return "bos/eos"
        if differing & {"normalizer", "tables"} and text and normalize(have, text) != normalize(want, text):
            return "normalizer"
        if differing & {"added_tokens", "specials"} and any(c and c in text for c in changed):
            return "added tokens"
        if m.component:
            return m.component
        if m.check == "streaming decode":
            return "decoder"
        if m.check == "chat ids":
            return "template"
        if "pre_tokenizer" in differing:
            return "split"
        if differing & {"merges", "vocab", "scores", "model"}:
            return "model"
        return "unattributed"
    return component


def _contents(messages: str) -> list[str]:
    """The message contents of a chat mismatch's text (the conversation as JSON)."""
    try:
        return [m["content"] for m in json.loads(messages) if isinstance(m.get("content"), str)]
    except (ValueError, TypeError, AttributeError):
        return []


def _measure(report, component: Callable) -> tuple[dict, dict[str, dict[str, list]]]:
    """(totals and wrong counts per group of inputs, the unexplained mismatches by component and group)."""
    slices = {"everyday": 0, "edge": 0}
    for s in builtin_corpus():
        if "\0" not in s.text:
            slices[slice_of(s)] += 1
    chats = next((c.total for c in report.checks if c.name == "chat text"), 0)
    ran = [c for c in builtin_chats() if c.add_generation_prompt and not c.tools]  # what the chat checks run
    edge_chats = min(chats, sum(1 for c in ran if "special" in c.tags or not all(
        unicodedata.is_normalized("NFC", m["content"]) for m in c.messages if isinstance(m.get("content"), str))))
    totals = {**slices, "chats": chats - edge_chats, "edge chats": edge_chats,
              "chat paths": next((c.total for c in report.checks if c.name == "chat paths"), 0),
              "tokens": next((c.total for c in report.checks if c.name == "vocab sweep"), 0),
              "stop ids": next((c.total for c in report.checks if c.name == "stop ids"), 0)}
    groups: dict[str, dict[str, list]] = {}
    wrong: dict[str, set] = {}
    misrendered = {m.sample for c in report.checks if c.name == "chat text" for m in c.mismatches if not m.explanation}
    for c in report.checks:
        for m in c.mismatches:
            if m.explanation:
                continue  # the file this tool writes does the same: the runtime's ceiling, not this file's defect
            k = _kind(m)
            groups.setdefault(component(m, m.sample not in misrendered), {}).setdefault(k, []).append(m)
            wrong.setdefault(k, set()).add(m.sample)
    rob = report.robustness
    measured = {"totals": totals, "wrong": {k: len(v) for k, v in wrong.items()},
                "robustness": rob.verdict() if rob is not None else None,
                "crash": rob.crash if rob is not None else None}
    return measured, groups


def effect(by_kind: dict[str, list], totals: dict) -> str:
    parts = []
    for k in ("everyday", "edge", "chats", "edge chats", "chat paths", "stop ids", "tokens", "long"):
        if k in by_kind:
            if k in ("chats", "edge chats"):  # chat text and chat ids run the same conversations: the worse
                n = max(len({m.sample for m in by_kind[k] if m.check == c}) for c in CHAT_CHECKS)
            else:
                n = len({m.sample for m in by_kind[k]})
            total = totals.get(k)
            label = {"everyday": "everyday strings", "edge": "edge strings", "tokens": "vocabulary tokens",
                     "long": "long inputs", "chat paths": "tool/reasoning/multi-turn chats"}.get(k, k)
            parts.append(f"{n}/{total} {label}" if total else f"{n} {label}")
    return ", ".join(parts)


def _example(m) -> dict:
    return {"check": m.check, "text": clip(show(m.text), 120), "expected": clip(show(str(m.expected)), 160),
            "got": clip(show(str(m.got)), 160)}


def _unattributed(legacy: bool) -> str:
    said = ("the runtime gives other ids than the source where every layer of the file reads as this tool "
            "writes it: the runtime runs this file differently from what its layers say")
    return said + ("; a tokenizer.txt's type fixes the algorithm the runtime runs: a .mtok runs the source's "
                   "(`mtok-export --path SOURCE`, for MNN >= 3.5)" if legacy else "")


def _causes(groups, layers, have, want, jinja_differs: bool, totals: dict, legacy: bool = False,
            crash: dict | None = None) -> list[Finding]:
    """One finding per cause of the runtime mismatches (the components they point at, each with the
    static layers behind it: one sentence per cause, the components sharing it merged), then the
    layers that differ with no effect measured."""
    by_name = {x.name: x for x in layers}
    merged: dict[str, tuple[list[str], dict[str, list], str]] = {}
    used: set[str] = set()
    for comp, by_kind in groups.items():
        names = [n for n in COMPONENT_LAYERS.get(comp, ()) if n in by_name]
        if comp == "bos/eos" and "stop ids" in by_kind and "specials" in by_name:
            names = ["specials"]
        if comp == "normalizer" and names:
            texts = [m.text for ms in by_kind.values() for m in ms if isinstance(m.text, str)]
            causes = [normalizer_cause(have, want, texts)]
        else:
            causes = [layer_cause(by_name[n], have, want) for n in names]
        if comp == "decoder" and "vocab" in names:
            causes = [c + ": those ids decode to empty text" if c.startswith("the vocabulary") else c for c in causes]
        if comp == "template" and jinja_differs:
            causes.insert(0, "llm_config.json's jinja block (which the engine renders instead of the embedded "
                          "template) says another template or EOS than the source's")
        used.update(names)
        cause = "; ".join(causes) or COMPONENT_WORDS.get(comp) or _unattributed(legacy)
        name = names[0] if names else "chat_template" if comp == "template" else comp
        comps, kinds, said = merged.setdefault(name, ([], {}, cause))  # one finding per layer
        if len(cause) > len(said):  # the fuller sentence (the decoder's adds what the missing ids do)
            merged[name] = (comps, kinds, cause)
        comps.append(comp)
        for k, ms in by_kind.items():
            kinds.setdefault(k, []).extend(ms)
    out = []
    order = sorted(merged.items(), key=lambda kv: -sum(len(v) for v in kv[1][1].values()))
    for name, (comps, kinds, cause) in order:
        first = min((m for ms in kinds.values() for m in ms), key=lambda m: (m.check in CHAT_CHECKS, m.slice != "everyday",
                                                                        len(str(m.text))))
        out.append(Finding(name, "wrong", cause, effect(kinds, totals), tuple(comps), _example(first)))
    if crash:
        out.append(Finding("long input", "wrong", f"the runtime crashed ({signal_name(crash.get('status'))}) on {crash.get('group')} of "
                           f"{crash.get('length', 0):,} characters: an app that passes it such text dies",
                           "1 crash", ("robustness",)))
    for x in layers:
        if x.name not in used:
            out.append(Finding(x.name, "note", layer_cause(x, have, want), "no effect measured on the corpus"))
    return out


def _verdict(groups, report) -> str:
    kinds = {k for by_kind in groups.values() for k in by_kind}
    if report.robustness is not None and report.robustness.crash:
        return CRASH
    if kinds & {"everyday", "chats", "chat paths", "stop ids"}:
        return EVERYDAY
    if kinds:
        return EDGE
    return HEALTHY
