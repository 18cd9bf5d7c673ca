"""Mistral's `tekken.json`: `{"config": {...}, "vocab": [{"rank", "token_bytes", ...}` (or vocab
first), read by `readers.tekken`, verified with mistral_common's Tekkenizer."""

from __future__ import annotations

from pathlib import Path

from . import NOT_OBJECT, Format, Reference, first_key


def is_tekken(head: bytes, path: Path, folder=None) -> bool:
    key = first_key(head)
    return key is not None and key[0] in (b"config", b"vocab") and b'"token_bytes"' in head


def why_not_tekken(head: bytes, path: Path) -> str:
    key = first_key(head)
    if key is None:
        return NOT_OBJECT
    if key[0] not in (b"config", b"vocab"):
        return f"its first key {key[0].decode('utf-8', 'replace')!r} is neither 'config' nor 'vocab'"
    return "no 'token_bytes' in its first 64 KiB"


def _read(path: Path, o, folder):
    from ..tekken import parse_tekken  # on first use: the reader of the one format read

    return parse_tekken(path)


MISTRAL_COMMON = Reference("mistral_common", "`mistral_common`'s Tekkenizer on the tekken.json",
                           "mtok_export.verify.references:choose_mistral_common")
TEKKEN = Format("tekken", is_tekken, _read, MISTRAL_COMMON, ("tekken.json",), priority=20, label="tekken.json",
                kinds=("json",), why_not=why_not_tekken)
FORMATS = (TEKKEN,)
