"""Render parity of chat templates before and after lowering, on MNN's runtime vs transformers.

For every template in ``../shared/corpus/chat_templates`` (every named variant of a
tokenizer_config.json too) and the templates of the shared-corpus tokenizers, render the built-in
conversations (``mtok_export/data/conversations.jsonl``) with transformers and the template as
written (the reference), and with the MNN runtime and (a) the template as written, (b) the template
lowered by ``mtok_export.chat.lowering``.  Prints one line per template and the totals:

* templates rendering identically on every conversation transformers can render, before / after;
* templates that hang (or crash) the runtime, before / after; templates lowering refuses;
* per rewrite rule, the templates it fixed: those that render identically after lowering but not
  before, and no longer do when lowered with that one rule disabled (the hang rewrites are always
  on: without them the runtime does not finish);
* the linter's false alarms: templates that render identically but have findings (before: the
  original's findings; after: the lowered template's remaining ones).

    python scripts/template_parity.py [--runtime-python PY] [--json OUT.json] [-v]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

from mtok_export.chat.lint import lint_template
from mtok_export.chat.lowering import TemplateHangError, lower_template
from mtok_export.chat.sources import iter_templates
from mtok_export.targets import DEFAULT, TARGETS
from mtok_export.verify.chat_parity import builtin_conversations, compare, reference_render, runtime_renders

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
ALWAYS_ON = ("runtime-hang", "tuple-literal")
DEFAULT_BOS, DEFAULT_EOS = "<s>", "</s>"


def _token(value, default: str) -> str:
    if isinstance(value, dict):
        value = value.get("content")
    return value if isinstance(value, str) and value else default


def special_tokens(root: Path, label: str) -> tuple[str, str]:
    """bos/eos from the tokenizer_config.json the template comes from (or sits beside)."""
    path = root / label.split("#")[0]
    candidates = [path] if path.name.endswith("tokenizer_config.json") else []
    for suffix in ("chat_template.jinja", "chat_template.json"):
        if path.name.endswith(suffix):
            candidates.append(path.with_name(path.name[:-len(suffix)] + "tokenizer_config.json"))
    candidates.append(path.with_name("tokenizer_config.json"))
    for cand in candidates:
        if cand.is_file():
            try:
                cfg = json.loads(cand.read_text(encoding="utf-8"))
            except ValueError:
                continue
            return _token(cfg.get("bos_token"), DEFAULT_BOS), _token(cfg.get("eos_token"), DEFAULT_EOS)
    return DEFAULT_BOS, DEFAULT_EOS


def collect() -> list[dict]:
    out = []
    for sub in ("chat_templates", "tokenizers"):
        root = CORPUS / sub
        for label, text in iter_templates(root):
            bos, eos = special_tokens(root, label)
            out.append({"name": f"{sub}/{label}", "text": text, "bos": bos, "eos": eos})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime-python", default=None, help="interpreter that has MNN")
    parser.add_argument("--json", type=Path, help="write the per-template results here")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the first difference")
    parser.add_argument("--only", default="", help="only templates whose name contains this")
    args = parser.parse_args(argv)

    convs = builtin_conversations()
    items = [it for it in collect() if args.only in it["name"]]
    for it in items:
        try:
            it["lowered"] = lower_template(it["text"], TARGETS[DEFAULT])
        except TemplateHangError as e:
            it["lowered"], it["refused"] = None, str(e)
        it["refs"] = [reference_render(it["text"], c, bos=it["bos"], eos=it["eos"]) for c in convs]

    groups = defaultdict(list)
    for i, it in enumerate(items):
        groups[(it["bos"], it["eos"])].append(i)
    for (bos, eos), idx in sorted(groups.items()):
        suspects = [k for k, i in enumerate(idx)
                    if any(f.rule == "runtime-hang" for f in lint_template(items[i]["text"]))]
        before = runtime_renders([items[i]["text"] for i in idx], convs, bos=bos, eos=eos,
                                 python=args.runtime_python, isolate=suspects)
        low = [i for i in idx if items[i]["lowered"] is not None]
        after = runtime_renders([items[i]["lowered"].text for i in low], convs, bos=bos, eos=eos,
                                python=args.runtime_python)
        for i, r in zip(idx, before):
            items[i]["before"] = compare(items[i]["refs"], r, convs)
        for i, r in zip(low, after):
            items[i]["after"] = compare(items[i]["refs"], r, convs)
        # ablation: each rule off in turn, for the templates lowering made identical
        trials = [(i, rule) for i in low if items[i]["after"].identical and not items[i]["before"].identical
                  for rule in items[i]["lowered"].fixed if rule not in ALWAYS_ON]
        texts = [lower_template(items[i]["text"], TARGETS[DEFAULT], disable={rule}).text for i, rule in trials]
        for (i, rule), r in zip(trials, runtime_renders(texts, convs, bos=bos, eos=eos,
                                                         python=args.runtime_python)):
            if not compare(items[i]["refs"], r, convs).identical:
                items[i].setdefault("needs", []).append(rule)

    rows, fixed_by = [], defaultdict(list)
    alarms = {"before": [0, 0], "after": [0, 0]}  # [templates, findings]
    alarm_rules = {"before": Counter(), "after": Counter()}
    for it in items:
        b, a = it["before"], it.get("after")
        lowered = it["lowered"]
        findings_before = lint_template(it["text"])
        remaining = list(lowered.remaining) if lowered else findings_before
        if b.identical and findings_before:
            alarms["before"][0] += 1
            alarms["before"][1] += len(findings_before)
            alarm_rules["before"].update(f.rule for f in findings_before)
        if a is not None and a.identical and remaining:
            alarms["after"][0] += 1
            alarms["after"][1] += len(remaining)
            alarm_rules["after"].update(f.rule for f in remaining)
        rules = list(lowered.fixed) if lowered else []
        for rule in it.get("needs", []):
            fixed_by[rule].append(it["name"])
        if a is not None and a.identical and not b.identical:
            for rule in set(rules) & set(ALWAYS_ON):
                fixed_by[rule].append(it["name"])
        row = {"template": it["name"], "compared": len(b.same) + len(b.differ), "needs": it.get("needs", []),
               "before": _state(b), "after": _state(a) if a else "refused",
               "rules": rules, "remaining": sorted({f.rule for f in remaining}),
               "after_differ": a.differ if a else []}
        rows.append(row)
        print(f"{row['template']}: before {row['before']}, after {row['after']}"
              f"{' [' + ', '.join(rules) + ']' if rules else ''}"
              f"{' needs: ' + ', '.join(row['needs']) if row['needs'] else ''}")
        if args.verbose and a is not None and a.first_diff:
            cid, want, got = a.first_diff
            at = next((k for k, (x, y) in enumerate(zip(want, got)) if x != y), min(len(want), len(got)))
            lo = max(0, at - 60)
            print(f"    {cid} @{at}: want {want[lo:at + 120]!r}\n    {' ' * len(cid)}  got  {got[lo:at + 120]!r}")

    n = len(items)
    comparable = [it for it in items if it["before"].same or it["before"].differ or it["before"].hang]
    unsupported = sum(len(it["before"].unsupported) for it in items)
    ident_b = sum(it["before"].identical for it in items)
    ident_a = sum(bool(it.get("after")) and it["after"].identical for it in items)
    hang_b = sum(it["before"].hang for it in items)
    hang_a = sum(bool(it.get("after")) and it["after"].hang for it in items)
    refused = sum(1 for it in items if it["lowered"] is None)
    print()
    print(f"templates: {n}, conversations: {len(convs)}; {n - len(comparable)} template(s) that "
          f"transformers renders on no conversation; {unsupported} (template, conversation) pairs "
          "not compared because transformers prints list contents as a Python list")
    print(f"identical on every comparable conversation: before {ident_b}/{n}, after {ident_a}/{n} "
          f"(of the {len(comparable)} comparable templates: before {ident_b}/{len(comparable)}, "
          f"after {ident_a}/{len(comparable)})")
    print(f"hang or crash in the runtime: before {hang_b}, after {hang_a}; lowering refused: {refused}")
    print("templates each rule fixed (identical only with it; hang rewrites: differing/hanging -> identical):")
    for rule in sorted(fixed_by):
        print(f"  {rule}: {len(fixed_by[rule])}  ({', '.join(t.split('/')[-1] for t in fixed_by[rule])})")
    print(f"lint false alarms (findings on identically rendering templates): before "
          f"{alarms['before'][0]} templates / {alarms['before'][1]} findings, after "
          f"{alarms['after'][0]} templates / {alarms['after'][1]} findings")
    for when in ("before", "after"):
        print(f"  {when}: " + ", ".join(f"{r}={n}" for r, n in alarm_rules[when].most_common()))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "fixed_by": fixed_by, "alarms": alarms},
                                        indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


def _state(p) -> str:
    if p.hang:
        return "HANG"
    total = len(p.same) + len(p.differ)
    return f"{len(p.same)}/{total}" + (" identical" if p.identical else "")


if __name__ == "__main__":
    raise SystemExit(main())
