"""Legacy `tokenizer.txt` type 1 (TIKTOKEN), spec section 5, and the helpers types 1-3 share.

Layout after the three header lines: line 4 `<vocab_len>`, then one line per id holding the
standard base64 of the token's bytes.

What MNN 3.4.1 does with it (`Tiktoken`, tokenizer.cpp/.hpp at tag 3.4.1):

* the header special ids whose token is non-empty are split out of the text first (at each byte
  position the first one in list order that matches);
* every other chunk is encoded by **greedy longest-prefix matching** over a byte trie of all
  lines (no split regex, no BPE merges); a byte no line starts with is skipped with an error
  message;
* `decode(id)` returns the token's bytes; the header prefix ids are prepended to every encode.

Runtime-faithful IR (`read_tiktoken_txt`): WordPiece over the GPT-2 byte characters with an empty
continuation prefix and no word limit (which is exactly greedy longest-prefix matching), behind
ByteLevel(use_regex=False) with a ByteLevel decoder; header special ids become special added
tokens, the prefix ids a TemplateProcessing `prefix... $A`.  A token listed twice keeps its first
id (the trie keeps the first); the later id still decodes to it in the runtime (noted).  Lines are
base64 as MNN 3.4.1 decodes it: characters outside the alphabet (including `=`, spaces, `\\r`) are
skipped and leftover bits dropped; `strict=True` makes a non-canonical line a `FormatError`
instead of a note.  A missing line, an empty token (the runtime's trie would then match the empty
string and loop forever), a count that is not a number or content after the last line is a
`FormatError` naming the line.

Writing (`write_tiktoken_txt`) needs a byte-level IR: a BPE (or the greedy WordPiece above) whose
tokens are all GPT-2 byte strings, decoder ByteLevel, ids dense 0..N-1 over vocabulary and added
tokens.  Greedy longest-prefix matching equals the source's BPE only where both happen to pick
the same segmentation: that is a property of each input, not of the vocabulary, so any BPE source
gets the `legacy-greedy` loss (it is never exact in general).  All added tokens go to the header
special list (longest first), so they are split out as HF does.

Projection (`project_tiktoken(ir)` == `read_tiktoken_txt(write_tiktoken_txt(ir))`), the chain of
`projection_steps_tiktoken` with one loss code per step: no normalizer (`legacy-normalizer`); the
post-processor reduced to its prefix (`suffix-not-appended`); added tokens without
lstrip/rstrip/single_word (`legacy-added-flags`); model and pre-tokenizer replaced by the greedy
WordPiece above over every line, first id winning (`legacy-greedy`); then a re-spelling that
changes no behaviour (`representation`): all added tokens special and not normalized,
special ids = the header list, stop ids kept, prefix as TemplateProcessing named by token text,
no chat template, no metadata."""

from __future__ import annotations

import base64
import binascii
import unicodedata
from dataclasses import dataclass, field, replace

from .. import losses as L
from .. import __version__
from ..errors import FormatError, LossError, UnsupportedError
from ..ir import AddedToken, ChatTemplate, InputFile, Metadata, Provenance, Tokenizer
from ..ir import decoders as D
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir import processors as R
from ..lower import Loss, Lowering
from ..mtok.constants import FileType
from ..mtok.header import read_header, write_header
from ..readers.gpt2_files import bytes_to_token, token_to_bytes

# WordPiece `max_input_chars_per_word` meaning "no limit": the largest value MNN's `.mtok` runtime
# reads correctly (it keeps the u32 in an `int`, so 2**31 and above make every word unk).
NO_LIMIT = 0x7FFFFFFF
_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_B64_VALUE = {c: i for i, c in enumerate(_B64)}
# WordPiece needs an unk name; the runtime skips unmatched bytes instead.  Raw spaces never occur in
# a byte-level vocabulary (a space byte is U+0120 there), so this name cannot shadow a real token.
GREEDY_UNK = " <unk> "


# ------------------------------------------------------------------ shared: base64, lines, header


