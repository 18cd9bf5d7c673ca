"""IR -> HF `tokenizer.json`, plus the `tokenizer_config.json` and `generation_config.json` beside it.

The inverse of `readers/hf_json.py`.  Components are written from their dataclass fields (field
name = JSON key, `kind` = `"type"`, `"type"` first), in the one form current `tokenizers` writes:
`Pattern` as `{"String"|"Regex": ...}`, BPE merges as `[a, b]` pairs, Unigram vocab as
`[piece, score]`, vocab objects in id order, added tokens by id, Metaspace with `prepend_scheme`.
Truncation and padding are not in the IR and are written as null.

An IR lowered for MNN (or read from a `.mtok`) holds forms only MNN has: `lower.hf_equivalent`
rewrites them into HF components doing what the runtime does, and every function here writes its
result (a form it leaves, e.g. an `Mnn*` component, is an `UnsupportedError`)."""

from __future__ import annotations

import base64
import json
from dataclasses import fields
from pathlib import Path

from ..errors import UnsupportedError
from ..io import atomic_write
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import models as M
from ..ir import processors as R
from ..ir.walk import CHILDREN
from ..lower.hf_equivalent import added_with_specials, hf_equivalent

VERSION = "1.0"
TOP_LEVEL = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
             "post_processor", "decoder", "model")
TOKENIZER_CLASS = "PreTrainedTokenizerFast"  # loads tokenizer.json as written, in transformers 4 and 5


# ---------------------------------------------------------------- IR -> JSON values

def to_tokenizer_json(tok: Tokenizer) -> dict:
    """The `tokenizer.json` object for `tok` (MNN-only forms rewritten by `hf_equivalent`)."""
    tok = hf_equivalent(tok)
    return {**_everything_but_the_model(tok), "model": _model(tok.model)}


def _everything_but_the_model(tok: Tokenizer) -> dict:
    """The top-level keys before "model" (the last one), for an IR already `hf_equivalent`."""
    out = dict.fromkeys(TOP_LEVEL[:-1])
    out["version"] = VERSION
    out["added_tokens"] = [_added_token(t) for t in sorted(tok.added_tokens, key=lambda t: t.id)]
    for family in ("normalizer", "pre_tokenizer", "post_processor", "decoder"):
        out[family] = _component(getattr(tok, family), family, f"$.{family}")
    return out


def _added_token(t: AddedToken) -> dict:
    return {f.name: getattr(t, f.name) for f in fields(t)}


def _component(obj, family: str, jp: str):
    if obj is None:
        return None
    kind = getattr(obj, "kind", type(obj).__name__)
    if kind.startswith("Mnn") or getattr(obj, "family", family) != family:
        raise UnsupportedError(f"{family} {kind} has no tokenizer.json form", json_path=jp)
    if isinstance(obj, R.TemplateProcessing):
        return _template(obj)
    out = {"type": kind}
    for f in fields(obj):
        value = getattr(obj, f.name)
        if f.name == CHILDREN[family]:
            out[f.name] = [_component(c, family, f"{jp}.{f.name}[{i}]") for i, c in enumerate(value)]
        elif isinstance(value, bytes) and not value:
            raise UnsupportedError(f"{family} {kind} with an empty {f.name}: tokenizers cannot load it",
                                   json_path=f"{jp}.{f.name}")
        else:
            out[f.name] = _value(value)
    return out


def _value(value):
    if isinstance(value, Pattern):
        return {"Regex" if value.regex else "String": value.value}
    if isinstance(value, bytes):  # Precompiled.precompiled_charsmap
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, tuple):  # BertProcessing / RobertaProcessing (token, id)
        return list(value)
    return value


def _template(p: R.TemplateProcessing) -> dict:
    def pieces(items):
        return [{"SpecialToken" if x.special else "Sequence": {"id": x.id, "type_id": x.type_id}} for x in items]

    return {"type": p.kind, "single": pieces(p.single), "pair": pieces(p.pair),
            "special_tokens": {s.id: {"id": s.id, "ids": list(s.ids), "tokens": list(s.tokens)}
                               for s in sorted(p.special_tokens, key=lambda s: s.id)}}


