"""Legacy `tokenizer.txt` type 2 (BERT), spec section 5.

Layout after the three header lines: line 4 `<vocab_len>`, then one line per id holding the
standard base64 of the token's UTF-8 (same layout as type 1).

What MNN 3.4.1 does with it (`BertTokenizer`, tokenizer.cpp at tag 3.4.1):

* header special ids are split out first (as for every legacy type);
* the rest is cut into words: runs of ASCII letters and digits (lowercased with `tolower`), every
  other character alone (each non-ASCII UTF-8 character, each ASCII punctuation or control
  character); C-locale whitespace is dropped.  No Unicode lowercasing, no accent stripping, no
  control-character cleanup, no word-length limit;
* each word is looked up whole, else split greedily longest-first with a hard-coded `##` on
  continuation pieces; at a position nothing matches it emits the id of `[UNK]` (100 if the
  vocabulary has no `[UNK]`) after the pieces already found, and drops the rest of the word;
* `decode(id)` returns the raw token, `##` included.

Runtime-faithful IR (`read_bert_txt`): normalizer Sequence of 26 Replace (A-Z -> a-z), pre-tokenizer
Split(/[A-Za-z0-9]+|[^\\t\\n\\x0B\\f\\r ]/, Removed, invert) (each match is a word, the rest is
dropped), WordPiece(vocab, "[UNK]", "##", no limit), decoder Fuse (tokens joined as they are), header
specials as special added tokens, prefix ids as a TemplateProcessing.  One runtime behaviour has
no HF form and stays a note: the pieces found before an unmatchable position are kept (HF emits
only `[UNK]` for such a word).  Duplicate lines keep the first id.  Base64 is decoded as for
type 1 (lenient unless `strict`); missing lines, wrong counts and trailing content are
`FormatError`s naming the line.

Writing needs a WordPiece with the `##` prefix and dense ids.

Projection (`project_bert(ir)` == `read_bert_txt(write_bert_txt(ir))`), the chain of
`projection_steps_bert`: normalizer -> ASCII lowercasing (`legacy-bert-normalizer`); prefix-only
post-processor (`suffix-not-appended`); plain added tokens (`legacy-added-flags`); pre-tokenizer
`WORDS` (`legacy-bert-split`); WordPiece without word limit and with `[UNK]`
(`legacy-bert-wordpiece`); decoder Fuse (`legacy-bert-decode`); then the behaviour-neutral
`representation` (vocabulary = the lines with added tokens, first id winning, all added tokens
special, header special order, no chat template).  `legacy-bert-unk` is listed by
`losses_bert_txt` but has no step: the projection cannot express it."""

from __future__ import annotations

import base64
from dataclasses import dataclass, replace

from .. import losses as L
from ..errors import LossError, UnsupportedError
from ..ir import Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import normalizers as N
from ..ir import pre_tokenizers as P
from ..lower import Loss, Lowering
from ..mtok.constants import FileType
from ..mtok.header import read_header, write_header
from .tiktoken_txt import NO_LIMIT, Body, Chain, added_from_header, common_steps, dense_size, finish, header_lists, \
    memo_last, read_b64_lines, template_loss, token_names

UNK = "[UNK]"
UNK_FALLBACK_ID = 100
ASCII_LOWER = N.Sequence(tuple(N.Replace(Pattern(chr(c)), chr(c + 32)) for c in range(ord("A"), ord("Z") + 1)))
WORDS = P.Split(Pattern(r"[A-Za-z0-9]+|[^\t\n\x0B\f\r ]", regex=True), "Removed", invert=True)


@dataclass
class Plan:
    tokens: list[bytes]
    header: tuple
    chain: Chain
    notes: list[str]


def _model(vocab: dict[str, int]):
    return M.WordPiece(vocab, UNK, "##", NO_LIMIT)


