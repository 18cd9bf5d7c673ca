"""Results computed from content are cached by content: `cache_dir()/<kind>/<sha256>.json`, the
key hashing everything the result depends on (file contents, texts, library versions), so a hit is
what a fresh run would compute.  What is cached: the HF reference (`verify.reference`), the
GGUF reference (`verify.reference_gguf`), transformers' renders of the chat-path conversations
(`verify.check`), the answers of attribution's
HF projections (`verify.projection`, keyed by the tokenizer.json text they run), the vocabulary
words a BPE's merges do not rebuild (`lower.models`, for `ignore_merges`), the merges of tiktoken
ranks (`readers.tiktoken`), whether a file parses as a SentencePiece model (`readers.sentencepiece`),
which split regexes the reference engine rejects (`readers.regex_check`),
and the chat template's depth, lowering and renders of the built-in conversations
(`chat.nesting`, `lower.chat_template`, `chat.render`).  A missing, unreadable or broken entry is
recomputed; an unwritable cache only costs the next run the computation."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from array import array
from pathlib import Path

from .errors import OutputError
from .io import atomic_write, cache_dir

# Bump on any change to what a cached result holds or how it is computed.
VERSION = 1


def key(kind: str, *parts, files=(), dists=(), blobs=(), dated: bool = False) -> str:
    """sha256 over `kind`, the JSON of `parts`, the name and content of each of `files`, the
    installed version of each distribution in `dists`, and the bytes of each of `blobs`; `dated`:
    and today's date, for a chat template's renders (a template may print it with `strftime_now`,
    which the runtime renders from its own clock: yesterday's render would not match today's)."""
    h = hashlib.sha256(f"{kind} v{VERSION}".encode())
    if dated:
        h.update(b"\0day " + time.strftime("%Y-%m-%d").encode())
    for b in blobs:
        h.update(len(b).to_bytes(8, "little") + b)
    for dist in dists:
        h.update(f"\0{dist} {version(dist)}".encode())
    for f in files:
        h.update(b"\0file " + Path(f).name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(Path(f).read_bytes()).digest())
    h.update(json.dumps(parts, ensure_ascii=False, default=str).encode())
    return h.hexdigest()


def strings_blob(strings) -> bytes:
    """Strings (all `str` or all `bytes`) as bytes a key can hash without ambiguity: all of them back
    to back, then each one's length (ten times faster than a JSON dump of a 150k-entry vocabulary)."""
    strings = list(strings)
    if strings and isinstance(strings[0], bytes):
        joined = b"".join(strings)
    else:
        joined = "".join(strings).encode("utf-8", "surrogatepass")
    return joined + array("Q", map(len, strings)).tobytes()


def version(dist: str) -> str:
    """The installed version of `dist`, "absent" when it is not installed."""
    found = _dist_info_version(dist)
    if found is not None:
        return found
    from importlib import metadata  # imports email, zipfile & co. (~10 ms): only when the names do not tell

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _dist_info_version(dist: str) -> str | None:
    """The version in the name of the `<name>-<version>.dist-info` directory importlib.metadata
    would read (the first `sys.path` directory holding metadata for `dist`), or None when that is
    not the one plain case: several candidates there, an .egg-info or .egg, a zip on the path, or
    nothing found (another finder may know it)."""
    wanted = _normalized(dist)
    for entry in sys.path:
        where = entry or "."
        if not os.path.isdir(where):
            if os.path.exists(where):
                return None  # a zip file: importlib.metadata looks inside
            continue
        try:
            names = os.listdir(where)
        except OSError:
            return None
        found = [n for n in names if n.lower().endswith((".dist-info", ".egg-info", ".egg"))
                 and _normalized(n.lower().rpartition(".")[0].partition("-")[0]) == wanted]
        if found:
            stem, dot, suffix = found[0].rpartition(".")
            if len(found) == 1 and suffix.lower() == "dist-info" and stem.count("-") == 1:
                return stem.partition("-")[2]
            return None
    return None


def computed(kind: str, digest: str, compute, valid=lambda value: True):
    """The cached value of `kind` for `digest` when there is one and `valid(value)` holds, else
    `compute()`, stored for the next run."""
    hit = load(kind, digest)
    if hit is not None and valid(hit):
        return hit
    value = compute()
    store(kind, digest, value)
    return value


def path(kind: str, digest: str) -> Path:
    return cache_dir() / kind / f"{digest}.json"


def load(kind: str, digest: str):
    """The cached JSON value, or None when there is none or it is damaged (unreadable, not UTF-8, not
    JSON, or nested too deeply for the parser: RecursionError)."""
    try:
        return json.loads(path(kind, digest).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def store(kind: str, digest: str, value) -> None:
    try:
        atomic_write(path(kind, digest), json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except OutputError:
        pass
