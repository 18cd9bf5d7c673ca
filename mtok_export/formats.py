"""File formats, one `Format` entry each, recognized by content, and the choice of what to read in a
directory.  An entry holds all that is said of its format: how it is recognized (`sniff`, which
also sees the folder), its reader and the reader options that apply to it (`options`), its
independent reference (`reference`), its conventional file names, its `priority` among a
directory's candidates, the `partner` it needs beside it and how messages name it (`label`: the
"nothing found" message and the `--path` help are made from the entries, `listed()`).  The two
this tool writes (`.mtok`, legacy `.txt`) also have `write` (a target's lowered content -> bytes,
see `targets.py`) and `check` (the strict read-back before the bytes replace anything).

`classify(path)` names the format of one file from its bytes (JSON shape, protobuf `ModelProto`,
gzip, base64-rank lines, GGUF magic, `430 N` headers, ...), never from its name; a format told
apart by its neighbours asks the `Folder` (each file in it classified once).  `read_source` reads a
file with its format's reader, or, for a directory, classifies every file in it and reads the best
candidate; when none is, `nothing_found` lists every file with why each format that could have
claimed it did not (`Format.kinds`, `Format.why_not`).  A source's reader returns what it parsed and
`read_source` finishes it, the same way for every format (`readers.finish`: header lists, chat
template, provenance); the two files MNN loads carry their header lists and are read whole
(`parsed=False`); which of the two a file is, its header line says (`mtok.header.file_type`, here
and in every reader of them).

The choice is deterministic: by the `priority` of the format (sources before the `.mtok`/`.txt`
this tool writes beside them), then the conventional file name of that format, then the file name;
when several candidates exist the choice is recorded as the first note of the IR (the CLI prints
notes) and `--input FILE` reads another one.

Each readable format holds its `reference`: a `Reference`, the independent implementation that
verification runs on the source files themselves (the library the file was made for, never our
reading of it; `verify.references.REFERENCES` runs each).  `read_source` records the format in the
IR's provenance, so the choice follows the format, never a file name.

Companion files are recognized but never read alone: `merges.txt`/`vocab.bpe` belong to a
vocab.json/encoder.json (given either one, the pair is read), configs belong to a directory.

Each reader (and the legacy format's writer) is imported by the function that calls it, on first
use: an export loads the reader of the one format it reads, not all of them with their libraries
(the layer contract, `tests/support/import_graph.py`, allows these imports here by name)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, NothingFound
from .job_options import ReadOptions
from .mtok import check_written, read_mtok, write_mtok
from .mtok.constants import FileType
from .mtok.header import file_type
from .sniff import is_tiktoken_code, looks_like, not_a_tokenizer, shape

HEAD = 1 << 16  # bytes of each file looked at to classify it


@dataclass(frozen=True)
class Reference:
    """The independent implementation a format's files are verified against (DESIGN section 4): the
    library the file was made for, never our reading of it.  Declared here, with the formats, so an
    entry holds its reference itself; what runs it needs the engines of `verify`, a layer above, so
    `verify.references.REFERENCES` maps each of these objects to its runner (a test checks that every
    entry's reference has one)."""

    name: str  # what the report calls it, e.g. "transformers"
    what: str  # one line: what it runs on the source files


@dataclass(frozen=True)
class Format:
    name: str
    # (first HEAD bytes, path, the `Folder` it is in) -> is it this format?  The folder is there for a
    # format told apart by what lies beside it; a check asking it about the file itself sees nothing
    sniff: Callable[[bytes, Path, Folder], bool]
    # -> what the reader parsed (`readers.finish.Parsed`, finished by `read_source`), or for a file
    # whose header holds the lists (`parsed=False`) the IR itself; None: a companion, never read alone
    read: Callable[[Path, ReadOptions], object] | None
    reference: Reference | None = None  # the independent reference of a readable format
    names: tuple[str, ...] = ()  # conventional file names, preferred in this order among candidates
    # output formats: content (see `targets.Lowered`) -> file bytes; and the strict read-back of
    # those bytes before they replace anything, (data, path) -> IR or a FormatError/UnsupportedError
    write: Callable[[object], bytes] | None = None
    check: Callable[[bytes, object], object] | None = None
    parsed: bool = True
    # which file of a directory is read: the lowest first; None: never chosen in a directory (a
    # companion, read through its partner, or no reader)
    priority: int | None = None
    partner: Format | None = None  # a candidate only with a file of this format beside it
    options: tuple[str, ...] = ()  # the `ReadOptions` fields its reader takes besides chat_template
    label: str = ""  # how messages and help name it ("" : not listed, a companion)
    # the "nothing found" error: the file shapes (`sniff.shape`) this format could have, and for a
    # file of such a shape (or of one of `names`) that the sniffer refused, (head, path) -> why
    kinds: tuple[str, ...] = ()
    why_not: Callable[[bytes, Path], str] | None = None


# ------------------------------------------------------------------ sniffers (content only)

_LEGACY_TYPES = frozenset(FileType) - {FileType.PIPELINE}
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+")
_BASE64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")
_TJ_KEYS = (b"version", b"truncation", b"padding", b"added_tokens", b"normalizer", b"pre_tokenizer",
            b"post_processor", b"decoder", b"model")
_FIRST_KEY = re.compile(rb'\A\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*(\S)', re.S)


def _lines(head: bytes) -> list[bytes]:
    """Complete non-blank lines of the head (the last, possibly cut, line is dropped)."""
    lines = head.split(b"\n")
    if len(head) == HEAD:
        lines = lines[:-1]
    return [x.rstrip(b"\r") for x in lines if x.strip()]


def _first_key(head: bytes) -> tuple[bytes, bytes] | None:
    m = _FIRST_KEY.match(head)
    return (m.group(1), m.group(2)) if m else None


def is_mtok(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    return file_type(head) == FileType.PIPELINE  # the header's type, as the reader dispatches on it


def is_legacy_txt(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    return file_type(head) in _LEGACY_TYPES


def is_gguf(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    return head[:4] == b"GGUF"


SPM_MAX = 256 << 20  # no SentencePiece model is this big; weights files are not parsed to find out


def is_sentencepiece(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    # field 1 (pieces) first, then a full parse
    if head[:1] != b"\x0a" or path.stat().st_size >= SPM_MAX:
        return False
    from .readers.sentencepiece import is_sentencepiece as parses  # protobuf: only for a file that may be one

    return parses(path)


def is_tokenizer_json(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    key = _first_key(head)
    return key is not None and key[0] in _TJ_KEYS


def is_tekken(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """`{"config": {...}, "vocab": [{"rank", "token_bytes", ...}` (or vocab first)."""
    key = _first_key(head)
    return key is not None and key[0] in (b"config", b"vocab") and b'"token_bytes"' in head


_TIKTOKEN_JSON_KEYS = (b"pat_str", b"special_tokens", b"bpe_ranks", b"explicit_n_vocab")


# js-tiktoken ships the same object as an ES / CommonJS module (ranks/*.js, *.cjs): one of these,
# then the JSON object and a ";" (`readers.tiktoken_json.JS_MODULE`)
_JS_MODULE = (b"export default ", b"module.exports = ")


def _unwrapped(head: bytes) -> bytes:
    return next((head[len(w):] for w in _JS_MODULE if head.startswith(w)), head)


def is_tiktoken_json(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """`{"pat_str", "special_tokens", "bpe_ranks"}` (npm tiktoken's encoders; js-tiktoken's ranks,
    the same object as a module: `_JS_MODULE`): one of its keys first, and `bpe_ranks` first or seen
    in the head (it comes last, after the short pattern and specials)."""
    key = _first_key(_unwrapped(head))
    return key is not None and key[0] in _TIKTOKEN_JSON_KEYS and (key[0] == b"bpe_ranks" or b'"bpe_ranks"' in head)


def is_vocab_json(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """A flat JSON object token -> integer id (vocab.json, encoder.json; added_tokens.json too)."""
    key = _first_key(head)
    return key is not None and key[1][:1].isdigit() and key[0] not in _TJ_KEYS and _has_id_zero(path)


def _has_id_zero(path: Path) -> bool:
    """A vocabulary holds id 0; added_tokens.json (same shape) does not.  Parsed only for files whose
    head already looks like a flat token -> id object."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # the reader then says what is wrong
        return False
    return isinstance(data, dict) and 0 in data.values()


def is_tiktoken(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    lines = _lines(head)
    return bool(lines) and all(_RANK_LINE.fullmatch(x) and len(x.split(b" ")[0]) % 4 == 0 for x in lines[:100])


def is_merges(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """`#version` then `left right` lines (merges.txt, OpenAI's vocab.bpe)."""
    lines = _lines(head)
    if lines and lines[0].startswith(b"#version"):
        return True
    return len(lines) > 1 and all(len(x.split(b" ")) == 2 and all(x.split(b" ")) for x in lines[:100])


def gunzip_head(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") as f:
            return f.read(HEAD)
    except (OSError, EOFError, zlib.error):
        return b""


def is_clip_merges(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """CLIP's `bpe_simple_vocab_16e6.txt.gz`: gzip holding a merges list (first line a version)."""
    if head[:2] != b"\x1f\x8b":
        return False
    inner = gunzip_head(path)
    first = inner.split(b"\n", 1)[0]
    return b"#version" in first and is_merges(inner.split(b"\n", 1)[-1], path)


def is_bert_vocab(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """One token per line, none with a space, and BERT's [UNK]/[CLS]/[SEP] among them."""
    lines = _lines(head)
    try:
        text = [x.decode("utf-8") for x in lines]
    except UnicodeDecodeError:
        return False
    return bool(text) and not any(" " in x for x in text) and bool({"[UNK]", "[CLS]", "[SEP]"} & set(text))


def is_python(head: bytes, path: Path, folder: Folder | None = None) -> bool:
    """Python source that imports tiktoken: a remote-code tokenizer module (read with `ast`, never run)."""
    return is_tiktoken_code(head)


# ------------------------------------------------------------------ why a file is none of them
# Each says, for a file its sniffer refused, the first thing that format's sniffer missed: the
# "nothing found" error lists them (`considered`), so a user sees why a file they expected to be
# read was not.  They repeat their sniffer's test in words; a test holds each to its sniffer.


def _numbered_lines(head: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) of the head's complete non-blank lines, as `_lines` keeps them."""
    lines = head.split(b"\n")
    if len(head) == HEAD:
        lines = lines[:-1]
    return [(n, x.rstrip(b"\r")) for n, x in enumerate(lines, 1) if x.strip()]


def _show(line: bytes) -> str:
    return repr(line[:40].decode("utf-8", "replace")) + ("..." if len(line) > 40 else "")


_NOT_OBJECT = "not a JSON object with a string key first"


def why_not_tokenizer_json(head: bytes, path: Path) -> str:
    key = _first_key(head)
    if key is None:
        return _NOT_OBJECT
    return (f"its first key {key[0].decode('utf-8', 'replace')!r} is none a tokenizer.json starts with "
            "(model, version, added_tokens, normalizer...)")


def why_not_tekken(head: bytes, path: Path) -> str:
    key = _first_key(head)
    if key is None:
        return _NOT_OBJECT
    if key[0] not in (b"config", b"vocab"):
        return f"its first key {key[0].decode('utf-8', 'replace')!r} is neither 'config' nor 'vocab'"
    return "no 'token_bytes' in its first 64 KiB"


def why_not_tiktoken_json(head: bytes, path: Path) -> str:
    key = _first_key(_unwrapped(head))
    if key is None:
        return _NOT_OBJECT
    if key[0] not in _TIKTOKEN_JSON_KEYS:
        return f"its first key {key[0].decode('utf-8', 'replace')!r} is none of pat_str, special_tokens, bpe_ranks"
    return "no 'bpe_ranks' in its first 64 KiB"


def why_not_vocab_json(head: bytes, path: Path) -> str:
    key = _first_key(head)
    if key is None:
        return _NOT_OBJECT
    if not key[1][:1].isdigit():
        return (f"the value of its first key {key[0].decode('utf-8', 'replace')!r} is no integer id "
                "(not a flat token -> id object)")
    if key[0] in _TJ_KEYS:
        return f"its first key {key[0].decode()!r} is a tokenizer.json's"
    try:
        json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError) as e:
        return f"not valid JSON ({e})"
    return "no token has id 0 (the shape of an added_tokens.json, which lists tokens beyond a vocabulary)"


def why_not_tiktoken(head: bytes, path: Path) -> str:
    lines = _numbered_lines(head)
    if not lines:
        return "no complete line in its first 64 KiB"
    for n, x in lines[:100]:
        if _BASE64.fullmatch(x) and len(x) % 4 == 0:
            return f"line {n} {_show(x)} is a base64 token without its rank"
        if not _RANK_LINE.fullmatch(x):
            return f"line {n} {_show(x)} is not '<base64 token> <rank>'"
        if len(x.split(b" ")[0]) % 4:
            return f"line {n}: the token {_show(x.split(b' ')[0])} is not padded base64 (length not a multiple of 4)"
    return "its lines are rank lines, yet it was not taken: report it"  # the sniffer's test, inverted


def why_not_merges(head: bytes, path: Path) -> str:
    lines = _numbered_lines(head)
    if len(lines) < 2:
        return "fewer than two lines and no '#version' first"
    for n, x in lines[:100]:
        words = x.split(b" ")
        if len(words) != 2 or not all(words):
            return f"line {n} {_show(x)} is not 'left right' (two tokens, one space)"
    return "its lines are merges, yet it was not taken: report it"


def why_not_bert_vocab(head: bytes, path: Path) -> str:
    lines = _numbered_lines(head)
    try:
        text = [(n, x.decode("utf-8")) for n, x in lines]
    except UnicodeDecodeError:
        return "not UTF-8 text"
    if not text:
        return "no complete line"
    spaced = next(((n, x) for n, x in text if " " in x), None)
    if spaced is not None:
        return f"line {spaced[0]} {_show(spaced[1].encode())} holds a space (one token per line has none)"
    return "none of [UNK], [CLS], [SEP] among its lines in the first 64 KiB"


def why_not_sentencepiece(head: bytes, path: Path) -> str:
    if head[:1] != b"\x0a":
        return f"its first byte 0x{head[0]:02x} is not a ModelProto's first field (0x0a)" if head else "empty"
    size = path.stat().st_size
    if size >= SPM_MAX:
        return f"too large for one ({size >> 20} MiB; none is over {SPM_MAX >> 20} MiB): not parsed"
    return "starts like a protobuf message but does not parse as a SentencePiece ModelProto"


def why_not_gguf(head: bytes, path: Path) -> str:
    return f"no 'GGUF' magic (its first bytes are {head[:4]!r})"


def why_not_clip(head: bytes, path: Path) -> str:
    if head[:2] != b"\x1f\x8b":
        return "not gzip-compressed"
    inner = gunzip_head(path)
    if not inner:
        return "gzip that does not decompress (or holds nothing)"
    first = inner.split(b"\n", 1)[0]
    if b"#version" not in first:
        return f"its decompressed first line {_show(first)} has no '#version'"
    return "decompressed, its lines after the first are not merges ('left right')"


def why_not_mnn(head: bytes, path: Path) -> str:
    first = head.split(b"\n", 1)[0][:40]
    return f"line 1 {_show(first)} is no MNN header ('430 <type>')"


# ------------------------------------------------------------------ readers


def _read_tokenizer_json(path: Path, o: ReadOptions):
    from .readers.model_dir import parse_model_dir  # on first use: the reader of the one format read

    return parse_model_dir(path.parent, tokenizer_file=path)


def _read_tekken(path: Path, o: ReadOptions):
    from .readers.tekken import parse_tekken  # on first use: the reader of the one format read

    return parse_tekken(path)


def _read_gguf(path: Path, o: ReadOptions):
    from .readers.gguf import parse_gguf  # on first use: the reader of the one format read

    return parse_gguf(path)


def _read_sentencepiece(path: Path, o: ReadOptions):
    from .readers.sentencepiece import parse_sentencepiece  # on first use: the reader of the one format read

    return parse_sentencepiece(path)


def _read_tiktoken(path: Path, o: ReadOptions):
    from .readers.remote_code import parse_tiktoken_with_code  # on first use: the reader of the one format read

    return parse_tiktoken_with_code(path, pattern=o.pattern, special=o.special)


def _read_tiktoken_json(path: Path, o: ReadOptions):
    from .readers.tiktoken_json import parse_tiktoken_json  # on first use: the reader of the one format read

    return parse_tiktoken_json(path)


def _read_vocab_json(path: Path, o: ReadOptions):
    from .readers.gpt2_files import parse_gpt2_files  # on first use: the reader of the one format read

    merges = Folder(path.parent).of(MERGES)
    if merges is None:
        raise InputError(f"{path}: a vocabulary JSON needs a merges file beside it (merges.txt or vocab.bpe)")
    return parse_gpt2_files(path, family=o.family, merges_path=merges)


def _read_merges(path: Path, o: ReadOptions):
    vocab = Folder(path.parent).of(VOCAB_JSON)
    if vocab is None:
        raise InputError(f"{path}: a merges file needs its vocabulary JSON beside it (vocab.json or encoder.json)")
    return _read_vocab_json(vocab, o)


def _read_clip(path: Path, o: ReadOptions):
    from .readers.openai_bpe import parse_clip_merges  # on first use: the reader of the one format read

    return parse_clip_merges(path)


def _read_bert(path: Path, o: ReadOptions):
    from .readers.bert_vocab import parse_bert_vocab  # on first use: the reader of the one format read

    return parse_bert_vocab(path)


def _read_legacy(path: Path, o: ReadOptions):
    from .legacy import read_legacy  # the legacy codec: only when a tokenizer.txt is read or written

    return read_legacy(path.read_bytes(), str(path))


def _read_mtok(path: Path, o: ReadOptions):
    from .readers.finish import provenance  # the file read (its reference runs on it); not at start-up

    tok = read_mtok(path.read_bytes(), str(path))[0]
    return dataclasses.replace(tok, provenance=provenance([path]))


def _write_legacy(content) -> bytes:
    from .legacy import write_content  # the legacy codec: only when a tokenizer.txt is read or written

    return write_content(content)


def _check_legacy(data: bytes, path=None):
    from .legacy import check_written  # the legacy codec: only when a tokenizer.txt is read or written

    return check_written(data, path)


def _finish(parsed, chat_template: str | None):
    from .readers.finish import finish  # with the reader it finishes, never at start-up

    return finish(parsed, chat_template)


# The independent references (what each runs: `verify.references`)
TOKENIZERS = Reference("tokenizers", "HF tokenizers on the tokenizer.json")
TRANSFORMERS = Reference("transformers", "the transformers class the vocabulary files were written for")
CLIP_TOKENIZER = Reference("clip", "OpenAI CLIP's own SimpleTokenizer on its merges .gz")
SENTENCEPIECE_LIB = Reference("sentencepiece", "sentencepiece on the model file")
TIKTOKEN_LIB = Reference("tiktoken", "tiktoken on the rank file, with the pattern and specials the export chose")
TIKTOKEN_JSON_LIB = Reference("tiktoken", "tiktoken on the ranks of the JSON's bpe_ranks (read as the JS loaders "
                              "read them), with its pat_str and special_tokens")
MISTRAL_COMMON = Reference("mistral_common", "mistral_common's Tekkenizer on tekken.json")
LLAMA_CPP = Reference("gguf", "llama.cpp's view of the GGUF file (vocabulary only)")
MNN_RUNTIME = Reference("mnn", "the MNN runtime the .mtok was made for")
MNN_LEGACY = Reference("mnn-legacy", "MNN 3.4.1, the runtime a legacy tokenizer.txt was made for")

# The registry, in classification order (first match wins: e.g. rank lines are also "two words
# per line"); `priority` is the order a directory's candidates are read in (spaced by ten: a new
# entry goes between two without renumbering), this tool's own outputs last so a source beside them
# is always re-read.
MTOK = Format("mtok", is_mtok, _read_mtok, MNN_RUNTIME, ("tokenizer.mtok",), write_mtok, check_written, parsed=False,
              priority=100, label=".mtok", why_not=why_not_mnn)
LEGACY = Format("legacy-txt", is_legacy_txt, _read_legacy, MNN_LEGACY, ("tokenizer.txt",), _write_legacy,
                _check_legacy, parsed=False, priority=90, label="legacy tokenizer.txt", why_not=why_not_mnn)
GGUF = Format("gguf", is_gguf, _read_gguf, LLAMA_CPP, priority=40, label="GGUF", kinds=("binary",),
              why_not=why_not_gguf)
CLIP = Format("clip-bpe-gz", is_clip_merges, _read_clip, CLIP_TOKENIZER, ("bpe_simple_vocab_16e6.txt.gz",),
              priority=70, label="CLIP bpe .gz", kinds=("gzip",), why_not=why_not_clip)
SENTENCEPIECE = Format("sentencepiece", is_sentencepiece, _read_sentencepiece, SENTENCEPIECE_LIB,
                       ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "ice_text.model"), priority=30,
                       label="SentencePiece model", kinds=("binary",), why_not=why_not_sentencepiece)
TOKENIZER_JSON = Format("tokenizer.json", is_tokenizer_json, _read_tokenizer_json, TOKENIZERS, ("tokenizer.json",),
                        priority=10, label="tokenizer.json", kinds=("json",), why_not=why_not_tokenizer_json)
TEKKEN = Format("tekken", is_tekken, _read_tekken, MISTRAL_COMMON, ("tekken.json",), priority=20, label="tekken.json",
                kinds=("json",), why_not=why_not_tekken)
# a merges file stands for its pair: read through the vocabulary JSON beside it, never chosen itself
MERGES = Format("merges", is_merges, _read_merges, TRANSFORMERS, ("merges.txt", "vocab.bpe"), options=("family",),
                kinds=("text",), why_not=why_not_merges)
VOCAB_JSON = Format("vocab.json", is_vocab_json, _read_vocab_json, TRANSFORMERS, ("vocab.json", "encoder.json"),
                    priority=60, partner=MERGES, options=("family",), label="vocab.json/encoder.json + merges",
                    kinds=("json",), why_not=why_not_vocab_json)
TIKTOKEN = Format("tiktoken", is_tiktoken, _read_tiktoken, TIKTOKEN_LIB, ("tiktoken.model", "tokenizer.model"),
                  priority=50, options=("pattern", "special"), label="tiktoken rank file", kinds=("text",),
                  why_not=why_not_tiktoken)
TIKTOKEN_JSON = Format("tiktoken-json", is_tiktoken_json, _read_tiktoken_json, TIKTOKEN_JSON_LIB, priority=55,
                       label="tiktoken ranks JSON", kinds=("json",), why_not=why_not_tiktoken_json)
BERT_VOCAB = Format("bert-vocab.txt", is_bert_vocab, _read_bert, TRANSFORMERS, ("vocab.txt",), priority=80,
                    label="vocab.txt", kinds=("text",), why_not=why_not_bert_vocab)
REMOTE_CODE = Format("remote-code", is_python, None)
FORMATS = (MTOK, LEGACY, GGUF, CLIP, SENTENCEPIECE, TOKENIZER_JSON, TEKKEN, TIKTOKEN_JSON, VOCAB_JSON, TIKTOKEN,
           MERGES, BERT_VOCAB, REMOTE_CODE)
BY_NAME = {f.name: f for f in FORMATS}


def listed() -> str:
    """What a directory is searched for, in the order it is read: the "nothing found" message and
    the `--path` help say it from the entries."""
    labels = [f.label for f in sorted((f for f in FORMATS if f.priority is not None), key=lambda f: f.priority)]
    return f"{', '.join(labels[:-1])} or {labels[-1]}"


class Folder:
    """The files of one directory, each classified by content once, when first asked: what a
    format's check sees beside the file it looks at (`Format.partner`: is a merges file here?)."""

    def __init__(self, directory: Path):
        self.directory = Path(directory)
        self._formats: dict[Path, Format | None] = {}

    def format_of(self, path: Path) -> Format | None:
        if path not in self._formats:
            self._formats[path] = None  # while its own check runs, a check asking of it sees nothing
            self._formats[path] = classify(path, self)
        return self._formats[path]

    def files(self) -> list[tuple[Path, Format]]:
        """Every file of a known format, by name (hidden files left out)."""
        out = []
        for p in sorted(self.directory.iterdir()):
            if p.is_file() and not p.name.startswith("."):
                fmt = self.format_of(p)
                if fmt is not None:
                    out.append((p, fmt))
        return out

    def of(self, fmt: Format) -> Path | None:
        """The file of `fmt` here (conventional names first, then by name)."""
        found = [p for p, f in self.files() if f is fmt]
        return min(found, key=lambda p: _rank_in(fmt, p)) if found else None


def classify(path: Path, folder: Folder | None = None) -> Format | None:
    """The format of one file, from its content (and, for a format told apart by it, what lies
    beside it); None for anything else (configs, READMEs...)."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    folder = folder if folder is not None else Folder(Path(path).parent)
    return next((fmt for fmt in FORMATS if fmt.sniff(head, path, folder)), None)


def _rank_in(fmt: Format, p: Path) -> tuple:
    return (fmt.names.index(p.name) if p.name in fmt.names else len(fmt.names), p.name)


def candidates(directory: Path) -> list[tuple[Path, Format]]:
    """Every readable source in `directory`, best first (the order `read_source` uses)."""
    folder = Folder(directory)
    readable = [(p, f) for p, f in folder.files()
                if f.read is not None and f.priority is not None and (f.partner is None or folder.of(f.partner))]
    return sorted(readable, key=lambda pf: (pf[1].priority, *_rank_in(pf[1], pf[0])))


def choose(path: Path) -> tuple[Path, Format, str | None]:
    """(file to read, its format, the note saying why when there was a choice)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: no such file or directory")
    if path.is_file():
        fmt = classify(path)
        if fmt is not None and fmt.read is not None:
            return path, fmt, None
        # a config, remote code or README: the model it belongs to is the directory's
        if not candidates(path.parent):  # what it is not, then why not each format it could have been
            why = next((c.lines()[1:] for c in considered(path.parent)[0] if c.name == path.name), [])
            raise InputError("\n".join([not_a_tokenizer(path, ", ".join(f.name for f in FORMATS if f.read is not None)),
                                        *(f"  {x.strip()}" for x in why)]))
        best, fmt, note = choose(path.parent)
        return best, fmt, f"{path.name} is no tokenizer file: " + (note or f"read {best.name} ({fmt.name}) beside it")
    found = candidates(path)
    empty = sorted(p.name for p in path.iterdir() if p.is_file() and p.stat().st_size == 0
                   and any(p.name in f.names for f in FORMATS))
    if not found and empty:  # what a failed download or copy leaves: not "no tokenizer.json found"
        raise InputError(f"{path}: {', '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty (0 bytes: an "
                         "interrupted download or copy?), and no other tokenizer file is here")
    if not found:
        raise nothing_found(path)
    (best, fmt), rest = found[0], found[1:]
    note = None
    if rest:
        others = ", ".join(f"{p.name} ({f.name})" for p, f in rest)
        note = f"read {best.name} ({fmt.name}); also here: {others}; --input FILE reads another"
    return best, fmt, note


@dataclass(frozen=True)
class Considered:
    """One file of a directory where nothing was found: what it looks like (`sniff.looks_like`) and,
    for each format that could have claimed it (one of its shape, or whose conventional name it
    has), why that format did not; a file some format recognized says why it is not read alone."""

    name: str
    size: int | None  # None: unreadable
    looks: str
    rejected: tuple[tuple[str, str], ...]  # (format name, why not)

    def to_json(self) -> dict:
        return {"file": self.name, "size": self.size, "looks_like": self.looks,
                "rejected": [{"format": f, "why": why} for f, why in self.rejected]}

    def lines(self) -> list[str]:
        size = "unreadable" if self.size is None else _size(self.size)
        label = {f.name: f.label or f.name for f in FORMATS}
        return [f"{self.name} ({size}): {self.looks}",
                *(f"  as {label.get(f, f)}: {why}" for f, why in self.rejected)]


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _not_read_alone(fmt: Format, folder: Folder) -> str:
    """Why a file a format recognized is no candidate of its directory."""
    if fmt.read is None:
        return "recognized (tiktoken tokenizer code), but code is read only with the rank file it loads, none here"
    if fmt.priority is None:
        return f"recognized, but it is read only with its vocabulary JSON ({', '.join(VOCAB_JSON.names)}), none here"
    if fmt.partner is not None and folder.of(fmt.partner) is None:
        return (f"recognized, but it needs a {fmt.partner.name} file beside it ({', '.join(fmt.partner.names)}), "
                "none here")
    return "recognized, yet not read: report it"  # a candidate would have been read


def considered(directory: Path) -> tuple[list[Considered], list[str]]:
    """(every file of `directory` with why it is not read, the names of its subfolders): what the
    "nothing found" error lists.  Hidden files are left out, as `Folder.files` leaves them."""
    folder = Folder(directory)
    files, subfolders = [], []
    for p in sorted(Path(directory).iterdir()):
        if p.name.startswith("."):
            continue
        if p.is_dir():
            subfolders.append(p.name)
            continue
        try:
            size = p.stat().st_size
            with open(p, "rb") as f:
                head = f.read(HEAD)
            fmt = folder.format_of(p)
        except (OSError, InputError) as e:  # classify names an unreadable file with an InputError
            files.append(Considered(p.name, None, f"unreadable ({getattr(e, 'strerror', None) or e})", ()))
            continue
        looks = looks_like(head[:4096])
        if fmt is not None:
            files.append(Considered(p.name, size, looks, ((fmt.name, _not_read_alone(fmt, folder)),)))
            continue
        kind = shape(head)
        asked = [f for f in FORMATS if f.why_not is not None and (kind in f.kinds or p.name in f.names)]
        why = tuple((f.name, "empty (0 bytes)" if kind == "empty" else f.why_not(head, p)) for f in asked)
        files.append(Considered(p.name, size, looks, why))
    return files, subfolders


SHOWN = 20  # files the "nothing found" message lists (--json lists every one)


def nothing_found(directory: Path) -> NothingFound:
    """The error for a directory with no source: what is searched for, then each file considered
    (the first `SHOWN`), what it looks like and why no format took it."""
    files, subfolders = considered(directory)
    head = f"{directory}: no {listed()} found (files are recognized by content)"
    if not files:
        head += "; it holds no file"
    else:
        head += f"; {len(files)} file{'s' if len(files) != 1 else ''} considered:"
    lines = [head, *(f"  {x}" for c in files[:SHOWN] for x in c.lines())]
    if len(files) > SHOWN:
        lines.append(f"  ... and {len(files) - SHOWN} more (--json lists every file)")
    if subfolders:
        shown = ", ".join(f"{s}/" for s in subfolders[:5]) + (", ..." if len(subfolders) > 5 else "")
        lines.append(f"  {len(subfolders)} subfolder{'s' if len(subfolders) != 1 else ''} not searched: {shown}")
    return NothingFound("\n".join(lines), [c.to_json() for c in files])


def read_source(path: Path, read: ReadOptions = ReadOptions()):
    """Any supported input -> IR: a file of any format in `FORMATS`, or a directory (its best
    candidate, see `choose`), read with the `read` options that apply to its format (`Format.options`)."""
    file, fmt, note = choose(Path(path))
    applies = {k: getattr(read, k) for k in fmt.options}
    tok = fmt.read(file, ReadOptions(read.chat_template, **applies))  # what applies to it
    if fmt.parsed:
        tok = _finish(tok, read.chat_template)
    tok = dataclasses.replace(tok, provenance=dataclasses.replace(tok.provenance, format=fmt.name))
    if tok.meta.interpretation is not None:  # which file is the source: this choice
        tok = dataclasses.replace(tok, meta=dataclasses.replace(
            tok.meta, interpretation=tok.meta.interpretation.with_(source=str(file), format=fmt.name)))
    if note is None:
        return tok
    return dataclasses.replace(tok, meta=dataclasses.replace(tok.meta, notes=(note, *tok.meta.notes)))


def resolve_input(path: Path, input_file: Path | None) -> Path:
    """`--input FILE`: a file inside the `--path` directory (or any path) to read instead of the choice."""
    if input_file is None:
        return Path(path)
    for p in (Path(path) / input_file, Path(input_file)):
        if p.is_file():
            return p
    raise InputError(f"--input {input_file}: no such file (looked in {path} and the current directory)")
