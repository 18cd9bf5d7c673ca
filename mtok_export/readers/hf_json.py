"""HF `tokenizer.json` -> IR (the component matrix of spec section 3).

Components are parsed by their dataclass fields: the JSON key is the field name, the default is
the HF default.  Legacy forms are accepted (untyped `model`, merges as "a b" strings or pairs,
Metaspace `add_prefix_space`/`str_rep`); an unknown `type` or a wrongly typed value is an
`UnsupportedError` naming its JSON path, never a silent drop."""

from __future__ import annotations

import base64
import binascii
import dataclasses
from itertools import chain
from operator import methodcaller

from ..errors import UnsupportedError
from ..ir import REGISTRIES, AddedToken, Pattern
from ..ir import models as M
from ..ir.pre_tokenizers import BEHAVIORS
from ..ir.processors import Piece, SpecialToken, TemplateProcessing
from ..ir.walk import CHILDREN
from .regex_check import check_json_patterns

_SCALARS = {"bool": bool, "int": int, "str": str, "float": (int, float)}


class Ctx:
    """Where we are: the file (for messages), notes for the user, and the (JSON path, regex) of every
    `{"Regex": ...}` pattern, checked together once the file is read (`regex_check`)."""

    def __init__(self, path: str):
        self.path = path
        self.notes: list[str] = []
        self.regexes: list[tuple[str, str]] = []

    def fail(self, json_path: str, msg: str):
        raise UnsupportedError(msg, json_path=json_path, path=self.path)


def parse_component(ctx: Ctx, family: str, data, jp: str):
    if data is None:
        return None
    if not isinstance(data, dict):
        ctx.fail(jp, f"{family} must be an object or null, got {type(data).__name__}")
    kind = data.get("type")
    if not isinstance(kind, str):
        ctx.fail(f"{jp}.type", f"{family} type must be a string, got {kind!r:.40}")
    cls = REGISTRIES[family].get(kind)
    if cls is None or kind.startswith("Mnn"):
        known = ", ".join(sorted(k for k in REGISTRIES[family] if not k.startswith("Mnn")))
        ctx.fail(f"{jp}.type", f"unknown {family} type {kind!r} (known: {known})")
    data = _legacy(kind, family, data)
    if kind == "TemplateProcessing":
        return _template(ctx, data, jp)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        value, fp = data[f.name], f"{jp}.{f.name}"
        if f.name == CHILDREN.get(family):
            if not isinstance(value, list):
                ctx.fail(fp, "must be a list")
            kwargs[f.name] = tuple(_child(ctx, family, c, f"{fp}[{i}]") for i, c in enumerate(value))
        else:
            kwargs[f.name] = _value(ctx, cls, f, value, fp)
    unknown = set(data) - {f.name for f in dataclasses.fields(cls)} - {"type"}
    if unknown:
        ctx.notes.append(f"{jp}: ignored unknown key(s) {sorted(unknown)} of {kind}")
    return cls(**kwargs)


def _child(ctx: Ctx, family: str, data, jp: str):
    """A `Sequence` member: a component, never null (null means "no component" only at the top;
    HF `tokenizers` rejects a null member in every family's Sequence, so we do too)."""
    if data is None:
        ctx.fail(jp, f"a {family} Sequence member must be an object, got null")
    return parse_component(ctx, family, data, jp)


def _legacy(kind: str, family: str, data: dict) -> dict:
    """Rewrite the pre-0.14 Metaspace form (`add_prefix_space`, `str_rep`) into the current one."""
    if kind == "Metaspace":
        data = dict(data)
        if "str_rep" in data:
            data.setdefault("replacement", data.pop("str_rep"))
        if "add_prefix_space" in data:
            aps = data.pop("add_prefix_space")
            data.setdefault("prepend_scheme", "always" if aps else "never")
    return data


def _value(ctx: Ctx, cls, f, value, fp: str):
    ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    if f.name == "pattern":
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ("String", "Regex"):
            (k, v), = value.items()
            if isinstance(v, str):
                if k == "Regex":
                    ctx.regexes.append((fp, v))
                return Pattern(v, regex=k == "Regex")
        ctx.fail(fp, 'pattern must be {"String": ...} or {"Regex": ...}')
    if f.name == "precompiled_charsmap":
        if value is None:
            return b""
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, TypeError):
            ctx.fail(fp, "precompiled_charsmap is not valid base64")
    if ann.startswith("tuple[str, int]"):
        if (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
                and type(value[1]) is int):
            return (value[0], value[1])
        ctx.fail(fp, "must be a [token, id] pair")
    base = ann.split("|")[0].strip()
    if value is None and "None" in ann:
        return None
    want = _SCALARS.get(base)
    if want is None or not isinstance(value, want) or (base == "int" and isinstance(value, bool)):
        ctx.fail(fp, f"must be {ann}, got {value!r:.60}")
    if f.name in ("behavior",):
        if value not in BEHAVIORS:
            ctx.fail(fp, f"unknown behavior {value!r} (known: {', '.join(BEHAVIORS)})")
    if f.name == "prepend_scheme" and value not in ("always", "first", "never"):
        ctx.fail(fp, f"unknown prepend_scheme {value!r}")
    return float(value) if base == "float" else value


