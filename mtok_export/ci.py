"""What CI systems read besides `--report` and `--junit`: a SARIF 2.1.0 log (`--sarif FILE`, for code
scanning), and on GitHub Actions the job summary (markdown appended to `$GITHUB_STEP_SUMMARY`) and the
workflow commands (`::error file=F,line=L::message`) that show on a pull request's diff.

Pure functions over outcomes as `reports.outcome_json` writes them (one per model, with `name` in a
fleet), so a fleet's worker processes need send nothing else.  Each outcome gives *findings*: one per
loss code (refused: error; accepted as an edge loss: warning; accepted by the policy: note) and one per
mismatch class that no recorded loss reproduces (error), each placed in the source: the line of the
loss's JSON path in a JSON input (tokenizer.json, tekken.json; the nearest enclosing value when the
path goes on past what the file holds), the chat template's line:column in a `.jinja` file."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from . import __version__
from .losses import EXACT_ON, KINDS
from .reports import EXIT_MEANING

UNEXPLAINED = "unexplained-mismatch"  # the rule of a mismatch class no recorded loss reproduces
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"refused": "error", "edge": "warning", "accepted": "note"}


@dataclass(frozen=True)
class Finding:
    rule: str  # a loss code, or UNEXPLAINED
    level: str  # "error", "warning" or "note" (SARIF's levels; GitHub's commands: error, warning, notice)
    message: str
    file: str = ""  # "" when the outcome names no input (an input that could not be read)
    line: int | None = None
    column: int | None = None


# ------------------------------------------------------------------ where in the source

def json_path_line(text: str, path: str) -> int | None:
    """The 1-based line where `path` (`$.a.b[2]`, what a `Loss.json_path` holds; anything after `@`
    ignored) starts in the JSON document `text`: the deepest value of the path that the document
    holds; None when it is not JSON or holds not even the first step.  Values off the path are skipped
    with the C decoder, so a tokenizer.json's vocabulary costs milliseconds."""
    steps = re.findall(r"\.([^.\[@]+)|\[(\d+)\]", path.split("@", 1)[0])
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    pos, found = ws.match(text, 0).end(), None
    try:
        for key, index in steps:
            opening = "{" if key else "["
            if text[pos:pos + 1] != opening:
                break
            pos, n, hit = ws.match(text, pos + 1).end(), 0, False
            while text[pos] not in "}]":
                if key:
                    name, pos = decoder.raw_decode(text, pos)
                    pos = ws.match(text, ws.match(text, pos).end() + 1).end()  # past ':'
                if (name == key) if key else (n == int(index)):
                    hit = True
                    break
                _, pos = decoder.raw_decode(text, pos)
                pos = ws.match(text, pos).end()
                if text[pos] == ",":
                    pos = ws.match(text, pos + 1).end()
                n += 1
            if not hit:
                break
            found = pos
    except (ValueError, IndexError):  # not JSON (or not this shape): what was found so far
        pass
    return None if found is None else text.count("\n", 0, found) + 1


def _chat_places(json_path: str) -> list[tuple[int, int]]:
    """The template's line:column places a chat-template loss names (`$.chat_template@3:5, 9:1 ...`)."""
    return [(int(a), int(b)) for a, b in re.findall(r"(\d+):(\d+)", json_path.partition("@")[2])]


