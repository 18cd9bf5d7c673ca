"""References for inputs that are not a `tokenizer.json`.

* `tiktoken_reference`: the `tiktoken` package itself on a rank file (the engine those files were
  made for), built offline: `tiktoken.load.load_tiktoken_bpe` reads the local file and
  `tiktoken.Encoding(name, pat_str, mergeable_ranks, special_tokens)` encodes with
  `allowed_special="all"` (special-token text in the input becomes the special id, as HF added
  tokens do).  tiktoken adds no BOS, so `engine == raw` unless `prefix_ids` is given.  Llama-3's
  BOS (`<|begin_of_text|>`) is added by its chat template (`{{ bos_token }}`) or by Meta's
  `encode(bos=True)`, not by tiktoken: the tiktoken reader's IR adds nothing either, so both sides
  agree; pass `prefix_ids` to compare against a file whose header prefix adds BOS.  Tokenizers
  that normalize first (Qwen-1: NFC) pass `normalize`.
* `hf_from_ir`: an HF `tokenizers.Tokenizer` built from an IR (through the tokenizer.json writer),
  for comparing an IR read from vocab.json/merges.txt, vocab.txt, a rank file or a legacy `.txt`
  with a reference (`reference.run_hf` runs it)."""

# function-local imports: tiktoken and tokenizers load only when their reference runs: verify.references
# imports every format's reference module

from __future__ import annotations

import base64
import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..readers.finish import sha256
from ..writers.hf_json import tokenizer_json_text
from .reference import Reference, run_hf


def tiktoken_reference(ranks_path, pattern: str, specials: Mapping[str, int], texts: Sequence[str], *,
                       normalize: Callable[[str], str] | None = None, prefix_ids: Sequence[int] = (),
                       name: str = "mtok-reference", ranks: Mapping[bytes, int] | None = None) -> Reference:
    """`ranks`: already read (a ranks JSON's, `js_ranks`); else tiktoken reads the rank file."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = str(Path(ranks_path))
    if ranks is None:  # the expected hash keeps tiktoken's path-keyed cache from serving an older file here
        ranks = load_tiktoken_bpe(path, expected_hash=sha256(Path(path)))
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=dict(ranks), special_tokens=dict(specials))
    norm = normalize or (lambda s: s)
    raw = [enc.encode(norm(t), allowed_special="all") for t in texts]
    decoded = [enc.decode_bytes(ids).decode("utf-8", "replace") for ids in raw]
    engine = [list(prefix_ids) + ids for ids in raw]
    return Reference(engine, raw, decoded, [], [], norm)


def js_ranks(path) -> tuple[dict[bytes, int], str, dict[str, int]]:
    """(ranks, pat_str, special_tokens) of a tiktoken ranks JSON, read as js-tiktoken's `Tiktoken`
    constructor reads it (`src/core.ts`): lines of `bpe_ranks` split on spaces, the first field
    skipped, the second the offset, the k-th token after it rank offset + k (a rank file's own text
    when it does not start with "!", as the WASM loader's `parse_bfe`).  Independent of the reader
    (`readers.tiktoken_json`), which checks what this takes as it comes."""
    text = Path(path).read_text(encoding="utf-8")
    for wrapper in ("export default ", "module.exports = "):  # js-tiktoken's ranks/*.js, *.cjs
        if text.startswith(wrapper):
            text = text[len(wrapper):].rstrip().rstrip(";")
    data = json.loads(text)
    ranks: dict[bytes, int] = {}
    text = data["bpe_ranks"]
    for line in filter(None, text.split("\n")):
        fields = line.split(" ")
        if text.startswith("!"):
            for k, tok in enumerate(fields[2:]):
                ranks[base64.b64decode(tok)] = int(fields[1]) + k
        else:
            ranks[base64.b64decode(fields[0])] = int(fields[1])
    return ranks, data["pat_str"], dict(data["special_tokens"])


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# ------------------------------------------------------------------ IR -> HF tokenizers

def hf_from_ir(tok):
    return hf_from_json_text(tokenizer_json_text(tok))


def hf_from_json_text(text: str):
    """An HF `tokenizers.Tokenizer` from tokenizer.json text, without truncation or padding."""
    from tokenizers import Tokenizer

    hf = Tokenizer.from_str(text)
    hf.no_truncation()
    hf.no_padding()
    return hf


def hf_ir_reference(tok, texts: Sequence[str]) -> Reference:
    """`hf_reference` for an IR instead of a tokenizer.json (no chat)."""
    return run_hf(hf_from_ir(tok), texts)
