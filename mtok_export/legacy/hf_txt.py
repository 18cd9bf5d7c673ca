"""Legacy `tokenizer.txt` type 3 (HUGGINGFACE: byte-level BPE), spec section 5.

Layout after the three header lines: line 4 `<vocab_len> <merge_len>`, then `vocab_len` lines
holding each token as its raw GPT-2 byte-level string (not base64; line index = id), then
`merge_len` lines `left right` (rank = line index).  MNN's own writer copies merges.txt verbatim,
`#version` line included (the runtime reads it as an inert merge); this writer writes only the
merges, so rank = merge index.

What MNN 3.4.1 does with it (`HuggingfaceTokenizer`, tokenizer.cpp at tag 3.4.1):

* header special ids are split out first (as for every legacy type);
* each chunk is pre-tokenized by a fixed `std::regex` (ECMAScript, C locale, icase) over bytes,
  whatever the source's pattern was:
  `('s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n[:alpha:][:digit:]]?[[:alpha:]]+|[[:digit:]]| ?[^\\s[:alpha:][:digit:]]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`
  — Qwen's pattern with ASCII-only letters, digits and spaces: every non-ASCII byte counts as
  punctuation, digits are single, contractions match in any case;
* each piece's bytes are mapped to GPT-2 characters and merged by classic BPE (lowest rank first,
  leftmost on ties; no `ignore_merges`, no prefix space); a result missing from the vocabulary
  makes `encoder_.at` throw `std::out_of_range`, which aborts the process;
* `decode(id)` maps the line's characters back to bytes, dropping characters outside the map.

Runtime-faithful IR (`read_hf_txt`): BPE(vocab lines, merges) behind Sequence[Split(`RUNTIME_REGEX`,
Isolated), ByteLevel(use_regex=False)] with a ByteLevel decoder.  `RUNTIME_REGEX` is the Oniguruma
form of the C++ pattern on characters: ASCII classes spelled out, and the optional prefix of a
letter run limited to ASCII (on bytes it can only be a one-byte character in valid UTF-8, because
no match ends inside a multi-byte character).  HF runs it exactly as MNN 3.4.1 runs the file
(checked on the built-in corpus for GPT-2, RoBERTa, Whisper, Qwen-1 and Llama-3 vocabularies).  Header special ids become special added tokens
(content = the line's bytes, as `decode` gives them), the prefix ids a TemplateProcessing.
Duplicate vocabulary lines keep the first id, duplicate merges the first rank (as the runtime's
`emplace` does); a merge line without a space, or naming a token or result missing from the
vocabulary (the runtime would abort), is a `FormatError` naming the line, as are missing lines and
wrong counts.  Only a `#version` first merge line is skipped.

Writing needs a BPE whose tokens are all GPT-2 byte-level strings, a ByteLevel decoder, dense ids,
and a single-byte token for all 256 bytes (otherwise the runtime aborts on text holding the
missing byte: refused).  Added tokens are written as the byte-level string of their content, so
the runtime decodes (and so splits out) exactly that content.

Projection (`project_hf(ir)` == `read_hf_txt(write_hf_txt(ir))`), the chain of
`projection_steps_hf`: no normalizer (`legacy-normalizer`); prefix-only post-processor
(`suffix-not-appended`); plain added tokens (`legacy-added-flags`); no prefix space
(`prefix-space`); pre-tokenizer `RUNTIME_PRE` (`legacy-hf-regex`); no `ignore_merges`
(`ignore-merges`) and no other BPE options (`bpe-field`); duplicate merges keep their first rank
(`legacy-duplicate-merge`); then the behaviour-neutral `representation`: vocabulary = the lines
(added tokens as byte-level strings, first id winning), all added tokens special, special ids =
the header list (every added token, longest first), stop ids kept, prefix as TemplateProcessing,
ByteLevel decoder, no chat template, no metadata."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import losses as L
from ..errors import LossError, UnsupportedError
from ..ir import Pattern, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..lower import Loss, Lowering
from ..mtok.constants import FileType
from ..mtok.header import read_header, write_header
from ..readers.gpt2_files import BYTE_CHARS, CHAR_BYTES, bytes_to_token, token_to_bytes
from .tiktoken_txt import Body, Chain, memo_last, added_from_header, common_steps, decoder_is_byte_level, dense_size, \
    finish, header_lists, template_loss, token_names

CPP_REGEX = (r"""('s|'t|'re|'ve|'m|'ll|'d)|[^\r\n[:alpha:][:digit:]]?[[:alpha:]]+|[[:digit:]]"""
             r"""| ?[^\s[:alpha:][:digit:]]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
_S = r"\t\n\x0B\f\r "
# The letter-run prefix is "ASCII except CR, LF, letters, digits": control characters one by one,
# ranges only between plain characters (MNN's own regex engine, for a `.mtok` made from this IR,
# misreads ranges with escaped ends and `\x{...}`).  In that engine non-ASCII characters fold to
# \x01-\x07, so there this class also admits them (its `regex-control` loss).
_ASCII_PUNCT_CTRL = ("[" + "".join(f"\\x{c:02X}" for c in range(0x20) if c not in (0x0A, 0x0D))
                     + r" -/:-@\[\\\]^_`{-~\x7F]")
RUNTIME_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|" + _ASCII_PUNCT_CTRL + r"?[A-Za-z]+|[0-9]"
                 rf"| ?[^{_S}A-Za-z0-9]+[\r\n]*|[{_S}]*[\r\n]+|[{_S}]+(?![^{_S}])|[{_S}]+")
RUNTIME_PRE = P.Sequence((P.Split(Pattern(RUNTIME_REGEX, regex=True), "Isolated"),
                          P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)))


def runtime_decode(token: str) -> bytes:
    """What `HuggingfaceTokenizer::decode` returns for a vocabulary line."""
    return bytes(CHAR_BYTES[c] for c in token if c in CHAR_BYTES)


@dataclass
class Plan:
    lines: list[str]
    merges: tuple[tuple[str, str], ...]
    header: tuple
    chain: Chain
    notes: list[str]


def _dedupe(merges) -> tuple[tuple[tuple[str, str], ...], int]:
    seen, out = set(), []
    for m in merges:
        if m not in seen:
            seen.add(m)
            out.append(m)
    return tuple(out), len(merges) - len(out)


@memo_last
def _plan(tok) -> Plan:
    what = "type 3 (HUGGINGFACE)"
    m = tok.model
    if not isinstance(m, M.BPE):
        raise UnsupportedError(f"{what} is a byte-level BPE; model {m.kind} is not one")
    if not decoder_is_byte_level(tok.decoder):
        raise UnsupportedError(f"{what} is byte-level: decoder must be ByteLevel, not "
                               f"{getattr(tok.decoder, 'kind', None)}")
    n = dense_size(tok, m.vocab, what)
    lines: list[str | None] = [None] * n
    for t, i in m.vocab.items():
        if token_to_bytes(t) is None or "\n" in t:
            raise UnsupportedError(f"{what}: vocabulary token {t!r} (id {i}) is not a GPT-2 byte-level string")
        lines[i] = t
    notes: list[str] = []
    for t in tok.added_tokens:
        line = bytes_to_token(t.content.encode("utf-8"))
        if lines[t.id] is not None and lines[t.id] != line:
            notes.append(f"id {t.id}: added token {t.content!r} replaces vocabulary token {lines[t.id]!r:.30}")
        lines[t.id] = line
    if any(x is None for x in lines):  # cannot happen after dense_size; kept as a guard
        raise UnsupportedError(f"{what}: id {lines.index(None)} has no token")
    missing = [b for b, c in enumerate(BYTE_CHARS) if c not in m.vocab]
    if missing:
        raise UnsupportedError(f"{what}: byte 0x{missing[0]:02x} ({len(missing)} in all) has no single-byte token; "
                               "MNN 3.4.1 throws std::out_of_range (aborting the app) on any text holding it")
    merges, dups = _dedupe(m.merges)
    lw = Lowering("mnn-3.6")
    special, stop, prefix, suffix = header_lists(tok, lw)
    chain = Chain(tok)
    chain.losses.extend(lw.losses)
    common_steps(chain, suffix, what)
    pre = chain.tok.pre_tokenizer
    if _prefix_space(pre):
        chain.step(L.PREFIX_SPACE, "pre_tokenizer ByteLevel", "$.pre_tokenizer",
                   "add_prefix_space: HF adds a space before the first word, the runtime never does",
                   replace(chain.tok, pre_tokenizer=_no_prefix_space(pre)), "Hello")
    chain.step(L.LEGACY_HF_REGEX, "pre_tokenizer", "$.pre_tokenizer",
               f"{what} pre-tokenizes with a fixed C-locale std::regex, /{CPP_REGEX}/ with icase, instead of "
               f"{_describe(chain.tok.pre_tokenizer)}: letters, digits and spaces are ASCII only (non-ASCII "
               "text is split like punctuation), digits are single, contractions match in any case",
               replace(chain.tok, pre_tokenizer=RUNTIME_PRE), "caf\u00e9 2024")
    model = chain.tok.model
    fields = {k: getattr(model, k) for k in ("dropout", "unk_token", "continuing_subword_prefix",
                                              "end_of_word_suffix", "fuse_unk", "byte_fallback")}
    if model.ignore_merges:
        chain.step(L.IGNORE_MERGES, "model BPE", "$.model.ignore_merges",
                   "ignore_merges: the runtime never looks a whole word up before merging",
                   replace(chain.tok, model=replace(model, ignore_merges=False)))
    if any(v not in (None, "", 0.0, False) for v in fields.values()):
        chain.step(L.BPE_FIELD, "model BPE", "$.model", "dropout / unk / subword prefix / suffix / byte_fallback "
                   "are not applied", replace(chain.tok, model=M.BPE(model.vocab, model.merges)))
    if dups:
        chain.step(L.LEGACY_DUPLICATE_MERGE, "model BPE", "$.model.merges",
                   f"{dups} merge(s) appear twice: the runtime keeps the first rank, HF the last",
                   replace(chain.tok, model=replace(chain.tok.model, merges=merges)))
    added = added_from_header(special, {i: runtime_decode(lines[i]) for i in special}, notes)
    canonical = finish(model=M.BPE(_first_ids(lines), merges), normalizer=None, pre_tokenizer=RUNTIME_PRE,
                       decoder=D.ByteLevel(), header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: runtime_decode(lines[i]) for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return Plan(lines, merges, (special, stop, prefix), chain, notes)


def _first_ids(lines) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, t in enumerate(lines):
        out.setdefault(t, i)
    return out


def _prefix_space(p) -> bool:
    if isinstance(p, P.Sequence):
        return any(_prefix_space(c) for c in p.pretokenizers)
    return isinstance(p, P.ByteLevel) and p.add_prefix_space


def _no_prefix_space(p):
    if isinstance(p, P.Sequence):
        return P.Sequence(tuple(_no_prefix_space(c) for c in p.pretokenizers))
    return replace(p, add_prefix_space=False) if isinstance(p, P.ByteLevel) else p


def _describe(p) -> str:
    if isinstance(p, P.Sequence):
        return " + ".join(_describe(c) for c in p.pretokenizers) or "no pre-tokenizer"
    if isinstance(p, P.Split):
        return f"Split(/{p.pattern.value}/)"
    if isinstance(p, P.ByteLevel):
        return "ByteLevel(GPT-2 regex)" if p.use_regex else "ByteLevel"
    return getattr(p, "kind", "no pre-tokenizer")


def write_hf_txt(tok, *, allow_lossy: bool = True) -> bytes:
    """The file.  `UnsupportedError` if type 3 cannot hold `tok`; with `allow_lossy=False`, `LossError`
    if the runtime would not do what `tok` does (`losses_hf_txt`)."""
    plan = _plan(tok)
    if not allow_lossy and (losses := plan.chain.losses + template_loss(tok, "type 3")):
        raise LossError(losses)
    body = [f"{len(plan.lines)} {len(plan.merges)}"] + plan.lines + [f"{a} {b}" for a, b in plan.merges]
    return write_header(FileType.HUGGINGFACE, plan.header, trailing_space=True) + \
        ("\n".join(body) + "\n").encode("utf-8")


def losses_hf_txt(tok) -> list[Loss]:
    return _plan(tok).chain.losses + template_loss(tok, "type 3")


def projection_steps_hf(tok) -> list[tuple[str, object]]:
    return _plan(tok).chain.steps


def project_hf(tok):
    """The runtime-faithful IR of the file `write_hf_txt(tok)` writes (== reading it back)."""
    return _plan(tok).chain.tok


def read_hf_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    """`strict` is accepted for symmetry with types 1 and 2 (type 3 has no base64)."""
    kind, header, offset = read_header(data, path, expect=FileType.HUGGINGFACE)
    body = Body(data, offset, path, "type 3")
    n, k = body.ints("line 4 (vocabulary size and merge count)", 2)
    lines: list[str] = []
    for i in range(n):
        raw = body.line(f"token {i} of {n}")
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            body.fail(f"token {i} is not UTF-8: {raw[:40]!r}", body.lineno, body.start)
    vocab = _first_ids(lines)
    notes: list[str] = []
    if len(vocab) != n:
        notes.append(f"{n - len(vocab)} vocabulary line(s) repeat an earlier one: encode uses the first id")
    odd = [i for i, t in enumerate(lines) if token_to_bytes(t) is None]
    if odd:
        notes.append(f"{len(odd)} token(s) are not byte-level strings (e.g. id {odd[0]}): the runtime drops their "
                     "characters outside the byte map when decoding, HF keeps them")
    merges, seen = [], set()
    for r in range(k):
        raw = body.line(f"merge {r} of {k}")
        line = raw.decode("utf-8", "replace")
        if r == 0 and line.startswith("#version"):
            continue
        a, sep, b = line.partition(" ")
        if not sep:
            body.fail(f"merge line {line[:40]!r} has no space", body.lineno, body.start)
        for t in (a, b, a + b):
            if t not in vocab:
                body.fail(f"merge {line[:40]!r} names {t!r}, which is not in the vocabulary (the runtime "
                          "would abort when this merge fires)", body.lineno, body.start)
        if (a, b) in seen:
            notes.append(f"merge {line[:40]!r} (line {body.lineno}) repeats: the runtime keeps the first rank")
            continue
        seen.add((a, b))
        merges.append((a, b))
    body.end(f"{k} merge lines")
    special, stop, prefix = header
    for i in (*special, *stop, *prefix):
        if i >= n:
            notes.append(f"header id {i} is beyond the {n} tokens: decodes to ''")
    added = added_from_header(special, {i: runtime_decode(lines[i]) for i in special if i < n}, notes)
    return finish(model=M.BPE(vocab, tuple(merges)), normalizer=None, pre_tokenizer=RUNTIME_PRE,
                  decoder=D.ByteLevel(), header=header, added=added, notes=notes,
                  names=token_names({i: runtime_decode(lines[i]) for i in prefix if i < n}), path=path, data=data)
