"""HuggingFace Hub repositories as inputs: `org/name[@revision]` -> a local snapshot folder holding
only the files a tokenizer is read from, through `huggingface_hub` (its cache, `HF_HUB_OFFLINE`,
`HF_TOKEN`).  `huggingface_hub` is imported only when a repository is fetched."""

# function-local imports: huggingface_hub (~0.1 s with its HTTP client) loads only when a repository is
# fetched; every export loads this module, and a local path needs none of it

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError

# What any reader may look at, and never weights: the tokenizer files of every supported format, the
# configs that carry specials, the chat template and generation settings, and remote code (read
# statically, never run).
TOKENIZER_FILES = (
    "tokenizer.json", "tokenizer_config.json", "config.json", "generation_config.json",
    "special_tokens_map.json", "added_tokens.json", "chat_template.jinja", "chat_template.json",
    "*.model", "*.model.v*", "*.tiktoken", "tiktoken.model", "tekken.json",
    "vocab.json", "merges.txt", "vocab.txt", "tokenization_*.py",
    # prompt encoders shipped as Python that `chat.ports` has a port of (read and hashed, never run)
    "encoding_dsv4.py", "encoding/encoding_dsv4.py",
)

# owner/name as the Hub spells them, then an optional @branch, tag or commit
_REPO_ID = re.compile(r"(?P<repo>[A-Za-z0-9][\w.-]*/[\w][\w.-]*)(?:@(?P<revision>[\w./-]+))?")
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Snapshot:
    """One fetched revision: `path` holds the files, `sha` is the commit they are from."""

    repo_id: str
    revision: str | None  # as asked (None: the default branch)
    sha: str
    path: Path

    def to_json(self) -> dict:
        return {"repo_id": self.repo_id, "revision": self.revision, "sha": self.sha}


def parse_repo_id(text: str) -> tuple[str, str | None] | None:
    """(repository id, revision or None) when `text` reads as `org/name[@revision]`, else None.
    Callers look for a local path of that name first: a local path always wins."""
    m = _REPO_ID.fullmatch(text)
    if m is None or ".." in m["repo"] or m["repo"].endswith((".", "-")):
        return None
    return m["repo"], m["revision"]


def fetch(repo_id: str, revision: str | None = None) -> Snapshot:
    """The tokenizer files of `repo_id` at `revision` (default branch when None), downloaded into
    (or, offline, found in) the Hub cache.  A missing repository, revision or cached snapshot is an
    `InputError` naming it."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError, \
        RevisionNotFoundError

    at = f"{repo_id}@{revision}" if revision else repo_id
    try:
        folder = Path(snapshot_download(repo_id, revision=revision, allow_patterns=list(TOKENIZER_FILES)))
    except RevisionNotFoundError:
        raise InputError(f"{at}: the Hub repository has no revision {revision!r}") from None
    except RepositoryNotFoundError:
        raise InputError(f"{at}: no such Hub repository (or it is private: set HF_TOKEN), "
                         "and no such local path") from None
    except LocalEntryNotFoundError:
        offline = "HF_HUB_OFFLINE is set" if _offline() else "the Hub cannot be reached"
        what = f"revision {revision!r}" if revision else "its default branch"
        raise InputError(f"{at}: not in the Hub cache ({what}) and {offline}; no such local path either") from None
    except (HfHubHTTPError, OSError, ValueError) as e:  # gated, rate-limited, a bad id, a full disk
        raise InputError(f"{at}: cannot fetch from the Hub ({type(e).__name__}: {_first_line(e)})") from None
    sha = folder.name
    if not _SHA.fullmatch(sha):  # snapshot folders are named by commit; anything else is not the Hub cache
        raise InputError(f"{at}: the Hub returned {folder}, which is not a snapshot folder named by its commit")
    return Snapshot(repo_id, revision, sha, folder)


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0]
