"""The loss registry (DESIGN 4.1): every way an exported file can behave differently from its source
is declared here once, as a `LossKind`, and every loss the lowering (or a reader, or a legacy writer)
records is a `Loss` of one of these kinds.  Nothing else matches loss codes by string.

A kind says
* `layer`: where in the pipeline it acts (verify attributes a mismatch only to losses of the layer
  that can produce it);
* `severity`: the declared reach (`edge` = only inputs essentially absent from natural text; `text`
  = ordinary text ids or decoding; `chat` = rendered prompts; `bos-eos` = BOS/EOS/stop handling;
  `crash` = the runtime crashes: never measured down, accepted only by --allow-crash).
  Where verification runs, the measured reach replaces it (see `verify.attribution`);
* `projection`: how verify reproduces the runtime's output from the source with this loss applied
  (None = no projection: the loss explains a mismatch only where its trigger fires and the difference
  stays inside the triggering span):
    - "normalizer": the runtime's normalizer model (`verify.emulate`) replaces the source's;
    - "patch": the loss carries `patch = (json_path, value)`, applied to the source IR for HF to run;
    - "engine": encode() adds the header prefix only (no suffix / no BOS);
    - "stream": single-id decode as the runtime does it (spec 3.7, `decode(int)`);
    - "chat-bos": the template rendered with an empty `bos_token`;
    - "chat-render": the template rendered with the lint rule's runtime behaviour (rules in `CHAT_RULES`);
    - "tokenizers": chat ids by HF `tokenizers` instead of transformers (Llama `legacy=false`);
    - "ties": another segmentation with the same total Unigram score and the same text;
    - "unk-node": the runtime's Unigram Viterbi (`lower.unigram_viterbi`, its unk nodes and tie-break)
      in place of HF's, on HF's pre-tokens;
    - "reader": HF on the IR instead of the source's own library (a reader difference);
    - "legacy": what the legacy runtime type documents (`lower.legacy`: a plan's projection);
* `trigger`: which part of an input can exercise it (None = the loss's own `trigger` strings)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from .mtok.constants import TABLE_CONTROL_TO_SPACE, NormalizerCode


class Severity(str, Enum):
    EDGE = "edge"
    TEXT = "text"
    CHAT = "chat"
    BOS_EOS = "bos-eos"
    CRASH = "crash"


EDGE, TEXT, CHAT, BOS_EOS, CRASH = Severity.EDGE, Severity.TEXT, Severity.CHAT, Severity.BOS_EOS, Severity.CRASH
LAYERS = ("reference", "reader", "normalizer", "pre_tokenizer", "model", "added_tokens", "post_processor", "decoder",
          "chat_template", "legacy")
PROJECTIONS = ("normalizer", "patch", "engine", "stream", "chat-bos", "chat-prefix", "chat-render", "tokenizers", "ties",
               "unk-node", "reader", "legacy")


@dataclass(frozen=True)
class LossKind:
    code: str
    layer: str
    summary: str
    severity: Severity
    projection: str | None = None
    # text -> the (start, end) spans of `text` that can exercise this loss; None: the loss's strings
    trigger: Callable[["Loss", str], list[tuple[int, int]]] | None = field(default=None, compare=False)

    def __post_init__(self):
        assert self.layer in LAYERS and (self.projection is None or self.projection in PROJECTIONS), self.code


KINDS: dict[str, LossKind] = {}


def _kind(code, layer, summary, severity, projection=None, trigger=None) -> LossKind:
    k = LossKind(code, layer, summary, severity, projection, trigger)
    assert code not in KINDS, code
    KINDS[code] = k
    return k


def kind(code: str) -> LossKind:
    """The kind of a code, for codes read back from a manifest or `--accept`; KeyError if unknown."""
    return KINDS[code]


@dataclass(frozen=True)
class Loss:
    """Something the target cannot do as the source does.  A reader's (the IR against the source's
    own library) travels in `Metadata.differences`, typed there as `ir.tokenizer.Difference`, which
    this class satisfies (the IR cannot import this module)."""

    kind: LossKind
    component: str  # e.g. "pre_tokenizer Punctuation"
    json_path: str  # where it is in the source, e.g. "$.pre_tokenizer.pretokenizers[0]"
    reason: str
    example: str = ""  # a short input that shows the difference, when one is known
    trigger: tuple[str, ...] = ()  # texts whose presence in an input means this loss can apply
    patch: tuple[str, object] | None = field(default=None, compare=False)  # ("$.path", value) for "patch"
    pattern: str = ""  # the regex a pre-tokenizer loss concerns (its matches are the trigger spans)

    @property
    def code(self) -> str:
        return self.kind.code

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Where in `text` this loss can act; empty: it cannot act on `text`."""
        if self.kind.trigger is not None:
            return self.kind.trigger(self, text)
        if self.pattern:
            return pattern_spans(self.pattern, text)
        return literal_spans(self.trigger, text)

    def __str__(self) -> str:
        ex = f" (e.g. {json.dumps(self.example)})" if self.example else ""  # ASCII: marks stay visible
        return f"[{self.code}] {self.json_path} {self.component}: {self.reason}{ex}"


