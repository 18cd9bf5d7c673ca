"""IR and `.mtok` layout -> JSON-ready dicts with a stable key order (for `--json`, the text view
and golden tests).  Bulk data (vocab, merges, tables) is summarized unless asked for in full."""

from __future__ import annotations

import dataclasses

from ..ir import Pattern
from ..ir import models as M
from ..ir import processors as R
from ..mtok.views import IdVocab
from ..unicode import ucd
from ..unicode.tables import FORMS, table

BULK = ("entries", "nfd_table", "precompiled_charsmap")


def component(obj, full: bool = False):
    """A component as HF-style JSON: {"type": kind, fields...}; tables summarized unless `full`."""
    if obj is None:
        return None
    out = {"type": obj.kind}
    for f in dataclasses.fields(obj):
        out[f.name] = _value(getattr(obj, f.name), full, f.name)
    return out


def _value(v, full: bool, name: str = ""):
    if isinstance(v, Pattern):
        return {"Regex" if v.regex else "String": v.value}
    if isinstance(v, bytes):
        return {"bytes": len(v)}
    if name in BULK and v is not None:
        return [[cp, s] for cp, s in v] if full else {"count": len(v), "first": [list(e) for e in v[:3]]}
    if isinstance(v, tuple):
        return [_value(x, full) if not hasattr(x, "kind") else component(x, full) for x in v]
    if dataclasses.is_dataclass(v):
        return component(v, full) if hasattr(v, "kind") else dataclasses.asdict(v)
    return v


def id_to_token(tok, only=None) -> dict[int, str]:
    """id -> its text (the model's token, else the added token's); `only`: a set of ids to name,
    when a few are wanted from a large vocabulary."""
    vocab = M.vocab_of(tok.model)
    table = {i: t for t, i in vocab.items()} if only is None else {i: t for t, i in vocab.items() if i in only}
    for t in tok.added_tokens:
        if only is None or t.id in only:
            table.setdefault(t.id, t.content)
    return table


def _ends_by_id(vocab, limit: int) -> tuple[list, list]:
    """The first and last `limit` (id, token) pairs by id.  A lazily read `.mtok` vocab holds its
    tokens by id already: take the ends without building the whole table (`mtok inspect`)."""
    if isinstance(vocab, IdVocab):
        n = len(vocab.by_id)
        return ([[i, vocab.by_id[i]] for i in range(min(limit, n))],
                [[i, vocab.by_id[i]] for i in range(max(n - limit, 0), n)] if n > limit else [])
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    return [[i, t] for t, i in by_id[:limit]], [[i, t] for t, i in by_id[-limit:]] if len(by_id) > limit else []


def model_summary(m, limit: int) -> dict:
    vocab = M.vocab_of(m)
    out = {"type": m.kind, "vocab_size": len(vocab)}
    for f in dataclasses.fields(m):
        if f.name not in ("vocab", "merges"):
            out[f.name] = getattr(m, f.name)
    out["vocab_first"], out["vocab_last"] = _ends_by_id(vocab, limit)
    if isinstance(m, M.BPE):
        out["merges"] = len(m.merges)
        out["merges_first"] = [list(x) for x in m.merges[:limit]]
        out["merges_last"] = [list(x) for x in m.merges[-limit:]] if len(m.merges) > limit else []
    if isinstance(m, M.Unigram):
        out["scores_first"] = [[p, s] for p, s in m.vocab[:limit]]
    return out


def program_view(tok, names: dict[int, str]) -> dict:
    """What each runtime adds around encode(): the header prefix, then (HEAD only) the program."""
    prog = tok.post_processor
    ops = list(prog.ops) if isinstance(prog, R.PostProgram) else []

    def show(ids):
        return " ".join(names.get(i, f"<id {i}>") for i in ids)

    prefix = list(tok.prefix_ids)
    head_ops = ops or [None]
    head = [i for op in head_ops for i in ([None] if op is None else [op])]
    head_str = " ".join("$A" if i is None else names.get(i, f"<id {i}>") for i in head)
    return {
        "prefix_ids": prefix,
        "ops": [{"op": "SEQUENCE_A"} if op is None else {"op": "SPECIAL_TOKEN", "id": op} for op in ops],
        "mnn_3_6": (show(prefix) + " $A").strip(),
        "mnn_head": head_str.replace("$A", (show(prefix) + " $A").strip(), 1),
    }