def b64decode_mnn(line: bytes) -> bytes:
    """MNN 3.4.1's base64 decoder: skip every byte outside the alphabet, drop leftover bits."""
    out = bytearray()
    val, bits = 0, -8
    for c in line:
        d = _B64_VALUE.get(c)
        if d is None:
            continue
        val = ((val << 6) + d) & 0xFFFFFF
        bits += 6
        if bits >= 0:
            out.append((val >> bits) & 0xFF)
            bits -= 8
    return bytes(out)


def b64_canonical(line: bytes) -> bool:
    try:
        return base64.b64encode(base64.b64decode(line, validate=True)) == line
    except (binascii.Error, ValueError):
        return False


class Body:
    """The text lines after the header, with line numbers and byte offsets for errors."""

    def __init__(self, data: bytes, offset: int, path, kind: str):
        self.data, self.pos, self.path, self.kind = data, offset, path, kind
        self.lineno = data[:offset].count(b"\n")  # lines consumed so far

    def fail(self, msg: str, lineno: int | None = None, offset: int | None = None):
        raise FormatError(msg, offset=self.pos if offset is None else offset,
                          section=f"{self.kind} line {lineno or self.lineno + 1}", path=self.path)

    def line(self, what: str) -> bytes:
        if self.pos >= len(self.data):
            self.fail(f"file ends before {what}")
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            end = len(self.data)
        raw = self.data[self.pos:end]
        self.start = self.pos
        self.pos = end + 1
        self.lineno += 1
        return raw

    def ints(self, what: str, n: int) -> list[int]:
        raw = self.line(what)
        parts = raw.split()
        if len(parts) != n or not all(p.isdigit() for p in parts):
            self.fail(f"{what} must be {n} decimal integer(s), got {raw[:40]!r}", self.lineno, self.start)
        return [int(p) for p in parts]

    def end(self, what: str):
        rest = self.data[self.pos:]
        if rest.strip(b"\r\n"):
            self.fail(f"unexpected content after the {what}: {rest[:40]!r}")


def header_lists(tok, lw: Lowering) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(special, stop, prefix, suffix) for a legacy header: every added token is a header special
    (the runtime splits out only those), longest first so list-order matching is leftmost-longest;
    prefix and suffix come from the post-processor."""
    from ..lower.processors import split_single

    parts = split_single(lw, tok.post_processor, "$.post_processor")
    prefix, suffix = parts if parts is not None else ((), ())
    specials = sorted(tok.added_tokens, key=lambda t: (-len(t.content.encode()), t.id))
    return tuple(dict.fromkeys(t.id for t in specials)), tuple(tok.stop_ids), tuple(prefix), tuple(suffix)


def dense_size(tok, vocab: dict[str, int], what: str) -> int:
    ids = set(vocab.values()) | {t.id for t in tok.added_tokens}
    n = max(ids) + 1 if ids else 0
    if len(ids) != n:
        missing = next(i for i in range(n) if i not in ids)
        raise UnsupportedError(f"{what} stores one line per id, so ids must be 0..{n - 1} without gaps; "
                               f"id {missing} has no token ({n - len(ids)} missing)")
    return n


def prefix_template(prefix: tuple[int, ...], names: dict[int, str]):
    """TemplateProcessing that puts the header prefix ids before $A (None without a prefix)."""
    if not prefix:
        return None
    used: dict[str, int] = {}
    pieces, specials = [], {}
    for i in prefix:
        name = names.get(i) or f"<id {i}>"
        if name in used and used[name] != i:
            name = f"{name}@{i}"
        used[name] = i
        pieces.append(R.Piece(name, 0, True))
        specials[name] = R.SpecialToken(name, (i,), (name,))
    single = (*pieces, R.Piece("A"))
    return R.TemplateProcessing(single=single, pair=(*single, R.Piece("B", 1)),
                                special_tokens=tuple(specials[n] for n in sorted(specials)))


def added_from_header(special: tuple[int, ...], contents: dict[int, bytes], notes: list[str]) -> tuple[AddedToken, ...]:
    out = {}
    for i in special:
        b = contents.get(i)
        if not b:
            notes.append(f"header special id {i} has no token: the runtime does not split it out")
            continue
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError:
            notes.append(f"header special id {i} is not UTF-8 ({b[:20]!r}): not representable as an added token")
            continue
        out[i] = AddedToken(i, text, normalized=False, special=True)
    return tuple(out[i] for i in sorted(out))


def token_names(contents: dict[int, bytes]) -> dict[int, str]:
    """id -> the token's text, for naming the prefix tokens in a TemplateProcessing."""
    out = {}
    for i, b in contents.items():
        try:
            out[i] = b.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return out


