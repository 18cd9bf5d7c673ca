"""File formats, one `Format(name, sniff, read, reference, names, write, check, parsed)` each,
recognized by content, and the choice of what to read in a directory.  The two this tool writes
(`.mtok`, legacy `.txt`) also have `write` (a target's lowered content -> bytes, see `targets.py`)
and `check` (the strict read-back before the bytes replace anything).

`classify(path)` names the format of one file from its bytes (JSON shape, protobuf `ModelProto`,
gzip, base64-rank lines, GGUF magic, `430 N` headers, ...), never from its name.  `read_source`
reads a file with its format's reader, or, for a directory, classifies every file in it and reads
the best candidate.  A source's reader returns what it parsed and `read_source` finishes it, the
same way for every format (`readers.finish`: header lists, chat template, provenance); the two
files MNN loads carry their header lists and are read whole (`parsed=False`).

The choice is deterministic: by `PRIORITY` of the format (sources before the `.mtok`/`.txt` this
tool writes beside them), then the conventional file name of that format, then the file name; when
several candidates exist the choice is recorded as the first note of the IR (the CLI prints notes)
and `--input FILE` reads another one.

Each readable format declares its `reference`: the name of the independent implementation that
verification runs on the source files themselves (the library the file was made for, never our
reading of it; `verify/references.py` holds what each name runs).  `read_source` records the format
in the IR's provenance, so the choice follows the format, never a file name.

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

from .errors import InputError
from .mtok import check_written, read_mtok, write_mtok
from .sniff import is_tiktoken_code, not_a_tokenizer

HEAD = 1 << 16  # bytes of each file looked at to classify it


@dataclass(frozen=True)
class Options:
    """What a reader is told besides the file (`--chat-template`, `--pattern`, `--special`, `--family`)."""

    chat_template: str | None = None  # a named template or a template file, instead of the source's
    pattern: str | None = None  # tiktoken rank files: the split regex
    special: dict[str, int] | list[str] | None = None  # tiktoken rank files: {token: id}, or tokens after the ranks
    family: str | None = None  # vocab.json + merges.txt: gpt2, roberta, whisper


@dataclass(frozen=True)
class Format:
    name: str
    sniff: Callable[[bytes, Path], bool]  # (first HEAD bytes, path) -> is it this format?
    # -> what the reader parsed (`readers.finish.Parsed`, finished by `read_source`), or for a file
    # whose header holds the lists (`parsed=False`) the IR itself; None: a companion, never read alone
    read: Callable[[Path, Options], object] | None
    reference: str = ""  # the independent reference of a readable format (a `verify.references` name)
    names: tuple[str, ...] = ()  # conventional file names, preferred in this order among candidates
    # output formats: content (see `targets.Lowered`) -> file bytes; and the strict read-back of
    # those bytes before they replace anything, (data, path) -> IR or a FormatError/UnsupportedError
    write: Callable[[object], bytes] | None = None
    check: Callable[[bytes, object], object] | None = None
    parsed: bool = True


# ------------------------------------------------------------------ sniffers (content only)

_LEGACY = re.compile(rb"430 [0-3][\r\n]")
_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+")
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


def is_mtok(head: bytes, path: Path) -> bool:
    return head[:6] in (b"430 4\n", b"430 4\r")


def is_legacy_txt(head: bytes, path: Path) -> bool:
    return bool(_LEGACY.match(head[:6]))


def is_gguf(head: bytes, path: Path) -> bool:
    return head[:4] == b"GGUF"


SPM_MAX = 256 << 20  # no SentencePiece model is this big; weights files are not parsed to find out


def is_sentencepiece(head: bytes, path: Path) -> bool:
    # field 1 (pieces) first, then a full parse
    if head[:1] != b"\x0a" or path.stat().st_size >= SPM_MAX:
        return False
    from .readers.sentencepiece import is_sentencepiece as parses  # protobuf: only for a file that may be one

    return parses(path)


def is_tokenizer_json(head: bytes, path: Path) -> bool:
    key = _first_key(head)
    return key is not None and key[0] in _TJ_KEYS


def is_tekken(head: bytes, path: Path) -> bool:
    """`{"config": {...}, "vocab": [{"rank", "token_bytes", ...}` (or vocab first)."""
    key = _first_key(head)
    return key is not None and key[0] in (b"config", b"vocab") and b'"token_bytes"' in head


def is_vocab_json(head: bytes, path: Path) -> bool:
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


def is_tiktoken(head: bytes, path: Path) -> bool:
    lines = _lines(head)
    return bool(lines) and all(_RANK_LINE.fullmatch(x) and len(x.split(b" ")[0]) % 4 == 0 for x in lines[:100])


def is_merges(head: bytes, path: Path) -> bool:
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


def is_clip_merges(head: bytes, path: Path) -> bool:
    """CLIP's `bpe_simple_vocab_16e6.txt.gz`: gzip holding a merges list (first line a version)."""
    if head[:2] != b"\x1f\x8b":
        return False
    inner = gunzip_head(path)
    first = inner.split(b"\n", 1)[0]
    return b"#version" in first and is_merges(inner.split(b"\n", 1)[-1], path)


