"""The static diff of two tokenizer IRs, layer by layer in pipeline order (normalize, pre-tokenize,
model, post-process, decode), with a content hash per layer so equal layers are visibly equal.

Each layer has a canonical content (what its hash covers) and a differ that names what changed:
component trees by JSON path, vocabularies by token (added / removed / re-numbered), merges by pair
(added / removed / rank changed), Unigram scores beyond a tolerance, added tokens and their flags,
the header id lists, the chat template as a unified diff, and the per-code-point normalization
maps.  Counts are always complete; `changes` holds every change, the renderers cut to `--limit`."""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
from array import array
from dataclasses import dataclass, field
from operator import itemgetter

from .jsonify import id_to_token
from .render import one_line
from .sanitize import show
from ..ir import models as M
from ..ir import normalizers as N
from ..ir.walk import CHILD_FIELDS
from ..unicode.tables import FORMS, charsmap_table, table
from . import STATIC_LAYERS

LAYERS = STATIC_LAYERS

BULK_FIELDS = ("entries", "nfd_table", "precompiled_charsmap")  # compared in the `tables` layer


@dataclass(frozen=True)
class Change:
    op: str  # "+" only in B, "-" only in A, "~" in both but different, " " unified-diff context
    where: str  # a JSON path, a token, a merge pair, a code point
    a: str = ""
    b: str = ""


@dataclass
class LayerDiff:
    name: str  # `note` is display-safe (sanitized); `changes` hold raw text
    hash_a: str
    hash_b: str
    counts: dict[str, int] = field(default_factory=dict)  # e.g. {"added": 22, "removed": 0}
    changes: list[Change] = field(default_factory=list)
    note: str = ""  # what the layer holds when it is equal, or a remark on the difference

    @property
    def equal(self) -> bool:
        return self.hash_a == self.hash_b


def diff_layers(a, b, *, only: str | None = None, score_tolerance: float = 1e-6) -> list[LayerDiff]:
    """The static diff of Tokenizer IRs `a` and `b`, one entry per layer of `LAYERS` (or `only`)."""
    out = []
    for name in LAYERS if only is None else (only,):
        out.append(_DIFFERS[name](a, b, score_tolerance) if name == "scores" else _DIFFERS[name](a, b))
    return out


