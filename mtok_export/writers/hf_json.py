"""IR -> HF `tokenizer.json`, plus the `tokenizer_config.json` and `generation_config.json` beside it.

The inverse of `readers/hf_json.py`.  Components are written from their dataclass fields (field
name = JSON key, `kind` = `"type"`, `"type"` first), in the one form current `tokenizers` writes:
`Pattern` as `{"String"|"Regex": ...}`, BPE merges as `[a, b]` pairs, Unigram vocab as
`[piece, score]`, vocab objects in id order, added tokens by id, Metaspace with `prepend_scheme`.
Truncation and padding are not in the IR and are written as null.

An IR lowered for MNN (or read from a `.mtok`) holds forms only MNN has.  `hf_equivalent` first
rewrites them into HF components that do what the MNN runtime does (spec section 2):

* `MnnCodepointMap` (code 6) -> a `Sequence` of literal `Replace` normalizers, one per code point,
  including the runtime's control/zero-width -> space rule (spec 2.3.2), ordered so that no
  Replace rewrites the output of another (a cycle is an `UnsupportedError`).  HF has no
  per-code-point map: a `Precompiled` charsmap looks the same but is not, because HF replaces a
  whole grapheme of under 6 bytes by the mapping of its first code point (`"Ａ\\u0301"` -> `"A"`,
  where the runtime gives `"A\\u0301"`).  The Replace chain is exact; it costs one pass per entry.
* `MnnBertNormalizer` (codes 5, 7) -> `BertNormalizer` with an explicit `strip_accents` (false
  without an NFD table: the runtime then never strips).  Known differences (spec 3.1): HF's
  clean_text also removes Cf and Co and maps all White_Space (U+2028, ...) to spaces, HF lowercases fully
  (`İ`), HF strips Mn only where the runtime strips Mn/Mc/Me, and HF decomposes with its own NFD.
* `BPE.mnn_byte_level` (the model maps raw bytes itself) -> a `ByteLevel(use_regex=false)`
  pre-tokenizer appended after the existing ones: it byte-maps each pre-token exactly where the
  runtime does.  (A ByteLevel *normalizer* would map before the pre-tokenizer splits, which the
  runtime does not.)
* `MnnPostProgram` and the header `prefix_ids` -> `TemplateProcessing`: HEAD applies the program
  around prefix + ids (spec 2.9), so `single` is the program with each op 0 written as the prefix
  tokens and `$A` (for lowered files: prefix, `$A`, suffix); special tokens are named by their
  text.  `pair` is not in the format: it gets BertProcessing's shape (leading tokens once, the
  rest after each sequence, the second one with type_id 1).  MNN 3.6 ignores the program: this
  file follows HEAD, which is what the lowering planned for.
* Header special ids that are not added tokens become special added tokens (the runtime splits
  them out before anything else); header stop ids become `generation_config.json` eos ids.
* An empty `bos_token` with a BOS in the header prefix and a template that renders `bos_token`
  (what the lowering writes for Gemma-style templates) gets the prefix's BOS text back.

What the HF side still does differently from the runtime is the runtime's own business (decoder
Strip on first/last token, WordPiece cleanup always on, special-token matching in list order, ...):
the components are HF's, so HF semantics apply to them."""

from __future__ import annotations

import base64
import heapq
import json
import re
from dataclasses import fields, replace
from pathlib import Path

from ..errors import UnsupportedError
from ..io import atomic_write
from ..mtok.constants import TABLE_CONTROL_TO_SPACE
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..ir.walk import CHILDREN

VERSION = "1.0"
TOP_LEVEL = ("version", "truncation", "padding", "added_tokens", "normalizer", "pre_tokenizer",
             "post_processor", "decoder", "model")
TOKENIZER_CLASS = "PreTrainedTokenizerFast"  # loads tokenizer.json as written, in transformers 4 and 5

# Spec 2.3.2: what the code-6 normalizer turns into one ASCII space whenever its table is non-empty.
CONTROL_TO_SPACE = tuple(sorted(TABLE_CONTROL_TO_SPACE))


# ---------------------------------------------------------------- MNN-only forms -> HF forms

def hf_equivalent(tok: Tokenizer) -> Tokenizer:
    """`tok` with every MNN-only form replaced by HF components doing what the runtime does (see the
    module docstring).  An IR without such forms comes back equal to itself."""
    model, pre = tok.model, tok.pre_tokenizer
    if isinstance(model, M.BPE) and model.mnn_byte_level:
        pre = _append_byte_level(pre)
        model = replace(model, mnn_byte_level=False)
    return replace(tok, normalizer=_normalizer(tok.normalizer, "$.normalizer"), pre_tokenizer=pre, model=model,
                   post_processor=_post_processor(tok), prefix_ids=(), added_tokens=_added_with_specials(tok),
                   chat=_chat_with_bos(tok))