def is_bert_vocab(head: bytes, path: Path) -> bool:
    """One token per line, none with a space, and BERT's [UNK]/[CLS]/[SEP] among them."""
    lines = _lines(head)
    try:
        text = [x.decode("utf-8") for x in lines]
    except UnicodeDecodeError:
        return False
    return bool(text) and not any(" " in x for x in text) and bool({"[UNK]", "[CLS]", "[SEP]"} & set(text))


def is_python(head: bytes, path: Path) -> bool:
    """Python source that imports tiktoken: a remote-code tokenizer module (read with `ast`, never run)."""
    return is_tiktoken_code(head)


# ------------------------------------------------------------------ readers


def _read_tokenizer_json(path: Path, o: Options):
    from .readers.model_dir import parse_model_dir  # on first use: the reader of the one format read

    return parse_model_dir(path.parent, tokenizer_file=path)


def _read_tekken(path: Path, o: Options):
    from .readers.tekken import parse_tekken  # on first use: the reader of the one format read

    return parse_tekken(path)


def _read_gguf(path: Path, o: Options):
    from .readers.gguf import parse_gguf  # on first use: the reader of the one format read

    return parse_gguf(path)


def _read_sentencepiece(path: Path, o: Options):
    from .readers.sentencepiece import parse_sentencepiece  # on first use: the reader of the one format read

    return parse_sentencepiece(path)


def _read_tiktoken(path: Path, o: Options):
    from .readers.remote_code import parse_tiktoken_with_code  # on first use: the reader of the one format read

    return parse_tiktoken_with_code(path, pattern=o.pattern, special=o.special)


def _read_vocab_json(path: Path, o: Options):
    from .readers.gpt2_files import parse_gpt2_files  # on first use: the reader of the one format read

    merges = _partner(path, MERGES)
    if merges is None:
        raise InputError(f"{path}: a vocabulary JSON needs a merges file beside it (merges.txt or vocab.bpe)")
    return parse_gpt2_files(path, family=o.family, merges_path=merges)


def _read_merges(path: Path, o: Options):
    vocab = _partner(path, VOCAB_JSON)
    if vocab is None:
        raise InputError(f"{path}: a merges file needs its vocabulary JSON beside it (vocab.json or encoder.json)")
    return _read_vocab_json(vocab, o)


def _read_clip(path: Path, o: Options):
    from .readers.openai_bpe import parse_clip_merges  # on first use: the reader of the one format read

    return parse_clip_merges(path)


def _read_bert(path: Path, o: Options):
    from .readers.bert_vocab import parse_bert_vocab  # on first use: the reader of the one format read

    return parse_bert_vocab(path)


def _read_legacy(path: Path, o: Options):
    from .legacy import read_legacy  # the legacy codec: only when a tokenizer.txt is read or written

    return read_legacy(path.read_bytes(), str(path))


def _read_mtok(path: Path, o: Options):
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


# Classification order (first match wins: e.g. rank lines are also "two words per line").
MTOK = Format("mtok", is_mtok, _read_mtok, "mnn", ("tokenizer.mtok",), write_mtok, check_written, parsed=False)
LEGACY = Format("legacy-txt", is_legacy_txt, _read_legacy, "mnn-legacy", ("tokenizer.txt",), _write_legacy,
                _check_legacy, parsed=False)
GGUF = Format("gguf", is_gguf, _read_gguf, "gguf")
CLIP = Format("clip-bpe-gz", is_clip_merges, _read_clip, "clip", ("bpe_simple_vocab_16e6.txt.gz",))
SENTENCEPIECE = Format("sentencepiece", is_sentencepiece, _read_sentencepiece, "sentencepiece",
                       ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "ice_text.model"))
