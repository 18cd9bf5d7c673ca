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
# table (NormTable, spec 2.3.1) | bert_table (a NormTable present iff strip_accents).

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

# Model headers; the vocab and merges that follow them have their own fast codecs in codec.py.
MODELS = (
    Variant(MC.BPE, M.BPE, (("byte_fallback", "bool"), ("mnn_byte_level", "bool")),
            {"dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "ignore_merges": False}),
    Variant(MC.WORDPIECE, M.WordPiece,
            (("unk_token", "str"), ("continuing_subword_prefix", "str"), ("max_input_chars_per_word", "u32"))),
    Variant(MC.UNIGRAM, M.Unigram, (("unk_id", "u32"), ("byte_fallback", "bool"))),
)

FAMILIES = {
    "normalizer": NORMALIZERS,
    "pre_tokenizer": PRE_TOKENIZERS,
    "decoder": DECODERS,
    "model": MODELS,
}
# Families where code 0 means "no component" (the decoder's 0 is ByteLevel; the model's is BPE).
NULL_CODE = {"normalizer": 0, "pre_tokenizer": 0}

# Sections in file order (spec 2.2).  Sections after `added_tokens` are optional to the reader
# (older writers stop early) and always written by us.
SECTIONS = (
    ("normalizer", "component", "normalizer (recursive)"),
    ("pre_tokenizer", "component", "pre-tokenizer (recursive)"),
    ("model", "model", "model header, vocab, merges"),
    ("decoder", "component", "decoder (recursive)"),
    ("added_tokens", "added_tokens", "u32 count x {u32 id, u8 special, u8 lstrip, u8 rstrip, str}"),
    ("chat_template", "lstr", "u32 length + UTF-8"),
    ("eos", "str", "u16 length + UTF-8"),
    ("flags", "u8", "bit0 clean_up_tokenization_spaces"),
    ("bos", "str", "u16 length + UTF-8"),
    ("post_program", "program", "u16 op count x {u8 op [u32 id]}"),
)
FIRST_OPTIONAL = "chat_template"