def finish(*, model, normalizer, pre_tokenizer, decoder, header, added, notes, names=None, path=None, data=None):
    """The Tokenizer of a legacy file; `names` (id -> text) names the header prefix tokens."""
    special, stop, prefix = header
    names = {**(names or {}), **{t.id: t.content for t in added}}
    provenance = Provenance()
    if path is not None and data is not None:
        import hashlib
        provenance = Provenance((InputFile(str(path), hashlib.sha256(data).hexdigest()),), __version__,
                                unicodedata.unidata_version)
    return Tokenizer(model=model, normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=decoder,
                     post_processor=prefix_template(prefix, names), added_tokens=added, special_ids=tuple(special),
                     stop_ids=tuple(stop), chat=ChatTemplate(),
                     meta=Metadata(stop_sources=tuple((i, "legacy header") for i in stop), notes=tuple(notes)),
                     provenance=provenance)


def memo_last(fn):
    """Remember the result for the last IR (by identity): write, losses and project share one plan."""
    last: list = []

    def wrapped(tok):
        if last and last[0] is tok:
            return last[1]
        result = fn(tok)
        last[:] = [tok, result]
        return result

    wrapped.__doc__ = fn.__doc__
    return wrapped


@dataclass
class Chain:
    """The projection as a chain of documented changes: each `step` that changes the IR records a
    loss with its code; `steps` keeps (code, IR after the step) for mismatch attribution."""

    tok: object
    losses: list[Loss] = field(default_factory=list)
    steps: list[tuple[str, object]] = field(default_factory=list)

    def step(self, kind, component: str, json_path: str, reason: str, new, example: str = "",
             loss: bool = True):
        """`kind`: the `LossKind` of a lossy step, or a plain name for one that loses nothing."""
        if new == self.tok:
            return
        self.tok = new
        self.steps.append((getattr(kind, "code", kind), new))
        if loss:
            self.losses.append(Loss(kind, component, json_path, reason, example))


def common_steps(chain: Chain, suffix: tuple[int, ...], what: str, normalizer: bool = True):
    """Changes the legacy types share: no normalizer (unless `normalizer=False`: the caller models
    it), no suffix, added tokens without lstrip/rstrip/single_word."""
    tok = chain.tok
    if normalizer and tok.normalizer is not None:
        chain.step(L.LEGACY_NORMALIZER, f"normalizer {tok.normalizer.kind}", "$.normalizer",
                   f"{what} has no normalizer: this one is not applied", replace(tok, normalizer=None), "\u00c5")
    if suffix:
        prefix_only = _prefix_only(chain.tok)
        chain.step(L.SUFFIX_NOT_APPENDED, "post_processor", "$.post_processor",
                   f"{what} only prepends the header prefix: encode() does not append {list(suffix)}",
                   replace(chain.tok, post_processor=prefix_only), "Hi")
    flagged = [t for t in chain.tok.added_tokens if t.lstrip or t.rstrip or t.single_word]
    if flagged:
        t = flagged[0]
        plain = tuple(replace(a, lstrip=False, rstrip=False, single_word=False) for a in chain.tok.added_tokens)
        chain.step(L.LEGACY_ADDED_FLAGS, f"added token {t.content!r}", "$.added_tokens",
                   f"{len(flagged)} added token(s) have lstrip/rstrip/single_word, which {what} ignores",
                   replace(chain.tok, added_tokens=plain), f"{t.content} x")


