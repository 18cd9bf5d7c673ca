"""The `.mtok` body, declared once (spec section 2).  `codec.py` walks these tables to read and to
write, and `inspect` prints them, so the reader and the writer cannot drift.

A component is a u8 code followed by its fields.  `Variant` maps one code to one IR class: `fields`
are the (IR attribute, wire kind) pairs in file order, and `fixed` are the values of the IR
attributes the format does not carry (the reader fills them in; the writer refuses anything else,
because lowering must have removed it first)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import decoders as D, models as M, normalizers as N, pre_tokenizers as P
from .constants import DecoderCode as DC, ModelCode as MC, NormalizerCode as NC, PreTokenizerCode as PC


@dataclass(frozen=True)
class Variant:
    code: int
    cls: type
    fields: tuple[tuple[str, str], ...] = ()
    fixed: dict = field(default_factory=dict)
    when: object = None  # predicate on the IR value when several codes share a class


# Wire kinds: bool u8 u32 f64 str (u16 length) | pattern (str <-> Pattern(String)) |
# regex (str <-> Pattern(Regex)) | scheme (bool add_prefix_space <-> prepend_scheme) |
# behavior (u8 <-> Split behavior name) | children (u32 count + components of the same family) |
# table (NormTable, spec 2.3.1) | bert_table (a NormTable present iff strip_accents) |
# vocab_id (u32 that must name a vocab entry) | count (u32 length of the field COUNT_OF names,
# computed on write, never stored in the IR) | vocab ({str token, u32 id} x vocab_size) |
# scored_vocab ({str token, u32 id, f64 score} x vocab_size) | merges ({u32 id1, u32 id2, u32 rank}
# x merge_size).

BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious")  # index = wire value (spec 2.4)

NORMALIZERS = (
    Variant(NC.PREPEND, N.Prepend, (("prepend", "str"),)),
    Variant(NC.REPLACE, N.Replace, (("pattern", "pattern"), ("content", "str"))),
    Variant(NC.SEQUENCE, N.Sequence, (("normalizers", "children"),)),
    Variant(NC.BERT, N.MnnBertNormalizer,
            (("clean_text", "bool"), ("handle_chinese_chars", "bool"), ("strip_accents", "bool"),
             ("lowercase", "bool")), {"nfd_table": None}, when=lambda n: n.nfd_table is None),
    Variant(NC.TABLE, N.CodepointMap, (("entries", "table"),)),
    Variant(NC.BERT_NFD, N.MnnBertNormalizer,
            (("clean_text", "bool"), ("handle_chinese_chars", "bool"), ("strip_accents", "bool"),
             ("lowercase", "bool"), ("nfd_table", "bert_table")), when=lambda n: n.nfd_table is not None),
    Variant(NC.STRIP, N.Strip, (("strip_left", "bool"), ("strip_right", "bool"))),
)

PRE_TOKENIZERS = (
    Variant(PC.BYTE_LEVEL, P.ByteLevel, (("use_regex", "bool"),),
            {"add_prefix_space": False, "trim_offsets": True}),
    Variant(PC.DIGITS, P.Digits, (("individual_digits", "bool"),)),
    Variant(PC.METASPACE, P.Metaspace, (("replacement", "str"), ("prepend_scheme", "scheme")),
            {"split": False}),
    Variant(PC.SPLIT, P.Split, (("pattern", "regex"), ("invert", "bool"), ("behavior", "behavior"))),
    Variant(PC.BERT, P.BertPreTokenizer),
    Variant(PC.SEQUENCE, P.Sequence, (("pretokenizers", "children"),)),
)

DECODERS = (
    Variant(DC.BYTE_LEVEL, D.ByteLevel, (), {"add_prefix_space": True, "trim_offsets": True, "use_regex": True}),
    Variant(DC.BYTE_FALLBACK, D.ByteFallback),
    Variant(DC.METASPACE, D.Metaspace, (("replacement", "str"), ("prepend_scheme", "scheme")),
            {"split": True}),
    Variant(DC.WORDPIECE, D.WordPiece, (("prefix", "str"), ("cleanup", "bool"))),
    Variant(DC.FUSE, D.Fuse),
    Variant(DC.REPLACE, D.Replace, (("pattern", "pattern"), ("content", "str"))),
    Variant(DC.STRIP, D.Strip, (("content", "str"), ("start", "u32"), ("stop", "u32"))),
    Variant(DC.SEQUENCE, D.Sequence, (("decoders", "children"),)),
)

# The model body (spec 2.5): the counts come first, the entries they count last.
COUNT_OF = {"vocab_size": "vocab", "merge_size": "merges"}
MODELS = (
    Variant(MC.BPE, M.BPE,
            (("vocab_size", "count"), ("byte_fallback", "bool"), ("mnn_byte_level", "bool"),
             ("merge_size", "count"), ("vocab", "vocab"), ("merges", "merges")),
            {"dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "ignore_merges": False}),
    Variant(MC.WORDPIECE, M.WordPiece,
            (("vocab_size", "count"), ("unk_token", "str"), ("continuing_subword_prefix", "str"),
             ("max_input_chars_per_word", "u32"), ("vocab", "vocab"))),
    Variant(MC.UNIGRAM, M.Unigram,
            (("vocab_size", "count"), ("unk_id", "vocab_id"), ("byte_fallback", "bool"),
             ("vocab", "scored_vocab"))),
)


@dataclass(frozen=True)
class Family:
    """One component family: its variants and how its code byte reads in messages."""

    name: str
    variants: tuple[Variant, ...]
    code_what: str  # the code byte, as error messages name it
    on_unknown: str  # why an unknown code is fatal
    null_code: int | None = None  # the code meaning "no component" (the decoder's 0 is ByteLevel)
    noop_codes: dict = field(default_factory=dict)  # code -> warning; read as "no component"


_DESYNC = "the runtime would desynchronize here"
FAMILIES = {f.name: f for f in (
    Family("normalizer", NORMALIZERS, "normalizer code", _DESYNC, null_code=NC.NONE,
           noop_codes={NC.NFKC_OLD: "normalizer code 1 (old NFKC) has an empty table: a no-op in every runtime"}),
    Family("pre_tokenizer", PRE_TOKENIZERS, "pre_tokenizer code", _DESYNC, null_code=PC.NONE),
    Family("model", MODELS, "model type", "the runtime would crash on encode"),
    Family("decoder", DECODERS, "decoder code", _DESYNC),
)}


@dataclass(frozen=True)
class SectionSpec:
    """One body section (spec 2.2).  `kind` is a family name or a wire kind; `attr` is where the
    value lives in the IR (a `Tokenizer` attribute, or `chat.<field>`); `what` names it in the
    writer's messages; `doc` is the layout `inspect` shows."""

    name: str
    kind: str
    attr: str
    what: str
    doc: str


