"""The package's own import graph, read with `ast` (nothing is imported), and the layering it must
keep.  `tests/acceptance/test_layers.py` checks it; `python -m tests.support.import_graph` prints the graph by layer.

Layers, top to bottom.  A module may import its own layer (when no cycle results) and any layer
below it, never one above; `__init__` (the version, and the API loaded on first use) sits at the
bottom."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "mtok_export"

LAYERS = (
    ("cli", "__main__"),
    ("api",),
    ("doctor",),  # `mtok doctor`: a deployed file diagnosed against what export would write, and repaired
    ("export",),
    ("compare",),  # the behavioural diff and stats, on verify's engines
    # verify: reference and runtime engines, the corpus, checks, attribution, and the pipeline that checks a
    # written file against its source (export's verify-before-replace, `mtok verify`)
    ("verify",),
    ("deployed_file",),  # what a written (deployed) .mtok or tokenizer.txt holds: readers, dump, manifest (not the export stack)
    ("ci",),  # SARIF, GitHub job summary and workflow commands, made from the outcome JSON of `reports`
    # job: every choice of an export, one value; options: the table declaring each of them once
    # next_command: the one command a refusal or a failure ends with, made from the job
    ("manifest", "reports", "model_folder", "policy", "job", "options", "next_command"),
    ("targets",),  # the registry of runtimes (`target.Target` entries): lower, then an output format writes
    ("formats",),  # the registry of formats (each declared by a `readers.formats` module): classify, choose, read
    ("writers",),  # IR -> HF files
    # job_options: the holders of the job's options (`Forms`, `ReadOptions`, `Policy`, ...), each field its
    # option, read by the CLI at start-up; the layers that hold them sit below the job
    ("lower", "job_options"),  # IR -> what a runtime executes (mtok targets, legacy types), and its HF equivalent
    ("readers", "legacy", "chat"),  # files -> IR; the legacy text format; chat templates
    ("losses",),  # the typed loss kinds (their triggers know the runtime's table, from mtok.constants)
    ("mtok", "dump"),  # the .mtok codec; IR/layout -> text and JSON
    ("unicode",),  # Unicode tables built by walking the code points
    ("ir",),
    # corpus: the built-in samples and chats; hub: Hub repositories as local snapshot folders;
    # json_value: JSON input checked once (readers, chat template sources, model folders)
    # target_type: the Target type (what a runtime can run), held by every layer; its entries are the registry
    # `targets` (a layer above `lower`, which the entries call: so the two cannot be one package)
    # documents: the long real documents the set-up fetches (a corpus slice)
    ("errors", "io", "cache", "sniff", "corpus", "documents", "gc_pause", "signals", "hub", "json_value", "target_type",
     "__init__"),
)
LAYER_OF = {unit: i for i, units in enumerate(LAYERS) for unit in units}

# Function-local imports of our own modules are allowed only where start-up time needs them, each
# place named here as (importing module, imported module), both dotted prefixes; the package's lazy
# API (`mtok_export.__getattr__`) is the one other.  They are still edges: `upward` and `cycles` check
# them like any import.
LAZY_ALLOWED = (
    ("mtok_export.cli", "mtok_export"),  # the commands load the library when they run: `mtok --help` loads none
    # the API loads what a call uses: the CLI's export goes through it and loads none of these
    ("mtok_export.api", "mtok_export.verify.pipeline"),
    ("mtok_export.api", "mtok_export.writers"),  # convert --to hf
    ("mtok_export.api", "mtok_export.deployed_file"),  # it reads the legacy formats
    ("mtok_export.export", "mtok_export.verify.pipeline"),  # verify-before-replace: not with --no-verify
    ("mtok_export.export", "mtok_export.verify.runtime"),
    # a format entry loads its reader (and the reader's libraries) when it reads: the reader of the one format read
    ("mtok_export.readers.formats", "mtok_export.readers"),
    ("mtok_export.readers.formats", "mtok_export.legacy"),  # tokenizer.txt: only when one is read or written
    ("mtok_export.formats", "mtok_export.readers.finish"),  # with the reader whose result it finishes
    ("mtok_export.targets", "mtok_export.lower.legacy"),
    ("mtok_export.lower.chat_template", "mtok_export.chat"),
    # the CLI builds its commands from the option table at start-up: a value's parser loads when used
    ("mtok_export.job_options", "mtok_export.ir"),
    ("mtok_export.job_options", "mtok_export.readers"),  # jinja2: only when the outcome is not cached
    ("mtok_export.job_options", "mtok_export.losses"),  # the loss registry: when --accept codes are checked
)


@dataclass(frozen=True)
class Edge:
    source: str  # importing module, dotted
    target: str  # imported module, dotted
    line: int
    local: bool  # inside a function


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
        if not base.startswith("mtok_export"):
            return []
        return [base] if node.module else []
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    base = ".".join(parts + ([node.module] if node.module else []))
    if node.module:
        return [base]
    return [f"{base}.{a.name}" for a in node.names]  # `from . import x`: x is a module (or a name in base)


def _existing(name: str, modules: set[str]) -> str:
    """`a.b.c` if it is a module, else its longest prefix that is one."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def edges() -> list[Edge]:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(f) for f in files}
    out = []
    for f in files:
        name, is_package = module_name(f), f.name == "__init__.py"
        tree = ast.parse(f.read_text(encoding="utf-8"))
        local_lines = {n.lineno for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                       for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                targets = _resolve(name, is_package, node)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("mtok_export")]
            else:
                continue
            for t in targets:
                t = _existing(t, modules)
                if t != name:
                    out.append(Edge(name, t, node.lineno, node.lineno in local_lines))
    return out


