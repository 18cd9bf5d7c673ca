"""Machine-readable outcomes for CI (`--report FILE` JSON, `--junit FILE`), written on every outcome
of `mtok-export` and `mtok verify`: success, exit 1 (unexplained mismatch), 2 (bad input) and 3
(a loss the policy refuses).  Pure functions: the CLI writes the files."""

# function-local imports: xml.sax.saxutils imports urllib.request & co. (~40 ms), for --junit only;
# every export loads this module

from __future__ import annotations

import re

from . import __version__
from .dump.jsonify import component, id_to_token
from .errors import NothingFound

EXIT_MEANING = {0: "passed", 1: "verification failed", 2: "bad input", 3: "loss refused by the policy",
                130: "interrupted"}


def verify_json(report) -> dict:
    return {
        "file": report.file, "target": report.target, "runtime": report.runtime, "ok": report.ok,
        "result": report.verdict, "partial": report.partial,
        "corpus_sha256": report.corpus_sha256, "reference": report.reference,
        "checks": [{"name": c.name, "ok": c.ok, "total": c.total, "note": c.skipped, "reference": c.reference,
                    "unexplained": sum(1 for m in c.mismatches if not m.explanation)} for c in report.checks],
        "classes": [{"check": check, "explanation": list(codes), "count": n,
                     "example": {"sample": m.sample, "text": m.text, "expected": m.expected, "got": m.got,
                                 "slice": m.slice, "losses_at": list(m.where)},
                     **({"component": m.component} if m.component else {})}
                    for check, codes, n, m in report.classes()],
        "reach": report.reach(),
        "unexplained": report.unexplained,
        "robustness": report.robustness.to_json() if report.robustness is not None else None,
    }


def export_json(r) -> dict:
    low = r.lowered
    names = id_to_token(low)
    return {
        "output": str(r.path),
        "size": r.size,
        "seconds": round(r.seconds, 3),
        "target": r.lowering.target.name,
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
        "warnings": list(r.lowering.warnings),
        "inputs": [{"path": f.path, "sha256": f.sha256} for f in r.source.provenance.inputs],
        "unicode_version": r.source.provenance.unicode_version,
        "rejected": str(r.rejected) if r.rejected else None,
    }


def outcome_json(command: str, exit_code: int, *, error: BaseException | None = None, result=None,
                 report=None, decisions=None, hint: str | None = None) -> dict:
    return command_json(command, exit_code, error=error, hint=hint,
                        export=export_json(result) if result is not None else None,
                        losses=[d.to_json() for d in decisions or ()],
                        verify=verify_json(report) if report is not None else None)


def command_json(command: str, exit_code: int, *, error: BaseException | None = None, hint: str | None = None,
                 **fields) -> dict:
    """What every command's --json starts with (tool, command, ok, exit code and its meaning, the
    error and its hint), then the command's own `fields`."""
    return {
        "tool": {"name": "mtok-export", "version": __version__},
        "command": command,
        "ok": exit_code == 0,
        "exit_code": exit_code,
        "outcome": EXIT_MEANING.get(exit_code, "error"),
        "error": str(error) if error is not None else None,
        "hint": hint,
        "next_command": getattr(error, "next", None).to_json() if getattr(error, "next", None) is not None else None,
        # no source in a folder: each file considered and why (`formats.considered`)
        **({"considered": error.considered} if isinstance(error, NothingFound) else {}),
        **fields,
    }


def junit_xml(command: str, subject: str, exit_code: int, *, seconds: float, error: BaseException | None = None,
              report=None, decisions=None) -> str:
    """One test suite: a test case per verification check and per loss decision; a bad input is one
    errored case.

    The suite, and the classname of its cases, is `command: subject` (the model and the output), so
    the results of several models in one CI pipeline do not collide.  The suite's `time` is the
    command's; the checks share one runtime run and the losses are decided, not run, so their cases
    have time 0 (CI sums the cases: the errored input case carries the command's time)."""
    suite = f"{command}: {subject}"
    cases = junit_cases(suite, exit_code, seconds=seconds, error=error, report=report, decisions=decisions)
    return _document(_suite(suite, cases, seconds))


