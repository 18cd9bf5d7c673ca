"""MNN-only forms -> HF components doing what the runtime does: the pass every HF output of an IR
runs first (`writers.hf_json` writes its result; verification's projections hand it to `tokenizers`).

An IR lowered for MNN (or read from a `.mtok`) holds forms only MNN has.  `hf_equivalent` rewrites
them into HF components that do what the MNN runtime does (spec section 2):

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
* `ignore_merges`' exact form (`whole_words`: three pre-tokenizer steps, marked merges and aliases) ->
  the BPE's own `ignore_merges`, which looks up every vocab word as the form looks up those the
  merges miss.
* Header special ids that are not added tokens become special added tokens (the runtime splits
  them out before anything else); header stop ids become `generation_config.json` eos ids.
* An empty `bos_token` with a BOS in the header prefix and a template that renders `bos_token`
  (what the lowering writes for Gemma-style templates) gets the prefix's BOS text back.

What the HF side still does differently from the runtime is the runtime's own business (decoder
Strip on first/last token, WordPiece cleanup always on, special-token matching in list order, ...):
the components are HF's, so HF semantics apply to them."""

from __future__ import annotations

import heapq
import re
from dataclasses import replace

from ..errors import UnsupportedError
from ..ir import AddedToken, Pattern, Tokenizer
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..mtok.constants import TABLE_CONTROL_TO_SPACE
from .chat_template import without_empty_definition
from . import whole_words
from .models import gap_filled

# Spec 2.3.2: what the code-6 normalizer turns into one ASCII space whenever its table is non-empty.
CONTROL_TO_SPACE = tuple(sorted(TABLE_CONTROL_TO_SPACE))


def hf_equivalent(tok: Tokenizer) -> Tokenizer:
    """`tok` with every MNN-only form replaced by HF components doing what the runtime does (see the
    module docstring).  An IR without such forms comes back equal to itself."""
    tok = whole_words.undo(tok)
    model, pre = tok.model, tok.pre_tokenizer
    if isinstance(model, M.BPE) and model.mnn_byte_level:
        pre = _append_byte_level(pre)
        model = replace(model, mnn_byte_level=False)
    added = added_with_specials(tok)
    return replace(tok, normalizer=_normalizer(tok.normalizer, "$.normalizer"), pre_tokenizer=pre,
                   model=_added_ids_kept(model, added), post_processor=_post_processor(tok), prefix_ids=(),
                   added_tokens=added, chat=_chat_with_bos(tok))


def _added_ids_kept(model, added):
    """A BPE whose added tokens outside its vocab do not follow it densely (ChatGLM3's config-declared
    [gMASK] 64790 after [MASK] 64789, ...): `tokenizers` gives such a token the next free id, not its
    own, so they join the vocab at their ids and the ids between are filled with unreachable entries
    (`lower.models.gap_filled`), as the `.mtok` lowering writes them."""
    if not isinstance(model, M.BPE):
        return model
    outside = sorted((t.id, t.content) for t in added if t.content not in model.vocab)
    n = len(model.vocab)
    if [i for i, _ in outside] == list(range(n, n + len(outside))):
        return model  # tokenizers numbers them so itself
    vocab = {**model.vocab, **{c: i for i, c in outside}}
    return replace(model, vocab={**vocab, **gap_filled(vocab, {t.content for t in added})})


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
    if bos is None:
        return chat
    # the lowering's `{% set bos_token = '' %}` (the runtime's empty field) would empty it again
    return replace(chat, bos_token=bos, text=without_empty_definition(chat.text, "bos_token"))


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


def added_with_specials(tok: Tokenizer) -> tuple[AddedToken, ...]:
    """Header special ids that no added token carries become special added tokens; ids without text
    are skipped, as the runtime skips them (spec 1, `cache_special_tokens`)."""
    missing = set(tok.special_ids) - {t.id for t in tok.added_tokens}
    if not missing:
        return tok.added_tokens
    names = _token_names(tok, missing, "$.special_ids", strict=False)
    extra = tuple(AddedToken(i, names[i], normalized=False, special=True) for i in sorted(names) if names[i])
    return tok.added_tokens + extra
