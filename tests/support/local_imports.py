"""Every import inside a function of the package, with the reason it stands there (issue 42).

An import belongs at the top of its module; one inside a function must say why it is not there: a
comment on its line, or the comment lines right above it (above the run of imports it ends: one
comment may cover `from a import x` and `from a.b import y` under it), or the module's header line
`# function-local imports: why` (one reason for all of the module's; comment lines under it go on).
A `noqa` or `type: ignore` comment is no reason.

`tests/acceptance/test_local_imports.py` keeps every one reasoned; `python -m tests.support.local_imports`
prints them per module, then how many fall in each kind of reason (`KINDS`, by the words the reason
uses: a rough sort for reading, not a rule)."""

from __future__ import annotations

import ast
import sys
from collections import Counter
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mtok_export"
HEADER = "# function-local imports:"

# (kind, words any of which puts a reason in it), first match wins; the rest is "other"
KINDS = (
    ("an optional library", ("optional",)),
    ("a module one platform or build lacks", ("POSIX", "_ctypes")),
    ("a missing library as an error, not a traceback", ("traceback",)),
    ("an import cycle", ("cycle",)),
    ("an order to keep", ("must come first",)),
    ("start-up: loaded only where it is used", ("only", "start-up", "first use", "never", "not with", "without", "when")),
)


@dataclass(frozen=True)
class LocalImport:
    path: Path
    line: int
    names: str  # what it imports, as written
    reason: str  # "" when none is given


def _comment(text: str) -> str:
    comment = text.split("#", 1)[1].strip() if "#" in text else ""
    return "" if comment.startswith(("noqa", "type:")) else comment


def _is_comment_line(text: str) -> bool:
    return text.lstrip().startswith("#")


def _reason_at(lines: list[str], node: ast.stmt) -> str:
    """The comment on the import's line, else the comment lines above it or above the run of
    uncommented imports it ends."""
    if own := _comment(lines[node.lineno - 1]):
        return own
    at = node.lineno - 2
    while at >= 0 and lines[at].lstrip().startswith(("import ", "from ")) and not _comment(lines[at]):
        at -= 1
    block = []
    while at >= 0 and _is_comment_line(lines[at]):
        block.insert(0, _comment(lines[at]))
        at -= 1
    return " ".join(c for c in block if c)


def _header(lines: list[str]) -> str:
    """The module's `# function-local imports: why` line, with the comment lines that go on under it."""
    for i, text in enumerate(lines):
        if text.startswith(HEADER):
            more = takewhile(lambda t: t.startswith("# "), lines[i + 1:])
            return " ".join([text[len(HEADER):].strip(), *(t[2:].strip() for t in more)]).strip()
    return ""


def local_imports(path: Path, text: str | None = None) -> list[LocalImport]:
    """The imports inside functions of the module at `path` (of `text`, when given: its source)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    header = _header(lines)
    found = set()  # a function nested in another is walked twice: once is enough
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.update(LocalImport(path, node.lineno, ast.unparse(node), _reason_at(lines, node) or header)
                         for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom)))
    return sorted(found, key=lambda x: x.line)


def all_local_imports() -> list[LocalImport]:
    return [x for p in sorted(PACKAGE.rglob("*.py")) for x in local_imports(p)]


def kind(reason: str) -> str:
    if not reason:
        return "(no reason)"
    return next((k for k, words in KINDS if any(w in reason for w in words)), "other")


def main() -> None:
    found = all_local_imports()
    by_module: dict[Path, list[LocalImport]] = {}
    for x in found:
        by_module.setdefault(x.path, []).append(x)
    print(f"{len(found)} function-local imports in {len(by_module)} modules, "
          f"{sum(not x.reason for x in found)} without a reason")
    for path, xs in sorted(by_module.items(), key=lambda kv: -len(kv[1])):
        reasons = sorted({x.reason or "(no reason)" for x in xs})
        print(f"{len(xs):4d}  {path.relative_to(PACKAGE.parent)}: {' | '.join(r[:100] for r in reasons)}")
    print("\nby kind of reason:")
    for k, n in Counter(kind(x.reason) for x in found).most_common():
        print(f"{n:4d}  {k}")


if __name__ == "__main__":
    sys.exit(main())