def digest(value) -> str:
    """Short sha256 of a canonical text form (12 hex digits: enough to see equality at a glance)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


# ------------------------------------------------------------------ component trees

def _component_layer(name: str):
    def differ(a, b) -> LayerDiff:
        ca, cb = getattr(a, name), getattr(b, name)
        d = LayerDiff(name, digest(repr(ca)), digest(repr(cb)), note=one_line(ca))
        if not d.equal:
            d.changes = tree_changes(ca, cb, f"$.{name}")
            d.counts = {"changed": len(d.changes)}
        return d
    return differ


def tree_changes(a, b, path: str) -> list[Change]:
    """Where two components differ: a different kind is one change; same kind, per parameter;
    children of a Sequence aligned by content, so one inserted child is one `+`."""
    if a == b:
        return []
    if a is None or b is None or a.kind != b.kind:
        return [Change("~", path, one_line(a), one_line(b))]
    out = []
    for f in dataclasses.fields(a):
        va, vb = getattr(a, f.name), getattr(b, f.name)
        if va == vb:
            continue
        where = f"{path}.{f.name}"
        if f.name in CHILD_FIELDS:
            out += _children(va, vb, where)
        elif f.name in BULK_FIELDS:
            out.append(Change("~", where, _bulk(va), _bulk(vb)))
        else:
            out.append(Change("~", where, _param(va), _param(vb)))
    return out


def _children(ka: tuple, kb: tuple, path: str) -> list[Change]:
    out = []
    sm = difflib.SequenceMatcher(None, [repr(k) for k in ka], [repr(k) for k in kb], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out += tree_changes(ka[i1 + k], kb[j1 + k], f"{path}[{i1 + k}]")
        out += [Change("-", f"{path}[{i}]", one_line(ka[i]), "") for i in range(i1 + pairs, i2)]
        out += [Change("+", f"{path}[{j}]", "", one_line(kb[j])) for j in range(j1 + pairs, j2)]
    return out


def _param(v) -> str:
    if isinstance(v, tuple) and v and all(hasattr(x, "type_id") for x in v):  # template pieces
        return " ".join(p.id if p.special else f"${p.id}" + (f":{p.type_id}" if p.type_id else "") for p in v)
    if isinstance(v, tuple) and v and all(hasattr(x, "tokens") for x in v):  # template special tokens
        return " ".join(f"{t.id}={list(t.ids)}" for t in v)
    if hasattr(v, "kind") and dataclasses.is_dataclass(v) and not isinstance(v, type):
        return one_line(v) if v.kind != "Pattern" else str(v)
    return json.dumps(v, ensure_ascii=False) if isinstance(v, str) else str(v)


def _bulk(v) -> str:
    return "none" if v is None else f"{len(v)} {'bytes' if isinstance(v, bytes) else 'entries'}"


# ------------------------------------------------------------------ normalization tables

def code_point_map(n) -> tuple[dict[int, str], str]:
    """The per-code-point map a normalizer applies to a lone character, and what it came from:
    a code-6 table, a BERT NFD table, a precompiled charsmap, a named Unicode form, or the literal
    single-code-point Replaces of a Sequence (how lowering writes NFC/NFKC).  Rules on longer
    strings (canonical pairs) are not per code point and only counted in the description."""
    if n is None:
        return {}, "none"
    if isinstance(n, N.CodepointMap):
        return dict(n.entries), f"MnnCodepointMap ({len(n.entries):,} entries)"
    if isinstance(n, N.MnnBertNormalizer) and n.nfd_table:
        return dict(n.nfd_table), f"MnnBertNormalizer.nfd_table ({len(n.nfd_table):,} entries)"
    if isinstance(n, N.Precompiled):
        t = charsmap_table(n.precompiled_charsmap)
        return dict(t), f"Precompiled charsmap ({len(t):,} single-code-point rules)"
    if n.kind in FORMS:
        t = table(n.kind)
        return dict(t), f"{n.kind} of Unicode here ({len(t):,} entries)"
    if isinstance(n, N.Sequence):
        return _sequence_map(n)
    return {}, "none"


def _sequence_map(n) -> tuple[dict[int, str], str]:
    """A Sequence's per-code-point steps composed in order: each run of single-code-point Replaces
    (one map, the first rule for a character winning, as the lowering writes them) and each table
    (e.g. Sequence[NFKC, Lowercase], or the guarded table: controls swapped for sentinels, the
    code-6 table, which maps the sentinels back)."""
    steps: list[dict[int, str]] = []
    whats, run, longer = [], None, 0
    for k in n.normalizers:
        if isinstance(k, N.Replace) and not k.pattern.regex and len(k.pattern.value) == 1:
            if run is None:
                run = {}
                steps.append(run)
                whats.append(run)
            run.setdefault(ord(k.pattern.value), k.content)
        elif isinstance(k, N.Replace) and not k.pattern.regex:
            longer += 1
        else:
            sub, what = code_point_map(k)
            if sub:
                steps.append(sub)
                whats.append(what)
                run = None
    if not steps:
        return {}, "none"
    if len(steps) == 1:
        out = steps[0]
    else:
        out = {}
        for cp in sorted(set().union(*steps)):
            s = chr(cp)
            for m in steps:
                s = "".join(m.get(ord(c), c) for c in s)
            if s != chr(cp):
                out[cp] = s
    what = ", ".join(w if isinstance(w, str) else f"{len(w):,} single-code-point Replaces" for w in whats)
    return out, what + (f" (+{longer:,} longer literal Replaces)" if longer else "")


def _tables(a, b) -> LayerDiff:
    ma, wa = code_point_map(a.normalizer)
    mb, wb = code_point_map(b.normalizer)
    d = LayerDiff("tables", digest(sorted(ma.items())), digest(sorted(mb.items())),
                  note=wa if wa == wb else f"{wa} vs {wb}")
    if d.equal:
        return d
    for cp in sorted(ma.keys() | mb.keys()):
        x, y = ma.get(cp), mb.get(cp)
        if x != y:
            d.changes.append(Change("-" if y is None else "+" if x is None else "~", f"U+{cp:04X} {chr(cp)!r}",
                                    "" if x is None else x, "" if y is None else y))
    d.counts = {k: sum(1 for c in d.changes if c.op == op) for k, op in
                (("only in A", "-"), ("only in B", "+"), ("mapped differently", "~"))}
    return d


# ------------------------------------------------------------------ model

def _model(a, b) -> LayerDiff:
    def flags(m) -> dict:
        return {"type": m.kind, **{f.name: getattr(m, f.name) for f in dataclasses.fields(m)
                                   if f.name not in ("vocab", "merges")}}
    fa, fb = flags(a.model), flags(b.model)
    d = LayerDiff("model", digest(fa), digest(fb), note=", ".join(f"{k}={show(str(v))}" for k, v in fa.items()
                                                                  if v not in (None, False)))
    d.changes = [Change("~", k, str(fa.get(k, "")), str(fb.get(k, "")))
                 for k in dict.fromkeys([*fa, *fb]) if fa.get(k) != fb.get(k)]
    d.counts = {"changed": len(d.changes)} if d.changes else {}
    return d


def _vocab(a, b) -> LayerDiff:
    va, vb = M.vocab_of(a.model), M.vocab_of(b.model)
    d = LayerDiff("vocab", _vocab_hash(va), _vocab_hash(vb), note=f"{len(va):,} tokens")
    if d.equal:
        return d
    # single passes over the dicts: 3x faster than key-set algebra on 150k tokens
    added = sorted((t for t in vb if t not in va), key=vb.__getitem__)
    removed = sorted((t for t in va if t not in vb), key=va.__getitem__)
    moved = sorted((t for t, i in va.items() if vb.get(t, i) != i), key=va.__getitem__)
    d.changes = ([Change("+", t, "", str(vb[t])) for t in added] + [Change("-", t, str(va[t]), "") for t in removed]
                 + [Change("~", t, str(va[t]), str(vb[t])) for t in moved])
    d.counts = {"added": len(added), "removed": len(removed), "re-numbered": len(moved)}
    d.note = f"{len(va):,} vs {len(vb):,} tokens" + (f"; B adds ids {_span([vb[t] for t in added])}" if added else "")
    return d


def _vocab_hash(v: dict) -> str:
    by_id = sorted(v.items(), key=itemgetter(1))
    return strings_digest([t for t, _ in by_id], array("q", [i for _, i in by_id]).tobytes())


def strings_digest(strings: list[str], extra: bytes = b"") -> str:
    """`digest` for 150k-entry lists: the strings NUL-joined plus their lengths (so the split is
    unambiguous), hashed in one call instead of a JSON dump (4x faster on a vocab)."""
    h = hashlib.sha256("\0".join(strings).encode("utf-8", "surrogatepass"))
    h.update(array("q", [len(x) for x in strings]).tobytes())
    h.update(extra)
    return h.hexdigest()[:12]


def _span(ids: list[int]) -> str:
    lo, hi = min(ids), max(ids)
    return f"{lo}..{hi}" if hi - lo + 1 == len(ids) else f"{lo}..{hi} (not contiguous)"


def _merges(a, b) -> LayerDiff:
    ma, mb = getattr(a.model, "merges", ()), getattr(b.model, "merges", ())
    d = LayerDiff("merges", strings_digest([x for m in ma for x in m]), strings_digest([x for m in mb for x in m]),
                  note=f"{len(ma):,} merges")
    if d.equal:
        return d
    ra = {m: i for i, m in enumerate(ma)}
    rb = {m: i for i, m in enumerate(mb)}
    added = sorted(rb.keys() - ra.keys(), key=rb.__getitem__)
    removed = sorted(ra.keys() - rb.keys(), key=ra.__getitem__)
    ranked = sorted((m for m in ra.keys() & rb.keys() if ra[m] != rb[m]), key=ra.__getitem__)
    d.changes = ([Change("+", " ".join(m), "", f"rank {rb[m]}") for m in added]
                 + [Change("-", " ".join(m), f"rank {ra[m]}", "") for m in removed]
                 + [Change("~", " ".join(m), f"rank {ra[m]}", f"rank {rb[m]}") for m in ranked])
    d.counts = {"added": len(added), "removed": len(removed), "rank changed": len(ranked)}
    # a rank change of every merge after one insertion is noise; what matters is the relative order
    common_a = [m for m in ma if m in rb]
    common_b = [m for m in mb if m in ra]
    d.counts["relative order changed"] = int(common_a != common_b)
    d.note = f"{len(ma):,} vs {len(mb):,} merges"
    return d


def _scores(a, b, tolerance: float) -> LayerDiff:
    sa = dict(a.model.vocab) if isinstance(a.model, M.Unigram) else {}
    sb = dict(b.model.vocab) if isinstance(b.model, M.Unigram) else {}
    d = LayerDiff("scores", digest(sorted(sa.items())), digest(sorted(sb.items())),
                  note=f"{len(sa):,} Unigram scores" if sa else "no Unigram model")
    if d.equal:
        return d
    common = sorted(sa.keys() & sb.keys(), key=lambda p: -abs(sa[p] - sb[p]))
    beyond = [p for p in common if abs(sa[p] - sb[p]) > tolerance]
    d.changes = [Change("~", p, repr(sa[p]), repr(sb[p])) for p in beyond]
    d.counts = {f"changed by more than {tolerance:g}": len(beyond),
                "only in A": len(sa.keys() - sb.keys()), "only in B": len(sb.keys() - sa.keys())}
    if not beyond and not (sa.keys() ^ sb.keys()):
        d.note = f"all {len(common):,} scores within {tolerance:g}"
    return d


# ------------------------------------------------------------------ added tokens and header ids

_FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def _added(a, b) -> LayerDiff:
    ta = {t.content: t for t in a.added_tokens}
    tb = {t.content: t for t in b.added_tokens}
    d = LayerDiff("added_tokens", digest(repr(sorted(a.added_tokens, key=lambda t: t.id))),
                  digest(repr(sorted(b.added_tokens, key=lambda t: t.id))), note=f"{len(ta)} added tokens")
    if d.equal:
        return d
    for c in sorted(tb.keys() - ta.keys(), key=lambda c: tb[c].id):
        d.changes.append(Change("+", c, "", _token(tb[c])))
    for c in sorted(ta.keys() - tb.keys(), key=lambda c: ta[c].id):
        d.changes.append(Change("-", c, _token(ta[c]), ""))
    for c in sorted(ta.keys() & tb.keys(), key=lambda c: ta[c].id):
        if ta[c] != tb[c]:
            d.changes.append(Change("~", c, _token(ta[c]), _token(tb[c])))
    d.counts = {k: sum(1 for c in d.changes if c.op == op) for k, op in
                (("added", "+"), ("removed", "-"), ("changed", "~"))}
    d.note = f"{len(ta)} vs {len(tb)} added tokens"
    return d


def _token(t) -> str:
    """`id 7 special rstrip normalized=False`: the flags that differ from HF's defaults."""
    return f"id {t.id}" + "".join((" normalized=False" if not t.normalized else "") if f == "normalized"
                                  else f" {f}" if getattr(t, f) else "" for f in _FLAGS)


