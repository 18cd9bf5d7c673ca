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
* `hf_from_ir`: an HF `tokenizers.Tokenizer` built from an IR (through the `tokenizer.json` shape
  the IR mirrors), for comparing an IR read from vocab.json/merges.txt, vocab.txt, a rank file or a
  legacy `.txt` with a reference, and `hf_ir_reference` to run it like `hf_reference`."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .reference import Reference


def tiktoken_reference(ranks_path, pattern: str, specials: Mapping[str, int], texts: Sequence[str], *,
                       normalize: Callable[[str], str] | None = None, prefix_ids: Sequence[int] = (),
                       name: str = "mtok-reference") -> Reference:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from ..readers.model_dir import sha256

    path = str(Path(ranks_path))
    # The expected hash keeps tiktoken's path-keyed cache from serving an older file at this path.
    ranks = load_tiktoken_bpe(path, expected_hash=sha256(Path(path)))
    enc = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=dict(specials))
    norm = normalize or (lambda s: s)
    raw = [enc.encode(norm(t), allowed_special="all") for t in texts]
    decoded = [enc.decode_bytes(ids).decode("utf-8", "replace") for ids in raw]
    engine = [list(prefix_ids) + ids for ids in raw]
    return Reference(engine, raw, decoded, [], [], norm)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# ------------------------------------------------------------------ IR -> HF tokenizers

def hf_from_ir(tok):
    from tokenizers import Tokenizer

    from ..writers.hf_json import write_tokenizer_json

    hf = Tokenizer.from_str(write_tokenizer_json(tok).decode("utf-8"))
    hf.no_truncation()
    hf.no_padding()
    return hf


def hf_ir_reference(tok, texts: Sequence[str]) -> Reference:
    """`hf_reference` for an IR instead of a tokenizer.json (no chat)."""
    hf = hf_from_ir(tok)
    engine = [e.ids for e in hf.encode_batch(list(texts), add_special_tokens=True)]
    raw = [e.ids for e in hf.encode_batch(list(texts), add_special_tokens=False)]
    decoded = hf.decode_batch(raw, skip_special_tokens=False)
    norm = hf.normalizer.normalize_str if hf.normalizer is not None else (lambda s: s)
    return Reference(engine, raw, decoded, [], [], norm)


def reference_for(tok):
    """The reference `verify` should use for an IR read from something other than a tokenizer.json:
    -> `f(texts, chats) -> Reference`, or None when HF on the source's tokenizer.json applies.
    A tiktoken rank file is checked with tiktoken (pattern and special tokens as the reader chose
    them); vocab.json/merges.txt, vocab.txt and legacy tokenizer.txt inputs with HF built from the
    IR.  Chats have no reference here (their checks are reported as skipped)."""
    from ..ir import normalizers as N
    from ..ir import pre_tokenizers as P
    from ..readers.tiktoken import looks_like_tiktoken

    inputs = [Path(f.path) for f in tok.provenance.inputs]
    if not inputs or inputs[0].name == "tokenizer.json":
        return None
    first = inputs[0]
    pre = tok.pre_tokenizer

    def no_chats(ref: Reference, chats) -> Reference:
        ref.chat_text, ref.chat_ids = [None] * len(chats), [None] * len(chats)
        return ref

    if looks_like_tiktoken(first) and isinstance(pre, P.Sequence) and pre.pretokenizers \
            and isinstance(pre.pretokenizers[0], P.Split):
        pattern = pre.pretokenizers[0].pattern.value
        specials = {t.content: t.id for t in tok.added_tokens}
        norm = nfc if isinstance(tok.normalizer, N.NFC) else None
        return lambda texts, chats: no_chats(tiktoken_reference(first, pattern, specials, texts, normalize=norm), chats)
    return lambda texts, chats: no_chats(hf_ir_reference(tok, texts), chats)
