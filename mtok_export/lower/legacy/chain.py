"""What lowering to the four legacy `tokenizer.txt` types shares: the header lists, the dense-id
check, and the projection as a `Chain` of documented steps, each a loss with its code (so a mismatch
on the legacy runtime is attributed to the step that reproduces it)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ... import losses as L
from ...errors import UnsupportedError
from ...ir import decoders as D
from ...ir.walk import members
from ...legacy.text import prefix_template
from ...losses import Loss
from ..processors import single_parts, single_prefix


@dataclass
class LegacyPlan:
    """A legacy file before it is written: what the format writer needs (`content`), what the
    runtime will do with it (`projection`, the IR reading the file back gives), and how that differs
    from the source (`losses`; `steps` for attribution)."""

    kind: int  # FileType
    content: object  # legacy.text.TokenLines, legacy.hf_txt.Type3 or legacy.sentencepiece_txt.Type0
    losses: list[Loss]
    projection: object
    steps: list[tuple[str, object]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def header_lists(chain: Chain) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(special, stop, prefix, suffix) for a legacy header of `chain.tok`: every added token is a
    header special (the runtime splits out only those), longest first so list-order matching is
    leftmost-longest; prefix and suffix come from the post-processor, and each of its components a
    single sequence cannot carry is a `post-dropped` loss of `chain`."""
    tok = chain.tok
    parts, dropped = single_parts(tok.post_processor)
    chain.losses.extend(Loss(L.POST_DROPPED, component, where, reason) for component, where, reason in dropped)
    prefix, suffix = parts if parts is not None else ((), ())
    specials = sorted(tok.added_tokens, key=lambda t: (-len(t.content.encode()), t.id))
    return tuple(dict.fromkeys(t.id for t in specials)), tuple(tok.stop_ids), tuple(prefix), tuple(suffix)


def overlay_added(tok, lines: list, encode) -> list[str]:
    """Put each added token, as `encode(content)` writes it, on its id's line (over the vocabulary's);
    -> notes for the lines it replaced."""
    notes = []
    for t in tok.added_tokens:
        line = encode(t.content)
        if lines[t.id] is not None and lines[t.id] != line:
            notes.append(f"id {t.id}: added token {t.content!r} replaces vocabulary token {lines[t.id]!r:.30}")
        lines[t.id] = line
    return notes


def dense_size(tok, vocab: dict[str, int], what: str) -> int:
    ids = set(vocab.values()) | {t.id for t in tok.added_tokens}
    n = max(ids) + 1 if ids else 0
    if len(ids) != n:
        missing = next(i for i in range(n) if i not in ids)
        raise UnsupportedError(f"{what} stores one line per id, so ids must be 0..{n - 1} without gaps; "
                               f"id {missing} has no token ({n - len(ids)} missing)")
    return n


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
    prefix = single_prefix(tok.post_processor)
    names = {t.id: t.content for t in tok.added_tokens}
    return prefix_template(tuple(prefix), names)


def template_loss(tok, what: str) -> list[Loss]:
    if tok.chat.text:
        return [Loss(L.LEGACY_NO_TEMPLATE, "chat template", "$.chat_template",
                     f"{what} stores no chat template: MNN reads it from llm_config.json jinja.chat_template")]
    return []


def decoder_is_byte_level(d) -> bool:
    return any(isinstance(c, D.ByteLevel) for c in members(d))