def unit(module: str) -> str:
    """The layer unit of a module: its first package level below `mtok_export`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def upward(all_edges: list[Edge]) -> list[Edge]:
    """Imports of a higher layer (the package's lazy API, `mtok_export.export` & co. loaded on first
    use by `mtok_export.__getattr__`, is the one exception)."""
    return [e for e in all_edges if LAYER_OF[unit(e.target)] < LAYER_OF[unit(e.source)]
            and not (e.source == "mtok_export" and e.local)]


def cycles(all_edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), over every import (lazy
    ones too: a cycle hidden in a function is still a cycle).  A package's `__init__` importing
    its own submodules is not a cycle with them: the submodules' `from .. import x` goes to the
    parent, which is loaded first."""
    graph = defaultdict(set)
    for e in all_edges:
        if not e.source.startswith(e.target + "."):  # a submodule importing its parent package
            graph[e.source].add(e.target)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(set(graph) | {t for ts in graph.values() for t in ts}):
        if v not in index:
            visit(v)
    return out


def unit_cycles(all_edges: list[Edge]) -> list[list[str]]:
    """Cycles between layer units (packages): `a.x` importing `b.y` and `b.z` importing `a.w` form no
    module cycle but tie the two packages together (units of one layer may import each other, in
    one direction only)."""
    between = {Edge(unit(e.source), unit(e.target), 0, False) for e in all_edges
               if unit(e.source) != unit(e.target) and not (e.source == "mtok_export" and e.local)}
    return cycles(sorted(between, key=lambda e: (e.source, e.target)))


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def lazy(all_edges: list[Edge]) -> list[Edge]:
    """Function-local imports of our own modules at a place LAZY_ALLOWED does not name."""
    return [e for e in all_edges if e.local and e.source != "mtok_export"
            and not any(_within(e.source, s) and _within(e.target, t) for s, t in LAZY_ALLOWED)]


def main() -> None:
    all_edges = edges()
    by_unit = defaultdict(set)
    for e in all_edges:
        if unit(e.source) != unit(e.target):
            by_unit[unit(e.source)].add(unit(e.target))
    for units in LAYERS:
        for u in units:
            print(f"{u:13} -> {' '.join(sorted(by_unit[u], key=lambda t: (LAYER_OF[t], t))) or '-'}")
    print(f"\nupward imports: {len(upward(all_edges))}; cycles: {len(cycles(all_edges))}; "
          f"function-local own imports: {sum(e.local for e in all_edges)} "
          f"({len(lazy(all_edges))} at places LAZY_ALLOWED does not name)")


if __name__ == "__main__":
    main()
