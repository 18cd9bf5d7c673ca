"""The registry of file formats, recognized by content, and the choice of what to read in a
directory.  Each format is one module of `readers.formats`, declaring its `Format` entries (its
content check `sniff`, which also sees the folder, its reader `read` and the reader options that
apply to it, its `priority` among a directory's candidates, its conventional names, the `partner`
it needs beside it, how messages name it and its independent `reference`); `FORMATS` collects the
entries of every module there, as tiktoken collects the encoding constructors of its plugin
modules, so adding a format edits nothing here.  The two this tool writes (`.mtok`, legacy `.txt`)
also have `write` (a target's lowered content -> bytes, see `targets.py`) and `check` (the strict
read-back before the bytes replace anything).

`classify(path)` names the format of one file from its bytes (JSON shape, protobuf `ModelProto`,
gzip, base64-rank lines, GGUF magic, `430 N` headers, ...), never from its name, asking the entries
in the order of their priorities (companions last, by name: the first that takes the file wins); a
format told apart by its neighbours asks the `Folder` (each file in it classified once).
`read_source` reads a file with its format's reader, or, for a directory, classifies every file in
it and reads the best candidate; when none is, `nothing_found` lists every file with why each format
that could have claimed it did not (`Format.kinds`, `Format.why_not`).  A source's reader returns
what it parsed and `read_source` finishes it, the same way for every format (`readers.finish`:
header lists, chat template, provenance); the two files MNN loads carry their header lists and are
read whole (`parsed=False`).

The choice is deterministic: by the `priority` of the format (sources before the `.mtok`/`.txt`
this tool writes beside them), then the conventional file name of that format, then the file name;
when several candidates exist the choice is recorded as the first note of the IR (the CLI prints
notes) and `--input FILE` reads another one.  `read_source` records the format in the IR's
provenance, so the choice follows the format, never a file name, and so does the reference that
verification runs (`verify.references`).

Companion files are recognized but never read alone: `merges.txt`/`vocab.bpe` belong to a
vocab.json/encoder.json (given either one, the pair is read), configs belong to a directory.

An entry module is light (its reader and the reader's libraries load when it reads), so collecting
them all loads no reader: an export loads the reader of the one format it reads."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError, NothingFound
from .job_options import ReadOptions
from .readers import formats as entries
from .readers.formats import HEAD, Format, Reference  # noqa: F401  the entry types, named where they are used
from .sniff import looks_like, not_a_tokenizer, shape


def _collected() -> tuple[Format, ...]:
    """Every module's `FORMATS`, in classification order: by priority, then the companions (no
    priority) by name."""
    found = [fmt for m in pkgutil.iter_modules(entries.__path__, f"{entries.__name__}.")
             for fmt in importlib.import_module(m.name).FORMATS]
    return tuple(sorted(found, key=lambda f: (f.priority is None, f.priority or 0, f.name)))


FORMATS = _collected()
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
    owner = next((f for f in FORMATS if f.partner is fmt), None)
    if fmt.priority is None and owner is not None:
        return f"recognized, but it is read only with its {owner.name} file ({', '.join(owner.names)}), none here"
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
    tok = fmt.read(file, ReadOptions(read.chat_template, **applies), Folder(file.parent))  # what applies to it
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


def _finish(parsed, chat_template: str | None):
    from .readers.finish import finish  # with the reader it finishes, never at start-up

    return finish(parsed, chat_template)
