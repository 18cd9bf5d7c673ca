"""The `.mtok` body, declared once (spec section 2).  `file.py` walks these tables to read and to
write, and `inspect` prints them, so the reader and the writer cannot drift.

Every field and section is a wire kind from `codec.py`: one object holding its paired read and
write.  A component is a u8 code followed by its fields.  `Variant` maps one code to one IR class:
`fields` are the (IR attribute, wire kind) pairs in file order, and `fixed` are the values of the
IR attributes the format does not carry (the reader fills them in; the writer refuses anything
else, because lowering must have removed it first)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import decoders as D, models as M, normalizers as N, pre_tokenizers as P
from . import codec as K
from .codec import Family, Variant
from .constants import DecoderCode as DC, ModelCode as MC, NormalizerCode as NC, PreTokenizerCode as PC

BOOL, U32, STR = K.Bool(), K.U32Kind(), K.Str()
PATTERN, REGEX = K.PatternKind(regex=False), K.PatternKind(regex=True)  # str <-> Pattern(String) / Pattern(Regex)
SCHEME = K.Scheme()  # bool add_prefix_space <-> prepend_scheme
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious")  # index = wire value (spec 2.4)
BEHAVIOR = K.Choice(BEHAVIORS)
CHILDREN = K.Children()  # u32 count + components of the same family
TABLE = K.Table()  # NormTable (spec 2.3.1)
BERT_TABLE = K.BertTable()  # a NormTable present iff strip_accents

_BERT = (("clean_text", BOOL), ("handle_chinese_chars", BOOL), ("strip_accents", BOOL), ("lowercase", BOOL))
NORMALIZERS = (
    Variant(NC.PREPEND, N.Prepend, (("prepend", STR),)),
    Variant(NC.REPLACE, N.Replace, (("pattern", PATTERN), ("content", STR))),
    Variant(NC.SEQUENCE, N.Sequence, (("normalizers", CHILDREN),)),
    Variant(NC.BERT, N.MnnBertNormalizer, _BERT, {"nfd_table": None}, when=lambda n: n.nfd_table is None),
    Variant(NC.TABLE, N.CodepointMap, (("entries", TABLE),)),
    Variant(NC.BERT_NFD, N.MnnBertNormalizer, (*_BERT, ("nfd_table", BERT_TABLE)),
            when=lambda n: n.nfd_table is not None),
    Variant(NC.STRIP, N.Strip, (("strip_left", BOOL), ("strip_right", BOOL))),
)

PRE_TOKENIZERS = (
    Variant(PC.BYTE_LEVEL, P.ByteLevel, (("use_regex", BOOL),), {"add_prefix_space": False, "trim_offsets": True}),
    Variant(PC.DIGITS, P.Digits, (("individual_digits", BOOL),)),
    Variant(PC.METASPACE, P.Metaspace, (("replacement", STR), ("prepend_scheme", SCHEME)), {"split": False}),
    Variant(PC.SPLIT, P.Split, (("pattern", REGEX), ("invert", BOOL), ("behavior", BEHAVIOR))),
    Variant(PC.BERT, P.BertPreTokenizer),
    Variant(PC.SEQUENCE, P.Sequence, (("pretokenizers", CHILDREN),)),
)

DECODERS = (
    Variant(DC.BYTE_LEVEL, D.ByteLevel, (), {"add_prefix_space": True, "trim_offsets": True, "use_regex": True}),
    Variant(DC.BYTE_FALLBACK, D.ByteFallback),
    Variant(DC.METASPACE, D.Metaspace, (("replacement", STR), ("prepend_scheme", SCHEME)), {"split": True}),
    Variant(DC.WORDPIECE, D.WordPiece, (("prefix", STR), ("cleanup", BOOL))),
    Variant(DC.FUSE, D.Fuse),
    Variant(DC.REPLACE, D.Replace, (("pattern", PATTERN), ("content", STR))),
    Variant(DC.STRIP, D.Strip, (("content", STR), ("start", U32), ("stop", U32))),
    Variant(DC.SEQUENCE, D.Sequence, (("decoders", CHILDREN),)),
)

# The model body (spec 2.5): the counts come first, the entries they count last.
VOCAB_SIZE, MERGE_SIZE = K.Count("vocab"), K.Count("merges")  # computed on write, never in the IR
MODELS = (
    Variant(MC.BPE, M.BPE,
            (("vocab_size", VOCAB_SIZE), ("byte_fallback", BOOL), ("mnn_byte_level", BOOL),
             ("merge_size", MERGE_SIZE), ("vocab", K.Vocab()), ("merges", K.Merges())),
            {"dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "ignore_merges": False}),
    Variant(MC.WORDPIECE, M.WordPiece,
            (("vocab_size", VOCAB_SIZE), ("unk_token", STR), ("continuing_subword_prefix", STR),
             ("max_input_chars_per_word", U32), ("vocab", K.Vocab()))),
    Variant(MC.UNIGRAM, M.Unigram,
            (("vocab_size", VOCAB_SIZE), ("unk_id", K.VocabId()), ("byte_fallback", BOOL),
             ("vocab", K.ScoredVocab()))),
)

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
    """One body section (spec 2.2).  `kind` is its wire kind (a component family for the first
    four); `attr` is where the value lives in the IR (a `Tokenizer` attribute, or
    `chat.<field>`); `what` names it in the writer's messages; `doc` is the layout `inspect`
    shows."""

    name: str
    kind: K.Kind
    attr: str
    what: str
    doc: str


FLAGS = K.Flags()
# Sections in file order.  Sections from FIRST_OPTIONAL on are optional to the reader (older
# writers stop early) and always written by us.
SECTIONS = (
    SectionSpec("normalizer", FAMILIES["normalizer"], "normalizer", "normalizer", "u8 code + fields, recursive"),
    SectionSpec("pre_tokenizer", FAMILIES["pre_tokenizer"], "pre_tokenizer", "pre_tokenizer",
                "u8 code + fields, recursive"),
    SectionSpec("model", FAMILIES["model"], "model", "model", "u8 type + fields, vocab, merges"),
    SectionSpec("decoder", FAMILIES["decoder"], "decoder", "decoder", "u8 code + fields, recursive"),
    SectionSpec("added_tokens", K.AddedTokens(), "added_tokens", "added tokens", "u32 n x {u32 id, 3 x bool, str}"),
    SectionSpec("chat_template", K.LStr(), "chat.text", "chat template", "u32 length + UTF-8"),
    SectionSpec("eos", STR, "chat.eos_token", "eos token", "u16 length + UTF-8"),
    SectionSpec("flags", FLAGS, "chat.clean_up_tokenization_spaces", "flags", "u8, bit 0: clean-up spaces"),
    SectionSpec("bos", STR, "chat.bos_token", "bos token", "u16 length + UTF-8"),
    SectionSpec("post_program", K.Program(), "post_processor", "post program", "u16 n x {u8 op [u32 id]}"),
)
FIRST_OPTIONAL = "chat_template"