class _Places:
    """Where one outcome's losses are in its input files (each file read once)."""

    def __init__(self, outcome: dict):
        export = outcome.get("export") or {}
        self.inputs = [i["path"] for i in export.get("inputs") or ()]
        self.chat_source = (export.get("chat_template") or {}).get("source") or ""
        self._texts: dict[str, str | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            try:
                small = Path(path).stat().st_size < 1 << 28  # a tokenizer file, not a GGUF's weights
                self._texts[path] = Path(path).read_text(encoding="utf-8") if small else None
            except (OSError, UnicodeDecodeError):
                self._texts[path] = None
        return self._texts[path]

    def of(self, json_path: str) -> tuple[str, int | None, int | None]:
        main = self.inputs[0] if self.inputs else ""
        if json_path.startswith("$.chat_template"):
            places = _chat_places(json_path)
            template = next((p for p in self.inputs if p.endswith(".jinja")), None)
            if template is not None and places:
                return template, *places[0]
            holder = next((p for p in self.inputs if Path(p).name == Path(self.chat_source).name), None)
            if holder is not None:  # a template inside a JSON file: the line of its key
                text = self.text(holder)
                return holder, json_path_line(text, "$.chat_template") if text else None, None
        text = self.text(main) if main else None
        return main, (json_path_line(text, json_path) if text else None), None


def findings(outcome: dict) -> list[Finding]:
    """One outcome's findings: its loss codes in decision order, then its mismatch classes that no
    recorded loss reproduces."""
    places = _Places(outcome)
    out = []
    for d in outcome.get("losses") or ():
        verdict = "refused" if d["accepted_by"] is None else "edge" if d["accepted_by"] == "edge" else "accepted"
        first = d["losses"][0] if d["losses"] else {"json_path": "$", "reason": KINDS[d["code"]].summary}
        counts = (f"; mismatches {d['mismatches']['everyday']} everyday / {d['mismatches']['edge']} edge"
                  if d["severity_source"] == "measured" else "")
        said = {"refused": "refused by the policy", "edge": "accepted as an edge loss (a warning; --strict refuses it)",
                "accepted": f"not reached: {d['why']}" if d.get("why") else f"accepted by {d['accepted_by']}"}[verdict]
        more = f" ({len(d['losses']) - 1} more)" if len(d["losses"]) > 1 else ""
        message = (f"loss {d['code']} ({d['severity']}, {d['severity_source']}{counts}): {said}. "
                   f"{first['json_path']}: {first['reason']}{more}")
        out.append(Finding(d["code"], _LEVEL[verdict], message, *places.of(first["json_path"])))
    for c in (outcome.get("verify") or {}).get("classes") or ():
        if c["explanation"]:
            continue
        ex = c["example"]
        message = (f"{c['check']}: {c['count']} mismatch(es) no recorded loss reproduces; first: sample "
                   f"{ex['sample']}, input {_shown(ex['text'])}, expected {_shown(ex['expected'])}, "
                   f"got {_shown(ex['got'])}")
        where = ex.get("losses_at") or ["$"]
        out.append(Finding(UNEXPLAINED, "error", message, *places.of(where[0])))
    return out


def _shown(value, n: int = 120) -> str:
    """`value` as JSON on one line, cut to `n` characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= n else text[:n - 1] + "…"


# ------------------------------------------------------------------ SARIF 2.1.0

def _rule(code: str) -> dict:
    if code == UNEXPLAINED:
        return {"id": UNEXPLAINED, "name": "UnexplainedMismatch",
                "shortDescription": {"text": "the runtime's output differs from the reference's and no recorded "
                                             "loss reproduces the difference"},
                "fullDescription": {"text": "A verification check found outputs of the exported file on the MNN "
                                            "runtime that differ from the independent reference, and no loss "
                                            "recorded by the export explains them: the file is wrong (exit 1)."},
                "help": {"text": "Read the first mismatch (input, expected, got) in the report; the options that "
                                 "act where the difference is are printed under it.  Not acceptable by policy."},
                "defaultConfiguration": {"level": "error"}, "properties": {"layer": "verify"}}
    k = KINDS[code]
    exact = f" --target with {EXACT_ON[code][1]} runs it exactly." if code in EXACT_ON else ""
    default = ("warning: an edge loss is accepted by default (--strict refuses it)" if k.severity.value == "edge"
               else "the export is refused unless it is accepted")
    return {"id": code, "name": "".join(w.capitalize() for w in re.split(r"[-.]", code)),
            "shortDescription": {"text": k.summary},
            "fullDescription": {"text": f"{k.summary} (layer {k.layer}; declared severity {k.severity.value}, "
                                        "measured on the corpus where verification runs)."},
            "help": {"text": f"By default {default}.  Accept it with --accept {code} or a line `{code}` in an "
                             "--accept-file checked into the model repository; `mtok losses` lists every code."
                             + exact},
            "defaultConfiguration": {"level": "warning" if k.severity.value == "edge" else "error"},
            "properties": {"layer": k.layer, "severity": k.severity.value}}


def _relative(path: str) -> str:
    """`path` relative to the working directory (a CI job's is the repository's checkout) where it is
    inside it, else as given."""
    p = Path(path)
    if p.is_absolute():
        try:
            return p.relative_to(Path.cwd()).as_posix()
        except ValueError:
            return str(p)
    return p.as_posix()


def _uri(path: str) -> str:
    relative = _relative(path)
    return Path(relative).as_uri() if Path(relative).is_absolute() else relative


def sarif(outcomes: list[dict]) -> dict:
    """A SARIF 2.1.0 log of one run: every loss code as a rule (plus UNEXPLAINED), every model's
    findings as results (`properties.model` names the model in a fleet)."""
    codes = [*KINDS, UNEXPLAINED]
    index = {c: i for i, c in enumerate(codes)}
    results = []
    for o in outcomes:
        for f in findings(o):
            r = {"ruleId": f.rule, "ruleIndex": index[f.rule], "level": f.level, "message": {"text": f.message}}
            if f.file:
                region = {"startLine": f.line, **({"startColumn": f.column} if f.column else {})} if f.line else None
                r["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.file)},
                                                        **({"region": region} if region else {})}}]
            if o.get("name"):
                r["properties"] = {"model": o["name"]}
            results.append(r)
    worst = max((o["exit_code"] for o in outcomes), default=0)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "mtok-export", "version": __version__, "semanticVersion": __version__,
                            "rules": [_rule(c) for c in codes]}},
        "invocations": [{"executionSuccessful": all(o["exit_code"] in (0, 1, 3) for o in outcomes),
                         "exitCode": worst,
                         "toolExecutionNotifications": [
                             {"level": "error", "message": {"text": o["error"]}} for o in outcomes
                             if o.get("error") and o["exit_code"] not in (0, 1, 3)]}],
        "results": results}]}


# ------------------------------------------------------------------ GitHub Actions

def on_github() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(outcome: dict) -> list[str]:
    """`::error` per refused loss and per unexplained mismatch class, `::warning` per edge loss,
    each with the file and line it comes from."""
    lines = []
    for f in findings(outcome):
        if f.level == "note":
            continue
        props = [f"file={_escape_property(_relative(f.file))}"] if f.file else []
        props += [f"line={f.line}"] if f.line else []
        props += [f"col={f.column}"] if f.column else []
        model = f" {outcome['name']}" if outcome.get("name") else ""
        props.append(f"title={_escape_property(f'mtok-export{model}: {f.rule}')}")
        lines.append(f"::{f.level} {','.join(props)}::{_escape_data(f.message)}")
    if not lines and outcome.get("error") and outcome["exit_code"] not in (0,):
        lines.append(f"::error title=mtok-export::{_escape_data(outcome['error'])}")
    return lines


def verdict(outcome: dict) -> str:
    """The one-line verdict of one outcome: passed / refused / failed / bad input, and why."""
    code = outcome["exit_code"]
    refused = [d["code"] for d in outcome.get("losses") or () if d["accepted_by"] is None]
    unexplained = (outcome.get("verify") or {}).get("unexplained", 0)
    edge = [d["code"] for d in outcome.get("losses") or () if d["accepted_by"] == "edge"]
    if code == 0:
        return "passed" + (f" (edge losses accepted with a warning: {', '.join(edge)})" if edge else "")
    if code == 1:
        return f"FAILED: {unexplained} mismatch(es) no recorded loss reproduces"
    if code == 3:
        return f"REFUSED by the policy: loss(es) {', '.join(refused)} not accepted"
    return f"{EXIT_MEANING.get(code, 'error').upper()}: {outcome.get('error') or ''}".rstrip(": ")


def step_summary(outcome: dict) -> str:
    """One model's job summary, markdown: the verdict, the check table, the losses with their counts,
    the first unexplained mismatch and what to do."""
    inputs = (outcome.get("export") or {}).get("inputs") or ()
    name = outcome.get("name") or (_relative(str(Path(inputs[0]["path"]).parent)) if inputs else "")
    icon = {0: "✅", 3: "⛔", 1: "❌"}.get(outcome["exit_code"], "⚠️")
    out = [f"### {icon} mtok-export {_md(name)}: exit {outcome['exit_code']}", "", f"**{_md(verdict(outcome))}**", ""]
    export = outcome.get("export")
    if export:
        why = "verified, refused by the policy" if outcome["exit_code"] == 3 else "it failed verification"
        kept = f"; not replaced: the file is kept as `{export['rejected']}` ({why})" if export.get("rejected") else ""
        out += [f"Output `{export['output']}` ({export['size']:,} bytes, target {export['target']}{kept})", ""]
    v = outcome.get("verify")
    if v:
        out += ["| check | match | unexplained | reference |", "|---|---|---|---|"]
        for c in v["checks"]:
            match = f"{c['ok']}/{c['total']}" if c["total"] else f"- ({_md(c['note'] or 'not run')})"
            unexplained = c["unexplained"] if c["total"] else ""
            out.append(f"| {c['name']} | {match} | {unexplained} | {_md(c['reference'] or '')} |")
        out.append("")
    losses = outcome.get("losses") or []
    if losses:
        out += ["| loss | severity | mismatches (everyday / edge) | verdict |", "|---|---|---|---|"]
        for d in losses:
            measured = d["severity_source"] == "measured"
            counts = f"{d['mismatches']['everyday']} / {d['mismatches']['edge']}" if measured else "-"
            said = ("**refused**" if d["accepted_by"] is None else "warning (edge)" if d["accepted_by"] == "edge"
                    else f"not reached: {_md(d['why'])}" if d.get("why") else f"accepted by {d['accepted_by']}")
            out.append(f"| `{d['code']}` | {d['severity']} ({d['severity_source']}) | {counts} | {said} |")
        out.append("")
    first = next((c for c in (v or {}).get("classes") or () if not c["explanation"]), None)
    if first is not None:
        ex = first["example"]
        out += [f"First unexplained mismatch ({first['check']}, {first['count']} in all), sample `{ex['sample']}`:",
                "", "```", f"input    {_shown(ex['text'], 200)}", f"expected {_shown(ex['expected'], 200)}",
                f"got      {_shown(ex['got'], 200)}", "```", ""]
    if outcome.get("error") and outcome["exit_code"] != 0:
        out += [f"Error: {_md(outcome['error'])}", ""]
    step = outcome.get("next_command")
    if outcome.get("hint") or step:
        out += ["What to do:", ""]
        if step:
            out += ["```", step["command"], "```", "", f"Why: {_md(step['why'])}", ""]
        if outcome.get("hint"):
            out += ["```", outcome["hint"], "```", ""]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    """Text in a markdown table cell or line: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary(outcomes: list[dict]) -> str:
    """The job summary of one or several outcomes; several open with one roll-up line."""
    return (rollup(outcomes) if len(outcomes) > 1 else "") + "".join(step_summary(o) for o in outcomes)


def rollup(outcomes: list[dict]) -> str:
    """One line over a fleet's outcomes: how many passed, were refused, failed, or could not be read."""
    counts: dict[str, int] = {}
    for o in outcomes:
        what = {0: "passed", 1: "failed verification", 3: "refused (each with its next command)"}.get(
            o["exit_code"], EXIT_MEANING.get(o["exit_code"], "error"))
        counts[what] = counts.get(what, 0) + 1
    return (f"**mtok-export: {len(outcomes)} models: " + ", ".join(f"{n} {what}" for what, n in counts.items())
            + "**\n\n")


def write_github(outcomes: list[dict], stream) -> None:
    """On GitHub Actions: append each model's summary to $GITHUB_STEP_SUMMARY (when set) and print
    its workflow commands to `stream`."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(summary(outcomes))
    for o in outcomes:
        for line in workflow_commands(o):
            print(line, file=stream, flush=True)
