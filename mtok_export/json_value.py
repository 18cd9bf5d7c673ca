"""Parse JSON input files into values every reader can trust: nesting bounded, every string valid
Unicode, every float finite (issue 13's fuzz defects), no key given twice in an object (issue 25).

Python's `json` module accepts what no tokenizer file holds and what breaks later stages with a
traceback: `NaN`/`Infinity`, `1e400` (read as inf), `"\\ud800"` (a lone surrogate, which cannot be
encoded to UTF-8), and nesting deep enough to exhaust the C stack or our recursive parsers.
(Huge integers are legitimate: configs write `model_max_length` as 1e30.)  `parse_json` rejects each of
them with the JSON path of the first offender, so the readers behind it only have to check shapes and
types.  Every JSON input goes through it (tokenizer.json and its side files, tekken.json, MNN's
config.json / llm_config.json, `mtok chat --messages`)."""

from __future__ import annotations

import json
import math
import re
from itertools import chain
from pathlib import Path

from .errors import InputError, UnsupportedError

# Real tokenizer.json files nest about 8 levels deep (Sequence of Sequence of Split.pattern).
MAX_DEPTH = 64


def parse_json(raw: bytes | str, path) -> object:
    """JSON text -> value, checked as described above; errors name the file and the JSON path."""
    try:
        data = _decode(raw, path, _object)
    except _DuplicateKey:
        _locate(_decode(raw, path, _marked), path)  # names the key (or an offender before it)
        raise AssertionError("a duplicate key the second parse did not find") from None
    # Surrogates can only come from \uD800-\uDFFF escapes (decoded text holds none): look at
    # strings only when the text has such an escape.
    escaped = _SURROGATE_ESCAPE[type(raw)].search(raw) is not None
    check_value(data, path, strings=escaped)
    return data


def _decode(raw: bytes | str, path, object_pairs_hook):
    try:
        return json.loads(raw, parse_constant=_no_constant, object_pairs_hook=object_pairs_hook)
    except RecursionError:
        raise InputError(f"{path}: JSON nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as e:  # JSONDecodeError, UnicodeDecodeError, and _no_constant
        if isinstance(e, json.JSONDecodeError):
            raise InputError(f"{path}: not valid JSON at line {e.lineno} column {e.colno}: {e.msg}") from None
        if isinstance(e, UnicodeDecodeError):
            raise InputError(f"{path}: not valid JSON: not UTF-8 at byte {e.start}") from None
        raise InputError(f"{path}: not valid JSON: {e}") from None


_SURROGATE_ESCAPE = {bytes: re.compile(rb"\\u[dD][89a-fA-F]"), str: re.compile(r"\\u[dD][89a-fA-F]")}


class _DuplicateKey(Exception):
    pass


def _object(pairs: list) -> dict:
    """A JSON object, refusing a key given twice: `json` keeps the last silently (MNN's rapidjson the
    first), so a second, empty `"model"` would replace the real one.  The check adds 5-15% to the
    parse (best of 15: 93 -> 98 ms for Llama-3's 9 MB tokenizer.json, 93 -> 107 ms for Qwen2.5's 7 MB);
    the search for the key's JSON path runs only once one is found."""
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _DuplicateKey
    return d


class _Duplicated(dict):
    """An object with a duplicate key, as the second parse marks it for `_locate`."""
    key: str


def _marked(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) == len(pairs):
        return d
    seen = set()
    marked = _Duplicated(d)
    marked.key = next(k for k, _ in pairs if k in seen or seen.add(k))
    return marked


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def check_value(data, path, *, strings: bool = True) -> None:
    """Raise at the first container nested deeper than MAX_DEPTH, string that is not valid Unicode
    (when `strings`) or float that is not finite (1e400 reads as inf), naming its JSON path.  A first
    pass without paths keeps the common case fast (0.01 s for a 7 MB tokenizer.json)."""
    if not _is_clean(data, strings):
        _locate(data, path)


_PLAIN = frozenset((int, bool, type(None)))  # nothing to check in these


def _is_clean(data, strings: bool) -> bool:
    plain = _PLAIN if strings else _PLAIN | {str}
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if type(value) is dict:
            if strings and not all(map(_valid, value)):
                return False
            items = value.values()
        elif type(value) is list:
            items = value
        else:
            items = (value,)
            depth -= 1
        # Whole levels of plain values (a vocabulary's ids, a merge list's pairs) are checked by
        # C-level set/map, without a Python step per value.
        kinds = set(map(type, items))
        if kinds <= plain:
            continue
        if kinds == {list} and depth + 2 < MAX_DEPTH and set(map(type, chain.from_iterable(items))) <= plain:
            continue
        for v in items:
            t = type(v)
            if t is dict or t is list:
                if depth + 1 >= MAX_DEPTH:
                    return False
                stack.append((v, depth + 1))
            elif (strings and t is str and not _valid(v)) or (t is float and not math.isfinite(v)):
                return False
    return True


def _valid(s) -> bool:
    if type(s) is not str or s.isascii():
        return True
    try:
        s.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _locate(data, path) -> None:
    """The slow walk with JSON paths, run only when `_is_clean` found something."""
    stack = [(data, "$", 0)]
    while stack:
        value, jp, depth = stack.pop()
        t = type(value)
        if t is str:
            _check_str(value, jp, path)
        elif t is float and not math.isfinite(value):
            _fail(jp, f"number {value} is out of range (JSON numbers here must be finite)", path)
        elif t is _Duplicated:
            k = value.key
            _fail(f"{jp}.{k}" if k.isidentifier() else f"{jp}[{k!r}]", f"duplicate key {k!r:.40} (JSON readers "
                  "disagree on which one counts: the file is ambiguous)", path)
        elif t is dict or t is list:
            if depth >= MAX_DEPTH:
                _fail(jp, f"nested deeper than {MAX_DEPTH} levels", path)
            if t is dict:
                for k in value:
                    _check_str(k, f"{jp} (key {k!r:.40})", path)
            pairs = value.items() if t is dict else enumerate(value)
            for k, v in reversed(list(pairs)):  # reversed: the stack then yields the first offender first
                stack.append((v, f"{jp}.{k}" if t is dict and k.isidentifier() else f"{jp}[{k!r}]", depth + 1))


def _check_str(s: str, jp: str, path) -> None:
    if _valid(s):
        return
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        _fail(jp, f"string holds a lone surrogate U+{ord(s[e.start]):04X} at character {e.start} "
              "(not valid Unicode, cannot be written as UTF-8)", path)


def _fail(jp: str, msg: str, path):
    raise UnsupportedError(msg, json_path=jp, path=str(path) if path else None)


def load_json(path: Path):
    """Read and parse a JSON file (see `parse_json`)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read ({e.strerror or e})") from None
    return parse_json(raw, path)
