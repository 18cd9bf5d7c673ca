"""Machine-readable outcomes for CI (`--report FILE` JSON, `--junit FILE`), written on every outcome
of `mtok-export` and `mtok verify`: success, exit 1 (unexplained mismatch), 2 (bad input) and 3
(a loss the policy refuses).  Pure functions: the CLI writes the files."""

from __future__ import annotations

import re

from . import __version__
from .dump.jsonify import component, id_to_token

EXIT_MEANING = {0: "passed", 1: "verification failed", 2: "bad input", 3: "loss refused by the policy",
                130: "interrupted"}


def verify_json(report) -> dict:
    return {
        "file": report.file, "target": report.target, "runtime": report.runtime, "ok": report.ok,
        "corpus_sha256": report.corpus_sha256, "reference": report.reference,
        "checks": [{"name": c.name, "ok": c.ok, "total": c.total, "note": c.skipped, "reference": c.reference,
                    "unexplained": sum(1 for m in c.mismatches if not m.explanation)} for c in report.checks],
        "classes": [{"check": check, "explanation": list(codes), "count": n,
                     "example": {"sample": m.sample, "text": m.text, "expected": m.expected, "got": m.got,
                                 "slice": m.slice, "losses_at": list(m.where)}}
                    for check, codes, n, m in report.classes()],
        "reach": report.reach(),
        "unexplained": report.unexplained,
    }


def export_json(r) -> dict:
    low = r.lowered
    names = id_to_token(low)
    return {
        "output": str(r.path),
        "size": r.size,
        "seconds": round(r.seconds, 3),
        "target": r.lowering.target,
        "model": {"type": low.model.kind, "vocab_size": len(names)},
        "components": {k: component(getattr(low, k)) for k in
                       ("normalizer", "pre_tokenizer", "decoder", "post_processor")},
        "special": [{"id": i, "text": names.get(i)} for i in low.special_ids],
        "stop": [{"id": i, "text": names.get(i), "source": src} for i, src in r.source.meta.stop_sources],
        "prefix": [{"id": i, "text": names.get(i)} for i in low.prefix_ids],
        "chat_template": {"source": r.source.chat.source, "name": r.source.chat.name,
                          "chars": len(low.chat.text)},
        "passes": r.lowering.applied,
        "notes": list(r.source.meta.notes) + r.lowering.notes,
        "inputs": [{"path": f.path, "sha256": f.sha256} for f in r.source.provenance.inputs],
        "unicode_version": r.source.provenance.unicode_version,
        "rejected": str(r.rejected) if r.rejected else None,
    }


def outcome_json(command: str, exit_code: int, *, error: BaseException | None = None, result=None,
                 report=None, decisions=None, hint: str | None = None) -> dict:
    return {
        "tool": {"name": "mtok-export", "version": __version__},
        "command": command,
        "ok": exit_code == 0,
        "exit_code": exit_code,
        "outcome": EXIT_MEANING.get(exit_code, "error"),
        "error": str(error) if error is not None else None,
        "hint": hint,
        "export": export_json(result) if result is not None else None,
        "losses": [d.to_json() for d in decisions or ()],
        "verify": verify_json(report) if report is not None else None,
    }


def junit_xml(command: str, subject: str, exit_code: int, *, seconds: float, error: BaseException | None = None,
              report=None, decisions=None) -> str:
    """One test case per verification check and per loss decision; a bad input is one errored case.

    The suite, and the classname of its cases, is `command: subject` (the model and the output), so
    the results of several models in one CI pipeline do not collide.  The suite's `time` is the
    command's; the checks share one runtime run and the losses are decided, not run, so their cases
    have time 0 (CI sums the cases: the errored input case carries the command's time)."""
    from xml.sax.saxutils import escape, quoteattr
    suite = f"{command}: {subject}"
    cases: list[str] = []

    def case(name: str, body: str = "", time: float = 0.0):
        cases.append(f'  <testcase classname={quoteattr(suite)} name={quoteattr(name)} time="{time:.3f}">{body}'
                     '</testcase>')

    if report is not None:
        for c in report.checks:
            if c.total == 0:
                case(f"check {c.name}", f'<skipped message={quoteattr(c.skipped or "not run")}/>')
                continue
            bad = [m for m in c.mismatches if not m.explanation]
            if bad:
                m = bad[0]
                msg = f"{len(bad)} unexplained mismatch(es) of {c.total}; first: {m.sample}"
                detail = f"input: {m.text!r}\nexpected: {m.expected!r}\ngot: {m.got!r}"
                case(f"check {c.name}", f"<failure message={quoteattr(msg)}>{escape(detail)}</failure>")
            else:
                case(f"check {c.name}", f"<system-out>{escape(f'{c.ok}/{c.total} identical, the rest reproduced by recorded losses')}</system-out>")
    for d in decisions or ():
        text = f"{d.severity.value} ({'measured' if d.measured else 'declared'}): " + "; ".join(
            f"{x.json_path} {x.reason}" for x in d.losses[:3])
        if d.accepted:
            case(f"loss {d.code}", f"<system-out>{escape('accepted by ' + d.accepted_by + ': ' + text)}</system-out>")
        else:
            case(f"loss {d.code}", f"<failure message={quoteattr('refused: ' + text)}>{escape(text)}</failure>")
    if error is not None and (exit_code == 2 or not cases):
        case("input", f"<error message={quoteattr(str(error))}/>", seconds)
    failures = sum(1 for c in cases if "<failure" in c)
    errors = sum(1 for c in cases if "<error" in c)
    skipped = sum(1 for c in cases if "<skipped" in c)
    head = (f'<testsuite name={quoteattr(suite)} tests="{len(cases)}" failures="{failures}" errors="{errors}" '
            f'skipped="{skipped}" time="{seconds:.3f}">')
    body = "\n".join([head, *cases, "</testsuite>"])
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _NOT_XML.sub("\ufffd", body) + "\n"


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # not allowed in XML 1.0
