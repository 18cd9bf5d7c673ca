"""The package's structure as text, read from the AST of `mtok_export/` (nothing is imported):

* the package-level import graph: each package (first level below `mtok_export`) -> the packages
  its modules import, function-local imports included (a lazy import is still a dependency);
* the cycles of that graph (strongly connected packages), which module-level checks miss: `a.x`
  importing `b.y` and `b.z` importing `a.w` is no module cycle but ties the two packages together;
* every function-local import of our own modules (file:line), with the reason written beside it
  (a comment on the line or the one above, else the module's `# function-local imports: WHY`
  line) or "NO REASON";
* the 15 largest functions by lines.

`python scripts/structure.py [PACKAGE_DIR]` (default: this checkout's `mtok_export/`).
`tests/support/import_graph.py` is the layering contract; this is the overview for a review."""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = "mtok_export"


def _module(path: Path, package: Path) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(module: str, is_package: bool, node) -> list[str]:
    """Our own modules an import statement names (dotted; a `from x import name` counts as `x`)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == ROOT]
    if node.level == 0:
        return [node.module] if node.module and node.module.split(".")[0] == ROOT else []
    parts = module.split(".") if is_package else module.split(".")[:-1]
    base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
    return [base] if node.module else [f"{base}.{a.name}" for a in node.names]


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _existing(name: str, modules: set[str]) -> str:
    """`a.b.c` if it is a module, else its longest prefix that is one (`from .. import __version__`)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def scan(package: Path):
    """-> (imports as (source module, target module, file, line, is_local, reason), functions as
    (lines, name, file, line))."""
    imports, functions = [], []
    files = sorted(package.rglob("*.py"))
    modules = {_module(f, package) for f in files}
    for f in files:
        module, rel = _module(f, package), f.relative_to(package.parent).as_posix()
        source = f.read_text(encoding="utf-8")
        lines = source.splitlines()
        tree = ast.parse(source)
        local, reasons = set(), {}
        # a module-wide reason for its function-local imports (a CLI command module's, say)
        whole = next((m.group(1) for m in map(_FILE_REASON.match, lines) if m), "")
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions.append((fn.end_lineno - fn.lineno + 1, fn.name, rel, fn.lineno))
                local |= {id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))),
                           key=lambda n: n.lineno):
            reasons[node.end_lineno] = reason = _reason(lines, node, reasons)
            for t in _targets(module, f.name == "__init__.py", node):
                t = _existing(t, modules)
                if t != module:
                    imports.append((module, t, rel, node.lineno, id(node) in local,
                                    reason or (whole if id(node) in local else "")))
    return imports, functions


_FILE_REASON = re.compile(r"# function-local imports: (.+)")


def _reason(lines: list[str], node, reasons: dict[int, str]) -> str:
    """The comment on the import's lines, else the comment line right above it, else the reason of
    the import right above it (one comment serves a block of imports)."""
    for text in lines[node.lineno - 1: node.end_lineno]:
        if "#" in text:
            return text.split("#", 1)[1].strip()
    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
    return above[1:].strip() if above.startswith("#") else reasons.get(node.lineno - 1, "")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while (w := stack.pop()) != v:
                on.discard(w)
                comp.append(w)
            on.discard(v)
            if comp:
                out.append(sorted([v, *comp]))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return out


def main(argv: list[str]) -> None:
    package = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / ROOT
    imports, functions = scan(package)
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target, *_ in imports:
        a, b = package_of(source), package_of(target)
        if a != b and not (a == "__init__" and source == ROOT):  # the package's lazy API is its front door
            graph[a].add(b)
    print("package-level imports (package -> packages it imports):")
    for p in sorted({package_of(_module(f, package)) for f in package.rglob("*.py")}):
        print(f"  {p:13} -> {' '.join(sorted(graph[p])) or '-'}")
    found = cycles(graph)
    print(f"\npackage cycles: {len(found)}")
    for comp in found:
        print("  " + " <-> ".join(comp))
    local = [(rel, line, target, reason) for _, target, rel, line, is_local, reason in imports if is_local]
    print(f"\nfunction-local imports of our own modules: {len(local)} "
          f"({sum(not r for *_, r in local)} without a reason beside them)")
    for rel, line, target, reason in sorted(local):
        print(f"  {rel}:{line} {target}  # {reason or 'NO REASON'}")
    print("\nlargest functions (lines):")
    for n, name, rel, line in sorted(functions, key=lambda x: (-x[0], x[2], x[3]))[:15]:
        print(f"  {n:4} {name} ({rel}:{line})")


if __name__ == "__main__":
    main(sys.argv[1:])
