"""Numbers of MNN's tokenizer formats.  They are MNN's, so they are named as MNN names them
(spec sections 1, 2 and 9); never reuse or renumber one."""

from enum import IntEnum

MAGIC = 430

# Spec 2.3.2: code points the code-6 (table) normalizer turns into one ASCII space whenever its
# table is non-empty.
TABLE_CONTROL_TO_SPACE = frozenset(
    {*range(0x01, 0x20)} - {0x09, 0x0A, 0x0D} | {*range(0x7F, 0xA0)} | {*range(0x200B, 0x2010)}
    | {*range(0x202A, 0x202F)} | {*range(0x2060, 0x206A)} | {0xFEFF} | {*range(0xFFF0, 0xFFF9)})


class FileType(IntEnum):
    SENTENCEPIECE = 0
    TIKTOKEN = 1
    BERT = 2
    HUGGINGFACE = 3
    PIPELINE = 4  # .mtok


class NormalizerCode(IntEnum):
    NONE = 0
    NFKC_OLD = 1  # empty table: a no-op in every runtime; never written
    PREPEND = 2
    REPLACE = 3
    SEQUENCE = 4
    BERT = 5
    TABLE = 6
    BERT_NFD = 7
    STRIP = 8  # MNN >= 3.6


class PreTokenizerCode(IntEnum):
    NONE = 0
    BYTE_LEVEL = 1
    DIGITS = 2
    METASPACE = 3
    SPLIT = 4
    BERT = 5
    SEQUENCE = 6


class ModelCode(IntEnum):
    BPE = 0
    WORDPIECE = 1
    UNIGRAM = 2


class DecoderCode(IntEnum):
    BYTE_LEVEL = 0
    BYTE_FALLBACK = 1
    METASPACE = 2
    WORDPIECE = 3
    FUSE = 4
    REPLACE = 5
    STRIP = 6
    SEQUENCE = 7


class PostOp(IntEnum):
    SEQUENCE_A = 0
    SPECIAL_TOKEN = 1


FLAG_CLEAN_UP_SPACES = 0x01
MAX_U16 = 0xFFFF
MAX_U32 = 0xFFFFFFFF

# A BPE vocab text that starts with this is an alias: it looks up an id whose own text is another
# (`lower.whole_words`).  The control character sorts before every text a ByteLevel vocabulary
# holds, so the runtime, which keeps an id's last text in file order, keeps the id's own.
ALIAS_MARK = "\x10"
