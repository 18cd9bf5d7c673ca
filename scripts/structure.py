"""The package's structure as text, for a review (nothing is imported):

* the package-level import graph: each package (first level below `mtok_export`) -> the packages
  its modules import, function-local imports included (a lazy import is still a dependency);
* the cycles of that graph (strongly connected packages), which module-level checks miss: `a.x`
  importing `b.y` and `b.z` importing `a.w` is no module cycle but ties the two packages together;
* every function-local import of our own modules (file:line), with the reason written beside it
  (a comment on the line or the one above, else the module's `# function-local imports: WHY`
  line) or "NO REASON";
* the 15 largest functions by lines.

`python scripts/structure.py`.  The graph is the layering contract's own reading
(`tests/support/import_graph.py`); this adds the reasons and the function sizes."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # run as a file: the contract's module is the tests' helper

from tests.support import import_graph as G  # noqa: E402

_FILE_REASON = re.compile(r"# function-local imports: (.+)")


def _reason(lines: list[str], node, reasons: dict[int, str]) -> str:
    """The comment on the import's lines, else the comment line right above it, else the reason of
    the import right above it (one comment serves a block of imports)."""
    for text in lines[node.lineno - 1: node.end_lineno]:
        if "#" in text:
            return text.split("#", 1)[1].strip()
    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
    return above[1:].strip() if above.startswith("#") else reasons.get(node.lineno - 1, "")


def scan(files):
    """-> ({(file, line): reason} of every import, functions as (lines, name, file, line))."""
    reasons, functions = {}, []
    for f in files:
        rel = f.relative_to(REPO).as_posix()
        lines = f.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines))
        whole = next((m.group(1) for m in map(_FILE_REASON.match, lines) if m), "")  # module-wide reason
        by_end: dict[int, str] = {}
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((fn.end_lineno - fn.lineno + 1, fn.name, rel, fn.lineno))
        for node in sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                           key=lambda n: n.lineno):
            by_end[node.end_lineno] = reason = _reason(lines, node, by_end)
            reasons[rel, node.lineno] = reason or whole
    return reasons, functions


def main() -> None:
    files = sorted(G.PACKAGE.rglob("*.py"))
    edges = G.edges()
    reasons, functions = scan(files)
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        a, b = G.unit(e.source), G.unit(e.target)
        if a != b and not (e.source == "mtok_export" and e.local):  # the package's lazy API is its front door
            graph[a].add(b)
    print("package-level imports (package -> packages it imports):")
    for p in sorted({G.unit(G.module_name(f)) for f in files}):
        print(f"  {p:13} -> {' '.join(sorted(graph[p])) or '-'}")
    found = G.unit_cycles(edges)
    print(f"\npackage cycles: {len(found)}")
    for comp in found:
        print("  " + " <-> ".join(comp))
    path_of = {G.module_name(f): f.relative_to(REPO).as_posix() for f in files}
    local = sorted({(path_of[e.source], e.line, e.target) for e in edges if e.local})
    print(f"\nfunction-local imports of our own modules: {len(local)} "
          f"({sum(not reasons[rel, line] for rel, line, _ in local)} without a reason beside them)")
    for rel, line, target in local:
        print(f"  {rel}:{line} {target}  # {reasons[rel, line] or 'NO REASON'}")
    print("\nlargest functions (lines):")
    for n, name, rel, line in sorted(functions, key=lambda x: (-x[0], x[2], x[3]))[:15]:
        print(f"  {n:4} {name} ({rel}:{line})")


if __name__ == "__main__":
    main()