TOKENIZER_JSON = Format("tokenizer.json", is_tokenizer_json, _read_tokenizer_json, "tokenizers", ("tokenizer.json",))
TEKKEN = Format("tekken", is_tekken, _read_tekken, "mistral_common", ("tekken.json",))
VOCAB_JSON = Format("vocab.json", is_vocab_json, _read_vocab_json, "transformers", ("vocab.json", "encoder.json"))
TIKTOKEN = Format("tiktoken", is_tiktoken, _read_tiktoken, "tiktoken", ("tiktoken.model", "tokenizer.model"))
MERGES = Format("merges", is_merges, _read_merges, "transformers", ("merges.txt", "vocab.bpe"))
BERT_VOCAB = Format("bert-vocab.txt", is_bert_vocab, _read_bert, "transformers", ("vocab.txt",))
REMOTE_CODE = Format("remote-code", is_python, None)
FORMATS = (MTOK, LEGACY, GGUF, CLIP, SENTENCEPIECE, TOKENIZER_JSON, TEKKEN, VOCAB_JSON, TIKTOKEN, MERGES,
           BERT_VOCAB, REMOTE_CODE)

# Which candidate a directory reads first.  A merges file stands for its pair through VOCAB_JSON;
# this tool's own outputs come last so a source beside them is always re-read.
BY_NAME = {f.name: f for f in FORMATS}
PRIORITY = (TOKENIZER_JSON, TEKKEN, SENTENCEPIECE, GGUF, TIKTOKEN, VOCAB_JSON, CLIP, BERT_VOCAB, LEGACY, MTOK)


def classify(path: Path) -> Format | None:
    """The format of one file, from its content; None for anything else (configs, READMEs...)."""
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD)
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror})") from None
    return next((fmt for fmt in FORMATS if fmt.sniff(head, path)), None)


def _files(directory: Path) -> list[tuple[Path, Format]]:
    out = []
    for p in sorted(directory.iterdir()):
        if p.is_file() and not p.name.startswith("."):
            fmt = classify(p)
            if fmt is not None:
                out.append((p, fmt))
    return out


def _partner(path: Path, fmt: Format) -> Path | None:
    """The file of `fmt` beside `path` (conventional names first, then the only one)."""
    found = [p for p, f in _files(path.parent) if f is fmt]
    return min(found, key=lambda p: _rank_in(fmt, p)) if found else None


def _rank_in(fmt: Format, p: Path) -> tuple:
    return (fmt.names.index(p.name) if p.name in fmt.names else len(fmt.names), p.name)


def candidates(directory: Path) -> list[tuple[Path, Format]]:
    """Every readable source in `directory`, best first (the order `read_source` uses)."""
    files = _files(directory)
    has_merges = any(f is MERGES for _, f in files)
    # a merges file is read through its vocabulary; a vocabulary JSON only with a merges file beside it
    readable = [(p, f) for p, f in files
                if f.read is not None and f is not MERGES and (f is not VOCAB_JSON or has_merges)]
    return sorted(readable, key=lambda pf: (PRIORITY.index(pf[1]), *_rank_in(pf[1], pf[0])))


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
        if not candidates(path.parent):
            raise InputError(not_a_tokenizer(path, ", ".join(f.name for f in FORMATS if f.read is not None)))
        best, fmt, note = choose(path.parent)
        return best, fmt, f"{path.name} is no tokenizer file: " + (note or f"read {best.name} ({fmt.name}) beside it")
    found = candidates(path)
    empty = sorted(p.name for p in path.iterdir() if p.is_file() and p.stat().st_size == 0
                   and any(p.name in f.names for f in FORMATS))
    if not found and empty:  # what a failed download or copy leaves: not "no tokenizer.json found"
        raise InputError(f"{path}: {', '.join(empty)} {'is' if len(empty) == 1 else 'are'} empty (0 bytes: an "
                         "interrupted download or copy?), and no other tokenizer file is here")
    if not found:
        raise InputError(f"{path}: no tokenizer.json, SentencePiece model, tiktoken rank file, vocab.json/encoder.json "
                         "+ merges, vocab.txt, tekken.json, GGUF, CLIP bpe .gz, .mtok or legacy tokenizer.txt found "
                         "(files are recognized by content)")
    (best, fmt), rest = found[0], found[1:]
    note = None
    if rest:
        others = ", ".join(f"{p.name} ({f.name})" for p, f in rest)
        note = f"read {best.name} ({fmt.name}); also here: {others}; --input FILE reads another"
    return best, fmt, note


def read_source(path: Path, chat_template: str | None = None, *, pattern: str | None = None, special=None,
                family: str | None = None):
    """Any supported input -> IR: a file of any format in `FORMATS`, or a directory (its best
    candidate, see `choose`).  `pattern`/`special` are for rank files, `family` for vocab.json."""
    file, fmt, note = choose(Path(path))
    tok = fmt.read(file, Options(chat_template, pattern, special, family))
    if fmt.parsed:
        tok = _finish(tok, chat_template)
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