# Where `tokenizers` writes the vocab among a model's keys: after this key (default: last).
_VOCAB_AFTER = {"Unigram": "unk_id", "WordLevel": "type"}


def _model(m, bulk=lambda name, table, value: value()) -> dict:
    """The model object; `bulk(name, table, value)` gives the "vocab" and "merges" entries from the
    IR's `table` and `value()`, its JSON form (`TableText.text` puts text there)."""
    if isinstance(m, M.Unigram):
        vocab = bulk("vocab", m.vocab, lambda: [[piece, score] for piece, score in m.vocab])
    else:  # id order, as HF writes
        vocab = bulk("vocab", m.vocab, lambda: _by_id(m.vocab))
    after = _VOCAB_AFTER.get(m.kind)
    out = {"type": m.kind}
    if after == "type":
        out["vocab"] = vocab
    for f in fields(m):
        if f.name in ("vocab", "merges"):
            continue
        value = getattr(m, f.name)
        if f.name.startswith("mnn_"):
            if value:
                raise UnsupportedError(f"model {m.kind}.{f.name} has no tokenizer.json form", json_path="$.model")
            continue
        out[f.name] = value
        if f.name == after:
            out["vocab"] = vocab
    out.setdefault("vocab", vocab)
    if isinstance(m, M.BPE):
        out["merges"] = bulk("merges", m.merges, lambda: _pairs(m.merges))
    return out


# A vocabulary and its merges are most of a tokenizer: their JSON forms below are the IR's own tables
# when those already have that form (JSON writes a tuple as a list), rather than 100k+ new objects.

def _by_id(vocab) -> dict:
    """The vocabulary in id order, ties by token, as HF writes it: the dict itself when its ids
    already increase (a vocabulary as read)."""
    if type(vocab) is dict:
        ids = list(vocab.values())
        if all(a < b for a, b in zip(ids, ids[1:])):
            return vocab
    return dict(sorted(vocab.items(), key=lambda kv: (kv[1], kv[0])))


def _pairs(merges):
    """The merges as [a, b] lists (a merge that is not a pair raises, as unpacking it does)."""
    if type(merges) in (tuple, list) and all(type(p) in (tuple, list) and len(p) == 2 for p in merges):
        return merges
    return [[a, b] for a, b in merges]


def write_tokenizer_json(tok: Tokenizer) -> bytes:
    """`to_tokenizer_json` as UTF-8 bytes: 2-space indent like `tokenizers`' pretty form, non-ASCII
    kept as is, deterministic (no hash-ordered containers reach the output)."""
    return _dumps(to_tokenizer_json(tok), what="tokenizer.json").encode("utf-8")


def tokenizer_json_text(tok: Tokenizer, tables: TableText | None = None) -> str:
    """The same JSON without indentation, for `tokenizers.Tokenizer.from_str` in memory: Python's
    json module only uses its C encoder without `indent`, about 2.5x faster on a large vocabulary.
    With `tables`, the vocabulary and the merges (nearly all of the text) are serialized once for
    IRs that share them, as verification's projections of one source do (another normalizer, a
    model option patched)."""
    tok = hf_equivalent(tok)
    head = _dumps(_everything_but_the_model(tok), what="tokenizer.json", indent=None)
    model = _model(tok.model, (tables or TableText()).text)
    # json.dumps' own compact layout (", " and ": "), with the bulk entries' text as it is
    body = ", ".join(f"{_dumps(k, 'tokenizer.json', indent=None)}: "
                     f"{v if isinstance(v, _JsonText) else _dumps(v, 'tokenizer.json', indent=None)}"
                     for k, v in model.items())
    return f'{head[:-1]}, "model": {{{body}}}}}'


class _JsonText(str):
    """A value already serialized as compact JSON."""


