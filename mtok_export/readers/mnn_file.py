"""A file MNN loads, `.mtok` (type 4) or a legacy `tokenizer.txt` (types 0-3), chosen by the type on
its header line (`mtok.header.file_type`, never the file's name), -> the IR and a `Layout` (sections
with offsets; a legacy file is one body section)."""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..legacy import describe, read_legacy
from ..mtok import Layout, Section, read_mtok
from ..mtok.constants import FileType
from ..mtok.header import file_type, read_header


def read_mnn_file(path, *, strict: bool = True, lazy: bool = False):
    """-> (Tokenizer, Layout).  `strict=False` reports an unsorted `.mtok` vocab or merge table as a
    layout warning instead of a `FormatError` (for `inspect`, to look at a broken file); `lazy`
    is `read_mtok`'s (views of the vocab and merges, for `inspect`)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    return read_mnn_bytes(data, str(path), strict=strict, lazy=lazy)


def read_mnn_bytes(data: bytes, path: str | None = None, *, strict: bool = True, lazy: bool = False):
    """`read_mnn_file` for bytes already read; `path` names the file in messages."""
    if file_type(data) == FileType.PIPELINE:  # the type on line 1, as `formats.classify` sees it
        return read_mtok(data, path, strict=strict, lazy=lazy)
    kind, _, body = read_header(data, path)  # a legacy type, or what is wrong with the header
    tok = read_legacy(data, path)
    layout = Layout(size=len(data), header_size=body, sections=[Section(f"legacy {describe(kind)}", body,
                                                                        len(data) - body)])
    layout.warnings.extend(tok.meta.notes)
    return tok, layout
