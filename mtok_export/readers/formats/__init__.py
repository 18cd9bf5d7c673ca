"""One module per file format, each declaring its `Format` entries in `FORMATS` (the registry,
`mtok_export.formats`, collects every module of this package, as tiktoken collects the encoding
constructors of its `tiktoken_ext` modules): how a file of it is recognized by content (`sniff`, and
`why_not` in words), how it is read (`read`), its `priority` among a directory's candidates (which
also orders the content checks), its conventional names and its independent `reference`.

An entry module is light: the registry imports all of them to classify a file, so a reader and its
libraries are imported by the entry's `read` on first use (an export loads the reader of the one
format it reads), and a reference is named by `Reference.runner`, a `module:function` path that
`verify.references` imports only when it verifies (this layer may not import `verify`).

Adding an input format is one module here (plus its reader, if it is large, and its reference runner,
if the format needs a library no entry uses yet)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HEAD = 1 << 16  # bytes of each file looked at to classify it


@dataclass(frozen=True)
class Reference:
    """The independent implementation a format's files are verified against (DESIGN section 4): the
    library the file was made for, never our reading of it.  What runs it needs the engines of
    `verify`, a layer above: `runner` names it, `module:function` taking (source file, IR) and
    returning a `verify.references.Chosen`, imported only when a verification runs (a test checks
    that every entry's runner resolves)."""

    name: str  # what the report calls it, e.g. "transformers"
    what: str  # what it runs on the source files: the README's table of references (a test keeps them equal)
    runner: str = ""  # "mtok_export.verify.references:choose_tokenizers"


@dataclass(frozen=True)
class Format:
    name: str
    # (first HEAD bytes, path, the `Folder` it is in) -> is it this format?  The folder is there for a
    # format told apart by what lies beside it; a check asking it about the file itself sees nothing
    sniff: Callable[[bytes, Path, object], bool]
    # (path, the reader's `ReadOptions`, the `Folder` it is in) -> what the reader parsed (`readers.finish.Parsed`,
    # finished by `read_source`), or for a file whose header holds the lists (`parsed=False`) the IR
    # itself; None: a companion, never read alone
    read: Callable[[Path, object, object], object] | None
    reference: Reference | None = None  # the independent reference of a readable format
    names: tuple[str, ...] = ()  # conventional file names, preferred in this order among candidates
    # output formats: content (see `targets.Lowered`) -> file bytes; and the strict read-back of
    # those bytes before they replace anything, (data, path) -> IR or a FormatError/UnsupportedError
    write: Callable[[object], bytes] | None = None
    check: Callable[[bytes, object], object] | None = None
    parsed: bool = True
    # which file of a directory is read: the lowest first; None: never chosen in a directory (a
    # companion, read through its partner, or no reader).  The content checks are asked in the
    # same order (companions last, by name): where two checks could take one file, the more
    # particular format sits first (rank lines are also "two words per line", a merges file's shape)
    priority: int | None = None
    partner: Format | None = None  # a candidate only with a file of this format beside it
    options: tuple[str, ...] = ()  # the `ReadOptions` fields its reader takes besides chat_template
    label: str = ""  # how messages and help name it ("" : not listed, a companion)
    # the "nothing found" error: the file shapes (`sniff.shape`) this format could have, and for a
    # file of such a shape (or of one of `names`) that the sniffer refused, (head, path) -> why
    kinds: tuple[str, ...] = ()
    why_not: Callable[[bytes, Path], str] | None = None


# ------------------------------------------------------------------ what the content checks share

_FIRST_KEY = re.compile(rb'\A\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*(\S)', re.S)
NOT_OBJECT = "not a JSON object with a string key first"
# the top-level keys a tokenizer.json starts with (a flat vocabulary JSON's first key is none of them)
TJ_KEYS = (b"version", b"truncation", b"padding", b"added_tokens", b"normalizer", b"pre_tokenizer",
           b"post_processor", b"decoder", b"model")
# what verifies the vocabulary files of transformers' slow tokenizers (vocab.json + merges, vocab.txt)
TRANSFORMERS = Reference("transformers", "the transformers class a config names (`tokenizer_class`, else "
                         "`config.json`'s `model_type`), else by content: BERT for a vocab.txt (casing from the config, "
                         "else from the vocabulary), CLIP for `</w>` tokens, RoBERTa for fairseq's head, GPT-2",
                         "mtok_export.verify.references:choose_transformers")


def lines(head: bytes) -> list[bytes]:
    """Complete non-blank lines of the head (the last, possibly cut, line is dropped)."""
    return [x for _, x in numbered_lines(head)]


def numbered_lines(head: bytes) -> list[tuple[int, bytes]]:
    """(line number, line) of the head's complete non-blank lines."""
    cut = head.split(b"\n")
    if len(head) == HEAD:
        cut = cut[:-1]
    return [(n, x.rstrip(b"\r")) for n, x in enumerate(cut, 1) if x.strip()]


def first_key(head: bytes) -> tuple[bytes, bytes] | None:
    """(first key, first byte of its value) of a JSON object's head."""
    m = _FIRST_KEY.match(head)
    return (m.group(1), m.group(2)) if m else None


def show(line: bytes) -> str:
    """A line as a message quotes it (40 bytes at most)."""
    return repr(line[:40].decode("utf-8", "replace")) + ("..." if len(line) > 40 else "")
