"""Mismatch attribution (DESIGN 4.1): a mismatch is explained only when it is *reproduced*.

The projection of a set of losses is the reference computation with each loss's documented runtime
behaviour applied (`losses.LossKind.projection`): HF `tokenizers` on the source IR with the losses'
patches applied, the runtime's normalizer model in place of the source's, the header prefix in
place of the post-processor, the runtime's single-id decode, the chat template rendered as the
runtime renders a lint rule.  A mismatch is explained when the projection of the recorded losses
equals the runtime's output exactly; the losses named are those whose projection changes the
reference's output on that input.  A loss without a projection explains a mismatch only where its
trigger fires and the remaining difference lies inside the triggering spans (one token of slack on
each side).  Everything else is unexplained.

Everything here is computed from the *source* and its honest lowering, never from the file under
test: a wrong file cannot explain itself."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from difflib import SequenceMatcher
from functools import cached_property
from fractions import Fraction

from .. import losses as L
from ..errors import Interrupted
from ..chat.render import render
from ..ir import models as M
from ..ir import pre_tokenizers as P
from ..ir.paths import REMOVE, replace_at
from ..ir.walk import walk
from ..losses import CHAT_RULES, Loss
from ..lower import unigram_viterbi as UV
from ..lower.models import hf_f64
from ..lower.processors import single_prefix
from ..writers.hf_json import TableText
from . import emulate
from .projection import Projection
from .spm_unigram import Lattice, near_tie

Explanation = tuple[Loss, ...]  # empty: unexplained


def _in_order(patches):
    """Patches as they apply one after another: removals last, the later list items first, so the
    second of two dropped pre-tokenizers ([0] and [1] of a Sequence) is still at its path."""
    def key(x):
        removal = x.patch[1] is REMOVE
        return (removal, [-int(n) for n in re.findall(r"\[(\d+)\]", x.patch[0])] if removal else [])
    return sorted(patches, key=key)
_SKIP = 8  # bytes a token's surface may start past where the previous one ended (removed whitespace, an unk)

# The pipeline components an unexplained difference can point at (`Attribution.component`), in the
# order the question is asked; the CLI names, per component, the options that change it.
COMPONENTS = ("interpretation", "reader", "template", "bos/eos", "decoder", "added tokens", "vocabulary",
              "normalizer", "split", "model")
_CHAT = ("chat text", "chat ids", "chat paths")


class Attribution:
    def __init__(self, source, lowered, lowering, *, ref_normalize=None, ref_unigram=None):
        """`source`: the IR as read; `lowered`: its honest lowering (what a correct file holds);
        `lowering`: the losses, target and BOS facts of that lowering; `ref_normalize`: the
        reference's own normalizer (str -> str), for reader differences; `ref_unigram`: () -> the
        sentencepiece library's own Unigram lattice (`Reference.unigram`), for its float32 Viterbi.
        Every projection runs HF on the IR (`Projection`), so an IR that differs from the source
        shows as unexplained."""
        self.source, self.lowered, self.lowering = source, lowered, lowering
        self.losses = list(lowering.losses)
        self.legacy = lowering.target.legacy
        self._hf: dict[tuple, Projection] = {}
        self._tables = TableText()  # the projections share the source's vocabulary and merges text
        self._wp, self._byte_level = emulate.decoder_flags(lowered.decoder)
        self._added = tuple(t.content for t in lowered.added_tokens)
        self.prefix = list(lowered.prefix_ids)
        if self.legacy:  # a legacy type's projection keeps its prefix in the post-processor
            self.prefix = list(single_prefix(lowered.post_processor))
        self.ref_normalize = ref_normalize
        self.ref_unigram = ref_unigram
        self._surfaces: dict[int, bytes] = {}  # id -> `surface(id)`
        self._uv = None  # (the model HF runs, its pieces as HF holds them, the written pieces): `_unk_node`

    @cached_property
    def _token(self) -> dict[int, str]:
        """id -> token of the lowered vocabulary, built when a decode is first projected."""
        return {i: t for t, i in M.vocab_of(self.lowered.model).items()}

    def of(self, *projections: str) -> list[Loss]:
        return [x for x in self.losses if x.kind.projection in projections]

    # ------------------------------------------------------------------ raw ids
    def _hf_for(self, patches: tuple[Loss, ...], normalizer: bool, legacy: bool = False) -> Projection:
        """HF on the source with these projections applied (`legacy`: on what the legacy type runs)."""
        key = ("legacy",) if legacy else (tuple(id(x) for x in patches), normalizer)
        if key not in self._hf:
            tok = self.lowered if legacy else self.source
            for x in _in_order(patches):
                tok = replace_at(tok, *x.patch)
            if normalizer:
                tok = replace(tok, normalizer=None)
            self._hf[key] = Projection(tok, self._tables)
        return self._hf[key]

    def warm(self) -> None:
        """Make ready the HF projections `raw` asks for first (the source as read, and with every
        projecting loss applied): their cached answers loaded, or the tokenizers built, so they are
        ready when the comparison starts.  A failure here is left for the comparison itself to meet
        (and report).  It runs while the runtime does, where SIGTERM raises `Interrupted`: that one
        goes on (swallowed, the tool waited for the runtime's time limit instead of stopping)."""
        try:
            if self.legacy:
                self._hf_for((), False, legacy=True).ready()
            self._hf_for((), False).ready()
            projecting = self.of("patch", "normalizer")
            if projecting:
                self._hf_for(*self._projection(projecting)).ready()
        except Interrupted:
            raise
        except Exception:  # noqa: BLE001  raised again, in context, where the projection is used
            pass

    def save(self) -> None:
        """Cache what the projections computed, for the next verification of this source."""
        for hf in self._hf.values():
            hf.save()

    def _projection(self, losses) -> tuple[tuple[Loss, ...], bool]:
        """(the patches, whether the runtime's normalizer replaces the source's) of `losses`."""
        patches = tuple(x for x in losses if x.kind.projection == "patch" and x.patch is not None)
        return patches, any(x.kind.projection == "normalizer" for x in losses)

    def project_raw(self, text: str, losses) -> list[int]:
        """Raw ids of `text` with the projections of `losses` applied."""
        patches, normalizer = self._projection(losses)
        hf = self._hf_for(patches, normalizer)
        if normalizer:
            text = emulate.normalize_around(self.lowered.normalizer, text, self._added)
        return hf.encode(text)

    def raw(self, text: str, want: list[int], got: list[int]) -> Explanation:
        ties = self.of("ties")
        if ties and self._tie(want, got):  # an equally scored segmentation of the same text
            return tuple(ties)
        base = self.project_raw(text, ())
        readers = self._readers(text, want, base) if base != want else []
        if base != want and not readers:
            return ()
        if self.legacy:  # the legacy type's documented projection is the lowered IR itself
            proj = self._hf_for((), False, legacy=True).encode(text)
            if proj != got:
                return ()
            active = [x for x in self.of("legacy") if proj != base]
            return tuple(readers + active) if readers or active else ()
        projecting = self.of("patch", "normalizer")
        proj = self.project_raw(text, projecting) if projecting else base
        if proj is None:  # the projection does not encode (HF raises: an unknown character, no unk_id)
            return ()
        if proj == got:
            active = [x for x in projecting if self._acts(x, text, base)]
            return tuple(readers + active) if (readers or active) else ()
        if ties and self._tie(proj, got):
            return tuple(readers + ties)
        if (nodes := self.of("unk-node")) and self._unk_node(text, projecting, proj, got):
            return tuple(readers + nodes)
        loose = {x: sp for x in self.losses if x.kind.projection is None and (sp := x.spans(text))}
        if loose and self.confined(text, proj, got, [s for sp in loose.values() for s in sp]):
            alone = [x for x, sp in loose.items() if self.confined(text, proj, got, sp)]
            return tuple(readers + (alone or list(loose)))
        return ()

    def component(self, check: str, text: str, want, got, raw_matched: bool = False) -> str:
        """The component (`COMPONENTS`) the first divergence of one unexplained mismatch points at:
        by check (chat: the template; stop ids, or engine ids whose raw ids matched: BOS/EOS;
        streaming decode: the decoder), else for ids: HF on the IR against the reference (they
        differ: the reader), then at the first differing id an added token or an id outside the
        written vocabulary, then the runtime's normalizer model against HF's on this text, a split
        regex over non-ASCII text, else the model."""
        if check in _CHAT:
            return "template"
        if check == "stop ids" or (check == "engine ids" and raw_matched):
            return "bos/eos"
        if check == "streaming decode":
            return "decoder"
        if not (isinstance(want, list) and isinstance(got, list)):
            return ""
        if self.project_raw(text, ()) != want:
            return "reader"
        k = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
        at = {*want[k:k + 1], *got[k:k + 1]}
        if at & {t.id for t in self.lowered.added_tokens if t.content in text}:  # one the text holds, not [UNK]
            return "added tokens"
        added = {t.id for t in self.lowered.added_tokens}
        if any(i not in self._token and i not in added for i in at):
            return "vocabulary"
        hf = self._hf_for((), False).normalize(text)
        if self.lowered.normalizer is not None and hf is not None and \
                emulate.normalize_around(self.lowered.normalizer, text, self._added) != hf:
            return "normalizer"
        if not text.isascii() and any(isinstance(n, P.Split) or (isinstance(n, P.ByteLevel) and n.use_regex)
                                      for n in walk(self.source.pre_tokenizer)):
            return "split"
        return "model"

    def _acts(self, loss: Loss, text: str, base: list[int]) -> bool:
        """Does this loss alone change the reference's ids for `text`?"""
        if not loss.spans(text):
            return False
        group = self.of("normalizer") if loss.kind.projection == "normalizer" else [loss]
        return self.project_raw(text, group) != base

    def _in_messages(self, text: str, messages) -> tuple[list[Loss], list[tuple[int, int]]]:
        """The reader losses that act on the messages' contents as they appear in the rendered `text`,
        and where in `text` they act."""
        readers, spans, pos = [], [], 0
        for m in messages:
            content = m.get("content") if isinstance(m, Mapping) else None
            at = text.find(content, pos) if isinstance(content, str) and content else -1
            if at < 0:
                continue
            for x in self._readers(content):
                found = [(at + a, at + b) for a, b in x.spans(content)]
                if found:
                    spans += found
                    readers += [x] if x not in readers else []
            pos = at + len(content)
        return readers, spans

    def _readers(self, text: str, want=None, base=None) -> list[Loss]:
        """The reader losses that act on `text`; with the reference's ids `want` and HF's `base`
        (they differ), also those whose reproduction needs them."""
        return [x for x in self.of("reader") if x.spans(text) or (x.kind is L.SP_CHARSMAP and self._norm_differs(text))
                or (x.kind is L.SP_FLOAT32_VITERBI and want is not None and self._float32(want, base))]

    def _float32(self, want: list[int], base) -> bool:
        """The reference (sentencepiece) took a lower-scoring path than HF's only by its float32
        running total (`spm_unigram.near_tie`, on the library's own pieces and scores: HF's path on
        an IR with a wrong score is not the library's best, and shows nothing)."""
        return self._lattice is not None and isinstance(base, list) and near_tie(self._lattice, want, base) is not None

    @cached_property
    def _lattice(self) -> Lattice | None:
        """The library's Unigram lattice, built when a mismatch first asks (262,144 pieces: 0.4 s)."""
        return self.ref_unigram() if self.ref_unigram is not None else None

    def _norm_differs(self, text: str) -> bool:
        """The reference normalizes `text` otherwise than HF does on the IR."""
        if self.ref_normalize is None:
            return False
        hf = self._hf_for((), False).normalize(text)
        return hf is not None and self.ref_normalize(text) != hf

    def _tie(self, a: list[int], b: list[int]) -> bool:
        """Another Viterbi path: the same text and exactly the same total score (unigram-ties).  The
        runtime adds the file's f64 scores in HF's order, so it breaks only exact ties: equal f64
        sums, or equal exact sums (the same pieces in another order; per pre-token the engines' sums
        are exact for float32 scores).  A near tie is another result, not a tie."""
        m = self.lowered.model
        if not isinstance(m, M.Unigram):
            return False
        n = len(m.vocab)
        if any(i >= n for i in a + b):
            return False
        surface = lambda ids: "".join(m.vocab[i][0] for i in ids)  # noqa: E731
        f64 = lambda ids: sum(m.vocab[i][1] for i in ids)  # noqa: E731  left to right, as the engines add
        exact = lambda ids: sum(Fraction(m.vocab[i][1]) for i in ids)  # noqa: E731
        return surface(a) == surface(b) and (f64(a) == f64(b) or exact(a) == exact(b))

    def _unk_node(self, text: str, projecting, proj: list[int], got: list[int]) -> bool:
        """The runtime's Unigram Viterbi (`lower.unigram_viterbi.runtime_ids`: its unk nodes, its
        unk score, its tie-break) on the lowered model gives `got`, where HF's loop written the same
        way (`hf_ids`) on the model HF runs gives HF's own `proj`, both on HF's pre-tokens of the
        text (which the second equality shows are the ones HF ran).  A file holding another score
        or piece than the honest lowering gives other ids than the emulation and stays unexplained.
        Not shown where the text holds an added token (the added-token split is not emulated) or
        where no unk is involved (that is a tie, `unigram-ties`)."""
        m = self.lowered.model
        if not isinstance(m, M.Unigram) or m.byte_fallback or any(a and a in text for a in self._added):
            return False
        if m.unk_id not in proj and m.unk_id not in got:
            return False
        patches, normalizer = self._projection(projecting)
        hf = self._hf_for(patches, normalizer)
        src = hf.tok.model
        if not isinstance(src, M.Unigram) or src.byte_fallback:
            return False
        if normalizer:
            text = emulate.normalize_around(self.lowered.normalizer, text, self._added)
        try:
            pre = hf.pre_tokens(text)
        except Exception:  # noqa: BLE001  tokenizers raises a bare Exception: nothing shown
            return False
        if self._uv is None or self._uv[0] is not src:
            # HF holds the scores it parsed from the JSON the projection wrote (`hf_f64`)
            held = UV.Pieces.of(replace(src, vocab=tuple((p, hf_f64(s)) for p, s in src.vocab)))
            self._uv = (src, held, UV.Pieces.of(m))
        _, held, written = self._uv
        return ([i for x in pre for i in UV.hf_ids(held, x)] == proj
                and [i for x in pre for i in UV.runtime_ids(written, x)] == got)

    def surface(self, i: int) -> bytes:
        # memoized per id: a streamed decode projects every id of every mismatching sample, and a
        # SentencePiece file's leading-space class alone asks for the same few thousand ids 10^5 times
        hit = self._surfaces.get(i)
        if hit is None:
            hit = self._surfaces[i] = emulate.decode_id(self._token.get(i), self._wp, self._byte_level)
        return hit

    def confined(self, text: str, a: list[int], b: list[int], spans) -> bool:
        """Every difference between id lists `a` and `b` lies within one token of a span of `text`."""
        if not spans:
            return False
        spans = [(len(text[:s].encode("utf-8", "surrogatepass")), len(text[:e].encode("utf-8", "surrogatepass")))
                 for s, e in spans]

        raw = text.encode("utf-8", "surrogatepass")

        def offsets(ids, align: bool):
            """Where each token ends in `text`: by the sum of the surfaces, or (`align`) a surface
            found just ahead past whitespace only (what Whitespace-like pre-tokenizers remove) ends
            there and one not found (an unk: '<unk>' for one character) covers one character, so
            neither shifts every later span.  Normalized text matches neither exactly: a difference
            near a span by either is near it."""
            out, pos = [0], 0
            for i in ids:
                s = self.surface(i)
                if not align:
                    pos += len(s)
                    out.append(pos)
                    continue
                for t in (s, s.lstrip(b" ")):  # a WordPiece word start decodes with a space before it
                    at = raw.find(t, pos, pos + len(t) + _SKIP) if t else -1
                    if at >= 0 and not raw[pos:at].strip():
                        pos = at + len(t)
                        break
                else:  # not in the text (an unk): the next character
                    while pos < len(raw) and raw[pos:pos + 1].isspace():
                        pos += 1
                    pos += 1
                    while pos < len(raw) and 0x80 <= raw[pos] < 0xC0:
                        pos += 1
                out.append(min(pos, len(raw)))
            return out

        ends = [(offsets(a, x), offsets(b, x)) for x in (False, True)]
        for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            near = False
            for pa, pb in ends:
                ra = (pa[max(i1 - 1, 0)], pa[min(i2 + 1, len(a))])
                rb = (pb[max(j1 - 1, 0)], pb[min(j2 + 1, len(b))])
                near = near or any(lo <= s_hi and s_lo <= hi for lo, hi in (ra, rb) for s_lo, s_hi in spans)
            if not near:
                return False
        return True

    # ------------------------------------------------------------------ engine ids, decode
    def engine(self, text: str, want: list[int], want_raw: list[int], got: list[int], raw_why: Explanation | None,
               ) -> Explanation:
        """`got` must be the header prefix plus the runtime's raw ids, each part explained."""
        n = len(self.prefix)
        if got[:n] != self.prefix:
            return ()
        got_raw = got[n:]
        why = list(raw_why or ()) if got_raw != want_raw else []
        if got_raw != want_raw and not why:
            return ()
        if self.prefix + want_raw != want:  # encode() adds only the header prefix
            post = self.of("engine", "legacy")
            if not post:
                return ()
            why += post
        return tuple(why)

    def stream(self, raw_ids: list[int], want: str, got: str, base: str | None = None) -> Explanation:
        """Single-id decode of the reference ids, as the runtime's `decode(int)` does it."""
        if self.legacy:
            if base is not None and base == got:
                return tuple(self.losses)
            type0 = [x for x in self.losses if x.kind is L.TYPE0_DECODE]
            proj = b"".join(emulate.decode_id_type0(self._token.get(i)) for i in raw_ids)
            return tuple(type0) if type0 and proj.decode("utf-8", "replace") == got else ()
        proj = b"".join(self.surface(i) for i in raw_ids).decode("utf-8", "replace")
        if proj != got:
            return ()
        why = self.of("stream")
        if base is not None and base != want:  # the reference's own decode differs from HF's on the IR
            why = why + [x for x in self.of("reader") if x.spans(want)]
        return tuple(why)

    def base_decode(self, raw: list[list[int]]) -> list[str]:
        """HF's decode of the reference ids on the IR (for the legacy target: on what the legacy
        type runs); compared with the reference's own decode to see reader differences."""
        return self._hf_for((), False, legacy=self.legacy).decode_batch(raw)

    # ------------------------------------------------------------------ chat
    def chat_text(self, chat, want: str, got: str | None) -> Explanation:
        """The source template rendered as the runtime renders it: with an empty `bos_token`
        (bos-inner) and the lint rules' runtime behaviour (chat-template losses of `CHAT_RULES`)."""
        if got is None:
            return ()
        rules = frozenset(r for x in self.of("chat-render") for r in x.trigger if r in CHAT_RULES)
        used = [x for x in self.of("chat-render") if set(x.trigger) & rules] + self.of("chat-bos")
        if not used:
            return ()
        src = self.source.chat
        cleared = self.lowering.cleared_bos
        def run(bos: str, rules: frozenset) -> str | None:
            try:
                return render(src.text, chat.messages, bos_token=bos, eos_token=src.eos_token,
                              add_generation_prompt=chat.add_generation_prompt, tools=chat.tools, runtime_rules=rules)
            except Exception:  # noqa: BLE001  the template rejects the conversation
                return None

        base = run(src.bos_token, frozenset())
        if base is None or (base[len(cleared):] if cleared and base.startswith(cleared) else base) != want:
            return ()  # the projection's own renderer does not reproduce the reference: it proves nothing
        return tuple(used) if run("" if cleared else src.bos_token, rules) == got else ()

    def chat_ids(self, want_text: str, got_text: str, want: list[int], got: list[int], text_why,
                 messages=()) -> Explanation:
        """The runtime's ids of its own rendered text: the header prefix plus the raw ids of that
        text, each difference from the reference reproduced.  `messages`: the conversation's, where
        a reader loss may act (a reference encoding the prompt itself, see below)."""
        n = len(self.prefix)
        if got[:n] != self.prefix:
            return ()
        base = self.project_raw(got_text, ())
        why = list(text_why or ())
        if got[n:] != base:
            raw_why = self.raw(got_text, base, got[n:])
            if not raw_why:
                return ()
            why += raw_why
        if self.prefix + base != want and got_text == want_text:
            if base == want and (added := self.of("chat-prefix")):
                return (*why, *added)  # the runtime's prefix on a prompt transformers encodes without it
            # a reference encoding the prompt itself (mistral_common's encode_chat_completion) differs
            # from HF on the same text only where a reader loss acts (special-token text in a message)
            # (special-token text in a message: not the tokens the template writes around them)
            readers, spans = self._in_messages(got_text, messages)
            if want[:n] == self.prefix and self.confined(got_text, base, want[n:], spans):
                return (*why, *readers)
            # transformers' own tokenization of the prompt differs from HF tokenizers' (legacy=false)
            tok = [x for x in self.of("tokenizers") if x.spans(got_text)]
            if not tok:
                return ()
            why += tok
        return tuple(why)