def _specials(a, b) -> LayerDiff:
    names_a, names_b = _names(a), _names(b)
    la = {k: list(getattr(a, f"{k}_ids")) for k in ("special", "stop", "prefix")}
    lb = {k: list(getattr(b, f"{k}_ids")) for k in ("special", "stop", "prefix")}
    # by text, so a renumbering shows up as such; ids shown beside
    d = LayerDiff("specials", digest({k: [(i, names_a.get(i)) for i in v] for k, v in la.items()}),
                  digest({k: [(i, names_b.get(i)) for i in v] for k, v in lb.items()}),
                  note=", ".join(f"{k} {len(v)}" for k, v in la.items()))
    if d.equal:
        return d
    for k in la:
        xa = [f"{names_a.get(i, '?')}({i})" for i in la[k]]
        xb = [f"{names_b.get(i, '?')}({i})" for i in lb[k]]
        d.changes += [Change("+", f"{k} {x}") for x in xb if x not in xa]
        d.changes += [Change("-", f"{k} {x}") for x in xa if x not in xb]
        if xa != xb and sorted(xa) == sorted(xb):
            d.changes.append(Change("~", f"{k} order", " ".join(xa), " ".join(xb)))
    d.counts = {k: sum(1 for c in d.changes if c.op == op) for k, op in
                (("added", "+"), ("removed", "-"), ("reordered", "~"))}
    return d