class _Names:
    """`id_to_token(tok).get` without inverting a whole lazily read vocab (`describe` names a few ids)."""

    def __init__(self, tok):
        vocab = M.vocab_of(tok.model)
        self.by_id = vocab.by_id if isinstance(vocab, IdVocab) else id_to_token(tok)
        self.added = {t.id: t.content for t in tok.added_tokens} if isinstance(vocab, IdVocab) else {}

    def get(self, i, default=None):
        if isinstance(self.by_id, dict):
            return self.by_id.get(i, default)
        return self.by_id[i] if 0 <= i < len(self.by_id) else self.added.get(i, default)


def describe(tok, layout=None, limit: int = 5) -> dict:
    """Everything `inspect` shows, as one dict."""
    names = _Names(tok)
    ids = lambda xs: [{"id": i, "text": names.get(i)} for i in xs]  # noqa: E731
    out = {}
    if layout is not None:
        out["file"] = {"size": layout.size, "header_size": layout.header_size}
        out["sections"] = [{"name": s.name, "offset": s.offset, "size": s.size, "present": s.present,
                            "holds": s.doc} for s in layout.sections]
    out["header"] = {"special": ids(tok.special_ids), "stop": ids(tok.stop_ids), "prefix": ids(tok.prefix_ids)}
    out["normalizer"] = component(tok.normalizer)
    out["pre_tokenizer"] = component(tok.pre_tokenizer)
    out["model"] = model_summary(tok.model, limit)
    out["decoder"] = component(tok.decoder)
    out["post_processor"] = component(tok.post_processor)
    out["post_processing"] = program_view(tok, names)
    out["added_tokens"] = [dataclasses.asdict(t) for t in tok.added_tokens]
    chat = tok.chat
    out["chat"] = {"template_chars": len(chat.text), "template_head": chat.text.splitlines()[:limit],
                   "bos_token": chat.bos_token, "eos_token": chat.eos_token,
                   "clean_up_tokenization_spaces": chat.clean_up_tokenization_spaces}
    out["tables"] = _tables(tok.normalizer)
    out["warnings"] = list(layout.warnings) if layout is not None else []
    return out


def _tables(n, acc=None) -> list:
    acc = [] if acc is None else acc
    if n is None:
        return acc
    for child in getattr(n, "normalizers", ()):
        _tables(child, acc)
    for name in ("entries", "nfd_table"):
        t = getattr(n, name, None)
        if t:
            acc.append({"normalizer": n.kind, "field": name, "entries": len(t),
                        "bytes": 4 + sum(6 + len(s.encode()) for _, s in t), **identify(t)})
    return acc


def identify(entries) -> dict:
    """Which of the Unicode tables this tool builds (`unicode.ucd`: the reference's version)
    `entries` is (files do not record the version)."""
    have = dict(entries)
    best = None
    for form in FORMS:
        if form == "NFKD":
            continue  # no lowering writes it
        ref = dict(table(form))
        diff = sum(1 for cp in have.keys() | ref.keys() if have.get(cp) != ref.get(cp))
        if best is None or diff < best[1]:
            best = (form, diff)
    form, diff = best
    return {"closest_form": form, "unicode_version_here": ucd.VERSION, "unicode_data_here": ucd.data_version(),
            "differences_from_it": diff}


def section(tok, layout, name: str):
    """One section in full, for `inspect --section`."""
    if name == "vocab":
        return [[i, t] for t, i in sorted(M.vocab_of(tok.model).items(), key=lambda kv: kv[1])]
    if name == "merges":
        return [list(m) for m in getattr(tok.model, "merges", ())]
    if name == "scores" and isinstance(tok.model, M.Unigram):
        return [[i, p, s] for i, (p, s) in enumerate(tok.model.vocab)]
    if name in ("normalizer", "pre_tokenizer", "decoder", "post_processor"):
        return component(getattr(tok, name), full=True)
    if name == "added_tokens":
        return [dataclasses.asdict(t) for t in tok.added_tokens]
    if name == "chat_template":
        return tok.chat.text
    if name == "header":
        return describe(tok, layout)["header"]
    raise KeyError(name)


SECTIONS = ("header", "normalizer", "pre_tokenizer", "vocab", "merges", "scores", "decoder",
            "added_tokens", "chat_template", "post_processor")