_BOS_VARIABLE = re.compile(r"\bbos_token\b")


def _chat_with_bos(tok: Tokenizer):
    """The chat template with its `bos_token` back when the lowering left it empty (`bos-field-cleared`:
    the header prefix adds BOS and the template renders it first, so the runtime renders it empty and
    encode adds it once).  transformers tokenizes a rendered chat without the post-processor, so an
    empty bos_token would lose BOS there; BOS is the prefix's first special token (Gemma's `<bos>`)."""
    chat = tok.chat
    if chat.bos_token or not tok.prefix_ids or not any(_BOS_VARIABLE.search(t) for t in
                                                       (chat.text, *(t for _, t in chat.others))):
        return chat
    specials = set(tok.special_ids) | {t.id for t in tok.added_tokens if t.special}
    names = _token_names(tok, set(tok.prefix_ids), "$.prefix_ids", strict=False)
    bos = next((names[i] for i in tok.prefix_ids if i in specials and i in names), None)
    return chat if bos is None else replace(chat, bos_token=bos)


def _normalizer(n, jp: str):
    if isinstance(n, N.Sequence):
        kids = tuple(_normalizer(c, f"{jp}.normalizers[{i}]") for i, c in enumerate(n.normalizers))
        if kids == n.normalizers:
            return n
        return N.Sequence(tuple(k for k in kids if k is not None))
    if isinstance(n, N.CodepointMap):
        return codepoint_map_normalizer(n.entries, jp)
    if isinstance(n, N.MnnBertNormalizer):
        return N.BertNormalizer(n.clean_text, n.handle_chinese_chars,
                                bool(n.strip_accents and n.nfd_table is not None), n.lowercase)
    return n


def codepoint_map_normalizer(entries, json_path: str = "$.normalizer") -> N.Sequence | None:
    """The HF form of a code-6 table: one literal `Replace` per code point, the control -> space rule
    included, ordered so that a Replace never runs over what an earlier one wrote.  None for an
    empty table (a no-op in the runtime, control rule included)."""
    if not entries:
        return None
    mapping = dict(entries)
    mapping.update(dict.fromkeys(CONTROL_TO_SPACE, " "))  # the rule wins over the table (spec 2.3.2)
    mapping = {cp: rep for cp, rep in mapping.items() if rep != chr(cp)}
    order = replace_order(mapping, json_path)
    return N.Sequence(tuple(N.Replace(Pattern(chr(cp)), mapping[cp]) for cp in order))


def replace_order(mapping: dict[int, str], json_path: str = "$.normalizer") -> list[int]:
    """Code points in an order where every key whose character appears in the replacement of key k
    comes before k, so its Replace has already run when k's output appears; smallest code point
    first among the ready ones (deterministic).  Replacements that contain each other cannot be
    ordered: `UnsupportedError`."""
    users: dict[int, list[int]] = {}
    pending = {}
    for cp, rep in mapping.items():
        deps = {d for d in map(ord, rep) if d != cp and d in mapping}
        pending[cp] = len(deps)
        for d in deps:
            users.setdefault(d, []).append(cp)
    ready = [cp for cp, n in pending.items() if n == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        cp = heapq.heappop(ready)
        order.append(cp)
        for u in users.get(cp, ()):
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(mapping):
        stuck = sorted(cp for cp, n in pending.items() if n)[:4]
        raise UnsupportedError("normalizer MnnCodepointMap: the replacements of "
                               + ", ".join(f"U+{cp:04X}" for cp in stuck)
                               + " contain each other's code points; a chain of HF Replace normalizers "
                               "cannot apply them simultaneously", json_path=json_path)
    return order


def _append_byte_level(pre):
    bl = P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)
    if pre is None:
        return bl
    if isinstance(pre, P.Sequence):
        return P.Sequence((*pre.pretokenizers, bl))
    return P.Sequence((pre, bl))