def _names(tok) -> dict[int, str]:
    return id_to_token(tok)


# ------------------------------------------------------------------ chat template

def _chat(a, b) -> LayerDiff:
    def fields_of(c) -> dict:
        return {"text": c.text, "bos_token": c.bos_token, "eos_token": c.eos_token,
                "clean_up_tokenization_spaces": c.clean_up_tokenization_spaces, "others": [list(o) for o in c.others]}
    fa, fb = fields_of(a.chat), fields_of(b.chat)
    d = LayerDiff("chat_template", digest(fa), digest(fb), note=f"{len(a.chat.text):,} chars")
    if d.equal:
        return d
    for k in fa:
        if k != "text" and fa[k] != fb[k]:
            d.changes.append(Change("~", k, json.dumps(fa[k], ensure_ascii=False), json.dumps(fb[k], ensure_ascii=False)))
    if fa["text"] != fb["text"]:
        lines = list(difflib.unified_diff(fa["text"].splitlines(), fb["text"].splitlines(), "A", "B", lineterm="", n=1))
        for ln in lines[2:]:
            op = {"+": "+", "-": "-", "@": "@"}.get(ln[:1], " ")
            d.changes.append(Change(op, ln[1:] if op != "@" else ln, "", ""))
        d.counts["template lines added"] = sum(1 for c in d.changes if c.op == "+")
        d.counts["template lines removed"] = sum(1 for c in d.changes if c.op == "-")
    d.counts["fields changed"] = sum(1 for k in fa if k != "text" and fa[k] != fb[k])
    d.note = f"{len(a.chat.text):,} vs {len(b.chat.text):,} chars"
    return d


_DIFFERS = {"normalizer": _component_layer("normalizer"), "tables": _tables,
            "pre_tokenizer": _component_layer("pre_tokenizer"), "model": _model, "vocab": _vocab,
            "merges": _merges, "scores": _scores, "added_tokens": _added, "specials": _specials,
            "post_processor": _component_layer("post_processor"), "chat_template": _chat,
            "decoder": _component_layer("decoder")}