# Sections in file order.  Sections from FIRST_OPTIONAL on are optional to the reader (older
# writers stop early) and always written by us.
SECTIONS = (
    SectionSpec("normalizer", "normalizer", "normalizer", "normalizer", "u8 code + fields, recursive"),
    SectionSpec("pre_tokenizer", "pre_tokenizer", "pre_tokenizer", "pre_tokenizer", "u8 code + fields, recursive"),
    SectionSpec("model", "model", "model", "model", "u8 type + fields, vocab, merges"),
    SectionSpec("decoder", "decoder", "decoder", "decoder", "u8 code + fields, recursive"),
    SectionSpec("added_tokens", "added_tokens", "added_tokens", "added tokens",
                "u32 n x {u32 id, 3 x bool, str}"),
    SectionSpec("chat_template", "lstr", "chat.text", "chat template", "u32 length + UTF-8"),
    SectionSpec("eos", "str", "chat.eos_token", "eos token", "u16 length + UTF-8"),
    SectionSpec("flags", "flags", "chat.clean_up_tokenization_spaces", "flags", "u8, bit 0: clean-up spaces"),
    SectionSpec("bos", "str", "chat.bos_token", "bos token", "u16 length + UTF-8"),
    SectionSpec("post_program", "program", "post_processor", "post program", "u16 n x {u8 op [u32 id]}"),
)
FIRST_OPTIONAL = "chat_template"
