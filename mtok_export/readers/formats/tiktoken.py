"""A tiktoken rank file (`<base64 token> <rank>` lines), read with the tokenizer code beside it if
any (`readers.remote_code`), verified with `tiktoken` and the pattern and specials the export chose."""

from __future__ import annotations

import re
from pathlib import Path

from . import Format, Reference, lines, numbered_lines, show

_RANK_LINE = re.compile(rb"[A-Za-z0-9+/=]+ \d+")
_BASE64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")


def is_tiktoken(head: bytes, path: Path, folder=None) -> bool:
    found = lines(head)
    return bool(found) and all(_RANK_LINE.fullmatch(x) and len(x.split(b" ")[0]) % 4 == 0 for x in found[:100])


def why_not_tiktoken(head: bytes, path: Path) -> str:
    found = numbered_lines(head)
    if not found:
        return "no complete line in its first 64 KiB"
    for n, x in found[:100]:
        if _BASE64.fullmatch(x) and len(x) % 4 == 0:
            return f"line {n} {show(x)} is a base64 token without its rank"
        if not _RANK_LINE.fullmatch(x):
            return f"line {n} {show(x)} is not '<base64 token> <rank>'"
        if len(x.split(b" ")[0]) % 4:
            return f"line {n}: the token {show(x.split(b' ')[0])} is not padded base64 (length not a multiple of 4)"
    return "its lines are rank lines, yet it was not taken: report it"  # the sniffer's test, inverted


def _read(path: Path, o, folder):
    from ..remote_code import parse_tiktoken_with_code  # on first use: the reader of the one format read

    return parse_tiktoken_with_code(path, pattern=o.pattern, special=o.special)


TIKTOKEN_LIB = Reference("tiktoken", "`tiktoken` on the rank file (pattern and specials as the export chose them, noted)",
                         "mtok_export.verify.references:choose_tiktoken")
TIKTOKEN = Format("tiktoken", is_tiktoken, _read, TIKTOKEN_LIB, ("tiktoken.model", "tokenizer.model"),
                  priority=50, options=("pattern", "special"), label="tiktoken rank file", kinds=("text",),
                  why_not=why_not_tiktoken)
FORMATS = (TIKTOKEN,)