def _prefix_only(tok):
    lw = Lowering("mnn-3.6")
    from ..lower.processors import split_single

    parts = split_single(lw, tok.post_processor, "$.post_processor")
    prefix = parts[0] if parts else ()
    names = {t.id: t.content for t in tok.added_tokens}
    return prefix_template(tuple(prefix), names)


def template_loss(tok, what: str) -> list[Loss]:
    if tok.chat.text:
        return [Loss(L.LEGACY_NO_TEMPLATE, "chat template", "$.chat_template",
                     f"{what} stores no chat template: MNN reads it from llm_config.json jinja.chat_template")]
    return []


def decoder_is_byte_level(d) -> bool:
    if isinstance(d, D.Sequence):
        return any(isinstance(c, D.ByteLevel) for c in d.decoders)
    return isinstance(d, D.ByteLevel)


# ------------------------------------------------------------------ type 1


@dataclass
class Plan:
    tokens: list[bytes]
    header: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    chain: Chain
    notes: list[str]


@memo_last
def _plan(tok) -> Plan:
    what = "type 1 (TIKTOKEN)"
    m = tok.model
    greedy = isinstance(m, M.WordPiece) and m.continuing_subword_prefix == ""
    if not (isinstance(m, M.BPE) or greedy):
        raise UnsupportedError(f"{what} holds the token bytes of a byte-level BPE; model {m.kind} is not one")
    if not decoder_is_byte_level(tok.decoder):
        raise UnsupportedError(f"{what} holds token bytes: the vocabulary must be byte-level (decoder ByteLevel), "
                               f"not decoder {getattr(tok.decoder, 'kind', None)}")
    vocab = M.vocab_of(m)
    n = dense_size(tok, vocab, what)
    tokens: list[bytes | None] = [None] * n
    for t, i in vocab.items():
        b = token_to_bytes(t)
        if b is None:
            raise UnsupportedError(f"{what}: vocabulary token {t!r} (id {i}) is not a GPT-2 byte-level string")
        tokens[i] = b
    notes: list[str] = []
    for t in tok.added_tokens:
        b = t.content.encode("utf-8")
        if tokens[t.id] is not None and tokens[t.id] != b:
            notes.append(f"id {t.id}: added token {t.content!r} replaces vocabulary token {tokens[t.id]!r:.30}")
        tokens[t.id] = b
    empty = [i for i, b in enumerate(tokens) if not b]
    if empty:
        raise UnsupportedError(f"{what}: id {empty[0]} has an empty token, which the runtime's trie matches "
                               "everywhere (encode never ends)")
    lw = Lowering("mnn-3.6")
    special, stop, prefix, suffix = header_lists(tok, lw)
    chain = Chain(tok)
    for loss in lw.losses:
        chain.losses.append(loss)
    common_steps(chain, suffix, what)
    t = chain.tok
    greedy_model = M.WordPiece({bytes_to_token(b): i for i, b in reversed(list(enumerate(tokens)))},
                               GREEDY_UNK, "", NO_LIMIT)
    greedy_pre = P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)
    if not greedy or t.pre_tokenizer != greedy_pre:
        chain.step(L.LEGACY_GREEDY, f"model {m.kind}", "$.model",
                   f"{what} encodes by greedy longest-prefix matching over each chunk between special tokens: "
                   "no split regex and no BPE merges, so ids differ wherever the longest vocabulary match is "
                   "not what the source's pre-tokenizer and merges produce",
                   replace(t, model=greedy_model, pre_tokenizer=greedy_pre), "Hello world, 12345")
    present = set(tokens)
    missing = [b for b in range(256) if bytes([b]) not in present]
    if missing:
        chain.losses.append(Loss(L.LEGACY_UNKNOWN_BYTES, "model", "$.model.vocab",
                                 f"{len(missing)} byte(s) have no token (e.g. 0x{missing[0]:02x}): the runtime "
                                 "prints an error and skips them", bytes([missing[0]]).decode("latin-1")))
    added = added_from_header(special, {i: tokens[i] for i in special}, notes)
    canonical = finish(model=greedy_model, normalizer=None, pre_tokenizer=greedy_pre, decoder=D.ByteLevel(),
                       header=(special, stop, prefix), added=added, notes=[],
                       names=token_names({i: tokens[i] for i in prefix if i < n}))
    chain.step("representation", "", "", "", canonical, loss=False)
    return Plan(tokens, (special, stop, prefix), chain, notes)