def _first_ids(tokens: list[bytes], notes: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    bad = []
    for i, b in enumerate(tokens):
        try:
            out.setdefault(b.decode("utf-8"), i)
        except UnicodeDecodeError:
            bad.append(i)
    if bad:
        notes.append(f"{len(bad)} token(s) are not UTF-8 (e.g. id {bad[0]}): left out of the vocabulary "
                     "(no UTF-8 input can match them)")
    return out


def _describe_normalizer(n) -> str:
    if isinstance(n, N.BertNormalizer):
        parts = []
        if n.lowercase:
            parts.append("Unicode lowercasing")
        elif n.lowercase is False:
            parts.append("case (the source is cased, the runtime lowercases ASCII letters)")
        if n.strip_accents or (n.strip_accents is None and n.lowercase):
            parts.append("accent stripping")
        if n.clean_text:
            parts.append("control-character cleanup")
        if n.handle_chinese_chars:
            parts.append("CJK spacing")
        return ", ".join(parts)
    return f"normalizer {getattr(n, 'kind', 'none')}"


@memo_last
def _plan(tok) -> Plan:
    what = "type 2 (BERT)"
    m = tok.model
    if not isinstance(m, M.WordPiece):
        raise UnsupportedError(f"{what} is a WordPiece tokenizer; model {m.kind} is not one")
    if m.continuing_subword_prefix != "##":
        raise UnsupportedError(f"{what}: the runtime hard-codes the continuation prefix '##'; this WordPiece uses "
                               f"{m.continuing_subword_prefix!r}")
    n = dense_size(tok, m.vocab, what)
    tokens: list[bytes | None] = [None] * n
    for t, i in m.vocab.items():
        tokens[i] = t.encode("utf-8")
    notes: list[str] = []
    for t in tok.added_tokens:
        b = t.content.encode("utf-8")
        if tokens[t.id] is not None and tokens[t.id] != b:
            notes.append(f"id {t.id}: added token {t.content!r} replaces vocabulary token {tokens[t.id]!r:.30}")
        tokens[t.id] = b
    lw = Lowering("mnn-3.6")
    special, stop, prefix, suffix = header_lists(tok, lw)
    chain = Chain(tok)
    chain.losses.extend(lw.losses)
    if tok.normalizer != ASCII_LOWER:
        chain.step(L.LEGACY_BERT_NORMALIZER, f"normalizer {getattr(tok.normalizer, 'kind', None)}", "$.normalizer",
                   f"{what} only lowercases ASCII letters; not applied: {_describe_normalizer(tok.normalizer)}",
                   replace(chain.tok, normalizer=ASCII_LOWER), "\u00c9cole \u4e2d\u6587")
    common_steps(chain, suffix, what, normalizer=False)
    chain.step(L.LEGACY_BERT_SPLIT, f"pre_tokenizer {getattr(tok.pre_tokenizer, 'kind', None)}", "$.pre_tokenizer",
               f"{what} makes words of ASCII letter/digit runs and of every other character alone (so a non-ASCII "
               "letter splits a word: 'café' -> 'caf', 'é')", replace(chain.tok, pre_tokenizer=WORDS), "caf\u00e9")
    vocab = _first_ids(tokens, notes)
    wp = chain.tok.model
    if (wp.max_input_chars_per_word, wp.unk_token) != (NO_LIMIT, UNK):
        chain.step(L.LEGACY_BERT_WORDPIECE, "model WordPiece", "$.model",
                   f"{what} has no word-length limit (HF: words over {wp.max_input_chars_per_word} characters become "
                   f"{wp.unk_token}) and always uses {UNK!r} (else id {UNK_FALLBACK_ID}) as unk",
                   replace(chain.tok, model=replace(wp, unk_token=UNK, max_input_chars_per_word=NO_LIMIT)), "a" * 120)
    chain.step(L.LEGACY_BERT_DECODE, f"decoder {getattr(tok.decoder, 'kind', None)}", "$.decoder",
               f"{what} decodes each id to its raw token ('##' kept) and joins them without spaces or cleanup",
               replace(chain.tok, decoder=D.Fuse()), "playing")
    if UNK not in vocab:
        notes.append(f"no {UNK!r} token: the runtime emits id {UNK_FALLBACK_ID} for unknown words")
    chain.losses.append(Loss(L.LEGACY_BERT_UNK, "model WordPiece", "$.model",
                             f"{what} keeps the pieces found before a position nothing matches and then emits "
                             f"{UNK} (HF emits only {UNK} for the word)", "a\u2603"))
    added = added_from_header(special, {i: tokens[i] for i in special}, notes)
    canonical = finish(model=_model(vocab), normalizer=ASCII_LOWER, pre_tokenizer=WORDS, decoder=D.Fuse(),
                       header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: tokens[i] for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return Plan(tokens, (special, stop, prefix), chain, notes)


def write_bert_txt(tok, *, allow_lossy: bool = True) -> bytes:
    """The file.  `UnsupportedError` if type 2 cannot hold `tok`; with `allow_lossy=False`, `LossError`
    if the runtime would not do what `tok` does (`losses_bert_txt`)."""
    plan = _plan(tok)
    if not allow_lossy and (losses := plan.chain.losses + template_loss(tok, "type 2")):
        raise LossError(losses)
    body = [str(len(plan.tokens)).encode()] + [base64.b64encode(b) for b in plan.tokens]
    return write_header(FileType.BERT, plan.header, trailing_space=True) + b"\n".join(body) + b"\n"


def losses_bert_txt(tok) -> list[Loss]:
    """Every difference; `legacy-bert-unk` is always listed (the IR cannot express that behaviour)."""
    return _plan(tok).chain.losses + template_loss(tok, "type 2")


def projection_steps_bert(tok) -> list[tuple[str, object]]:
    return _plan(tok).chain.steps


def project_bert(tok):
    """The runtime-faithful IR of the file `write_bert_txt(tok)` writes (== reading it back)."""
    return _plan(tok).chain.tok


def read_bert_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    kind, header, offset = read_header(data, path, expect=FileType.BERT)
    body = Body(data, offset, path, "type 2")
    (n,) = body.ints("line 4 (vocabulary size)", 1)
    notes: list[str] = []
    tokens = read_b64_lines(body, n, strict, notes, allow_empty=True)
    vocab = _first_ids(tokens, notes)
    if len(vocab) < n:
        notes.append(f"{n - len(vocab)} id(s) repeat an earlier token or are not UTF-8: encode never produces them")
    if UNK not in vocab:
        notes.append(f"no {UNK!r} token: the runtime emits id {UNK_FALLBACK_ID} for unknown words")
    notes.append(f"the runtime keeps the pieces found before an unmatchable position, then {UNK}; "
                 f"this IR (HF WordPiece) gives only {UNK}")
    special, stop, prefix = header
    added = added_from_header(special, {i: tokens[i] for i in special if i < n}, notes)
    return finish(model=_model(vocab), normalizer=ASCII_LOWER, pre_tokenizer=WORDS, decoder=D.Fuse(),
                  header=header, added=added, notes=notes,
                  names=token_names({i: tokens[i] for i in prefix if i < n}), path=path, data=data)
