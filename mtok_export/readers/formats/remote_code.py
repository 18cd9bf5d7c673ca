"""Python source that imports tiktoken: a remote-code tokenizer module (read with `ast`, never run),
recognized so a directory's "nothing found" says what it is; it is read only with the rank file it
loads (`formats.tiktoken`), never alone."""

from __future__ import annotations

from pathlib import Path

from ...sniff import is_tiktoken_code
from . import Format


def is_python(head: bytes, path: Path, folder=None) -> bool:
    return is_tiktoken_code(head)


REMOTE_CODE = Format("remote-code", is_python, None)
FORMATS = (REMOTE_CODE,)
