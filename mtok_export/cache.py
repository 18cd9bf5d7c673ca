"""Results computed from content are cached by content: `cache_dir()/<kind>/<sha256>.json`, the
key hashing everything the result depends on (file contents, texts, library versions), so a hit is
what a fresh run would compute.  What is cached: the HF reference (`verify.reference`),
transformers' renders of the chat-path conversations (`verify.check`), the answers of attribution's
HF projections (`verify.projection`, keyed by the tokenizer.json text they run), and the vocabulary
words a BPE's merges do not rebuild (`lower.models`, for `ignore_merges`).  A missing, unreadable or broken
entry is recomputed; an unwritable cache only costs the next run the computation."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .errors import OutputError
from .io import atomic_write, cache_dir

# Bump on any change to what a cached result holds or how it is computed.
VERSION = 1


def key(kind: str, *parts, files=(), dists=(), blobs=()) -> str:
    """sha256 over `kind`, the JSON of `parts`, the name and content of each of `files`, the
    installed version of each distribution in `dists`, and the bytes of each of `blobs`."""
    h = hashlib.sha256(f"{kind} v{VERSION}".encode())
    for b in blobs:
        h.update(len(b).to_bytes(8, "little") + b)
    for dist in dists:
        h.update(f"\0{dist} {version(dist)}".encode())
    for f in files:
        h.update(b"\0file " + Path(f).name.encode("utf-8", "surrogateescape") + b"\0")
        h.update(hashlib.sha256(Path(f).read_bytes()).digest())
    h.update(json.dumps(parts, ensure_ascii=False, default=str).encode())
    return h.hexdigest()


def version(dist: str) -> str:
    from importlib import metadata  # imports email & co.: only when a key is computed

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


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
    """The cached JSON value, or None."""
    try:
        return json.loads(path(kind, digest).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def store(kind: str, digest: str, value) -> None:
    try:
        atomic_write(path(kind, digest), json.dumps(value, ensure_ascii=False).encode("utf-8"))
    except OutputError:
        pass