class TableText:
    """The JSON text of the last vocabulary and merge table serialized, for `tokenizer_json_text`
    over IRs that share them.  The caller that serializes such IRs owns one (verification's
    attribution of one source), so the tables it holds live as long as that caller, not as long
    as the process.  Identity, not equality, is the key: the IR is never changed in place."""

    def __init__(self):
        self._last: dict[str, tuple[object, str]] = {}  # "vocab"/"merges" -> (the IR table, its JSON)

    def text(self, name: str, table, value) -> _JsonText:
        last = self._last.get(name)
        if last is None or last[0] is not table:
            last = self._last[name] = (table, _dumps(value(), what="tokenizer.json", indent=None))
        return _JsonText(last[1])


def _dumps(obj, what: str, sort_keys: bool = False, indent: int | None = 2) -> str:
    try:
        return json.dumps(obj, ensure_ascii=False, indent=indent, allow_nan=False, sort_keys=sort_keys)
    except ValueError as e:  # NaN or infinite float (a Unigram score, a dropout)
        raise UnsupportedError(f"{what}: {e}") from None


# ---------------------------------------------------------------- the files beside tokenizer.json

def to_tokenizer_config(tok: Tokenizer) -> dict:
    """`tokenizer_config.json`: templates (default first; a named list when there are others),
    bos/eos text, the cleanup flag, add_bos/add_eos when known, and `added_tokens_decoder`.

    `tokenizer_class` is always `PreTrainedTokenizerFast`, never the source's class: transformers
    then runs tokenizer.json as written, whereas a model class may rebuild parts of the pipeline
    (transformers 5's `LlamaTokenizer` swaps the Prepend/Replace normalizer for a Metaspace
    pre-tokenizer), which would undo what this file says."""
    chat, meta = tok.chat, tok.meta
    added = sorted(added_with_specials(tok), key=lambda t: t.id)
    cfg: dict = {
        "added_tokens_decoder": {str(t.id): {k: v for k, v in _added_token(t).items() if k != "id"} for t in added},
        "bos_token": chat.bos_token or None,
        "clean_up_tokenization_spaces": chat.clean_up_tokenization_spaces,
        "eos_token": chat.eos_token or None,
        "tokenizer_class": TOKENIZER_CLASS,
    }
    templates = ([(chat.name or "default", chat.text)] if chat.text else []) + list(chat.others)
    if len(templates) == 1 and not chat.others:
        cfg["chat_template"] = chat.text
    elif templates:
        cfg["chat_template"] = [{"name": n, "template": t} for n, t in templates]
    if meta.add_bos_token is not None:
        cfg["add_bos_token"] = meta.add_bos_token
    if meta.add_eos_token is not None:
        cfg["add_eos_token"] = meta.add_eos_token
    return cfg


def to_generation_config(tok: Tokenizer) -> dict | None:
    """`generation_config.json` with the stop ids as `eos_token_id` (an int when there is one), or
    None when there are none."""
    stops = list(dict.fromkeys(tok.stop_ids))
    if not stops:
        return None
    return {"eos_token_id": stops[0] if len(stops) == 1 else stops}


def write_hf_dir(tok: Tokenizer, out_dir) -> list[Path]:
    """Write `tokenizer.json`, `tokenizer_config.json` and (with stop ids) `generation_config.json`
    into `out_dir`, each atomically; returns the paths written."""
    out = Path(out_dir)
    tok = hf_equivalent(tok)  # once for both files; a second pass finds nothing to rewrite
    files = [("tokenizer.json", write_tokenizer_json(tok)),
             ("tokenizer_config.json", (_dumps(to_tokenizer_config(tok), "tokenizer_config.json", True)
                                        + "\n").encode("utf-8"))]
    gen = to_generation_config(tok)
    if gen is not None:
        files.append(("generation_config.json", (_dumps(gen, "generation_config.json", True) + "\n").encode("utf-8")))
    written = []
    for name, data in files:
        atomic_write(out / name, data)
        written.append(out / name)
    return written