def _template(ctx: Ctx, data: dict, jp: str) -> TemplateProcessing:
    def pieces(key):
        items = data.get(key)
        if items is None:
            return ()
        if not isinstance(items, list):
            ctx.fail(f"{jp}.{key}", f"must be a list of pieces, got {items!r:.40}")
        out = []
        for i, item in enumerate(items):
            ip = f"{jp}.{key}[{i}]"
            if not (isinstance(item, dict) and len(item) == 1):
                ctx.fail(ip, 'must be {"Sequence": ...} or {"SpecialToken": ...}')
            (k, v), = item.items()
            if k not in ("Sequence", "SpecialToken") or not isinstance(v, dict) or not isinstance(v.get("id"), str):
                ctx.fail(ip, 'must be {"Sequence": {"id": "A"|"B"}} or {"SpecialToken": {"id": name}}')
            if k == "Sequence" and v["id"] not in ("A", "B"):
                ctx.fail(ip, f"sequence id must be A or B, got {v['id']!r}")
            if type(v.get("type_id", 0)) is not int:
                ctx.fail(ip, "type_id must be an integer")
            out.append(Piece(v["id"], v.get("type_id", 0), special=k == "SpecialToken"))
        return tuple(out)

    specials = []
    raw = data.get("special_tokens") or {}
    if not isinstance(raw, dict):
        ctx.fail(f"{jp}.special_tokens", "must be an object")
    for name, v in sorted(raw.items()):
        sp = f"{jp}.special_tokens[{name!r}]"
        if not (isinstance(v, dict) and isinstance(v.get("id", name), str) and isinstance(v.get("ids"), list)
                and isinstance(v.get("tokens"), list) and all(type(i) is int and i >= 0 for i in v["ids"])
                and all(isinstance(t, str) for t in v["tokens"])):
            ctx.fail(sp, "must be {id: str, ids: [non-negative int], tokens: [str]}")
        specials.append(SpecialToken(v.get("id", name), tuple(v["ids"]), tuple(v["tokens"])))
    tp = TemplateProcessing(single=pieces("single"), pair=pieces("pair"), special_tokens=tuple(specials))
    for piece in tp.single + tp.pair:
        if piece.special and piece.id not in {s.id for s in specials}:
            ctx.fail(jp, f"template names special token {piece.id!r} missing from special_tokens")
    return tp


# ---------------------------------------------------------------- models

def _model_kind(data: dict) -> str:
    """HF deserializes an untyped model by trying BPE, WordPiece, WordLevel, Unigram in order."""
    if "type" in data:
        return data["type"]
    if "merges" in data:
        return "BPE"
    if isinstance(data.get("vocab"), list):
        return "Unigram"
    if "continuing_subword_prefix" in data or "max_input_chars_per_word" in data:
        return "WordPiece"
    return "WordLevel"


def parse_model(ctx: Ctx, data, jp: str = "$.model"):
    if not isinstance(data, dict):
        ctx.fail(jp, "model must be an object")
    kind = _model_kind(data)
    if not isinstance(kind, str) or kind not in REGISTRIES["model"]:
        ctx.fail(f"{jp}.type", f"unknown model type {kind!r} (known: BPE, WordPiece, WordLevel, Unigram)")
    cls = REGISTRIES["model"][kind]
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in ("vocab", "merges", "mnn_byte_level") or f.name not in data:
            continue
        kwargs[f.name] = _value(ctx, cls, f, data[f.name], f"{jp}.{f.name}")
    vocab = data.get("vocab")
    if kind == "Unigram":
        if not isinstance(vocab, list):
            ctx.fail(f"{jp}.vocab", "Unigram vocab must be a list of [piece, score]")
        for i, e in enumerate(vocab):
            if not (isinstance(e, list) and len(e) == 2 and isinstance(e[0], str)
                    and type(e[1]) in (int, float)):
                ctx.fail(f"{jp}.vocab[{i}]", f"must be a [piece, score] pair, got {e!r:.60}")
        unk = kwargs.get("unk_id")
        if unk is not None and not 0 <= unk < len(vocab):
            ctx.fail(f"{jp}.unk_id", f"unk_id {unk} is outside the vocab of {len(vocab)}")
        try:
            return M.Unigram(vocab=tuple((p, float(s)) for p, s in vocab), **kwargs)
        except OverflowError:  # an integer score beyond the float range
            i = next(i for i, (_, s) in enumerate(vocab) if abs(s) > 1e308)
            ctx.fail(f"{jp}.vocab[{i}][1]", "score is out of the float range")
    if not isinstance(vocab, dict) or set(map(type, vocab.values())) - {int}:
        ctx.fail(f"{jp}.vocab", f"{kind} vocab must be an object token -> integer id")
    if kind == "BPE":
        kwargs["merges"] = _merges(ctx, data.get("merges") or [], f"{jp}.merges")
        _merges_in_vocab(ctx, kwargs["merges"], vocab, kwargs.get("continuing_subword_prefix") or "", f"{jp}.merges")
    return cls(vocab=vocab, **kwargs)


