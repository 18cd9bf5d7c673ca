"""The reference for an input MNN loads itself (a legacy `tokenizer.txt`, a `.mtok`): the runtime
the file was made for, running the source file as it is.  Our reader's reading of the source is
never what the output is compared with, so a reader bug shows as a mismatch instead of being
copied into both sides.

Which runtime is the caller's choice (`verify.references`): MNN 3.4.1 (`mnn341.find()`, the
released pre-`.mtok` runtime) for a legacy file, the current MNN of this environment
(`python=None`) for a `.mtok`.  What the fields hold, as `verify.check` compares them with the
runtime on the output:

* `engine`: `tokenizer_encode(text)`, header prefix ids included (what an app gets);
* `raw`: the same without the source's prefix ids, which are what the runtime gives for `""`
  (asked of the runtime, not read from the header by us);
* `decoded`: the source runtime's single-id decodes of `raw` joined, as UTF-8 with replacement:
  the runtime has no other decode, and the check joins the output runtime's decodes the same way;
* `chat_text`/`chat_ids`: for a `.mtok`, `apply_chat_template` of each conversation with the
  template the source embeds and `tokenizer_encode` of that rendering (None where it raised);
  None for a legacy file, which carries no template (what 3.4.1 renders is not the source's);
* `normalize`: None (the runtime exposes no normalizer; attribution then assumes no reader
  difference in normalization)."""

from __future__ import annotations

from pathlib import Path

from ..errors import RuntimeEngineError
from ..mtok.constants import MAGIC, FileType
from . import mnn341
from .reference import Reference, ReferenceUnavailable
from .runtime import run_runtime


def runtime_reference(source_file: Path, python: Path | None, texts, chats) -> Reference:
    """MNN on `source_file` itself (`python`: the interpreter that runs the source's runtime; None:
    this one).  `chats` have `.messages` (the runtime always adds the generation prompt).  The
    caller has read the source with the strict reader (it is not read again here).  Raises
    `ReferenceUnavailable` when `python` has no MNN or not the 3.4.1 a legacy file asks for."""
    source_file = Path(source_file)
    legacy = not _is_mtok(source_file)
    chats = list(chats)
    try:
        rt = run_runtime(source_file, texts=["", *texts], python=python, check=False, decode_encoded=True,
                         chats=[] if legacy else [list(c.messages) for c in chats], encode_chats=True)
    except RuntimeEngineError as e:
        if e.hint is None:  # a crash or a load failure: the source's own runtime rejects it
            raise
        raise ReferenceUnavailable(f"the reference runtime cannot run: {e}",
                                   mnn341.setup_command() if legacy else e.hint) from e
    if legacy and rt.version != mnn341.VERSION:
        raise ReferenceUnavailable(f"{python or 'this Python'} runs MNN {rt.version}, not the {mnn341.VERSION} a "
                                   f"legacy tokenizer.txt is verified against", mnn341.setup_command())
    prefix, *engine = rt.encodes
    raw = [ids[len(prefix):] if ids[:len(prefix)] == prefix else ids for ids in engine]
    decoded = [b"".join(rt.decodes.get(i, b"") for i in ids).decode("utf-8", "replace") for ids in raw]
    if legacy:
        chat_text, chat_ids = [None] * len(chats), [None] * len(chats)
    else:
        chat_text, chat_ids = rt.chats, rt.chat_encodes
    return Reference(engine, raw, decoded, chat_text, chat_ids, None)


def _is_mtok(path: Path) -> bool:
    """By the header line, as MNN tells the two apart (a file it cannot read is no .mtok)."""
    try:
        with open(path, "rb") as f:
            return f.readline(16).rstrip(b"\r\n") == f"{MAGIC} {int(FileType.PIPELINE)}".encode()
    except OSError:
        return False
