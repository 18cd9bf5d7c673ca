"""The two files MNN loads, which this tool also writes: the `.mtok` and the legacy `tokenizer.txt`.
Which of the two a file is, its header line says (`mtok.header.file_type`, as every reader of them
dispatches); they carry their header lists and are read whole (`parsed=False`), verified with the
MNN runtime they were made for.  They come last among a directory's candidates, so a source beside
them is always re-read.  The legacy codec is loaded only when a tokenizer.txt is read or written."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ...mtok import check_written, read_mtok, write_mtok
from ...mtok.constants import FileType
from ...mtok.header import file_type
from . import Format, Reference, show

_LEGACY_TYPES = frozenset(FileType) - {FileType.PIPELINE}


def is_mtok(head: bytes, path: Path, folder=None) -> bool:
    return file_type(head) == FileType.PIPELINE  # the header's type, as the reader dispatches on it


def is_legacy_txt(head: bytes, path: Path, folder=None) -> bool:
    return file_type(head) in _LEGACY_TYPES


def why_not_mnn(head: bytes, path: Path) -> str:
    first = head.split(b"\n", 1)[0][:40]
    return f"line 1 {show(first)} is no MNN header ('430 <type>')"


def _read_mtok(path: Path, o, folder):
    from ..finish import provenance  # the file read (its reference runs on it); not at start-up

    tok = read_mtok(path.read_bytes(), str(path))[0]
    return dataclasses.replace(tok, provenance=provenance([path]))


def _read_legacy(path: Path, o, folder):
    from ...legacy import read_legacy  # the legacy codec: only when a tokenizer.txt is read or written

    return read_legacy(path.read_bytes(), str(path))


def _write_legacy(content) -> bytes:
    from ...legacy import write_content  # the legacy codec: only when a tokenizer.txt is read or written

    return write_content(content)


def _check_legacy(data: bytes, path=None):
    from ...legacy import check_written  # the legacy codec: only when a tokenizer.txt is read or written

    return check_written(data, path)


MNN_RUNTIME = Reference("mnn", "MNN on the source file", "mtok_export.verify.references:choose_mnn")
MNN_LEGACY = Reference("mnn-legacy", "MNN 3.4.1 (its own venv, made by `make setup`) on the source file",
                       "mtok_export.verify.references:choose_mnn_legacy")
MTOK = Format("mtok", is_mtok, _read_mtok, MNN_RUNTIME, ("tokenizer.mtok",), write_mtok, check_written, parsed=False,
              priority=100, label=".mtok", why_not=why_not_mnn)
LEGACY = Format("legacy-txt", is_legacy_txt, _read_legacy, MNN_LEGACY, ("tokenizer.txt",), _write_legacy,
                _check_legacy, parsed=False, priority=90, label="legacy tokenizer.txt", why_not=why_not_mnn)
FORMATS = (MTOK, LEGACY)