def write_tiktoken_txt(tok, *, allow_lossy: bool = True) -> bytes:
    """The file.  `UnsupportedError` if type 1 cannot hold `tok`; with `allow_lossy=False`, `LossError`
    if the runtime would not do what `tok` does (`losses_tiktoken_txt`)."""
    plan = _plan(tok)
    if not allow_lossy and (losses := plan.chain.losses + template_loss(tok, "type 1")):
        raise LossError(losses)
    body = [str(len(plan.tokens)).encode()]
    body += [base64.b64encode(b) for b in plan.tokens]
    return write_header(FileType.TIKTOKEN, plan.header, trailing_space=True) + b"\n".join(body) + b"\n"


def losses_tiktoken_txt(tok) -> list[Loss]:
    return _plan(tok).chain.losses + template_loss(tok, "type 1")


def projection_steps_tiktoken(tok) -> list[tuple[str, object]]:
    return _plan(tok).chain.steps


def project_tiktoken(tok):
    """The runtime-faithful IR of the file `write_tiktoken_txt(tok)` writes (== reading it back)."""
    return _plan(tok).chain.tok


def read_b64_lines(body, n: int, strict: bool, notes: list[str], allow_empty: bool) -> list[bytes]:
    """Lines 5.. of types 1 and 2: `n` base64 tokens, decoded as MNN 3.4.1 decodes them."""
    tokens, loose = [], []
    for i in range(n):
        raw = body.line(f"token {i} of {n}")
        if raw and not b64_canonical(raw):
            if strict:
                body.fail(f"token {i} is not canonical base64: {raw[:40]!r}", body.lineno, body.start)
            loose.append(body.lineno)
        b = b64decode_mnn(raw)
        if not b and not allow_empty:
            body.fail(f"token {i} is empty: the runtime's trie would match it everywhere and never finish encoding",
                      body.lineno, body.start)
        tokens.append(b)
    body.end(f"{n} token lines")
    if loose:
        notes.append(f"{len(loose)} line(s) are not canonical base64 (first: line {loose[0]}); decoded as MNN 3.4.1 "
                     "does (characters outside the alphabet skipped)")
    return tokens


def read_tiktoken_txt(data: bytes, path=None, strict: bool = False) -> Tokenizer:
    kind, header, offset = read_header(data, path, expect=FileType.TIKTOKEN)
    body = Body(data, offset, path, "type 1")
    (n,) = body.ints("line 4 (vocabulary size)", 1)
    notes: list[str] = []
    tokens = read_b64_lines(body, n, strict, notes, allow_empty=False)
    vocab: dict[str, int] = {}
    dup = []
    for i, b in enumerate(tokens):
        t = bytes_to_token(b)
        if t in vocab:
            dup.append((i, vocab[t]))
        else:
            vocab[t] = i
    if dup:
        notes.append(f"{len(dup)} token(s) repeat an earlier one (e.g. id {dup[0][0]} = id {dup[0][1]}): encode "
                     "uses the first id; the runtime still decodes the later id")
    special, stop, prefix = header
    for i in (*special, *stop, *prefix):
        if i >= n:
            notes.append(f"header id {i} is beyond the {n} tokens: decodes to ''")
    added = added_from_header(special, {i: tokens[i] for i in special if i < n}, notes)
    return finish(model=M.WordPiece(vocab, GREEDY_UNK, "", NO_LIMIT), normalizer=None,
                  pre_tokenizer=P.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
                  decoder=D.ByteLevel(), header=header, added=added, notes=notes,
                  names=token_names({i: tokens[i] for i in prefix if i < n}), path=path, data=data)