def junit_findings(command: str, subject: str, exit_code: int, *, seconds: float, findings: list[dict],
                   report=None, error: BaseException | None = None) -> str:
    """`mtok doctor`'s suite: a test case per verification check (when the file ran against a source)
    and per finding (`{"what", "level", "cause", "effect"}`), failed when the finding is a measured
    defect ("wrong") or a static one ("warning")."""
    from xml.sax.saxutils import escape, quoteattr

    suite = f"{command}: {subject}"
    cases = junit_cases(suite, exit_code, seconds=seconds, error=error, report=report)
    for i, f in enumerate(findings, 1):
        text = f["cause"] + (f" ({f['effect']})" if f.get("effect") else "")
        body = (f"<failure message={quoteattr(text)}>{escape(text)}</failure>" if f["level"] in ("wrong", "warning")
                else f"<system-out>{escape(f['level'] + ': ' + text)}</system-out>")
        cases.append(f'  <testcase classname={quoteattr(suite)} name={quoteattr("finding " + str(i) + " " + f["what"])} '
                     f'time="0.000">{body}</testcase>')
    return _document(_suite(suite, cases, seconds))


def junit_fleet(name: str, suites: list[tuple[str, list[str], float]]) -> str:
    """Several models' outcomes: one test suite per (suite name, its `junit_cases`, seconds)."""
    every = [c for _, cases, _ in suites for c in cases]
    total = sum(t for _, _, t in suites)
    body = [f'<testsuites name={_quote(name)} {_counts(every)} time="{total:.3f}">',
            *(_suite(s, cases, t) for s, cases, t in suites), "</testsuites>"]
    return _document("\n".join(body))


def junit_cases(suite: str, exit_code: int, *, seconds: float = 0.0, error: BaseException | str | None = None,
                report=None, decisions=None) -> list[str]:
    """The `<testcase>` elements of one outcome (plain strings, so a worker process can send them)."""
    from xml.sax.saxutils import escape, quoteattr

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
    return cases


def _suite(suite: str, cases: list[str], seconds: float) -> str:
    return "\n".join([f'<testsuite name={_quote(suite)} {_counts(cases)} time="{seconds:.3f}">', *cases,
                      "</testsuite>"])


def _counts(cases: list[str]) -> str:
    n = lambda tag: sum(1 for c in cases if tag in c)  # noqa: E731
    return (f'tests="{len(cases)}" failures="{n("<failure")}" errors="{n("<error")}" '
            f'skipped="{n("<skipped")}"')


def _quote(text: str) -> str:
    from xml.sax.saxutils import quoteattr

    return quoteattr(text)


def _document(body: str) -> str:
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + _NOT_XML.sub("\ufffd", body) + "\n"


# Which exit code a run over several models ends with: the worst of theirs.  A model that could not be
# read (2) leaves its state unknown, which may hide anything below; a wrong file (1) is worse than a
# known loss the policy refused (3); an interrupt (130, 143) outranks them all.
EXIT_RANK = (2, 1, 3, 0)


def worst_exit(codes) -> int:
    return min(codes, key=lambda c: EXIT_RANK.index(c) if c in EXIT_RANK else -1, default=0)


def fleet_json(command: str, exit_code: int, models: list[dict]) -> dict:
    """Several models' outcomes: each is `outcome_json` plus its `name`, `source` and `seconds`."""
    return {"tool": {"name": "mtok-export", "version": __version__}, "command": command, "ok": exit_code == 0,
            "exit_code": exit_code, "outcome": EXIT_MEANING.get(exit_code, "error"), "models": models}


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # not allowed in XML 1.0
