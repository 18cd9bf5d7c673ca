"""Short human-readable forms of IR pieces, shared by `export`'s summary and `inspect`."""

from __future__ import annotations

import dataclasses

from ..ir import Pattern
from ..ir.walk import child_field, children
from .sanitize import clip, show


def one_line(obj, width: int = 70) -> str:
    """`Sequence[Split(/\\s+/, Removed), ByteLevel(use_regex=False)]` style, non-default fields only."""
    if obj is None:
        return "none"
    if child_field(obj):
        return f"{obj.kind}[{', '.join(_runs(children(obj), width))}]"
    args = []
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if f.name in ("entries", "nfd_table"):
            if v is not None:
                args.append(f"{len(v)} entries")
            continue
        if f.name == "precompiled_charsmap":
            args.append(f"{len(v)} bytes")
            continue
        if f.name == "ops":
            args.append(" ".join("$A" if op is None else str(op) for op in v))
            continue
        if f.default is not dataclasses.MISSING and v == f.default:
            continue
        if isinstance(v, Pattern):
            args.append(clip(show(str(v), marks=True), width))
        elif isinstance(v, str):
            args.append(f'{f.name}="{show(v, marks=True)}"')
        else:
            args.append(f"{f.name}={clip(show(str(v)), 40)}")
    return f"{obj.kind}({', '.join(args)})" if args else obj.kind


def _runs(kids, width: int) -> list[str]:
    """Children, with runs of more than 3 of one kind collapsed (a normalizer may hold thousands of
    Replace entries)."""
    out, i = [], 0
    while i < len(kids):
        j = i
        while j < len(kids) and kids[j].kind == kids[i].kind:
            j += 1
        out += [f"{j - i} x {kids[i].kind}"] if j - i > 3 else [one_line(k, width) for k in kids[i:j]]
        i = j
    return out


def tokens(ids, names: dict[int, str], limit: int = 12) -> str:
    if not ids:
        return "none"
    shown = [f"{show(names.get(i, '?'))}({i})" for i in ids[:limit]]
    more = f" … +{len(ids) - limit}" if len(ids) > limit else ""
    return " ".join(shown) + more


def size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