def _merges_in_vocab(ctx: Ctx, merges: tuple, vocab: dict, prefix: str, jp: str) -> None:
    """Each merge names two tokens of the vocabulary and makes one (HF's BPE builder refuses the file
    otherwise; the runtime would look up ids that do not exist).  Whole-list set checks first."""
    n = len(prefix)
    made = map("".join, merges) if not n else (a + b[n:] if b.startswith(prefix) else a + b for a, b in merges)
    if set(chain.from_iterable(merges)) <= vocab.keys() and set(made) <= vocab.keys():
        return
    for i, (a, b) in enumerate(merges):
        result = a + (b[n:] if n and b.startswith(prefix) else b)
        for t in (a, b, result):
            if t not in vocab:
                ctx.fail(f"{jp}[{i}]", f"merge {a!r} {b!r} names {t!r}, which is not in the vocab")


def _merges(ctx: Ctx, merges, jp: str) -> tuple:
    if not isinstance(merges, list):
        ctx.fail(jp, "merges must be a list")
    legacy = bool(merges) and isinstance(merges[0], str)
    if legacy and merges[0].startswith("#version"):
        merges = merges[1:]  # merges.txt header carried over, as HF skips it
    # Checked on whole lists with C-level map/set (no Python call per merge: 150k merges are common).
    try:
        if legacy:
            out = tuple(map(tuple, map(methodcaller("split", " "), merges)))  # "a b", split as HF splits it
            ok = True  # a non-string raised AttributeError
        elif set(map(type, merges)) <= {list}:
            out = tuple(map(tuple, merges))
            ok = set(map(type, chain.from_iterable(out))) <= {str}
        else:
            out, ok = (), False
        if ok and set(map(len, out)) <= {2}:
            return out
    except (TypeError, AttributeError):
        pass
    i = next((i for i, m in enumerate(merges) if not _is_pair(m) or isinstance(m, str) != legacy), 0)
    ctx.fail(f"{jp}[{i}]", f"merge must be 'a b' or [a, b] (one form for all), got {merges[i]!r:.60}")


def _is_pair(m) -> bool:
    parts = m.split(" ") if isinstance(m, str) else m
    return isinstance(parts, list) and len(parts) == 2 and all(isinstance(x, str) for x in parts)


def parse_added_tokens(ctx: Ctx, data, jp: str = "$.added_tokens") -> tuple[AddedToken, ...]:
    if data is None:
        return ()
    if not isinstance(data, list):
        ctx.fail(jp, "added_tokens must be a list")
    out = []
    for i, t in enumerate(data):
        tp = f"{jp}[{i}]"
        if not isinstance(t, dict) or type(t.get("id")) is not int or not isinstance(t.get("content"), str):
            ctx.fail(tp, "added token needs an integer id and a string content")
        if t["id"] < 0:
            ctx.fail(f"{tp}.id", f"id {t['id']} is negative")
        flags = {}
        for k in ("single_word", "lstrip", "rstrip", "normalized", "special"):
            v = t.get(k, k == "normalized" and not t.get("special", False))
            if not isinstance(v, bool):
                ctx.fail(f"{tp}.{k}", "must be a boolean")
            flags[k] = v
        out.append(AddedToken(t["id"], t["content"], **flags))
    return tuple(out)


def parse_tokenizer_json(data, path: str) -> tuple[dict, list[str]]:
    """The five components and the added tokens of a parsed tokenizer.json, plus reader notes."""
    ctx = Ctx(path)
    if not isinstance(data, dict) or "model" not in data:
        ctx.fail("$", "not a tokenizer.json: no 'model'")
    parts = {family: parse_component(ctx, family, data.get(family), f"$.{family}") for family in CHILDREN}
    parts["model"] = parse_model(ctx, data["model"])
    parts["added_tokens"] = parse_added_tokens(ctx, data.get("added_tokens"))
    check_json_patterns(ctx.regexes, path)
    return parts, ctx.notes