# ------------------------------------------------------------------------------------ triggers

def chars(name: str, pred) -> Callable[[Loss, str], list[tuple[int, int]]]:
    """A trigger firing on each character `pred` accepts; `name` says which (for `mtok losses`)."""
    def trigger(loss: Loss, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i, c in enumerate(text) if pred(c)]

    trigger.__name__ = name
    return trigger


def any_input(loss: Loss, text: str) -> list[tuple[int, int]]:
    return [(0, len(text))]


def literal_spans(needles: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    """Each needle's non-overlapping occurrences in `text`, left to right, needle by needle (what
    `re.finditer(re.escape(needle))` gives).  A loss may carry thousands of needles (a tekken file's
    special tokens, a SentencePiece model's user-defined pieces) and is asked once per mismatch, over
    every sweep string: beyond a few needles the text's substrings of each needle length are looked up
    in a set instead (a regex per needle overflowed `re`'s cache and recompiled them on every call)."""
    if len(needles) > 8:
        index = _needle_index(needles)
        found = {text[i:i + n] for n in index[1] for i in range(len(text) - n + 1)} & index[0]
        if not found:
            return []
        needles = [t for _, t in sorted((i, t) for t in found for i in index[2][t])]  # in the needles' order
    out = []
    for t in needles:
        at = text.find(t) if t else -1
        while at >= 0:
            out.append((at, at + len(t)))
            at = text.find(t, at + len(t))
    return out


_NEEDLES: dict[int, tuple] = {}


def _needle_index(needles: tuple[str, ...]) -> tuple[frozenset, tuple[int, ...], dict]:
    """(the needles as a set, their lengths, each needle's places in the tuple), made once per needle
    tuple (held by its loss)."""
    hit = _NEEDLES.get(id(needles))
    if hit is None or hit[0] is not needles:
        if len(_NEEDLES) > 64:  # a long-lived process (tests) sees many losses: keep few
            _NEEDLES.clear()
        order: dict[str, list[int]] = {}
        for i, t in enumerate(needles):
            order.setdefault(t, []).append(i)
        hit = _NEEDLES[id(needles)] = (needles, (frozenset(t for t in needles if t),
                                                 tuple(sorted({len(t) for t in needles if t})), order))
    return hit[1]


@lru_cache(maxsize=64)
def _split_removed(pattern: str):
    # tokenizers (~10 ms): only when a pattern is asked (attribution), never by a warm export
    from tokenizers import Regex
    from tokenizers.pre_tokenizers import Split

    return Split(Regex(pattern), "removed")


def pattern_spans(pattern: str, text: str) -> list[tuple[int, int]]:
    """The spans an Oniguruma pattern matches in `text` (HF's own engine runs it; the compiled
    pattern is kept, as attribution asks it once per mismatch)."""
    kept = _split_removed(pattern).pre_tokenize_str(text)
    out, pos = [], 0
    for _, (a, b) in kept:  # what is not kept was matched
        if a > pos:
            out.append((pos, a))
        pos = b
    if pos < len(text):
        out.append((pos, len(text)))
    return out


def _unicode_ws_next_to(loss: Loss, text: str) -> list[tuple[int, int]]:
    ws = r"[^\S\x00-\x7f]"
    return [(m.start(), m.end()) for t in loss.trigger for m in
            re.finditer(f"{ws}+{re.escape(t)}|{re.escape(t)}{ws}+", text)]


def _long_words(loss: Loss, text: str) -> list[tuple[int, int]]:
    """The loss's pattern (the lowering writes the words that can pass the limit in bytes, from the
    limit and the pre-tokenizer), else runs of 21 or more non-space characters."""
    if loss.pattern:
        return pattern_spans(loss.pattern, text)
    return [(m.start(), m.end()) for m in re.finditer(r"\S{21,}", text)]


def unk_table_gap(c: str) -> bool:
    """A character the BPE unk table (`lower.models`) cannot map to unk: beyond plane 1, unassigned or
    private use (not in the table: where new characters are rarely assigned, at ~9 bytes an entry), or
    one the runtime turns into a space before any table lookup."""
    cp = ord(c)
    return (cp >= 0x20000 and unicodedata.category(c) in ("Cn", "Co")) or cp in TABLE_CONTROL_TO_SPACE


# ------------------------------------------------------------------------------------ the kinds
# Normalizers: the runtime runs the lowered normalizer; `verify.emulate` models it exactly.
NORMALIZER_TABLE = _kind("normalizer-table", "normalizer", "a Unicode normalizer as a code-point table: no "
                         "composition, controls and zero-width characters become spaces (NFD/NFKD always; NFC/NFKC/"
                         "charsmap with normalizer form 'table')", EDGE, "normalizer", any_input)
NORMALIZER_APPROX = _kind("normalizer-approx", "normalizer", "NFC/NFKC/charsmap as a table plus canonical pairs: "
                          "compositions beyond the pairs are not made", EDGE, "normalizer", any_input)
BERT_CLEAN = _kind("bert-clean", "normalizer", "BERT clean_text keeps Cf/Co, Zl/Zp differ", EDGE, "normalizer",
                   chars("Cf Co Zl Zp characters", lambda c: unicodedata.category(c) in ("Cf", "Co", "Zl", "Zp")))
LOWERCASE = _kind("lowercase", "normalizer", "lowercasing one code point to one", EDGE, "normalizer",
                  chars("multi-character lowercase", lambda c: len(c.lower()) > 1))
STRIP_WHITESPACE = _kind("strip-whitespace", "normalizer", "Strip removes ASCII whitespace and Zs only", EDGE,
                         "normalizer", chars("NEL, Zl, Zp", lambda c: c in "\x85\u2028\u2029" or unicodedata.category(c) in ("Zl", "Zp")))
STRIP_RIGHT = _kind("strip-right", "normalizer", "MNN 3.6.1 reads a Strip normalizer's strip_left only: trailing "
                    "whitespace stays", TEXT, "normalizer", any_input)
STRIP_35 = _kind("strip-3.5", "normalizer", "MNN 3.5 has no Strip normalizer", TEXT, "normalizer", any_input)
NORMALIZER_DROPPED = _kind("normalizer-dropped", "normalizer", "a normalizer with no runtime form is dropped", TEXT,
                           "normalizer", any_input)
METASPACE_FIRST = _kind("metaspace-first", "normalizer", "the runtime prepends the Metaspace replacement after "
                        "special tokens too (transformers' legacy=false does not)", CHAT, "tokenizers")

# Pre-tokenizers.
PREFIX_SPACE = _kind("prefix-space", "pre_tokenizer", "ByteLevel add_prefix_space is not applied", TEXT, "patch",
                     any_input)
METASPACE_FIRST_PRE = _kind("metaspace-first-pre", "pre_tokenizer", "Metaspace prepend_scheme 'first' runs as "
                            "'always' (prepends after special tokens too)", CHAT, "patch", any_input)
METASPACE_LITERAL = _kind("metaspace-literal", "pre_tokenizer", "a piece starting with a literal U+2581 gets a "
                          "second one prepended (HF prepends none)", EDGE)
WHITESPACE_CLASS = _kind("whitespace-class", "pre_tokenizer", "the runtime's \\s lacks U+0085, U+2028, U+2029", EDGE)
WHITESPACE_WORD = _kind("whitespace-word", "pre_tokenizer", "the runtime's \\w differs on No, Pc, ZWNJ/ZWJ, circled "
                        "letters", EDGE)
SPLIT_BEHAVIOR = _kind("split-behavior", "pre_tokenizer", "a Split behavior with no runtime form is dropped", TEXT,
                       "patch", any_input)
MERGED_WITH_PREVIOUS = _kind("merged-with-previous", "pre_tokenizer", "MergedWithPrevious merges consecutive "
                             "matches differently", TEXT)
REGEX_UNSUPPORTED = _kind("regex-unsupported", "pre_tokenizer", "a split regex the runtime's engine runs "
                          "differently", TEXT)
REGEX_STACK = _kind("regex-stack", "pre_tokenizer", "a split regex written with explicit ranges runs on std::wregex, "
                    "which recurses per character: one piece of about 33,000 characters (MNN 3.6.1, 8 MiB stack; "
                    "about 4,000 on Android's 1 MiB worker-thread stack) crashes the runtime", CRASH, None,
                    lambda loss, text: [])
MAX_WORD = _kind("max-word", "pre_tokenizer", "--max-word N: words longer than N characters are cut into N-character "
                 "pieces before BPE (a bounded encode cost on untrusted input; exact on every word up to N)", TEXT,
                 "patch", any_input)
REGEX_BOUND = _kind("regex-bound", "pre_tokenizer", "--regex-form bounded: a split regex that runs on std::wregex "
                    "has its repetitions capped, so a run longer than the cap is cut into several pieces (no crash; "
                    "exact wherever no repeated item runs over the cap)", TEXT, "patch", any_input)
RUNTIME_CRASH = _kind("runtime-crash", "pre_tokenizer", "the runtime crashed on a robustness input (one long run of "
                      "a character class, or a long document) in verification", CRASH, None, lambda loss, text: [])
REGEX_FOLD = _kind("regex-fold", "pre_tokenizer", "a split regex in the fold engine's form (--regex-form fold): "
                   "its Unicode sub-categories, scripts and class operations read as whole categories on non-ASCII "
                   "text (o200k's case split holds on ASCII; non-ASCII letters count as both cases)", TEXT)
REGEX_UNICODE_VERSION = _kind("regex-unicode-version", "pre_tokenizer", "a split regex written with explicit ranges "
                              "follows this Python's Unicode version: characters assigned later are in no class",
                              EDGE, None, chars("unassigned here", lambda c: unicodedata.category(c) == "Cn"))
REGEX_CONTROL = _kind("regex-control", "pre_tokenizer", "input bytes \\x01-\\x07 collide with the regex engine's "
                      "fold markers", EDGE, None, chars("\\x01-\\x07", lambda c: "\x01" <= c <= "\x07"))
PRE_TOKENIZER_DROPPED = _kind("pre-tokenizer-dropped", "pre_tokenizer", "a pre-tokenizer with no runtime form is "
                              "dropped", TEXT, "patch", any_input)

# Models.
BPE_FIELD = _kind("bpe-field", "model", "a BPE option the runtime does not apply (dropout, continuing_subword_prefix, "
                  "end_of_word_suffix)", TEXT, "patch", any_input)
IGNORE_MERGES = _kind("ignore-merges", "model", "ignore_merges: whole words in the vocab are still merged "
                      "pair by pair", TEXT, "patch", any_input)
UNK_DROP = _kind("unk-drop", "model", "characters outside the vocab are dropped, not mapped to unk", TEXT, "patch",
                 any_input)
UNK_TABLE_GAPS = _kind("unk-table-gaps", "model", "BPE unk by a code-point table: characters outside it (unassigned "
                       "or private use beyond plane 1) are dropped; control and format characters the table turns "
                       "into spaces stay spaces where spaces are known", EDGE, None,
                       chars("unassigned, private use, control/format", lambda c: unk_table_gap(c)))
UNK_SURFACE = _kind("unk-surface", "decoder", "the unk token is written as one character the unk table maps to: "
                    "decode shows that character for it", TEXT, "stream")
WORDPIECE_NO_UNK = _kind("wordpiece-no-unk", "model", "the unk token is not in the vocabulary: a word holding a "
                         "byte no token starts with encodes as id -1 (a legacy type 1 skipped that byte)", EDGE, None,
                         lambda loss, text: [(i, i + 1) for i, c in enumerate(text)
                                             if set(c.encode("utf-8", "surrogatepass")) & {ord(b) for b in loss.trigger}])
UNIGRAM_TIES = _kind("unigram-ties", "model", "equal-score Unigram segmentations are broken differently", TEXT, "ties",
                     any_input)
# MNN 3.6.1 UnigramModel::tokenize adds an unk node for the character ending at byte i only when no
# piece ends at i (`if (best_scores[i] <= -1e17)`), scored `scores_[unk_token_id_]`; HF and
# sentencepiece add one wherever no one-character piece starts, scored min_score - 10
# (`lower.unigram_viterbi` quotes the code).  Edge: it acts only on a character the source itself
# encodes as unk (no one-character piece) next to a longer piece holding it.
UNIGRAM_UNK_NODE = _kind("unigram-unk-node", "model", "the runtime's Unigram Viterbi adds an unk node only where no "
                         "piece ends (HF: wherever no one-character piece starts), scored as the unk piece: a "
                         "character with no piece of its own that ends (or lies in) a longer piece is covered "
                         "otherwise", EDGE, "unk-node",
                         lambda loss, text: [(i, i + 1) for i, c in enumerate(text) if c in loss.trigger])
UNIGRAM_UNK = _kind("unigram-unk", "model", "a Unigram model without unk_id gets unk 0", EDGE, "patch")
WORDPIECE_BYTES = _kind("wordpiece-bytes", "model", "the WordPiece word limit counts bytes, not characters", EDGE,
                        None, _long_words)

# Added tokens.
SINGLE_WORD = _kind("single-word", "added_tokens", "single_word is not checked", EDGE, "patch")
ADDED_NORMALIZED = _kind("added-normalized", "added_tokens", "the token is matched before normalization, not in "
                         "normalized text", EDGE, "patch")
ADDED_STRIP_ASCII = _kind("added-strip-ascii", "added_tokens", "lstrip/rstrip eat ASCII whitespace only", EDGE, None,
                          _unicode_ws_next_to)
SPECIAL_NOT_IN_HEADER = _kind("special-not-in-header", "added_tokens", "special tokens without a role are split by "
                              "the added-token pass only: is_special() false, decode(vector) keeps them", EDGE)
ADDED_NOT_DECODABLE = _kind("added-not-decodable", "added_tokens", "added tokens outside the vocab decode to ''",
                            TEXT, "stream")

# Post-processing (what encode() adds).
POST_DROPPED = _kind("post-dropped", "post_processor", "a post-processor with no runtime form is dropped", BOS_EOS,
                     "engine")
BOS_NONE = _kind("bos-none", "post_processor", "--bos none: encode() adds no BOS", BOS_EOS, "engine")
BOS_TEMPLATE = _kind("bos-template", "post_processor", "encode() of plain text adds no BOS; the chat template does",
                     BOS_EOS, "engine")
SUFFIX_NOT_APPENDED = _kind("suffix-not-appended", "post_processor", "the target does not run the post program: "
                            "encode() appends no suffix", BOS_EOS, "engine")
BOS_INNER = _kind("bos-inner", "chat_template", "--bos prefix with a template that renders BOS inside the "
                  "conversation: those BOS are not rendered", CHAT, "chat-bos")
CHAT_PREFIX = _kind("chat-prefix", "post_processor", "the runtime's chat path adds the header prefix (BOS) to every "
                    "prompt; the template renders none and transformers' apply_chat_template adds none", CHAT,
                    "chat-prefix")
CHAT_TEMPLATE = _kind("chat-template", "chat_template", "a construct MNN's Jinja engine renders differently", CHAT,
                      "chat-render")
# No template found or generated for a model that may chat (`readers.chat_source`): the app formats every
# conversation without the model's prompt format.  It explains no mismatch (the chat checks have
# nothing to render), so its trigger never fires; `--chat-template FILE` gives one, `--no-chat` says
# the model has no chat.
CHAT_TEMPLATE_MISSING = _kind("chat-template-missing", "chat_template", "no chat template was found or generated: "
                              "the app formats every conversation without the model's prompt format", CHAT, None,
                              lambda loss, text: [])

# Codes a target with some capability runs exactly: code -> (whether a `target.Target` has it, why),
# for the refusal hint (`targets.runs_exactly` finds the target).
EXACT_ON = {
    "suffix-not-appended": (lambda t: t.appends_suffix, "it runs the post program, so encode() appends the "
                            "suffix ids"),
    "strip-3.5": (lambda t: t.reads(NormalizerCode.STRIP), "it has the Strip normalizer"),
}

# Decoding (what the runtime's single-id decode, the path the engine streams, returns).
STREAM_DECODE = _kind("stream-decode", "decoder", "decode(int) ignores the decoder chain", TEXT, "stream")
NO_DECODER = _kind("no-decoder", "decoder", "no decoder: the runtime concatenates tokens, HF joins them with spaces",
                   TEXT, "stream")
DECODER_STRIP = _kind("decoder-strip", "decoder", "Strip removes one occurrence from the first/last token only",
                      TEXT, "stream")
WORDPIECE_CLEANUP = _kind("wordpiece-cleanup", "decoder", "WordPiece cleanup is always applied", TEXT, "stream")
# (a decoder loss, not a reader one: a reader loss that fired on every input would explain any id
# difference from the reference; "stream" explains only decodes the runtime's own surfaces give)
CLIP_DECODE = _kind("clip-decode", "decoder", "CLIP's own decode turns the </w> word ends into spaces; the decoder "
                    "chain it serializes (ByteLevel) and the runtime keep them", TEXT, "stream")
DECODER_DROPPED = _kind("decoder-dropped", "decoder", "a decoder with no runtime form is dropped", TEXT, "stream")

# Reader differences: the IR (HF semantics) against the source's own library.
SP_ADDED_TOKEN_TEXT = _kind("sp-added-token-text", "reader", "control/user-defined piece text is split out (as "
                            "transformers does); sentencepiece encodes it as text", EDGE, "reader")
SP_CONTROL_TEXT = _kind("sp-control-text", "reader", "control-piece text (<s>, </s>) is split out (as transformers "
                        "does); sentencepiece, the reference of a bare .model, encodes it as text (the .mtok "
                        "lowering follows sentencepiece)", EDGE, "reader")
SP_RESERVED_PIECE_TEXT = _kind("sp-reserved-piece-text", "reader", "literal reserved-piece text (<unk>, <0xHH>) can "
                               "match those pieces", EDGE, "reader")
SP_TRAILING_U2581 = _kind("sp-trailing-u2581", "reader", "sentencepiece also strips a trailing literal U+2581",
                          EDGE, "reader")
SP_UNK_SURFACE = _kind("sp-unk-surface", "reader", "sentencepiece decodes an unknown piece as ' \u2047 '", EDGE,
                       "reader")  # its trigger is the surface in the reference's decode

SP_CHARSMAP = _kind("sp-charsmap", "reader", "HF's Precompiled normalizer runs the charsmap differently from "
                    "sentencepiece on some inputs (e.g. it composes no conjoining jamo)", EDGE, "reader")
# (its trigger needs the reference: `verify.attribution` fires it where the two normalizations differ)
SP_FLOAT32_VITERBI = _kind("sp-float32-viterbi", "reader", "sentencepiece adds Unigram path scores in float32 over "
                           "the whole text: where two segmentations differ by less than the rounding of the running "
                           "total, it can keep the lower-scoring one; HF and the runtime keep the higher", TEXT,
                           "reader")
# (no trigger of its own: `verify.attribution` fires it where `verify.spm_unigram.near_tie` shows the
# library's float32 Viterbi gives the reference's ids and an exact one scores HF's ids higher)
TEKKEN_SPECIAL_TEXT = _kind("tekken-special-text", "reader", "special-token text is split out (as HF does); "
                            "mistral_common encodes it as text", EDGE, "reader")
CLIP_SPECIAL_TEXT = _kind("clip-special-text", "reader", "<|startoftext|>/<|endoftext|> text is split out (as HF "
                          "does); open_clip's SimpleTokenizer encodes it as text", EDGE, "reader")
def _clip_cleaned(loss: Loss, text: str) -> list[tuple[int, int]]:
    """The whole text, where CLIP's own cleanup (`ftfy.fix_text`, `html.unescape` twice) changes it."""
    try:
        # CLIP's cleanup, only for its loss: every export loads this module, none needs html (~1.5 ms)
        import html

        import ftfy  # an optional library (the `references` extra): CLIP's reference needs it
    except ImportError:  # no reference ran without it
        return []
    return [(0, len(text))] if html.unescape(html.unescape(ftfy.fix_text(text))) != text else []


CLIP_FINAL_SIGMA = _kind("clip-final-sigma", "reader", "CLIP's SimpleTokenizer lowercases with Python's str.lower, "
                         "which makes a word-final capital sigma a final sigma (ς); HF's Lowercase gives σ", EDGE,
                         "reader")
CLIP_FTFY = _kind("clip-ftfy", "reader", "CLIP's SimpleTokenizer runs ftfy.fix_text and html.unescape before "
                  "tokenizing; the IR starts at NFC", TEXT, "reader", _clip_cleaned)
def _age(age: str) -> tuple[int, ...]:
    """"10.0" -> (10, 0); "Unassigned" -> ()."""
    return tuple(int(x) for x in age.split(".")[:2]) if age[:1].isdigit() else ()


def _wpm_departs(loss: Loss, text: str) -> list[tuple[int, int]]:
    """The loss's pattern, and every character assigned after the Unicode version HF's and the
    runtime's tables know (`unicode.ucd.VERSION`): llama.cpp's newer tables class those otherwise."""
    import unicodedataplus  # a dependency; loaded only where a GGUF BERT loss is asked

    newer = [(i, i + 1) for i, c in enumerate(text) if _age(unicodedataplus.age(c)) > (9, 0)]
    return sorted(pattern_spans(loss.pattern, text) + newer)


GGUF_USER_TEXT = _kind("gguf-user-text", "reader", "llama.cpp decodes a user-defined token as the text it stores; "
                       "a byte-level decoder (HF's, the runtime's) reads that text as GPT-2 byte characters, so a "
                       "token stored as plain text (DeepSeek's 'ö') decodes to U+FFFD", TEXT, "reader")
GGUF_WPM = _kind("gguf-wpm", "reader", "llama.cpp's WordPiece (a GGUF `bert` vocabulary) departs from BERT's "
                 "preprocessing, which the IR, HF and the runtime follow: it drops every mark (not only Mn) and keeps "
                 "only the leading jamo of a composed Hangul syllable, splits at the control characters Python calls "
                 "space, classes characters newer than Unicode 9.0 by its own tables, and has no word-length limit",
                 TEXT, "reader", _wpm_departs)

# Verification itself: no independent reference ran, so the runtime was compared with HF built from
# our own reading of the source, which cannot see a reader bug.  Its trigger never fires (it
# explains no mismatch) and no check measures it (layer "reference"): its severity stays "text",
# refused by default.
REFERENCE_UNAVAILABLE = _kind("reference-unavailable", "reference", "no independent reference ran: the file was "
                              "compared with this tool's own reading of the source (a self-check)", TEXT, None,
                              lambda loss, text: [])

# Legacy tokenizer.txt types: each is explained by the type's documented projection.
_LEGACY = {
    "type0-unigram": "type 0 runs a Unigram model as SentencePiece BPE by piece score",
    "type0-merges": "type 0 derives merges from piece scores",
    "type0-bpe-field": "a BPE option type 0 does not apply",
    "type0-unk": "type 0 byte fallback / unk handling differs",
    "type0-normalizer": "type 0 only prepends U+2581 and replaces spaces",
    "type0-decoder": "type 0 has a fixed decoder",
    "type0-decode": "type 0 decode(id) turns only the first U+2581 into a space",
    "type0-added-flags": "type 0 ignores added-token flags",
    "type0-special-text": "type 0 matches added-token text differently",
    "type0-suffix": "type 0 has only a prefix list",
    "type0-post": "type 0 cannot run the post-processor",
    "legacy-bert-normalizer": "type 2 normalizes ASCII only",
    "legacy-bert-split": "type 2 splits ASCII punctuation only",
    "legacy-bert-wordpiece": "type 2 WordPiece differs",
    "legacy-bert-decode": "type 2 decode differs",
    "legacy-bert-unk": "type 2 unk handling differs",
    "legacy-hf-regex": "type 3 runs its regex with an ASCII-only std::regex",
    "legacy-duplicate-merge": "type 3 keeps the first of duplicate merges",
    "legacy-normalizer": "type 1 has no normalizer",
    "legacy-added-flags": "type 1 ignores added-token flags",
    "legacy-no-template": "legacy files carry no chat template",
    "legacy-greedy": "type 1 matches greedily (longest prefix), not by BPE merges",
    "legacy-unknown-bytes": "type 1 cannot encode bytes outside its vocabulary",
}
for _code, _summary in _LEGACY.items():  # module constants too: TYPE0_UNIGRAM, LEGACY_GREEDY, ...
    globals()[_code.upper().replace("-", "_")] = _kind(_code, "legacy", _summary, TEXT, "legacy", any_input)


# Lint rules of `chat.lint` whose runtime behaviour verify can render (projection "chat-render").
CHAT_RULES = ("raise-exception",)