def _post_processor(tok: Tokenizer):
    p, prefix = tok.post_processor, tuple(tok.prefix_ids)
    if isinstance(p, R.PostProgram):
        ops = p.ops or (R.SEQUENCE_A,)  # zero ops: the runtime reads [SEQUENCE_A] (spec 2.9)
    elif not prefix:
        return p
    elif p is None:
        ops = (R.SEQUENCE_A,)
    else:
        raise UnsupportedError(f"header prefix ids {list(prefix)} together with post_processor {p.kind}: "
                               "no runtime applies both", json_path="$.post_processor")
    if ops == (R.SEQUENCE_A,) and not prefix:
        return None
    # HEAD applies the program to prefix + ids, so every op 0 stands for prefix + $A.
    ids = [i for op in ops for i in (prefix if op is R.SEQUENCE_A else (op,))]
    names = _token_names(tok, set(ids), "$.post_processor")
    by_name: dict[str, int] = {}
    for i in ids:
        if by_name.setdefault(names[i], i) != i:
            raise UnsupportedError(f"ids {by_name[names[i]]} and {i} are both {names[i]!r}; TemplateProcessing "
                                   "names special tokens by text", json_path="$.post_processor")
    single = []
    for op in ops:
        if op is R.SEQUENCE_A:
            single += [R.Piece(names[i], 0, special=True) for i in prefix] + [R.Piece("A")]
        else:
            single.append(R.Piece(names[op], 0, special=True))
    # `pair` is not in the format: BertProcessing's shape, the second sequence and what follows the
    # first one repeated with type_id 1 ([CLS] $A [SEP] -> [CLS] $A [SEP] $B:1 [SEP]:1).
    first = next((k for k, piece in enumerate(single) if not piece.special), len(single))
    pair = single + [R.Piece(x.id if x.special else "B", 1, x.special) for x in single[first:]]
    return R.TemplateProcessing(
        single=tuple(single), pair=tuple(pair),
        special_tokens=tuple(R.SpecialToken(name, (i,), (name,)) for name, i in sorted(by_name.items())))


def _token_names(tok: Tokenizer, ids, json_path: str, strict: bool = True) -> dict[int, str]:
    """id -> token text, from the added tokens first, then the model vocab."""
    names: dict[int, str] = {}
    for t in tok.added_tokens:
        if t.id in ids:
            names.setdefault(t.id, t.content)
    missing = set(ids) - names.keys()
    if missing:
        for text, i in sorted(M.vocab_of(tok.model).items(), key=lambda kv: kv[1]):
            if i in missing:
                names.setdefault(i, text)
    if strict and set(ids) - names.keys():
        raise UnsupportedError(f"token id(s) {sorted(set(ids) - names.keys())[:8]} are neither added tokens "
                               "nor in the model vocab", json_path=json_path)
    return names


def _added_with_specials(tok: Tokenizer) -> tuple[AddedToken, ...]:
    """Header special ids that no added token carries become special added tokens; ids without text
    are skipped, as the runtime skips them (spec 1, `cache_special_tokens`)."""
    missing = set(tok.special_ids) - {t.id for t in tok.added_tokens}
    if not missing:
        return tok.added_tokens
    names = _token_names(tok, missing, "$.special_ids", strict=False)
    extra = tuple(AddedToken(i, names[i], normalized=False, special=True) for i in sorted(names) if names[i])
    return tok.added_tokens + extra


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
    IR's `table` and `value()`, its JSON form (`_serialized_once` puts text there)."""
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


def tokenizer_json_text(tok: Tokenizer) -> str:
    """The same JSON without indentation, for `tokenizers.Tokenizer.from_str` in memory: Python's
    json module only uses its C encoder without `indent`, about 2.5x faster on a large vocabulary.
    The vocabulary and the merges (nearly all of the text) are serialized once for consecutive IRs
    that share them, as verification's projections of one source do (another normalizer, a model
    option patched)."""
    tok = hf_equivalent(tok)
    head = _dumps(_everything_but_the_model(tok), what="tokenizer.json", indent=None)
    model = _model(tok.model, _serialized_once)
    # json.dumps' own compact layout (", " and ": "), with the bulk entries' text as it is
    body = ", ".join(f"{_dumps(k, 'tokenizer.json', indent=None)}: "
                     f"{v if isinstance(v, _JsonText) else _dumps(v, 'tokenizer.json', indent=None)}"
                     for k, v in model.items())
    return f'{head[:-1]}, "model": {{{body}}}}}'


class _JsonText(str):
    """A value already serialized as compact JSON."""


# name -> (the IR table, its JSON): identity, not equality, is the key (the IR is never changed in place)
_last_bulk: dict[str, tuple[object, str]] = {}


def _serialized_once(name: str, table, value) -> _JsonText:
    last = _last_bulk.get(name)
    if last is None or last[0] is not table:
        last = _last_bulk[name] = (table, _dumps(value(), what="tokenizer.json", indent=None))
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
    added = sorted(_added_with_specials(tok), key=lambda t: t.id)
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
