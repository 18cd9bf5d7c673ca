"""tiktoken's ranks as JSON, `{"pat_str", "special_tokens", "bpe_ranks"}` (npm tiktoken's encoders;
js-tiktoken's ranks, the same object as an ES / CommonJS module), read by `readers.tiktoken_json`,
verified with `tiktoken` on the ranks as the JS loaders read them."""

from __future__ import annotations

from pathlib import Path

from . import NOT_OBJECT, Format, Reference, first_key

_KEYS = (b"pat_str", b"special_tokens", b"bpe_ranks", b"explicit_n_vocab")
# js-tiktoken ships the same object as an ES / CommonJS module (ranks/*.js, *.cjs): one of these,
# then the JSON object and a ";" (`readers.tiktoken_json.JS_MODULE`)
_JS_MODULE = (b"export default ", b"module.exports = ")


def _unwrapped(head: bytes) -> bytes:
    return next((head[len(w):] for w in _JS_MODULE if head.startswith(w)), head)


def is_tiktoken_json(head: bytes, path: Path, folder=None) -> bool:
    """One of its keys first, and `bpe_ranks` first or seen in the head (it comes last, after the
    short pattern and specials)."""
    key = first_key(_unwrapped(head))
    return key is not None and key[0] in _KEYS and (key[0] == b"bpe_ranks" or b'"bpe_ranks"' in head)


def why_not_tiktoken_json(head: bytes, path: Path) -> str:
    key = first_key(_unwrapped(head))
    if key is None:
        return NOT_OBJECT
    if key[0] not in _KEYS:
        return f"its first key {key[0].decode('utf-8', 'replace')!r} is none of pat_str, special_tokens, bpe_ranks"
    return "no 'bpe_ranks' in its first 64 KiB"


def _read(path: Path, o, folder):
    from ..tiktoken_json import parse_tiktoken_json  # on first use: the reader of the one format read

    return parse_tiktoken_json(path)


TIKTOKEN_JSON_LIB = Reference("tiktoken", "`tiktoken` on the ranks as js-tiktoken reads `bpe_ranks`, with the file's "
                              "`pat_str` and `special_tokens`",
                              "mtok_export.verify.references:choose_tiktoken_json")
TIKTOKEN_JSON = Format("tiktoken-json", is_tiktoken_json, _read, TIKTOKEN_JSON_LIB, priority=55,
                       label="tiktoken ranks JSON", kinds=("json",), why_not=why_not_tiktoken_json)
FORMATS = (TIKTOKEN_JSON,)
